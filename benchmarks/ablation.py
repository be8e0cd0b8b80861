"""Retrieval ablation (the paper's Table 3, without an LLM): recall@k of the page a plan step
needs, when the query is the task (RAG), the whole draft (CoT+RAG) or the step (RAT).

Run from the repository root: `python benchmarks/ablation.py` (options `--tasks N`, `--k K`).
Writes benchmarks/results/ablation.md. See src/rat_minecraft/ablation.py for the method.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

from rat_minecraft.ablation import cases, corpus_search, run
from rat_minecraft.tasks import load_tasks

RESULTS = Path(__file__).parent / "results" / "ablation.md"
NAMES = {
    "rag": "task as query (RAG)",
    "cot_rag": "whole draft as query (CoT+RAG)",
    "rat": "the step's draft as query (RAT, text mode)",
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=0, help="first N tasks (0: all)")
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args(argv)
    tasks = load_tasks()
    tasks = tasks[: args.tasks] if args.tasks else tasks
    started = time.perf_counter()
    step_cases = cases(tasks)
    scores = run(step_cases, corpus_search, k=args.k)
    seconds = time.perf_counter() - started
    command = "python benchmarks/ablation.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )
    lines = [
        "# Retrieval ablation (the paper's Table 3, without an LLM)",
        "",
        f"- date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}",
        f"- command (from the repository root, venv active): `{command}`",
        f"- tasks: {len(tasks)} of the Minecraft suite; {len(step_cases)} crafting and "
        "smelting steps of their reference plans, each drafted with injected errors (wrong "
        "counts, a wrong ingredient) with seed 0",
        f"- hit: the page of the item the step makes is in the top {args.k} of the offline "
        f"corpus (hybrid search); {seconds:.0f} s in all",
        "",
        f"| query | steps | recall@{args.k} |",
        "|---|---|---|",
        *(f"| {NAMES[s.kind]} | {s.steps} | {s.recall:.3f} |" for s in scores),
    ]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
