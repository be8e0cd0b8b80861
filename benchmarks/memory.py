"""Self-evolution with thought memory (the Thought-Retriever paper's finding) on the
Minecraft suite: the same sequence of related tasks, run with method rat once without
memory and once with a memory that starts empty.

Run from the repository root: `python benchmarks/memory.py` (options `--tasks N`,
`--model M`). Resumable: finished tasks are kept under the data folder. Writes
benchmarks/results/memory-<model>.{md,jsonl,png}. See rat_minecraft/evolution.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from dataclasses import asdict
from pathlib import Path

from rat_minecraft.evolution import plot, run_sequence, table
from rat_minecraft.tasks import load_tasks

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=15, help="the suite's first N tasks")
    parser.add_argument("--model", default="local")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=6)
    args = parser.parse_args(argv)
    tasks = load_tasks()[: args.tasks]
    context = {
        "model": args.model,
        "retriever": "minecraft",
        "k": args.k,
        "max_steps": args.max_steps,
        "max_tokens": 512,
    }

    def progress(arm: str, done: int, total: int) -> None:
        print(f"{arm}: {done}/{total} tasks", file=sys.stderr, flush=True)

    points = run_sequence(tasks, context=context, progress=progress)
    name = "memory-" + args.model.replace(":", "-").replace("/", "-")
    (RESULTS / f"{name}.jsonl").write_text("".join(json.dumps(asdict(p)) + "\n" for p in points))
    png = plot(
        points,
        RESULTS / f"{name}.png",
        f"Thought memory on {len(tasks)} related Minecraft tasks, model {args.model}",
    )
    command = "python benchmarks/memory.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )
    lines = [
        f"# Thought memory: self-evolution on the Minecraft suite, model {args.model}",
        "",
        f"- date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}",
        f"- command (from the repository root, venv active): `{command}`",
        f"- tasks: the suite's first {len(tasks)}, in order "
        f"({', '.join(t.goal for t in tasks)}); method rat, k={args.k}, "
        f"max_steps={args.max_steps}; memory: default settings (memory_k 2, novelty 0.85, "
        "thoughts from steps and answer), starting empty",
        "- retrieval recall: the share of the items the task's reference plan crafts or "
        "smelts (and the goal) whose corpus page some step retrieved, or that a retrieved "
        "thought names",
        f"- plot: {png.name}; per-task rows: {name}.jsonl",
        "",
        table(points),
        "",
        "| task | thoughts before | recall without → with | executable without / with | "
        "thoughts retrieved | thoughts stored |",
        "|---|---|---|---|---|---|",
    ]
    without = {p.position: p for p in points if p.arm == "no memory"}
    for p in (p for p in points if p.arm == "memory"):
        base = without.get(p.position)
        lines.append(
            f"| {p.task} | {p.thoughts_before} | "
            f"{f'{base.recall:.0%}' if base else '-'} → {p.recall:.0%} | "
            f"{('yes' if base.executable else 'no') if base else '-'} / "
            f"{'yes' if p.executable else 'no'} | {p.thoughts_retrieved} | {p.thoughts_stored} |"
        )
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
