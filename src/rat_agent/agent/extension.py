"""Where the loop may be extended: plan repair, switched on per source.

The core runs Algorithm 1 as the paper states it. A plan repair extension (its own revision
prompt, goal tracking, prerequisites inserted as steps, steps dropped) answers four
questions the loop asks at fixed points; with none, each has the paper's answer: the draft
is the model's, every step is looked up and revised, and the plan ends with its last step.
A domain plug-in registers its repair under its domain's name (rat_agent.plugins), and a
source that declares that domain switches it on; `repair` in the context picks one for any
source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from langchain_core.retrievers import BaseRetriever
from langgraph.runtime import Runtime

from rat_agent import plugins
from rat_agent.agent.context import Context
from rat_agent.agent.state import DraftMeta, State, Step
from rat_agent.errors import ConfigError
from rat_agent.retrieval.settings import DOMAIN_KEY
from rat_agent.services import Services

# What an extension may ask of the loop: its model calls and what the model's profile
# allows (`ask`, `constrained`, `prefills`), as services.py gives every node.
Model = Services


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


def repairs() -> list[str]:
    """Every plan repair a run may name: the installed plug-ins' (entry points)."""
    return sorted(plugins.installed(plugins.REPAIRS))


def resolve_repair(name: str, method: str, domain: Callable[[], str]) -> str:
    """The run's plan repair by name, "off" for none: "auto" is the one registered under
    the domain the source declares (`domain()`, asked then only); a baseline has none."""
    if method != "rat":
        return "off"
    if name == "auto":
        declared = domain()
        return declared if declared and declared in repairs() else "off"
    if name != "off" and name not in repairs() and ":" not in name:
        raise ConfigError(
            f"unknown repair {name!r}: choose one of auto, off, {', '.join(repairs())}, "
            "or give your own as 'package.module:attribute'"
        )
    return name


def repair_for(ctx: Context) -> PlanRepair | None:
    """The plan repair of a run whose `repair` is resolved (RatNodes.resolve); None: off."""
    name = ctx.repair
    if name in ("off", "auto") or ctx.method != "rat":
        return None
    if name not in repairs():
        from rat_agent.providers.imports import check_allowed

        check_allowed(name, "repair")  # before the cache: a loaded one is no pass
    return _load(name)


def repair_loaded(ctx: Context) -> bool:
    """Whether the run's plan repair needs no loading (none, or loaded already)."""
    return ctx.repair in ("off", "auto") or ctx.method != "rat" or ctx.repair in _loaded


# Plan repairs loaded, by name: loading imports a module, which blocks, so the graph loads
# one off the event loop first (RatNodes.settled) and reads it here after.
_loaded: dict[str, PlanRepair] = {}


def forget() -> None:
    """Load plan repairs afresh (after plug-ins are installed or removed)."""
    _loaded.clear()


def _load(name: str) -> PlanRepair:
    from rat_agent.providers.imports import load

    if name not in _loaded:
        # installed code is trusted as rat-agent's own; a path a run names is checked
        known = {n: p.value for n, p in plugins.installed(plugins.REPAIRS).items()}
        _loaded[name] = load(known.get(name, name), PlanRepair, "repair", builtin=name in known)
    return _loaded[name]
