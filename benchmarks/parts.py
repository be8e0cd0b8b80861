"""Which of issue 13's parts make rat work on the bundled model: rat as it was before the
issue, each part switched on alone, and all of them, on the same held-out Minecraft tasks.

Every arm is method rat with the suite's task prompt (the paper's, part 1), the paper's
chain-of-thought draft and the same budgets; only the context fields below differ:

- before_13: each document whole (cut to doc_chars), the paper's plain revision, no repair;
- evidence (part 2): the passages closest to the step, within evidence_tokens;
- reply (part 4): the grounded revision (quote, then step, then what it needs); whole
  documents rank no lines, so its quote may be any line shown (fact_choices 50; with 1 it
  could only be the first);
- repair (part 3, on part 4's reply, which names what a step needs): prerequisites become
  inserted steps, unsupported steps are dropped (min_support), the plan ends at the goal;
- no_repair: parts 2 and 4 together, without part 3 (all, less repair);
- all: parts 2 to 4 together (today's defaults; on 883b8e3's code its runs are the rat runs
  of the held-out 60 on these tasks, found by the same result key).

The draft (goal or chain of thought) is compared on the tune split, not here.

Run from the repository root: `python benchmarks/parts.py` (options `--tasks N`, `--arms
a,b`). Results are cached per task and arm (keyed by the code's hash, like `rat eval`), so a
stopped run resumes, and the committed results file seeds a fresh clone's cache. The
committed results are 883b8e3's: `git worktree add --detach /tmp/wt-held 883b8e3`, then
`PYTHONPATH=/tmp/wt-held/src python benchmarks/parts.py` finds them. Writes
benchmarks/results/parts.{md,jsonl} and the two plots.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from rat_agent.agent.graph import build_graph
from rat_agent.eval.plots import plot
from rat_agent.eval.runner import (
    Result,
    code_fingerprint,
    minecraft_case,
    minecraft_score,
    run,
    table,
)
from rat_agent.minecraft.tasks import load_tasks, sample

RESULTS = Path(__file__).parent / "results"
NAME = "parts"
# Arm "all" is today's rat, which the held-out methods run already ran on these tasks (the
# same result key on the same code), so its results seed the cache too.
HELD_OUT = RESULTS / "minecraft-local-test60-883b8e3.jsonl"
# The held-out sample of the methods report (the 6 test tasks read in earlier sessions
# are never drawn), so every arm's tasks are ones nobody tuned on.
EXCLUDE = "mc-shears,mc-diamond_axe,mc-enchanting_table,mc-brick_slab,mc-bone_block,mc-diorite_slab"
BASE = {"retriever": "minecraft", "k": 3, "max_steps": 6, "max_tokens": 512, "draft": "cot"}
BEFORE = {
    "evidence": "documents",
    "revision": "plain",
    "repair_steps": 0,
    "min_support": 0.0,
    "stop_at_goal": False,
    "reach_goal": False,
}
ARMS: dict[str, dict[str, Any]] = {
    "before_13": BEFORE,
    "evidence": {**BEFORE, "evidence": "passages"},
    "reply": {**BEFORE, "revision": "grounded", "fact_choices": 50},
    "repair": {"evidence": "documents", "revision": "grounded", "fact_choices": 50},
    "no_repair": {
        key: BEFORE[key] for key in ("repair_steps", "min_support", "stop_at_goal", "reach_goal")
    },
    "all": {},
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=30, help="stratified test-split sample")
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated, in order")
    parser.add_argument("--model", default="local")
    parser.add_argument("--report-only", action="store_true", help="compute nothing")
    args = parser.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if unknown := [a for a in arms if a not in ARMS]:
        sys.exit(f"unknown arm {unknown[0]!r}: choose from {', '.join(ARMS)}")
    tasks = sample(load_tasks(), args.tasks, "test", EXCLUDE.split(","))
    seed = Path(tempfile.mkdtemp()) / "seed.jsonl"
    seeds = (RESULTS / f"{NAME}.jsonl", HELD_OUT)
    seed.write_text("".join(p.read_text() for p in seeds if p.is_file()))
    found: dict[str, list[Result]] = {arm: [] for arm in ARMS}
    graph = build_graph()
    # Tasks outer, arms inner: a run stopped part-way leaves every arm on the same tasks.
    for task in tasks:
        for arm in ARMS:
            context = {**BASE, "model": args.model, **ARMS[arm]}
            compute = arm in arms and not args.report_only
            results = run(
                "minecraft",
                [minecraft_case(task)],
                ["rat"],
                score=minecraft_score,
                context=context,
                seed=seed,
                cached_only=not compute,
                graph=graph,
            )
            found[arm] += [dataclasses.replace(r, method=arm) for r in results]
        print(f"{task.id}: " + ", ".join(f"{a} {len(r)}" for a, r in found.items()), flush=True)
    report(found, len(tasks), args)


def report(found: dict[str, list[Result]], tasks: int, args: argparse.Namespace) -> None:
    results = [r for arm in ARMS for r in found[arm]]
    if not results:
        sys.exit("no runs computed yet")
    RESULTS.mkdir(exist_ok=True)
    # "method" names the arm here; the cache finds each result by its key alone.
    lines = (json.dumps(dataclasses.asdict(r)) + "\n" for r in results)
    (RESULTS / f"{NAME}.jsonl").write_text("".join(lines))
    plots = plot(results, RESULTS / NAME, f"rat's parts, model {args.model}")
    done = {arm: len(rows) for arm, rows in found.items()}
    partial = [f"{arm} {n} of {tasks}" for arm, n in done.items() if n < tasks]
    both = set.intersection(*({r.task for r in rows} for rows in found.values() if rows))
    paired = [
        f"{arm} {sum(r.score for r in rows if r.task in both):.0f}"
        for arm, rows in found.items()
        if rows
    ]
    (RESULTS / f"{NAME}.md").write_text(
        f"# Which of issue 13's parts make rat work, model {args.model}\n\n"
        f"- date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}; code (src) "
        f"fingerprint {code_fingerprint()[:12]}\n"
        f"- command: `PYTHONPATH=<worktree>/src python benchmarks/parts.py --tasks {tasks}`, "
        f"from a worktree of the commit whose src has the fingerprint above (883b8e3 for "
        f"the committed results; results are keyed by it) (arms in "
        f"benchmarks/parts.py; each is method rat with `--k 3 --max-steps 6 --max-tokens "
        f"512` and the fields it names)\n"
        f"- tasks: a stratified sample of the held-out test split, the same as `rat eval "
        f"--split test --tasks {tasks} --exclude {EXCLUDE}`\n"
        f"- score: the plan is executable in the simulator; cost is the mean per run\n"
        f"- plots: {', '.join(p.name for p in plots)}\n"
        + (f"- partial: {', '.join(partial)}\n" if partial else "")
        + f"- executable on the {len(both)} tasks every arm with results has done: "
        f"{', '.join(paired)}\n\n"
        f"{table(results)}\n\n"
        f"## Each arm against all, task by task\n\n{paired_with(found, 'all')}\n\n"
        f"## By task\n\n{by_task(found)}\n"
    )
    print(table(results))


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test on the tasks two arms disagree on. A copy of
    rat_agent.eval.runner's: this script runs on 883b8e3's package, which has none."""
    n, k = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def paired_with(found: dict[str, list[Result]], base: str) -> str:
    """Each arm's executable plans against `base`'s on the tasks both have done: which tasks
    each makes that the other does not, and whether that differs from chance."""
    score = {arm: {r.task: r.score for r in rows} for arm, rows in found.items()}
    lines = [
        f"| arm | tasks | executable | {base} executable | only the arm | only {base} | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for arm, mine in score.items():
        both = [t for t in mine if t in score[base]]
        if arm == base or not both:
            continue
        wins = sum(1 for t in both if mine[t] > score[base][t])
        losses = sum(1 for t in both if mine[t] < score[base][t])
        lines.append(
            f"| {arm} | {len(both)} | {sum(mine[t] for t in both):.0f} | "
            f"{sum(score[base][t] for t in both):.0f} | {wins} | {losses} | "
            f"{sign_test(wins, losses):.2g} |"
        )
    return "\n".join(lines)


def by_task(found: dict[str, list[Result]]) -> str:
    """Each task's outcome in every arm: which tasks a part wins or loses, not only how many
    (a plan that fails says at which step)."""
    arms = [arm for arm, rows in found.items() if rows]
    cell = {(r.task, arm): r for arm in arms for r in found[arm]}
    tasks = list(dict.fromkeys(r.task for arm in arms for r in found[arm]))
    lines = ["| task | " + " | ".join(arms) + " |", "|---" * (len(arms) + 1) + "|"]
    for task in tasks:
        row = []
        for arm in arms:
            result = cell.get((task, arm))
            if result is None:
                row.append("")
            elif result.error:
                row.append("error")
            elif result.score:
                row.append("yes")
            else:  # a plan whose every step runs may still not reach the goal
                row.append(f"step {result.failed_step}" if result.failed_step else "no goal")
        lines.append(f"| {task} | " + " | ".join(row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
