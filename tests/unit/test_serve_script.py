"""scripts/serve.sh's bookkeeping of worker processes, with no server started.

A container's init may reap orphans only every few seconds, and `kill -0` succeeds on a
zombie: a worker killed a moment ago must not count as running, or `restart` starts nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "serve.sh"


def _status(folder: Path) -> list[str]:
    env = {**os.environ, "RAT_SERVE_DIR": str(folder)}
    done = subprocess.run(
        ["bash", str(SCRIPT), "status"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _worker(folder: Path, n: int, pid: int, port: int) -> None:
    worker = folder / f"worker-{n}"
    worker.mkdir()
    (worker / "pid").write_text(f"{pid}\n")
    (worker / "port").write_text(f"{port}\n")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_status_lists_running_workers_and_not_zombies(tmp_path: Path) -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead.send_signal(signal.SIGKILL)
        # not reaped (no wait yet): a zombie, which `kill -0` still reports as alive
        for _ in range(200):
            if Path(f"/proc/{dead.pid}/stat").read_text().split(") ")[-1].startswith("Z"):
                break
            subprocess.run(["sleep", "0.01"], check=True)
        assert os.kill(dead.pid, 0) is None
        _worker(tmp_path, 0, live.pid, 40001)
        _worker(tmp_path, 1, dead.pid, 40002)
        _worker(tmp_path, 2, 2**22 + 1, 40003)  # above Linux's pid_max: no such process
        assert _status(tmp_path) == ["http://127.0.0.1:40001"]
    finally:
        live.kill()
        live.wait()
        dead.wait()
