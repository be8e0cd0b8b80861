"""The graph awaited: under `ainvoke` a run awaits the model and the source (no worker thread
waits on them), sends the prompts the sync run sends and ends alike; and with the blocking
check `langgraph dev` runs (blockbuster), no node blocks the event loop, on real Qdrant,
real embeddings and the thought memory."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text
from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForLLMRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from rat_agent import build_graph
from rat_agent.ingest import pipeline

pytestmark = pytest.mark.usefixtures("fresh_data")  # conftest.py

QUESTION = "How is the alpha valve set for winter?"
DRAFT = "STEP 1: Open the panel.\nSTEP 2: Set the alpha valve.\nSTEP 3: Close the panel."
PAGES = [
    Document(
        page_content=f"Manual page {n}: in winter the alpha valve is set to {n * 10} percent.",
        metadata={"title": f"Manual {n}", "source": f"manual:{n}"},
    )
    for n in range(1, 4)
]


def respond(kind: str, messages: list[BaseMessage]) -> str:
    if kind == "draft":
        return DRAFT
    if kind == "query":
        return f"manual: {current_step(messages)}"
    if kind == "revise":
        step = current_step(messages)
        return "KEEP" if "panel" in step else f"{step} Set it to 30 percent."
    if kind == "thought":
        return (
            "CONFIDENT: 1\nTHOUGHT: Winter servicing of the pump is three moves: open the "
            "panel, turn the alpha valve to 30, shut the panel."
        )
    return "Set the alpha valve to 30 percent."  # answer, direct, rag


class AwaitedModel(ScriptedModel):
    """The scripted model, answering only when awaited."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise AssertionError("a sync model call under ainvoke")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        await asyncio.sleep(0)
        return ScriptedModel._generate(self, messages, stop, run_manager, **kwargs)  # type: ignore[arg-type]


class AwaitedRetriever(ListRetriever):
    """The list retriever, answering only when awaited."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        raise AssertionError("a sync search under ainvoke")

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return ListRetriever._get_relevant_documents(self, query, run_manager=run_manager)  # type: ignore[arg-type]


def prompts_of(model: ScriptedModel) -> Counter[tuple[str, str]]:
    return Counter((kind, prompt_text(messages)) for kind, messages in model.calls)


@pytest.mark.parametrize(
    ("method", "speculate"), [("rat", 0), ("rat", 3), ("rag", 0), ("direct", 0), ("cot", 0)]
)
def test_awaited_a_run_sends_the_sync_runs_prompts_and_ends_alike(
    method: str, speculate: int
) -> None:
    context = {"method": method, "speculate": speculate}
    sync_model = ScriptedModel(respond=respond)
    sync_graph = build_graph(llm=sync_model, retriever=ListRetriever(documents=PAGES))
    plain = sync_graph.invoke({"question": QUESTION}, context=context)

    model = AwaitedModel(respond=respond)
    retriever = AwaitedRetriever(documents=PAGES)
    graph = build_graph(llm=model, retriever=retriever)
    awaited = asyncio.run(graph.ainvoke({"question": QUESTION}, context=context))

    assert awaited["answer"] == plain["answer"]
    assert awaited["steps"] == plain["steps"]
    assert model.calls, "the awaited run called its model"
    if speculate:  # ahead, guesses may be added; every prompt of the sync run was sent
        assert not prompts_of(sync_model) - prompts_of(model)
    else:
        assert prompts_of(model) == prompts_of(sync_model)
    if method == "rat":
        assert [s["status"] for s in awaited["steps"]] == ["unchanged", "revised", "unchanged"]
        assert len(retriever.queries) >= 3


def test_no_node_blocks_the_event_loop_on_real_qdrant_and_memory(tmp_path: Path) -> None:
    blocking = pytest.importorskip(
        "langgraph_runtime_inmem.queue", reason="the server's blocking check: rat-agent[server]"
    )
    manual = tmp_path / "manual.md"
    manual.write_text("\n\n".join(p.page_content for p in PAGES) + "\n")
    pipeline.ingest([str(manual)], collection="manual")
    model = AwaitedModel(respond=respond)
    graph = build_graph(llm=model)  # the source the context names: embedded Qdrant
    base = {"retriever": "qdrant", "collection": "manual", "memory": "thoughts"}

    async def runs() -> list[dict[str, Any]]:
        checker = blocking._enable_blockbuster()  # what `langgraph dev` turns on
        try:
            return [
                await graph.ainvoke({"question": QUESTION}, context={**base, **extra})
                for extra in ({"speculate": 2}, {"method": "rag"}, {})
            ]
        finally:
            checker.deactivate()

    first, rag, again = asyncio.run(runs())
    plan = asyncio.run(plan_repaired(blocking))
    assert "30 percent" in first["answer"] and "30 percent" in rag["answer"]
    assert any(s["sources"] for s in first["steps"])
    assert first["thoughts"], "the first run stored its conclusions"
    assert plan["steps"] and plan["answer"]
    # the memory was read as well, off the loop: a later run is shown the first one's thought
    assert any(source["kind"] == "thought" for step in again["steps"] for source in step["sources"])


async def plan_repaired(blocking: Any) -> dict[str, Any]:
    """The default source, the bundled corpus, whose domain's plan repair is a plug-in:
    loading it and its hooks (sync, so they ask the model sync) run off the event loop."""
    graph = build_graph(llm=ScriptedModel(respond=respond))
    checker = blocking._enable_blockbuster()
    try:
        return await graph.ainvoke(  # type: ignore[no-any-return]
            {"question": "How do I make a wooden pickaxe?"}, context={"max_steps": 3}
        )
    finally:
        checker.deactivate()
