"""`rat ingest` into real embedded Qdrant with the real embedder, and retrieval from it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fakes import make_pdf, plan_model
from pytest_httpserver import HTTPServer
from qdrant_client import models

from rat_agent import ConfigError, cli, retrieval
from rat_agent.agent.context import Context
from rat_agent.agent.graph import build_graph
from rat_agent.ingest import pipeline
from rat_agent.providers import chat
from rat_agent.retrieval.qdrant import client as qdrant
from rat_agent.retrieval.qdrant.retriever import QdrantRetriever

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    retrieval.clear_cache()
    yield
    qdrant.close_clients()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "guide.md").write_text(
        "# Brewing guide\n\nTo brew a potion, place a brewing stand and add blaze powder "
        "as fuel.\n\n## Water bottles\n\nFill glass bottles at a water source.\n"
    )
    (folder / "notes.txt").write_text("The lighthouse keeper logs the tide at dawn.\n")
    (folder / "page.html").write_text(
        "<html><head><title>Volcano facts</title><script>alert(1)</script></head><body>"
        "<nav>Home | About</nav><p>Basalt forms when lava cools quickly.</p></body></html>"
    )
    (folder / "sub" / "tool.py").write_text(
        'def parse_invoice(text: str) -> dict:\n    """Read totals from an invoice."""\n'
        "    return {'total': text.count('$')}\n"
    )
    (folder / "report.pdf").write_bytes(make_pdf("Quarterly revenue grew by twelve percent"))
    (folder / "image.bin").write_bytes(b"\x00\x01\x02")  # not a known type: not picked up
    (folder / ".hidden.md").write_text("# secret\n")
    return folder


def points(collection: str) -> list[dict[str, object]]:
    client, lock = qdrant.get_client()
    with lock:
        records, _ = client.scroll(collection, limit=10_000, with_payload=True)
    return [dict(r.payload or {}, id=str(r.id)) for r in records]


def by_source(collection: str) -> Counter[str]:
    return Counter(str(p["metadata"]["source"]) for p in points(collection))  # type: ignore[index]


def search(collection: str, query: str, k: int = 1) -> list[str]:
    retriever = retrieval.get_retriever(Context(retriever="qdrant", collection=collection, k=k))
    return [str(d.metadata["source"]) for d in retriever.invoke(query)]


def test_every_file_type_is_ingested_and_searchable(docs: Path) -> None:
    report = pipeline.ingest([str(docs)], collection="c")
    assert report.failed == [] and report.sources == 5
    counts = by_source("c")
    names = {Path(source).name for source in counts}
    assert names == {"guide.md", "notes.txt", "page.html", "tool.py", "report.pdf"}
    assert report.added == sum(counts.values())
    meta = {
        Path(str(p["metadata"]["source"])).name: p["metadata"]  # type: ignore[index]
        for p in points("c")
    }
    assert meta["guide.md"]["title"] == "Brewing guide"  # type: ignore[index]
    assert meta["page.html"]["title"] == "Volcano facts"  # type: ignore[index]
    assert meta["tool.py"]["kind"] == "python"  # type: ignore[index]
    assert meta["report.pdf"]["kind"] == "pdf"  # type: ignore[index]
    texts = " ".join(str(p["page_content"]) for p in points("c"))
    assert "alert(1)" not in texts and "Home | About" not in texts  # page chrome dropped
    assert "Quarterly revenue grew" in texts
    assert Path(search("c", "what fuel does a brewing stand need")[0]).name == "guide.md"
    assert Path(search("c", "how does basalt form from lava")[0]).name == "page.html"
    assert Path(search("c", "invoice totals parser")[0]).name == "tool.py"
    assert Path(search("c", "revenue growth this quarter")[0]).name == "report.pdf"


def test_ingesting_again_adds_nothing(docs: Path) -> None:
    first = pipeline.ingest([str(docs)], collection="c")
    before = {p["id"] for p in points("c")}
    again = pipeline.ingest([str(docs)], collection="c")
    assert (again.added, again.removed, again.unchanged) == (0, 0, 5)
    assert {p["id"] for p in points("c")} == before and len(before) == first.added


def test_copies_of_a_file_never_take_the_places_of_other_passages(tmp_path: Path) -> None:
    # the same guide ingested from three folders, and one other note
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "guide.md").write_text(
            "# Brewing guide\n\nTo brew a potion, add blaze powder to a brewing stand.\n"
        )
    (tmp_path / "fuel.md").write_text("# Fuel\n\nA brewing stand burns blaze powder as fuel.\n")
    report = pipeline.ingest(
        [str(tmp_path / f) for f in ("a", "b", "c", "fuel.md")], collection="c"
    )
    assert report.sources == 4 and len(by_source("c")) == 4
    found = search("c", "how to brew a potion", k=2)
    assert sorted(Path(s).name for s in found) == ["fuel.md", "guide.md"]


def test_a_changed_file_replaces_its_chunks(docs: Path) -> None:
    long_text = "\n\n".join(
        f"Section {i}. " + "The river carries silt downstream. " * 20 for i in range(6)
    )
    target = docs / "notes.txt"
    target.write_text(long_text)
    pipeline.ingest([str(docs)], collection="c")
    old = by_source("c")[str(target)]
    assert old > 2
    target.write_text(long_text.replace("Section 5.", "Section five, rewritten:"))
    report = pipeline.ingest([str(docs)], collection="c")
    assert report.unchanged == 4  # the other files
    assert report.kept > 0  # unchanged passages are not embedded again
    assert 0 < report.added < old and report.removed == report.added
    mine = [p for p in points("c") if p["metadata"]["source"] == str(target)]  # type: ignore[index]
    assert len(mine) == old
    assert any("rewritten" in str(p["page_content"]) for p in mine)
    assert not any("Section 5." in str(p["page_content"]) for p in mine)
    assert sorted(p["metadata"]["position"] for p in mine) == list(range(old))  # type: ignore[index]


def test_unreadable_inputs_are_reported_and_the_rest_ingested(docs: Path) -> None:
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (docs / "blob.txt").write_bytes(b"\x00\x00binary")
    report = pipeline.ingest([str(docs), str(docs / "missing.md")], collection="c")
    reasons = {Path(item).name: reason for item, reason in report.failed}
    assert set(reasons) == {"broken.pdf", "blob.txt", "missing.md"}
    assert "PDF" in reasons["broken.pdf"] and "binary" in reasons["blob.txt"]
    assert len(by_source("c")) == 5


def test_a_killed_ingest_resumes_without_duplicates(docs: Path, tmp_path: Path) -> None:
    for i in range(3):
        (docs / f"long{i}.md").write_text(
            f"# Long {i}\n\n"
            + "\n\n".join(
                f"Paragraph {j} of file {i}: " + "windmills grind grain into flour. " * 12
                for j in range(8)
            )
        )
    data = tmp_path / "data"
    worker = subprocess.run(
        [sys.executable, str(HERE.parent / "ingest_worker.py"), str(data), "c", "2", str(docs)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert worker.returncode == -9, worker.stderr
    partial = sum(by_source("c").values())
    assert partial == 8  # two batches of 4 were stored before the kill
    report = pipeline.ingest([str(docs)], collection="c")
    clean = pipeline.ingest([str(docs)], collection="clean")
    assert report.added == clean.added - 8 and report.removed == 0  # nothing embedded twice
    assert by_source("c") == by_source("clean")  # same chunks as an uninterrupted ingest
    assert len({p["id"] for p in points("c")}) == len(points("c"))


def test_urls_are_fetched_through_the_guard(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    httpserver.expect_request("/kb/glaciers").respond_with_data(
        "<html><head><title>Glaciers</title></head><body><p>Glaciers carve U-shaped "
        "valleys.</p></body></html>",
        content_type="text/html; charset=utf-8",
    )
    url = httpserver.url_for("/kb/glaciers")
    refused = pipeline.ingest([url], collection="web")
    assert refused.added == 0 and "non-public" in refused.failed[0][1]
    assert qdrant.list_collections() == []  # nothing readable: no empty collection left
    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    report = pipeline.ingest([url], collection="web")
    assert report.added == 1 and report.failed == []
    (point,) = points("web")
    assert point["metadata"]["source"] == url  # type: ignore[index]
    assert point["metadata"]["title"] == "Glaciers"  # type: ignore[index]
    assert pipeline.ingest(["file:///etc/passwd"], collection="web").failed


def test_missing_or_foreign_collections_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"no Qdrant collection 'nope'.*rat ingest"):
        retrieval.get_retriever(Context(retriever="qdrant", collection="nope"))
    client, lock = qdrant.get_client()
    with lock:
        client.create_collection(
            "foreign", vectors_config={"v": models.VectorParams(size=4, distance="Cosine")}
        )
    with pytest.raises(ConfigError, match="not made by"):
        retrieval.get_retriever(Context(retriever="qdrant", collection="foreign"))


def test_the_cli_ingests_lists_asks_and_deletes(
    docs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ingest", str(docs), "--collection", "kb"]) == 0
    captured = capsys.readouterr()
    assert "5 sources in collection 'kb'" in captured.out and "chunks added" in captured.out
    # stderr is not a terminal here: progress comes as lines, each stage's start and end
    lines = captured.err.splitlines()
    assert "reading 0/5" in lines and "cutting 5/5" in lines
    assert any(line.startswith("embedding ") for line in lines)
    assert len(lines) == len(set(lines))
    assert cli.main(["collections"]) == 0
    assert "kb  " in capsys.readouterr().out

    model = plan_model("STEP 1: add blaze powder to the brewing stand")
    monkeypatch.setattr(chat, "get_chat_model", lambda name, **kw: model)
    assert (
        cli.main(
            [
                "ask",
                "How do I brew?",
                "--retriever",
                "qdrant",
                "--collection",
                "kb",
                "--k",
                "1",
                "--query-prompt",
                "",
            ]
        )
        == 0
    )
    assert "guide.md" in capsys.readouterr().out  # the cited source is the file

    assert cli.main(["collections", "delete", "kb", "--yes"]) == 0
    assert cli.main(["collections", "delete", "kb"]) == 2  # said before anything is asked
    assert "no collection 'kb'" in capsys.readouterr().err
    assert cli.main(["ask", "q", "--retriever", "qdrant", "--collection", "kb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rat ingest" in err


def test_a_partial_failure_exits_non_zero(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ingest", str(docs), str(docs / "nope.md")]) == 1
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "nope.md" in captured.err
    assert "5 sources" in captured.out


def test_graph_cites_ingested_files(docs: Path) -> None:
    pipeline.ingest([str(docs)], collection="kb")
    graph = build_graph(llm=plan_model("STEP 1: fill glass bottles at a water source"))
    result = graph.invoke(
        {"question": "water bottles?"}, context=Context(retriever="qdrant", collection="kb", k=1)
    )
    (step,) = result["steps"]
    assert Path(step["sources"][0]["source"]).name == "guide.md"
    assert step["status"] == "revised"


def test_a_collection_declares_the_draft_its_tasks_want(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rat ingest --draft cot` (code documentation) is kept with the collection; a run on
    it that leaves the draft "auto" drafts so, even where the model's profile says rag;
    ingesting again with another value replaces it, with the chunks untouched."""
    from rat_agent.agent.nodes import RatNodes

    assert cli.main(["ingest", str(docs / "sub"), "--collection", "code", "--draft", "cot"]) == 0
    settings = Context(retriever="qdrant", collection="code", model="local")
    assert RatNodes().resolve(settings).draft == "cot"
    with pytest.raises(SystemExit) as refused:
        cli.main(["ingest", str(docs / "sub"), "--collection", "code", "--draft", "x"])
    assert refused.value.code == 2 and "invalid choice" in capsys.readouterr().err
    pipeline.ingest([str(docs / "sub")], collection="code", draft="sourced")
    retrieval.clear_cache()
    assert RatNodes().resolve(settings).draft == "sourced"
    assert by_source("code") == {str((docs / "sub" / "tool.py").resolve()): 1}
    pipeline.ingest([str(docs / "guide.md")], collection="plain")
    plain = Context(retriever="qdrant", collection="plain", model="openai:gpt-4o-mini")
    assert RatNodes().resolve(plain).draft == "cot"  # undeclared: the model's own
    with pytest.raises(ConfigError, match="draft must be one of cot, sourced, direct, rag"):
        pipeline.ingest([str(docs / "guide.md")], collection="plain", draft="long")


