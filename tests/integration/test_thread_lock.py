"""One process at a time runs a thread (issue 16: two resumes at once paid every call twice).

The other process is real: a child that holds the thread's lock as `rat ask` does, on the
same checkpoint store, and is SIGKILLed to show a dead holder leaves nothing locked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fakes import ListRetriever, plan_model, wiki_docs

from rat_agent import cli, retrieval
from rat_agent.persistence import locks
from rat_agent.persistence.checkpoints import checkpointer
from rat_agent.providers import chat

HOLDER = textwrap.dedent(
    """
    import sys
    from rat_agent.persistence import locks
    from rat_agent.persistence.checkpoints import checkpointer
    with checkpointer(sys.argv[1]) as saver, locks.running(saver, sys.argv[2]):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes stdin, or kills this process
    """
)


@contextmanager
def held_elsewhere(url: str, thread: str) -> Iterator[subprocess.Popen[str]]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url, thread],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)


def _refused(url: str, thread: str) -> bool:
    with checkpointer(url) as saver:
        try:
            with locks.running(saver, thread):
                return False
        except Exception as exc:
            assert "being run by another process" in str(exc)
            return True


def check_lock(url: str) -> None:
    with held_elsewhere(url, "t1") as holder:
        assert _refused(url, "t1")
        assert not _refused(url, "t2")  # other threads are free
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert not _refused(url, "t1")  # the dead holder's lock went with it


def test_a_thread_is_held_by_one_process_sqlite(tmp_path: Path) -> None:
    check_lock(f"sqlite:///{tmp_path / 'runs.sqlite'}")


def test_a_thread_is_held_by_one_process_postgres(postgres_db: str) -> None:
    check_lock(postgres_db)


def test_a_second_rat_ask_on_a_running_thread_is_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    model = plan_model("STEP 1: get logs\nSTEP 2: make planks")
    monkeypatch.setattr(chat, "get_chat_model", lambda name, **kw: model)
    fake = lambda ctx: ListRetriever(documents=wiki_docs(2))  # noqa: E731
    monkeypatch.setitem(retrieval.FACTORIES, "fake", fake)
    retrieval.clear_cache()
    url = f"sqlite:///{tmp_path / 'data' / 'runs.sqlite'}"
    os.makedirs(tmp_path / "data", exist_ok=True)

    with held_elsewhere(url, "t1"):
        assert cli.main(["ask", "How?", "--retriever", "fake", "--thread", "t1"]) == 2
        assert "thread t1 is being run by another process" in capsys.readouterr().err
        assert model.calls == []  # nothing paid for
        assert cli.main(["ask", "How?", "--retriever", "fake", "--thread", "t2", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["ask", "How?", "--retriever", "fake", "--thread", "t1", "--quiet"]) == 0
