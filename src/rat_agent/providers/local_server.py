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
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rat_agent import redact
from rat_agent.errors import ConfigError, ModelError
from rat_agent.timing import once_cost

if TYPE_CHECKING:
    from rat_agent.providers import warm

log = logging.getLogger(__name__)

#: Context window of every local server: RAT prompts (task, revised steps, retrieved text)
#: stay well below this; the KV cache for it costs ~230 MB with the default model.
N_CTX = 8192
#: Host-RAM budget for llama.cpp's prompt cache, off: it saved a slot's state and restored
#: it for a later prompt that matched it better, even a pinned slot's. A restored prefix
#: changes the greedy reply (the logits differ bit for bit from a whole prefill), so a
#: run's plan depended on what the server had run before.
#: It saved nothing within a run: each run's query and revision calls keep a slot each
#: (LocalChat.slot), whose own prefix is all they share.
CACHE_RAM_MIB = 0
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


def _n_threads() -> int:
    """Cores this process may use (cgroup/affinity aware), not the host's total."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def slots() -> int:
    """RAT_LOCAL_SLOTS: requests the server decodes at once (default 2).

    Two, because one run alternates two kinds of call (query, revision) and each keeps its
    prompt prefix cached in a slot of its own (LocalChat.slot); two commands at once on one
    warm server also take ~20% less per call than on one slot (benchmarks/startup.py). Each
    slot gets the whole context window, ~230 MB of KV cache with the default model."""
    raw = os.environ.get("RAT_LOCAL_SLOTS", "2").strip()
    if not raw.isdigit() or not 1 <= int(raw) <= 8:
        raise ConfigError(f"RAT_LOCAL_SLOTS must be a whole number from 1 to 8, got {raw!r}")
    return int(raw)


def _params(model_path: Path, alias: str) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {alias}  # a set of names in this binding, not a string
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the server binds to a free port itself: no race with another process
    # Each slot gets the whole window (llama.cpp splits n_ctx among them).
    params.n_parallel = slots()
    params.n_ctx = N_CTX * params.n_parallel
    params.kv_unified = False
    params.cache_prompt = True
    params.cache_ram_mib = CACHE_RAM_MIB
    params.ctx_shift = False  # fail loudly on overflow rather than silently dropping context
    params.cpuparams.n_threads = _n_threads()
    params.cpuparams_batch.n_threads = _n_threads()
    params.n_gpu_layers = 0
    params.verbosity = -1  # llama.cpp logs to stderr by default; keep the CLI output clean
    params.endpoint_metrics = False
    return params


def start_handle(
    model_path: Path, alias: str, *, api_key: str = "", metrics: bool = False
) -> tuple[Any, int]:
    """Start llama.cpp's server in this process: its handle (the server lives as long as
    the handle) and its port. ModelError with one readable line if it cannot start."""
    try:
        import xllamacpp
    except ImportError as exc:
        raise ConfigError(
            "the local model needs the xllamacpp package: pip install 'rat-agent[local]'"
        ) from exc
    if not model_path.is_file():
        raise ConfigError(f"the local model file is missing: {model_path}")

    params = _params(model_path, alias)
    params.endpoint_metrics = metrics  # read in-process by a warm server's idle clock
    if api_key:
        params.api_keys = [api_key]
    in_main = threading.current_thread() is threading.main_thread()
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        handle = xllamacpp.Server(params)
    except Exception as exc:
        raise ModelError(
            f"could not start the local model server for {model_path.name}: {exc} "
            "(is the file a valid GGUF model, and is there enough memory?)"
        ) from exc
    finally:
        # Upstream llama.cpp server code installs SIGINT/SIGTERM handlers that would turn
        # Ctrl+C into a silent server shutdown instead of KeyboardInterrupt. The current
        # wheel does not, but a rebuilt one might: put Python's back (main thread only).
        if in_main:
            for sig, handler in saved.items():
                if handler is not None:
                    signal.signal(sig, handler)

    address = str(handle.listening_address)  # e.g. "http://127.0.0.1:40123"
    try:
        return handle, int(address.rstrip("/").rsplit(":", 1)[1])
    except (IndexError, ValueError) as exc:
        del handle
        raise ModelError(f"local model server reported an odd address: {address!r}") from exc


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