def test_the_ingest_graph_for_the_server(docs: Path) -> None:
    import asyncio

    from rat_agent.ingest.graph import graph as ingest_graph

    result = asyncio.run(
        ingest_graph.ainvoke({"paths": [str(docs), str(docs / "nope.md")], "collection": "kb"})
    )
    assert result["sources"] == 5 and result["added"] == sum(by_source("kb").values())
    assert result["failed"] == [[str(docs / "nope.md"), "no such file or folder"]]
    schema = ingest_graph.get_input_jsonschema()
    assert set(schema["required"]) == {"paths", "collection"}


def test_a_served_user_cannot_ingest_the_servers_own_files(docs: Path) -> None:
    """Behind `make serve` with keys, the caller is a user of the server: its files (the key
    file, other users' uploads) are not theirs to read into a collection."""
    import asyncio

    from rat_agent.ingest.graph import ON_SERVER
    from rat_agent.ingest.graph import graph as ingest_graph

    user = {"identity": "alice", "is_authenticated": True}
    result = asyncio.run(
        ingest_graph.ainvoke(
            {"paths": [str(docs), "/etc/hostname"], "collection": "kb"},
            {"configurable": {"langgraph_auth_user": user}},
        )
    )
    assert result["sources"] == 0 and result["added"] == 0
    assert result["failed"] == [[str(docs), ON_SERVER], ["/etc/hostname", ON_SERVER]]
    # an open server (one user on loopback, `langgraph dev`) reads local files as before
    anonymous = {"identity": "anonymous", "is_authenticated": False}
    opened = asyncio.run(
        ingest_graph.ainvoke(
            {"paths": [str(docs)], "collection": "kb"},
            {"configurable": {"langgraph_auth_user": anonymous}},
        )
    )
    assert opened["sources"] == 5 and opened["failed"] == []


