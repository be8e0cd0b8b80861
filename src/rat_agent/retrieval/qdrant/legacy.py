"""The store of earlier releases, qdrant-client's local mode in `<data>/qdrant`, copied once
into the Qdrant Edge store.

Every collection is copied whole (points, both vectors, payloads and metadata); the old
folder is left as it was, so an upgrade never loses a user's data, and `migrated.json` in
the new store records what came from where. A collection the old store cannot read is
left there and named (damaged.py sets it aside as the old release did).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from rat_agent.errors import RetrievalError
from rat_agent.paths import write_atomic
from rat_agent.retrieval.qdrant import damaged
from rat_agent.retrieval.qdrant.edge import COLLECTION_FILE, EdgeClient

log = logging.getLogger(__name__)

RECORD = "migrated.json"
_BATCH = 256


def migrate(old: Path, store: EdgeClient) -> list[str]:
    """Copy the collections of the local-mode folder `old` into `store`, once; returns
    their names ([] when there is nothing to do)."""
    record = store.folder / RECORD
    if record.exists() or not (old / damaged.META).is_file():
        return []
    client = _open(old)
    try:
        names = [c.name for c in client.get_collections().collections]
        for name in names:
            if not (store.folder / name / COLLECTION_FILE).exists():
                _copy(client, name, store)
    finally:
        client.close()
    set_aside = sorted(damaged.recorded(old))
    write_atomic(record, json.dumps({"from": str(old), "collections": names, "damaged": set_aside}))
    log.warning(
        "copied %d collection(s) from the old store %s into %s; the old folder is kept: "
        "delete it when you no longer need it",
        len(names),
        old,
        store.folder,
    )
    for name in set_aside:
        log.warning("%s (left in %s)", damaged.problem(old, name), old)
    return names


def _copy(client: QdrantClient, name: str, store: EdgeClient) -> None:
    info = client.get_collection(name)
    params = info.config.params
    vectors: Any = params.vectors
    store.create_collection(
        name,
        vectors_config=vectors if isinstance(vectors, dict) else {"": vectors},
        sparse_vectors_config=params.sparse_vectors,
        metadata=info.config.metadata or {},
    )
    offset: Any = None
    try:
        while True:
            points, offset = client.scroll(
                name, limit=_BATCH, offset=offset, with_payload=True, with_vectors=True
            )
            store.upsert(name, [_point(p) for p in points])
            if offset is None:
                break
        store.optimize(name)
    except BaseException:
        store.delete_collection(name)  # never half a collection: the next open tries again
        raise


def _point(record: models.Record) -> models.PointStruct:
    vector: Any = record.vector  # scrolled with_vectors
    return models.PointStruct(id=record.id, vector=vector, payload=record.payload)


def _open(old: Path) -> QdrantClient:
    """The old folder, its damaged collections set aside (as the old release did)."""
    try:
        return _open_folder(old)
    except RetrievalError:
        raise
    except Exception as exc:
        if not damaged.set_aside(old):
            raise RetrievalError(f"cannot read the old Qdrant folder {old}: {exc}") from exc
    try:
        return _open_folder(old)
    except RetrievalError:
        raise
    except Exception as exc:
        raise RetrievalError(f"cannot read the old Qdrant folder {old}: {exc}") from exc


def _open_folder(old: Path) -> QdrantClient:
    try:
        return QdrantClient(path=str(old), force_disable_check_same_thread=True)
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise RetrievalError(
                f"the old Qdrant folder {old} is in use by another rat process (an earlier "
                "release?); stop it, and this one copies its collections to the new store"
            ) from None
        raise
