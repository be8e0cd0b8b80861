"""The live Minecraft Wiki source, against a fake MediaWiki API on 127.0.0.1 (never the internet).

The fake answers in the Action API's real formats (formatversion=2): `list=search` hits and
`action=parse` HTML shaped like minecraft.wiki's, chrome included. The offline fallback is a
12-page index, so the "auto" tests stay fast in a fresh cache folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.documents import Document
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from rat_agent.agent.context import Context
from rat_agent.errors import ConfigError, RetrievalError
from rat_agent.retrieval.web import passages
from rat_agent.retrieval.web.fetch import UnsafeURLError, afetch
from rat_minecraft import retriever as minecraft
from rat_minecraft import wiki as wiki_source
from rat_minecraft.corpus import build_pages
from rat_minecraft.retriever import close_indexes, get_index
from rat_minecraft.wiki import (
    chunk_tokens,
    forget_outages,
    page_url,
    relaxed_query,
    wiki_retriever,
)

CHROME = """
<div class="navbox-wrapper"><table class="navbox"><tr><th>Tools</th>
<td>NAVBOXMARK Wooden Pickaxe Stone Pickaxe Golden Pickaxe Netherite Pickaxe Shears</td></tr>
</table></div>
<script>var SCRIPTMARK = 1;</script>
<div class="mw-references-wrap"><ol class="references"><li>REFMARK a cited source</li></ol></div>
"""

DIAMOND_PICKAXE = (
    """<div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">
<div class="hatnote navigation-not-searchable">HATNOTEMARK For other uses, see Pickaxe.</div>
<div class="notaninfobox"><div class="infobox-imagearea animated-container">
<img src="/images/Diamond_Pickaxe.png" alt="IMAGEMARK"></div>
<table class="infobox-rows"><tr><th>Rarity tier</th><td>Common</td></tr>
<tr><th>Durability</th><td>1562</td></tr></table></div>
<p>A <b>diamond pickaxe</b> is a <a href="/w/Pickaxe">pickaxe</a> made from diamonds.</p>
<div id="toc" class="toc"><ul><li>TOCMARK 1 Obtaining</li><li>2 Usage</li></ul></div>
<div class="mw-heading mw-heading2"><h2 id="Obtaining">Obtaining</h2>
<span class="mw-editsection">[<a href="/w/Diamond_Pickaxe?action=edit">EDITMARK</a>]</span></div>
<h3 id="Crafting">Crafting</h3>
<p>To craft a diamond pickaxe, place 3 diamonds in the top row of a crafting table and
2 sticks down the middle column. The crafting recipe gives one diamond pickaxe; the
recipe needs the 3x3 grid of a crafting table, so the 2x2 inventory grid cannot craft
it.<sup class="reference">[1]</sup></p>
<table class="wikitable"><tr><th>Ingredients</th><th>Crafting recipe</th></tr>
<tr><td>Diamond + Stick</td><td><span class="mcui mcui-Crafting_Table">SLOTMARK</span></td></tr>
</table>
<h3 id="Upgrading">Upgrading</h3>
<p>A diamond pickaxe can be upgraded to a netherite pickaxe at a smithing table with a
netherite ingot and a netherite upgrade smithing template.</p>
<div class="mw-heading mw-heading2"><h2 id="Usage">Usage</h2></div>
<h3 id="Mining">Mining</h3>
<p>Mining with a diamond pickaxe is fast. It mines obsidian, crying obsidian, ancient
debris and respawn anchors, which need a diamond or netherite pickaxe. It breaks stone,
ores and deepslate faster than an iron pickaxe does.</p>
<h3 id="Enchanting">Enchanting</h3>
<p>Enchantments for pickaxes: Efficiency, Fortune, Silk Touch, Unbreaking and Mending.
Fortune raises the drops of ores; Silk Touch keeps the block itself; Mending repairs
the tool with experience orbs.</p>
<h3 id="Durability">Durability</h3>
<p>Durability is 1562 uses. Each mined block costs one point of durability, and attacking
a mob with it costs two. Repair it at an anvil with diamonds.</p>
"""
    + CHROME
    + "</div>"
)

PICKAXE = (
    """<div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">
