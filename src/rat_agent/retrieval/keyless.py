"""Web search without an API key: a SearXNG instance of the user's (its JSON API) and
DuckDuckGo through `ddgs`, the maintained client. Results are read as Tavily's are (the
snippets, or with "-pages" the best passages of the pages, fetched through the guarded
fetcher), and cited the same way.

- searxng, searxng-pages: SEARXNG_URL is the instance (yours: it may be on your own network;
  its JSON format must be enabled, `search.formats: [html, json]` in its settings.yml).
- duckduckgo, duckduckgo-pages: DuckDuckGo's own results; DDGS_PROXY is honoured.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

import httpx
from langchain_core.retrievers import BaseRetriever

from rat_agent.errors import ConfigError
from rat_agent.retrieval.settings import DOC_CHARS, RetrieverSettings
from rat_agent.retrieval.web.search import WebSearch

SEARXNG_ENV = "SEARXNG_URL"


class SearxngRetriever(WebSearch):
    """Top-`k` results of a SearXNG instance's JSON API."""

    name: str = "SearXNG"
    base_url: str

    async def _search_once(self, query: str) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            reply = await client.get(
                f"{self.base_url}/search", params={"q": query, "format": "json"}
            )
        reply.raise_for_status()
        results = reply.json().get("results")
        if not isinstance(results, list):
            raise ValueError("the reply has no result list")
        return results

    def _fatal(self, exc: BaseException) -> bool:
        return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code == 403

    def _where(self) -> str:
        return f" at {self.base_url}"

    def _message(self, exc: BaseException) -> str:
        if self._fatal(exc):
            return (
                f"SearXNG at {self.base_url} refused its JSON API (HTTP 403): enable it with "
                "`search: formats: [html, json]` in the instance's settings.yml"
            )
        return super()._message(exc)


def _ddgs() -> Any:
    from ddgs import DDGS

    return DDGS()


class DuckDuckGoRetriever(WebSearch):
    """Top-`k` DuckDuckGo results, through ddgs (a blocking client: run in a thread)."""

    name: str = "DuckDuckGo search"
    client: Callable[[], Any] | None = None  # makes the ddgs client (None: ddgs's own)

    async def _search_once(self, query: str) -> list[dict[str, Any]]:
        make = self.client or _ddgs
        found = await asyncio.to_thread(
            lambda: make().text(query, max_results=self.k, backend="duckduckgo")
        )
        return [
            {"url": r.get("href", ""), "title": r.get("title", ""), "content": r.get("body", "")}
            for r in found or []
            if isinstance(r, dict)
        ]

    def _transient(self, exc: BaseException) -> bool:
        from ddgs.exceptions import RatelimitException, TimeoutException

        return super()._transient(exc) or isinstance(exc, RatelimitException | TimeoutException)


def searxng_retriever(ctx: RetrieverSettings, *, fetch_pages: bool = False) -> BaseRetriever:
    """The SearXNG source; its URL is checked here, offline."""
    base = os.environ.get(SEARXNG_ENV, "").strip()
    if not base:
        raise ConfigError(
            f"retriever 'searxng' needs your SearXNG instance: set {SEARXNG_ENV} "
            "(e.g. http://127.0.0.1:8888); no key is needed"
        )
    if not base.startswith(("http://", "https://")):
        raise ConfigError(f"{SEARXNG_ENV} must be an http(s) URL, got {base!r}")
    return SearxngRetriever(
        base_url=base.rstrip("/"), k=ctx.k, fetch_pages=fetch_pages, doc_chars=DOC_CHARS
    )


def duckduckgo_retriever(ctx: RetrieverSettings, *, fetch_pages: bool = False) -> BaseRetriever:
    """The DuckDuckGo source: no key, no set-up."""
    return DuckDuckGoRetriever(k=ctx.k, fetch_pages=fetch_pages, doc_chars=DOC_CHARS)
