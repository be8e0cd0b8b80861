"""What a `rat` command costs before and around the model: `--help`, and `rat ask` cold
(no model server running) against warm (one kept by RAT_KEEP_ALIVE), split into process
start, imports, model server start, embedder load, Qdrant open, model, retrieval and the
rest, and three commands in a row.

Run from the repository root, with nothing else busy on the machine:

    .venv/bin/python benchmarks/startup.py [--repeat 3]

Writes benchmarks/results/startup.md. Uses the bundled model and corpus from your cache
folder and a throwaway data folder; stops every warm model server first and at the end.
The splits come from `rat ask --json` ("startup" and "stats"); the wall time is measured
around the whole process, so "rest" is everything not named (graph build, checkpoints,
printing, interpreter exit).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RAT = [sys.executable, "-m", "rat_agent.cli"]
OUT = ROOT / "benchmarks" / "results" / "startup.md"
QUESTION = "What is a crafting table used for in Minecraft?"
TWO_QUESTIONS = ("How do I craft a torch in Minecraft?", "How do I make a stone pickaxe?")
SPLITS = (
    "process start",
    "imports",
    "model server start",
    "embedder load",
    "qdrant open",
    "model",
    "retrieval",
    "rest",
)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    return wall, done.stdout


def ask(env: dict[str, str], method: str = "direct", *, model: str) -> dict[str, Any]:
    argv = [*RAT, "ask", "--json", "--method", method, "--model", model]
    argv += ["--max-tokens", "48", QUESTION]
    wall, out = timed(argv, env)
    data = json.loads(out)
    costs: dict[str, float] = data["startup"]
    stats = data["stats"]
    row = {name: costs.get(name, 0.0) for name in SPLITS[:5]}
    row["model"] = stats["model_seconds"]
    # The embedder loads inside the first retrieval: count it once, as its own split.
    row["retrieval"] = max(0.0, stats["retrieval_seconds"] - row["embedder load"])
    row["rest"] = wall - sum(row.values())
    row["wall"] = wall
    row["fixed"] = wall - row["model"] - row["retrieval"]
    return row


def two_at_once(env: dict[str, str], slots: int, model: str) -> dict[str, float]:
    """Two `rat ask` (method rat, 2 steps) started together on one warm server."""
    env = {**env, "RAT_LOCAL_SLOTS": str(slots)}
    stop_servers(env)
    ask(env, model=model)  # start the server: its start is not what is compared
    argv = [*RAT, "ask", "--json", "--method", "rat", "--model", model, "--max-steps", "2"]
    started = time.perf_counter()
    procs = [
        subprocess.Popen([*argv, question], env=env, stdout=subprocess.PIPE, text=True)
        for question in TWO_QUESTIONS
    ]
    stats = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a concurrent rat ask failed (exit {proc.returncode})")
        stats.append(json.loads(out)["stats"])
    both = time.perf_counter() - started
    stop_servers(env)
    return {
        "both": both,
        "slowest": max(s["wall_seconds"] for s in stats),
        "calls": sum(s["model_calls"] for s in stats),
        "processed": sum(s["processed_prompt_tokens"] for s in stats),
        "cached": sum(s["cached_prompt_tokens"] for s in stats),
    }


def stop_servers(env: dict[str, str]) -> None:
    timed([*RAT, "models", "stop"], env)


def median_rows(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def table(rows: list[tuple[str, dict[str, float]]]) -> list[str]:
    head = ["command", "wall s", *SPLITS, "fixed s (wall - model - retrieval)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, row in rows:
        cells = [f"{row['wall']:.2f}", *(f"{row[s]:.2f}" for s in SPLITS), f"{row['fixed']:.2f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--model", default="local", help="local or local-tiny (a smoke test)")
    args = parser.parse_args(argv)
    data = tempfile.mkdtemp(prefix="rat-startup-")
    base = {**os.environ, "RAT_DATA_DIR": data, "PYTHONPATH": str(ROOT / "src")}
    warm_env = {**base, "RAT_KEEP_ALIVE": "600"}
    cold_env = {**base, "RAT_KEEP_ALIVE": "0"}
    stop_servers(base)

    helps = [timed([*RAT, "--help"], base)[0] for _ in range(args.repeat)]
    ask(cold_env, model=args.model)  # build the corpus index and model file untimed

    cold = [ask(cold_env, model=args.model) for _ in range(args.repeat)]
    first_warm: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    rag_warm: list[dict[str, float]] = []
    for _ in range(args.repeat):
        stop_servers(base)
        first_warm.append(ask(warm_env, model=args.model))  # starts the warm server
        warm.append(ask(warm_env, model=args.model))
        rag_warm.append(ask(warm_env, "rag", model=args.model))
    stop_servers(base)
    in_a_row = [ask(warm_env, model=args.model) for _ in range(3)]
    stop_servers(base)
    by_slots = {n: two_at_once(warm_env, n, args.model) for n in (1, 2)}

    rows = [
        ("`direct`, RAT_KEEP_ALIVE=0 (cold, as before)", median_rows(cold)),
        ("`direct`, first with a warm server (starts it)", median_rows(first_warm)),
        ("`direct`, warm server running", median_rows(warm)),
        ("`rag`, warm server running", median_rows(rag_warm)),
    ]
    command = "python benchmarks/startup.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )
    cold_fixed, warm_fixed = rows[0][1]["fixed"], rows[2][1]["fixed"]
    lines = [
        "# Start-up: what a `rat` command costs besides the model",
        "",
        f"- command (from the repository root): `.venv/bin/{command}`",
        f"- date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"medians of {args.repeat} runs; model `{args.model}`, question {QUESTION!r}, "
        "max 48 tokens",
        "",
        f"`rat --help`: {statistics.median(helps):.2f} s "
        f"(min {min(helps):.2f}, max {max(helps):.2f}).",
        "",
        *table(rows),
        "",
        f"Fixed cost per command, cold / warm: {cold_fixed:.2f} s / {warm_fixed:.2f} s "
        f"= {cold_fixed / warm_fixed:.1f}x.",
        "",
        "## Three `rat ask --method direct` in a row, starting with no server",
        "",
        *table([(f"command {n}", row) for n, row in enumerate(in_a_row, 1)]),
        "",
        "Model server start is the start of a warm server in its own process for the first "
        "command, and finding and checking it (an HTTP round trip) for the next ones.",
        "",
        "## Two commands at once on one warm server: parallel slots (RAT_LOCAL_SLOTS)",
        "",
        f"Two `rat ask --method rat --max-steps 2` started together: {TWO_QUESTIONS}.",
        "",
        "| slots | both done s | slower command s | model calls | prompt processed "
        "| prompt cached |",
        "|---|---|---|---|---|---|",
        *(
            f"| {n} | {r['both']:.1f} | {r['slowest']:.1f} | {r['calls']:.0f} "
            f"| {r['processed']:.0f} | {r['cached']:.0f} |"
            for n, r in by_slots.items()
        ),
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