def test_a_users_collection_searches_words_a_domain_would_drop(tmp_path: Path) -> None:
    """The lexical half of search keeps "make", "use" and "get" for users' own collections;
    only the Minecraft corpus drops them, as every question there has them."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "make.md").write_text("# Build tool\n\nRun make to rebuild what changed.\n")
    (folder / "other.md").write_text("# Build tool\n\nRun ninja to rebuild what changed.\n")
    assert pipeline.ingest([str(folder)], collection="tools").failed == []
    lexical = QdrantRetriever(collection="tools", k=1, mode="sparse")
    assert [Path(d.metadata["source"]).name for d in lexical.invoke("make")] == ["make.md"]
    from rat_minecraft import retriever as minecraft

    assert {"make", "use", "get", "minecraft"} <= minecraft.STOPWORDS


def test_links_inside_a_folder_are_not_followed_unless_asked(tmp_path: Path) -> None:
    """A link to a secret elsewhere, or to /proc/self/status (a new copy every run), is
    reported and skipped; --follow-links reads it, and a loop of links is walked once."""
    folder = tmp_path / "kb"
    (folder / "sub").mkdir(parents=True)
    (folder / "note.md").write_text("# Note\n\nA plain file.")
    secret = tmp_path / "secret.txt"
    secret.write_text("the password is hunter2")
    (folder / "secret.txt").symlink_to(secret)
    (folder / "status.txt").symlink_to("/proc/self/status")
    (folder / "sub" / "up").symlink_to(folder, target_is_directory=True)

    found, failed = pipeline.discover([str(folder)])
    assert found == [str((folder / "note.md").resolve())]
    assert sorted(Path(item).name for item, _ in failed) == ["secret.txt", "status.txt", "up"]
    assert all("symbolic link, not followed" in reason for _, reason in failed)

    found, failed = pipeline.discover([str(folder)], follow_links=True)
    assert str(secret.resolve()) in found and failed == []
    assert len(found) == len(set(found)) == 3  # note, secret, /proc/self/status; no loop


def test_one_bad_input_is_skipped_and_the_rest_ingested(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file name that is not UTF-8 (uuid5 cannot encode it), a redirect to data: and a
    loader that raises something unexpected each become one `skipped` line."""
    import os

    monkeypatch.setenv("RAT_ALLOW_PRIVATE_URLS", "1")
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nBasalt forms when lava cools quickly.")
    odd = os.path.join(os.fsencode(folder), b"caf\xe9.md")
    with open(odd, "wb") as out:
        out.write(b"# Odd\n\nA name in Latin-1.")
    httpserver.expect_request("/moved").respond_with_data(
        "", status=302, headers={"Location": "data:text/plain,hello"}
    )
    report = pipeline.ingest([str(folder), httpserver.url_for("/moved")], collection="mixed")
    assert report.sources >= 2 and report.added >= 1
    reasons = dict(report.failed)
    assert len(reasons) == 2, reasons
    assert "InvalidURL" in reasons[httpserver.url_for("/moved")]  # escaped fetch before
    assert any("UnicodeEncodeError" in why for why in reasons.values())


