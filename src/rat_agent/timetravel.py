"""Time travel over a thread: its checkpoints, and a fork from step k with that step edited.

LangGraph keeps every checkpoint; these helpers find the one just before step k was
checked, so a user can change that draft step and re-run from there while steps 1..k-1,
already revised, are reused rather than recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from rat_agent.agent.state import APPEND_NEXT, REVIEW_DRAFT, REVISE_STEP, TO_QUERY
from rat_agent.errors import ConfigError


@dataclass(frozen=True)
class Checkpoint:
    id: str
    next: tuple[str, ...]  # the nodes that run after it; () once the run finished
    step: int  # thread steps revised when it was taken
    created_at: str | None


def checkpoints(graph: Any, thread: str) -> list[Checkpoint]:
    """The thread's checkpoints, oldest first."""
    snapshots = list(graph.get_state_history({"configurable": {"thread_id": thread}}))
    return [
        Checkpoint(
            str(s.config["configurable"]["checkpoint_id"]),
            tuple(s.next),
            len((s.values or {}).get("steps", [])),
            s.created_at,
        )
        for s in reversed(snapshots)
    ]


def _before_step(graph: Any, thread: str, step: int) -> tuple[StateSnapshot, str]:
    """The checkpoint to branch from, and the node the edit is written as.

    The edit is written as a node whose outgoing edge is plain, so LangGraph need not
    evaluate a routing function (which needs a run's runtime) to know what runs next:
    for step 1, right after the draft (as review_draft: next is to_query); for step k,
    right after step k-1 was revised (as revise_step: next is append_next, which moves
    the index on to step k).
    """
    want_next, want_index, as_node = (
        ((TO_QUERY,), 0, REVIEW_DRAFT) if step == 1 else ((APPEND_NEXT,), step - 2, REVISE_STEP)
    )
    for snapshot in graph.get_state_history({"configurable": {"thread_id": thread}}):
        values = snapshot.values or {}
        # after a plan repair the index stays put: the step k-1 finished is the one counted
        if (
            tuple(snapshot.next) == want_next
            and values.get("index") == want_index
            and len(values.get("steps", [])) == step - 1
        ):
            return snapshot, as_node
    raise ConfigError(f"thread {thread!r} has no checkpoint before step {step}")


def fork(graph: Any, thread: str, step: int, draft: str | None = None) -> RunnableConfig:
    """A new branch of `thread` just before step `step` (1-based), with its draft replaced.

    Run it with `graph.invoke(None, config, context=...)`. The thread's history keeps
    the original branch; the thread's current state becomes the fork.
    """
    latest = graph.get_state({"configurable": {"thread_id": thread}}).values or {}
    if not latest:
        raise ConfigError(f"no run with thread id {thread!r}: see `rat threads`")
    planned = len(latest.get("drafts", []))
    if not 1 <= step <= planned:  # checked first: the history search would only say "none"
        raise ConfigError(f"step must be between 1 and {planned}, got {step}")
    snapshot, as_node = _before_step(graph, thread, step)
    drafts = list(snapshot.values["drafts"])
    if draft is not None:
        if not draft.strip():
            raise ConfigError("the edited step is empty")
        drafts[step - 1] = draft.strip()
    config: RunnableConfig = graph.update_state(
        snapshot.config, {"drafts": drafts}, as_node=as_node
    )
    return config
