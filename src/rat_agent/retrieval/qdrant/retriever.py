"""Your own documents: a Qdrant collection filled by `rat ingest`, searched hybrid."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.client import documents_for, locked_client
from rat_agent.retrieval.settings import DRAFT_KEY, DRAFTS, RetrieverSettings
from rat_agent.served import current_user


class QdrantRetriever(hybrid.HybridRetriever):
    """Top-`k` chunks of one collection for a query. In a served user's run the name is
    resolved at each search (`documents_for`): the collection a user makes of a shared
    name is theirs to read from then on, in a retriever built before it."""

    collection: str

    def _search(self, query: str) -> list[Document]:
        with locked_client(f"searching Qdrant collection {self.collection!r}") as client:
            name = documents_for(client, self.collection) if current_user() else self.collection
            return hybrid.search(client, name, query, self.k, self.mode)


def qdrant_retriever(ctx: RetrieverSettings) -> BaseRetriever:
    with locked_client() as client:
        name = documents_for(client, ctx.collection)  # fails fast on one that is not there
        draft = (client.get_collection(name).config.metadata or {}).get("draft")
    declared = {DRAFT_KEY: draft} if draft in DRAFTS else None  # `rat ingest --draft`
    return QdrantRetriever(collection=ctx.collection, k=ctx.k, metadata=declared)
