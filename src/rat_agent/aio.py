"""Running async code from sync callers, and one node body run either way: one core per
I/O path, not two copies."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:  # light: the CLI's help and the settings import this module
    from langchain_core.runnables import RunnableLambda

T = TypeVar("T")
log = logging.getLogger(__name__)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """`coroutine`'s result, from sync code.

    The graph calls retrievers synchronously, sometimes under an already running loop (a
    notebook, an async caller), where asyncio.run is refused: then a worker thread runs it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@dataclass(frozen=True)
class Wait(Generic[T]):
    """What a node's body waits on: `sync` makes it from sync code; `async_` awaits it, and
    without one `sync` runs in a thread (blocking work: an index, the embedder, a plug-in)."""

    sync: Callable[[], T]
    async_: Callable[[], Awaitable[T]] | None = None

    async def wait(self) -> T:
        if self.async_ is None:
            return await asyncio.to_thread(self.sync)  # with the caller's context
        return await self.async_()


def ready(value: T) -> Wait[T]:
    """A wait with nothing to wait for: `value`, without a thread."""

    async def now() -> T:
        return value

    return Wait(lambda: value, now)


# A node's body: it yields each wait it needs and is sent the result (or thrown its error).
Body = Generator[Wait[Any], Any, T]


def run(body: Body[T]) -> T:
    """The body's result, each wait made in turn: for `graph.invoke`."""
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            wait = body.throw(error) if error is not None else body.send(value)
        except StopIteration as stop:
            return cast(T, stop.value)
        try:
            value, error = wait.sync(), None
        except Exception as exc:
            value, error = None, exc


async def arun(body: Body[T]) -> T:
    """The body's result, each wait awaited: for `graph.ainvoke` and a server's event loop."""
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            wait = body.throw(error) if error is not None else body.send(value)
        except StopIteration as stop:
            return cast(T, stop.value)
        try:
            value, error = await wait.wait(), None
        except Exception as exc:
            value, error = None, exc


def node(body: Callable[..., Body[Any]], name: str) -> RunnableLambda[Any, Any]:
    """A graph node from a body: run sync under `invoke`, awaited under `ainvoke`, so a run
    on an async server holds no worker thread while it waits on a model or a source.

    LangChain's public RunnableLambda takes the two functions; the run's `Runtime` comes from
    LangGraph's public get_runtime(). It costs a child run per node in a trace (the node's
    run, then the lambda's of the same name), which no stream or result shows."""
    from langchain_core.runnables import RunnableLambda
    from langgraph.runtime import get_runtime

    def sync(state: Any) -> Any:
        try:
            return run(body(state, get_runtime()))
        except Exception as exc:
            _hide(exc)
            raise

    async def async_(state: Any) -> Any:
        try:
            return await arun(body(state, get_runtime()))
        except Exception as exc:
            _hide(exc)
            raise

    return RunnableLambda(sync, afunc=async_, name=name)


def _hide(exc: Exception) -> None:
    """What a served user sees of an error a node raised: the project's own errors (one
    line, paths scrubbed) and LangGraph's own signals as they are (this returns); anything
    else is raised as a line with an id, its text and trace logged on the server (a
    library's message may name the server's paths, addresses or code)."""
    from langgraph.errors import GraphBubbleUp

    from rat_agent.errors import InternalError, RatError
    from rat_agent.served import current_user

    if isinstance(exc, RatError | GraphBubbleUp) or not current_user():
        return
    ref = uuid.uuid4().hex[:12]
    log.error("a served run failed (error %s)", ref, exc_info=exc)
    message = f"the run failed on the server (error {ref}); its log has the details"
    raise InternalError(message) from None
