"""The human review of a draft from the terminal: accept, edit in $EDITOR, or stop here."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from rat_agent.cli.safe import escape
from rat_agent.errors import ConfigError

if TYPE_CHECKING:
    from langgraph.types import StateSnapshot

STOP = object()  # the user chose to stop: the run stays paused on its thread


def pending_review(snapshot: StateSnapshot) -> dict[str, Any] | None:
    """The review_draft interrupt's payload when the run is paused there."""
    for task in snapshot.tasks:
        for pending in task.interrupts:
            if isinstance(pending.value, dict) and "drafts" in pending.value:
                return pending.value
    return None


def read_steps(path: str) -> str:
    """The edited steps from a file ('-': standard input), one "STEP k:" line or item each."""
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the steps file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"the steps file {path} is not UTF-8 text") from None


def _as_text(drafts: list[str]) -> str:
    return "".join(f"STEP {n}: {step}\n" for n, step in enumerate(drafts, 1))


def ask(out: Console, payload: dict[str, Any], thread: str) -> Any:
    """Ask at the terminal; returns the resume value, or STOP."""
    out.rule("Review the draft")
    out.print(
        "[dim]Enter: check these steps · e: edit them in $EDITOR · q: stop here "
        f"(resume later with `rat ask --thread {thread} [--steps FILE]`)[/dim]"
    )
    choice = input("> ").strip().lower()
    if choice == "q":
        return STOP
    if choice != "e":
        return True
    edited = _edit(_as_text(payload["drafts"]))
    out.print(escape(edited.strip()))
    return edited


def _edit(text: str) -> str:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile(
        "w+", suffix=".txt", prefix="rat-draft-", delete=False
    ) as file:
        file.write(text)
        path = file.name
    try:
        result = subprocess.run([*shlex.split(editor), path], check=False)
        if result.returncode != 0:
            raise ConfigError(f"the editor {editor!r} exited with code {result.returncode}")
        return Path(path).read_text()
    except FileNotFoundError:
        raise ConfigError(f"cannot start the editor {editor!r}: set $EDITOR") from None
    finally:
        Path(path).unlink(missing_ok=True)
