"""Thought memory (the Thought-Retriever paper): checked conclusions of past runs, in Qdrant.

A thought is a short passage the model wrote from a finished run and judged to be a real,
supported answer. It keeps its provenance (the documents and thoughts it was built from,
the thread and step) and an abstraction level: raw documents are level 1, a thought is
1 + the mean level of its sources. Thoughts live in their own collection next to
`rat ingest`'s (embedded on disk, or the server at QDRANT_URL) and are searched with the
same hybrid search, so later runs read them alongside the knowledge source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from qdrant_client import models

from rat_agent.errors import ConfigError, RetrievalError
from rat_agent.memory.thought import Origin, Thought, as_document, thought_id
from rat_agent.providers.embeddings import get_embeddings
from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.client import (
    MADE_BY,
    THOUGHTS,
    collection_metadata,
    damage,
    delete_collection,
    kind_of,
    locked_client,
    owner_of,
)
from rat_agent.retrieval.qdrant.edge import Store
from rat_agent.retrieval.settings import check_collection_name
from rat_agent.served import current_user

_WHAT = "the thought memory"  # how Qdrant errors name it
_AVERAGE_WORDS = 60.0  # a fixed length estimate for BM25: the collection keeps growing
_SCROLL = 256
MIN_PREFIX = 4  # of a thought id given by hand


class Memory:
    """One memory collection; created on the first stored thought."""

    def __init__(self, collection: str):
        check_collection_name(collection, "memory collection")
        self.collection = collection

    # --- checks -----------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the collection holds thoughts; ConfigError when it holds something else."""
        with locked_client(_WHAT) as client:
            if not client.collection_exists(self.collection):
                if why := damage(self.collection):  # set aside: see qdrant/damaged.py
                    raise RetrievalError(why)
                return False
            metadata = client.get_collection(self.collection).config.metadata or {}
        if metadata.get("made_by") != MADE_BY or kind_of(metadata) != THOUGHTS:
            raise ConfigError(
                f"the Qdrant collection {self.collection!r} is not a thought "
                "memory (it holds documents); name another for memory"
            )
        # A served user's memory is named for them; one recorded as someone else's is not
        # theirs whatever its name (memories from before owners were recorded have none).
        if (user := current_user()) and owner_of(metadata) not in (user, ""):
            raise ConfigError(
                f"the Qdrant collection {self.collection!r} is not your thought memory; "
                "name another for memory"
            )
        wanted = collection_metadata()
        if metadata.get("embedding") != wanted["embedding"]:
            raise ConfigError(
                f"the memory {self.collection!r} was embedded with another model "
                f"({metadata.get('embedding')}); clear it with "
                f"`rat memory clear --collection {self.collection}`"
            )
        return True

    # --- reading ------------------------------------------------------------------------

    def search(self, query: str, k: int, min_score: float) -> list[Document]:
        """Top-`k` thoughts for a query, each at least `min_score` cosine-similar to it.

        Hybrid search as for documents, but only among thoughts above the dense floor, so a
        thought sharing a word with the query and nothing else is never forced into a step.
        """
        if k < 1 or not query.strip() or not self.exists():
            return []
        dense = models.Prefetch(
            query=get_embeddings().embed_query(query),
            using=hybrid.DENSE,
            limit=40,
            score_threshold=min_score,
        )
        lexical = hybrid.sparse_query(query)
        prefetch = [dense]
        if lexical.indices:
            prefetch.append(
                models.Prefetch(query=lexical, using=hybrid.SPARSE, limit=40, prefetch=dense)
            )
        with locked_client(_WHAT) as client:
            points = client.query_points(
                self.collection,
                prefetch=prefetch,
                query=models.FusionQuery(fusion=models.Fusion.DBSF),
                limit=k,
                with_payload=True,
            ).points
        return [as_document(_thought(point.payload or {})) for point in points]

    def nearest(self, vector: Sequence[float]) -> tuple[float, Thought | None]:
        """The stored thought most similar to a normalized embedding, and its cosine."""
        if not self.exists():
            return 0.0, None
        with locked_client(_WHAT) as client:
            points = client.query_points(
                self.collection, query=list(vector), using=hybrid.DENSE, limit=1, with_payload=True
            ).points
        if not points:
            return 0.0, None
        return float(points[0].score), _thought(points[0].payload or {})

    def get(self, thought: str) -> Thought | None:
        """A thought by id or by a unique prefix of it (as `rat memory list` prints them:
        8 characters). A shorter prefix is refused: "" would match every thought."""
        if len(thought.strip()) < MIN_PREFIX:
            raise ConfigError(
                f"give at least {MIN_PREFIX} characters of the thought's id, got {thought!r} "
                "(`rat memory list` shows them)"
            )
        matches = [t for t in self.all() if t.id.startswith(thought.strip())]
        if len(matches) > 1 and not any(t.id == thought for t in matches):
            raise ConfigError(f"{thought!r} names {len(matches)} thoughts; give more of the id")
        exact = [t for t in matches if t.id == thought]
        return (exact or matches)[0] if matches else None

    def all(self) -> list[Thought]:
        """Every thought, oldest first."""
        if not self.exists():
            return []
        thoughts: list[Thought] = []
        offset: Any = None
        with locked_client(_WHAT) as client:
            while True:
                points, offset = client.scroll(
                    self.collection, limit=_SCROLL, offset=offset, with_payload=True
                )
                thoughts.extend(_thought(p.payload or {}) for p in points)
                if offset is None:
                    break
        return sorted(thoughts, key=lambda t: (t.created, t.id))

    def levels(self, ids: Sequence[str]) -> dict[str, float]:
        """The abstraction level of each stored thought among `ids` (forgotten ones are absent)."""
        if not ids or not self.exists():
            return {}
        with locked_client(_WHAT) as client:
            points = client.retrieve(self.collection, list(ids), with_payload=True)
        return {
            str(p.id): float((p.payload or {}).get("metadata", {}).get("level", 2.0))
            for p in points
        }

    def roots(self, thought: Thought) -> list[Origin]:
        """The raw documents a thought rests on, through the thoughts it was built from."""
        by_id = {t.id: t for t in self.all()}
        roots: dict[str, Origin] = {}
        seen: set[str] = set()
        pending = list(thought.origins)
        while pending:
            origin = pending.pop()
            ident = thought_id(origin.source) if origin.kind == "thought" else None
            if ident is None:
                roots.setdefault(origin.source, origin)
            elif ident not in seen:
                seen.add(ident)
                if ident in by_id:  # a forgotten thought leaves no trail
                    pending.extend(by_id[ident].origins)
        return sorted(roots.values(), key=lambda o: o.source)

    def count(self) -> int:
        if not self.exists():
            return 0
        with locked_client(_WHAT) as client:
            return client.count(self.collection, exact=True).count

    # --- writing ------------------------------------------------------------------------

    def add(self, thought: Thought, vector: Sequence[float]) -> None:
        sparse = hybrid.sparse_documents(
            [thought.text], [[thought.question]], average=_AVERAGE_WORDS
        )[0]
        point = hybrid.point(thought.id, thought.text, _metadata(thought), vector, sparse)
        exists = self.exists()
        with locked_client(_WHAT) as client:
            if not exists:
                _create(client, self.collection)
            client.upsert(self.collection, [point])

    def forget(self, thought: str) -> Thought:
        found = self.get(thought)
        if found is None:
            raise ConfigError(f"there is no thought {thought!r} in memory {self.collection!r}")
        with locked_client(_WHAT) as client:
            client.delete(self.collection, models.PointIdsList(points=[found.id]))
        return found

    def clear(self) -> int:
        """Delete the whole memory; returns how many thoughts it held (0 if damaged)."""
        if damage(self.collection):
            delete_collection(self.collection)
            return 0
        held = self.count()
        if self.exists():
            with locked_client(_WHAT) as client:
                client.delete_collection(self.collection)
        return held


