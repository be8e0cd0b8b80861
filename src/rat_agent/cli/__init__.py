"""The `rat` command: one module per subcommand group, wired in `app`.

This module stays light: the `rat` script imports it before anything else, and `run`
puts the Ctrl+C handler in place before the heavy imports start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """Run `rat ARGV`; the exit code (for embedding and tests: never exits the process)."""
    from rat_agent.cli.app import main as app_main

    return app_main(argv)


_hint = ""  # what Ctrl+C adds, set by the command that is running (on_interrupt)


def on_interrupt(hint: str) -> None:
    """What Ctrl+C tells the user while this command runs, e.g. the thread to resume."""
    global _hint
    _hint = hint


def interrupted_message() -> str:
    return f"interrupted: {_hint}" if _hint else "interrupted"


def _leave(signum: int, frame: FrameType | None) -> None:
    """Ctrl+C in the `rat` script: leave now, with 130.

    Letting KeyboardInterrupt unwind is not prompt: LangGraph's executor waits on its way out
    for the node still running on a worker thread, and a model call (a CPU prefill) can take
    minutes. Leaving at once loses nothing a kill would not: every finished node's checkpoint
    is committed, and SQLite rolls back a write cut short. Runs in the main thread between
    bytecodes, so it imports nothing and writes with os.write.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, RuntimeError):  # closed; mid-write
            stream.flush()
    text = "".join(c for c in interrupted_message() if c.isprintable())  # a thread id's ESC
    if os.isatty(2):  # a progress bar hid the cursor and holds the line: give both back
        os.write(2, b"\x1b[?25h\r\x1b[K")
    os.write(2, (text + "\n").encode())
    os._exit(130)


def run() -> NoReturn:
    """The `rat` script."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if ignored
        signal.signal(signal.SIGINT, _leave)
    sys.exit(main())


__all__ = ["interrupted_message", "main", "on_interrupt", "run"]
