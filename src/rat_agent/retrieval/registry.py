"""Knowledge sources, picked per run by the settings' `retriever` field.

Every retriever is a LangChain `BaseRetriever` whose documents carry `title` and `source`
(URL, file path or corpus id) in their metadata, so citations and prompts never care which
one ran. Built in: qdrant, tavily, tavily-pages, and without a key searxng, searxng-pages,
duckduckgo, duckduckgo-pages; an installed plug-in adds its own by name
(rat_agent.plugins); a name with a colon, `package.module:attribute`, loads the user's own.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Hashable

from langchain_core.retrievers import BaseRetriever

from rat_agent import plugins
from rat_agent.errors import ConfigError
from rat_agent.providers import imports
from rat_agent.retrieval.settings import RetrieverSettings, Source
from rat_agent.served import current_user


def _qdrant(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.qdrant.retriever import qdrant_retriever

    return qdrant_retriever(ctx)


def _tavily(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.tavily import tavily_retriever

    return tavily_retriever(ctx)


def _tavily_pages(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.tavily import tavily_retriever

    return tavily_retriever(ctx, fetch_pages=True)


def _searxng(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.keyless import searxng_retriever

    return searxng_retriever(ctx)


def _searxng_pages(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.keyless import searxng_retriever

    return searxng_retriever(ctx, fetch_pages=True)


def _duckduckgo(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.keyless import duckduckgo_retriever

    return duckduckgo_retriever(ctx)


def _duckduckgo_pages(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.keyless import duckduckgo_retriever

    return duckduckgo_retriever(ctx, fetch_pages=True)


def _imported(ctx: RetrieverSettings) -> BaseRetriever:
    from rat_agent.retrieval.imported import import_retriever

    return import_retriever(ctx.retriever, k=ctx.k)


Build = Callable[[RetrieverSettings], BaseRetriever]
_QDRANT_ENV = ("QDRANT_URL", "QDRANT_API_KEY")
_TAVILY_ENV = ("TAVILY_API_KEY", "TAVILY_API_BASE_URL")
_SEARXNG_ENV = ("SEARXNG_URL",)
_DDGS_ENV = ("DDGS_PROXY",)
# The built-in sources; installed plug-ins add theirs by entry point (rat_agent.plugins).
FACTORIES: dict[str, Source | Build] = {
    "qdrant": Source(_qdrant, _QDRANT_ENV),
    "tavily": Source(_tavily, _TAVILY_ENV),
    "tavily-pages": Source(_tavily_pages, _TAVILY_ENV),
    "searxng": Source(_searxng, _SEARXNG_ENV),
    "searxng-pages": Source(_searxng_pages, _SEARXNG_ENV),
    "duckduckgo": Source(_duckduckgo, _DDGS_ENV),
    "duckduckgo-pages": Source(_duckduckgo_pages, _DDGS_ENV),
}
# Every source may read these: where the stores and caches are.
_ENV = ("RAT_DATA_DIR", "RAT_CACHE_DIR")


def names() -> list[str]:
    """Every source a run may name, built-in and installed."""
    return [*FACTORIES, *sorted(plugins.installed(plugins.RETRIEVERS))]


def _source(name: str) -> Source:
    if name in FACTORIES:
        return _as_source(FACTORIES[name])
    if name in plugins.installed(plugins.RETRIEVERS):
        return _as_source(plugins.load(plugins.RETRIEVERS, name))
    if ":" in name:
        imports.check_allowed(name, "retriever")  # before the cache: a built one is no pass
        return Source(_imported)
    raise ConfigError(
        f"unknown retriever {name!r}: choose one of {', '.join(names())}, "
        "or give a LangChain retriever as 'package.module:attribute'"
    )


def _as_source(made: Source | Build) -> Source:
    return made if isinstance(made, Source) else Source(made)


_cache: dict[Hashable, BaseRetriever] = {}
_lock = threading.Lock()


def _key(ctx: RetrieverSettings, source: Source) -> Hashable:
    # Only what a factory reads; runs that differ elsewhere share one retriever. Secrets
    # are hashed so the cache never holds them in the clear. The served user, as each
    # user's collection names resolve to their own.
    env = tuple(
        hashlib.sha256(os.environ.get(name, "").encode()).hexdigest()
        for name in (*_ENV, *source.environment)
    )
    settings = (ctx.retriever, ctx.k, ctx.collection)
    return (*settings, env, current_user())


def get_retriever(ctx: RetrieverSettings) -> BaseRetriever:
    """The retriever `ctx` names, built once per process and setting.

    Building never touches the network, so it is also the cheap up-front check of a run's
    settings (unknown name, missing API key, missing collection).
    """
    source = _source(ctx.retriever)
    key = _key(ctx, source)
    with _lock:
        if key not in _cache:
            _cache[key] = source.build(ctx)
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
        _source(ctx.retriever)
