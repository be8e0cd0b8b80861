"""Knowledge sources, picked per run by the settings' `retriever` field.

Every retriever is a LangChain `BaseRetriever` whose documents carry `title` and `source`
(URL, file path or corpus id) in their metadata, so citations and prompts never care which
one ran. A name with a colon, `package.module:attribute`, loads the user's own retriever.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Hashable

from langchain_core.retrievers import BaseRetriever

from rat_agent.errors import ConfigError
from rat_agent.providers import imports
from rat_agent.retrieval.settings import RetrieverSettings
from rat_agent.served import current_user


def _minecraft(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.minecraft import minecraft_retriever

    return minecraft_retriever(k=ctx.k)


def _minecraft_wiki(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.wiki import wiki_retriever

    return wiki_retriever(ctx)


def _minecraft_auto(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.wiki import wiki_retriever

    return wiki_retriever(ctx, fallback=True)


def _qdrant(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.qdrant.retriever import qdrant_retriever

    return qdrant_retriever(ctx)


def _tavily(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.tavily import tavily_retriever

    return tavily_retriever(ctx)


def _tavily_pages(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.tavily import tavily_retriever

    return tavily_retriever(ctx, fetch_pages=True)


def _imported(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.imported import import_retriever

    return import_retriever(ctx.retriever, k=ctx.k)


FACTORIES: dict[str, Callable[[RetrieverSettings], BaseRetriever]] = {
    "qdrant": _qdrant,
    "tavily": _tavily,
    "tavily-pages": _tavily_pages,
    "minecraft": _minecraft,
    "minecraft-wiki": _minecraft_wiki,
    "minecraft-auto": _minecraft_auto,
}

_cache: dict[Hashable, BaseRetriever] = {}
_lock = threading.Lock()


def _factory(name: str) -> Callable[[RetrieverSettings], BaseRetriever]:
    if name in FACTORIES:
        return FACTORIES[name]
    if ":" in name:
        imports.check_allowed(name, "retriever")  # before the cache: a built one is no pass
        return _imported
    raise ConfigError(
        f"unknown retriever {name!r}: choose one of {', '.join(FACTORIES)}, "
        "or give a LangChain retriever as 'package.module:attribute'"
    )


# Settings that factories read from the environment: a change builds a new retriever.
_ENV = (
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "TAVILY_API_KEY",
    "TAVILY_API_BASE_URL",
    "MINECRAFT_WIKI_API",
    "RAT_DATA_DIR",
    "RAT_CACHE_DIR",
)


def _key(ctx: RetrieverSettings) -> Hashable:
    # Only what a factory reads; runs that differ elsewhere share one retriever. Secrets
    # are hashed so the cache never holds them in the clear. The served user, as each
    # user's collection names resolve to their own.
    env = tuple(hashlib.sha256(os.environ.get(name, "").encode()).hexdigest() for name in _ENV)
    settings = (ctx.retriever, ctx.k, ctx.collection)
    return (*settings, env, current_user())


def get_retriever(ctx: RetrieverSettings) -> BaseRetriever:
    """The retriever `ctx` names, built once per process and setting.

    Building never touches the network, so it is also the cheap up-front check of a run's
    settings (unknown name, missing API key, missing collection).
    """
    factory = _factory(ctx.retriever)
    key = _key(ctx)
    with _lock:
        if key not in _cache:
            _cache[key] = factory(ctx)
        return _cache[key]


def clear_cache() -> None:
    """Forget built retrievers, so the next run builds from the current environment."""
    with _lock:
        _cache.clear()


def check_retriever(ctx: RetrieverSettings, *, build: bool = True) -> None:
    """Fail fast on bad retriever settings, before any model call is spent; `build=False`
    checks only the name (for a run that will not retrieve, building is wasted time)."""
    if build:
        get_retriever(ctx)
    else:
        _factory(ctx.retriever)
