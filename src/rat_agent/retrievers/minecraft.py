"""Offline Minecraft knowledge: item pages in an embedded Qdrant index, searched hybrid.

Dense MiniLM vectors alone confuse near-identical pages ("Light Blue Glazed Terracotta" vs
"Blue Glazed Terracotta"), so each page also gets a sparse lexical vector (words plus
exact-title phrases, IDF applied by Qdrant) and the two are fused. Fusion is DBSF (scores
normalized per ranking, then summed), not RRF: an exact title match is a score outlier that
RRF flattens to a rank; benchmarks/results/recall.md has the figures.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import re
import shutil
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

import numpy as np
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field
from qdrant_client import QdrantClient, models

from rat_agent.embeddings import DIMENSIONS, embedding_model_id, get_embeddings
from rat_agent.errors import RetrievalError
from rat_agent.paths import cache_dir
from rat_agent.retrievers.minecraft_corpus import Page, build_pages, corpus_fingerprint

SOURCE_PREFIX = "minecraft-corpus:"
COLLECTION = "minecraft"
DENSE = "dense"
SPARSE = "sparse"
# Bump when the way pages become vectors changes (sparse encoder, payload layout).
INDEX_VERSION = "1"
_FINGERPRINT_FILE = "fingerprint.json"
_VECTORS_FILE = "dense.npy"
_PREFETCH = 40  # candidates each ranking hands to the fusion
_STALE_BUILD_S = 3600  # an unfinished build folder older than this belongs to a dead process

# "hybrid_rrf" is kept for comparison in the benchmark.
SearchMode = Literal["hybrid", "hybrid_rrf", "dense", "sparse"]


# --- sparse lexical vectors --------------------------------------------------------------------

_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "get",
    "getting", "how", "i", "in", "into", "is", "it", "its", "make", "me", "minecraft", "my",
    "obtain", "of", "on", "or", "the", "to", "use", "using", "what", "where", "which", "with",
    "you", "your",
})
_WORD = re.compile(r"[a-z0-9]+")
_TITLE_WEIGHT = 2.0  # per word of a matched title phrase
_K1, _B = 1.2, 0.75


def _stem(word: str) -> str:
    """Plural folding is all the stemming item names need ("3 diamonds", "sticks")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def _index(token: str) -> int:
    return zlib.crc32(token.encode())


def _title_token(words: Sequence[str]) -> str:
    return "title:" + " ".join(words)


def _sparse_documents(pages: Sequence[Page]) -> list[models.SparseVector]:
    """BM25 term weights (saturated, length-normalized tf); Qdrant multiplies in the IDF.

    Each page also holds one token for its whole title, so a query naming the item exactly
    ("iron ingot", not just "iron") finds that one page above all those mentioning it.
    """
    tokenized = [_words(f"{page.title} {page.id.replace('_', ' ')} {page.text}") for page in pages]
    average = sum(map(len, tokenized)) / max(len(tokenized), 1)
    vectors = []
    for page, words in zip(pages, tokenized, strict=True):
        norm = _K1 * (1 - _B + _B * len(words) / average)
        weights = {
            _index(word): tf * (_K1 + 1) / (tf + norm) for word, tf in Counter(words).items()
        }
        for title in {_title_token(_words(page.title)), _title_token(_words(page.id))}:
            weights[_index(title)] = 1.0
        vectors.append(models.SparseVector(indices=list(weights), values=list(weights.values())))
    return vectors


def _sparse_query(text: str) -> models.SparseVector:
    words = _words(text)
    weights: dict[int, float] = {_index(word): 1.0 for word in words}
    # Every phrase of up to 5 words might be an item title; longer matches weigh more.
    for size in range(1, min(len(words), 5) + 1):
        for start in range(len(words) - size + 1):
            weights[_index(_title_token(words[start:start + size]))] = _TITLE_WEIGHT * size
    return models.SparseVector(indices=list(weights), values=list(weights.values()))


# --- the index ---------------------------------------------------------------------------------


def _point_id(page_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, SOURCE_PREFIX + page_id))


def _payload(page: Page) -> dict[str, object]:
    # langchain-qdrant's layout, so QdrantVectorStore can read the collection too.
    return {"page_content": page.text, "metadata": _metadata(page)}


