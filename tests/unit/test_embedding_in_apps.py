"""The compiled graph inside a LangChain app: every way of calling it, as a tool, time travel.

These are the embedding examples of docs/python.md, run for real with the deterministic fake model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, plan_model, prompt_text, wiki_docs
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from rat_agent import as_tool, build_graph
from rat_agent.timetravel import checkpoints, fork

DRAFT = "STEP 1: get logs\nSTEP 2: make planks\nSTEP 3: craft a table"
QUESTION = {"question": "How do I make a crafting table?"}
CONTEXT = {"k": 2, "answer_prompt": ""}  # a plan: its revised steps are the answer
FIXED = ["FIXED get logs", "FIXED make planks", "FIXED craft a table"]


def graph(model: ScriptedModel | None = None, **kwargs: Any) -> Any:
    return build_graph(
        llm=model or plan_model(DRAFT), retriever=ListRetriever(documents=wiki_docs(2)), **kwargs
    )


def revised(result: dict[str, Any]) -> list[str]:
    return [step["revised"] for step in result["steps"]]


def test_invoke_and_ainvoke_give_the_same_answer() -> None:
    result = graph().invoke(QUESTION, context=CONTEXT)
    assert revised(result) == FIXED
    assert set(result) == {
        "question",
        "answer",
        "steps",
        "thoughts",
        "passages",
        "messages",
    }  # output only
    awaited = asyncio.run(graph().ainvoke(QUESTION, context=CONTEXT))
    turns = [(m.type, m.content) for m in result.pop("messages")]
    assert [(m.type, m.content) for m in awaited.pop("messages")] == turns  # ids are new
    assert awaited == result


def test_batch_runs_questions_independently() -> None:
    results = graph().batch([QUESTION, {"question": "Another question?"}], context=CONTEXT)
    assert [r["question"] for r in results] == [QUESTION["question"], "Another question?"]
    assert all(revised(r) == FIXED for r in results)


def test_stream_modes() -> None:
    model = plan_model(DRAFT)
    chunks = list(
        graph(model).stream(
            QUESTION,
            context=CONTEXT,
            stream_mode=["updates", "values", "custom", "messages", "checkpoints"],
        )
    )
    modes = [mode for mode, _ in chunks]
    updates = [next(iter(data)) for mode, data in chunks if mode == "updates"]
    assert updates[:2] == ["draft_cot", "to_query"] and updates[-2:] == ["append_next", "reply"]
    custom = [data for mode, data in chunks if mode == "custom" and data["event"] == "step"]
    assert [data["step"] for data in custom] == [1, 2, 3]
    assert custom[0]["event"] == "step" and custom[0]["of"] == 3
    assert custom[0]["sources"][0]["title"] == "Page 1"
    # "messages": the model's output, tagged with the node that asked for it, and the chat's
    # turns: the question (from draft_cot) and the answer (from reply)
    messages = [data for mode, data in chunks if mode == "messages"]
    replies = [
        (m, meta) for m, meta in messages if m.type == "ai" and meta["langgraph_node"] != "reply"
    ]
    assert len(replies) == len(model.calls) == 7
    assert {meta["langgraph_node"] for _, meta in replies} == {
        "draft_cot",
        "to_query",
        "revise_step",
    }
    turns = [(m.type, meta["langgraph_node"]) for m, meta in messages if (m, meta) not in replies]
    assert turns == [("human", "draft_cot"), ("ai", "reply")]
    values = [data for mode, data in chunks if mode == "values"]
    assert revised(values[-1]) == FIXED
    assert "checkpoints" not in modes  # no checkpointer: nothing to report


def test_the_answer_alone_streams_by_its_tag() -> None:
    """docs/python.md: the "messages" stream has every model call; a UI that shows the answer
    only keeps the chunks tagged rat:answer."""
    answer = [
        message.content
        for message, meta in graph().stream(QUESTION, context={"k": 2}, stream_mode="messages")
        if "rat:answer" in meta.get("tags", [])
    ]
    assert "".join(answer) == "final answer"


def test_astream_gives_the_same_updates() -> None:
    async def collect() -> list[str]:
        return [
            next(iter(update))
            async for update in graph().astream(QUESTION, context=CONTEXT, stream_mode="updates")
        ]

    sync = [next(iter(u)) for u in graph().stream(QUESTION, context=CONTEXT, stream_mode="updates")]
    assert asyncio.run(collect()) == sync


class ToolCallingModel(BaseChatModel):
    """Calls the RAT tool once, then answers from what the tool returned."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(messages)
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            call = {
                "name": "retrieval_augmented_thoughts",
                "id": "call-1",
                "args": {"question": "How do I make a crafting table?"},
            }
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content="Plan: " + str(results[-1].content).splitlines()[0])
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_the_graph_as_a_tool_of_a_tool_calling_agent() -> None:
    rat = as_tool(graph(), context=CONTEXT)
    agent_model = ToolCallingModel()
    agent = create_agent(agent_model, tools=[rat])
    result = agent.invoke({"messages": [("user", "I need a crafting table.")]})
    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    text = str(tool_message.content)
    assert text.startswith("STEP 1: FIXED get logs")
    assert "STEP 1 checked against [1] [2]" in text and "[1] Page 1 (corpus:page1)" in text
    assert result["messages"][-1].content == "Plan: STEP 1: FIXED get logs"
    assert asyncio.run(rat.ainvoke({"question": "q"})).startswith("STEP 1: FIXED")


