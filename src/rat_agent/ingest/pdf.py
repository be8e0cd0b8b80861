"""A PDF's title and text, read in a process of its own with bounded CPU time and memory.

A few kilobytes of PDF can make a parser do any amount of work: one page listed a hundred
thousand times, one compressed stream that every page (or one page, many times over) draws,
content that yields no text however long it is parsed. No check on the parser's output
bounds that; the operating system's limits on a child process do, and a PDF that reaches
them is skipped with one line, while the ingest and the server go on.

Run as `python -m rat_agent.ingest.pdf`: the PDF on stdin, JSON on stdout.
"""

from __future__ import annotations

import io
import json
import logging
import resource
import subprocess
import sys

CPU_SECONDS = 60  # a 1,000-page manual reads in a few seconds
MEMORY_BYTES = 2 << 30  # address space: the interpreter, pypdf and one document
TEXT_CHARS = 5_000_000  # as a page's bytes are bounded (fetch.MAX_BYTES)


class Unreadable(Exception):
    """The PDF could not be read, or not within the limits; the message says why."""


def text_of(data: bytes) -> tuple[str, str, str]:
    """The PDF's title, its text and a note where the text was cut."""
    wall = CPU_SECONDS * 4 + 30
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rat_agent.ingest.pdf", str(CPU_SECONDS), str(MEMORY_BYTES)],
            input=data,
            capture_output=True,
            timeout=wall,
            check=False,
        )
    except subprocess.TimeoutExpired:  # waiting for a busy machine's CPU, or blocked
        raise Unreadable(f"reading it took more than {wall} s") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        if done.returncode < 0 or not why or "MemoryError" in why[-1]:
            raise Unreadable(
                f"reading it took more than {CPU_SECONDS} s of CPU or "
                f"{MEMORY_BYTES >> 20:,} MB of memory"
            )
        raise Unreadable(why[-1])
    found = json.loads(done.stdout)
    return found["title"], found["text"], found["note"]


def _read(data: bytes) -> dict[str, str]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    # pypdf logs each oddity of a damaged PDF as a warning: the skip line says enough.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    texts: list[str] = []
    size, seen, note = 0, set(), ""
    try:
        reader = PdfReader(io.BytesIO(data))
        title = str(reader.metadata.get("/Title") or "") if reader.metadata else ""
        for page in reader.pages:
            ref = page.indirect_reference  # a page listed again adds nothing
            if ref is not None:
                if (ref.idnum, ref.generation) in seen:
                    continue
                seen.add((ref.idnum, ref.generation))
            texts.append(page.extract_text() or "")
            size += len(texts[-1])
            if size > TEXT_CHARS:
                note = f"cut at {TEXT_CHARS:,} characters of text: the rest is not ingested"
                break
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise Unreadable(f"unreadable PDF: {exc}") from None
    return {"title": title, "text": "\n\n".join(texts)[:TEXT_CHARS], "note": note}


def main() -> None:
    cpu, memory = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        found = _read(sys.stdin.buffer.read())
    except Unreadable as exc:
        sys.exit(str(exc))
    json.dump(found, sys.stdout)


if __name__ == "__main__":
    main()