def _metadata(page: Page) -> dict[str, str]:
    return {"title": page.title, "source": SOURCE_PREFIX + page.id, "id": page.id}


def _fill(client: QdrantClient, pages: Sequence[Page], dense: np.ndarray) -> None:
    client.create_collection(
        COLLECTION,
        vectors_config={DENSE: models.VectorParams(size=DIMENSIONS,
                                                   distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    sparse = _sparse_documents(pages)
    points = [
        models.PointStruct(
            id=_point_id(page.id),
            vector={DENSE: vector.tolist(), SPARSE: sparse_vector},
            payload=_payload(page),
        )
        for page, vector, sparse_vector in zip(pages, dense, sparse, strict=True)
    ]
    client.upload_points(COLLECTION, points, batch_size=256)


def _embed_pages(pages: Sequence[Page]) -> np.ndarray:
    # MiniLM reads the first 256 word pieces: the title and how to obtain the item.
    vectors = get_embeddings().embed_documents([page.text for page in pages])
    return np.asarray(vectors, dtype=np.float32)


@dataclass
class MinecraftIndex:
    """An open index: `built` says whether opening it had to (re)build it."""

    client: QdrantClient
    path: Path | None  # None: the in-memory fallback
    fingerprint: str
    built: bool
    build_seconds: float
    lock: threading.Lock

    def search(self, query: str, k: int, mode: SearchMode = "hybrid") -> list[Document]:
        if k < 1:
            return []
        query = query.strip()
        if not query:
            return []
        dense_query = None
        if mode != "sparse":
            dense_query = get_embeddings().embed_query(query)
        sparse_query = _sparse_query(query)
        try:
            with self.lock:
                if mode == "dense":
                    result = self.client.query_points(
                        COLLECTION, query=dense_query, using=DENSE, limit=k, with_payload=True
                    )
                elif mode == "sparse" or not sparse_query.indices:
                    result = self.client.query_points(
                        COLLECTION, query=sparse_query, using=SPARSE, limit=k, with_payload=True
                    )
                else:
                    result = self.client.query_points(
                        COLLECTION,
                        prefetch=[
                            models.Prefetch(query=dense_query, using=DENSE, limit=_PREFETCH),
                            models.Prefetch(query=sparse_query, using=SPARSE, limit=_PREFETCH),
                        ],
                        query=models.FusionQuery(
                            fusion=models.Fusion.RRF if mode == "hybrid_rrf"
                            else models.Fusion.DBSF
                        ),
                        limit=k,
                        with_payload=True,
                    )
        except Exception as exc:  # qdrant raises several unrelated types
            raise RetrievalError(f"Minecraft index query failed: {exc}") from exc
        documents = []
        for point in result.points:
            payload = point.payload or {}
            metadata = dict(payload.get("metadata") or {})
            documents.append(
                Document(page_content=str(payload.get("page_content", "")), metadata=metadata)
            )
        return documents

    def close(self) -> None:
        with self.lock:
            self.client.close()


_indexes: dict[Path, MinecraftIndex] = {}
_indexes_lock = threading.Lock()


def index_root() -> Path:
    return cache_dir() / "minecraft-index"


def index_fingerprint(pages: Sequence[Page]) -> str:
    return f"{INDEX_VERSION}-{embedding_model_id()}-{corpus_fingerprint(pages)}"


@cache
def _corpus_index_fingerprint() -> str:
    """Hashing the corpus takes milliseconds: once per process, not once per query."""
    return index_fingerprint(build_pages())


def get_index(pages: Sequence[Page] | None = None) -> MinecraftIndex:
    """The process-wide index for the current cache folder, built on first use.

    Embedded Qdrant allows one client per folder per process, so clients are shared.
    `pages` replaces the real corpus (tests build small indexes fast).
    """
    if pages is None:
        pages, fingerprint = build_pages(), _corpus_index_fingerprint()
    else:
        fingerprint = index_fingerprint(pages)
    root = index_root()
    with _indexes_lock:
        index = _indexes.get(root)
        if index is not None and index.fingerprint == fingerprint:
            return index
        if index is not None:
            index.close()
            del _indexes[root]
        index = _open(root, fingerprint, pages)
        _indexes[root] = index
        return index


def close_indexes() -> None:
    """Release the folder locks, e.g. before another process needs the index."""
    with _indexes_lock:
        for index in _indexes.values():
            index.close()
        _indexes.clear()


# Closing at exit releases the folder lock cleanly (and avoids qdrant's noisy __del__).
atexit.register(close_indexes)


def _open(root: Path, fingerprint: str, pages: Sequence[Page]) -> MinecraftIndex:
    # The folder is named after the fingerprint and appears only once complete (built
    # aside, then renamed), so a killed build never leaves a half index to be trusted.
    folder = root / hashlib.sha256(fingerprint.encode()).hexdigest()[:20]
    built, seconds = False, 0.0
    if not _complete(folder, fingerprint):
        started = time.perf_counter()
        _build(root, folder, fingerprint, pages)
        built, seconds = True, time.perf_counter() - started
        _remove_stale(root, keep=folder)
    try:
        client = QdrantClient(path=str(folder), force_disable_check_same_thread=True)
    except RuntimeError as exc:
        if "already accessed" not in str(exc):
            raise RetrievalError(f"cannot open the Minecraft index at {folder}: {exc}") from exc
        # Another process (a second CLI run, `langgraph dev` beside a benchmark) holds the
        # folder lock and embedded Qdrant has no shared mode. Load the same vectors into a
        # private in-memory copy: ~1 s for a thousand pages, identical results.
        client = QdrantClient(location=":memory:")
        _fill(client, pages, np.load(folder / _VECTORS_FILE))
        return MinecraftIndex(client, None, fingerprint, built, seconds, threading.Lock())
    return MinecraftIndex(client, folder, fingerprint, built, seconds, threading.Lock())


def _complete(folder: Path, fingerprint: str) -> bool:
    try:
        marker = json.loads((folder / _FINGERPRINT_FILE).read_text())
    except (OSError, ValueError):
        return False
    return bool(marker.get("fingerprint") == fingerprint and (folder / _VECTORS_FILE).is_file())


def _build(root: Path, folder: Path, fingerprint: str, pages: Sequence[Page]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".build-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        dense = _embed_pages(pages)
        client = QdrantClient(path=str(staging))
        try:
            _fill(client, pages, dense)
        finally:
            client.close()
        np.save(staging / _VECTORS_FILE, dense)
        marker = {"fingerprint": fingerprint, "pages": len(pages), "built_at": time.time()}
        (staging / _FINGERPRINT_FILE).write_text(json.dumps(marker))
        if _complete(folder, fingerprint):
            return  # another process finished the same build first; `finally` drops ours
        if folder.exists():  # incomplete, so not made by a rename: never trusted
            shutil.rmtree(folder, ignore_errors=True)
        try:
            staging.rename(folder)
        except OSError:
            if not _complete(folder, fingerprint):  # lost the race to an equal build
                raise
    except RetrievalError:
        raise
    except Exception as exc:
        raise RetrievalError(f"building the Minecraft index failed: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_stale(root: Path, keep: Path) -> None:
    """Drop indexes of older fingerprints and builds abandoned by dead processes."""
    now = time.time()
    for entry in root.iterdir():
        if entry == keep or not entry.is_dir():
            continue
        try:
            if entry.name.startswith(".build-") and now - entry.stat().st_mtime < _STALE_BUILD_S:
                continue  # maybe another process's build in progress
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)


# --- the retriever -----------------------------------------------------------------------------


class MinecraftRetriever(BaseRetriever):
    """Top-`k` Minecraft item pages for a query; the index is opened on first use."""

    k: int = Field(default=3, ge=1)
    mode: SearchMode = "hybrid"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._search(query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        # Opening the index, embedding and searching all block: `langgraph dev` flags that.
        return await asyncio.to_thread(self._search, query)

    def _search(self, query: str) -> list[Document]:
        return get_index().search(query, self.k, self.mode)


def minecraft_retriever(*, k: int = 3) -> BaseRetriever:
    """The Minecraft knowledge source for RAT's retrieve step."""
    return MinecraftRetriever(k=k)
