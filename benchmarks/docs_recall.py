"""Retrieval for the docs benchmark: is the setting a question needs in the passages its
own text retrieves, with the file indexed once and with the same file indexed 8 times?
And is it in what the model reads of them, the passages kept within evidence_tokens?

Run from the repository root: `python benchmarks/docs_recall.py` (options: `--k 3`,
`--copies 8`, `--budgets 150,300,600,1000`). Builds both collections in a temporary data
folder (the copies reuse the first copy's vectors), then, for each split, retrieves the
top k passages for every question and counts the answer keys whose setting
(`maxmemory-policy`) is in one of them; also the distinct passages per query. Then, on
the file indexed once, the same count in the passages `rat_agent.retrieval.evidence.select`
keeps of them for each token budget, as method rag shows them to the model (targets: the
question). Writes benchmarks/results/docs-recall.md.

Run it with PYTHONPATH pointing at an older checkout's src to measure that code's search.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "docs-recall.md"


def _copies(collection: str, copies: int) -> None:
    """Store every point of `collection` again `copies - 1` times, as other files."""
    from qdrant_client import models

    from rat_agent.retrieval.qdrant.client import locked_client

    with locked_client() as client:
        records, _ = client.scroll(collection, limit=100_000, with_payload=True, with_vectors=True)
        for n in range(1, copies):
            points = []
            for record in records:
                payload = dict(record.payload or {})
                payload["metadata"] = {**payload["metadata"], "source": f"/copy{n}/redis.conf"}
                points.append(
                    models.PointStruct(
                        id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{n}/{record.id}")),
                        vector=record.vector,  # type: ignore[arg-type]
                        payload=payload,
                    )
                )
            client.upsert(collection, points, wait=True)


def _measure(collection: str, split: str, k: int) -> tuple[int, int, float]:
    from rat_agent.eval import docs
    from rat_agent.retrieval.qdrant import hybrid
    from rat_agent.retrieval.qdrant.client import locked_client

    found = total = distinct = queries = 0
    for question in docs.load_questions():
        if question["split"] != split:
            continue
        with locked_client() as client:
            passages = hybrid.search(client, collection, question["question"], k)
        text = "\n".join(p.page_content for p in passages)
        distinct += len({p.page_content for p in passages})
        queries += 1
        for key in question["keys"]:
            setting = (key if isinstance(key, str) else key[0]).split(" ")[0]
            total += 1
            found += docs.gives(text, setting)
    return found, total, distinct / max(queries, 1)


def _read(collection: str, split: str, k: int, budgets: list[int]) -> dict[int, int]:
    """Per budget, the keys whose setting is in the passages kept within it."""
    from rat_agent.eval import docs
    from rat_agent.retrieval import evidence
    from rat_agent.retrieval.qdrant import hybrid
    from rat_agent.retrieval.qdrant.client import locked_client
    from rat_agent.services import as_dict

    found = dict.fromkeys(budgets, 0)
    for question in docs.load_questions():
        if question["split"] != split:
            continue
        with locked_client() as client:
            documents = [
                as_dict(p) for p in hybrid.search(client, collection, question["question"], k)
            ]
        for budget in budgets:
            kept = evidence.select(documents, [question["question"]], budget).documents
            text = "\n".join(d["content"] for d in kept)
            for key in question["keys"]:
                found[budget] += docs.gives(
                    text, (key if isinstance(key, str) else key[0]).split(" ")[0]
                )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--budgets", default="150,300,600,1000")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAT_DATA_DIR"] = tmp
        from rat_agent.eval import docs
        from rat_agent.ingest.pipeline import ingest

        ingest([str(docs.DOCUMENT)], collection="once")
        ingest([str(docs.DOCUMENT)], collection="copies")
        _copies("copies", args.copies)
        rows, read = [], []
        for split in docs.SPLITS:
            within = _read("once", split, args.k, budgets)
            keys = sum(len(q["keys"]) for q in docs.load_questions() if q["split"] == split)
            cells = " | ".join(f"{within[b]}/{keys} = {within[b] / keys:.0%}" for b in budgets)
            read.append(f"| {split} | {cells} |")
            for name, label in (("once", "indexed once"), ("copies", f"{args.copies} copies")):
                found, total, distinct = _measure(name, split, args.k)
                rows.append(
                    f"| {split} | {label} | {found}/{total} = {found / total:.0%} | "
                    f"{distinct:.2f} |"
                )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    import rat_agent

    code = Path(rat_agent.__file__).resolve().parents[1]
    lines = [
        f"Search code: {code} (repository HEAD {commit}); {dt.date.today()}, "
        f"{platform.machine()}, Python {sys.version.split()[0]}.",
        f"Command: `python benchmarks/docs_recall.py --k {args.k} --copies {args.copies} "
        f"--budgets {args.budgets}`",
        "",
        f"| split | collection | keys whose setting is in the top {args.k} | distinct "
        "passages per query |",
        "|---|---|---|---|",
        *rows,
        "",
        f"What the model reads of the top {args.k} (indexed once): keys whose setting is in "
        "the passages kept within evidence_tokens",
        "",
        "| split | " + " | ".join(f"{b} tokens" for b in budgets) + " |",
        "|---|" + "---|" * len(budgets),
        *read,
    ]
    print("\n".join(lines))
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as out:
        out.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
