"""The live Minecraft Wiki as a knowledge source, read through its MediaWiki Action API.

A query is searched (`list=search`), the top few pages are fetched (`action=parse`),
cleaned to text, cut into passages and ranked by embedding similarity, so the documents a
step is checked against are the passages of current wiki pages closest to its query.
Everything comes through `rat_agent.retrieval.web.fetch`, whose address policy applies to
the endpoint and every redirect; titles travel as query parameters, never pasted into a URL by hand.

Retriever "minecraft-wiki" raises `RetrievalError` when the wiki fails (the step stays
unrevised); "minecraft-auto" answers from the bundled offline corpus while the wiki is
unreachable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from bs4 import BeautifulSoup
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from rat_agent import terms
from rat_agent.aio import run_sync
from rat_agent.errors import ConfigError, RetrievalError
from rat_agent.paths import cache_dir, write_atomic
from rat_agent.retrieval.settings import DOC_CHARS, RetrieverSettings, Source
from rat_agent.retrieval.web import passages
from rat_agent.retrieval.web.fetch import (
    TIMEOUT,
    Fetched,
    FetchError,
    UnsafeURLError,
    afetch,
)
from rat_agent.retrieval.web.fetch import USER_AGENT as _FETCH_AGENT
from rat_minecraft import METADATA
from rat_minecraft.corpus import QUESTION_WORDS

log = logging.getLogger(__name__)

ENV_API = "MINECRAFT_WIKI_API"
DEFAULT_API = "https://minecraft.wiki/api.php"
# MediaWiki's User-Agent policy asks bots to say who they are and how to reach the operator.
USER_AGENT = f"{_FETCH_AGENT} minecraft-wiki-retriever"
_HEADERS = {"User-Agent": USER_AGENT, "Accept": "application/json"}
_JSON = ("application/json",)

PAPER_CHUNK_TOKENS = 2000  # the RAT paper cuts retrieved pages into chunks of 2,000 tokens
MAX_PAGES = 3  # pages fetched per query: each costs a request and embedding its passages
# Minecraft Wiki pages open with the lead, obtaining and usage; what follows is mostly
# history tables, issues and trivia, cut off here.
MAX_PAGE_CHARS = 30_000
# Embedding a passage costs ~0.1-0.2 s on a small CPU, and three long pages cut for a short
# doc_chars make a hundred passages or more. Only the passages sharing the most query
# words are embedded, so a step's ranking costs a few seconds at most, whatever the pages.
MAX_CANDIDATES = 24
MAX_QUERY_CHARS = 300  # CirrusSearch rejects longer search strings
# A page is re-fetched after a week: item facts change with releases, months apart, and
# weekly snapshots rarely touch a given page, so a week-old copy is almost always current;
# meanwhile repeated runs (benchmarks, retries) cost the volunteer-run wiki nothing.
CACHE_TTL_S = 7 * 24 * 3600
CACHE_VERSION = 1  # bump when the cleaning (DROP, page_text) changes: cached text is cleaned text
# "auto": how long a wiki that did not answer is skipped, so later steps of the same run do
# not each wait for the timeout again, and how long the first request of a step may take.
DOWN_FOR_S = 60.0
AUTO_TIMEOUT = 5.0

# Site chrome and apparatus in the parsed page HTML: navigation boxes, the table of
# contents, "[edit]" links, footnote markers and lists, galleries, infobox images, hatnotes
# ("For other uses, see ...") and the crafting GUI's item slots (pictures, no text).
DROP: tuple[str, ...] = (
    ".navbox",
    ".navbox-wrapper",
    "#toc",
    ".toc",
    ".mw-editsection",
    "sup.reference",
    "ol.references",
    ".mw-references-wrap",
    ".reflist",
    ".mw-cite-backlink",
    ".infobox-imagearea",
    "ul.gallery",
    ".gallery",
    ".hatnote",
    ".navigation-not-searchable",
    ".noprint",
    ".mcui",
    ".mw-empty-elt",
    ".sortkey",
    ".error",
    "img",
    "figure",
)

_STOPWORDS = terms.STOPWORDS | {"minecraft", "step", "when"}
_WORD = re.compile(r"[\w'-]+")
_SEARCH_KEYWORD = re.compile(
    r"\b(?:insource|intitle|incategory|deepcat(?:egory)?|prefix|linksto|hastemplate|morelike"
    r"|filetype|filemime|subpageof|articletopic|pageid|boost-templates|local)\s*:",
    re.IGNORECASE,
)
_HEADING = "\ue000"  # a private-use character marks headings through the text conversion
_HEADING_LINE = re.compile(_HEADING + r"([^\n]*)\n+")

_down_until: dict[str, float] = {}
_down_lock = threading.Lock()


# --- settings --------------------------------------------------------------------------------


def wiki_endpoint() -> str:
    """The api.php URL from MINECRAFT_WIKI_API, checked for shape only (no network)."""
    endpoint = (os.environ.get(ENV_API) or DEFAULT_API).strip()
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{ENV_API} must be the http(s) URL of the wiki's api.php, got {endpoint!r}"
        )
    return endpoint


def page_url(endpoint: str, title: str) -> str:
    """The reader's URL of a page: api.php's folder, then w/Title_with_underscores."""
    parts = urlsplit(endpoint)
    folder = parts.path.rsplit("/", 1)[0] if "/" in parts.path else ""
    # MediaWiki's own escaping (wfUrlencode) leaves these readable; everything else is quoted.
    path = f"{folder}/w/" + quote(title.replace(" ", "_"), safe=";@$!*(),/~:")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def chunk_tokens(doc_chars: int) -> int:
    """Passage size: the paper's 2,000 tokens, or less when the prompt shows less.

    The prompt shows only `doc_chars` of each document, so a passage no longer than that
    means the passage ranked best is exactly the text the model reads, not a cut-off head.
    """
    return min(PAPER_CHUNK_TOKENS, passages.tokens_for_chars(doc_chars))


def relaxed_query(query: str) -> str:
    """Keywords joined by OR: the wiki's search wants every word, a step rarely has them all."""
    words = [w.strip("'-") for w in _WORD.findall(query.lower())]
    keywords = list(dict.fromkeys(w for w in words if w and w not in _STOPWORDS))
    return " OR ".join(keywords[:10])


