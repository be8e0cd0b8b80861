"""A thought and its provenance: plain records, so code that only reads them (the graph's
nodes, `rat show`) loads no Qdrant client."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from langchain_core.documents import Document

# Pydantic (Studio's output form) needs typing_extensions.TypedDict before 3.12.
from typing_extensions import TypedDict

from rat_agent.text import shorten

SOURCE_PREFIX = "thought:"


class ThoughtNote(TypedDict):
    """What became of one thought a run made (memory=true)."""

    text: str
    stored: bool
    reason: str  # "stored", or why not: not confident, unreadable, redundant, memory failed
    id: str  # the stored thought's id; empty when not stored
    step: int | None  # the step it came from; None: the whole answer
    level: float


@dataclass(frozen=True)
class Origin:
    """One source a thought was built from: a document (level 1) or an earlier thought."""

    kind: str  # "document" or "thought"
    source: str  # URL or corpus id; "thought:<id>" for a thought
    title: str
    level: float = 1.0


@dataclass(frozen=True)
class Thought:
    text: str
    question: str
    origins: tuple[Origin, ...]
    level: float
    thread: str = ""
    step: int | None = None  # 1-based step it came from; None: the whole answer
    model: str = ""
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def source(self) -> str:
        return SOURCE_PREFIX + self.id

    @property
    def title(self) -> str:
        where = f"step {self.step} of" if self.step else "the answer to"
        return f"Thought from {where}: {shorten(self.question, 60)}"


def level_of(origins: Sequence[Origin]) -> float:
    """1 + the mean level of the sources (the paper's abstraction level)."""
    return 1.0 + (sum(o.level for o in origins) / len(origins) if origins else 1.0)


def thought_id(source: str) -> str | None:
    return source[len(SOURCE_PREFIX) :] if source.startswith(SOURCE_PREFIX) else None


def as_document(thought: Thought) -> Document:
    """A thought as the retrieve node reads documents: kind, level and provenance in metadata."""
    return Document(
        page_content=thought.text,
        metadata={
            "kind": "thought",
            "title": thought.title,
            "source": thought.source,
            "id": thought.id,
            "level": thought.level,
        },
    )
