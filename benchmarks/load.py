"""Concurrent runs on `langgraph dev` and on Aegra with 1, 2 and 4 workers (`make serve`):
throughput, latency, and no run seeing another's data.

Starts each server on this repository's langgraph.json (as the tests do), then sends N
different questions at once, each on its own thread (spread over the workers in turn),
with a fake model whose draft repeats the question, so every step shows which run it came
from. Timings are the servers' own overhead (queue, graph, checkpoints, streaming), not a
model's.

    .venv/bin/python benchmarks/load.py [--runs 20] [--jobs 1 10] [--workers 1 2 4] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
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
    server_env,
)

SLOW_MODEL = "server_fakes:slow_question_model"
CALLS_PER_RUN = 7  # draft + (query, revise) x 3 steps


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: a value that was measured, never an interpolation."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@contextmanager
def aegra(workers: int) -> Iterator[list[str]]:
    """`scripts/serve.sh start N` in a fresh folder: PostgreSQL, Redis and N workers."""
    with tempfile.TemporaryDirectory(prefix="rat-load-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)  # the PostgreSQL user must reach it
        env = {
            **server_env(folder),
            "RAT_SERVE_DIR": str(folder / "serve"),
            "RAT_SERVE_PORT": "0",  # free ports
            "RAT_SERVE_AUTH": "off",  # as measured: loopback, no key checks (a key file may exist)
        }
        script = ["bash", str(ROOT / "scripts" / "serve.sh")]
        try:
            started = subprocess.run(
                [*script, "start", str(workers)], env=env, capture_output=True, text=True
            )
            if started.returncode != 0:
                raise SystemExit(f"serve.sh start failed: {started.stderr[-2000:]}")
            yield started.stdout.split()
        finally:
            subprocess.run([*script, "stop"], env=env, capture_output=True, check=False)


@contextmanager
def langgraph_dev(jobs: int) -> Iterator[list[str]]:
    with tempfile.TemporaryDirectory() as tmp, dev_server(Path(tmp), jobs=jobs) as server:
        yield [server.url]


def measure(urls: list[str], runs: int, model: str) -> dict[str, float]:
    # Not measured: a whole load first, so every process that may execute a run (any
    # worker takes runs from the shared queue) has imported the graph and warmed its caches.
    asyncio.run(run_load(urls, runs, model))
    alone, _ = asyncio.run(run_load(urls[0], 1, model))
    results, wall = asyncio.run(run_load(urls, runs, model))
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
        help="langgraph dev's --n-jobs-per-worker values to compare (default 1 10)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2, 4],
        help="Aegra worker counts to compare (default 1 2 4)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/load.md")
    args = parser.parse_args()

    models = [("instant", MODEL), (f"{SLOW_CALL_S * 1000:.0f} ms per call", SLOW_MODEL)]
    setups: list[tuple[str, Callable[[], AbstractContextManager[list[str]]]]] = []
    for jobs in args.jobs:
        setups.append((f"`langgraph dev --n-jobs-per-worker {jobs}`", partial(langgraph_dev, jobs)))
    for n in args.workers:
        setups.append((f"Aegra, {n} worker{'s' if n > 1 else ''}", partial(aegra, n)))
    rows = []
    for label, start in setups:
        with start() as urls:
            for model_label, model in models:
                m = measure(urls, args.runs, model)
                rows.append(
                    f"| {label} | {model_label} | {m['alone']:.2f} | {m['throughput']:.1f} | "
                    f"{m['p50']:.2f} | {m['p90']:.2f} | {m['p99']:.2f} | {m['max']:.2f} | "
                    f"{m['wall']:.2f} |"
                )
                print(rows[-1], flush=True)

    command = "python benchmarks/load.py" + (
        "" if sys.argv[1:] == [] else " " + " ".join(sys.argv[1:])
    )
    versions = (
        f"{os.cpu_count()} CPU cores shared with the client and every server process, Python "
        f"{platform.python_version()}, langgraph-api {version('langgraph-api')}, aegra-api "
        f"{version('aegra-api')}, langgraph {version('langgraph')}"
    )
    report = (
        f"""# Concurrent runs on `langgraph dev` and on Aegra (`make serve`)

`{command}` ({time.strftime("%Y-%m-%d")}; {versions}).

{args.runs} different questions sent at once, each on its own new thread, streamed
(`custom` + `updates`) to the end, with a fake model ({CALLS_PER_RUN} calls per run, 3 steps)
and a fake retriever: the figures are the servers' own cost (queue, graph, checkpoints,
streaming), plus the model's wait where it has one. With several Aegra workers the runs
are sent to them in turn; any worker may execute any run (one Redis queue). "alone": one
run with the server idle. Latency runs from the request to the end of the stream, time
waiting in the queue included; p99 of {args.runs} runs is their maximum. In every run the
drafts, the revisions and the streamed step events were its own question's: no run saw
another's data.

| server | model | alone s | runs/s | p50 s | p90 s | p99 s | max s | wall s |
|---|---|---|---|---|---|---|---|---|
"""
        + "\n".join(rows)
        + """

`langgraph dev` keeps everything in memory in one process and runs one run at a time
unless `--n-jobs-per-worker` is given. Aegra keeps threads, runs and checkpoints in
PostgreSQL and queues runs in Redis; each worker process runs 3 queue consumers of up to 10
runs each. On this machine every process shares the same 2 cores with the client, so more
workers add processes, not cores.
"""
    )
    args.out.write_text(report)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