class ThoughtRetriever(BaseRetriever):
    """Memory search as a LangChain retriever, so traces and run stats count it as retrieval."""

    collection: str
    k: int = 2
    min_score: float = 0.5

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return Memory(self.collection).search(query, self.k, self.min_score)


def embed(texts: Sequence[str]) -> list[list[float]]:
    try:
        return get_embeddings().embed_documents(list(texts))
    except RetrievalError:
        raise
    except Exception as exc:
        raise RetrievalError(f"embedding failed: {exc}") from exc


def _create(client: Store, name: str) -> None:
    hybrid.create_collection(client, name, metadata=collection_metadata(THOUGHTS))


def _metadata(thought: Thought) -> dict[str, Any]:
    data = asdict(thought)
    data["origins"] = [asdict(o) for o in thought.origins]
    del data["text"]  # the payload's page_content
    return data


def _thought(payload: dict[str, Any]) -> Thought:
    try:
        meta = dict(payload.get("metadata") or {})
        origins = tuple(Origin(**o) for o in meta.pop("origins", []) or [])
        return Thought(text=str(payload.get("page_content", "")), origins=origins, **meta)
    except (TypeError, ValueError) as exc:  # a point some other writer put there
        raise RetrievalError(f"the memory holds a point that is not a thought: {exc}") from None
