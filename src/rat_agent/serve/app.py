"""The HTTP app `make serve` gives Aegra (aegra.json's `http.app`): Aegra adds its routes and
middleware to it, so what this app adds stands in front of every request.

- A request body is at most `limits.REQUEST_BYTES` (413), and what it would give a run (a
  question, an ingest list, a context) is within `limits` (413), on every route that starts
  one: Aegra's event-streaming commands call no auth handler.
- A body must be JSON that PostgreSQL stores and the server can write back: no NaN or
  infinity (1e999 included), no number past 64 bits, no lone surrogate, no NUL character,
  nested at most `limits.JSON_DEPTH` levels (422); the ids, keys and numbers in a path or
  query too. Aegra writes them to the database before any graph
  runs, and such a value made that write, and the request, fail with a 500.
- The nodes that still run sync (review, react, a plug-in's hooks) take a thread of the
  event loop's pool: the pool holds one for every run the worker takes at once.
- No pages that load anything from outside the machine (FastAPI's /docs and /redoc).
- A clash on a unique index (an assistant updated to the very context another of the
  user's assistants has) is a 409 Conflict, and a store namespace the store refuses a 422,
  not a 500 (the auth handler refuses store filter operators the store lacks).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import os
import re
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from langgraph.store.base import InvalidNamespaceError
from sqlalchemy.exc import IntegrityError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rat_agent.errors import ConfigError
from rat_agent.limits import JSON_DEPTH, REQUEST_BYTES, TooLarge, check_payload
from rat_agent.serve.stored import cut_deep_values

log = logging.getLogger(__name__)

_WITH_BODY = {"POST", "PUT", "PATCH", "DELETE"}  # Aegra's store deletes take a body
_ERRORS = {409: "conflict", 413: "payload_too_large", 422: "validation_error"}


def error_body(status: int, message: str) -> dict[str, Any]:
    """Aegra's error shape (Agent Protocol), which the LangGraph SDK shows."""
    return {"error": _ERRORS.get(status, "bad_request"), "message": message, "details": None}


