"""The warm local model server (RAT_KEEP_ALIVE): shared by commands, safe under races and
kills, gone after its idle time. Real processes, the real tiny model, a private cache folder
per test (the servers' state lives there)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rat_agent import cli
from rat_agent.errors import ConfigError
from rat_agent.providers import warm

pytestmark = pytest.mark.integration

# One command: attach to (or start) the warm server for the tiny model, answer, print which
# server answered. A trailing "sleep" keeps the command alive, to be killed.
COMMAND = """
import json, sys, time
from rat_agent.providers.chat import get_chat_model
from rat_agent.providers.local_server import running_servers
reply = get_chat_model("local-tiny", max_tokens=4).invoke("Say yes.")
(server,) = running_servers()
state = server.state
print(json.dumps({"pid": state.pid if state else None, "port": server.port,
                  "in_process": state is None, "words": bool(reply.content)}), flush=True)
if sys.argv[1:] == ["sleep"]:
    time.sleep(600)
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("RAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAT_KEEP_ALIVE", "120")
    yield tmp_path / "cache"
    for state, _ in warm.running():  # never leave a server behind
        warm.stop(state)


def _command(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", COMMAND, *args], stdout=subprocess.PIPE, text=True
    )


def _answer(proc: subprocess.Popen[str]) -> dict[str, object]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, f"the command printed nothing (exit {proc.poll()})"
    return dict(json.loads(line))


def _run() -> dict[str, object]:
    proc = _command()
    try:
        return _answer(proc)
    finally:
        assert proc.wait(timeout=120) == 0


def _gone(pid: int, within: float) -> bool:
    """No live server process with that pid (a zombie child of this process counts as gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not warm.is_server(pid):
            return True
        time.sleep(0.2)
    return False


def test_a_later_command_reuses_the_server(cache: Path) -> None:
    first = _run()
    assert first["in_process"] is False and first["words"]
    second = _run()
    assert second["pid"] == first["pid"] and second["port"] == first["port"]
    ((state, idle),) = warm.running()
    assert state.pid == first["pid"] and idle < 60
    (state_file,) = (cache / "servers").glob("*.json")
    assert state_file.stat().st_mode & 0o777 == 0o600  # the key is the user's alone


def test_two_commands_starting_at_once_share_one_server(cache: Path) -> None:
    procs = [_command(), _command()]
    answers = [_answer(p) for p in procs]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert answers[0]["pid"] == answers[1]["pid"]
    assert len(warm.running()) == 1


def test_a_server_whose_owner_was_killed_is_reused(cache: Path) -> None:
    owner = _command("sleep")
    first = _answer(owner)
    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=30)
    assert _run()["pid"] == first["pid"]  # its own session: the kill did not reach it


def test_a_killed_server_is_replaced(cache: Path) -> None:
    first = _run()
    assert isinstance(first["pid"], int)
    os.kill(first["pid"], signal.SIGKILL)
    assert _gone(first["pid"], 10)
    second = _run()  # the state file still names the dead server
    assert second["pid"] != first["pid"] and second["words"]


def test_a_state_pointing_at_something_else_is_replaced(cache: Path, tmp_path: Path) -> None:
    """A stale state whose pid now belongs to another process, and one whose port answers
    without our key: neither is trusted, neither process is touched."""
    first = _run()
    (state_file,) = (cache / "servers").glob("*.json")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        data = json.loads(state_file.read_text())
        warm.stop(warm.State(**data))
        state_file.write_text(json.dumps({**data, "pid": bystander.pid}))
        second = _run()
        assert second["pid"] not in (first["pid"], bystander.pid)
        assert bystander.poll() is None  # not ours: never signalled
        data = json.loads(state_file.read_text())
        state_file.write_text(json.dumps({**data, "key": "not-the-key"}))
        third = _run()
        assert third["pid"] != second["pid"]
        assert _gone(int(str(second["pid"])), 15)  # the impostor state's server was stopped
    finally:
        bystander.kill()
        bystander.wait()


def test_the_idle_timeout_stops_the_server(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_KEEP_ALIVE", "2s")
    first = _run()
    assert isinstance(first["pid"], int)
    assert _gone(first["pid"], 30)
    assert warm.running() == []
    assert not list((cache / "servers").glob("*.json"))


def test_keep_alive_zero_leaves_nothing_running(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAT_KEEP_ALIVE", "0")
    answer = _run()
    assert answer["in_process"] is True and answer["words"]
    assert warm.running() == []
    assert not (cache / "servers").exists() or not list((cache / "servers").glob("*.json"))


def test_rat_models_lists_and_stops(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _run()
    assert cli.main(["models"]) == 0
    listed = capsys.readouterr().out
    assert "local-tiny" in listed and f"pid {first['pid']}" in listed
    assert "slots 2" in listed  # the default: a run's query and revision calls get one each
    assert cli.main(["models", "stop"]) == 0
    assert f"stopped local-tiny (port {first['port']}" in capsys.readouterr().out
    assert _gone(int(str(first["pid"])), 15)
    assert cli.main(["models"]) == 0
    assert "no local model server is running" in capsys.readouterr().out


def test_rat_models_start_warms_the_server_the_next_command_finds(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rat_agent.providers import local_server
    from rat_agent.providers.chat import get_chat_model

    # a server this process runs in itself (RAT_KEEP_ALIVE=0) is not the warm one started
    monkeypatch.setenv("RAT_KEEP_ALIVE", "0")
    get_chat_model("local-tiny", max_tokens=4)
    monkeypatch.setenv("RAT_KEEP_ALIVE", "120")
    try:
        assert cli.main(["models", "start", "--model", "local-tiny"]) == 0
    finally:
        local_server.stop_all()
    ((state, _),) = warm.running()
    out = capsys.readouterr().out
    assert f"local-tiny is warm: port {state.port}, pid {state.pid}; stops after 2m00s" in out
    assert _run()["pid"] == state.pid  # the next command's first call finds it
    monkeypatch.setenv("RAT_KEEP_ALIVE", "0")
    assert cli.main(["models", "start", "--model", "local-tiny"]) == 2
    assert "RAT_KEEP_ALIVE=0 keeps no server warm" in capsys.readouterr().err


def test_start_up_errors_are_one_line(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the local model file is missing"):
        warm.attach(tmp_path / "nothing.gguf", "x", 60)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model" * 100)
    with pytest.raises(Exception) as caught:
        warm.attach(junk, "junk", 60)
    message = str(caught.value)
    assert "stopped while starting" in message and "\n" not in message
    assert warm.running() == []


def test_a_long_lived_client_outlives_its_server(cache: Path) -> None:
    """`langgraph dev` holds its models for hours: when the warm server stops (idle, or
    killed), the next call finds or starts another instead of failing forever."""
    from rat_agent.providers import local_server
    from rat_agent.providers.chat import get_chat_model

    local_server.stop_all()  # servers other tests started in this process
    model = get_chat_model("local-tiny", max_tokens=16)
    assert model.invoke("Say yes.").content
    ((first, _),) = warm.running()
    os.kill(first.pid, signal.SIGKILL)
    assert _gone(first.pid, 10)
    again = get_chat_model("local-tiny", max_tokens=16)
    assert again is not model  # a new port, so a new client
    assert again.invoke("Say yes.").content
    ((second, _),) = warm.running()
    assert second.pid != first.pid
