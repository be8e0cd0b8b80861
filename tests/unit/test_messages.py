"""The graph speaks messages, as LangGraph's chat clients expect: a chat's last human message
is the question, the answer comes back as an AI message citing its sources, and a follow-up
is answered with the earlier turns as context. The `question` input works as before."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from rat_agent import build_graph
from rat_agent.errors import ConfigError

PAGES = [
    Document(
        page_content="In winter the alpha valve is set to 30 percent; in summer to 70 percent.",
        metadata={"title": "Valve manual", "source": "https://example.org/valve"},
    )
]
FOLLOW_UP = "And in summer?"
STANDALONE = "How is the alpha valve set in summer?"


def respond(kind: str, messages: list[BaseMessage]) -> str:
    text = prompt_text(messages)
    if kind == "standalone":
        # a follow-up is rewritten from the turns before it
        assert "User: How is the alpha valve set in winter?" in text
        assert "Assistant: Set it to 30 percent." in text  # its citations after it, cut
        assert f"Last question: {FOLLOW_UP}" in text
        return STANDALONE
    if kind == "draft":
        return "STEP 1: Find the valve.\nSTEP 2: Set the valve."
    if kind == "query":
        return f"valve: {current_step(messages)}"
    if kind == "revise":
        return "KEEP"
    if kind == "answer":
        return "Set it to 70 percent." if "summer" in text else "Set it to 30 percent."
    raise AssertionError(kind)


def chat() -> tuple[ScriptedModel, Any]:
    model = ScriptedModel(respond=respond)
    graph = build_graph(
        llm=model, retriever=ListRetriever(documents=PAGES), checkpointer=InMemorySaver()
    )
    return model, graph


def test_a_question_input_comes_back_as_a_chat_turn_with_its_sources() -> None:
    model, graph = chat()
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"question": "How is the alpha valve set in winter?"}, config)
    asked, answered = out["messages"]
    assert isinstance(asked, HumanMessage) and asked.text == out["question"]
    assert isinstance(answered, AIMessage)
    assert answered.text.startswith("Set it to 30 percent.")
    assert "[1] Valve manual (https://example.org/valve)" in answered.text
    assert "STEP 1 checked against [1]" in answered.text
    (source,) = answered.additional_kwargs["sources"]
    assert source["source"] == "https://example.org/valve"
    assert [kind for kind, _ in model.calls].count("standalone") == 0


def test_a_follow_up_is_answered_with_the_earlier_turns_as_context() -> None:
    model, graph = chat()
    config = {"configurable": {"thread_id": "t"}}
    first = graph.invoke({"messages": [("user", "How is the alpha valve set in winter?")]}, config)
    assert first["question"] == "How is the alpha valve set in winter?"
    assert [kind for kind, _ in model.calls].count("standalone") == 0  # nothing before it
    calls = len(model.calls)

    second = graph.invoke({"messages": [("user", FOLLOW_UP)]}, config)
    kinds = [kind for kind, _ in model.calls[calls:]]
    assert kinds[0] == "standalone" and kinds.count("standalone") == 1
    # every method call after it reads the standalone question, not the bare follow-up
    assert all(STANDALONE in prompt_text(m) for _, m in model.calls[calls + 1 :])
    assert second["question"] == STANDALONE
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert second["messages"][2].text == FOLLOW_UP  # the chat keeps what the user wrote
    assert second["messages"][-1].text.startswith("Set it to 70 percent.")

    # the `question` input still works on the same thread, asked as written
    third = graph.invoke({"question": "How is the alpha valve set in winter?"}, config)
    assert third["messages"][-2].text == "How is the alpha valve set in winter?"
    assert third["answer"] == "Set it to 30 percent."


@pytest.mark.parametrize("method", ["direct", "rag"])
def test_the_baselines_rewrite_a_follow_up_too(method: str) -> None:
    def baseline(kind: str, messages: list[BaseMessage]) -> str:
        if kind in ("direct", "rag"):
            summer = STANDALONE in prompt_text(messages)
            return "Set it to 70 percent." if summer else "Set it to 30 percent."
        return respond(kind, messages)

    model = ScriptedModel(respond=baseline)
    graph = build_graph(
        llm=model, retriever=ListRetriever(documents=PAGES), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    context = {"method": method}
    graph.invoke(
        {"messages": [("user", "How is the alpha valve set in winter?")]}, config, context=context
    )
    out = graph.invoke({"messages": [("user", FOLLOW_UP)]}, config, context=context)
    assert out["question"] == STANDALONE and out["answer"] == "Set it to 70 percent."


def test_an_empty_chat_message_is_bad_input() -> None:
    _, graph = chat()
    with pytest.raises(ConfigError, match="empty"):
        graph.invoke({"messages": [("user", "  ")]}, {"configurable": {"thread_id": "t"}})