class _NotJSONable(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotJSONable(f"the request holds {name}, which JSON does not allow")


# What a run may be set to (PATCH .../runs/{id}); Aegra answered any other with a 500.
RUN_STATUSES = ("pending", "running", "error", "success", "timeout", "interrupted")
_RUN = re.compile(r"^/threads/[^/]+/runs/[^/]+/?$")
_STATE = re.compile(r"^/threads/[^/]+/state/?$")


@functools.cache
def node_names() -> frozenset[str]:
    """The nodes of the served graphs: a state update names one (`as_node`, or the first
    part of a subgraph's `checkpoint_ns`); LangGraph refuses any other with an error that
    Aegra answered as a 500."""
    from rat_agent.agent.graph import graph
    from rat_agent.ingest.graph import graph as ingest

    return frozenset(graph.nodes) | frozenset(ingest.nodes)


def _state_problem(update: dict[str, Any]) -> str:
    as_node, namespace = update.get("as_node"), update.get("checkpoint_ns")
    if as_node is not None and (not isinstance(as_node, str) or as_node not in node_names()):
        return f"as_node names no node of the served graphs: {as_node!r}"
    if namespace and re.split(r"[:|]", str(namespace))[0] not in node_names():
        return f"checkpoint_ns names no subgraph of the served graphs: {namespace!r}"
    return ""


def _refusal(body: bytes, method: str = "POST", path: str = "") -> tuple[int, str] | None:
    """Why this body is refused, as a status and a message, or None (also for a body that
    is not JSON at all: the route answers that itself)."""
    try:
        value = json.loads(body, parse_constant=_reject_constant)
    except _NotJSONable as exc:
        return 422, str(exc)
    except RecursionError:
        return 422, "the request's JSON is nested too deeply"
    except ValueError:
        return None
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list) and depth > JSON_DEPTH:
            return 422, f"the request's JSON is nested more than {JSON_DEPTH} levels deep"
        if isinstance(item, dict):
            pending.extend((key, depth) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
        elif isinstance(item, float) and not math.isfinite(item):
            return 422, "the request holds a number too large for JSON (it reads as infinity)"
        elif isinstance(item, int) and not -_INT64 <= item < _INT64:
            return 422, "the request holds a number past 64 bits, which no column holds"
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return 422, "the request holds text that is not valid Unicode (a lone surrogate)"
            if "\0" in item:
                return 422, "the request holds a NUL character (\\u0000), which text cannot hold"
    run = method == "PATCH" and _RUN.match(path) and isinstance(value, dict)
    if run and (status := value.get("status")) not in RUN_STATUSES:
        return 422, f"a run's status is one of {', '.join(RUN_STATUSES)}; not {status!r}"
    state = method == "POST" and _STATE.match(path) and isinstance(value, dict)
    if state and (problem := _state_problem(value)):
        return 422, problem
    # on every route that starts a run: v1, v2 commands, crons, and any list of them
    for payload in value if isinstance(value, list) else [value]:
        if not isinstance(payload, dict):
            continue
        try:
            check_payload(payload)
        except TooLarge as exc:
            return 413, str(exc)
        except ConfigError as exc:
            return 422, str(exc)
    return None


_INT64 = 1 << 63  # offsets and limits are bound to PostgreSQL's bigint


def _address_problem(scope: Scope) -> str:
    """Why the path or query cannot be stored or looked up as text, or "": the ids, keys,
    offsets and limits in them reach PostgreSQL too."""
    for part in (
        scope.get("raw_path") or scope.get("path", "").encode(),
        scope.get("query_string", b""),
    ):
        raw = unquote_to_bytes(part)
        if b"\0" in raw:
            return "the address holds a NUL character, which text cannot hold"
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return "the address holds bytes that are not UTF-8 text"
    query = unquote_to_bytes(scope.get("query_string", b"")).decode()
    for _, value in parse_qsl(query):
        if value.lstrip("+-").isdigit() and not -_INT64 <= int(value) < _INT64:
            return "the address holds a number past 64 bits, which no column holds"
    return ""


class RequestGuard:
    """Reads a request's body once (up to the bound), checks it, and hands it on."""

    def __init__(self, app: ASGIApp, max_bytes: int = REQUEST_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if problem := _address_problem(scope):  # ids and keys in the path or the query
            await _answer(send, 422, problem)
            return
        if scope.get("method") not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        too_large = f"the request is larger than {self.max_bytes:,} bytes"
        length = dict(scope.get("headers") or []).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            await _answer(send, 413, too_large)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await _answer(send, 413, too_large)
                return
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body and (refused := _refusal(body, scope["method"], scope.get("path", ""))):
            await _answer(send, *refused)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # a disconnect, for a streaming route
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _answer(send: Send, status: int, message: str) -> None:
    response = JSONResponse(error_body(status, message), status_code=status)
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body})


def run_threads() -> int:
    """Threads for the runs one worker takes at once (Aegra's WORKER_COUNT consumers of
    N_JOBS_PER_WORKER runs each), and as many again for what else needs one."""
    jobs = int(os.environ.get("WORKER_COUNT", "3")) * int(os.environ.get("N_JOBS_PER_WORKER", "10"))
    return 2 * jobs + 8


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    # LangGraph runs each sync node in the event loop's default executor, which Python sizes
    # to the cores plus 4 (6 threads on 2 cores): one user's six slow runs held every
    # thread, and every other user's runs and the health check waited. A thread for every
    # run slot: a user must then hold all of a worker's run slots to keep others waiting
    # (Aegra has no per-user limit on runs).
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=run_threads(), thread_name_prefix="rat-run")
    )
    if url := os.environ.get("DATABASE_URL"):
        try:
            await asyncio.to_thread(cut_deep_values, url)
        except Exception:  # a pass over old rows must not keep the server from starting
            log.exception("the pass over values nested past the depth bound failed")
    yield


# No /docs or /redoc pages: FastAPI's load their scripts and fonts from a CDN, on the origin
# that serves the page and its key. The API's description stays at /openapi.json.
app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None)
app.add_middleware(RequestGuard)


@app.exception_handler(InvalidNamespaceError)
async def bad_namespace(_request: Request, exc: InvalidNamespaceError) -> JSONResponse:
    """A store namespace the store refuses (a label with a period, say): the caller's."""
    return JSONResponse(error_body(422, str(exc)), status_code=422)


@app.exception_handler(IntegrityError)
async def conflict(_request: Request, _exc: IntegrityError) -> JSONResponse:
    """The database refused a duplicate: the request's change was not made."""
    return JSONResponse(
        error_body(
            409,
            "that would duplicate one of yours (an assistant with the same graph and context, say)",
        ),
        status_code=409,
    )
