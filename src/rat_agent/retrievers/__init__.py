"""Knowledge sources, picked per run by name.

Every retriever is a LangChain `BaseRetriever` whose documents carry `title` and `source`
(URL or corpus id) in their metadata, so citations and prompts never care which one ran.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from langchain_core.retrievers import BaseRetriever

from rat_agent.errors import ConfigError


def _minecraft(k: int) -> BaseRetriever:
    from rat_agent.retrievers.minecraft import minecraft_retriever

    return minecraft_retriever(k=k)


FACTORIES: dict[str, Callable[[int], BaseRetriever]] = {
    "minecraft": _minecraft,
}

_cache: dict[tuple[str, int], BaseRetriever] = {}
_lock = threading.Lock()


def check_retriever(name: str) -> None:
    """Fail fast on an unknown name, before any model call is spent."""
    if name not in FACTORIES:
        raise ConfigError(f"unknown retriever {name!r}: choose one of {', '.join(FACTORIES)}")


def get_retriever(name: str, *, k: int) -> BaseRetriever:
    """The named retriever returning `k` documents, built once per process."""
    check_retriever(name)
    with _lock:
        if (name, k) not in _cache:
            _cache[(name, k)] = FACTORIES[name](k)
        return _cache[(name, k)]
