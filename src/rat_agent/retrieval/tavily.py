"""Web search through Tavily, optionally reading the result pages themselves.

Tavily's snippets are short and chosen for the search query, not for the thought step
being checked, so with `fetch_pages` each result's page is fetched (through the guarded
fetcher: result URLs are untrusted), cut into prompt-sized passages and the passages
closest to the query across all pages are returned instead.

The API key is held as a `SecretStr` and only unwrapped to build the client, so it never
shows in a repr, a log line, an error message or the run's state.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Any

import httpx
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
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
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential

from rat_agent.aio import run_sync
from rat_agent.errors import ConfigError, SourceUnavailable
from rat_agent.retrieval.settings import DOC_CHARS, RetrieverSettings
from rat_agent.retrieval.web import fetch, passages
from rat_agent.text import shorten

log = logging.getLogger(__name__)

KEY_ENV = "TAVILY_API_KEY"
BASE_URL_ENV = "TAVILY_API_BASE_URL"
DEFAULT_BASE_URL = "https://api.tavily.com"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_DETAIL_CHARS = 200  # of a server's error text, quoted in our message


def _transient(exc: BaseException) -> bool:
    """Rate limits, server errors and network trouble pass; a retry can succeed."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code >= 500 or exc.response.status_code == 408
    return isinstance(
        exc,
        UsageLimitExceededError | TavilyTimeoutError | TimeoutError | httpx.TransportError,
    )


@dataclass
class _Candidate:
    """A text that may become a document: a page passage, or a result's snippet."""

    text: str
    title: str
    source: str
    score: float | None
    passage: int | None  # None: the search snippet, the page was not read


