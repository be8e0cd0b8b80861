"""Graph state. Everything a run needs to resume after a crash lives here, checkpointed."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

# Pydantic (Studio's input and output forms) needs typing_extensions.TypedDict before 3.12.
from pydantic import Field
from typing_extensions import TypedDict

from rat_agent.memory.thought import ThoughtNote

# The graph's nodes. Their names are written into every checkpoint (its `next`), so they
# are part of the saved format: graph.py registers them, time travel and the CLI read them.
DRAFT_COT: Final = "draft_cot"
REVIEW_DRAFT: Final = "review_draft"
TO_QUERY: Final = "to_query"
RETRIEVE: Final = "retrieve"
REVISE_STEP: Final = "revise_step"
APPEND_NEXT: Final = "append_next"
WRITE_ANSWER: Final = "write_answer"
REMEMBER: Final = "remember"
DIRECT: Final = "direct"
RETRIEVE_ONCE: Final = "retrieve_once"
ANSWER_ONCE: Final = "answer_once"
REACT: Final = "react"
REPLY: Final = "reply"

# inserted: a prerequisite plan repair added (then checked like any step); dropped: the
# revision found the task does not need the step (`note` says why).
StepStatus = Literal["revised", "unchanged", "not_revised", "inserted", "dropped"]
SourceKind = Literal["document", "thought"]


class Source(TypedDict):
    """A retrieved document as cited in the output."""

    title: str
    source: str  # URL or corpus id; "thought:<id>" for a thought from memory
    snippet: str
    kind: SourceKind  # a thought traces back to its documents: `rat memory show ID`
    text: NotRequired[str]  # what the step was shown of it (its closest passages), cut


class Step(TypedDict):
    """One thought step: its draft, how it was checked, and what it became."""

    draft: str
    query: str
    sources: list[Source]
    revised: str
    status: StepStatus  # not_revised: the draft was kept (no sources, or no usable reply)
    note: str  # why a step was not revised, inserted or dropped; empty otherwise
    fact: NotRequired[str]  # plan repair: the passage its revision quoted
    needs: NotRequired[list[str]]  # plan repair: what the step uses
    makes: NotRequired[str]  # an inserted step: the prerequisite it was inserted for


class DraftMeta(TypedDict):
    """Plan repair's notes on one draft step (`State.meta`, aligned with `drafts`)."""

    makes: str  # an inserted step: the prerequisite it provides; "" for the model's draft
    reason: str  # why it was inserted
    repairs: int  # how many times prerequisites were inserted before it (at most MAX_REPAIRS)
    original: str  # its draft as first written, once repair replaced it by its revision
    drop: str  # why it is dropped unchecked (it comes after the step that reaches the goal)
    chain: list[str]  # what the steps waiting on it make, nearest first: needing one is a loop
    checked: NotRequired[Step]  # its revision before its prerequisites were inserted


# A chat's turns: a chat client's question comes in as the last human message, and every
# run's answer goes out as an AI message citing its sources.
Messages = Annotated[list[AnyMessage], add_messages]


class InputState(TypedDict, total=False):
    question: Annotated[str, Field(description="The task or question, answered step by step.")]
    messages: Annotated[
        Messages,
        Field(description="A chat's turns, for chat clients: the last human message is asked."),
    ]


class OutputState(TypedDict):
    question: str  # a chat's follow-up, as rewritten to stand alone
    answer: str
    steps: list[Step]
    messages: NotRequired[Messages]
    thoughts: NotRequired[list[ThoughtNote]]  # memory on; empty otherwise
    # draft "sourced": the task's passages the draft and the answer were written from (title,
    # source, content), cited before the steps' sources
    passages: NotRequired[list[dict[str, str]]]


class State(OutputState, total=False):
    settings: dict[str, Any]  # the run's context, "auto" resolved: a resumed run goes on alike
    drafts: list[str]  # the draft steps T1..Tn, tail merged to max_steps; repair inserts
    meta: list[DraftMeta]  # plan repair's notes, one per draft step (missing: a plain draft)
    goal: str  # plan repair: what the task asks for, as the model names it
    draft_from: str  # what the draft was written as ("the model's chain of thought", ...)
    index: int  # 0-based number of the step being revised
    query: str  # Qi, for the step being revised
    documents: list[dict[str, str]]  # Ri: title, source, content, for the step being revised
    support: float | None  # how well R_i's best passage matches step i (plan repair)
    retrieval_error: str


# R_i as a revision is shown it: documents and thoughts, the best passage's match, a problem
Found = tuple[list[dict[str, str]], float | None, str]


def revised(steps: list[Step]) -> list[str]:
    """T*_1..i: every checked step the revision kept (dropped steps are not in it)."""
    return [s["revised"] for s in steps if s["status"] != "dropped"]
