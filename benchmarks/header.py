"""The lines every results file of these scripts opens with: what it measures, the command
that made it, the code, the machine and the day (tests/unit/test_results.py reads them)."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import date


def header(title: str, command: str) -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return (
        f"# {title}\n\n- command: `{command}`\n"
        f"- code: {commit}; machine: {platform.machine()}, {os.cpu_count()} CPU cores; "
        f"date: {date.today()}\n"
    )
