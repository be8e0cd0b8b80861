"""Offline Minecraft knowledge: item pages in an embedded Qdrant (Edge) index, searched hybrid
(dense + lexical, see hybrid.py) because item names differ by one word.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from rat_agent import terms
from rat_agent.errors import RetrievalError
from rat_agent.paths import cache_dir
from rat_agent.providers.embeddings import embedding_model_id, get_embeddings
from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.edge import EdgeClient, InUse
from rat_agent.retrieval.qdrant.hybrid import SearchMode
from rat_agent.retrieval.settings import RetrieverSettings
from rat_agent.timing import once_cost
from rat_minecraft import METADATA
from rat_minecraft.corpus import (
    QUESTION_WORDS,
    SOURCE_PREFIX,
    Page,
    build_pages,
    corpus_fingerprint,
)

COLLECTION = "minecraft"
log = logging.getLogger(__name__)

# Bump when the way pages become vectors changes (sparse encoder, payload layout).
INDEX_VERSION = "2"  # 2: Qdrant Edge
_FINGERPRINT_FILE = "fingerprint.json"
STOPWORDS = terms.STOPWORDS | QUESTION_WORDS
_VECTORS_FILE = "dense.npy"
_STALE_BUILD_S = 3600  # an unfinished build folder older than this belongs to a dead process


# --- the index ---------------------------------------------------------------------------------


def _point_id(page_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, SOURCE_PREFIX + page_id))


def _metadata(page: Page) -> dict[str, str]:
    return {"title": page.title, "source": SOURCE_PREFIX + page.id, "id": page.id}


def _fill(client: EdgeClient, pages: Sequence[Page], dense: np.ndarray) -> None:
    hybrid.create_collection(client, COLLECTION)
    sparse = hybrid.sparse_documents(
        [page.text for page in pages],
        [(page.title, page.id) for page in pages],
        stopwords=STOPWORDS,
    )
    points = [
        hybrid.point(_point_id(page.id), page.text, _metadata(page), vector.tolist(), lexical)
        for page, vector, lexical in zip(pages, dense, sparse, strict=True)
    ]
    client.upload_points(COLLECTION, points, batch_size=256)
    client.optimize(COLLECTION)


def _embed_pages(pages: Sequence[Page]) -> np.ndarray:
    # MiniLM reads the first 256 word pieces: the title and how to obtain the item.
    vectors = get_embeddings().embed_documents([page.text for page in pages])
    return np.asarray(vectors, dtype=np.float32)


@dataclass
class MinecraftIndex:
    """An open index: `built` says whether opening it had to (re)build it."""

    client: EdgeClient
    path: Path | None  # None: a private copy (another process holds the index)
    fingerprint: str
    built: bool
    build_seconds: float
    lock: threading.Lock
    private: Path | None = None  # the private copy's folder, removed on close

    def search(self, query: str, k: int, mode: SearchMode = "hybrid") -> list[Document]:
        try:
            with self.lock:
                return hybrid.search(self.client, COLLECTION, query, k, mode, stopwords=STOPWORDS)
        except Exception as exc:  # qdrant raises several unrelated types
            raise RetrievalError(f"Minecraft index query failed: {exc}") from exc

    def close(self) -> None:
        with self.lock:
            self.client.close()
        if self.private:
            shutil.rmtree(self.private, ignore_errors=True)


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

    An Edge shard is open in one process at a time, so clients are shared.
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
        with once_cost("qdrant open"):
            index = _open(root, fingerprint, pages)
        _indexes[root] = index
        return index


def close_indexes() -> None:
    """Release the folder locks, e.g. before another process needs the index."""
    with _indexes_lock:
        for index in _indexes.values():
            index.close()
        _indexes.clear()


# Closing at exit releases the shard's lock cleanly, and removes a private copy.
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
        client = _connect(folder)
    except InUse:
        # Another process (a second CLI run, `langgraph dev` beside a benchmark) holds the
        # shard. Load the same vectors into a private copy: ~1 s for a thousand pages,
        # identical results.
        private = Path(tempfile.mkdtemp(prefix="rat-minecraft-"))
        copy = EdgeClient(private)
        _fill(copy, pages, np.load(folder / _VECTORS_FILE))
        return MinecraftIndex(copy, None, fingerprint, built, seconds, threading.Lock(), private)
    except RetrievalError as exc:
        client, built, seconds = _rebuild(root, folder, fingerprint, pages, exc)
    return MinecraftIndex(client, folder, fingerprint, built, seconds, threading.Lock())


def _connect(folder: Path) -> EdgeClient:
    """The built index, loaded now: InUse when another process holds it, RetrievalError
    when it is damaged."""
    client = EdgeClient(folder)
    if not client.collection_exists(COLLECTION):
        reason = client.damaged.get(COLLECTION, "no index in it")
        client.close()
        raise RetrievalError(reason)
    return client


def _rebuild(
    root: Path, folder: Path, fingerprint: str, pages: Sequence[Page], exc: Exception
) -> tuple[EdgeClient, bool, float]:
    """A damaged index (a disk that filled up, a copy cut short) is derived data: build it
    again rather than fail every run that searches it."""
    log.warning("the Minecraft index at %s is damaged (%s): rebuilding it", folder, exc)
    started = time.perf_counter()
    shutil.rmtree(folder, ignore_errors=True)
    _build(root, folder, fingerprint, pages)
    try:
        client = _connect(folder)
    except RetrievalError as again:
        raise RetrievalError(f"cannot open the Minecraft index at {folder}: {again}") from again
    return client, True, time.perf_counter() - started


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
        client = EdgeClient(staging)
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


class MinecraftRetriever(hybrid.HybridRetriever):
    """Top-`k` Minecraft item pages for a query; the index is opened on first use."""

    metadata: dict[str, Any] | None = Field(default_factory=lambda: dict(METADATA))

    def _search(self, query: str) -> list[Document]:
        return get_index().search(query, self.k, self.mode)


def minecraft_retriever(*, k: int = 3) -> BaseRetriever:
    """The Minecraft knowledge source for RAT's retrieve step."""
    return MinecraftRetriever(k=k)


def corpus_retriever(settings: RetrieverSettings) -> BaseRetriever:
    """Retriever "minecraft" (entry point): the bundled offline corpus."""
    return minecraft_retriever(k=settings.k)
