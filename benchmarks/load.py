"""Concurrent runs on `langgraph dev`: throughput, latency, and no run seeing another's data.

Starts the server on this repository's langgraph.json (as tests/test_server.py does), then
sends N different questions at once, each on its own thread, with a fake model whose draft
repeats the question, so every step shows which run it came from. Timings are the
server's own overhead (queue, graph, checkpoints, streaming), not a model's.

    .venv/bin/python benchmarks/load.py [--runs 20] [--jobs 1 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from server_fakes import (  # noqa: E402  (tests/ is put on the path just above)
    MODEL,
    SLOW_CALL_S,
    dev_server,
    mixed_runs,
    run_load,
)

SLOW_MODEL = "server_fakes:slow_question_model"
CALLS_PER_RUN = 7  # draft + (query, revise) x 3 steps


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: a value that was measured, never an interpolation."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def measure(runs: int, jobs: int, model: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, dev_server(Path(tmp), jobs=jobs) as server:
        asyncio.run(run_load(server.url, 1, model))  # imports and caches, not measured
        alone, _ = asyncio.run(run_load(server.url, 1, model))
        results, wall = asyncio.run(run_load(server.url, runs, model))
    problems = mixed_runs(results)
    if problems or len(results) != runs:
        raise SystemExit("runs mixed or missing:\n" + "\n".join(problems))
    latencies = [r.seconds for r in results]
    return {
        "alone": alone[0].seconds,
        "throughput": runs / wall,
        "p50": percentile(latencies, 50),
        "p90": percentile(latencies, 90),
        "p99": percentile(latencies, 99),
        "max": max(latencies),
        "wall": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="concurrent runs (default 20)")
    parser.add_argument(
        "--jobs",
        type=int,
        nargs="+",
        default=[1, 10],
        help="--n-jobs-per-worker values to compare (default 1 10)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/load.md")
    args = parser.parse_args()

    models = [("instant", MODEL), (f"{SLOW_CALL_S * 1000:.0f} ms per call", SLOW_MODEL)]
    rows = []
    for jobs in args.jobs:
        for label, model in models:
            m = measure(args.runs, jobs, model)
            rows.append(
                f"| {jobs} | {label} | {m['alone']:.2f} | {m['throughput']:.1f} | {m['p50']:.2f} | "
                f"{m['p90']:.2f} | {m['p99']:.2f} | {m['max']:.2f} | {m['wall']:.2f} |"
            )
            print(rows[-1], flush=True)

    command = "python benchmarks/load.py" + (
        "" if sys.argv[1:] == [] else " " + " ".join(sys.argv[1:])
    )
    versions = (
        f"{os.cpu_count()} CPU cores shared with the client, Python "
        f"{platform.python_version()}, langgraph-api {version('langgraph-api')}, "
        f"langgraph {version('langgraph')}"
    )
    report = (
        f"""# Concurrent runs on `langgraph dev`

`{command}` ({time.strftime("%Y-%m-%d")}; {versions}).

{args.runs} different questions sent at once, each on its own new thread, streamed
(`custom` + `updates`) to the end, with a fake model ({CALLS_PER_RUN} calls per run, 3 steps)
and a fake retriever: the figures are the server's own cost (queue, graph, checkpoints in
SQLite, streaming), plus the model's wait where it has one. "alone": one run with the
server idle. Latency runs from the request to the end of the stream, time waiting in the
queue included; p99 of {args.runs} runs is their maximum. In every run the drafts, the
revisions and the streamed step events were its own question's: no run saw another's data.

| `--n-jobs-per-worker` | model | alone s | runs/s | p50 s | p90 s | p99 s | max s | wall s |
|---|---|---|---|---|---|---|---|---|
"""
        + "\n".join(rows)
        + """

`langgraph dev` runs one run at a time unless `--n-jobs-per-worker` is given (its help
says the default is 10; the server's is 1): the other runs wait in the queue. An idle
server looks at its queue every 0.5 s, so a lone run may wait that long before it starts
(most of "alone"); a busy one takes the next run at once.
"""
    )
    args.out.write_text(report)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
