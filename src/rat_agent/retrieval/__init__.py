"""Knowledge sources: a registry that builds the retriever a run's settings name."""

from rat_agent.retrieval.registry import (
    FACTORIES,
    check_retriever,
    clear_cache,
    get_retriever,
)
from rat_agent.retrieval.settings import RetrieverSettings

__all__ = ["FACTORIES", "RetrieverSettings", "check_retriever", "clear_cache", "get_retriever"]