<p>A <b>pickaxe</b> is a tool used to mine stone, ores and metal blocks. Pickaxes come in
wooden, stone, iron, golden, diamond and netherite tiers; a higher tier mines faster and
can mine harder blocks.</p>"""
    + CHROME
    + "</div>"
)

MISSING = {
    "error": {
        "code": "missingtitle",
        "info": "The page you specified doesn't exist.",
        "docref": "See /api.php for API usage.",
    },
    "servedby": "mw1",
}


def search_answer(titles: list[str]) -> dict[str, Any]:
    return {
        "batchcomplete": True,
        "continue": {"sroffset": len(titles), "continue": "-||"},
        "query": {
            "searchinfo": {"totalhits": len(titles)},
            "search": [
                {
                    "ns": 0,
                    "title": title,
                    "pageid": 100 + n,
                    "size": 12345,
                    "wordcount": 900,
                    "snippet": f'<span class="searchmatch">{title}</span> is a tool',
                    "timestamp": "2025-06-01T12:00:00Z",
                }
                for n, title in enumerate(titles)
            ],
        },
    }


def parse_answer(title: str, html: str) -> dict[str, Any]:
    return {"parse": {"title": title, "pageid": 100, "text": html}}


class FakeWiki:
    """A MediaWiki api.php: `search` maps a query to hit titles, `pages` a title to HTML."""

    def __init__(self, search: Callable[[str], list[str]], pages: dict[str, str]):
        self.search = search
        self.pages = pages
        self.redirects: dict[str, str] = {}
        self.requests: list[dict[str, str]] = []

    def __call__(self, request: Request) -> Response:
        args = dict(request.args)
        self.requests.append(args)
        assert args["format"] == "json" and args["formatversion"] == "2"
        assert "rat-agent" in request.headers.get("User-Agent", "")
        assert "application/json" in request.headers.get("Accept", "")
        if args["action"] == "query" and args["list"] == "search":
            body = search_answer(self.search(args["srsearch"])[: int(args["srlimit"])])
        elif args["action"] == "parse":
            title = self.redirects.get(args["page"], args["page"])
            html = self.pages.get(title)
            body = MISSING if html is None else parse_answer(title, html)
        else:
            body = {"error": {"code": "badvalue", "info": "Unrecognized value."}}
        return Response(json.dumps(body), content_type="application/json; charset=utf-8")

    def parses(self) -> list[str]:
        return [r["page"] for r in self.requests if r["action"] == "parse"]

    def searches(self) -> list[str]:
        return [r["srsearch"] for r in self.requests if r["action"] == "query"]


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("RAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    forget_outages()
    yield
    forget_outages()


@pytest.fixture
def wiki(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> FakeWiki:
    fake = FakeWiki(
        lambda query: ["Diamond Pickaxe", "Pickaxe", "Diamond Pickaxe (removed)"],
        {"Diamond Pickaxe": DIAMOND_PICKAXE, "Pickaxe": PICKAXE},
    )
    httpserver.expect_request("/api.php").respond_with_handler(fake)
    monkeypatch.setenv("MINECRAFT_WIKI_API", httpserver.url_for("/api.php"))
    return fake


def retrieve(
    source: Literal["wiki", "auto"] = "wiki",
    k: int = 3,
    doc_chars: int = 400,
    query: str = "how do I craft a diamond pickaxe",
) -> list[Document]:
    retriever = wiki_retriever(Context(k=k), fallback=source == "auto", doc_chars=doc_chars)
    documents: list[Document] = retriever.invoke(query)
    return documents


@pytest.fixture
def no_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passages in page order, for tests about fetching and caching (embedding costs ~1 s)."""
    monkeypatch.setattr(
        passages, "closest", lambda query, texts, k: list(range(min(k, len(texts))))
    )


