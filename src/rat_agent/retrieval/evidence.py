"""Focused evidence: of the documents retrieved for a step, the passages closest to it.

A document cut to its first characters can lose the one line that decides a step, and k
whole documents bury it among lines that don't. So each document is cut into passages
(its lines; a long line into sentences), every passage is scored by embedding cosine
against the step's query and its draft, and the best passages are kept, within a token
budget, under their document's title and source. Every method that retrieves reads its
documents through this, so the comparison between methods stays fair.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from rat_agent.retrieval.web.passages import CHARS_PER_TOKEN

Document = dict[str, str]

PASSAGE_CHARS = 400  # a longer line is cut into sentences, then packed up to this
MIN_WORDS = 2  # one word ("Uses", a bare title) says nothing on its own; "maxmemory <bytes>" does
LINE_PENALTY_MAX = 5  # a source's position penalty counts at most this many lines down
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)")
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\d{1,3}[.)])\s+")
_COMMENT = re.compile(r"^\s*(?:#+|//+|;+)(?=\s|$)")
_BANNER = re.compile(r"^(?:[#=*~-]{3,}\s*)?(.*?)\s*[#=*~-]{3,}$")  # "#### MEMORY ####", "===="
_CACHE_SIZE = 4096
_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_lock = threading.Lock()


def passages(text: str) -> list[tuple[str, str]]:
    """A document's passages as (heading, passage): its paragraphs, each a list item or the
    lines that wrap one run of text, without list or comment markers.

    A line ending in ':' ("How to obtain Chest:"), or set between rules ("#### MEMORY
    ####"), is a heading: not a passage itself, but the context of the lines under it when
    they are scored. A blank line, a list item or a
    heading ends a paragraph; a comment marker opening a line ("# " in a configuration
    file) is taken for indentation, so a commented paragraph reads as one passage.
    """
    found: dict[str, str] = {}  # a passage repeated in a page is shown once
    heading = ""
    paragraph: list[str] = []

    def close() -> None:
        if paragraph:
            _add(" ".join(paragraph), heading, found)
            paragraph.clear()

    for raw in text.splitlines():
        uncommented = _COMMENT.sub("", raw, count=1)
        item = _BULLET.match(uncommented) is not None
        line = " ".join(_BULLET.sub("", uncommented).split())
        banner = _BANNER.match(line)
        if not line:
            close()
        elif banner or (line.endswith(":") and len(line) < 120):
            close()
            heading = banner.group(1) if banner else line
        else:
            if item:
                close()
            paragraph.append(line)
    close()
    return [(heading, line) for line, heading in found.items()]


def _add(text: str, heading: str, found: dict[str, str]) -> None:
    """A paragraph as passages: whole up to PASSAGE_CHARS, else cut at sentences."""
    if sum(1 for word in text.split() if any(c.isalnum() for c in word)) < MIN_WORDS:
        return
    if len(text) <= PASSAGE_CHARS:
        found.setdefault(text, heading)
        return
    chunk = ""
    for sentence in _SENTENCE.split(text):
        if chunk and len(chunk) + 1 + len(sentence) > PASSAGE_CHARS:
            found.setdefault(chunk, heading)
            chunk = ""
        chunk = f"{chunk} {sentence}".strip()
    if chunk:
        found.setdefault(chunk[: PASSAGE_CHARS * 2], heading)


def tokens(text: str) -> int:
    """An estimate, not the chat model's count: the budget is a size, not a hard limit, and
    the chat model's tokenizer may live on a remote server."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _vectors(texts: Sequence[str]) -> np.ndarray:
    """Embeddings, cached: the same pages come back step after step."""
    from rat_agent.providers.embeddings import get_embeddings

    with _lock:
        known = {t: _cache[t] for t in texts if t in _cache}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        for text, vector in zip(missing, get_embeddings().embed_documents(missing), strict=True):
            known[text] = np.asarray(vector, dtype=np.float32)
        with _lock:
            for text in missing:
                _cache[text] = known[text]
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return np.stack([known[t] for t in texts])


class Evidence(NamedTuple):
    documents: list[Document]
    support: float | None  # the best passage's cosine to the targets; None: nothing to score


def select(
    documents: Sequence[Document], targets: Sequence[str], budget: int, penalty: float = 0.0
) -> Evidence:
    """The documents, each cut down to its passages closest to `targets` (the step's query
    and draft), best first across all documents until `budget` tokens are used.

    `support` says how well the best passage matches: a step no passage comes close to is
    one the sources say nothing about.

    A kept document shows its passages best first: a small model tends to take the first
    line it sees as the one that matters. Its "passages" field holds each passage's rank
    among all kept ones (0: the best match), so a revision can be held to the best few.
    A document with no passage kept is left out, and documents stay in the retriever's
    order. Thoughts from memory are one passage each.

    A source whose pages put their main facts first may declare a `penalty`: the cosine a
    passage gives up per place its document is lower in the retrieval, and per line further
    down its document (at most LINE_PENALTY_MAX lines).
    """
    header = [tokens(f"[{n}] {d['title']} ({d['source']})\n") for n, d in enumerate(documents, 1)]
    candidates: list[tuple[int, int, str]] = []  # (document, position, passage)
    keyed: list[str] = []  # what is embedded: the passage in its context
    for n, doc in enumerate(documents):
        title = doc["title"]
        pieces = (
            [("", " ".join(doc["content"].split()))]
            if doc.get("kind") == "thought"
            else passages(doc["content"])
        )
        for position, (heading, text) in enumerate(pieces):
            if text.lower() != title.lower():
                candidates.append((n, position, text))
                keyed.append(f"{heading or title}: {text}")
    targets = [t for t in targets if t.strip()]
    if not candidates or not targets:
        return Evidence([], None)
    rank = np.asarray([n for n, _, _ in candidates], dtype=np.float32)
    line = np.asarray([p for _, p, _ in candidates], dtype=np.float32)
    similarity = _vectors(keyed) @ _vectors(targets).mean(axis=0)
    scores = similarity - penalty * (rank + np.minimum(line, LINE_PENALTY_MAX))
    chosen: dict[int, list[tuple[str, int]]] = {}  # document -> (passage, rank overall)
    used = 0
    for i in np.argsort(-scores, kind="stable"):
        n, _, text = candidates[int(i)]
        cost = tokens(text) + 1 + (0 if n in chosen else header[n])
        if used + cost > budget and chosen:
            continue  # a shorter passage further down may still fit
        chosen.setdefault(n, []).append((text, sum(len(v) for v in chosen.values())))
        used += cost
    kept = [
        {
            **documents[n],
            "content": "\n".join(text for text, _ in chosen[n]),
            "passages": ",".join(str(rank) for _, rank in chosen[n]),
        }
        for n in sorted(chosen)
    ]
    return Evidence(kept, float(np.max(similarity)))
