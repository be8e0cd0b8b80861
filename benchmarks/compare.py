"""Two results files of `rat eval`, task by task: the same tasks and method run by two
commits (or settings), side by side.

Run: `.venv/bin/python benchmarks/compare.py BEFORE.jsonl AFTER.jsonl [--method rat]`.
Prints a Markdown table of each task both files hold: its score, completion tokens, prompt
tokens processed, model calls and wall seconds in each, and whether the answers are the same.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any


def load(path: Path, method: str) -> dict[str, dict[str, Any]]:
    """The file's runs of `method` by task (its first sample)."""
    runs: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        run = json.loads(line)
        if run["method"] != method or str(run.get("sample", "0")) != "0":
            continue
        stats = run["stats"]
        run["stats"] = ast.literal_eval(stats) if isinstance(stats, str) else stats
        runs[run["task"]] = run
    return runs


def table(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> str:
    columns = ["completion_tokens", "processed_prompt_tokens", "model_calls", "wall_seconds"]
    rows = [
        "| task | score | completion tokens | prompt tokens processed | model calls | wall s "
        "| same answer |",
        "|---|---|---|---|---|---|---|",
    ]
    sums = {name: [0.0, 0.0] for name in ["score", *columns]}
    tasks = [task for task in before if task in after]
    for task in tasks:
        pair = before[task], after[task]
        cells = []
        for name in ["score", *columns]:
            values = [float(run[name] if name == "score" else run["stats"][name]) for run in pair]
            sums[name] = [s + v for s, v in zip(sums[name], values, strict=True)]
            cells.append(" / ".join(f"{v:g}" if name == "score" else f"{v:.0f}" for v in values))
        same = "yes" if pair[0]["answer"] == pair[1]["answer"] else "no"
        rows.append(f"| {task} | {' | '.join(cells)} | {same} |")
    totals = [" / ".join(f"{v:.0f}" for v in sums[name]) for name in ["score", *columns]]
    rows.append(f"| all {len(tasks)} | {' | '.join(totals)} | |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--method", default="rat")
    args = parser.parse_args()
    print(table(load(args.before, args.method), load(args.after, args.method)))


if __name__ == "__main__":
    main()