def _search_text(query: str) -> str:
    """The query as plain words: no search keywords, at most MAX_QUERY_CHARS.

    The query is model-written from text that may come from the wiki itself; CirrusSearch
    keywords such as insource:/regex/ would let it run the wiki's most expensive searches.
    """
    query = " ".join(_SEARCH_KEYWORD.sub(" ", query).split())
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
    return query


# --- the API ---------------------------------------------------------------------------------


def _search_params(query: str, limit: int) -> dict[str, str]:
    return {
        "action": "query",
        "list": "search",
        "srsearch": query,
        "srlimit": str(limit),
        "srnamespace": "0",
        "srprop": "",
        "format": "json",
        "formatversion": "2",
    }


def _parse_params(title: str) -> dict[str, str]:
    return {
        "action": "parse",
        "page": title,
        "prop": "text",
        "redirects": "1",
        "disableeditsection": "1",
        "disablelimitreport": "1",
        "format": "json",
        "formatversion": "2",
    }


def _json(fetched: Fetched, what: str) -> dict[str, Any]:
    if fetched.truncated:
        raise RetrievalError(f"Minecraft Wiki {what}: the answer is larger than the size cap")
    try:
        data = json.loads(fetched.text)
    except ValueError:
        raise RetrievalError(f"Minecraft Wiki {what}: the answer is not JSON") from None
    if not isinstance(data, dict):
        raise RetrievalError(f"Minecraft Wiki {what}: unexpected answer")
    return data


