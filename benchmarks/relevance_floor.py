"""Whether a search's documents bear on a step, told without the model: the revision
benchmark's cases (src/rat_agent/eval/revisions/) scored by the embedder the loop already
loads (all-MiniLM-L6-v2), as the cosine similarity of the step to its closest document.

A revision lever may skip the call where no document bears on the step (issue 79): this
measures whether a floor on that similarity tells the cases whose documents hold the step's
subject (agree, fix) from those whose documents do not (unrelated), per source, and which
floor keeps 95% of the first while skipping the most of the second. No model is called.

    python benchmarks/relevance_floor.py [--out benchmarks/results/relevance-floor.md]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from rat_agent.cli.eval import header
from rat_agent.eval.revision import load_cases, source_of
from rat_agent.providers.embeddings import get_embeddings

KEEP = 0.95  # the share of bearing cases a floor must still revise


def auc(bearing: list[float], other: list[float]) -> float:
    """The chance a bearing case scores above an unrelated one (ties count half)."""
    wins = sum((b > o) + 0.5 * (b == o) for b in bearing for o in other)
    return wins / (len(bearing) * len(other))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    cases = load_cases()
    embed = get_embeddings()
    steps = np.array(embed.embed_documents([c["step"] for c in cases]))
    texts = [d["content"] for c in cases for d in c["documents"]]
    docs = np.array(embed.embed_documents(texts))
    score: dict[str, float] = {}
    at = 0
    for c, step in zip(cases, steps, strict=True):
        mine = docs[at : at + len(c["documents"])]
        at += len(c["documents"])
        sims = mine @ step / (np.linalg.norm(mine, axis=1) * np.linalg.norm(step))
        score[c["id"]] = float(sims.max())
    rows = [
        "| source | cases | AUC | floor (keeps 95% bearing) | unrelated skipped |",
        "|---|---|---|---|---|",
    ]
    for source in ["all", *sorted({source_of(c["id"]) for c in cases})]:
        mine_cases = [c for c in cases if source in ("all", source_of(c["id"]))]
        bearing = [score[c["id"]] for c in mine_cases if c["kind"] != "unrelated"]
        other = [score[c["id"]] for c in mine_cases if c["kind"] == "unrelated"]
        floor = float(np.quantile(bearing, 1 - KEEP))
        skipped = sum(o < floor for o in other) / len(other)
        rows.append(
            f"| {source} | {len(mine_cases)} | {auc(bearing, other):.2f} | {floor:.3f} | "
            f"{skipped:.0%} |"
        )
    report = (
        header(
            "Does a document bear on the step? A floor on the embedder's similarity",
            "python benchmarks/relevance_floor.py --out benchmarks/results/relevance-floor.md",
        )
        + "- score: the cosine similarity (all-MiniLM-L6-v2) of the step to its closest document; "
        "bearing = agree and fix cases (a document holds the step's subject), unrelated = none "
        "does. AUC: the chance a bearing case scores above an unrelated one. No model is "
        "called.\n\n" + "\n".join(rows) + "\n"
    )
    print(report)
    if args.out:
        Path(args.out).write_text(report)


if __name__ == "__main__":
    main()
