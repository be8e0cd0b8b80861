"""Concurrent runs on `langgraph dev` and on Aegra with 1, 2 and 4 workers (`make serve`):
throughput, latency, and no run seeing another's data.

Starts each server on this repository's langgraph.json, then sends N different questions at
once, each on its own thread (spread over the workers in turn), with a fake model whose
draft repeats the question, so every step shows which run it came from. Timings are the
servers' own overhead (queue, graph, checkpoints, streaming), not a model's. The servers
load the fake model and retriever from this file by import path (`load:question_model`,
`load:make_retriever`), with this folder on their PYTHONPATH.

    .venv/bin/python benchmarks/load.py [--runs 20] [--jobs 1 10] [--workers 1 2 4] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
STEPS = 3
MODEL = "load:question_model"
SLOW_MODEL = "load:slow_question_model"
SLOW_CALL_S = 0.05
CALLS_PER_RUN = 1 + 2 * STEPS + 1  # draft, (query, revise) x 3 steps, answer
# a chain-of-thought draft of STEPS steps, so a run shows every node, the answer call included
CONTEXT = {"retriever": "load:make_retriever", "k": 2, "draft": "cot", "max_steps": STEPS}


# --- the fake model and retriever the servers load by import path ---------------------------


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _question(messages: list[BaseMessage]) -> str:
    """The task as every RAT prompt states it: 'Task: <question>' then a blank line."""
    match = re.search(r"Task: (.*?)\n\n", _text(messages), re.S)
    if match is None:
        raise ValueError("a RAT prompt without its task")
    return match.group(1)


def _step(messages: list[BaseMessage]) -> str:
    """The step a query or revision prompt is about."""
    text = _text(messages)
    marker = "draft):\n" if "draft):\n" in text else "Draft of STEP"
    body = text.rsplit(marker, 1)[1]
    if marker == "Draft of STEP":
        body = body.split(":\n", 1)[1]
    return body.split("\n\n", 1)[0]


def draft_for(question: str) -> list[str]:
    """The steps the fake model drafts for a question, so runs can be told apart by them."""
    return [f"{question} part {n}" for n in range(1, STEPS + 1)]


def _reply(kind: str, messages: list[BaseMessage]) -> str:
    if kind == "draft":
        steps = draft_for(_question(messages))
        return "\n".join(f"STEP {n}: {step}" for n, step in enumerate(steps, 1))
    if kind == "query":
        return f"about: {_step(messages)}"
    if kind == "revise":
        revised = f"FIXED {_step(messages)}"
        prompt = _text(messages)
        if "FACT:" in prompt or '"fact"' in prompt:  # a revision that quotes a line first
            shown = re.findall(r"^\d+[a-z]+\. .*$", prompt, re.MULTILINE)
            return f"FACT: {shown[0] if shown else 'NONE'}\nSTEP: {revised}"
        return revised
    if kind == "answer":
        return f"answer to {_question(messages)}"
    raise ValueError(f"the load benchmark's model has no reply for a {kind!r} call")


class QuestionModel(BaseChatModel):
    """Replies by the kind of call (the node's "rat:<call>" tag): drafts from the question
    itself, queries 'about: <step>', revises to 'FIXED <step>', waiting `delay` s a call."""

    delay: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "load-benchmark-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tags = run_manager.tags if run_manager else []
        kinds = [tag.removeprefix("rat:") for tag in tags if tag.startswith("rat:")]
        if len(kinds) != 1:
            raise ValueError(f"a model call without one rat:<call> tag: {tags}")
        if self.delay:
            time.sleep(self.delay)
        message = AIMessage(_reply(kinds[0], messages), response_metadata={"finish_reason": "stop"})
        return ChatResult(generations=[ChatGeneration(message=message)])


def question_model() -> QuestionModel:
    return QuestionModel()


def slow_question_model() -> QuestionModel:
    """SLOW_CALL_S a call, like a (very fast) remote model: concurrent runs then overlap."""
    return QuestionModel(delay=SLOW_CALL_S)


class EchoRetriever(BaseRetriever):
    """k pages, each opening with the query, as a search engine's hits mention it."""

    k: int = 2

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(
                page_content=f"On {query}: page {i} says the fact number {i}.",
                metadata={"title": f"Page {i}", "source": f"load:page{i}"},
            )
            for i in range(1, self.k + 1)
        ]


def make_retriever(k: int) -> EchoRetriever:
    return EchoRetriever(k=k)


# --- the servers --------------------------------------------------------------------------


