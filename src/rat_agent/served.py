"""Who a run is for, when a server with keys runs it (`make serve`): the authenticated user
LangGraph servers put in the run's config. What such a user may reach is narrower than
what the server's owner may: not the server's files, not other users' thoughts."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from langchain_core.runnables import RunnableConfig


def served_user(config: RunnableConfig | None) -> str:
    """The authenticated user of a run, or "" (the CLI, an app, an open `langgraph dev`)."""
    user = ((config or {}).get("configurable") or {}).get("langgraph_auth_user")
    if user is None:
        return ""
    fields: dict[str, Any] = (
        user
        if isinstance(user, dict)
        else {n: getattr(user, n, None) for n in ("identity", "is_authenticated")}
    )
    return str(fields.get("identity") or "") if fields.get("is_authenticated") else ""


def own_collection(name: str, user: str) -> str:
    """`name` for `user` alone: readable, and distinct for users whose names differ only in
    the characters a collection name cannot hold."""
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", user)[:32]
    return f"{name}--{slug}-{hashlib.sha256(user.encode()).hexdigest()[:8]}"