def _api_error(data: dict[str, Any], what: str) -> RetrievalError:
    error = data.get("error") or {}
    info = str(error.get("info") or error.get("code") or "unknown error")[:300]
    return RetrievalError(f"Minecraft Wiki {what}: {info}")


def _titles(data: dict[str, Any]) -> list[str]:
    if "error" in data:
        raise _api_error(data, "search")
    hits = (data.get("query") or {}).get("search") or []
    titles = [str(hit["title"]) for hit in hits if isinstance(hit, dict) and hit.get("title")]
    return list(dict.fromkeys(titles))


@dataclass(frozen=True)
class WikiPage:
    """A fetched page: `title` after redirects, `text` cleaned of site chrome."""

    title: str
    text: str


def _page(data: dict[str, Any], requested: str) -> WikiPage | None:
    """The cleaned page of a parse answer; None when the page does not exist."""
    if "error" in data:
        if (data["error"] or {}).get("code") in ("missingtitle", "invalidtitle"):
            return None  # search can list a page deleted since its index was built
        raise _api_error(data, f"page {requested!r}")
    parsed = data.get("parse") or {}
    html = parsed.get("text")
    if isinstance(html, dict):  # formatversion=1 wraps it: {"*": "<div ...>"}
        html = html.get("*")
    if not isinstance(html, str):
        raise RetrievalError(f"Minecraft Wiki page {requested!r}: the answer has no text")
    return WikiPage(str(parsed.get("title") or requested), page_text(html))


def page_text(html: str) -> str:
    """The page's readable text, each heading kept on the line above its section's text.

    The splitter cuts at blank lines first; a heading left alone on its paragraph would end
    one passage while its section began the next, and neither would rank for it.
    """
    soup = BeautifulSoup(html.replace(_HEADING, ""), "html.parser")
    for heading in soup(["h1", "h2", "h3", "h4", "h5", "h6"]):
        heading.insert(0, _HEADING)
    _, text = passages.html_to_text(str(soup), drop=DROP)
    return _HEADING_LINE.sub(r"\1\n", text).replace(_HEADING, "")


# --- the page cache --------------------------------------------------------------------------


def cache_folder() -> Path:
    return cache_dir() / "minecraft-wiki"


def _cache_file(endpoint: str, title: str) -> Path:
    key = hashlib.sha256(f"{CACHE_VERSION}\n{endpoint}\n{title}".encode()).hexdigest()[:32]
    return cache_folder() / f"{key}.json"


