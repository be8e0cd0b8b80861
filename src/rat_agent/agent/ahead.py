"""Steps checked ahead: causal revision without waiting on it step after step.

While step i is checked, the query, retrieval and revision of steps i+1..i+d start, on the
guess that the steps before each stay as drafted. Each call ahead is made with exactly the
prompt the loop would send if the guess holds, and is kept under that prompt. When the loop
gets there it sends its prompt as always: a call ahead with the same prompt answers it (or
is waited for), and any other goes to the model. So the loop's prompts, replies and steps
are those of the plain loop; a wrong guess costs the calls made ahead, never the result.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
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
    """The calls made ahead, by key, and the threads that make them."""

    def __init__(self, workers: int = 16) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="rat-ahead")
        self._made: OrderedDict[Hashable, Future[Any]] = OrderedDict()
        self._claimed: set[Hashable] = set()  # made ahead and already taken by the loop
        self._lock = threading.Lock()

    def launch(self, work: Callable[[], object]) -> None:
        """Run `work` in the background, its calls kept for the loop; with the caller's
        context, so its model calls reach the run's callbacks (stats, traces)."""
        context = contextvars.copy_context()

        def run() -> None:
            context.run(_ahead.set, True)
            # a guess that fails costs nothing: the loop makes its own call
            with contextlib.suppress(Exception):
                context.run(work)

        self._pool.submit(run)

    def call(self, key: Hashable, make: Callable[[], T]) -> T:
        """The result of `make()`. In the loop: the call made ahead under `key`, once,
        waited for if still running (made again if it failed); else `make()`. Ahead: made
        and kept, or the one already made or making under `key`."""
        ahead = _ahead.get()
        mine = False
        with self._lock:
            made = self._made.get(key)
            if ahead and made is None:
                made = self._made[key] = Future()
                mine = True
                while len(self._made) > KEPT:
                    self._claimed.discard(self._made.popitem(last=False)[0])
            elif not ahead and made is not None:
                if key in self._claimed:
                    made = None  # the loop asks again (a retry): a call of its own
                else:
                    self._claimed.add(key)
        if made is None:
            return make()
        if not mine:
            try:
                value: T = made.result()
            except Exception:
                if ahead:
                    raise
                return make()
            return value
        try:
            value = make()
        except BaseException as exc:
            made.set_exception(exc)
            raise
        made.set_result(value)
        return value
