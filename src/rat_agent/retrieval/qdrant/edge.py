"""The embedded store: Qdrant Edge, the Qdrant engine in-process, one shard per collection.

It replaces qdrant-client's local mode, which loads every point when it opens and searches
by brute force (benchmarks/results/store.md: at 100k chunks 1.3 s a search and 33 s to
open, against 1.3 ms and 0.3 s here). `EdgeClient` answers the part of QdrantClient's API
this project calls, with qdrant-client's own models in and out, so the retriever, ingest
and the thought memory run unchanged on Edge or on a Qdrant server by URL.

A collection is a folder: the shard's files, and `collection.json` (its metadata), written
last, so a folder without it is a creation cut short. A shard that will not load is
damaged: named, deletable, and no other collection is touched.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from qdrant_client import QdrantClient, models
from qdrant_client.http.models import models as rest

from rat_agent.errors import RetrievalError
from rat_agent.paths import write_atomic

COLLECTION_FILE = "collection.json"
_BUSY = "WouldBlock"  # how Edge says another process holds a shard's WAL


def _qe() -> Any:
    import qdrant_edge  # a native module: loaded when a store is first used

    return qdrant_edge


@dataclass
class EdgeConfig:
    """What `get_collection` reports: qdrant-client's `info.config.metadata` path."""

    metadata: dict[str, Any]


@dataclass
class EdgeCollectionInfo:
    config: EdgeConfig
    points_count: int


@dataclass
class _Collection:
    shard: Any
    metadata: dict[str, Any] = field(default_factory=dict)


# What the project's code calls: a Qdrant server's client, or the embedded store's.
Store: TypeAlias = "QdrantClient | EdgeClient"


class InUse(RetrievalError):
    """Another process holds the collection's shard."""


