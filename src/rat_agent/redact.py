"""Secrets never leave in an error text: every key in the environment, every key registered
at run time, and any password in a URL are masked before a message is printed, logged or
checkpointed (typed errors mask their own message, see errors.py).

Providers echo keys back ("Incorrect API key provided: sk-..."), sometimes transformed, so a
word is masked when it is a key, contains one, is a long piece of one (a cut key), or is the
same as one but for case or a character or two.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from urllib.parse import unquote

MASK = "***"
_MIN = 8  # shorter values are not keys (and masking them would mangle ordinary words)
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?)$", re.I)
# scheme://user:password@host: the password part, however the URL is spelt
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:)(?P<pw>[^\s@/]+)@", re.I)
_WORD = re.compile(r"[A-Za-z0-9_\-+/=.~%]{6,}")

_lock = threading.Lock()
_registered: set[str] = set()


def register(secret: str) -> None:
    """A secret that is not in the environment (a local server's key)."""
    if len(secret) >= _MIN:
        with _lock:
            _registered.add(secret)


def known() -> set[str]:
    """Every secret this process knows of right now (the environment can change)."""
    with _lock:
        found = set(_registered)
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN:
            found.add(value.strip())
        for match in _URL_PASSWORD.finditer(value):
            found.update({match["pw"], unquote(match["pw"])})
    return {s for s in found if len(s) >= _MIN}


def redact(text: str) -> str:
    """`text` with URL passwords and anything resembling a known secret masked."""
    if not text:
        return text
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", text)
    secrets = known()
    if not secrets:
        return text
    lowered = [s.lower() for s in secrets]

    def mask(match: re.Match[str]) -> str:
        word = match.group(0)
        bare = word.lower().strip("._-~/+=%")  # a sentence's full stop is not the key's
        return MASK if any(_resembles(bare, s) for s in lowered) else word

    return _WORD.sub(mask, text)


def _resembles(word: str, secret: str) -> bool:
    if len(word) < _MIN:
        return False
    if secret in word or (len(word) >= max(_MIN, len(secret) // 2) and word in secret):
        return True  # the key itself, inside a longer word, or a long piece of it
    if abs(len(word) - len(secret)) > 3:
        return False
    return difflib.SequenceMatcher(None, word, secret).ratio() >= 0.9  # a character or two off
