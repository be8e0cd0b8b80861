"""Causal revision at the speed of its model: rat's wall time with steps checked ahead
(`speculate`) against the plain loop and against rag, all in one run.

The model stands in for an API model: a fixed latency a call (1 s by default) and calls
served in parallel. Its draft has 8 steps; its revisions keep every step, change every
step, or change every other one. Each arm is the same graph with the same retriever (a few
pages, passages chosen by the real embedder); the steps are the answer (an empty answer prompt), so
an 8-step run is 17 calls in the plain loop. Reports wall time, and the calls made: those
beyond the plain loop's are guesses that missed.

    .venv/bin/python benchmarks/speed.py [--latency 1.0] [--depths 0 2 4 8] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from rat_agent.agent.graph import build_graph

ROOT = Path(__file__).resolve().parent.parent
STEPS = 8
DRAFTS = [f"Do part {n} of the task." for n in range(1, STEPS + 1)]
PAGES = [
    Document(
        f"Part {n} of the task is done with the alpha tool at level {n}.",
        metadata={"title": f"Part {n}", "source": f"corpus:part-{n}"},
    )
    for n in range(1, STEPS + 1)
]
REVISIONS: dict[str, Callable[[int], bool]] = {  # which steps (0-based) a revision changes
    "every step kept": lambda n: False,
    "every step changed": lambda n: True,
    "every other step changed": lambda n: n % 2 == 1,
}


class FixedLatency(BaseChatModel):
    """Waits `latency` seconds a call, any number of calls at once, and replies by the kind
    of call (its "rat:<call>" tag)."""

    latency: float = 1.0
    changes: Callable[[int], bool] = lambda n: False
    calls: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "fixed-latency"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tags = run_manager.tags if run_manager else []
        kind = next(t.removeprefix("rat:") for t in tags if t.startswith("rat:"))
        self.calls.append(kind)
        time.sleep(self.latency)
        message = AIMessage(
            self._reply(kind, messages), response_metadata={"finish_reason": "stop"}
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _reply(self, kind: str, messages: list[BaseMessage]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        if kind == "draft":
            return "\n".join(f"STEP {n}: {d}" for n, d in enumerate(DRAFTS, 1))
        if kind in ("rag", "answer"):
            return "The answer."
        step = text.rsplit("draft):\n", 1)[1].split("\n\n", 1)[0]
        if kind == "query":
            return f"alpha tool level for {step}"
        n = DRAFTS.index(step)
        return f"{step} Use the alpha tool at level {n + 1}." if self.changes(n) else step


class Pages(BaseRetriever):
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = re.search(r"part (\d+)", query.lower())
        first = int(found.group(1)) - 1 if found else 0
        return [PAGES[(first + i) % len(PAGES)] for i in range(3)]


def timed(
    method: str, depth: int, changes: Callable[[int], bool], latency: float
) -> dict[str, Any]:
    model = FixedLatency(latency=latency, changes=changes, calls=[])
    graph = build_graph(llm=model, retriever=Pages())
    context = {"method": method, "answer_prompt": "", "speculate": depth, "max_steps": STEPS}
    started = time.perf_counter()
    result = graph.invoke({"question": "Do the task in 8 parts."}, context=context)
    seconds = time.perf_counter() - started
    time.sleep(latency * 2 + 0.5)  # calls still made ahead finish before the next arm
    return {
        "seconds": seconds,
        "calls": len(model.calls),
        "steps": [s["revised"] for s in result["steps"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--depths", type=int, nargs="+", default=[0, 2, 4, 8])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "speed.md"))
    args = parser.parse_args()
    timed("rat", 0, lambda n: False, 0.0)  # load the embedder and graph once, untimed
    rag = timed("rag", 0, lambda n: False, args.latency)
    rows = []
    for name, changes in REVISIONS.items():
        plain = timed("rat", 0, changes, args.latency)
        for depth in args.depths:
            arm = plain if depth == 0 else timed("rat", depth, changes, args.latency)
            assert arm["steps"] == plain["steps"], "a pipelined run ended unlike the plain loop"
            rows.append(
                f"| {name} | {depth} | {arm['seconds']:.1f} | "
                f"{arm['seconds'] / plain['seconds']:.2f} | {arm['seconds'] / rag['seconds']:.1f} "
                f"| {arm['calls']} | {arm['calls'] - plain['calls']} |"
            )
            print(rows[-1], flush=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    command = "python benchmarks/speed.py " + " ".join(
        [f"--latency {args.latency:g}", "--depths", *map(str, args.depths)]
    )
    report = [
        "# Steps checked ahead: rat's wall time against the plain loop and rag",
        "",
        f"- command: `{command}`",
        f"- code: {commit}; machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python "
        f"{platform.python_version()}; date: {date.today()}",
        f"- model: a fixed {args.latency:g} s a call, calls in parallel (an API stands in); "
        f"{STEPS} draft steps, the steps as the answer; rag: {rag['seconds']:.1f} s, "
        f"{rag['calls']} call",
        "- every arm ended with the plain loop's steps (checked by the script)",
        "",
        "| revisions | speculate | wall s | / plain loop | / rag | model calls | calls wasted |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    Path(args.out).write_text("\n".join(report))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
