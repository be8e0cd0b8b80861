"""Web search through Tavily (retriever "tavily"; "tavily-pages" reads the result pages).

The API key is held as a `SecretStr` and only unwrapped to build the client, so it never
shows in a repr, a log line, an error message or the run's state.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.retrievers import BaseRetriever
from pydantic import Field, SecretStr
from tavily import AsyncTavilyClient
from tavily.errors import (
    BadRequestError,
    ForbiddenError,
    InvalidAPIKeyError,
    UsageLimitExceededError,
)
from tavily.errors import TimeoutError as TavilyTimeoutError

from rat_agent.errors import ConfigError
from rat_agent.retrieval.settings import DOC_CHARS, RetrieverSettings
from rat_agent.retrieval.web.search import WebSearch, detail

KEY_ENV = "TAVILY_API_KEY"
BASE_URL_ENV = "TAVILY_API_BASE_URL"
DEFAULT_BASE_URL = "https://api.tavily.com"


class TavilyRetriever(WebSearch):
    """Top-`k` Tavily results (max_results allows 0-20)."""

    name: str = "Tavily search"
    api_key: SecretStr = Field(repr=False)
    api_base_url: str = DEFAULT_BASE_URL

    async def _search_once(self, query: str) -> list[dict[str, Any]]:
        client = AsyncTavilyClient(
            api_key=self.api_key.get_secret_value(), api_base_url=self.api_base_url
        )
        try:  # Tavily's timeout is httpx's, per read
            reply = await client.search(query, max_results=self.k, timeout=self.timeout)
        finally:
            await client.close()
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise ValueError("the reply has no result list")
        return results

    def _transient(self, exc: BaseException) -> bool:
        return super()._transient(exc) or isinstance(
            exc, UsageLimitExceededError | TavilyTimeoutError
        )

    def _fatal(self, exc: BaseException) -> bool:
        return isinstance(exc, InvalidAPIKeyError)

    def _message(self, exc: BaseException) -> str:
        """One readable line for the step's note; the key never appears in it."""
        said = detail(exc)
        tries = f" after {self.attempts} attempt{'s' if self.attempts > 1 else ''}"
        if isinstance(exc, InvalidAPIKeyError):
            text = f"Tavily rejected the API key (HTTP 401): check {KEY_ENV}"
        elif isinstance(exc, ForbiddenError):
            text = (
                "Tavily refused the search (HTTP 403, or 432/433: the plan's or the "
                f"key's usage limit){said}"
            )
        elif isinstance(exc, BadRequestError):
            text = f"Tavily rejected the search request (HTTP 400){said}"
        elif isinstance(exc, UsageLimitExceededError):
            text = f"Tavily's rate limit (HTTP 429) was still hit{tries}{said}"
        elif isinstance(exc, TavilyTimeoutError):
            text = f"Tavily search timed out ({self.timeout:g} s per attempt){tries}"
        else:
            return super()._message(exc)
        return self._scrub(text)

    def _where(self) -> str:
        return f" at {self.api_base_url}"

    def _scrub(self, text: str) -> str:
        # Our messages never include the key; a server's error text might echo it.
        key = self.api_key.get_secret_value()
        return text.replace(key, "***") if key else text


def tavily_retriever(ctx: RetrieverSettings, *, fetch_pages: bool = False) -> BaseRetriever:
    """The Tavily source for RAT's retrieve step (retriever "tavily"; with `fetch_pages`,
    "tavily-pages"); settings are checked here, offline."""
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        raise ConfigError(
            f"retriever 'tavily' needs an API key: set {KEY_ENV} (get one at https://tavily.com)"
        )
    base = os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL
    if not base.startswith(("http://", "https://")):
        raise ConfigError(f"{BASE_URL_ENV} must be an http(s) URL, got {base!r}")
    return TavilyRetriever(
        api_key=SecretStr(key),
        api_base_url=base.rstrip("/"),
        k=ctx.k,
        fetch_pages=fetch_pages,
        doc_chars=DOC_CHARS,
    )
