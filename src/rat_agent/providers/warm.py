"""A local model server that outlives the command that started it, as Ollama keeps a model
loaded: later commands and `langgraph dev` find it and skip the model load.

`RAT_KEEP_ALIVE` is how long it stays after its last request (default 5 minutes; `0`
keeps the old behaviour, a server inside the command that ends with it; a negative value
keeps it until `rat models stop`). How it stays safe:

- one server per model file: commands serialize on a lock file (`filelock`, released by
  the kernel if its holder is killed), so two commands starting at once start one server;
- a state file (pid, port, key) says where it is; a state whose process is gone, or is not
  our server, is replaced;
- it listens on 127.0.0.1 only, and every request needs a random key that only this user
  can read (the state file is mode 0600);
- the server itself stops after keep-alive seconds with no request and no client attach,
  taking the lock first so it never vanishes under a command that has just found it.

Run as `python -m rat_agent.providers.warm` by `attach`; users never start it by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import math
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from rat_agent.errors import ConfigError, ModelError
from rat_agent.paths import cache_dir, write_atomic

log = logging.getLogger(__name__)

DEFAULT_KEEP_ALIVE_S = 300.0
START_TIMEOUT_S = 180.0  # loading the default model on a busy 2-core machine takes ~30 s
POLL_S = 0.5
KEY_ENV = "RAT_SERVER_KEY"  # the key reaches the server by environment, never by argv (ps)
MODULE = "rat_agent.providers.warm"


def keep_alive() -> float:
    """RAT_KEEP_ALIVE in seconds: `300`, `90s`, `5m`, `1h`; 0: no warm server; < 0: forever."""
    raw = os.environ.get("RAT_KEEP_ALIVE", "").strip().lower()
    if not raw:
        return DEFAULT_KEEP_ALIVE_S
    match = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*(s|m|h)?", raw)
    if not match:
        raise ConfigError(
            f"RAT_KEEP_ALIVE must be seconds or a duration like 90s, 5m or 1h, got {raw!r}"
        )
    seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2) or "s"]
    return math.inf if seconds < 0 else seconds


@dataclass(frozen=True)
class State:
    """What the state file says about one running server."""

    pid: int
    port: int
    key: str
    model: str  # the GGUF file
    alias: str
    keep_alive: float
    started: float  # wall clock
    last_active: float
    slots: int = 1  # parallel slots (absent from states written before it was recorded)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def servers_dir() -> Path:
    path = cache_dir() / "servers"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _files(model_path: Path) -> dict[str, Path]:
    name = hashlib.sha256(str(model_path.resolve()).encode()).hexdigest()[:16]
    base = servers_dir() / name
    return {ext: base.with_suffix("." + ext) for ext in ("json", "lock", "lease", "log")}


# --- the client side ------------------------------------------------------------------------


def attach(model_path: Path, alias: str, seconds: float) -> State:
    """The warm server for this model file: found and checked, or started and waited for."""
    if not model_path.is_file():
        raise ConfigError(f"the local model file is missing: {model_path}")
    files = _files(model_path)
    try:
        with FileLock(files["lock"], timeout=START_TIMEOUT_S):
            state = read_state(files["json"])
            if state is not None and not _answers(state, alias):
                log.info("replacing the local model server on port %d", state.port)
                _retire(state, files["json"])
                state = None
            if state is None:
                state = _spawn(model_path, alias, seconds, files)
            files["lease"].touch()  # a new client: the idle clock starts again
            return state
    except Timeout as exc:
        raise ModelError(
            f"another command has been starting the model server for {model_path.name} for "
            f"{START_TIMEOUT_S:.0f} s; try again, or stop it with `rat models stop`"
        ) from exc


def still_there(state: State) -> bool:
    """Cheap check before each use of a server found earlier: is its process alive?"""
    return is_server(state.pid)


def touch(model_path: Path) -> None:
    """Mark a use of the server, so it does not stop while a long run is between calls."""
    with contextlib.suppress(OSError):
        _files(model_path)["lease"].touch()


def read_state(path: Path) -> State | None:
    try:
        data = json.loads(path.read_text())
        return State(**data)
    except (OSError, ValueError, TypeError):
        return None


def running() -> list[tuple[State, float]]:
    """Each warm server and its idle seconds; states of dead servers are cleaned up."""
    found: list[tuple[State, float]] = []
    for path in sorted(servers_dir().glob("*.json")):
        state = read_state(path)
        if state is None:
            continue
        if not is_server(state.pid):
            _remove_if(path, state.pid)
            continue
        idle = _idle(state.last_active, path.with_suffix(".lease"))
        found.append((state, max(0.0, idle)))
    return found


def stop(state: State, timeout: float = 10.0) -> None:
    """Stop one server (SIGTERM, then SIGKILL) and forget it."""
    _retire(state, _files(Path(state.model))["json"], timeout=timeout)


def _answers(state: State, alias: str) -> bool:
    """Is this our server, alive and serving the model? Waits out a busy server (a long
    prefill on 2 cores), but never trusts a port that answers without our key."""
    if not is_server(state.pid):
        return False
    deadline = time.monotonic() + 30.0
    while True:
        request = urllib.request.Request(
            f"{state.base_url}/models", headers={"Authorization": f"Bearer {state.key}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as resp:
                ids = {m.get("id") for m in json.load(resp).get("data", [])}
                return alias in ids
        except urllib.error.HTTPError:
            return False  # something else on that port, or not our key
        except (OSError, ValueError):
            if not is_server(state.pid) or time.monotonic() > deadline:
                return False
            time.sleep(0.5)


def _spawn(model_path: Path, alias: str, seconds: float, files: dict[str, Path]) -> State:
    key = secrets.token_urlsafe(24)
    command = [
        sys.executable,
        "-m",
        MODULE,
        "--model",
        str(model_path.resolve()),
        "--alias",
        alias,
        "--keep-alive",
        str(seconds),
    ]
    with open(files["log"], "wb") as log_file:  # the latest start only
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env={**os.environ, KEY_ENV: key},
            start_new_session=True,  # Ctrl+C in the terminal must not reach the server
        )
    _children.append(child)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        state = read_state(files["json"])
        if state is not None and state.pid == child.pid:
            return state
        if child.poll() is not None:
            raise ModelError(
                f"the local model server for {model_path.name} stopped while starting: "
                f"{_last_line(files['log'])}"
            )
        time.sleep(0.1)
    child.kill()
    raise ModelError(
        f"the local model server for {model_path.name} did not start within {START_TIMEOUT_S:.0f} s"
    )


# Popen objects of servers this process started: polling them reaps an exited child, which
# would otherwise linger as a zombie that still looks alive to `kill(pid, 0)`.
_children: list[subprocess.Popen[bytes]] = []


def is_server(pid: int) -> bool:
    """A live process running this module (not a recycled pid, not a zombie)."""
    for child in _children:
        if child.pid == pid:
            child.poll()
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return MODULE.encode() in cmdline and status not in ("Z", "X")


def _retire(state: State, path: Path, timeout: float = 10.0) -> None:
    if is_server(state.pid):
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(state.pid, sig)
            deadline = time.monotonic() + wait
            while is_server(state.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not is_server(state.pid):
                break
    _remove_if(path, state.pid)


def _remove_if(path: Path, pid: int) -> None:
    """Remove a state file only if it still names `pid` (a newer server may have replaced it)."""
    current = read_state(path)
    if current is None or current.pid == pid:
        path.unlink(missing_ok=True)


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    except OSError:
        return "no log"
    return next((line for line in reversed(lines) if line), "no log")[:300]


def _write_state(path: Path, state: State) -> None:
    write_atomic(path, json.dumps(asdict(state)), private=True)  # it holds the server's key


# --- the server process ---------------------------------------------------------------------


def _activity(handle: Any) -> tuple[float, ...]:
    """Counters that change with every request, and the requests in flight, from llama.cpp's
    own metrics (read in-process: no HTTP, no key)."""
    text = str(handle.handle_metrics())
    wanted = ("prompt_tokens_total", "prompt_tokens_cached_total", "tokens_predicted_total")
    busy = ("requests_processing", "requests_deferred")
    values: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.removeprefix("llamacpp:").partition(" ")
        if name in wanted or name in busy:
            with contextlib.suppress(ValueError):
                values[name] = float(value)
    if any(values.get(name, 0.0) > 0 for name in busy):
        return (time.time(),)  # a request in flight: always "new" activity
    return tuple(values.get(name, 0.0) for name in wanted)


def serve(model_path: Path, alias: str, seconds: float) -> int:
    from rat_agent.providers.llama import slots, start_handle

    files = _files(model_path)
    key = os.environ.pop(KEY_ENV, "")
    if not key:
        print("no server key given", file=sys.stderr)
        return 2
    stopping = threading.Event()
    handle, port = start_handle(model_path, alias, api_key=key, metrics=True)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stopping.set())
    now = time.time()
    state = State(os.getpid(), port, key, str(model_path), alias, seconds, now, now, slots())
    _write_state(files["json"], state)
    seen = _activity(handle)
    last, written = now, now
    while not stopping.wait(POLL_S):
        now = time.time()
        counters = _activity(handle)
        if counters != seen:
            seen, last = counters, now
            # For `rat models`' idle time; only over the state this server wrote: a file
            # replaced or changed since (a client retiring it) is no longer its to write.
            if now - written >= 1.0 and read_state(files["json"]) == state:
                state = State(**{**asdict(state), "last_active": now})
                _write_state(files["json"], state)
                written = now
        if math.isinf(seconds) or _idle(last, files["lease"]) < seconds:
            continue
        try:
            with FileLock(files["lock"], timeout=0):
                if _idle(last, files["lease"]) >= seconds:  # no command attached meanwhile
                    _remove_if(files["json"], os.getpid())
                    break
        except Timeout:
            continue  # a command is attaching right now
    _remove_if(files["json"], os.getpid())
    del handle  # the binding has no stop(): the destructor ends the server loop
    return 0


def _idle(last_request: float, lease: Path) -> float:
    """Seconds since the server was last used: its last request, or a client's attach or
    use (the lease file's mtime)."""
    try:
        touched = lease.stat().st_mtime
    except OSError:
        touched = 0.0
    return time.time() - max(last_request, touched)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--keep-alive", type=float, required=True)
    args = parser.parse_args(argv)
    try:
        return serve(args.model, args.alias, args.keep_alive)
    except Exception as exc:  # the last line of the log is what the waiting command reports
        print(f"{exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
