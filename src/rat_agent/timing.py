"""What a process pays once (model server start, embedder load, opening Qdrant), kept so
`rat ask --json` and benchmarks/startup.py can say where a command's time went."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_costs: dict[str, float] = {}


@contextmanager
def once_cost(name: str) -> Iterator[None]:
    """Add the time spent inside to `name` (summed if it happens more than once)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        with _lock:
            _costs[name] = _costs.get(name, 0.0) + time.perf_counter() - started


def record(name: str, seconds: float) -> None:
    with _lock:
        _costs[name] = _costs.get(name, 0.0) + seconds


def costs() -> dict[str, float]:
    with _lock:
        return dict(_costs)


def since_process_start() -> float | None:
    """Seconds since this process started (the interpreter's own start-up included), from
    /proc; None where there is no /proc."""
    try:
        with open(f"/proc/{os.getpid()}/stat") as stat, open("/proc/uptime") as uptime:
            started_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            up = float(uptime.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return up - started_ticks / os.sysconf("SC_CLK_TCK")
