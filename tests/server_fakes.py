"""A `langgraph dev` server for tests, and the fake models it serves.

The server process imports the models below by their import path, e.g. the context
`{"model": "server_fakes:question_model", "retriever": "fakes:make_retriever"}`, so this
folder is put on the server's PYTHONPATH.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fakes import ScriptedModel, current_step, prompt_text, revision
from langchain_core.messages import BaseMessage
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
CONFIG = REPO / "langgraph.json"
STEPS = 3
MODEL = "server_fakes:question_model"
# How the page's tests start Debian's Chromium (services.CHROMIUM), as the machine's probe
# starts it (no sandbox as root, no calls home).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RETRIEVER = "fakes:make_retriever"
# a chain-of-thought draft, so a run shows every node, the answer call included
FAKE_CONTEXT = {"model": MODEL, "retriever": RETRIEVER, "k": 2, "draft": "cot"}


# --- models loaded by import path in the server ---------------------------------------------


def question_of(messages: list[BaseMessage]) -> str:
    """The task as every RAT prompt states it: 'Task: <question>' then a blank line."""
    match = re.search(r"Task: (.*?)\n\n", prompt_text(messages), re.S)
    assert match, "a RAT prompt always states its task"
    return match.group(1)


def draft_for(question: str, steps: int = STEPS) -> list[str]:
    """The draft steps question_model writes, so a test can tell runs apart by them."""
    return [f"{question} part {n}" for n in range(1, steps + 1)]


def question_model() -> ScriptedModel:
    """Drafts from the question itself, so a step shows which run it belongs to.

    Queries are 'about: <step>' and revisions 'FIXED <step>' (quoting the first line shown),
    as in fakes.plan_model.
    """

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "standalone":  # a chat's follow-up: it names the chat's first question
            text = prompt_text(messages)
            first = re.search(r"^User: (.*)$", text, re.M)
            last = re.search(r"^Last question: (.*)$", text, re.M)
            assert first and last, text
            return f"{last.group(1)} (following: {first.group(1)})"
        if kind == "draft":
            steps = draft_for(question_of(messages))
            return "\n".join(f"STEP {n}: {step}" for n, step in enumerate(steps, 1))
        if kind == "query":
            return f"about: {current_step(messages)}"
        if kind == "revise":
            return revision(messages, f"FIXED {current_step(messages)}")
        if kind == "answer":
            return f"answer to {question_of(messages)}"
        if kind == "thought":  # memory: the checked answer, restated
            answer = prompt_text(messages).split("Answer:\n", 1)[1].split("\n\nSources:")[0]
            return f"CONFIDENT: 1\nTHOUGHT: Checked fact: {answer}"
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


# --- the server -----------------------------------------------------------------------------


@dataclass
class DevServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    workdir: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(workdir: Path) -> dict[str, str]:
    """The environment of the server: fakes importable, data and cache in `workdir`, quiet."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH", "")) if p)
    env["RAT_DATA_DIR"] = str(workdir / "data")
    env["RAT_CACHE_DIR"] = str(workdir / "cache")
    env["LANGGRAPH_CLI_NO_ANALYTICS"] = "1"  # the CLI's usage report
    env["LANGSMITH_TRACING"] = env["LANGCHAIN_TRACING_V2"] = "false"
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY"):
        env.pop(name, None)  # nothing leaves the machine
    for name in list(env):
        if name.startswith("RAT_") and name not in ("RAT_DATA_DIR", "RAT_CACHE_DIR"):
            del env[name]  # a developer's RAT_MODEL must not change what the tests run
    return env


@contextmanager
def dev_server(
    workdir: Path,
    *,
    jobs: int = 10,
    start_timeout: float = 60.0,
    settings: dict[str, str] | None = None,
) -> Iterator[DevServer]:
    """`langgraph dev` on a free port, serving this repository's langgraph.json.

    It runs in `workdir`, where the in-memory runtime keeps its threads
    (`.langgraph_api/`), so a test's threads never mix with a developer's; a second server
    on the same `workdir` sees the first one's threads. `jobs` is how many runs execute at
    once (`--n-jobs-per-worker`; `langgraph dev` runs one at a time when it is not given).
    `settings` are the server's own RAT_* settings (its runs' defaults).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = workdir / f"server-{port}.log"
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",  # `langgraph dev`, this interpreter
        "--config",
        str(CONFIG),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
        "--n-jobs-per-worker",
        str(jobs),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env={**server_env(workdir), **(settings or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group
        )
    server = DevServer(f"http://127.0.0.1:{port}", process, log, workdir)
    try:
        _wait_ready(server, start_timeout)
        yield server
    finally:
        stop(server)


def _wait_ready(server: DevServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"langgraph dev exited ({server.process.returncode}):\n{server.log_tail()}"
            )
        try:
            if httpx.get(server.url + "/ok", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"langgraph dev not ready in {timeout:.0f} s:\n{server.log_tail()}")


def stop(server: DevServer, sig: int = signal.SIGTERM) -> None:
    """Stop the server's process group: SIGTERM shuts down cleanly (threads are saved)."""
    if server.process.poll() is not None:
        return
    try:
        os.killpg(server.process.pid, sig)
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)
    except ProcessLookupError:
        pass


# --- concurrent runs ---------------------------------------------------------------------------


@dataclass
class RunResult:
    question: str
    thread_id: str
    seconds: float  # from the request to the stream's end, waiting in the queue included
    steps: list[dict[str, Any]]
    events: list[dict[str, Any]]  # the custom step events the run streamed


def load_question(n: int) -> str:
    return f"How do I craft item number {n}?"


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
    state = await client.threads.get_state(thread_id)
    values = state["values"]
    assert isinstance(values, dict)
    return RunResult(question, thread_id, seconds, list(values.get("steps") or []), events)


async def run_load(
    url: str | list[str], runs: int, model: str = MODEL
) -> tuple[list[RunResult], float]:
    """`runs` different questions at once, each on its own thread; results and wall time.
    With several server URLs (workers of one deployment), runs go to them in turn."""
    urls = [url] if isinstance(url, str) else url
    clients = [get_client(url=u) for u in urls]
    context = {**FAKE_CONTEXT, "model": model}
    start = time.perf_counter()
    results = await asyncio.gather(
        *(one_run(clients[n % len(clients)], load_question(n), context) for n in range(1, runs + 1))
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
