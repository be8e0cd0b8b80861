"""Thought memory: real embedded Qdrant and the real embedder, a scripted model.

Each run drafts steps about iron; the model's thought reply is chosen per test, so what is
stored, refused or retrieved is checked exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, revision
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from rat_agent import ConfigError, build_graph, cli
from rat_agent.agent import remember
from rat_agent.memory.store import Memory

DRAFT = "STEP 1: smelt raw iron in a furnace\nSTEP 2: craft an iron pickaxe"
SMELT = "Raw iron smelted in a furnace with fuel gives one iron ingot per raw iron."
PICKAXE = "An iron pickaxe is crafted at a crafting table from three iron ingots and two sticks."


pytestmark = pytest.mark.usefixtures("fresh_data")  # conftest.py


def documents() -> list[Document]:
    return [
        Document(
            page_content="Furnace: a block that smelts ores and raw metals using fuel.",
            metadata={"title": "Furnace", "source": "corpus:furnace"},
        ),
        Document(
            page_content="Iron Ingot: made by smelting raw iron; used for iron tools.",
            metadata={"title": "Iron Ingot", "source": "corpus:iron_ingot"},
        ),
    ]


def model(thought: Callable[[str], str]) -> ScriptedModel:
    """Drafts DRAFT, queries with the step's text, confirms it against the first line
    shown; `thought(answer)`
    gives the reply to each thought prompt."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "query":
            return current_step(messages)
        if kind == "revise":
            return revision(messages, current_step(messages))
        if kind == "thought":
            answer = prompt_text(messages).split("Answer:\n", 1)[1].split("\n\nSources:", 1)[0]
            return thought(answer)
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def by_step(answer: str) -> str:
    return f"CONFIDENT: 1\nTHOUGHT: {SMELT if 'smelt' in answer else PICKAXE}"


def run(
    llm: ScriptedModel,
    thread: str = "t1",
    memory_from: str = "steps",
    novelty: float = remember.NOVELTY,
    **context: object,
) -> dict:
    """A run with memory on; what becomes thoughts and the novelty they need are the memory's
    constants (remember.py), set here for one run."""
    graph = build_graph(llm=llm, retriever=ListRetriever(documents=documents()))
    settings = {"memory": "thoughts", "answer_prompt": "", **context}
    with (
        patch.object(remember, "MEMORY_FROM", memory_from),
        patch.object(remember, "NOVELTY", novelty),
    ):
        return graph.invoke(
            {"question": "How do I make an iron pickaxe?"},
            config={"configurable": {"thread_id": thread}},
            context=settings,
        )


def test_a_confident_novel_thought_is_stored_with_provenance_and_level() -> None:
    result = run(model(by_step), thread="first")
    assert [(n["stored"], n["reason"], n["step"]) for n in result["thoughts"]] == [
        (True, "stored", 1),
        (True, "stored", 2),
    ]
    stored = {t.text: t for t in Memory("thoughts").all()}
    assert set(stored) == {SMELT, PICKAXE}
    smelt = stored[SMELT]
    assert smelt.id == result["thoughts"][0]["id"]
    assert smelt.level == 2.0  # 1 + the mean level of two documents
    assert smelt.thread == "first" and smelt.step == 1
    assert smelt.question == "How do I make an iron pickaxe? (step 1)"
    assert {(o.kind, o.source) for o in smelt.origins} == {
        ("document", "corpus:furnace"),
        ("document", "corpus:iron_ingot"),
    }


def test_an_unconfident_thought_is_not_stored() -> None:
    result = run(model(lambda answer: "CONFIDENT: 0\nTHOUGHT:"))
    assert [(n["stored"], n["reason"]) for n in result["thoughts"]] == [
        (False, "not confident")
    ] * 2
    assert Memory("thoughts").all() == []


@pytest.mark.parametrize(
    "reply",
    [
        "The answer looks right to me.",  # no confidence at all
        "CONFIDENT: maybe\nTHOUGHT: " + SMELT,  # not a binary value
        "CONFIDENT: 1\nTHOUGHT:",  # confident, but no thought
        "THOUGHT: " + SMELT + "\nCONFIDENT: 1",  # the confidence must come first
    ],
)
def test_a_malformed_confidence_reply_stores_nothing(reply: str) -> None:
    result = run(model(lambda answer: reply))
    assert [(n["stored"], n["reason"]) for n in result["thoughts"]] == [
        (False, "unreadable reply")
    ] * 2
    assert Memory("thoughts").count() == 0


def reworded(answer: str) -> str:
    """The same conclusions in other words."""
    return by_step(answer).replace("gives one", "yields one").replace("from three", "with three")