def read_cached(endpoint: str, title: str) -> WikiPage | None:
    """The cached page if it is fresh; anything unreadable counts as not cached."""
    try:
        entry = json.loads(_cache_file(endpoint, title).read_text(encoding="utf-8"))
        age = time.time() - float(entry["fetched_at"])
        if (entry["endpoint"], entry["requested"]) != (endpoint, title):
            return None  # a hash collision, however unlikely, must not serve another page
        if not 0 <= age < CACHE_TTL_S:
            return None
        return WikiPage(str(entry["title"]), str(entry["text"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cached(endpoint: str, title: str, page: WikiPage) -> None:
    """Written aside and renamed, so a reader never sees half a file; failures only log."""
    entry = {
        "endpoint": endpoint,
        "requested": title,
        "title": page.title,
        "text": page.text,
        "fetched_at": time.time(),
    }
    target = _cache_file(endpoint, title)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps(entry))
    except OSError as exc:
        log.warning("could not cache Minecraft Wiki page %r: %s", title, exc)
        return
    _prune_once(target.parent)


_pruned: set[Path] = set()


def _prune_once(folder: Path) -> None:
    """Once per process and folder, delete expired pages and writes abandoned by a crash."""
    if folder in _pruned:
        return
    _pruned.add(folder)
    now = time.time()
    for file in [*folder.glob("*.json"), *folder.glob(".*.tmp")]:
        try:
            age = now - file.stat().st_mtime
            if age > CACHE_TTL_S or (file.suffix == ".tmp" and age > 3600):
                file.unlink()
        except OSError:
            continue


# --- outages ---------------------------------------------------------------------------------


def is_outage(exc: BaseException) -> bool:
    """Unreachable, timed out or failing server-side: what "auto" answers offline for.

    A refusal by the address policy is a setting, not an outage, so it is not hidden.
    """
    if isinstance(exc, UnsafeURLError):
        return False
    if isinstance(exc, FetchError):
        return exc.status is None or exc.status == 429 or exc.status >= 500
    return isinstance(exc, TimeoutError | OSError)


def _is_down(endpoint: str) -> bool:
    with _down_lock:
        return _down_until.get(endpoint, 0.0) > time.monotonic()


def _mark_down(endpoint: str) -> None:
    with _down_lock:
        _down_until[endpoint] = time.monotonic() + DOWN_FOR_S


def forget_outages() -> None:
    """Try the wiki again at the next query (tests, or after the network came back)."""
    with _down_lock:
        _down_until.clear()


# --- the retriever ---------------------------------------------------------------------------


class MinecraftWikiRetriever(BaseRetriever):
    """The `k` wiki passages closest to a query; with `fallback`, offline while it is down."""

    endpoint: str
    k: int = Field(default=3, ge=1)
    doc_chars: int = Field(default=1200, ge=1)
    fallback: BaseRetriever | None = None  # set for source "auto"
    metadata: dict[str, Any] | None = Field(default_factory=lambda: dict(METADATA))

    @property
    def timeout(self) -> float:
        return AUTO_TIMEOUT if self.fallback is not None else TIMEOUT

    # One async core; the sync half runs it (rat_agent.aio.run_sync).

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.fallback is not None and _is_down(self.endpoint):
            return self.fallback.invoke(query, {"callbacks": run_manager.get_child()})
        try:
            return run_sync(self._awiki(query))
        except RetrievalError as exc:
            if self.fallback is None or not is_outage(exc):
                raise
            self._went_down(exc)
            return self.fallback.invoke(query, {"callbacks": run_manager.get_child()})

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.fallback is not None and _is_down(self.endpoint):
            return await self.fallback.ainvoke(query, {"callbacks": run_manager.get_child()})
        try:
            return await self._awiki(query)
        except RetrievalError as exc:
            if self.fallback is None or not is_outage(exc):
                raise
            self._went_down(exc)
            return await self.fallback.ainvoke(query, {"callbacks": run_manager.get_child()})

    async def _awiki(self, query: str) -> list[Document]:
        query = _search_text(query)
        if not query:
            return []
        titles = await self._asearch(query)
        if not titles:
            relaxed = relaxed_query(query)
            if relaxed and relaxed != query.lower():
                titles = await self._asearch(relaxed)
        if not titles:
            return []
        results = await asyncio.gather(
            *(self._afetch_page(t) for t in titles), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, RetrievalError):
                raise result  # a bug or a cancellation, not a wiki failure
        pages = _pages(results)
        # Tokenizing and embedding block for a second or more: off the event loop.
        return await asyncio.to_thread(self._rank, query, pages)

    async def _aget(self, params: dict[str, str], timeout: float) -> Fetched:
        # No retry here: the graph's retrieve node retries a failed step (RETRIEVAL_RETRY),
        # and "auto" answers from the offline corpus instead.
        return await afetch(
            self.endpoint, params=params, headers=_HEADERS, timeout=timeout, accept=_JSON
        )

    async def _asearch(self, query: str) -> list[str]:
        fetched = await self._aget(_search_params(query, self._pages()), self.timeout)
        return _titles(_json(fetched, "search"))

    async def _afetch_page(self, title: str) -> WikiPage | None:
        cached = await asyncio.to_thread(read_cached, self.endpoint, title)
        if cached is not None:
            return cached
        fetched = await self._aget(_parse_params(title), TIMEOUT)
        page = await asyncio.to_thread(_page, _json(fetched, f"page {title!r}"), title)
        if page is not None:
            await asyncio.to_thread(write_cached, self.endpoint, title, page)
        return page

    # shared

    def _pages(self) -> int:
        return min(self.k, MAX_PAGES)

    def _went_down(self, exc: BaseException) -> None:
        _mark_down(self.endpoint)
        log.warning(
            "Minecraft Wiki unreachable (%s); answering from the offline corpus "
            "for the next %.0f s",
            exc,
            DOWN_FOR_S,
        )

    def _rank(self, query: str, pages: Sequence[WikiPage]) -> list[Document]:
        """The `k` passages across `pages` nearest the query, best first."""
        tokens = chunk_tokens(self.doc_chars)
        chunks: list[tuple[WikiPage, int, str]] = []
        for page in pages:
            pieces = passages.split_text(
                page.text[:MAX_PAGE_CHARS], tokens=tokens, overlap=tokens // 10
            )
            chunks.extend((page, i, piece) for i, piece in enumerate(pieces))
        # The title is ranked with the passage: a passage on a page's item rarely names it.
        texts = [f"{page.title}\n{text}" for page, _, text in chunks]
        candidates = lexical_candidates(query, texts, MAX_CANDIDATES)
        best = passages.closest(query, [texts[i] for i in candidates], self.k)
        order = [candidates[i] for i in best]
        return [
            Document(
                page_content=chunks[i][2],
                metadata={
                    "title": chunks[i][0].title,
                    "source": page_url(self.endpoint, chunks[i][0].title),
                    "passage": chunks[i][1],
                },
            )
            for i in order
        ]


def _keywords(text: str) -> set[str]:
    """The corpus index's own words (plural folding included), less this module's stopwords."""
    return {w for w in terms.words(text, terms.STOPWORDS | QUESTION_WORDS) if w not in _STOPWORDS}


def lexical_candidates(query: str, texts: Sequence[str], limit: int) -> list[int]:
    """Indices of at most `limit` texts sharing the most query words, in their own order.

    Ties keep the earlier text: pages are in search order and open with their summary.
    """
    if len(texts) <= limit:
        return list(range(len(texts)))
    wanted = _keywords(query)
    scores = [len(wanted & _keywords(text)) for text in texts]
    best = sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:limit]
    return sorted(best)


def _pages(results: Sequence[WikiPage | BaseException | None]) -> list[WikiPage]:
    """Pages that came back; missing pages are skipped, failures only if none came back."""
    # Two hits can redirect to one page; its passages must not fill the top k twice.
    pages = list({r.title: r for r in results if isinstance(r, WikiPage)}.values())
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors and not pages:
        raise errors[0]
    for error in errors:
        log.warning("skipped a Minecraft Wiki page: %s", error)
    return pages


def wiki_retriever(
    ctx: RetrieverSettings, *, fallback: bool = False, doc_chars: int = DOC_CHARS
) -> BaseRetriever:
    """The live wiki's retriever (retriever "minecraft-wiki"); with `fallback` (retriever
    "minecraft-auto"), the bundled corpus answers when the wiki does not. Builds without
    the network."""
    offline = None
    if fallback:
        from rat_minecraft.retriever import minecraft_retriever

        offline = minecraft_retriever(k=ctx.k)  # opens its index only when first asked
    return MinecraftWikiRetriever(
        endpoint=wiki_endpoint(), k=ctx.k, doc_chars=doc_chars, fallback=offline
    )


def live_retriever(settings: RetrieverSettings) -> BaseRetriever:
    """Retriever "minecraft-wiki": the live wiki."""
    return wiki_retriever(settings)


def auto_retriever(settings: RetrieverSettings) -> BaseRetriever:
    """Retriever "minecraft-auto": the live wiki, the bundled corpus when it fails."""
    return wiki_retriever(settings, fallback=True)


# The entry points: a change of the wiki's address builds the retriever anew.
LIVE = Source(live_retriever, environment=(ENV_API,))
AUTO = Source(auto_retriever, environment=(ENV_API,))
