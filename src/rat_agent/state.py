"""Graph state. Everything a run needs to resume after a crash lives here, checkpointed."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

# Pydantic (Studio's input and output forms) needs typing_extensions.TypedDict before 3.12.
from pydantic import Field
from typing_extensions import TypedDict

StepStatus = Literal["revised", "unchanged", "not_revised"]
SourceKind = Literal["document", "thought"]


class Source(TypedDict):
    """A retrieved document as cited in the output."""

    title: str
    source: str  # URL or corpus id; "thought:<id>" for a thought from memory
    snippet: str
    kind: SourceKind  # a thought traces back to its documents: `rat memory show ID`


class Step(TypedDict):
    """One thought step: its draft, how it was checked, and what it became."""

    draft: str
    query: str
    sources: list[Source]
    revised: str
    status: StepStatus  # not_revised: the draft was kept (no sources, or no usable reply)
    note: str  # why a step was not revised; empty otherwise


class InputState(TypedDict):
    question: Annotated[str, Field(description="The task or question, answered step by step.")]


class ThoughtNote(TypedDict):
    """What became of one thought this run made (memory=true)."""

    text: str
    stored: bool
    reason: str  # "stored", or why not: not confident, unreadable, redundant, memory failed
    id: str  # the stored thought's id; empty when not stored
    step: int | None  # the step it came from; None: the whole answer
    level: float


class OutputState(TypedDict):
    question: str
    answer: str
    steps: list[Step]
    thoughts: NotRequired[list[ThoughtNote]]  # memory=true; empty otherwise


class State(OutputState, total=False):
    settings: dict[str, Any]  # the run's context, so a resumed or replayed run uses the same
    drafts: list[str]  # the draft steps T1..Tn, tail merged to max_steps
    index: int  # 0-based number of the step being revised
    query: str  # Qi, for the step being revised
    documents: list[dict[str, str]]  # Ri: title, source, content, for the step being revised
    retrieval_error: str
