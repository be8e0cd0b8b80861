"""One llama.cpp server (xllamacpp) per GGUF file, shared by every call and run: a warm one
in its own process that later commands reuse (`warm`), or, with RAT_KEEP_ALIVE=0, one in
this process that ends with it.

Why a server and not a per-call binding: llama.cpp's server keeps the KV cache of the last
prompt, so a call whose prompt shares a prefix with the previous one skips most of the
prefill. On 2 CPU cores prefill is the bottleneck (~60 tokens/s for the default model), so
one long-lived server with a single slot is what makes RAT's many calls affordable.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rat_agent import redact
from rat_agent.errors import ModelError
from rat_agent.providers.llama import slots, start_handle
from rat_agent.timing import once_cost

if TYPE_CHECKING:
    from rat_agent.providers import warm

log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 60.0


@dataclass
class LocalServer:
    """A running llama.cpp server; `base_url` is what an OpenAI client needs."""

    model_path: Path
    alias: str
    port: int
    started_in_s: float
    _handle: Any = field(repr=False)  # None: a warm server in another process
    state: warm.State | None = field(default=None, repr=False)
    slots: int = 1  # parallel slots it was started with (LocalChat pins calls to them)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def api_key(self) -> str:
        """A warm server's key; a server in this process checks none (clients need one)."""
        return self.state.key if self.state is not None else "sk-local"


_lock = threading.Lock()
_servers: dict[Path, LocalServer] = {}


def _start(model_path: Path, alias: str) -> LocalServer:
    started = time.monotonic()
    handle, port = start_handle(model_path, alias)
    server = LocalServer(model_path, alias, port, 0.0, handle, slots=slots())
    _wait_healthy(server)
    server.started_in_s = time.monotonic() - started
    log.info("local model %s served on port %d (%.1fs)", alias, port, server.started_in_s)
    return server


def _wait_healthy(server: LocalServer) -> None:
    """The constructor returns once the model is loaded; still, check what clients will see."""
    url = f"http://127.0.0.1:{server.port}/health"
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                if resp.status == 200:
                    return
                last = f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:  # 503 while the model is loading
            last = f"HTTP {exc.code}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.2)
    raise ModelError(
        f"local model server for {server.model_path.name} did not become healthy "
        f"within {HEALTH_TIMEOUT_S:.0f}s ({last})"
    )


def ensure_server(model_path: Path, alias: str) -> LocalServer:
    """The server for this model file: a warm one shared with other commands (see
    `warm`), or with RAT_KEEP_ALIVE=0 one in this process, started on first use."""
    from rat_agent.providers import warm

    key = model_path.resolve()
    seconds = warm.keep_alive()
    with _lock:
        server = _servers.get(key)
        if server is not None and server.state is not None:
            if warm.still_there(server.state):
                warm.touch(key)
                return server
            del _servers[key]  # it stopped (idle, or killed): find or start another
            server = None
        if server is None:
            with once_cost("model server start"):
                server = _new_server(key, alias, seconds)
            _servers[key] = server
        return server


def _new_server(key: Path, alias: str, seconds: float) -> LocalServer:
    from rat_agent.providers import warm

    if seconds == 0:
        return _start(key, alias)
    started = time.monotonic()
    state = warm.attach(key, alias, seconds)
    redact.register(state.key)
    elapsed = time.monotonic() - started
    return LocalServer(key, alias, state.port, elapsed, None, state=state, slots=state.slots)


def running_servers() -> list[LocalServer]:
    with _lock:
        return list(_servers.values())


def stop_all() -> None:
    """Free the models' memory and threads; also runs at interpreter exit."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        # The binding has no stop(): dropping the last reference runs the C++ destructor,
        # which terminates the main loop and joins its thread.
        handle = server._handle
        server._handle = None
        with contextlib.suppress(Exception):
            del handle


atexit.register(stop_all)
