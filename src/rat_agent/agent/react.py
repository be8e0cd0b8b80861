"""REACT: the agent a LangGraph user would build instead of RAT (context method 'react').

LangChain's `create_agent` with the run's retriever as its one tool, on the same model,
task prompt, documents (k, evidence, doc_chars) and a cap on model calls (`max_calls`), so a
comparison with rat differs in the method only. The agent decides when and what to search;
its last allowed call is made without the tool, so it always ends in an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.runtime import Runtime

from rat_agent.agent import parsing, prompts
from rat_agent.agent.context import Context
from rat_agent.agent.model import typed_errors
from rat_agent.agent.nodes import (
    RatNodes,
    check_sources,
    context_of,
    doc_chars,
    focus,
    question_of,
    source_of,
    start_run,
)
from rat_agent.agent.state import State, Step
from rat_agent.errors import RetrievalError, UnusableReply


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


def react(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = context_of(runtime)
    check_sources(nodes, ctx)
    question = question_of(state)
    found: list[dict[str, str]] = []
    queries: list[str] = []

    def search(query: str) -> str:
        queries.append(query)
        try:
            docs = focus(ctx, nodes.search(ctx, query), [query]).documents
        except RetrievalError as exc:  # the agent is told, as a user's ToolNode would tell it
            return f"The search failed: {exc}"
        found.extend(d for d in docs if d not in found)
        return prompts.documents_text(docs, doc_chars(ctx)) if docs else "Nothing found."

    tool = StructuredTool.from_function(search, description=prompts.SEARCH_TOOL)
    agent = create_agent(nodes.model(ctx), [tool], middleware=[LastCallAnswers(ctx.max_calls)])
    config: RunnableConfig = {"tags": ["rat:react"], "recursion_limit": 4 * ctx.max_calls + 8}
    task: Any = {"messages": prompts.react_messages(question)}
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
    return {**start_run(question, ctx, answer=answer), "steps": steps}
