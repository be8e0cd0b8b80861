"""What users get: the shipped defaults, unchanged, with the bundled model, on each kind of
source. The Minecraft corpus switches its plan repair on and its plan is the answer; a Qdrant
collection of ordinary prose and a web search (Tavily, faked on 127.0.0.1) run the paper's
loop on the draft the bundled model's profile declares for answers: rag's answer from the
task's passages, each paragraph a step; the checked paragraphs are the answer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from pytest_httpserver import HTTPServer

from rat_agent import build_graph, cli, parsing, retrieval
from rat_agent.retrieval.qdrant import client as qdrant
from rat_minecraft.reading import parse_steps

pytestmark = pytest.mark.integration

LIBRARY = {
    "lending.md": "# Lending\n\nThe Alder Street library lends up to 6 books at a time, for "
    "21 days each. Bring your library card to the front desk to borrow.\n",
    "renewals.md": "# Renewals\n\nA loan can be renewed twice, online at alder-library.example "
    "or at the desk, unless another reader has reserved the book.\n",
    "fines.txt": "Late books cost 20 cents a day. Lost cards are replaced for 2 euros.\n",
}
QUESTION = "How do I borrow a book at the Alder Street library and keep it longer?"


class Calls(BaseCallbackHandler):
    """The kind of every model call, by the tag the nodes give it ("rat:revise")."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.kinds += [t.removeprefix("rat:") for t in tags or [] if t.startswith("rat:")]


def run(question: str, **source: str) -> tuple[dict[str, Any], list[str]]:
    """The run's output, with what its draft was written as (`draft_from`, kept in state),
    and the kind of every model call."""
    calls = Calls()
    graph = build_graph(checkpointer=InMemorySaver())
    config: RunnableConfig = {"callbacks": [calls], "configurable": {"thread_id": "defaults"}}
    result = graph.invoke({"question": question}, config, context=source)
    return {**result, "draft_from": graph.get_state(config).values["draft_from"]}, calls.kinds


def assert_the_papers_loop(result: dict[str, Any], kinds: list[str]) -> None:
    """Rag's answer from the task's passages (the profile's draft), then a revision a
    paragraph, each searched with its own text (the profile's query mode: no query call),
    but for one no passage bears on (the profile's bearing floor: kept as drafted with no
    revision call, the note giving its best match); n steps, each the
    model's revision or its draft, each with its sources; none dropped or inserted; the
    answer is the checked paragraphs, with no call to rewrite them, and cites the passages
    the draft was written from."""
    steps = result["steps"]
    assert steps and result["draft_from"].startswith("method rag's answer written from ")
    expected = ["draft"]
    for step in steps:
        floor = re.match(r"no passage bears on it \(best match (\d\.\d\d)\)", step["note"])
        expected += [] if floor else ["revise"]
        assert step["query"] == parsing.head(step["draft"]), step
        if floor:
            assert float(floor.group(1)) < 0.5 and step["revised"] == step["draft"], step
    assert kinds == expected
    kept = [s["revised"] if s["status"] == "revised" else s["draft"] for s in steps]
    assert result["answer"] == "\n\n".join(kept)
    assert result["passages"]
    for step in steps:
        assert step["status"] in ("revised", "unchanged", "not_revised"), step
        assert "makes" not in step
        assert step["sources"], step
    assert result["answer"].strip()


def test_a_collection_of_prose_runs_the_papers_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    retrieval.clear_cache()
    docs = tmp_path / "library"
    docs.mkdir()
    for name, text in LIBRARY.items():
        (docs / name).write_text(text)
    assert cli.main(["ingest", str(docs)]) == 0
    capsys.readouterr()
    result, kinds = run(QUESTION, retriever="qdrant")
    assert_the_papers_loop(result, kinds)
    cited = {Path(s["source"]).name for step in result["steps"] for s in step["sources"]}
    assert cited <= set(LIBRARY)
    qdrant.close_clients()
    retrieval.clear_cache()


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-0123456789")
    monkeypatch.setenv("TAVILY_API_BASE_URL", server.url_for(""))
    retrieval.clear_cache()
    yield server
    server.clear()
    server.stop()
    retrieval.clear_cache()


def test_a_web_search_runs_the_papers_loop(web: HTTPServer) -> None:
    results = [
        {
            "title": name,
            "url": f"https://alder-library.example/{name}",
            "content": " ".join(text.split()),
            "score": 0.9,
            "raw_content": None,
        }
        for name, text in LIBRARY.items()
    ]
    body = {"query": "q", "answer": None, "images": [], "results": results, "response_time": 0.1}
    web.expect_request("/search").respond_with_json(body)
    result, kinds = run(QUESTION, retriever="tavily")
    assert_the_papers_loop(result, kinds)
    searched = [json.loads(r.get_data())["query"] for r, _ in web.log]
    assert searched[0] == QUESTION  # the draft's search (rag's), then one a step
    assert len(searched) == 1 + len(result["steps"])
    assert all(
        s["source"].startswith("https://alder-library.example/")
        for s in result["steps"][0]["sources"]
    )


def test_the_minecraft_corpus_runs_its_plan_repair() -> None:
    """No settings at all: the bundled corpus, its crafting extension on. It names the goal
    (one call after the draft) and writes a plan of STEP lines from the corpus's pages."""
    result, kinds = run("How do I obtain a crafting table in Minecraft?")
    assert kinds[:2] == ["draft", "goal"]
    kept = [s for s in result["steps"] if s["status"] != "dropped"]
    assert kept and parse_steps(result["answer"]) == [s["revised"] for s in kept]
    for step in kept:
        if step["status"] != "not_revised":
            assert all(s["source"].startswith("minecraft-corpus:") for s in step["sources"])