def test_fifos_and_devices_are_named_as_such(tmp_path: Path) -> None:
    """Reading a FIFO or /dev/zero would never end; they are not "missing" either."""
    import os

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    found, failed = pipeline.discover([str(fifo), "/dev/zero", str(tmp_path / "none.md")])
    assert found == []
    assert dict(failed) == {
        str(fifo): "not a regular file (a FIFO, a device or a socket)",
        "/dev/zero": "not a regular file (a FIFO, a device or a socket)",
        str(tmp_path / "none.md"): "no such file or folder",
    }


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_wide_unicode_text_is_read_not_refused_as_binary(tmp_path: Path, encoding: str) -> None:
    import codecs

    boms = {"utf-16-be": codecs.BOM_UTF16_BE}
    path = tmp_path / "notes.txt"
    path.write_bytes(boms.get(encoding, b"") + "Basalt forms when lava cools. ✓".encode(encoding))
    assert pipeline.load(str(path)).text == "Basalt forms when lava cools. ✓"


def test_a_declared_utf16_charset_is_read(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/notes").respond_with_data(
        "Basalt forms when lava cools.".encode("utf-16-le"),
        content_type="text/plain; charset=UTF-16LE",
    )
    loaded = pipeline.load(httpserver.url_for("/notes"), allow_private=True)
    assert loaded.text == "Basalt forms when lava cools."


