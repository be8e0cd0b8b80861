"""Graph state. Everything a run needs to resume after a crash lives here, checkpointed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

# Pydantic (Studio's input and output forms) needs typing_extensions.TypedDict before 3.12.
from pydantic import Field
from typing_extensions import TypedDict

StepStatus = Literal["revised", "unchanged", "not_revised"]


class Source(TypedDict):
    """A retrieved document as cited in the output."""

    title: str
    source: str  # URL or corpus id
    snippet: str


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


class OutputState(TypedDict):
    question: str
    answer: str
    steps: list[Step]


class State(OutputState, total=False):
    settings: dict[str, Any]  # the run's context, so a resumed or replayed run uses the same
    drafts: list[str]  # the draft steps T1..Tn, tail merged to max_steps
    index: int  # 0-based number of the step being revised
    query: str  # Qi, for the step being revised
    documents: list[dict[str, str]]  # Ri: title, source, content, for the step being revised
    retrieval_error: str
