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
from typing import Any

from langgraph_sdk import Auth

from rat_agent.errors import ConfigError
from rat_agent.limits import TooLarge, check_context, check_ingest, check_question
from rat_agent.serve.keys import KeyFile, KeyRejected

auth = Auth()
_keys = KeyFile()

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


@auth.authenticate
async def authenticate(headers: Mapping[Any, Any]) -> Auth.types.MinimalUserDict:
    # Aegra passes the headers positionally, LangGraph's server by the parameter's name.
    key = key_of(headers)
    if not key:
        raise Auth.exceptions.HTTPException(status_code=401, detail=_MISSING)
    try:
        user = await asyncio.to_thread(_keys.user_of, key)
    except KeyRejected as exc:  # the message names no part of the key
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(exc)) from None
    return {"identity": user, "display_name": user, "is_authenticated": True}


def check_request(value: Any) -> None:
    """A run's (or cron's, or assistant's) input and context within `limits`: 413 past a
    bound, 422 for what no graph can take, before the server stores or queues anything."""
    if not isinstance(value, dict):
        return
    kwargs = value.get("kwargs")  # LangGraph's server nests a run's fields here; Aegra does not
    fields: dict[str, Any] = kwargs if isinstance(kwargs, dict) else value
    try:
        given = fields.get("input")
        if isinstance(given, dict):
            if isinstance(given.get("question"), str):
                check_question(given["question"])
            if isinstance(given.get("paths"), list):
                check_ingest([str(p) for p in given["paths"]])
        config = fields.get("config")
        configurable = config.get("configurable") if isinstance(config, dict) else None
        for context in (fields.get("context"), configurable):
            if isinstance(context, dict):
                check_context(context)
    except TooLarge as exc:
        raise Auth.exceptions.HTTPException(status_code=413, detail=str(exc)) from None
    except ConfigError as exc:
        raise Auth.exceptions.HTTPException(status_code=422, detail=str(exc)) from None


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """The graphs are every user's to read and run; an assistant a user makes stays theirs
    (Aegra scopes those by owner)."""
    if ctx.action in ("create", "update"):
        check_request(value)
    return None


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Aegra puts every store namespace under the caller's identity itself."""
    return None


@auth.on
async def owner(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads, runs and crons: tagged with their owner when made, filtered to the caller;
    what a run or cron would be given is checked first."""
    if ctx.action in ("create_run", "create", "update"):
        check_request(value)
    if ctx.action == "create" and isinstance(value, dict):
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            metadata = value["metadata"] = {}
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
