"""Steps checked ahead: causal revision without waiting on it step after step.

While step i is checked, the query, retrieval and revision of steps i+1..i+d start, on the
guess that the steps before each stay as drafted. Each call ahead is made with exactly the
prompt the loop would send if the guess holds, and is kept under that prompt. When the loop
gets there it sends its prompt as always: a call ahead with the same prompt answers it (or
is waited for), and any other goes to the model. So the loop's prompts, replies and steps
are those of the plain loop; a wrong guess costs the calls made ahead, never the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
KEPT = 256  # calls ahead kept unclaimed; the oldest go first

# Set in the threads that work ahead: their calls are kept for the loop to claim.
_ahead: contextvars.ContextVar[bool] = contextvars.ContextVar("rat_ahead", default=False)


def key_of(*parts: Any) -> str:
    """One key for a call: its kind, model settings and prompt, as JSON."""
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class Ahead:
    """The calls made ahead, by key, and the threads (or, under an event loop, the tasks)
    that make them."""

    def __init__(self, workers: int = 16) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="rat-ahead")
        weakref.finalize(self, self._pool.shutdown, wait=False)  # its threads end with it
        self._made: OrderedDict[Hashable, Future[Any]] = OrderedDict()
        self._claimed: set[Hashable] = set()  # made ahead and already taken by the loop
        self._tasks: set[asyncio.Task[None]] = set()  # held, as the loop keeps weak ones
        self._lock = threading.Lock()

    def launch(self, work: Callable[[], object]) -> None:
        """Run `work` in a thread, its calls kept for the loop; with the caller's context,
        so its model calls reach the run's callbacks (stats, traces)."""
        context = contextvars.copy_context()

        def run() -> None:
            context.run(_ahead.set, True)
            # a guess that fails costs nothing: the loop makes its own call
            with contextlib.suppress(Exception):
                context.run(work)

        self._pool.submit(run)

    def alaunch(self, work: Callable[[], Awaitable[object]]) -> None:
        """`launch` on the running event loop: a task (which copies the caller's context)."""

        async def run() -> None:
            _ahead.set(True)
            with contextlib.suppress(Exception):
                await work()

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _take(self, key: Hashable) -> tuple[Future[Any] | None, bool]:
        """The call made ahead under `key` for this caller, and whether the caller makes it.
        In the loop: a call made ahead, once (a retry makes its own). Ahead: the one made or
        making, else a new one this caller makes."""
        with self._lock:
            made = self._made.get(key)
            if _ahead.get() and made is None:
                made = self._made[key] = Future()
                while len(self._made) > KEPT:
                    self._claimed.discard(self._made.popitem(last=False)[0])
                return made, True
            if not _ahead.get() and made is not None:
                if key in self._claimed:
                    return None, False
                self._claimed.add(key)
            return made, False

    def call(self, key: Hashable, make: Callable[[], T]) -> T:
        """The result of `make()`, or of the call made ahead under `key` (waited for if still
        running, made again if it failed)."""
        made, mine = self._take(key)
        if made is None:
            return make()
        if not mine:
            try:
                value: T = made.result()
            except Exception:
                if _ahead.get():
                    raise
                return make()
            return value
        try:
            value = make()
        except BaseException as exc:
            made.set_exception(_failed(exc))
            raise
        made.set_result(value)
        return value

    async def acall(self, key: Hashable, make: Callable[[], Awaitable[T]]) -> T:
        """`call`, awaited."""
        made, mine = self._take(key)
        if made is None:
            return await make()
        if not mine:
            try:
                value: T = await asyncio.wrap_future(made)
            except Exception:
                if _ahead.get():
                    raise
                return await make()
            return value
        try:
            value = await make()
        except BaseException as exc:
            made.set_exception(_failed(exc))
            raise
        made.set_result(value)
        return value


def _failed(exc: BaseException) -> Exception:
    """What a waiter on a failed call ahead sees: a cancelled one as an error, which the
    loop answers by making its own call."""
    return exc if isinstance(exc, Exception) else RuntimeError(f"call ahead ended: {exc!r}")