class EdgeClient:
    """Collections as Edge shards under one folder. Not thread-safe on its own: its users
    hold the lock `client.get_client` hands out, as for every client."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._open: dict[str, _Collection] = {}
        self.damaged: dict[str, str] = {}  # name: why its shard would not load

    # --- collections ----------------------------------------------------------------------

    def _names(self) -> list[str]:
        found = (p.parent.name for p in self.folder.glob(f"*/{COLLECTION_FILE}"))
        return sorted(name for name in found if not name.startswith("."))  # .deleted-*

    def collection_exists(self, collection_name: str) -> bool:
        if collection_name in self.damaged:
            return False
        if not (self.folder / collection_name / COLLECTION_FILE).is_file():
            return False
        try:
            self._get(collection_name)
        except InUse:
            raise
        except RetrievalError:
            return False  # damaged: recorded in self.damaged
        return True

    def damage(self, name: str) -> str:
        """Why collection `name` is unusable, with the way out ("" when it is not)."""
        self.collection_exists(name)  # loads it, and records the failure
        reason = self.damaged.get(name)
        return damage_message(name, reason) if reason is not None else ""

    def damaged_collections(self) -> list[str]:
        return [n for n in self._names() if self.damage(n)]

    def get_collections(self) -> models.CollectionsResponse:
        names = [n for n in self._names() if self.collection_exists(n)]
        return models.CollectionsResponse(
            collections=[models.CollectionDescription(name=n) for n in names]
        )

    def get_collection(self, collection_name: str) -> EdgeCollectionInfo:
        found = self._get(collection_name)
        return EdgeCollectionInfo(
            EdgeConfig(dict(found.metadata)), found.shard.count(_qe().CountRequest(exact=True))
        )

    def create_collection(
        self,
        collection_name: str,
        vectors_config: Mapping[str, models.VectorParams],
        sparse_vectors_config: Mapping[str, models.SparseVectorParams] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> bool:
        qe = _qe()
        where = self.folder / collection_name
        if (where / COLLECTION_FILE).exists():
            raise RetrievalError(f"the collection {collection_name!r} already exists")
        shutil.rmtree(where, ignore_errors=True)  # a creation cut short
        distances = {
            models.Distance.COSINE: qe.Distance.Cosine,
            models.Distance.DOT: qe.Distance.Dot,
        }
        config = qe.EdgeConfig(
            vectors={
                name: qe.EdgeVectorParams(size=p.size, distance=distances[p.distance])
                for name, p in vectors_config.items()
            },
            sparse_vectors={
                name: qe.EdgeSparseVectorParams(
                    modifier=qe.Modifier.Idf if p.modifier == models.Modifier.IDF else None
                )
                for name, p in (sparse_vectors_config or {}).items()
            },
        )
        shard = qe.EdgeShard.create(str(where), config)
        write_atomic(where / COLLECTION_FILE, json.dumps({"metadata": dict(metadata or {})}))
        self._open[collection_name] = _Collection(shard, dict(metadata or {}))
        self.damaged.pop(collection_name, None)
        return True

    def update_collection(
        self, collection_name: str, metadata: Mapping[str, Any] | None = None
    ) -> bool:
        """Merge `metadata` into the collection's, as a Qdrant server does."""
        found = self._get(collection_name)
        merged = {**found.metadata, **(metadata or {})}
        where = self.folder / collection_name / COLLECTION_FILE
        write_atomic(where, json.dumps({"metadata": merged}))
        found.metadata = merged
        return True

    def delete_collection(self, collection_name: str) -> bool:
        where = self.folder / collection_name
        if not where.exists():
            return False
        if found := self._open.pop(collection_name, None):
            found.shard.close()
        # Out of sight first, so a delete cut short never leaves half a collection.
        gone = where.with_name(f".deleted-{collection_name}-{uuid.uuid4().hex[:8]}")
        where.rename(gone)
        shutil.rmtree(gone, ignore_errors=True)
        self.damaged.pop(collection_name, None)
        return True

    def close(self) -> None:
        for found in self._open.values():
            found.shard.close()
        self._open.clear()

    def optimize(self, collection_name: str) -> None:
        """Build the HNSW and sparse indexes of what was written (Edge has no background
        optimizer): after an ingest, so searches do not scan."""
        self._get(collection_name).shard.optimize()

    # --- points ---------------------------------------------------------------------------

    def upsert(
        self, collection_name: str, points: Sequence[models.PointStruct], wait: bool = True
    ) -> None:
        qe = _qe()
        edge_points = [qe.Point(_id(p.id), _vectors(p.vector), p.payload or {}) for p in points]
        self._get(collection_name).shard.update(qe.UpdateOperation.upsert_points(edge_points))

    def upload_points(
        self, collection_name: str, points: Sequence[models.PointStruct], batch_size: int = 64
    ) -> None:
        for start in range(0, len(points), batch_size):
            self.upsert(collection_name, points[start : start + batch_size])

    def batch_update_points(
        self, collection_name: str, update_operations: Sequence[models.SetPayloadOperation]
    ) -> None:
        qe = _qe()
        shard = self._get(collection_name).shard
        for operation in update_operations:
            change = operation.set_payload
            ids = [_id(i) for i in change.points or []]
            shard.update(qe.UpdateOperation.set_payload(ids, dict(change.payload)))

    def delete(
        self,
        collection_name: str,
        points_selector: models.PointIdsList | models.FilterSelector,
        wait: bool = True,
    ) -> None:
        qe = _qe()
        shard = self._get(collection_name).shard
        if isinstance(points_selector, models.FilterSelector):
            shard.update(
                qe.UpdateOperation.delete_points_by_filter(_filter(points_selector.filter))
            )
        else:
            shard.update(qe.UpdateOperation.delete_points([_id(i) for i in points_selector.points]))

    def count(self, collection_name: str, exact: bool = True) -> models.CountResult:
        shard = self._get(collection_name).shard
        return models.CountResult(count=shard.count(_qe().CountRequest(exact=exact)))

    def retrieve(
        self,
        collection_name: str,
        ids: Sequence[models.ExtendedPointId],
        with_payload: bool | Sequence[str] = True,
        with_vectors: bool = False,
    ) -> list[models.Record]:
        shard = self._get(collection_name).shard
        found = shard.retrieve([_id(i) for i in ids], _payload(with_payload), with_vectors)
        return [_record(r) for r in found]

    def scroll(
        self,
        collection_name: str,
        scroll_filter: models.Filter | None = None,
        limit: int = 10,
        offset: models.ExtendedPointId | None = None,
        with_payload: bool | Sequence[str] = True,
        with_vectors: bool = False,
    ) -> tuple[list[models.Record], models.ExtendedPointId | None]:
        qe = _qe()
        request = qe.ScrollRequest(
            offset=_id(offset) if offset is not None else None,
            limit=limit,
            filter=_filter(scroll_filter),
            with_payload=_payload(with_payload),
            with_vector=with_vectors,
        )
        records, following = self._get(collection_name).shard.scroll(request)
        return [_record(r) for r in records], _out_id(following) if following is not None else None

    def query_points(
        self,
        collection_name: str,
        query: Any = None,
        using: str | None = None,
        prefetch: models.Prefetch | Sequence[models.Prefetch] | None = None,
        query_filter: models.Filter | None = None,
        limit: int = 10,
        with_payload: bool | Sequence[str] = True,
        score_threshold: float | None = None,
    ) -> rest.QueryResponse:
        qe = _qe()
        stages = [prefetch] if isinstance(prefetch, models.Prefetch) else list(prefetch or [])
        request = qe.QueryRequest(
            limit=limit,
            query=_query(query, using),
            prefetches=[_prefetch(p) for p in stages] or None,
            filter=_filter(query_filter),
            with_payload=_payload(with_payload),
            score_threshold=score_threshold,
        )
        found = self._get(collection_name).shard.query(request)
        return rest.QueryResponse(
            points=[
                models.ScoredPoint(
                    id=_out_id(p.id), version=p.version, score=p.score, payload=p.payload
                )
                for p in found
            ]
        )

    # --- shards ---------------------------------------------------------------------------

    def _get(self, name: str) -> _Collection:
        """The open shard of `name`, loaded on first use (so opening the store costs
        nothing for the collections a run does not touch)."""
        if found := self._open.get(name):
            return found
        where = self.folder / name
        try:
            metadata = json.loads((where / COLLECTION_FILE).read_text())["metadata"]
        except FileNotFoundError:
            raise RetrievalError(f"there is no collection {name!r}") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise self._damaged(name, f"{COLLECTION_FILE}: {exc}") from None
        try:
            shard = _qe().EdgeShard.load(str(where))
        except Exception as exc:
            if _BUSY in str(exc):
                raise InUse(
                    f"the collection {name!r} in {self.folder} is in use by another rat "
                    "process; wait for it, or share a Qdrant server between processes "
                    "with QDRANT_URL"
                ) from None
            raise self._damaged(name, str(exc)) from None
        self._open[name] = found = _Collection(shard, dict(metadata))
        return found

    def _damaged(self, name: str, reason: str) -> RetrievalError:
        self.damaged[name] = reason
        return RetrievalError(damage_message(name, reason))