# --- search, pages, passages -----------------------------------------------------------------


def test_passages_come_from_the_wiki_pages(wiki: FakeWiki, httpserver: HTTPServer) -> None:
    documents = retrieve()
    assert len(documents) == 3
    best = documents[0]
    assert best.metadata["title"] == "Diamond Pickaxe"
    assert best.metadata["source"] == httpserver.url_for("/w/Diamond_Pickaxe")
    assert "3 diamonds" in best.page_content and "2 sticks" in best.page_content
    assert {d.metadata["title"] for d in documents} <= {"Diamond Pickaxe", "Pickaxe"}
    assert all(isinstance(d.metadata["passage"], int) for d in documents)
    text = "\n".join(d.page_content for d in documents)
    for chrome in (
        "NAVBOXMARK",
        "SCRIPTMARK",
        "REFMARK",
        "TOCMARK",
        "EDITMARK",
        "HATNOTEMARK",
        "IMAGEMARK",
        "SLOTMARK",
        "[1]",
    ):
        assert chrome not in text
    assert wiki.searches() == ["how do I craft a diamond pickaxe"]
    # The top min(k, 3) hits are fetched; the one that no longer exists is skipped.
    assert sorted(wiki.parses()) == ["Diamond Pickaxe", "Diamond Pickaxe (removed)", "Pickaxe"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how do I craft a diamond pickaxe", "2 sticks"),
        ("which enchantments can a pickaxe get", "Silk Touch"),
        ("upgrade to netherite at a smithing table", "smithing template"),
    ],
)
def test_the_passage_ranked_first_is_about_the_query(
    wiki: FakeWiki, query: str, expected: str
) -> None:
    documents = retrieve(k=1, doc_chars=300, query=query)
    assert len(documents) == 1
    assert expected in documents[0].page_content


def test_a_missing_page_is_skipped(wiki: FakeWiki, no_ranking: None) -> None:
    wiki.search = lambda query: ["Diamond Pickaxe (removed)", "Pickaxe"]
    documents = retrieve(k=2)
    assert documents and {d.metadata["title"] for d in documents} == {"Pickaxe"}


def test_redirects_to_one_page_give_its_passages_once(wiki: FakeWiki) -> None:
    wiki.search = lambda query: ["Diamond pickaxe", "Diamond Pickaxe"]
    wiki.redirects["Diamond pickaxe"] = "Diamond Pickaxe"
    documents = retrieve(k=3)
    keys = [(d.metadata["title"], d.metadata["passage"]) for d in documents]
    assert len(set(keys)) == len(keys) == 3
    assert all(title == "Diamond Pickaxe" for title, _ in keys)


def test_no_hits_gives_no_documents_after_a_relaxed_search(
    wiki: FakeWiki, no_ranking: None
) -> None:
    wiki.search = lambda query: []
    assert retrieve(query="Craft a diamond pickaxe with 3 diamonds") == []
    assert wiki.searches() == [
        "Craft a diamond pickaxe with 3 diamonds",
        "craft OR diamond OR pickaxe OR 3 OR diamonds",
    ]
    assert wiki.parses() == []


def test_a_long_step_is_found_by_its_keywords(wiki: FakeWiki) -> None:
    # The wiki's search wants every word of a query; a thought step rarely has them all.
    wiki.search = lambda query: ["Diamond Pickaxe"] if " OR " in query else []
    documents = retrieve(k=1, query="STEP 2: Craft a diamond pickaxe at the crafting table")
    assert documents[0].metadata["title"] == "Diamond Pickaxe"
    assert relaxed_query("How do I get to The End?") == "get OR end"


def test_search_keywords_are_not_passed_on(wiki: FakeWiki, no_ranking: None) -> None:
    retrieve(query="insource:/[a-z]+.*x/ InTitle: diamond  pickaxe " + "x" * 400)
    (sent,) = wiki.searches()
    assert sent.startswith("/[a-z]+.*x/ diamond pickaxe")
    assert ":" not in sent and len(sent) <= wiki_source.MAX_QUERY_CHARS


