"""Score committed Minecraft results again with today's checker, in place.

`rat eval --rescore` does this for the results of today's code only: a file made by older
code has result keys the CLI no longer computes. This rescores such files line by line,
rewrites the table and plots of each report whose scores changed, and prints every answer
whose score, failed step or reason changed.

    .venv/bin/python benchmarks/rescore.py benchmarks/results/*.jsonl --why "what changed"

A report whose scores changed says so under its title: its table is the new score, and
any figure in its text was made by the checker of its day.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from datetime import date
from pathlib import Path

from rat_agent.eval.plots import plot
from rat_agent.eval.runner import (
    Case,
    Result,
    minecraft_case,
    minecraft_score,
    rescored,
    table,
)
from rat_agent.minecraft.tasks import load_tasks

TABLE = re.compile(r"^\| method \|.*?(?=\n\n|\n?\Z)", re.M | re.S)


def rescore(path: Path, cases: dict[str, Case], why: str = "") -> int:
    """Rescore one results file, as `rat eval --rescore` does (the suite's own scorer);
    the number of answers whose score changed."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows or any(row.get("task") not in cases or "score" not in row for row in rows):
        return 0  # not a Minecraft results file (HumanEval, memory, ...)
    results, changed, edited = [], 0, False
    for row in rows:
        result = Result(**row)
        if not result.error:
            new = rescored(result, minecraft_score(cases[result.task], result.answer))
            if new != result:
                edited = True
                print(
                    f"{path.name} {result.task} {result.method}: {result.score:g} -> "
                    f"{new.score:g}, step {result.failed_step} -> {new.failed_step}: "
                    f"{new.reason}"
                )
            changed += new.score != result.score
            result = new
        results.append(result)
    if edited:
        path.write_text("".join(json.dumps(dataclasses.asdict(r)) + "\n" for r in results))
    report = path.with_suffix(".md")
    if changed and report.exists():
        before = _executable(rows)
        after = _executable([dataclasses.asdict(r) for r in results])
        note = (
            f"**Re-scored {date.today()} by `benchmarks/rescore.py`{': ' + why if why else ''}.** "
            f"{changed} scores changed; executable plans per method, then and now: "
            + ", ".join(f"{m} {before[m]} -> {after[m]}" for m in after if before[m] != after[m])
            + ". The table is the new score; figures in the text below were made by the "
            "checker of their day.\n\n"
        )
        title, _, body = report.read_text().partition("\n\n")
        text = TABLE.sub(lambda _: table(results), body, count=1)
        report.write_text(f"{title}\n\n{note}{text}")
        plot(results, path.with_suffix(""), f"minecraft, {results[0].model}")
    return changed


def _executable(rows: list[dict[str, object]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        method = str(row["method"])
        counts[method] = counts.get(method, 0) + (row["score"] == 1)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--why", default="", help="what changed in the checker, for the notes")
    args = parser.parse_args()
    cases = {task.id: minecraft_case(task) for task in load_tasks()}
    for path in args.files:
        rescore(path, cases, args.why)


if __name__ == "__main__":
    main()
