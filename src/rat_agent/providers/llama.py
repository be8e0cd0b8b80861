"""llama.cpp's server (xllamacpp) in this process, as every local model runs it: its
parameters and its start. A server of this process (`local_server`, RAT_KEEP_ALIVE=0) and a
warm one in a process of its own (`warm`) both start it here."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

from rat_agent.errors import ConfigError, ModelError

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
