"""Your own documents: a Qdrant collection filled by `rat ingest`, searched hybrid."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.client import documents_for, locked_client
from rat_agent.retrieval.settings import RetrieverSettings


class QdrantRetriever(hybrid.HybridRetriever):
    """Top-`k` chunks of one collection for a query."""

    collection: str

    def _search(self, query: str) -> list[Document]:
        with locked_client(f"searching Qdrant collection {self.collection!r}") as client:
            return hybrid.search(client, self.collection, query, self.k, self.mode)


def qdrant_retriever(ctx: RetrieverSettings) -> BaseRetriever:
    with locked_client() as client:
        collection = documents_for(client, ctx.collection)
    return QdrantRetriever(collection=collection, k=ctx.k)
