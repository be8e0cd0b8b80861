"""RAT as a tool, so a tool-calling agent can hand it questions that need checked steps."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from rat_agent.agent.context import Context
from rat_agent.parsing import cited

DESCRIPTION = (
    "Answer a question that needs a plan or several reasoning steps: drafts the steps, then "
    "checks and revises each one against the knowledge source. Returns the revised steps and "
    "the sources each step was checked against."
)


class RatInput(BaseModel):
    question: str = Field(description="The task or question, in full.")


def as_tool(
    graph: Any = None,
    *,
    context: Context | dict[str, Any] | None = None,
    name: str = "retrieval_augmented_thoughts",
    description: str = DESCRIPTION,
) -> BaseTool:
    """A tool running `graph` (default: the RAT graph) with a fixed `context`.

    Runnable.as_tool would also wrap the graph, but it returns the raw state; an agent's
    model reads text, so this returns the answer with numbered sources.
    """
    if graph is None:
        from rat_agent.agent.graph import build_graph

        graph = build_graph()
    settings = asdict(context) if isinstance(context, Context) else dict(context or {})

    def run(question: str) -> str:
        return _as_text(graph.invoke({"question": question}, context=settings))

    async def arun(question: str) -> str:
        return _as_text(await graph.ainvoke({"question": question}, context=settings))

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=description, args_schema=RatInput
    )


def _as_text(result: dict[str, Any]) -> str:
    return cited(str(result.get("answer", "")), result.get("steps", []))
