"""What every web search source shares: a search with retries, then the result snippets or,
with `fetch_pages`, the passages of the result pages closest to the query.

Search snippets are short and chosen for the search query, not for the thought step being
checked, so with `fetch_pages` each result's page is fetched (through the guarded fetcher:
result URLs are untrusted), cut into prompt-sized passages and the passages closest to the
query across all pages are returned instead. A source (Tavily, SearXNG, DuckDuckGo) says
how to search once and how to name its failures; results are dicts with url, title,
content and, where the engine gives one, score.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import httpx
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential

from rat_agent.aio import run_sync
from rat_agent.errors import ConfigError, SourceUnavailable
from rat_agent.retrieval.web import fetch, passages
from rat_agent.text import shorten

log = logging.getLogger(__name__)

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_DETAIL_CHARS = 200  # of a server's error text, quoted in our message


@dataclass
class _Candidate:
    """A text that may become a document: a page passage, or a result's snippet."""

    text: str
    title: str
    source: str
    score: float | None
    passage: int | None  # None: the search snippet, the page was not read


class WebSearch(BaseRetriever):
    """Top-`k` web results for a query, as snippets or as the best passages of the pages."""

    name: str = "web search"  # the source, as messages name it
    k: int = Field(default=3, ge=1, le=20)
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
            retry=retry_if_exception(self._transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return await retrying(self._timed_search, query)
        except ConfigError:
            raise
        except Exception as exc:  # already retried here: the graph need not retry again
            if self._fatal(exc):  # every later step would fail the same way
                raise ConfigError(self._message(exc)) from None
            raise SourceUnavailable(self._message(exc)) from exc

    async def _timed_search(self, query: str) -> list[dict[str, Any]]:
        async with asyncio.timeout(self.timeout):  # bounds the whole call, not one read
            results = await self._search_once(query)
        return [r for r in results if isinstance(r, dict)][: self.k]

    async def _search_once(self, query: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _transient(self, exc: BaseException) -> bool:
        """Rate limits, server errors and network trouble pass; a retry can succeed."""
        if isinstance(exc, httpx.HTTPStatusError):
            return exc.response.status_code >= 500 or exc.response.status_code in (408, 429)
        return isinstance(exc, TimeoutError | httpx.TransportError)

    def _fatal(self, exc: BaseException) -> bool:
        """A failure no later search would escape (a key refused): the run stops on it."""
        return False

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s attempt %d of %d failed (%s); retrying in %.1f s",
            self.name,
            state.attempt_number,
            self.attempts,
            self._scrub(describe(exc)),
            wait,
        )

    def _message(self, exc: BaseException) -> str:
        """One readable line for the step's note."""
        tries = f" after {self.attempts} attempt{'s' if self.attempts > 1 else ''}"
        if isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            text = f"{self.name} failed with HTTP {status}" + (
                tries if self._transient(exc) else ""
            )
        elif isinstance(exc, TimeoutError | httpx.TimeoutException):
            text = f"{self.name} timed out ({self.timeout:g} s per attempt){tries}"
        elif isinstance(exc, httpx.TransportError):
            text = f"cannot reach {self.name}{self._where()}{tries}: {describe(exc)}"
        elif isinstance(exc, ValueError):
            text = f"{self.name} sent an unreadable reply: {describe(exc)}"
        else:
            text = f"{self.name} failed: {describe(exc)}"
        return self._scrub(text)

    def _where(self) -> str:
        """Where the source was sought, for a message (" at URL"), or ""."""
        return ""

    def _scrub(self, text: str) -> str:
        """A message as it may be shown (a source with a key masks it here)."""
        return text

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


def describe(exc: BaseException | None) -> str:
    """One line naming the failure (httpx's status errors run to three)."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def detail(exc: BaseException) -> str:
    """The server's own explanation, when it gave one, shortened."""
    text = shorten(str(exc), _DETAIL_CHARS)
    return f": {text}" if text else ""
