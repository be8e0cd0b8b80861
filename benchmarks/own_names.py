"""Does the source give every name the model's own answer uses where the model knew the
answer, and miss one where it did not? The check draft "auto" makes (`agent/attest.py`)
before it chooses between the model's own answer and rag's reply, run over committed
answers, with no model call.

Questions: the docs tune split where a committed run holds direct's and rag's answers (7),
and the 20 Python questions of benchmarks/second_corpus.py (its tune split). For each: the
names direct's answer gives, the first one the source does not give (or none), and the
keys direct's and rag's answers name, beside those of the draft the check would choose (the
draft only: the loop's revisions come after). Run from the repository root:
`python benchmarks/own_names.py` (a minute; searches only). Writes
benchmarks/results/own-names.md.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from merge_probe import RESULTS, tune_work


def main() -> None:
    from rat_agent.agent.context import Context
    from rat_agent.agent.nodes import RatNodes
    from rat_agent.eval import docs, humaneval

    docs.ensure_collection()
    humaneval.ensure_docs_collection()
    work = tune_work()
    rows, totals = [], {"direct": 0.0, "rag": 0.0, "chosen": 0.0}
    for case, collection, own, rag in work:
        ctx = Context(retriever="qdrant", collection=collection, k=3)
        unknown = RatNodes().unknown_name(ctx, case.question, own)
        scores = {"direct": docs.score(case, own).score, "rag": docs.score(case, rag).score}
        scores["chosen"] = scores["direct"] if unknown is None else scores["rag"]
        for method, value in scores.items():
            totals[method] += value
        draft = "own answer" if unknown is None else f"rag's reply: {unknown}"
        cells = " | ".join(f"{scores[m]:.0%}" for m in totals)
        rows.append(f"| {case.id} | {draft} | {cells} |")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    means = " | ".join(f"**{totals[m] / len(work):.0%}**" for m in totals)
    lines = [
        f"Code: repository HEAD {commit}; {dt.date.today()}. "
        "Command: `python benchmarks/own_names.py`",
        "",
        "| question | draft the check chooses | direct | rag | chosen draft |",
        "|---|---|---|---|---|",
        *rows,
        f"| mean of {len(work)} | | {means} |",
    ]
    print("\n".join(lines))
    with (Path(RESULTS) / "own-names.md").open("a") as out:
        out.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