def test_the_async_path_gives_the_same_documents(wiki: FakeWiki) -> None:
    retriever = wiki_retriever(Context(k=3), doc_chars=400)
    documents = asyncio.run(retriever.ainvoke("how do I craft a diamond pickaxe"))
    assert documents == retriever.invoke("how do I craft a diamond pickaxe")
    assert sorted(set(wiki.parses())) == ["Diamond Pickaxe", "Diamond Pickaxe (removed)", "Pickaxe"]


# --- chunk size ------------------------------------------------------------------------------


def test_chunks_never_exceed_the_token_cap(wiki: FakeWiki) -> None:
    sentence = "Mining obsidian with a diamond pickaxe takes 9.4 seconds without Efficiency. "
    wiki.pages["Pickaxe"] = f'<div class="mw-parser-output"><p>{sentence * 120}</p></div>'
    for doc_chars in (200, 1200):
        documents = retrieve(k=20, doc_chars=doc_chars)
        assert len(documents) > 5
        cap = chunk_tokens(doc_chars)
        assert all(passages.count_tokens(d.page_content) <= cap for d in documents)
        assert all(len(d.page_content) <= doc_chars * 1.5 for d in documents)
    assert chunk_tokens(1200) == 300
    assert chunk_tokens(20000) == 2000  # the paper's chunk size is the ceiling


