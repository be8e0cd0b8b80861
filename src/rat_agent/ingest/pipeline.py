"""`rat ingest`: files, folders and URLs into a Qdrant collection, safe to re-run.

A chunk's id derives from its source and its text, so ingesting again adds nothing, and a
changed file re-embeds only the chunks whose text changed. A source's old chunks are
deleted only after all its new ones are stored, so a killed ingest loses nothing and the
next run finishes the job.
"""

from __future__ import annotations

import codecs
import dataclasses
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qdrant_client import models

from rat_agent.errors import ConfigError, RatError
from rat_agent.providers.embeddings import get_embeddings
from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.client import (
    check_collection,
    collection_metadata,
    locked_client,
    refuse_damaged,
)
from rat_agent.retrieval.qdrant.edge import EdgeClient, Store
from rat_agent.retrieval.settings import DRAFTS, check_collection_name
from rat_agent.retrieval.web import fetch, passages
from rat_agent.served import check as check_user
from rat_agent.served import current_user

log = logging.getLogger(__name__)

# The paper cuts pages into chunks of up to 2,000 tokens for text-embedding-ada-002, which
# reads 8k tokens. MiniLM reads only the first 256 word pieces of a text, so a larger chunk
# would be searched by its opening alone: chunks are 256 tokens, overlapping by 32 so a
# sentence cut at a boundary is whole in one of the two.
CHUNK_TOKENS = 256
OVERLAP_TOKENS = 32
BATCH = 64  # texts per embedding call: the embedder's own batch size
LARGE_FILE_BYTES = 10_000_000  # a file above this gets a warning before it is read
# A served user's ingest reads at most this much text in all (a PDF's is bounded in
# ingest/pdf.py), so one request cannot hold an ingest thread for hours of embedding.
SERVED_INGEST_CHARS = 20_000_000
SERVED_TEXT_SPENT = (
    f"not read: this ingest already holds {SERVED_INGEST_CHARS:,} characters of text, the most "
    "one ingest on a server reads (ingest the rest in another)"
)
CHARS_PER_CHUNK = (CHUNK_TOKENS - OVERLAP_TOKENS) * passages.CHARS_PER_TOKEN
AVERAGE_WORDS = 150.0  # BM25's mean length, fixed: a growing collection has no stable mean
_NAMESPACE = uuid.UUID("6f1c0a52-33a4-4c35-9a53-5d6c1b4b7a10")
_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    "dist",
    "build",
}
_CODE = {
    ".py": "python",
    ".js": "js",
    ".mjs": "js",
    ".jsx": "js",
    ".ts": "ts",
    ".tsx": "ts",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".scala": "scala",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".lua": "lua",
    ".hs": "haskell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".sol": "sol",
    ".proto": "proto",
    ".tex": "latex",
}
_TEXT = {
    ".txt",
    ".text",
    ".csv",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".conf",
    ".sh",
    ".sql",
    ".xml",
    ".log",
    ".org",
}
_MARKDOWN = {".md", ".markdown", ".mdx"}
_HTML = {".html", ".htm", ".xhtml"}
_PDF = {".pdf"}
_RST = {".rst"}


class SkipError(RatError):
    """One input could not be read; it is reported and the others are ingested."""


@dataclass(frozen=True)
class Loaded:
    source: str  # resolved path or URL: the chunk's citation and its identity
    title: str
    text: str
    kind: str  # "markdown", "html", "pdf", "text" or a language of code
    note: str = ""  # ingested, but the user should know (a page cut at the size cap)


@dataclass
class Report:
    collection: str
    sources: int = 0
    unchanged: int = 0  # sources already ingested with the same content
    added: int = 0  # chunks embedded and stored
    kept: int = 0  # chunks of changed sources whose text did not change
    removed: int = 0  # chunks of earlier versions deleted
    failed: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


Progress = Callable[[str, int, int], None]  # (stage, done, total)


# --- finding and reading inputs ------------------------------------------------------------


def _is_url(item: str) -> bool:
    return item.startswith(("http://", "https://"))


def discover(
    items: Sequence[str], *, follow_links: bool = False
) -> tuple[list[str], list[tuple[str, str]]]:
    """Files (folders walked recursively, in a stable order) and URLs; missing paths fail.

    A symbolic link inside a folder is not followed unless `follow_links`, and is reported
    as skipped: it may point anywhere (a secret elsewhere, /proc/self/status). A path
    given by name is the user's choice and is read wherever it points."""
    found: list[str] = []
    failed: list[tuple[str, str]] = []
    for item in items:
        if _is_url(item):
            found.append(item)
            continue
        if "://" in item:
            failed.append((item, "only http(s) URLs and local paths can be ingested"))
            continue
        path = Path(item).expanduser()
        if path.is_dir():
            found.extend(str(p) for p in _walk(path, failed, follow_links, set()))
        elif path.is_file():
            found.append(str(path.resolve()))
        elif path.exists():  # reading a FIFO or /dev/zero would never end
            failed.append((item, "not a regular file (a FIFO, a device or a socket)"))
        else:
            failed.append((item, "no such file or folder"))
    return list(dict.fromkeys(found)), failed


