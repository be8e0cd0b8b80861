"""The how-to benchmark over redis.conf: its questions and keys hold against the file, and
an answer scores the keys it names, however it spells the setting and its value."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, revision
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from rat_agent.agent.graph import build_graph
from rat_agent.errors import ConfigError
from rat_agent.eval import docs
from rat_agent.eval.runner import run


def test_the_questions_are_split_in_halves_and_their_keys_are_in_the_file() -> None:
    questions = docs.load_questions()
    assert len(questions) >= 40
    assert len({q["id"] for q in questions}) == len(questions)
    splits = [q["split"] for q in questions]
    assert splits.count("tune") == splits.count("test") == len(questions) // 2
    text = docs.DOCUMENT.read_text().lower()
    settings = docs.directives()
    for question in questions:
        for key in question["keys"]:
            options = [key] if isinstance(key, str) else key
            assert any(
                option.lower() in text or option.split()[0] in settings for option in options
            ), (question["id"], key)
            # a user's words, not the setting's name (where it is no plain word, as "port" is)
            setting = options[0].split()[0]
            if "-" in setting or "_" in setting:
                assert setting not in question["question"], question["id"]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("Set `maxmemory 2gb` and `maxmemory-policy allkeys-lru`.", 2),
        ("Set maxmemory to 2GB, and the 'maxmemory-policy' directive to 'allkeys-lru'.", 2),
        ("maxmemory 2048mb\nmaxmemory-policy volatile-lru", 1),
        ("Limit the memory to 2 GB and evict the least recently used keys.", 0),
        ("Set maxmemory-policy to 2gb.", 0),  # the value follows another setting
        ("maxmemory 12gb\nmaxmemory-policy allkeys-lru", 1),  # 2gb is not 12gb
        ("redis-server --maxmemory 2gb --maxmemory-policy allkeys-lru", 2),  # as flags
        ("Set proxy-maxmemory 2gb and maxmemory-policy allkeys-lru-x.", 0),  # other names
    ],
)
def test_an_answer_scores_the_keys_it_names(answer: str, named: int) -> None:
    case = next(c for c in docs.cases() if c.id == "redis-21")
    assert docs.score(case, answer).score == named / 2


def test_cases_come_by_split() -> None:
    assert {c.id for c in docs.cases("tune")} | {c.id for c in docs.cases("test")} == {
        c.id for c in docs.cases()
    }
    assert len(docs.cases("test", 5)) == 5
    with pytest.raises(ConfigError, match="split"):
        docs.cases("train")


def test_every_method_is_scored_on_a_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path))
    line = "maxmemory-policy allkeys-lru evicts any key using approximated LRU."

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Set maxmemory to 2gb.\nSTEP 2: Choose an eviction policy."
        if kind == "query":
            return current_step(messages)
        if kind == "revise":
            step = current_step(messages)
            if "eviction" in step and "allkeys-lru" in prompt_text(messages):
                return revision(messages, "Set maxmemory-policy to allkeys-lru.")
            return revision(messages, step)
        if kind == "answer":  # the checked steps, as written
            return prompt_text(messages).split("Checked steps so far:\n", 1)[1].split("\n\n")[0]
        return "Limit the memory."  # direct

    pages = ListRetriever(documents=[Document(page_content=line, metadata={"title": "conf"})])
    graph = build_graph(llm=ScriptedModel(respond=respond, calls=[]), retriever=pages)
    case = next(c for c in docs.cases() if c.id == "redis-21")
    results = run(
        "docs",
        [case],
        ["direct", "rat"],
        score=docs.score,
        context={},
        graph=graph,
        grounding=docs.grounded,
    )
    scores = {r.method: r.score for r in results}
    assert scores == {"direct": 0.0, "rat": 1.0}
    # maxmemory is named from the task alone; the passage rat cites gives the policy
    assert {r.method: r.grounded for r in results} == {"direct": 0.0, "rat": 0.5}


def test_a_key_is_grounded_when_the_answer_names_it_and_a_cited_passage_gives_it() -> None:
    case = next(c for c in docs.cases() if c.id == "redis-21")
    answer = "Set maxmemory 2gb and maxmemory-policy allkeys-lru."
    passage = "maxmemory <bytes>\nThe maxmemory-policy decides: allkeys-lru evicts any key."
    assert docs.grounded(case, answer, [passage]) == 1.0
    # the setting named in the passage, but not in the answer: nothing to ground
    assert docs.grounded(case, "Set maxmemory 2gb.", [passage]) == 0.5
    # "maxmemory" inside "maxmemory-policy" is another setting
    assert docs.grounded(case, answer, ["The maxmemory-policy decides."]) == 0.5
    assert docs.grounded(case, answer, []) == 0.0  # right from memory


def test_the_collection_holds_the_document_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rat_agent.ingest.pipeline import ingest
    from rat_agent.retrieval.qdrant import client as qdrant

    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    # a copy another checkout of the package indexed, from its own path
    other = tmp_path / "checkout" / "redis.conf"
    other.parent.mkdir()
    other.write_text("# the lines of an older checkout\nmaxmemory 1gb\n")
    try:
        ingest([str(other)], collection=docs.COLLECTION)
        docs.ensure_collection()
        docs.ensure_collection()  # again: nothing added, nothing lost
        client, lock = qdrant.get_client()
        with lock:
            records, _ = client.scroll(docs.COLLECTION, limit=10_000, with_payload=True)
        sources = {r.payload["metadata"]["source"] for r in records}  # type: ignore[index]
        texts = [r.payload["page_content"] for r in records]  # type: ignore[index]
        assert len(sources) == 1 and sources != {str(other)}
        assert len(texts) == len(set(texts)) > 100
        assert any("maxmemory-policy" in t for t in texts)
    finally:
        qdrant.close_clients()


def test_the_held_out_postgres_questions_key_lines_of_the_file() -> None:
    """pg-01..pg-20: every key's setting is on the line cited for it, named in no question,
    and a key at the file's own default value is not the key (the tasks ask for others)."""
    docset = docs.SETS["postgres"]
    questions = docs.load_questions(docset)
    assert [q["id"] for q in questions] == [f"pg-{n:02d}" for n in range(1, 21)]
    assert {q["split"] for q in questions} == {"test"} and docs.cases("tune", docset=docset) == []
    lines = docset.document.read_text().splitlines()
    settings = docs.directives(docset)
    for question in questions:
        assert len(question["lines"]) == len(question["keys"]), question["id"]
        for key, line in zip(question["keys"], question["lines"], strict=True):
            setting = (key if isinstance(key, str) else key[0]).split()[0]
            assert setting in settings and lines[line - 1].lstrip("#").startswith(setting)
            assert setting not in question["question"], question["id"]
            default = lines[line - 1].lstrip("#").split("=", 1)[1].split("#")[0].strip()
            case = next(c for c in docs.cases(docset=docset) if c.id == question["id"])
            assert not docs.named(key, f"{setting} = {default}"), (question["id"], default)
            assert (
                docs.score(
                    case, "\n".join((k if isinstance(k, str) else k[0]) for k in question["keys"])
                ).score
                == 1.0
            )
