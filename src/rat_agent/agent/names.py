"""Names spelled as the sources spell them.

A small model recalls a setting or flag by its sound and writes `tcp_backlog` where the
documentation says `tcp-backlog`, or `max_memory` for `maxmemory`: a name a reader would
copy and the software would refuse. Where a passage a step was shown spells a name the
same way but for its separators and case, that passage is the evidence for the spelling.
Only joined names change (words joined by "-" or "_", or camelCase); plain words, and
names no passage gives, stay as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# A name the model joined: "tcp_backlog", "TCP-Backlog", "maxMemory"; a flag's leading "--"
# is not part of it, so "--max_memory" becomes "--maxmemory".
_JOINED = re.compile(
    r"(?<!\w)(?<!\w-)[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![\w-])"
    r"|(?<!\w)(?<!\w-)[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*(?![\w-])"
)
# Every name a passage gives, joined or plain ("maxmemory", "tcp-backlog").
_NAME = re.compile(r"(?<!\w)(?<!\w-)[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*(?![\w-])")
MIN_KEY = 5  # keys shorter than this ("a-b", "x_y_z") match by chance


def _key(name: str) -> str:
    return re.sub(r"[-_]", "", name).lower()


def spellings(texts: Iterable[str]) -> dict[str, str]:
    """Each name the texts give, by its key: its most frequent spelling where they differ
    only in case ("Maxmemory" opening a sentence), none where they join it differently."""
    found: dict[str, Counter[str]] = {}
    for text in texts:
        for match in _NAME.finditer(text):
            if len(key := _key(name := match.group())) >= MIN_KEY:
                found.setdefault(key, Counter())[name] += 1
    return {
        key: names.most_common(1)[0][0]
        for key, names in found.items()
        if len({name.lower() for name in names}) == 1
    }


def respell(text: str, known: dict[str, str]) -> tuple[str, list[str]]:
    """`text` with each joined name it writes otherwise than `known` spells it respelled;
    and the changes made ("tcp_backlog -> tcp-backlog")."""
    changes: list[str] = []

    def swap(match: re.Match[str]) -> str:
        name = match.group()
        wanted = known.get(_key(name))
        if wanted is None or wanted == name:
            return name
        if (change := f"{name} -> {wanted}") not in changes:
            changes.append(change)
        return wanted

    return _JOINED.sub(swap, text), changes
