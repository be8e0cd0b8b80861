"""A run killed with SIGKILL resumes from its last checkpoint: nothing lost, nothing repeated."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from crash_worker import DRAFT, worker_settings
from fakes import ListRetriever, plan_model, wiki_docs

from rat_agent.agent.graph import build_graph
from rat_agent.persistence.checkpoints import sqlite_saver

HERE = Path(__file__).parent
TOTAL_CALLS = 1 + 2 * 5 + 1  # the draft, (query, revise) per step, the answer


def reference() -> dict:
    graph = build_graph(llm=plan_model(DRAFT), retriever=ListRetriever(documents=wiki_docs()))
    with worker_settings():
        return graph.invoke({"question": "How?"})


@pytest.mark.parametrize("kill_at", [1, 2, 5, 8, 10, 11])
def test_killed_run_resumes_without_loss_or_repeat(tmp_path: Path, kill_at: int) -> None:
    db = tmp_path / "runs.sqlite"
    worker = subprocess.run(
        [sys.executable, str(HERE.parent / "crash_worker.py"), str(db), "t1", str(kill_at)],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode == -signal.SIGKILL, worker.stderr

    model = plan_model(DRAFT)
    graph = build_graph(
        checkpointer=sqlite_saver(db), llm=model, retriever=ListRetriever(documents=wiki_docs())
    )
    config = {"configurable": {"thread_id": "t1"}}
    before = graph.get_state(config)
    assert before.next, "the killed run must be unfinished"
    done_before = len(before.values.get("steps", []))

    with worker_settings():
        result = graph.invoke(None, config)

    # calls 1..kill_at-1 finished before the kill; the killed call is the only one redone
    assert len(model.calls) == TOTAL_CALLS - (kill_at - 1)
    expected = reference()
    assert result["steps"] == expected["steps"]
    assert result["answer"] == expected["answer"]
    assert [s["draft"] for s in result["steps"]] == [f"task part {n}" for n in range(1, 6)]
    assert done_before == max(0, (kill_at - 2) // 2)  # finished steps kept, not redone
