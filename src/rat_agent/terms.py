"""The words of a text as search and comparison see them: lower case, no English function
words, plurals folded. The hybrid search's lexical vectors and the core's check that a
quoted passage is about its step read text the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence

# English function words only: this search serves users' own collections and the thought
# memory, where "make", "use" or a product's name may be the word that matters. A domain
# adds its own (the Minecraft corpus drops "minecraft", "obtain", "make" ...).
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "the",
        "to",
        "what",
        "where",
        "which",
        "with",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    """Plural folding is all the stemming item names need ("3 diamonds", "sticks")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def words(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in stopwords]


def unsupported(draft: str, revised: str, documents: Sequence[str]) -> list[str]:
    """The words a revision adds to its draft step that the document bearing most on the
    step does not hold: the one sharing the most words with the draft, the search's first
    on a tie. A revision that rests on its documents adds only their words."""
    old = set(words(draft))
    added = [w for w in dict.fromkeys(words(revised)) if w not in old]
    if not added or not documents:
        return []
    bearing = max(documents, key=lambda text: len(old.intersection(words(text))))
    held = set(words(bearing))
    return [w for w in added if w not in held]
