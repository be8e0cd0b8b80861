"""Running async code from sync callers: one async core per I/O path, not two copies."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


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