def test_a_near_duplicate_is_not_stored() -> None:
    run(model(by_step), thread="first")
    result = run(model(reworded), thread="second")
    assert [n["stored"] for n in result["thoughts"]] == [False, False]
    assert all(n["reason"].startswith("redundant: ") for n in result["thoughts"])
    assert Memory("thoughts").count() == 2


def test_the_novelty_threshold_decides_what_is_new() -> None:
    run(model(by_step), thread="first")
    result = run(model(reworded), thread="second", novelty=0.999)
    assert [n["stored"] for n in result["thoughts"]] == [True, True]
    assert Memory("thoughts").count() == 4


def test_a_thought_repeating_a_document_is_not_stored() -> None:
    page = documents()[1].page_content
    result = run(model(lambda answer: f"CONFIDENT: 1\nTHOUGHT: {page}"), memory_from="answer")
    (note,) = result["thoughts"]
    assert not note["stored"] and "similar to a document" in note["reason"]


def test_a_later_run_retrieves_a_stored_thought_and_cites_it_as_a_thought() -> None:
    first = run(model(by_step), thread="first")
    later = model(lambda answer: "CONFIDENT: 0")
    result = run(later, thread="second")
    sources = result["steps"][0]["sources"]
    assert [s["kind"] for s in sources] == ["document", "document", "thought"]
    thought = sources[2]
    assert thought["source"] == f"thought:{first['thoughts'][0]['id']}"
    assert SMELT[:40] in thought["snippet"]
    revise_prompt = prompt_text(next(m for k, m in later.calls if k == "revise"))
    assert SMELT in revise_prompt  # the model read it with the documents
    # traced back to its raw sources
    memory = Memory("thoughts")
    found = memory.get(first["thoughts"][0]["id"])
    assert found is not None
    assert [o.source for o in memory.roots(found)] == ["corpus:furnace", "corpus:iron_ingot"]


def test_a_thought_built_on_a_thought_is_one_level_higher() -> None:
    run(model(by_step), thread="first")
    result = run(
        model(
            lambda answer: (
                "CONFIDENT: 1\nTHOUGHT: Iron ingots come out of a "
                "furnace lit with coal or charcoal, after about ten seconds."
            )
        ),
        thread="second",
        memory_from="answer",
        novelty=0.99,
    )
    (note,) = result["thoughts"]
    assert note["stored"]
    thought = Memory("thoughts").get(note["id"])
    assert thought is not None
    levels = sorted(o.level for o in thought.origins)
    assert 2.0 in levels and levels.count(1.0) == 2
    assert thought.level == pytest.approx(1 + sum(levels) / len(levels))
    # its roots are documents only, through the thought it was built on
    assert {o.kind for o in Memory("thoughts").roots(thought)} == {"document"}


def test_an_unrelated_thought_is_not_retrieved() -> None:
    run(
        model(
            lambda answer: (
                "CONFIDENT: 1\nTHOUGHT: A cake needs three buckets of milk, "
                "two sugar, one egg and three wheat."
            )
        ),
        memory_from="answer",
    )
    result = run(model(lambda answer: "CONFIDENT: 0"), thread="second")
    assert all(s["kind"] == "document" for step in result["steps"] for s in step["sources"])


def test_forgetting_removes_a_thought_from_retrieval() -> None:
    first = run(model(by_step), thread="first")
    memory = Memory("thoughts")
    memory.forget(first["thoughts"][0]["id"][:8])  # a prefix, as `rat memory list` shows
    assert memory.count() == 1
    result = run(model(lambda answer: "CONFIDENT: 0"), thread="second")
    cited = {s["source"] for step in result["steps"] for s in step["sources"]}
    assert f"thought:{first['thoughts'][0]['id']}" not in cited
    assert f"thought:{first['thoughts'][1]['id']}" in cited


def test_memory_off_reads_and_writes_nothing() -> None:
    run(model(by_step), thread="first")
    llm = model(by_step)
    result = run(llm, thread="second", memory=False)
    assert result["thoughts"] == []
    assert all(s["kind"] == "document" for step in result["steps"] for s in step["sources"])
    assert "thought" not in [kind for kind, _ in llm.calls]


def test_the_answer_makes_one_thought_from_all_the_sources() -> None:
    llm = model(lambda answer: f"CONFIDENT: 1\nTHOUGHT: {SMELT} {PICKAXE}")
    result = run(llm, memory_from="both")
    assert [kind for kind, _ in llm.calls].count("thought") == 3  # two steps, one answer
    assert [n["step"] for n in result["thoughts"]] == [1, 2, None]
    assert [n["stored"] for n in result["thoughts"]] == [True, False, False]  # then redundant