def test_long_pages_embed_a_bounded_number_of_passages(
    wiki: FakeWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = "".join(
        f"<h3>Version {n}</h3><p>Changed the texture of the block in snapshot "
        f"{n}w{n % 52:02d}a.</p>"
        for n in range(120)
    )
    wiki.pages["Pickaxe"] = (
        f'<div class="mw-parser-output">{filler}<h3>Trivia</h3><p>A '
        "pickaxe enchanted with Silk Touch keeps ores whole.</p></div>"
    )
    embedded: list[int] = []
    closest = passages.closest

    def counting(query: str, texts: list[str], k: int) -> list[int]:
        embedded.append(len(texts))
        order: list[int] = closest(query, texts, k)
        return order

    monkeypatch.setattr(passages, "closest", counting)
    documents = retrieve(k=2, doc_chars=200, query="silk touch pickaxe ores")
    assert "Silk Touch keeps ores whole" in documents[0].page_content
    assert embedded == [wiki_source.MAX_CANDIDATES]
    assert wiki_source.lexical_candidates("diamonds", ["a", "diamond", "b"], 1) == [1]


# --- the page cache --------------------------------------------------------------------------


def test_pages_are_cached_on_disk(wiki: FakeWiki, no_ranking: None, tmp_path: Path) -> None:
    first = retrieve()
    assert len(wiki.parses()) == 3
    assert retrieve() == first  # a new retriever: the cache is on disk, not in memory
    assert len(wiki.parses()) == 4  # only the missing page is asked again
    assert len(wiki.searches()) == 2  # search results are never cached
    files = list((tmp_path / "minecraft-wiki").iterdir())
    assert len(files) == 2 and all(f.suffix == ".json" for f in files)  # no temporary leftovers


def test_expired_pages_and_abandoned_writes_are_pruned(
    wiki: FakeWiki, no_ranking: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "minecraft-wiki"
    folder.mkdir()
    expired = time.time() - wiki_source.CACHE_TTL_S - 10
    two_hours = time.time() - 7200
    ages = {
        "0123.json": expired,
        ".0456.json.999.deadbeef.tmp": two_hours,  # a write abandoned by a killed process
        ".0789.json.998.cafef00d.tmp": time.time(),  # another process writing right now
    }
    for name, age in ages.items():
        (folder / name).write_text("{}")
        os.utime(folder / name, (age, age))
    monkeypatch.setattr(wiki_source, "_pruned", set())
    retrieve()
    left = {f.name for f in folder.iterdir()}
    assert ".0789.json.998.cafef00d.tmp" in left
    assert not left & {"0123.json", ".0456.json.999.deadbeef.tmp"}
    assert len(left) == 3  # the two pages just fetched and the write in progress


def test_a_stale_or_broken_cache_entry_is_fetched_again(
    wiki: FakeWiki, no_ranking: None, tmp_path: Path
) -> None:
    retrieve()
    stale, broken = sorted((tmp_path / "minecraft-wiki").iterdir())
    entry = json.loads(stale.read_text())
    entry["fetched_at"] -= wiki_source.CACHE_TTL_S + 1
    stale.write_text(json.dumps(entry))
    broken.write_text('{"endpoint": ')  # as if the disk had filled up mid-write elsewhere
    retrieve()
    assert sorted(wiki.parses()).count("Diamond Pickaxe") == 2
    assert sorted(wiki.parses()).count("Pickaxe") == 2


def test_the_cache_is_keyed_by_endpoint(
    wiki: FakeWiki, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, no_ranking: None
) -> None:
    retrieve()
    httpserver.expect_request("/other/api.php").respond_with_handler(wiki)
    monkeypatch.setenv("MINECRAFT_WIKI_API", httpserver.url_for("/other/api.php"))
    documents = retrieve()
    assert len(wiki.parses()) == 6
    assert documents[0].metadata["source"] == httpserver.url_for("/other/w/Diamond_Pickaxe")


# --- titles are data -------------------------------------------------------------------------


def test_titles_travel_as_parameters(
    wiki: FakeWiki, no_ranking: None, httpserver: HTTPServer
) -> None:
    title = "Tools & Weapons/Why?#x&action=edit"
    wiki.search = lambda query: [title]
    wiki.pages[title] = PICKAXE
    (document,) = retrieve(k=1, query="tools & weapons")
    assert wiki.parses() == [title]
    assert all(r["action"] in ("query", "parse") for r in wiki.requests)
    assert document.metadata["title"] == title
    assert document.metadata["source"] == httpserver.url_for(
        "/w/Tools_%26_Weapons/Why%3F%23x%26action%3Dedit"
    )


def test_page_url_follows_mediawiki_escaping() -> None:
    assert page_url("https://minecraft.wiki/api.php", "Diamond Pickaxe") == (
        "https://minecraft.wiki/w/Diamond_Pickaxe"
    )
    assert page_url("https://minecraft.wiki/api.php?x=1", "Java Edition 1.21 (Tricky)") == (
        "https://minecraft.wiki/w/Java_Edition_1.21_(Tricky)"
    )
    assert page_url("http://wiki.test:8080/mc/api.php", "Bane of Arthropods'") == (
        "http://wiki.test:8080/mc/w/Bane_of_Arthropods%27"
    )


# --- failures and the offline fallback -------------------------------------------------------


@pytest.fixture
def small_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stands in a 12-page index for the full corpus (which takes ~40 s to build cold)."""
    ids = {
        "crafting_table",
        "stick",
        "oak_planks",
        "oak_log",
        "diamond_pickaxe",
        "diamond",
        "diamond_ore",
        "iron_ingot",
        "raw_iron",
        "furnace",
        "cobblestone",
        "torch",
    }
    index = get_index([p for p in build_pages() if p.id in ids])
    monkeypatch.setattr(minecraft, "get_index", lambda: index)
    yield
    close_indexes()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def wiki_down(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Nothing listens at the endpoint; returns the URLs fetched, to count the attempts."""
    monkeypatch.setenv("MINECRAFT_WIKI_API", f"http://127.0.0.1:{closed_port()}/api.php")
    calls: list[str] = []

    async def acounting(url: str, **kwargs: Any) -> Any:
        calls.append(url)
        return await afetch(url, **kwargs)

    monkeypatch.setattr(wiki_source, "afetch", acounting)  # the sync half runs the async core
    return calls


def test_wiki_down_raises_retrieval_error(wiki_down: list[str]) -> None:
    with pytest.raises(RetrievalError, match="refused"):
        retrieve("wiki")
    with pytest.raises(RetrievalError):
        retrieve("wiki")
    assert len(wiki_down) == 2  # source "wiki" never stops trying


def test_auto_answers_offline_while_the_wiki_is_down(
    wiki_down: list[str], small_offline: None
) -> None:
    documents = retrieve("auto", query="how do I obtain Diamond Pickaxe")
    assert documents and all(
        d.metadata["source"].startswith("minecraft-corpus:") for d in documents
    )
    assert documents[0].metadata["title"] == "Diamond Pickaxe"
    assert len(wiki_down) == 1
    retriever = wiki_retriever(Context(k=2), fallback=True)
    later = asyncio.run(retriever.ainvoke("how do I obtain Torch"))
    assert later[0].metadata["source"] == "minecraft-corpus:torch"
    assert len(wiki_down) == 1  # remembered as down: no second wait for the timeout
    forget_outages()
    asyncio.run(retriever.ainvoke("how do I obtain Torch"))
    assert len(wiki_down) == 2


def test_a_failing_server_fails_at_once_or_falls_back(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, small_offline: None
) -> None:
    """One retry layer: the graph's retrieve node retries a failed step, not the retriever."""
    monkeypatch.setenv("MINECRAFT_WIKI_API", httpserver.url_for("/api.php"))
    httpserver.expect_request("/api.php").respond_with_data("busy", status=503)
    with pytest.raises(RetrievalError, match="503"):
        retrieve("wiki")
    assert len(httpserver.log) == 1
    documents = retrieve("auto", query="how do I obtain Torch")
    assert documents[0].metadata["source"] == "minecraft-corpus:torch"
    assert len(httpserver.log) == 2  # the offline answer is ready


def test_an_api_error_is_a_retrieval_error(wiki: FakeWiki, httpserver: HTTPServer) -> None:
    httpserver.clear_all_handlers()
    httpserver.expect_request("/api.php").respond_with_json(
        {"error": {"code": "internal_api_error_DBQueryError", "info": "Database query error."}}
    )
    with pytest.raises(RetrievalError, match="Database query error"):
        retrieve("wiki")
    with pytest.raises(RetrievalError, match="Database query error"):
        retrieve("auto")  # the wiki answered: a wrong answer is not an outage


# --- address policy and settings -------------------------------------------------------------


def test_a_loopback_wiki_is_refused_without_the_opt_in(
    wiki: FakeWiki, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAT_ALLOW_PRIVATE_URLS")
    for source in ("wiki", "auto"):  # a refusal is a setting to fix, not an outage to hide
        with pytest.raises(UnsafeURLError, match="non-public"):
            retrieve(source)
    assert httpserver.log == []


@pytest.mark.parametrize(
    "endpoint",
    [
        "ftp://minecraft.wiki/api.php",
        "minecraft.wiki",
        "https://:80/api.php",
        "http://x:99999/api.php",
    ],
)
def test_a_bad_endpoint_fails_at_build(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINECRAFT_WIKI_API", endpoint)
    with pytest.raises(ConfigError, match="MINECRAFT_WIKI_API"):
        wiki_retriever(Context())


def test_building_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINECRAFT_WIKI_API", raising=False)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was used at build time")

    monkeypatch.setattr(wiki_source, "afetch", no_network)
    monkeypatch.setattr(minecraft, "get_index", no_network)
    retriever = wiki_retriever(Context(k=4), fallback=True, doc_chars=800)
    assert isinstance(retriever, wiki_source.MinecraftWikiRetriever)
    assert retriever.endpoint == "https://minecraft.wiki/api.php"
    assert retriever.k == 4 and retriever.fallback is not None
    assert wiki_retriever(Context()).fallback is None  # type: ignore[attr-defined]
