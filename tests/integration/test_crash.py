"""Chaos test: runs SIGKILLed over and over at random points still finish exactly once.

For SQLite and for PostgreSQL, worker processes (tests/crash_worker.py, mode "chaos") run a
six-step RAT run on a deterministic fake model, whose plan repair inserts a step and drops
one. Each worker is killed once: inside a model
call, inside a retrieval, just before or after a checkpoint is written, after a node's writes
are saved, or from outside after a random delay. The next worker resumes the same thread in a
fresh process and may itself be killed. Once the run finishes (a new thread is started until
each backend has taken KILLS kills), it must equal an uninterrupted run: the same steps and
answer, the same checkpoints, and every model call made once, except the one call that was
in flight when a worker died, which is made again by the next one.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from crash_worker import (
    CHAOS_CALLS,
    CHAOS_CONTEXT,
    CHAOS_QUESTION,
    CHAOS_STEP_DRAFTS,
    call_key,
    chaos_graph,
    chaos_model,
    worker_settings,
)

from rat_agent.persistence.checkpoints import checkpointer, unfinished

HERE = Path(__file__).parent
SEED = 4
KILLS = 22  # per backend; each kill is one worker process
OUTSIDE_DELAY_S = (0.0, 0.45)  # a whole run: 16 calls of 20 ms and its checkpoints
PLAN = (  # (site, weight, largest K): where a worker dies, and at which occurrence
    ("model", 5, 3),
    ("outside", 4, 0),
    ("retriever", 2, 2),
    ("put", 3, 4),
    ("committed", 2, 4),
    ("writes", 2, 4),
)
MAX_WORKERS = 80  # a run that never finishes is a failure, not a hang


def kill_point(rng: random.Random) -> tuple[str, int, float]:
    site, _, top = rng.choices(PLAN, weights=[w for _, w, _ in PLAN])[0]
    if site == "outside":
        return site, 0, rng.uniform(*OUTSIDE_DELAY_S)
    return site, rng.randint(1, top), 0.0


def history(saver: Any, thread: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The final values, and every checkpoint of the thread as (step, source, next)."""
    graph = chaos_graph(saver, chaos_model())
    config = {"configurable": {"thread_id": thread}}
    snapshot = graph.get_state(config)
    assert not unfinished(snapshot), f"thread {thread} is unfinished: {snapshot.tasks}"
    marks = [
        (s.metadata["step"], s.metadata["source"], s.next) for s in graph.get_state_history(config)
    ]
    return snapshot.values, marks


def reference(url: str) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[str]]:
    """An uninterrupted run on the same store: values, checkpoints, and the model calls."""
    model = chaos_model()
    with checkpointer(url) as saver:
        graph = chaos_graph(saver, model)
        config = {"configurable": {"thread_id": "reference"}}
        with worker_settings():
            question = {"question": CHAOS_QUESTION}
            graph.invoke(question, config, context=CHAOS_CONTEXT, durability="sync")
        values, marks = history(saver, "reference")
    calls = [call_key(kind, messages) for kind, messages in model.calls]
    assert len(calls) == CHAOS_CALLS
    assert [s["draft"] for s in values["steps"]] == CHAOS_STEP_DRAFTS
    assert [s["status"] for s in values["steps"]] == [
        "revised",
        "revised",
        "inserted",
        "revised",
        "revised",
        "dropped",
        "revised",
    ]
    return values, marks, calls


def worker(url: str, thread: str, site: str, k: int, delay: float, log: Path) -> str:
    """Runs one worker to its end; 'killed' or 'done'."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE.parent / "crash_worker.py"),
            "chaos",
            url,
            thread,
            site,
            str(k),
            str(log),
        ],
        cwd=HERE.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = ""
    if site == "outside":
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if first.strip() == "READY":
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)  # a no-op if it has just finished
    out, err = proc.communicate(timeout=120)
    out = first + out
    if proc.returncode == -signal.SIGKILL:
        return "killed"
    assert proc.returncode == 0, f"worker failed ({proc.returncode}):\n{err[-3000:]}"
    assert "DONE" in out, out
    return "done"


def completed_calls(log: Path) -> list[str]:
    """The model calls the log records, one worker's redo of its predecessor's last call
    removed; anything else repeated is an error."""
    calls: list[str] = []
    first_of_worker = False
    for line in log.read_text().splitlines():
        if line == "start":
            first_of_worker = True
            continue
        call = line.removeprefix("call ")
        if first_of_worker and calls and calls[-1] == call:
            pass  # in flight when the last worker died, unsaved: made again, as it must be
        else:
            assert call not in calls, f"model call {call!r} repeated after it was saved"
            calls.append(call)
        first_of_worker = False
    return calls


def chaos(url: str, tmp_path: Path, label: str) -> None:
    rng = random.Random(SEED)
    ref_values, ref_marks, ref_calls = reference(url)
    kills: list[str] = []
    threads = 0
    started = time.monotonic()
    while len(kills) < KILLS:
        threads += 1
        thread, log = f"chaos-{threads}", tmp_path / f"calls-{threads}.log"
        for _ in range(MAX_WORKERS):
            site, k, delay = kill_point(rng)
            point = f"{site} after {delay * 1000:.0f} ms" if site == "outside" else f"{site} #{k}"
            if worker(url, thread, site, k, delay, log) == "done":
                break
            kills.append(f"{thread}: {point}")
        else:
            pytest.fail(f"{thread} did not finish after {MAX_WORKERS} workers")

        with checkpointer(url) as saver:
            values, marks = history(saver, thread)
        assert values["steps"] == ref_values["steps"]
        assert values["answer"] == ref_values["answer"] == "final answer"
        assert marks == ref_marks, "the checkpoints differ from an uninterrupted run's"
        assert completed_calls(log) == ref_calls
    took = time.monotonic() - started
    print(f"\n{label}: {len(kills)} kills over {threads} runs in {took:.1f} s (seed {SEED}):")
    for n, point in enumerate(kills, 1):
        print(f"  {n:2}. {point}")


def test_sqlite_run_survives_random_kills(tmp_path: Path) -> None:
    chaos(f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path, "SQLite")


def test_postgres_run_survives_random_kills(postgres_db: str, tmp_path: Path) -> None:
    chaos(postgres_db, tmp_path, "PostgreSQL")