def damage_message(name: str, reason: str) -> str:
    return (
        f"the Qdrant collection {name!r} is damaged ({reason}); delete it with "
        f"`rat collections delete {name}`, then ingest its sources again"
    )


# --- qdrant-client's models, as Edge takes and gives them ---------------------------------


def _id(point_id: models.ExtendedPointId) -> int | uuid.UUID:
    return point_id if isinstance(point_id, int) else uuid.UUID(str(point_id))


def _out_id(point_id: Any) -> models.ExtendedPointId:
    return point_id if isinstance(point_id, int) else str(point_id)


def _vectors(vector: Any) -> dict[str, Any]:
    if not isinstance(vector, Mapping):
        raise RetrievalError("the embedded store takes named vectors only")
    return {name: _vector(v) for name, v in vector.items()}


def _vector(vector: Any) -> Any:
    if isinstance(vector, models.SparseVector):
        return _qe().SparseVector(list(vector.indices), list(vector.values))
    return list(vector)


def _payload(with_payload: bool | Sequence[str]) -> bool | list[str]:
    return with_payload if isinstance(with_payload, bool) else list(with_payload)


def _record(record: Any) -> models.Record:
    vector = record.vector
    if isinstance(vector, Mapping):
        vector = {
            name: models.SparseVector(indices=list(v.indices), values=list(v.values))
            if hasattr(v, "indices")
            else list(v)
            for name, v in vector.items()
        }
    return models.Record(id=_out_id(record.id), payload=record.payload, vector=vector)


def _query(query: Any, using: str | None) -> Any:
    qe = _qe()
    if query is None:
        return None
    if isinstance(query, models.FusionQuery):
        return qe.Fusion.Rrf(k=2) if query.fusion == models.Fusion.RRF else qe.Fusion.Dbsf()
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    return qe.Query.Nearest(_vector(query), using=using)


def _prefetch(stage: models.Prefetch) -> Any:
    inner = stage.prefetch
    inner = [inner] if isinstance(inner, models.Prefetch) else list(inner or [])
    return _qe().Prefetch(
        limit=stage.limit or 10,
        query=_query(stage.query, stage.using),
        prefetches=[_prefetch(p) for p in inner] or None,
        filter=_filter(stage.filter),
        score_threshold=stage.score_threshold,
    )


def _filter(where: models.Filter | None) -> Any:
    if where is None:
        return None
    qe_ = _qe()

    def conditions(items: Any) -> list[Any] | None:
        if items is None:
            return None
        return [_condition(c) for c in (items if isinstance(items, list) else [items])]

    return qe_.Filter(
        must=conditions(where.must),
        should=conditions(where.should),
        must_not=conditions(where.must_not),
    )


def _condition(condition: Any) -> Any:
    qe = _qe()
    if isinstance(condition, models.Filter):
        return _filter(condition)
    if isinstance(condition, models.HasIdCondition):
        return qe.HasIdCondition({_id(i) for i in condition.has_id})
    if isinstance(condition, models.FieldCondition):
        match = condition.match
        if isinstance(match, models.MatchValue):
            if not _storable(match.value):
                return qe.FieldCondition(condition.key, match=qe.MatchAny([]))
            return qe.FieldCondition(condition.key, match=qe.MatchValue(match.value))
        if isinstance(match, models.MatchAny):
            kept = [v for v in match.any if _storable(v)]
            return qe.FieldCondition(condition.key, match=qe.MatchAny(kept))
        if isinstance(match, models.MatchExcept):
            kept = [v for v in match.except_ if _storable(v)]
            return qe.FieldCondition(condition.key, match=qe.MatchExcept(kept))
    raise RetrievalError(f"the embedded store does not take this filter: {condition!r}")


def _storable(value: object) -> bool:
    """Edge keeps text as UTF-8: a string it cannot hold (a file name read with Python's
    surrogate escapes) is in no payload, so a match on it matches nothing."""
    if not isinstance(value, str):
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True
