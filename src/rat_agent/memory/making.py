"""Thought making: a finished run becomes thoughts, stored only if confident and novel.

The candidates are the whole answer and each step that was checked against sources
(remember.MEMORY_FROM): RAT's revised steps are exactly the checked, reusable
conclusions the Thought-Retriever paper builds its memory from. A run with no sources
makes no thoughts: an unsupported answer is what the memory must not learn.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from rat_agent import parsing
from rat_agent.errors import RatError
from rat_agent.memory.thought import Origin, Thought, ThoughtNote, level_of, thought_id

if TYPE_CHECKING:
    from rat_agent.memory.store import Memory


@dataclass(frozen=True)
class Candidate:
    question: str
    answer: str
    origins: tuple[Origin, ...]
    step: int | None  # None: the whole answer


def candidates(
    question: str,
    steps: Sequence[Mapping[str, Any]],
    answer: str,
    scope: str,
    levels: dict[str, float],
) -> list[Candidate]:
    """What the model is asked to turn into thoughts, from a run's checked steps (the
    graph's `Step`s) and its answer; `levels` maps thought ids to levels."""
    found: list[Candidate] = []
    if scope in ("steps", "both"):
        for n, step in enumerate(steps, 1):
            if step["sources"] and step["status"] not in ("not_revised", "dropped"):
                origins = _origins(step["sources"], levels)
                found.append(
                    Candidate(f"{question.strip()} (step {n})", step["revised"], origins, n)
                )
    if scope in ("answer", "both"):
        everything = [
            s
            for step in steps
            if step["status"] not in ("not_revised", "dropped")
            for s in step["sources"]
        ]
        if everything and parsing.says_something(answer):
            found.append(Candidate(question.strip(), answer, _origins(everything, levels), None))
    return found


def store(
    memory: Memory,
    made: Sequence[tuple[Candidate, str | None]],
    *,
    novelty: float,
    nearest_documents: Callable[[str], list[Document]],
    thread: str,
    model: str,
) -> list[ThoughtNote]:
    """Parse each reply (None: the call failed), then keep it only if novel enough.

    Novel means below `novelty` cosine similarity to every stored thought (the nearest one
    in the collection) and to every raw chunk (the knowledge source's nearest documents to
    the thought). Thoughts are stored one by one, so two alike from one run keep one.
    """
    notes: list[ThoughtNote] = []
    for candidate, reply in made:
        verdict, text = parsing.parse_thought(reply) if reply is not None else ("unreadable", "")
        note: ThoughtNote = {
            "text": text,
            "stored": False,
            "reason": "",
            "id": "",
            "step": candidate.step,
            "level": level_of(candidate.origins),
        }
        if reply is None:
            note["reason"] = "the model call failed"
        elif verdict != "confident":
            note["reason"] = verdict if verdict == "not confident" else "unreadable reply"
        else:
            try:
                note["id"], note["reason"] = _keep(
                    memory,
                    candidate,
                    text,
                    novelty=novelty,
                    nearest_documents=nearest_documents,
                    thread=thread,
                    model=model,
                )
                note["stored"] = bool(note["id"])
            except RatError as exc:  # the answer stands; this thought is lost, and says why
                note["reason"] = f"memory failed: {exc}"
        notes.append(note)
    return notes


def _keep(
    memory: Memory,
    candidate: Candidate,
    text: str,
    *,
    novelty: float,
    nearest_documents: Callable[[str], list[Document]],
    thread: str,
    model: str,
) -> tuple[str, str]:
    """(the stored thought's id, "stored"), or ("", why it was not stored)."""
    # The id is a function of where the thought came from, so a replayed or resumed
    # `remember` finds its own thought again instead of calling it redundant.
    ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"rat-thought:{thread}:{candidate.step}:{text}"))
    from rat_agent.memory.store import embed  # lazy: the graph loads no Qdrant client

    documents = [d.page_content for d in nearest_documents(text) if d.page_content.strip()]
    vector, *doc_vectors = embed([text, *documents])
    similar, stored = memory.nearest(vector)
    if stored is not None and stored.id == ident:
        return ident, "stored"
    if similar >= novelty and stored is not None:
        return "", f"redundant: {similar:.2f} similar to thought {stored.id[:8]}"
    for doc, doc_vector in zip(documents, doc_vectors, strict=True):
        cosine = sum(a * b for a, b in zip(vector, doc_vector, strict=True))  # normalized
        if cosine >= novelty:
            return "", (
                f"redundant: {cosine:.2f} similar to a document ({' '.join(doc.split())[:40]}…)"
            )
    thought = Thought(
        text=text,
        question=candidate.question,
        origins=candidate.origins,
        level=level_of(candidate.origins),
        thread=thread,
        step=candidate.step,
        model=model,
        id=ident,
    )
    memory.add(thought, vector)
    return thought.id, "stored"


def _origins(sources: Sequence[Mapping[str, Any]], levels: dict[str, float]) -> tuple[Origin, ...]:
    seen: dict[str, Origin] = {}
    for source in sources:
        key = source["source"] or source["title"]
        if key in seen:
            continue
        kind = source.get("kind", "document")
        ident = thought_id(source["source"]) if kind == "thought" else None
        # a thought forgotten since it was retrieved counts as the lowest thought level
        level = levels.get(ident, 2.0) if ident else 1.0
        seen[key] = Origin(kind=kind, source=source["source"], title=source["title"], level=level)
    return tuple(seen.values())
