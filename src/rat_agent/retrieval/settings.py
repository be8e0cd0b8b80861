"""What a retriever reads of a run's settings.

A protocol rather than the agent's `Context`, so retrieval sits below the agent: the
agent's `Context` satisfies it, and so does any object with these attributes.
"""

from __future__ import annotations

from typing import Protocol

DEFAULT_COLLECTION = "documents"  # what `rat ingest` fills and retriever "qdrant" searches


class RetrieverSettings(Protocol):
    """The run settings retrievers are built from (see `rat_agent.agent.context`)."""

    @property
    def retriever(self) -> str: ...

    @property
    def k(self) -> int: ...

    @property
    def collection(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def fetch_pages(self) -> bool: ...

    @property
    def doc_chars(self) -> int: ...
