"""Hybrid search shared by every Qdrant collection this project builds.

Dense MiniLM vectors alone confuse near-identical texts ("Light Blue Glazed Terracotta" vs
"Blue Glazed Terracotta"), so each text also gets a sparse lexical vector (words plus
exact-title phrases, IDF applied by Qdrant) and the two rankings are fused. Fusion is DBSF
(scores normalized per ranking, then summed), not RRF: an exact title match is a score
outlier that RRF flattens to a rank; benchmarks/results/recall.md has the figures.

Written on qdrant-client directly rather than langchain-qdrant (no longer a dependency):
its vector store makes a document's sparse vector from the text alone, while here it also
carries the exact-title phrase tokens, weighted apart, that fix the near-identical titles
above. The payloads keep langchain-qdrant's layout, so its QdrantVectorStore reads them.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field
from qdrant_client import models

from rat_agent.providers.embeddings import DIMENSIONS, get_embeddings
from rat_agent.retrieval.qdrant.edge import Store
from rat_agent.terms import STOPWORDS, words

DENSE = "dense"
SPARSE = "sparse"
_PREFETCH = 40  # candidates each ranking hands to the fusion
_TITLE_WEIGHT = 2.0  # per word of a matched title phrase
_K1, _B = 1.2, 0.75

# "hybrid_rrf" is kept for comparison in the benchmark.
SearchMode = Literal["hybrid", "hybrid_rrf", "dense", "sparse"]


def _index(token: str) -> int:
    return zlib.crc32(token.encode())


def _title_token(title_words: Sequence[str]) -> str:
    return "title:" + " ".join(title_words)


def point(
    point_id: str,
    text: str,
    metadata: Mapping[str, Any],
    dense: Sequence[float],
    sparse: models.SparseVector,
) -> models.PointStruct:
    """One text of a collection: both vectors, and the payload in langchain-qdrant's layout
    (page_content + metadata), so its QdrantVectorStore reads every collection built here."""
    return models.PointStruct(
        id=point_id,
        vector={DENSE: list(dense), SPARSE: sparse},
        payload={"page_content": text, "metadata": dict(metadata)},
    )


def sparse_documents(
    texts: Sequence[str],
    titles: Sequence[Sequence[str]],
    average: float | None = None,
    stopwords: frozenset[str] = STOPWORDS,
) -> list[models.SparseVector]:
    """BM25 term weights (saturated, length-normalized tf); Qdrant multiplies in the IDF.

    Each text also holds one token per title, so a query naming the item exactly ("iron
    ingot", not just "iron") finds that one text above all those mentioning it. `average`
    is the corpus's mean length in words; a growing collection passes a fixed estimate.
    """
    tokenized = [
        words(" ".join([*names, text]), stopwords)
        for text, names in zip(texts, titles, strict=True)
    ]
    if average is None:
        average = sum(map(len, tokenized)) / max(len(tokenized), 1)
    vectors = []
    for names, text_words in zip(titles, tokenized, strict=True):
        norm = _K1 * (1 - _B + _B * len(text_words) / max(average, 1.0))
        weights = {
            _index(word): tf * (_K1 + 1) / (tf + norm) for word, tf in Counter(text_words).items()
        }
        for title in {_title_token(words(name, stopwords)) for name in names}:
            weights[_index(title)] = 1.0
        vectors.append(models.SparseVector(indices=list(weights), values=list(weights.values())))
    return vectors


def sparse_query(text: str, stopwords: frozenset[str] = STOPWORDS) -> models.SparseVector:
    query_words = words(text, stopwords)
    weights: dict[int, float] = {_index(word): 1.0 for word in query_words}
    # Every phrase of up to 5 words might be a title; longer matches weigh more.
    for size in range(1, min(len(query_words), 5) + 1):
        for start in range(len(query_words) - size + 1):
            weights[_index(_title_token(query_words[start : start + size]))] = _TITLE_WEIGHT * size
    return models.SparseVector(indices=list(weights), values=list(weights.values()))


def create_collection(client: Store, name: str, metadata: dict[str, object] | None = None) -> None:
    client.create_collection(
        name,
        vectors_config={
            DENSE: models.VectorParams(size=DIMENSIONS, distance=models.Distance.COSINE)
        },
        sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        metadata=metadata,
    )


def search(
    client: Store,
    collection: str,
    query: str,
    k: int,
    mode: SearchMode = "hybrid",
    query_filter: models.Filter | None = None,
    stopwords: frozenset[str] = STOPWORDS,
) -> list[Document]:
    """Top-`k` distinct documents of a collection in langchain-qdrant's payload layout;
    `stopwords` must be those its sparse vectors were made with.

    A collection may hold one text many times (a file ingested from two folders, a page
    header repeated on every page): the search asks for more and keeps `k` distinct texts,
    so copies never take the places of other passages.
    """
    query = query.strip()
    if k < 1 or not query:
        return []
    limit = max(k, _PREFETCH)
    dense_query = None if mode == "sparse" else get_embeddings().embed_query(query)
    lexical = sparse_query(query, stopwords)
    if mode == "dense":
        result = client.query_points(
            collection,
            query=dense_query,
            using=DENSE,
            limit=limit,
            query_filter=query_filter,
            with_payload=True,
        )
    elif mode == "sparse" or not lexical.indices:
        result = client.query_points(
            collection,
            query=lexical,
            using=SPARSE,
            limit=limit,
            query_filter=query_filter,
            with_payload=True,
        )
    else:
        result = client.query_points(
            collection,
            prefetch=[
                models.Prefetch(query=dense_query, using=DENSE, limit=limit, filter=query_filter),
                models.Prefetch(query=lexical, using=SPARSE, limit=limit, filter=query_filter),
            ],
            query=models.FusionQuery(
                fusion=models.Fusion.RRF if mode == "hybrid_rrf" else models.Fusion.DBSF
            ),
            limit=limit,
            with_payload=True,
        )
    documents: list[Document] = []
    seen: set[str] = set()
    for point in result.points:
        payload = point.payload or {}
        text = str(payload.get("page_content", ""))
        same = " ".join(text.split())
        if same in seen:
            continue
        seen.add(same)
        documents.append(Document(page_content=text, metadata=dict(payload.get("metadata") or {})))
        if len(documents) == k:
            break
    return documents


class HybridRetriever(BaseRetriever):
    """A retriever over a collection built here: `_search` does the (blocking) work."""

    k: int = Field(default=3, ge=1)
    mode: SearchMode = "hybrid"

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._search(query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        # Opening an index, embedding and embedded Qdrant all block: off the event loop
        # (`langgraph dev` flags blocking calls).
        return await asyncio.to_thread(self._search, query)

    def _search(self, query: str) -> list[Document]:
        raise NotImplementedError
