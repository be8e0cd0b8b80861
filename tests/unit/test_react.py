"""The tool-calling agent a LangGraph user would build instead (method 'react')."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import AgentModel, ListRetriever, prompt_text, wiki_docs
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from rat_agent import build_graph

QUESTION = "Which fact is number 2?"


def searching(queries: list[str]) -> AgentModel:
    """Searches each query in turn while the tool is offered, then answers from what the
    last search returned."""

    def respond(tools: list[str], messages: list[BaseMessage]) -> AIMessage:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if tools and done < len(queries):
            call = {"name": "search", "args": {"query": queries[done]}, "id": f"c{done}"}
            return AIMessage("", tool_calls=[call])
        last = next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)
        return AIMessage(f"The answer, from: {str(last.content)[:40] if last else 'memory'}")

    return AgentModel(respond=respond)


def run(model: AgentModel, retriever: ListRetriever, **context: Any) -> dict[str, Any]:
    graph = build_graph(llm=model, retriever=retriever)
    return graph.invoke({"question": QUESTION}, context={"method": "react", "k": 2, **context})


def test_the_agent_searches_with_its_own_queries_and_answers_from_the_passages() -> None:
    model, retriever = searching(["fact number 2"]), ListRetriever(documents=wiki_docs(3))
    result = run(model, retriever)

    assert retriever.queries == ["fact number 2"]
    assert [tools for tools, _ in model.calls] == [["search"], ["search"]]
    assert all("rat:react" in tags for tags in model.tags_seen)
    first = prompt_text(model.calls[0][1])
    assert f"Task: {QUESTION}" in first and "search tool" in first
    shown = next(m for m in model.calls[1][1] if isinstance(m, ToolMessage))
    assert str(shown.content).startswith("<documents>\n[1] Page 1 (corpus:page1)")
    assert result["answer"] == "The answer, from: <documents>\n[1] Page 1 (corpus:page1)\n1a"
    (step,) = result["steps"]
    assert step["revised"] == result["answer"] and step["query"] == "fact number 2"
    assert [s["source"] for s in step["sources"]] == ["corpus:page1", "corpus:page2"]


def test_the_last_call_the_cap_allows_has_no_tool_so_the_agent_answers() -> None:
    model, retriever = (
        searching([f"query {n}" for n in range(10)]),
        ListRetriever(documents=wiki_docs(2)),
    )
    result = run(model, retriever, max_steps=1)  # rat's budget for one step: 3 calls

    assert [tools for tools, _ in model.calls] == [["search"], ["search"], []]
    assert retriever.queries == ["query 0", "query 1"]
    assert result["answer"].startswith("The answer, from: <documents>")
    assert result["steps"][0]["query"] == "query 0; query 1"


def test_a_failed_search_is_told_to_the_agent_which_still_answers() -> None:
    model = searching(["fact number 2"])
    retriever = ListRetriever(documents=wiki_docs(2), fail=lambda q: True)
    result = run(model, retriever)

    assert result["answer"].startswith("The answer, from: The search failed:")
    assert result["steps"][0]["sources"] == []


def written(calls: list[str]) -> AgentModel:
    """Writes each call as text, as the bundled model does: a JSON object naming the tool
    in a code block after some words (once with the doubled braces of its template)."""

    def respond(tools: list[str], messages: list[BaseMessage]) -> AIMessage:
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if tools and done < len(calls):
            return AIMessage(f"Let me look that up.\n\n```json\n{calls[done]}\n```")
        last = next((m for m in reversed(messages) if isinstance(m, ToolMessage)), None)
        return AIMessage(f"The answer, from: {str(last.content)[:40] if last else 'memory'}")

    return AgentModel(respond=respond)


def test_a_call_written_as_json_text_is_run_as_a_call() -> None:
    model = written(
        [
            '{"name": "search", "arguments": {"query": "fact number 2"}}',
            '{{"name": "search", "arguments": {"query": "fact number 1"}}}',
        ]
    )
    retriever = ListRetriever(documents=wiki_docs(2))
    result = run(model, retriever)

    assert retriever.queries == ["fact number 2", "fact number 1"]
    assert result["answer"].startswith("The answer, from: <documents>")
    assert result["steps"][0]["query"] == "fact number 2; fact number 1"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "lookup", "arguments": {"query": "x"}}',  # no such tool
        '{"name": "search", "parameters": {"type": "object", "properties": {}}}',  # its schema
        '{"name": "search", "arguments": {}}',  # no arguments
        'Set {"name": "search"} in the file.',  # JSON in an answer
    ],
)
def test_json_that_is_no_call_of_an_offered_tool_stays_the_answer(text: str) -> None:
    model, retriever = written([text]), ListRetriever(documents=wiki_docs(2))
    result = run(model, retriever)

    assert retriever.queries == []
    assert text in result["answer"]
