"""Runs the RAT graph with a checkpointer and SIGKILLs itself at a chosen point.

python crash_worker.py DB THREAD KILL_AT
    SQLite file DB; dies inside the KILL_AT-th model call (test_resume.py).
python crash_worker.py chaos URL THREAD SITE K LOG
    Checkpoint store URL (SQLite or PostgreSQL); starts the run on THREAD, or resumes it
    when it is unfinished, and dies at the K-th event of kind SITE in this process:
      model      on entering a model call
      retriever  on entering a retrieval
      put        just before a checkpoint is written
      committed  just after a checkpoint was written
      writes     just after a finished node's writes were saved
      outside    never by itself: the test kills it after a random delay
    Each finished model call is appended to LOG as "call KIND KEY"; each start as "start".
    Prints READY when the run starts and DONE when the thread has a finished run.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

from fakes import ListRetriever, ScriptedModel, current_step, plan_model, prompt_text, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent.agent.graph import build_graph
from rat_agent.persistence.checkpoints import checkpointer, sqlite_saver, unfinished
from rat_agent.repair import Settings
from rat_agent.retrieval import evidence
from rat_minecraft import repair as crafting

DRAFT = "\n".join(f"STEP {n}: task part {n}" for n in range(1, 6))

# --- chaos mode: test_crash.py -------------------------------------------------------------
CHAOS_STEPS = 6
CHAOS_DRAFT = "\n".join(f"STEP {n}: chaos part {n}" for n in range(1, CHAOS_STEPS + 1))
CHAOS_QUESTION = "How does a run survive being killed?"
CHAOS_CONTEXT: dict[str, Any] = {
    "max_steps": 8,
    "answer_prompt": "Answer from the checked steps.",  # a prompt of its own: plans get one
    "k": 2,
    "repair": "minecraft",  # the counted ledger reads "2 bolts"
}


@contextmanager
def worker_settings() -> Iterator[None]:
    """How every run of these tests goes, in a worker or in the test: whole documents (the
    runs are about checkpoints, and each worker would load the embedder), and no step
    dropped for weak support (the fake pages say nothing a similarity check accepts)."""
    whole = lambda documents, *_: evidence.Evidence(list(documents), None)  # noqa: E731
    with (
        patch.object(evidence, "select", whole),
        patch.object(crafting.REPAIR, "settings", Settings(min_support=0.0)),
    ):
        yield


# Plan repair runs too: part 3 needs 2 bolts, so "Get 2 bolts." is inserted before it (one
# revision, no query) and part 3 is checked again, from its first revision (no call); part
# 5 is dropped. 1 draft + 2 calls per step + 1 for the inserted step + 1 answer.
CHAOS_CALLS = 1 + 2 * CHAOS_STEPS + 1 + 1
CHAOS_STEP_DRAFTS = [
    "chaos part 1",
    "chaos part 2",
    "Get 2 bolts.",
    "chaos part 3",
    "chaos part 4",
    "chaos part 5",
    "chaos part 6",
]


def chaos_model() -> ScriptedModel:
    """Grounded replies in labelled lines, with one prerequisite and one dropped step."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return CHAOS_DRAFT
        if kind == "query":
            return f"about: {current_step(messages)}"
        if kind == "answer":
            return "final answer"
        step = current_step(messages)
        if step in ("chaos part 3", "Fix chaos part 3 with 2 bolts"):
            return (
                "FACT: 1a. Part 3 is fixed with 2 bolts.\nSTEP: Fix chaos part 3 with 2 bolts\n"
                "NEEDS: 2 bolts"
            )  # repair keeps the needs its fact names
        if step == "Get 2 bolts.":
            return "FACT: 1a. Page 1\nSTEP: Forge 2 bolts\nNEEDS: none"
        if step == "chaos part 5":
            return "FACT: none\nSTEP: DROP: the task does not need it\nNEEDS: none"
        return f"FACT: 1a. Page 1\nSTEP: FIXED {step}\nNEEDS: none"

    return ScriptedModel(respond=respond, calls=[])


CALL_DELAY_S = 0.02  # a model call takes a little time, so a kill from outside lands mid-run
SITES = ("model", "retriever", "put", "committed", "writes", "outside")


def call_key(kind: str, messages: list[BaseMessage]) -> str:
    """What a call is about: the step for a query or revision; the prompt kind otherwise,
    with a digest of the prompt, so two calls about one step would be told apart."""
    step = current_step(messages) if kind in ("query", "revise") else "-"
    digest = hashlib.sha256(prompt_text(messages).encode()).hexdigest()[:8]
    return f"{kind} {step} {digest}"


def chaos_graph(saver: Any, model: Any, retriever: ListRetriever | None = None) -> Any:
    return build_graph(
        checkpointer=saver, llm=model, retriever=retriever or ListRetriever(documents=wiki_docs())
    )


def chaos(url: str, thread: str, site: str, k: int, log_path: str) -> None:
    if site not in SITES:
        raise SystemExit(f"unknown site {site!r}")
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def note(line: str) -> None:
        os.write(log, (line + "\n").encode())  # in the kernel at once: survives SIGKILL

    seen: Counter[str] = Counter()

    def event(kind: str) -> None:
        seen[kind] += 1
        if kind == site and seen[kind] == k:
            os.kill(os.getpid(), signal.SIGKILL)

    model = chaos_model()
    respond = model.respond

    def slow(kind: str, messages: list[BaseMessage]) -> str:
        event("model")
        time.sleep(CALL_DELAY_S)
        text = respond(kind, messages)
        note(f"call {call_key(kind, messages)}")
        return text

    model.respond = slow

    def on_query(query: str) -> bool:
        event("retriever")
        return False  # never fail the retrieval

    retriever = ListRetriever(documents=wiki_docs(), fail=on_query)
    with checkpointer(url) as saver:
        put, put_writes = saver.put, saver.put_writes

        def dying_put(*args: Any, **kwargs: Any) -> Any:
            event("put")
            result = put(*args, **kwargs)
            event("committed")
            return result

        def dying_put_writes(*args: Any, **kwargs: Any) -> None:
            put_writes(*args, **kwargs)
            event("writes")

        saver.put = dying_put  # type: ignore[method-assign]
        saver.put_writes = dying_put_writes  # type: ignore[method-assign]
        graph = chaos_graph(saver, model, retriever)
        config = {"configurable": {"thread_id": thread}}
        snapshot = graph.get_state(config)
        if snapshot.values and not unfinished(snapshot):
            print("DONE", flush=True)
            return
        note("start")
        print("READY", flush=True)
        inputs = None if unfinished(snapshot) else {"question": CHAOS_QUESTION}
        # "sync": each checkpoint is stored before the next node starts, as the CLI does
        with worker_settings():
            graph.invoke(inputs, config, context=CHAOS_CONTEXT, durability="sync")
    print("DONE", flush=True)


def main() -> None:
    if sys.argv[1] == "chaos":
        url, thread, site, k, log_path = sys.argv[2:7]
        chaos(url, thread, site, int(k), log_path)
        return
    db, thread, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = plan_model(DRAFT)
    respond = model.respond

    def dying(kind: str, messages: list[BaseMessage]) -> str:
        if len(model.calls) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return respond(kind, messages)

    model.respond = dying
    graph = build_graph(
        checkpointer=sqlite_saver(db), llm=model, retriever=ListRetriever(documents=wiki_docs())
    )
    # "sync": each checkpoint is on disk before the next node starts, as the CLI does
    with worker_settings():
        config: Any = {"configurable": {"thread_id": thread}}
        graph.invoke({"question": "How?"}, config, durability="sync")


if __name__ == "__main__":
    main()