def test_a_failed_memory_keeps_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from rat_agent.errors import RetrievalError

    def broken(self: Memory, *args: object) -> None:
        raise RetrievalError("disk full")

    monkeypatch.setattr(Memory, "add", broken)
    result = run(model(by_step))
    assert result["answer"].startswith("STEP 1: smelt raw iron")
    assert [n["reason"] for n in result["thoughts"]] == ["memory failed: disk full"] * 2


def test_memory_needs_a_method_that_retrieves() -> None:
    with pytest.raises(ConfigError, match="memory needs a method that retrieves"):
        run(model(by_step), method="cot")


def test_a_collection_of_documents_is_not_a_memory(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("# Iron\nIron is a metal.\n")
    assert cli.main(["ingest", str(tmp_path / "doc.md"), "--collection", "docs"]) == 0
    with pytest.raises(ConfigError, match="not a thought memory"):
        run(model(by_step), memory="docs")


def test_the_cli_lists_shows_forgets_and_clears(capsys: pytest.CaptureFixture[str]) -> None:
    first = run(model(by_step), thread="first")
    smelt_id = first["thoughts"][0]["id"]
    assert cli.main(["memory", "list"]) == 0
    listed = capsys.readouterr().out
    assert smelt_id[:8] in listed and "2 thoughts" in listed
    assert cli.main(["memory", "show", smelt_id[:8]]) == 0
    shown = capsys.readouterr().out
    assert SMELT in shown and "corpus:furnace" in shown and "level 2" in shown
    assert "thread first, step 1" in shown
    for short in ("", "  ", smelt_id[:3]):  # "" once matched, and deleted, every thought
        assert cli.main(["memory", "forget", short]) == 2
        assert "at least 4 characters" in capsys.readouterr().err
    assert Memory("thoughts").count() == 2
    assert cli.main(["memory", "forget", smelt_id]) == 0
    assert Memory("thoughts").count() == 1
    assert cli.main(["memory", "show", smelt_id]) == 2
    assert "no thought" in capsys.readouterr().err
    assert cli.main(["memory", "clear", "--yes"]) == 0
    assert "cleared 1 thought" in capsys.readouterr().out
    assert Memory("thoughts").count() == 0


def test_rat_show_reports_what_the_run_taught_the_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rat_agent.persistence.checkpoints import checkpointer

    with checkpointer() as saver:
        graph = build_graph(
            checkpointer=saver, llm=model(by_step), retriever=ListRetriever(documents=documents())
        )
        graph.invoke(
            {"question": "How do I make an iron pickaxe?"},
            config={"configurable": {"thread_id": "taught"}},
            context={"memory": "thoughts", "answer_prompt": ""},  # thoughts from steps and answer
        )
    assert cli.main(["show", "taught"]) == 0
    shown = capsys.readouterr().out
    assert "memory: 2 thoughts stored, 1 redundant" in shown
    assert SMELT in shown and PICKAXE in shown


def test_a_replayed_run_finds_its_own_thoughts_instead_of_duplicating_them() -> None:
    first = run(model(by_step), thread="same")
    again = run(model(by_step), thread="same")  # as when `remember` runs again on resume
    assert [(n["stored"], n["reason"], n["id"]) for n in again["thoughts"]] == [
        (True, "stored", n["id"]) for n in first["thoughts"]
    ]
    assert Memory("thoughts").count() == 2


def test_on_a_server_with_keys_each_user_recalls_only_their_own_thoughts() -> None:
    """Thoughts carry what a user's documents said: a user of a server with keys (its runs
    carry langgraph_auth_user) writes to and reads from a memory of their own."""

    def as_user(llm: ScriptedModel, user: str, thread: str) -> dict:
        graph = build_graph(llm=llm, retriever=ListRetriever(documents=documents()))
        who = {"identity": user, "is_authenticated": True}
        return graph.invoke(
            {"question": "How do I make an iron pickaxe?"},
            config={"configurable": {"thread_id": thread, "langgraph_auth_user": who}},
            context={"memory": "thoughts", "answer_prompt": ""},
        )

    def kinds(result: dict) -> list[str]:
        return [s["kind"] for s in result["steps"][0]["sources"]]

    first = as_user(model(by_step), "alice@example.com", "a1")
    assert first["thoughts"] and Memory("thoughts").all() == []  # not the shared memory
    silent = model(lambda answer: "CONFIDENT: 0")
    assert kinds(as_user(silent, "bob", "b1")) == ["document", "document"]
    assert kinds(as_user(silent, "alice@example.com", "a2")) == ["document", "document", "thought"]
    # the CLI and an open server keep the one memory they name
    run(model(by_step), thread="open")
    assert len(Memory("thoughts").all()) == 2
