"""One process at a time runs a thread.

Two `rat ask --thread T` at once would each run the remaining steps from the same
checkpoint, paying for every model call twice and interleaving their checkpoints. The
lock is one the operating system or the database drops with its holder, so a killed
process never leaves a thread locked: a POSIX record lock on one byte of a lock file
beside the SQLite checkpoints (a byte per thread, so one file serves every thread and
none is left behind per thread), or a PostgreSQL session advisory lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rat_agent.errors import ConfigError

_NAMESPACE = "rat-agent thread:"


def _key(thread: str) -> int:
    """A signed 64-bit key (PostgreSQL's advisory lock key), from the thread id."""
    digest = hashlib.sha256((_NAMESPACE + thread).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _busy(thread: str) -> ConfigError:
    return ConfigError(
        f"thread {thread} is being run by another process right now; wait for it to finish "
        f"(`rat show {thread}` shows its progress), then resume it if it did not finish"
    )


@contextmanager
def running(saver: Any, thread: str) -> Iterator[None]:
    """Hold `thread` for this process while the body runs; raise if another holds it."""
    conn = getattr(saver, "conn", None)
    if conn is not None and type(conn).__module__.startswith("psycopg"):
        with _postgres(conn, thread):
            yield
        return
    database = _sqlite_file(conn)
    if database is None:  # an in-memory saver lives in one process: nothing to share
        yield
        return
    with _record_lock(database.with_name(database.name + ".threads.lock"), thread):
        yield


def _sqlite_file(conn: Any) -> Path | None:
    if conn is None or not hasattr(conn, "execute"):
        return None
    rows = conn.execute("PRAGMA database_list").fetchall()
    main = next((row[2] for row in rows if row[1] == "main"), "")
    return Path(main) if main else None


@contextmanager
def _record_lock(path: Path, thread: str) -> Iterator[None]:
    # Record locks (lockf), not flock: a byte per thread in one file. Beware their rule
    # that closing any descriptor of the file drops the process's locks on it: this
    # descriptor is the only one, opened and closed here.
    offset = _key(thread) & 0x3FFF_FFFF_FFFF_FFFF  # a non-negative file offset
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:
            raise _busy(thread) from None
        try:
            yield
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset)
    finally:
        os.close(fd)


@contextmanager
def _postgres(conn: Any, thread: str) -> Iterator[None]:
    key = _key(thread)
    row = conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (key,)).fetchone()
    locked = row["locked"] if isinstance(row, dict) else row[0]
    if not locked:
        raise _busy(thread)
    try:
        yield
    finally:
        if not conn.closed:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
