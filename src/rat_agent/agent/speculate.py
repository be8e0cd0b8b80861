"""Steps checked ahead (`speculate`): while step i is checked, steps i+1..i+d start on the
guess that the steps before each stay as drafted. Their calls are kept under their prompts
(rat_agent.ahead), so the loop's own calls, replies and steps are those of the plain loop."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from rat_agent import parsing
from rat_agent.agent.context import Context
from rat_agent.agent.state import Found, State, Step, revised
from rat_agent.aio import Body, Wait, arun, run

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from rat_agent.agent.extension import PlanRepair
    from rat_agent.ahead import Ahead


class Loop(Protocol):
    """What a step checked ahead uses of the loop's nodes (nodes.RatNodes)."""

    ahead: Ahead

    def repair(self, ctx: Context) -> PlanRepair | None: ...
    def query(self, state: State, ctx: Context) -> Body[str]: ...
    def found(self, ctx: Context, query: str, targets: list[str]) -> Wait[Found]: ...
    def revise_messages(self, state: State, ctx: Context, draft: str) -> list[BaseMessage]: ...
    def asking(
        self,
        ctx: Context,
        call: str,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None = None,
        whole: bool = False,
    ) -> Wait[str]: ...


def look_ahead(nodes: Loop, state: State, ctx: Context) -> Wait[None]:
    """Start steps i+1..i+d (d: `speculate`) as the loop would check them if the steps from
    i on stayed as drafted; the paper's loop only (plan repair changes the steps ahead)."""
    bodies: list[Callable[[], Body[None]]] = []
    if ctx.speculate > 0 and ctx.method == "rat" and nodes.repair(ctx) is None:
        i, drafts = state["index"], list(state["drafts"])
        done = revised(state["steps"])
        for j in range(i + 1, min(len(drafts), i + 1 + ctx.speculate)):
            past = [*done, *drafts[i:j]]
            bodies.append(partial(_step_ahead, nodes, ctx, state["question"], drafts, j, past))

    def launch() -> None:
        for body in bodies:
            nodes.ahead.launch(partial(_run_new, body))

    async def alaunch() -> None:
        for body in bodies:
            nodes.ahead.alaunch(partial(_arun_new, body))

    return Wait(launch, alaunch)


def _step_ahead(
    nodes: Loop, ctx: Context, question: str, drafts: list[str], j: int, past: list[str]
) -> Body[None]:
    """Step j's query, retrieval and revision, with `past` as its revised steps: the calls
    the loop will claim if it gets there with that past."""
    steps = [_guessed(text) for text in past]
    ahead: State = {
        "question": question,
        "answer": "",
        "drafts": drafts,
        "index": j,
        "steps": steps,
    }
    query = yield from nodes.query(ahead, ctx)
    if not query:
        return
    documents, _, _ = yield nodes.found(ctx, query, [query, parsing.head(drafts[j])])
    if documents:
        messages = nodes.revise_messages({**ahead, "documents": documents}, ctx, drafts[j])
        yield nodes.asking(ctx, "revise", messages, whole=True)


def _run_new(body: Callable[[], Body[None]]) -> None:
    run(body())


async def _arun_new(body: Callable[[], Body[None]]) -> None:
    await arun(body())


def _guessed(text: str) -> Step:
    """A step as the loop ahead assumes it: checked, and kept as drafted."""
    return {
        "draft": text,
        "query": "",
        "sources": [],
        "revised": text,
        "status": "unchanged",
        "note": "",
    }