def _walk(
    folder: Path, failed: list[tuple[str, str]], follow_links: bool, seen: set[Path]
) -> Iterator[Path]:
    seen.add(folder.resolve())  # a followed link back up the tree is walked once
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:  # an unreadable sub-folder: skip it, keep the rest
        failed.append((str(folder), f"cannot read the folder: {exc.strerror or exc}"))
        return
    for path in entries:
        if path.name.startswith(".") or path.name in _SKIP_DIRS:
            continue
        if path.is_symlink() and not follow_links:
            if path.is_dir() or _kind(path.suffix.lower()) is not None:
                failed.append((str(path), "a symbolic link, not followed (--follow-links)"))
            continue
        if path.is_dir():
            if path.resolve() not in seen:
                yield from _walk(path, failed, follow_links, seen)
        elif path.is_file() and _kind(path.suffix.lower()) is not None:
            yield path.resolve()


def _kind(suffix: str) -> str | None:
    if suffix in _MARKDOWN:
        return "markdown"
    if suffix in _HTML:
        return "html"
    if suffix in _PDF:
        return "pdf"
    if suffix in _RST:
        return "rst"
    if suffix in _CODE:
        return _CODE[suffix]
    if suffix in _TEXT:
        return "text"
    return None


def load(item: str, *, allow_private: fetch.Allow | None = None) -> Loaded:
    """Read one file or URL as text; raises SkipError with the reason when it cannot."""
    if _is_url(item):
        return _load_url(item, allow_private)
    path = Path(item)
    kind = _kind(path.suffix.lower()) or "text"
    try:
        size = path.stat().st_size
        if size > LARGE_FILE_BYTES:  # said now: reading and embedding it takes a while
            log.warning(
                "%s is %.0f MB (about %s chunks to embed): this takes a while",
                path,
                size / 1e6,
                f"{size // (CHARS_PER_CHUNK):,}",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SkipError(f"cannot read: {exc.strerror or exc}") from None
    return _parse(str(path), path.stem.replace("_", " "), data, kind, charset=None)


def _load_url(url: str, allow_private: fetch.Allow | None) -> Loaded:
    try:
        page = fetch.fetch(
            url, allow_private=allow_private, accept=(*fetch.TEXT_TYPES, "application/pdf")
        )
    except fetch.FetchError as exc:  # its message starts with the URL, which is shown anyway
        raise SkipError(str(exc).removeprefix(f"{url}: ")) from None
    kind = {
        "text/html": "html",
        "application/xhtml+xml": "html",
        "application/pdf": "pdf",
        "text/markdown": "markdown",
    }.get(page.content_type, "text")
    if kind == "pdf" and page.truncated:
        raise SkipError(f"larger than {fetch.MAX_BYTES:,} bytes")  # a cut PDF does not parse
    name = page.url.rstrip("/").rsplit("/", 1)[-1] or page.url
    loaded = _parse(page.url, name, page.content, kind, charset=page.charset)
    if page.truncated:
        note = f"cut at {fetch.MAX_BYTES:,} bytes: the rest of it is not ingested"
        return dataclasses.replace(loaded, note=note)
    return loaded


def _parse(source: str, name: str, data: bytes, kind: str, charset: str | None) -> Loaded:
    note = ""
    if kind == "pdf":
        title, text, note = _pdf_text(data)
    else:
        wide = _wide_encoding(data, charset)
        if wide is None and b"\x00" in data[:8192]:
            raise SkipError("binary content, not text")
        codec = wide or charset or "utf-8"
        if codec.lower().replace("_", "-") in ("utf-8", "utf8"):
            codec = "utf-8-sig"  # a byte order mark is not text
        raw = data.decode(codec, errors="replace")
        title, text = "", raw
        if kind == "html":
            title, text = passages.html_to_text(raw)
        elif kind == "markdown":
            title = next(
                (line.lstrip("#").strip() for line in raw.splitlines() if line.startswith("# ")), ""
            )
    if not text.strip():
        raise SkipError("no text in it")
    return Loaded(source, title or name, text, kind, note=note)


def _wide_encoding(data: bytes, charset: str | None) -> str | None:
    """UTF-16 or UTF-32, by byte order mark or declared charset: text full of NUL bytes
    that is not binary."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    declared = (charset or "").lower().replace("_", "-")
    return declared if declared.startswith(("utf-16", "utf-32")) else None


def _pdf_text(data: bytes) -> tuple[str, str, str]:
    from rat_agent.ingest import pdf

    try:
        return pdf.text_of(data)
    except pdf.Unreadable as exc:
        raise SkipError(str(exc)) from None


# --- chunks and their ids ------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    metadata: dict[str, object]


def chunk(doc: Loaded, *, tokens: int = CHUNK_TOKENS, overlap: int = OVERLAP_TOKENS) -> list[Chunk]:
    language = None if doc.kind in ("html", "pdf", "text") else doc.kind
    texts = passages.split_text(doc.text, tokens=tokens, overlap=overlap, language=language)
    digest = hashlib.sha256(doc.text.encode()).hexdigest()
    seen: dict[str, int] = {}
    chunks = []
    for position, text in enumerate(texts):
        text_hash = hashlib.sha256(text.encode()).hexdigest()
        occurrence = seen[text_hash] = seen.get(text_hash, -1) + 1  # a repeated passage
        point_id = str(uuid.uuid5(_NAMESPACE, f"{doc.source}\0{text_hash}\0{occurrence}"))
        metadata: dict[str, object] = {
            "title": doc.title,
            "source": doc.source,
            "position": position,
            "chunks": len(texts),
            "sha256": digest,
            "kind": doc.kind,
        }
        chunks.append(Chunk(point_id, text, metadata))
    return chunks


# --- the job ---------------------------------------------------------------------------------


_SCAN_SOURCES = 256  # sources per scan request


def _stored_chunks(
    client: Store, collection: str, sources: Sequence[str]
) -> dict[str, dict[str, dict[str, object]]]:
    """source -> {chunk id: metadata} for what the collection holds of these sources.

    One scan per ingest, not a filtered query per file: embedded Qdrant evaluates filters
    by walking every point, so per-file queries made ingestion quadratic.
    """
    stored: dict[str, dict[str, dict[str, object]]] = {}
    for start in range(0, len(sources), _SCAN_SOURCES):
        wanted = models.Filter(
            must=[
                models.FieldCondition(
                    key="metadata.source",
                    match=models.MatchAny(any=list(sources[start : start + _SCAN_SOURCES])),
                )
            ]
        )
        offset = None
        while True:
            records, offset = client.scroll(
                collection,
                scroll_filter=wanted,
                limit=1024,
                offset=offset,
                with_payload=["metadata"],
                with_vectors=False,
            )
            for record in records:
                metadata = dict((record.payload or {}).get("metadata") or {})
                stored.setdefault(str(metadata.get("source")), {})[str(record.id)] = metadata
            if offset is None:
                break
    return stored


def _up_to_date(doc: Loaded, have: dict[str, dict[str, object]]) -> bool:
    """Stored whole, and with this exact content: skip it without cutting it again."""
    digest = hashlib.sha256(doc.text.encode()).hexdigest()
    return bool(have) and all(
        m.get("sha256") == digest and m.get("chunks") == len(have) for m in have.values()
    )


def _ensure_collection(client: Store, collection: str, draft: str) -> None:
    declared = {"draft": draft} if draft else {}
    if not client.collection_exists(collection):
        refuse_damaged(collection)
        metadata = {**collection_metadata(), **declared}
        hybrid.create_collection(client, collection, metadata=metadata)
    check_collection(client, collection, write=True)
    if draft and (client.get_collection(collection).config.metadata or {}).get("draft") != draft:
        client.update_collection(collection, metadata=declared)


def _check_target(collection: str) -> None:
    """Before anything is read: a collection that exists must be one this run may fill
    (documents, made by us, and in a served user's run theirs)."""
    check_collection_name(collection)
    with locked_client() as client:
        if client.collection_exists(collection):
            check_collection(client, collection, write=True)


@dataclass
class _Pending:
    """A source whose new chunks are being stored; finished once `left` reaches 0."""

    doc: Loaded
    new: list[Chunk]  # not in the collection yet: to embed
    refresh: list[Chunk]  # stored, but their position or file hash changed
    stale: list[str]  # ids of stored chunks the source no longer has
    left: int


def ingest(
    items: Sequence[str],
    *,
    collection: str,
    allow_private: fetch.Allow | None = None,
    follow_links: bool = False,
    batch: int = BATCH,
    tokens: int = CHUNK_TOKENS,
    overlap: int = OVERLAP_TOKENS,
    progress: Progress | None = None,
    draft: str = "",
) -> Report:
    """Index `items` (files, folders, URLs) into `collection`; returns what changed.

    `draft` (one of DRAFTS), where given, is what the collection declares of the draft
    its tasks want (retrieval.settings.DRAFT_KEY); it replaces an earlier declaration."""
    if draft and draft not in DRAFTS:
        raise ConfigError(f"draft must be one of {', '.join(DRAFTS)}, got {draft!r}")
    report = Report(collection)
    _check_target(collection)
    sources, report.failed = discover(items, follow_links=follow_links)

    # Read and cut everything first: the embedding stage then knows its total (the
    # progress bar) and batches chunks across small files (the throughput).
    docs: list[Loaded] = []
    budget = SERVED_INGEST_CHARS if current_user() else None
    for done, item in enumerate(sources):
        check_user()  # a served user revoked mid-ingest: it stops before the next source
        if progress:
            progress("reading", done, len(sources))
        if budget is not None and budget <= 0:
            report.failed.append((item, SERVED_TEXT_SPENT))
            continue
        try:
            docs.append(load(item, allow_private=allow_private))
            if docs[-1].note:
                report.notes.append((item, docs[-1].note))
            if budget is not None:
                budget -= len(docs[-1].text)
        except SkipError as exc:
            report.failed.append((item, str(exc)))
        except Exception as exc:  # one bad input (a PDF bomb, a codec) must not end the rest
            report.failed.append((item, f"{type(exc).__name__}: {exc}"))
    report.sources = len(docs)
    if not docs:  # nothing readable: leave no empty collection behind
        return report
    with locked_client() as client:
        _ensure_collection(client, collection, draft)
        stored = _stored_chunks(client, collection, [doc.source for doc in docs])
    pending: list[_Pending] = []
    for done, doc in enumerate(docs):
        if progress:
            progress("cutting", done, len(docs))
        have = stored.get(doc.source, {})
        if _up_to_date(doc, have):
            report.unchanged += 1
            continue
        try:
            chunks = chunk(doc, tokens=tokens, overlap=overlap)
        except Exception as exc:  # e.g. a file name that is not valid UTF-8
            report.failed.append((doc.source, f"{type(exc).__name__}: {exc}"))
            continue
        ids = {c.id for c in chunks}
        new = [c for c in chunks if c.id not in have]
        refresh = [c for c in chunks if c.id in have and have[c.id] != c.metadata]
        report.kept += len(chunks) - len(new)
        pending.append(_Pending(doc, new, refresh, [i for i in have if i not in ids], len(new)))
    if progress:
        progress("cutting", len(docs), len(docs))

    todo = [(p, c) for p in pending for c in p.new]
    finished = 0
    for group in _batches(todo, batch):
        check_user()  # and before the next batch is stored
        _store(collection, [c for _, c in group])
        report.added += len(group)
        if progress:
            progress("embedding", report.added, len(todo))
        for owner, _ in group:
            owner.left -= 1
        while finished < len(pending) and pending[finished].left == 0:
            report.removed += _finish(collection, pending[finished])
            finished += 1
    for rest in pending[finished:]:
        report.removed += _finish(collection, rest)
    if progress:
        progress("embedding", len(todo), len(todo))
    if todo or report.removed:
        with locked_client() as client:
            if isinstance(client, EdgeClient):  # a server indexes on its own
                client.optimize(collection)
    return report


def _batches(
    items: Sequence[tuple[_Pending, Chunk]], size: int
) -> Iterable[Sequence[tuple[_Pending, Chunk]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _store(collection: str, chunks: Sequence[Chunk]) -> None:
    texts = [c.text for c in chunks]
    dense = get_embeddings().embed_documents(texts)
    sparse = hybrid.sparse_documents(
        texts, [(str(c.metadata["title"]),) for c in chunks], average=AVERAGE_WORDS
    )
    points = [
        hybrid.point(c.id, c.text, c.metadata, vector, lexical)
        for c, vector, lexical in zip(chunks, dense, sparse, strict=True)
    ]
    with locked_client() as client:
        client.upsert(collection, points, wait=True)


def _finish(collection: str, item: _Pending) -> int:
    """Once all new chunks are stored: refresh moved chunks, then drop the stale ones."""
    with locked_client() as client:
        if item.refresh:
            client.batch_update_points(
                collection,
                [
                    models.SetPayloadOperation(
                        set_payload=models.SetPayload(
                            payload={"metadata": c.metadata}, points=[c.id]
                        )
                    )
                    for c in item.refresh
                ],
            )
        if item.stale:
            stale: list[models.ExtendedPointId] = list(item.stale)
            client.delete(collection, points_selector=models.PointIdsList(points=stale))
    return len(item.stale)