def test_time_travel_forks_from_step_k_with_that_step_edited() -> None:
    model = plan_model(DRAFT)
    g = graph(model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "tt"}}
    original = g.invoke(QUESTION, config, context=CONTEXT)
    history = checkpoints(g, "tt")
    assert history[0].next == ("__start__",) and history[-1].next == ()
    assert [c.step for c in history if c.next == ("to_query",)] == [0, 1, 2]

    calls_before = len(model.calls)
    forked = fork(g, "tt", 2, "make sixteen planks")
    result = g.invoke(None, forked, context=CONTEXT)
    assert revised(result) == ["FIXED get logs", "FIXED make sixteen planks", "FIXED craft a table"]
    assert result["steps"][0] == original["steps"][0]  # step 1 reused as it was
    # only steps 2 and 3 ran again: a query and a revision each, no new draft
    assert [kind for kind, _ in model.calls[calls_before:]] == ["query", "revise"] * 2
    assert revised(g.get_state(config).values) == revised(result)  # the thread moved on
    assert any(
        revised(s.values) == FIXED
        for s in g.get_state_history(config)
        if s.values.get("steps") and len(s.values["steps"]) == 3
    )  # old branch kept


def test_forking_the_first_step_and_bad_steps() -> None:
    import pytest

    from rat_agent import ConfigError

    model = plan_model(DRAFT)
    g = graph(model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "f1"}}
    g.invoke(QUESTION, config, context=CONTEXT)
    result = g.invoke(None, fork(g, "f1", 1, "chop four logs"), context=CONTEXT)
    assert revised(result)[0] == "FIXED chop four logs" and len(result["steps"]) == 3
    assert [kind for kind, _ in model.calls].count("draft") == 1
    for bad in (0, 4):
        with pytest.raises(ConfigError, match=r"no checkpoint before step|must be between"):
            fork(g, "f1", bad, "x")
    with pytest.raises(ConfigError, match="empty"):
        fork(g, "f1", 2, "  ")


def test_a_source_with_passages_off_never_loads_the_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Your own retriever that declares no passage budget (rat_evidence_tokens: 0): its
    documents are shown whole, and the run never loads MiniLM and torch (7-13 s)."""
    from rat_agent.providers import embeddings

    loaded: list[str] = []

    def no(*_: object) -> None:
        loaded.append("embedder")
        raise AssertionError("the embedder was loaded")

    monkeypatch.setattr(embeddings, "get_embeddings", no)
    source = ListRetriever(documents=wiki_docs(2), metadata={"rat_evidence_tokens": 0})
    model = plan_model(DRAFT)
    final = build_graph(llm=model, retriever=source).invoke(QUESTION, context=CONTEXT)
    assert revised(final) == FIXED
    shown = [prompt_text(m) for kind, m in model.calls if kind == "revise"]
    assert all(doc.page_content in text for doc in wiki_docs(2) for text in shown)
    assert loaded == []