def server_env(workdir: Path) -> dict[str, str]:
    """A server's environment: this folder importable, data and cache in `workdir`, quiet."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env["RAT_DATA_DIR"] = str(workdir / "data")
    env["RAT_CACHE_DIR"] = str(workdir / "cache")
    env["LANGGRAPH_CLI_NO_ANALYTICS"] = "1"
    env["LANGSMITH_TRACING"] = env["LANGCHAIN_TRACING_V2"] = "false"
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY"):
        env.pop(name, None)  # nothing leaves the machine
    for name in list(env):
        if name.startswith("RAT_") and name not in ("RAT_DATA_DIR", "RAT_CACHE_DIR"):
            del env[name]  # a developer's RAT_MODEL must not change what is measured
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def langgraph_dev(jobs: int, start_timeout: float = 120.0) -> Iterator[list[str]]:
    """`langgraph dev --n-jobs-per-worker jobs` on a free port, in a fresh folder."""
    with tempfile.TemporaryDirectory(prefix="rat-load-") as tmp:
        folder = Path(tmp)
        port = _free_port()
        command = [sys.executable, "-m", "langgraph_cli", "dev"]  # `langgraph dev`
        command += ["--config", str(ROOT / "langgraph.json"), "--host", "127.0.0.1"]
        command += ["--port", str(port), "--no-browser", "--no-reload"]
        command += ["--n-jobs-per-worker", str(jobs)]
        log = folder / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                cwd=folder,
                env=server_env(folder),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as one
            )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + start_timeout
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"langgraph dev did not start:\n{log.read_text()[-2000:]}")
                try:
                    if httpx.get(url + "/ok", timeout=2, trust_env=False).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            yield [url]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)


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


# --- concurrent runs ------------------------------------------------------------------------


@dataclass
class RunResult:
    question: str
    thread_id: str
    seconds: float  # from the request to the stream's end, waiting in the queue included
    steps: list[dict[str, Any]]
    events: list[dict[str, Any]]  # the custom step events the run streamed


async def one_run(client: LangGraphClient, question: str, context: dict[str, Any]) -> RunResult:
    """One question on its own new thread, streamed to the end."""
    thread = await client.threads.create()
    thread_id = str(thread["thread_id"])
    events: list[dict[str, Any]] = []
    start = time.perf_counter()
    async for chunk in client.runs.stream(
        thread_id,
        "rat",
        input={"question": question},
        context=context,
        stream_mode=["custom", "updates"],
    ):
        if chunk.event == "error":
            raise RuntimeError(f"run on {thread_id} failed: {chunk.data}")
        if chunk.event == "custom" and chunk.data.get("event") == "step":
            events.append(chunk.data)
    seconds = time.perf_counter() - start
    values = (await client.threads.get_state(thread_id))["values"]
    steps = list(values.get("steps") or []) if isinstance(values, dict) else []
    return RunResult(question, thread_id, seconds, steps, events)


async def run_load(urls: list[str], runs: int, model: str) -> tuple[list[RunResult], float]:
    """`runs` different questions at once, each on its own thread, sent to the URLs in turn;
    the results and the wall time."""
    clients = [get_client(url=u) for u in urls]
    context = {**CONTEXT, "model": model}
    start = time.perf_counter()
    results = await asyncio.gather(
        *(
            one_run(clients[n % len(clients)], f"How do I craft item number {n}?", context)
            for n in range(1, runs + 1)
        )
    )
    return list(results), time.perf_counter() - start


def mixed_runs(results: list[RunResult]) -> list[str]:
    """What in each run is not its own question's: empty when no run saw another's data."""
    problems = []
    for r in results:
        drafts = draft_for(r.question)
        if [s["draft"] for s in r.steps] != drafts:
            problems.append(f"{r.question}: drafts {[s['draft'] for s in r.steps]}")
        if [s["revised"] for s in r.steps] != [f"FIXED {d}" for d in drafts]:
            problems.append(f"{r.question}: revised {[s['revised'] for s in r.steps]}")
        if [e["query"] for e in r.events] != [f"about: {d}" for d in drafts]:
            problems.append(f"{r.question}: streamed {[e['query'] for e in r.events]}")
    if len({r.thread_id for r in results}) != len(results):
        problems.append("two runs shared a thread")
    return problems


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: a value that was measured, never an interpolation."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def measure(urls: list[str], runs: int, model: str) -> dict[str, float]:
    # Not measured: a whole load first, so every process that may execute a run (any
    # worker takes runs from the shared queue) has imported the graph and warmed its caches.
    asyncio.run(run_load(urls, runs, model))
    alone, _ = asyncio.run(run_load(urls[:1], 1, model))
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
        nargs="*",
        default=[1, 10],
        help="langgraph dev's --n-jobs-per-worker values to compare (default 1 10)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[1, 2, 4],
        help="Aegra worker counts to compare (default 1 2 4; none: langgraph dev only)",
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
    code = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    versions = (
        f"code {code or 'unknown'}; {platform.machine()}, "
        f"{os.cpu_count()} CPU cores shared with the client and every server process, Python "
        f"{platform.python_version()}, langgraph-api {version('langgraph-api')}, aegra-api "
        f"{version('aegra-api')}, langgraph {version('langgraph')}"
    )
    report = (
        f"""# Concurrent runs on `langgraph dev` and on Aegra (`make serve`)

`{command}` ({time.strftime("%Y-%m-%d")}; {versions}).

{args.runs} different questions sent at once, each on its own new thread, streamed
(`custom` + `updates`) to the end, with a fake model ({CALLS_PER_RUN} calls per run, {STEPS} steps)
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
