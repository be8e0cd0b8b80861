"""Ingestion throughput against the embedding model's own, measured side by side.

Run from the repository root: `python benchmarks/ingest.py` (option `--pages N`). The
documents are the bundled Minecraft pages written out as Markdown files plus this
project's own Python sources, so every machine ingests the same bytes. It measures:

- raw: the embedder alone on exactly the chunks ingestion produces, in one call (the
  upper bound: no reading, cutting, lexical vectors or storage);
- ingest: `rat ingest` end to end into a fresh embedded Qdrant collection;
- re-ingest: the same files again (nothing changed: nothing embedded).

Raw is measured before and after ingest and averaged, so a machine that warms up or
slows down during the run does not favour either side. Writes benchmarks/results/ingest.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "ingest.md"
TARGET = 0.8


def write_corpus(folder: Path, pages: int) -> None:
    from rat_minecraft.corpus import build_pages

    docs = folder / "docs"
    docs.mkdir()
    for page in build_pages()[:pages]:
        (docs / f"{page.id}.md").write_text(f"# {page.title}\n\n{page.text}\n")
    code = folder / "code"
    code.mkdir()
    for source in sorted((ROOT / "src" / "rat_agent").rglob("*.py")):
        (code / source.name).write_text(source.read_text())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=600, help="Minecraft pages to ingest")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAT_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ.pop("QDRANT_URL", None)
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        write_corpus(corpus, args.pages)
        run(corpus, argv if argv is not None else sys.argv[1:])


def run(corpus: Path, argv: list[str]) -> None:
    from rat_agent.ingest import pipeline
    from rat_agent.providers.embeddings import get_embeddings

    embeddings = get_embeddings()
    embeddings.embed_documents(["warm up the model"] * 8)
    items, _ = pipeline.discover([str(corpus)])
    texts = [c.text for item in items for c in pipeline.chunk(pipeline.load(item))]
    files = len(items)

    def raw() -> float:
        started = time.perf_counter()
        embeddings.embed_documents(texts)
        return time.perf_counter() - started

    raw_before = raw()
    started = time.perf_counter()
    report = pipeline.ingest([str(corpus)], collection="bench")
    ingest_s = time.perf_counter() - started
    raw_after = raw()
    started = time.perf_counter()
    again = pipeline.ingest([str(corpus)], collection="bench")
    again_s = time.perf_counter() - started

    assert report.added == len(texts), (report, len(texts))
    assert again.added == 0 and again.unchanged == files, again
    raw_s = (raw_before + raw_after) / 2
    raw_rate, ingest_rate = len(texts) / raw_s, report.added / ingest_s
    ratio = ingest_rate / raw_rate
    command = "python benchmarks/ingest.py" + (f" {' '.join(argv)}".rstrip())
    lines = [
        "# Ingestion throughput",
        "",
        f"- date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}",
        f"- command (from the repository root, venv active): `{command}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, CPython "
        f"{platform.python_version()}, CPU only",
        f"- input: {files} files (Minecraft pages as Markdown, this project's Python "
        f"sources), {len(texts)} chunks of at most {pipeline.CHUNK_TOKENS} tokens",
        "- store: embedded Qdrant on disk, a fresh collection",
        "",
        "| what | seconds | chunks/s | ratio to raw |",
        "|---|---|---|---|",
        f"| raw embedding (mean of before {raw_before:.1f} s and after {raw_after:.1f} s) "
        f"| {raw_s:.1f} | {raw_rate:.1f} | 1.00 |",
        f"| ingest (read, cut, embed, lexical vectors, store) | {ingest_s:.1f} | "
        f"{ingest_rate:.1f} | **{ratio:.2f}** |",
        f"| re-ingest, nothing changed ({again.unchanged} files skipped) | {again_s:.1f} | - | - |",
        "",
        f"Target: ingest at least {TARGET} of the raw rate: "
        f"{'met' if ratio >= TARGET else 'NOT met'}.",
    ]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
