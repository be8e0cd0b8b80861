"""Who is calling `make serve`, and what they may touch: the LangGraph SDK `Auth` object that
Aegra loads from aegra.json's `auth.path` (LangGraph's own server reads the same format).

A request carries its key as `x-api-key` (what the SDK sends, from `api_key=` or
LANGGRAPH_API_KEY) or `Authorization: Bearer`. The key's user becomes the request's
identity: Aegra stores it as the owner of every thread, run, cron and store item, and
answers 404 for another user's. The handlers below also tag and filter by an `owner`
metadata field, as LangGraph's server expects of an auth file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langgraph_sdk import Auth

from rat_agent.serve.keys import KeyFile, KeyRejected

auth = Auth()
_keys = KeyFile()
# Key checks read a file: in threads of their own, so that runs busy in the event loop's
# shared threads (a slow model, a slow source) never keep a request waiting for its key.
_CHECKS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rat-keys")

_MISSING = "an API key is required: send it as the x-api-key header (LANGGRAPH_API_KEY for the SDK)"


def _header(headers: Mapping[Any, Any], name: str) -> str:
    for key, value in headers.items():
        text = key.decode() if isinstance(key, bytes) else str(key)
        if text.lower() == name:
            return (value.decode() if isinstance(value, bytes) else str(value)).strip()
    return ""


def key_of(headers: Mapping[Any, Any]) -> str:
    """The key a request carries, or ""."""
    key = _header(headers, "x-api-key")
    if not key:
        scheme, _, token = _header(headers, "authorization").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
    return key


async def user_of(headers: Mapping[Any, Any]) -> str:
    """The user whose live key a request carries; KeyRejected (a message naming no part of
    the key) when it carries none, or one that is malformed, unknown or revoked."""
    key = key_of(headers)
    if not key:
        raise KeyRejected(_MISSING)
    return await asyncio.get_running_loop().run_in_executor(_CHECKS, _keys.user_of, key)


@auth.authenticate
async def authenticate(headers: Mapping[Any, Any]) -> Auth.types.MinimalUserDict:
    # Aegra passes the headers positionally, LangGraph's server by the parameter's name.
    try:
        user = await user_of(headers)
    except KeyRejected as exc:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(exc)) from None
    return {"identity": user, "display_name": user, "is_authenticated": True}


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """The graphs are every user's to read and run; an assistant a user makes stays theirs
    (Aegra scopes those by owner)."""
    return None


# The operators a store search's filter may use (langgraph's PostgresStore): any other
# failed the search with a 500.
FILTER_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Aegra puts every store namespace under the caller's identity itself; a search's
    filter may use only the operators the store has (422 otherwise)."""
    found = value.get("filter") if isinstance(value, dict) else None
    for condition in (found or {}).values() if isinstance(found, dict) else ():
        if isinstance(condition, dict):
            for operator in condition:
                if str(operator).startswith("$") and operator not in FILTER_OPERATORS:
                    raise Auth.exceptions.HTTPException(
                        status_code=422,
                        detail=f"the store's filters take {', '.join(sorted(FILTER_OPERATORS))}; "
                        f"not {operator!r}",
                    )
    return None


@auth.on
async def owner(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads, runs and crons: tagged with their owner when made or given new metadata,
    filtered to the caller."""
    if ctx.action in ("create", "update") and isinstance(value, dict):
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            if ctx.action == "update":  # metadata left as it was keeps its owner
                return {"owner": ctx.user.identity}
            metadata = value["metadata"] = {}
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
