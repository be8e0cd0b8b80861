"""The model's own answer as the draft (`draft` "answer"): its parts, and the answer put
back together from their revisions.

The paper drafts either thoughts or "the draft response itself". Here the draft is the
reply the model gives when asked directly, so a run whose revisions find nothing to change
returns exactly that reply: RAT starts from what the model alone would say and changes a
part only on evidence. A part is a paragraph, one item of a list, or a fenced code block;
the list markers, headings, lead-ins ("Follow these steps:") and blank lines between them
stay as the model wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rat_agent.agent.parsing import (
    BULLET_MARKER,
    HEADING_MARKER,
    NUMBER_MARKER,
    STEP_MARKER,
    says_something,
)

_FENCE = re.compile(r"^\s*```")
_MARKERS = (STEP_MARKER, NUMBER_MARKER, BULLET_MARKER)


class Part(NamedTuple):
    start: int  # where the part's text begins in the reply
    end: int
    code: bool  # a fenced code block, fences included

    def text(self, reply: str) -> str:
        return reply[self.start : self.end]


def parts(reply: str, limit: int) -> list[Part]:
    """The revisable parts of a reply, in order, at most `limit` (the ones past it join the
    last: a part then spans from its start to the end of the last)."""
    found: list[Part] = []
    offset = 0
    block: list[tuple[int, str]] = []  # the lines of the paragraph or list being read

    def close() -> None:
        found.extend(_block_parts(block))
        block.clear()

    lines = reply.splitlines(keepends=True)
    n = 0
    while n < len(lines):
        line = lines[n]
        if _FENCE.match(line):
            close()
            end = next((j for j in range(n + 1, len(lines)) if _FENCE.match(lines[j])), None)
            stop = len(lines) - 1 if end is None else end
            length = sum(len(x) for x in lines[n : stop + 1])
            text = reply[offset : offset + length].rstrip("\n")
            found.append(Part(offset, offset + len(text), True))
            offset += length
            n = stop + 1
            continue
        if not line.strip():
            close()
        else:
            block.append((offset, line))
        offset += len(line)
        n += 1
    close()
    found = [p for p in found if says_something(p.text(reply))]
    if len(found) > limit > 0:
        tail = found[limit - 1 :]
        found[limit - 1 :] = [Part(tail[0].start, tail[-1].end, any(p.code for p in tail))]
    return found


def _block_parts(block: Sequence[tuple[int, str]]) -> list[Part]:
    """A paragraph is one part; a list is one part per item (its marker left out), the
    lines under an item being part of it. A heading, or a lead-in line ending in ':', is
    layout, not a part."""
    items: list[list[tuple[int, str]]] = []
    for start, line in block:
        marker = next((m for m in _MARKERS if m.match(line)), None)
        if marker is not None or not items:
            items.append([])
        if marker is not None:
            skip = marker.match(line).end()  # type: ignore[union-attr]
            start, line = start + skip, line[skip:]
        items[-1].append((start, line))
    result = []
    for item in items:
        first_start, first = item[0]
        if len(item) == 1 and (HEADING_MARKER.match(first) or first.rstrip().endswith(":")):
            continue
        if HEADING_MARKER.match(first):  # a heading over a paragraph: the paragraph is the part
            item = item[1:]
            first_start, first = item[0]
        last_start, last = item[-1]
        result.append(Part(first_start, last_start + len(last.rstrip()), False))
    return result


def assemble(reply: str, found: Sequence[Part], texts: Sequence[str]) -> str:
    """The reply with each part replaced by its text (its revision, or itself)."""
    out, at = [], 0
    for part, text in zip(found, texts, strict=True):
        out.append(reply[at : part.start])
        out.append(text)
        at = part.end
    out.append(reply[at:])
    return "".join(out)
