"""Who a run is for, when a server with keys runs it (`make serve`): the authenticated user
LangGraph servers put in the run's config. What such a user may reach is narrower than
what the server's owner may: not the server's files, modules or model weights, not other
users' collections or thoughts, and no error they see names a path on the server."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


def served_user(config: RunnableConfig | None) -> str:
    """The authenticated user of a run, or "" (the CLI, an app, an open `langgraph dev`).
    The server sets this field itself on every run, over anything a request sent."""
    user = ((config or {}).get("configurable") or {}).get("langgraph_auth_user")
    if user is None:
        return ""
    fields: dict[str, Any] = (
        user
        if isinstance(user, dict)
        else {n: getattr(user, n, None) for n in ("identity", "is_authenticated")}
    )
    return str(fields.get("identity") or "") if fields.get("is_authenticated") else ""


def current_user() -> str:
    """`served_user` of the run this code runs in; "" outside a run."""
    from langgraph.config import get_config  # lazy: errors.py reaches here on every error

    try:
        return served_user(get_config())
    except RuntimeError:  # not inside a run
        return ""


# What a server checks of a served user before each model call and search (serve/keys.py:
# the user still holds a live key, so a revoked user's cron or queued run stops at its next
# call). The server attaches it when it loads; the loop calls it without knowing the server.
_checks: list[Callable[[str], None]] = []


def attach(check: Callable[[str], None]) -> None:
    """A check every served run's user must pass (it raises to stop the run)."""
    if check not in _checks:
        _checks.append(check)


def check(user: str | None = None) -> None:
    """Run the attached checks on `user`, by default the current run's; none outside one."""
    who = current_user() if user is None else user
    if who:
        for attached in list(_checks):
            attached(who)


def own_collection(name: str, user: str) -> str:
    """`name` for `user` alone: readable, and distinct for users whose names differ only in
    the characters a collection name cannot hold. Whose it is, is recorded in the
    collection itself (retrieval/qdrant/client.py, `owner_of`); the name only keeps users apart."""
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", user)[:32]
    return f"{name}--{slug}-{hashlib.sha256(user.encode()).hexdigest()[:8]}"


# An absolute path: a "/" that does not follow a word, a dot or another slash (so neither
# "and/or" nor a URL's "//host/path" matches), and the path's characters after it.
_PATH = re.compile(r"(?<![\w./:~-])/[\w.@+~-]+(?:/[\w.@+~-]*)*")
HIDDEN_PATH = "<server path>"


def scrub(text: str) -> str:
    """`text` as a served user may see it: every absolute path masked. Outside a served run
    it is unchanged, since there the user owns the machine."""
    if not text or "/" not in text or not current_user():
        return text
    return _PATH.sub(HIDDEN_PATH, text)
