"""Damaged collections in the embedded Qdrant folder: set aside, named, deletable.

Embedded Qdrant loads every collection when the folder is opened, so one damaged
`storage.sqlite` (a full disk, a copy cut short) would make every command that touches
Qdrant fail, including the delete that would fix it. When opening fails, each collection
is loaded on its own; those that cannot be read are taken out of Qdrant's `meta.json` and
recorded, with their configuration and the reason, in `damaged.json` beside it. Their
files stay where they are until `rat collections delete NAME` removes them. The other
collections keep working; using a damaged one is an error that says all this.
"""

from __future__ import annotations

import json
import logging
import pickle
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rat_agent.errors import RetrievalError
from rat_agent.paths import write_atomic
from rat_agent.text import shorten

log = logging.getLogger(__name__)

META = "meta.json"
RECORD = "damaged.json"
# What a damaged file raises while Qdrant reads it: SQLite's "malformed" or "not a
# database", and the unpickling of a cut or overwritten point. Not OSError: a file that
# can't be read right now (permissions, too many open files) is not damaged.
_DAMAGE = (sqlite3.DatabaseError, pickle.UnpicklingError, EOFError, ValueError, KeyError)


def recorded(folder: Path) -> dict[str, dict[str, Any]]:
    """The collections set aside in `folder`, by name: {"reason", "file", "config"}."""
    try:
        data = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def problem(folder: Path, name: str) -> str:
    """Why collection `name` can't be used, with the fix; "" when it is not damaged."""
    entry = recorded(folder).get(name)
    if entry is None:
        return ""
    return (
        f"the Qdrant collection {name!r} is damaged ({entry.get('file')}: "
        f"{entry.get('reason')}); delete it with `rat collections delete {name}`, "
        "then ingest its sources again"
    )


def set_aside(folder: Path) -> list[str]:
    """After the folder failed to open: set aside the collections that cannot be read.

    Returns their names; [] when every collection loads (the failure was something else).
    Raises RetrievalError when Qdrant's own list of collections is unreadable.
    """
    meta = _read_meta(folder)
    bad: dict[str, dict[str, Any]] = {}
    for name, config in meta["collections"].items():
        reason = _load_error(folder, name, config)
        if reason:
            bad[name] = {
                "reason": reason,
                "file": str(folder / "collection" / name / "storage.sqlite"),
                "config": config,
            }
    if not bad:
        return []
    with _folder_lock(folder):
        meta = _read_meta(folder)  # as it is now, under the lock
        for name in bad:
            meta["collections"].pop(name, None)
            meta.get("text_indexes", {}).pop(name, None)
            meta["aliases"] = {a: n for a, n in meta.get("aliases", {}).items() if n != name}
        _write(folder / RECORD, {**recorded(folder), **bad})
        _write(folder / META, meta)
    for name, entry in bad.items():
        log.warning(
            "the Qdrant collection %r is damaged (%s: %s): set aside; the others work. "
            "Delete it with `rat collections delete %s`",
            name,
            entry["file"],
            entry["reason"],
            name,
        )
    return sorted(bad)


def forget(folder: Path, name: str) -> bool:
    """Delete a damaged collection's files and record; False if it is not recorded.
    The caller holds the folder (its client is open)."""
    record = recorded(folder)
    if name not in record:
        return False
    shutil.rmtree(folder / "collection" / name, ignore_errors=True)
    del record[name]
    _write(folder / RECORD, record)
    return True


def _read_meta(folder: Path) -> dict[str, Any]:
    path = folder / META
    try:
        meta = json.loads(path.read_text())
        if not (isinstance(meta, dict) and isinstance(meta.get("collections"), dict)):
            raise ValueError("no list of collections in it")
    except (OSError, ValueError) as exc:
        raise RetrievalError(
            f"the embedded Qdrant store's list of collections, {path}, is damaged "
            f"({shorten(str(exc), 120)}): move the folder aside (`mv {folder} "
            f"{folder}.damaged`) and ingest your sources again"
        ) from None
    return meta


def _load_error(folder: Path, name: str, config: dict[str, Any]) -> str:
    """Why collection `name` does not load on its own ("" if it does)."""
    from qdrant_client.http import models as rest
    from qdrant_client.local.local_collection import LocalCollection

    try:
        collection = LocalCollection(
            rest.CreateCollection(**config), str(folder / "collection" / name)
        )
    except _DAMAGE as exc:
        return shorten(str(exc) or type(exc).__name__, 200)
    collection.close()
    return ""


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """The lock embedded Qdrant holds while a client has the folder open."""
    import portalocker

    with open(folder / ".lock", "a+") as handle:
        try:
            flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
            portalocker.lock(handle, flags)
        except portalocker.exceptions.LockException:
            raise RetrievalError(
                f"the Qdrant folder {folder} is in use by another rat process; wait for it"
            ) from None
        try:
            yield
        finally:
            portalocker.unlock(handle)


def _write(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(data))
