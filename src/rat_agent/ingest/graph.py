"""`rat ingest` as a graph, so `langgraph dev`, Studio and the SDK can fill collections too."""

from __future__ import annotations

import asyncio
import contextvars
import os
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field
from typing_extensions import TypedDict

from rat_agent.errors import ConfigError
from rat_agent.limits import check_ingest
from rat_agent.retrieval.settings import DEFAULT_COLLECTION, check_collection_name
from rat_agent.served import check as check_user
from rat_agent.served import own_collection, served_user

if TYPE_CHECKING:
    from rat_agent.ingest.pipeline import Report


class IngestInput(TypedDict):
    paths: Annotated[list[str], Field(description="Files, folders or http(s) URLs.")]
    collection: Annotated[str, Field(description="Qdrant collection to fill.")]


class IngestOutput(TypedDict):
    collection: str
    sources: int
    unchanged: int
    added: int
    kept: int
    removed: int
    failed: list[list[str]]  # [item, reason]


class IngestState(IngestInput, IngestOutput, total=False):
    pass


ON_SERVER = "a path on the server: its users ingest http(s) URLs only"

# An ingest fetches pages its user names, which may answer slowly on purpose (each within
# the fetcher's time limit, up to limits.INGEST_ITEMS of them): ingests run in a pool of
# their own, one at a time per user, so they never hold the threads that the server's
# runs, key checks and health checks share, nor every ingest slot.
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rat-ingest")
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


async def _in_turn(user: str, work: Callable[[], Report]) -> Report:
    loop = asyncio.get_running_loop()
    turn = _turns.setdefault(loop, {}).setdefault(user, asyncio.Lock())
    async with turn:  # the run's context (its user) goes with the work to the pool
        return await loop.run_in_executor(_POOL, contextvars.copy_context().run, work)


async def ingest_node(state: IngestState, config: RunnableConfig) -> dict[str, Any]:
    """Reading, embedding and embedded Qdrant all block: off the server's event loop, in
    the ingests' own pool.

    A served user fills a collection of their own (named for them, recorded as theirs),
    from http(s) URLs only: never the server's files, nor a collection of the operator's
    or another user's."""
    from rat_agent.ingest.pipeline import ingest  # lazy: it loads Qdrant and the embedder

    # Resolved as the agent's Context resolves `collection`, without importing the agent.
    collection = state.get("collection") or os.environ.get("RAT_COLLECTION") or DEFAULT_COLLECTION
    check_collection_name(collection)
    if not isinstance(state.get("paths"), list):
        raise ConfigError("an ingest needs `paths`: a list of files, folders or URLs")
    paths, refused = list(state["paths"]), []
    check_ingest(paths)
    target, user = collection, served_user(config)
    if user:
        check_user(user)
        refused = [p for p in paths if not p.lower().startswith(("http://", "https://"))]
        paths = [p for p in paths if p not in refused]
        target = own_collection(collection, user)
    report = await _in_turn(user, partial(ingest, paths, collection=target))
    result = asdict(report)
    result["collection"] = collection
    result["failed"] = [[p, ON_SERVER] for p in refused] + [list(f) for f in report.failed]
    return result


def build_ingest_graph() -> CompiledStateGraph[IngestState, None, IngestInput, IngestOutput]:
    builder = StateGraph(IngestState, input_schema=IngestInput, output_schema=IngestOutput)
    builder.add_node("ingest", ingest_node)
    builder.add_edge(START, "ingest")
    builder.add_edge("ingest", END)
    return builder.compile(name="ingest")


graph = build_ingest_graph()