def test_a_page_cut_at_the_size_cap_is_ingested_with_a_note(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rat_agent.retrieval.web import fetch

    line = "Basalt forms when lava cools quickly.\n"
    httpserver.expect_request("/big").respond_with_data(line * (fetch.MAX_BYTES // len(line) + 10))
    url = httpserver.url_for("/big")
    loaded = pipeline.load(url, allow_private=True)
    assert len(loaded.text) == fetch.MAX_BYTES
    note = f"cut at {fetch.MAX_BYTES:,} bytes: the rest of it is not ingested"
    assert loaded.note == note

    # ... and ingest reports it (a short stand-in: embedding 5 MB takes minutes here)
    short = pipeline.Loaded(url, "big", line, "text", note)
    monkeypatch.setattr(pipeline, "load", lambda item, allow_private=None: short)
    report = pipeline.ingest([url], collection="big")
    assert report.sources == 1 and not report.failed
    assert report.notes == [(url, note)]


def test_a_skipped_url_is_named_once(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/gone").respond_with_data("no", status=404)
    url = httpserver.url_for("/gone")
    with pytest.raises(pipeline.SkipError) as info:
        pipeline.load(url, allow_private=True)
    assert str(info.value) == "HTTP 404"


def test_a_large_file_is_announced_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pipeline, "LARGE_FILE_BYTES", 1000)
    path = tmp_path / "big.txt"
    path.write_text("Basalt forms when lava cools quickly. " * 100)
    with caplog.at_level("WARNING"):
        pipeline.load(str(path))
    assert f"{path} is 0 MB (about 4 chunks to embed): this takes a while" in caplog.text


def test_a_damaged_pdf_is_one_skip_without_pypdfs_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cut.pdf"
    path.write_bytes(make_pdf("Quarterly revenue")[:-60])  # the end of the file is missing
    with caplog.at_level("WARNING"), contextlib.suppress(pipeline.SkipError):
        pipeline.load(str(path))
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]
