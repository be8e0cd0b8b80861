"""REACT: the agent a LangGraph user would build instead of RAT (context method 'react').

LangChain's `create_agent` with the run's retriever as its one tool, on the same model,
system prompt, documents (k, the passages chosen) and at most rat's model calls for
max_steps steps (2 max_steps + 1), so a comparison with rat differs in the method only.
The agent decides when and what to search; its last allowed call is made without the
tool, so it always ends in an answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.messages.tool import ToolCall, tool_call
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.runtime import Runtime

from rat_agent import parsing
from rat_agent.agent import prompts
from rat_agent.agent.context import Context, context_of
from rat_agent.agent.nodes import RatNodes, check_sources, source_of, start_run
from rat_agent.agent.state import State, Step
from rat_agent.aio import run
from rat_agent.errors import RetrievalError, UnusableReply
from rat_agent.providers.call import typed_errors


class LastCallAnswers(AgentMiddleware):
    """Offers the tool on every call but the last one the cap allows: a capped agent that
    is cut off mid-search has no answer to give."""

    def __init__(self, max_calls: int) -> None:
        super().__init__()
        self.max_calls = max_calls

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        made = sum(isinstance(m, AIMessage) for m in request.messages)
        if made + 1 >= self.max_calls:
            request = request.override(tools=[], tool_choice=None)
        return handler(request)


class CallsInText(AgentMiddleware):
    """Reads a tool call a model wrote as text: a JSON object naming an offered tool and
    its arguments ({"name": "search", "arguments": {...}}, bare or in a code block). Small
    models write Hermes-style calls without the <tool_call> tags their own chat template
    asks for (the bundled model does on most docs questions), and the server parses only
    tagged ones; without this their agent never searches (benchmarks/tool_calls.py)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        response = handler(request)
        offered = dict(_arguments(t) for t in request.tools)
        last = response.result[-1] if response.result else None
        if not offered or not isinstance(last, AIMessage) or last.tool_calls:
            return response
        found = calls_in_text(last.text, offered)
        if found is None:
            return response
        before, calls = found
        message = AIMessage(
            content=before, id=last.id, tool_calls=calls, usage_metadata=last.usage_metadata
        )
        return ModelResponse(
            result=[*response.result[:-1], message],
            structured_response=response.structured_response,
        )


def _arguments(tool: Any) -> tuple[str, set[str]]:
    """A tool's name and the names of its arguments."""
    if isinstance(tool, dict):
        spec = tool.get("function", tool)
        return spec.get("name", ""), set((spec.get("parameters") or {}).get("properties", {}))
    return tool.name, set(tool.args)


def calls_in_text(text: str, offered: dict[str, set[str]]) -> tuple[str, list[ToolCall]] | None:
    """The text before the first call, and every call, where the text holds calls of
    offered tools; None where it holds none. An object counts only where it names an
    offered tool and gives it arguments that tool takes: an answer quoting JSON, or the
    model echoing the tool's schema, stays text."""
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    start = -1
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if (
            isinstance(value, dict)
            and value.get("name") in offered
            and isinstance(args := value.get("arguments", value.get("parameters")), dict)
            and args
            and set(args) <= offered[value["name"]]
        ):
            calls.append(tool_call(name=value["name"], args=args, id=f"call_{uuid.uuid4().hex}"))
            start = at if start < 0 else start
            at = text.find("{", end)
        else:
            at = text.find("{", at + 1)
    if not calls:
        return None
    before = text[:start].rstrip().removesuffix("{").rstrip()
    return before.removesuffix("```json").removesuffix("```").rstrip(), calls


def react(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = nodes.resolve(context_of(runtime))
    check_sources(nodes, ctx)
    max_calls = 2 * ctx.max_steps + 1
    question, chat = run(nodes.task(state, ctx))
    found: list[dict[str, str]] = []
    queries: list[str] = []

    def search(query: str) -> str:
        queries.append(query)
        try:
            shown = nodes.passages(ctx, nodes.search(ctx, query), [query])
        except RetrievalError as exc:  # the agent is told, as a user's ToolNode would tell it
            return f"The search failed: {exc}"
        docs = shown.documents
        found.extend(d for d in docs if d not in found)
        return prompts.documents_text(docs) if docs else "Nothing found."

    tool = StructuredTool.from_function(search, description=prompts.SEARCH_TOOL)
    middleware = [LastCallAnswers(max_calls), CallsInText()]
    agent = create_agent(nodes.model(ctx), [tool], middleware=middleware)
    config: RunnableConfig = {"tags": ["rat:react"], "recursion_limit": 4 * max_calls + 8}
    task: Any = {"messages": prompts.react_messages(ctx.system_prompt, question)}
    with typed_errors():
        result = agent.invoke(task, config)
    replies = [m for m in result["messages"] if isinstance(m, AIMessage) and m.text.strip()]
    answer = parsing.strip_thinking(replies[-1].text).strip() if replies else ""
    if not answer:
        raise UnusableReply("the agent returned an empty answer")
    sources = [source_of(d) for d in found]
    # As RAG's: the answer is the reply; its lines are steps, each citing what was found.
    steps: list[Step] = [
        {
            "draft": "",
            "query": "; ".join(queries),
            "sources": sources,
            "revised": text,
            "status": "revised" if sources else "not_revised",
            "note": "" if queries else "the agent answered without searching",
        }
        for text in parsing.split_steps(answer)
        if parsing.says_something(text)
    ]
    return {**start_run(question, ctx, **chat, answer=answer), "steps": steps}
