"""`rat eval`: a benchmark for several methods on one model, with a progress bar."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from rat_agent.errors import ConfigError


def add_command(sub: Any) -> None:
    from rat_agent.eval.runner import ALL_METHODS

    cmd = sub.add_parser(
        "eval", help="run the Minecraft planning benchmark for several methods",
        description="Each plan is checked by the Minecraft simulator. Results are cached per "
        "task, method, model and settings: an interrupted run resumes, a re-run computes "
        "only what is missing.",
    )
    cmd.add_argument("--methods", default=",".join(ALL_METHODS),
                     help="comma-separated methods (default: all)")
    cmd.add_argument("--model", default="local")
    cmd.add_argument("--retriever", default="minecraft")
    cmd.add_argument("--tasks", type=int, default=30, help="first N tasks (default 30)")
    cmd.add_argument("--k", type=int, default=3)
    cmd.add_argument("--max-steps", type=int, default=8)
    cmd.add_argument("--max-tokens", type=int, default=512)
    cmd.add_argument("--concurrency", type=int, default=1,
                     help="runs at once (for remote models; the local model has one slot)")
    cmd.add_argument("--out", default="benchmarks/results",
                     help="folder for the results file and table")


def eval_command(args: argparse.Namespace) -> int:
    from rat_agent.eval.runner import run_minecraft, table

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise ConfigError("no methods given")
    context = {"model": args.model, "retriever": args.retriever, "k": args.k,
               "max_steps": args.max_steps, "max_tokens": args.max_tokens}
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    columns = (TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("eval", total=None)
        results = run_minecraft(methods, context=context, limit=args.tasks,
                                concurrency=args.concurrency,
                                progress=lambda done, total: bar.update(task, completed=done,
                                                                        total=total))
    markdown = table(results)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"minecraft-{args.model.replace(':', '_').replace('/', '_')}"
    (out / f"{name}.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in results))
    command = (f"rat eval --methods {','.join(methods)} --model {args.model} --tasks "
               f"{args.tasks} --k {args.k} --max-steps {args.max_steps} "
               f"--max-tokens {args.max_tokens}")
    (out / f"{name}.md").write_text(
        f"# Minecraft planning, model {args.model}\n\n- command: `{command}`\n- score: the "
        "plan is executable in the simulator (rat_agent.eval.minecraft.check_plan); mean "
        "cost per task\n\n" + markdown + "\n")
    Console(highlight=False, soft_wrap=True).print(markdown)
    return 0
