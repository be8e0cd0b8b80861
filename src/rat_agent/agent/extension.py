"""Where the loop may be extended: plan repair, switched on per source.

The core runs Algorithm 1 as the paper states it. A plan repair extension (its own revision
prompt, goal tracking, prerequisites inserted as steps, steps dropped) answers four
questions the loop asks at fixed points; with none, each has the paper's answer: the draft
is the model's, every step is looked up and revised, and the plan ends with its last step.
The Minecraft sources switch theirs on (repair/crafting.py); `repair` in the context picks
one for any source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.runtime import Runtime

from rat_agent.agent.context import Context
from rat_agent.agent.state import DraftMeta, State, Step
from rat_agent.retrieval.settings import DOMAIN_KEY

if TYPE_CHECKING:
    from rat_agent.providers.call import Call


class Model(Protocol):
    """What an extension may ask of the loop's model."""

    def ask(
        self,
        ctx: Context,
        call: Call,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None = None,
    ) -> str: ...

    def constrained(self, ctx: Context) -> bool: ...


class Drafted(NamedTuple):
    drafts: list[str]  # the draft steps the loop walks
    goal: str = ""  # what the task asks for, where the extension tracks it
    meta: Sequence[DraftMeta] = ()  # the extension's notes on each draft step


class Lookup(NamedTuple):
    """How the loop looks up the current step."""

    skip: str = ""  # why the step is dropped unchecked; "" to check it
    query: str | None = None  # the step's own query, with no model call
    reuse: int | None = None  # the earlier step it is written from (`written`)
    # the revision it is written from, with no retrieval and no call: an earlier step's
    # (`reuse`), or its own, made before its prerequisites were inserted
    written: Step | None = None
    target: str = ""  # the text passages are chosen for, besides the query ("": the draft)


@runtime_checkable
class PlanRepair(Protocol):
    def draft(
        self, model: Model, ctx: Context, question: str, write: Callable[[], list[str]]
    ) -> Drafted:
        """The plan to walk: `write()` is the model's own draft (one call)."""
        ...

    def lookup(self, state: State, ctx: Context) -> Lookup: ...

    def revise(
        self,
        model: Model,
        state: State,
        runtime: Runtime[Context],
        step: Step,
        steps: list[Step],
        lookup: Lookup,
    ) -> dict[str, Any] | None:
        """Fill `step` (its revision, status, note); or return the update that inserts
        steps before it, which is then checked again after them."""
        ...

    def finish(self, state: State, runtime: Runtime[Context], steps: list[Step]) -> dict[str, Any]:
        """After the last step: an update that appends more steps, or {}."""
        ...


def domain_of(retriever: BaseRetriever | None) -> str:
    """The domain a retriever declares (its metadata's "rat_domain"), or ""."""
    metadata = getattr(retriever, "metadata", None) or {}
    return str(metadata.get(DOMAIN_KEY, ""))


# The built-in extensions, by import path: the core names its extensions as it names a
# user's retriever, and never imports them.
REPAIRS = {
    "minecraft": "rat_agent.repair.crafting:repair",
    "general": "rat_agent.repair.general:repair",
}


def repair_for(ctx: Context, domain: Callable[[], str]) -> PlanRepair | None:
    """The run's plan repair: the source's own by default (`repair` "auto": `domain()` is
    asked then only), none for a source that declares no domain, and none for a baseline."""
    if ctx.repair == "off" or ctx.method != "rat":
        return None
    name = ctx.repair
    if name == "auto":
        name = "minecraft" if domain() == "minecraft" else "off"
    if name == "off":
        return None
    if name not in REPAIRS:
        from rat_agent.providers.imports import check_allowed

        check_allowed(name, "repair")  # before the cache: a loaded one is no pass
    return _load(REPAIRS.get(name, name), name in REPAIRS)


@cache
def _load(path: str, builtin: bool) -> PlanRepair:
    from rat_agent.providers.imports import load

    made: PlanRepair = load(path, PlanRepair, "repair", builtin=builtin)
    return made