class TavilyRetriever(BaseRetriever):
    """Top-`k` web results for a query, as snippets or as the best passages of the pages."""

    api_key: SecretStr = Field(repr=False)
    api_base_url: str = DEFAULT_BASE_URL
    k: int = Field(default=3, ge=1, le=20)  # Tavily's max_results allows 0-20
    fetch_pages: bool = False
    doc_chars: int = Field(default=1200, ge=1)  # a passage is what a prompt shows of a document
    timeout: float = Field(default=20.0, gt=0)  # whole search call, one attempt
    attempts: int = Field(default=4, ge=1)  # tries of a search that fails transiently
    wait_base: float = Field(default=1.0, ge=0)  # first back-off wait, doubled on each retry
    wait_max: float = Field(default=20.0, ge=0)
    page_timeout: float = Field(default=fetch.TIMEOUT, gt=0)
    max_page_bytes: int = Field(default=fetch.MAX_BYTES, ge=1)
    # Only the start of each page's text is split and embedded: every passage of a
    # multi-megabyte page would take minutes to embed on a CPU, and most pages put what
    # they are about first.
    page_chars: int = Field(default=50_000, ge=1)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return run_sync(self._retrieve(query))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return await self._retrieve(query)

    async def _retrieve(self, query: str) -> list[Document]:
        query = query.strip()
        if not query:
            return []
        results = await self._search(query)
        if not self.fetch_pages:
            return [_document(c) for c in _snippets(results)]
        return await self._passages(query, results)

    # --- search ----------------------------------------------------------------------------

    async def _search(self, query: str) -> list[dict[str, Any]]:
        """The search results, retried with exponential back-off while failures are transient."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.wait_base, max=self.wait_max),
            retry=retry_if_exception(_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return await retrying(self._search_once, query)
        except InvalidAPIKeyError as exc:  # every later step would fail the same way
            raise ConfigError(self._message(exc)) from None
        except Exception as exc:  # already retried here: the graph need not retry again
            raise SourceUnavailable(self._message(exc)) from exc

    async def _search_once(self, query: str) -> list[dict[str, Any]]:
        client = AsyncTavilyClient(
            api_key=self.api_key.get_secret_value(), api_base_url=self.api_base_url
        )
        try:
            # Tavily's timeout is httpx's, per read; this one bounds the whole call.
            async with asyncio.timeout(self.timeout):
                reply = await client.search(query, max_results=self.k, timeout=self.timeout)
        finally:
            await client.close()
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise ValueError("the reply has no result list")
        return [r for r in results if isinstance(r, dict)][: self.k]

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "Tavily search attempt %d of %d failed (%s); retrying in %.1f s",
            state.attempt_number,
            self.attempts,
            self._scrub(_describe(exc)),
            wait,
        )

    def _message(self, exc: BaseException) -> str:
        """One readable line for the step's note; the key never appears in it."""
        detail = _detail(exc)
        tries = f" after {self.attempts} attempt{'s' if self.attempts > 1 else ''}"
        if isinstance(exc, InvalidAPIKeyError):
            text = f"Tavily rejected the API key (HTTP 401): check {KEY_ENV}"
        elif isinstance(exc, ForbiddenError):
            text = (
                "Tavily refused the search (HTTP 403, or 432/433: the plan's or the "
                f"key's usage limit){detail}"
            )
        elif isinstance(exc, BadRequestError):
            text = f"Tavily rejected the search request (HTTP 400){detail}"
        elif isinstance(exc, UsageLimitExceededError):
            text = f"Tavily's rate limit (HTTP 429) was still hit{tries}{detail}"
        elif isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            text = f"Tavily search failed with HTTP {status}" + (tries if _transient(exc) else "")
        elif isinstance(exc, TavilyTimeoutError | TimeoutError | httpx.TimeoutException):
            text = f"Tavily search timed out ({self.timeout:g} s per attempt){tries}"
        elif isinstance(exc, httpx.TransportError):
            text = f"cannot reach Tavily at {self.api_base_url}{tries}: {_describe(exc)}"
        elif isinstance(exc, ValueError):
            text = f"Tavily sent an unreadable reply: {_describe(exc)}"
        else:
            text = f"Tavily search failed: {_describe(exc)}"
        return self._scrub(text)

    def _scrub(self, text: str) -> str:
        # Our messages never include the key; a server's error text might echo it.
        key = self.api_key.get_secret_value()
        return text.replace(key, "***") if key else text

    # --- pages -----------------------------------------------------------------------------

    async def _passages(self, query: str, results: list[dict[str, Any]]) -> list[Document]:
        """The `k` passages of all result pages closest to the query."""
        per_result = await asyncio.gather(*(self._read(result) for result in results))
        candidates = [c for group in per_result for c in group]
        if not candidates:
            return []
        # Embedding blocks for a while; keep the event loop free meanwhile.
        best = await asyncio.to_thread(
            passages.closest, query, [c.text for c in candidates], self.k
        )
        return [_document(candidates[i]) for i in best]

    async def _read(self, result: dict[str, Any]) -> list[_Candidate]:
        """The passages of one result's page, or its snippet when the page cannot be read."""
        snippet = _snippet(result)
        url = str(result.get("url") or "")
        if not url:
            return [snippet] if snippet else []
        try:
            page = await fetch.afetch(url, max_bytes=self.max_page_bytes, timeout=self.page_timeout)
        except fetch.FetchError as exc:  # UnsafeURLError included: refused by policy
            log.info("page not read, its search snippet is used instead: %s", exc)
            return [snippet] if snippet else []
        # Parsing and token counting take seconds on big pages.
        title, chunks = await asyncio.to_thread(self._split, page)
        if not chunks:
            return [snippet] if snippet else []
        title = str(result.get("title") or "") or title or url
        score = snippet.score if snippet else _score(result)
        return [_Candidate(text, title, url, score, n) for n, text in enumerate(chunks)]

    def _split(self, page: fetch.Fetched) -> tuple[str, list[str]]:
        """(page title, passages); a passage holds what a prompt shows of one document."""
        title, text = "", page.text  # undecodable bytes already replaced
        if page.content_type in _HTML_TYPES:
            title, text = passages.html_to_text(text)
        text = text[: self.page_chars].strip()
        if not text:
            return title, []
        tokens = passages.tokens_for_chars(self.doc_chars)
        return title, passages.split_text(text, tokens=tokens, overlap=tokens // 10)


def _snippet(result: dict[str, Any]) -> _Candidate | None:
    content = str(result.get("content") or "").strip()
    if not content:
        return None
    url = str(result.get("url") or "")
    title = str(result.get("title") or "") or url or "untitled"
    return _Candidate(content, title, url, _score(result), None)


def _snippets(results: list[dict[str, Any]]) -> list[_Candidate]:
    return [c for c in map(_snippet, results) if c is not None]


def _score(result: dict[str, Any]) -> float | None:
    score = result.get("score")
    return float(score) if isinstance(score, int | float) else None


def _document(candidate: _Candidate) -> Document:
    metadata: dict[str, Any] = {"title": candidate.title, "source": candidate.source}
    if candidate.score is not None:
        metadata["score"] = candidate.score
    if candidate.passage is not None:
        metadata["passage"] = candidate.passage
    return Document(page_content=candidate.text, metadata=metadata)


def _describe(exc: BaseException | None) -> str:
    """One line naming the failure (httpx's status errors run to three)."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _detail(exc: BaseException) -> str:
    """The server's own explanation, when it gave one, shortened."""
    text = shorten(str(exc), _DETAIL_CHARS)
    return f": {text}" if text else ""


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
