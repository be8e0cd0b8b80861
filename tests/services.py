"""The parts beyond Python that some tests drive: a PostgreSQL server, Redis and Debian's
Chromium. `make test` installs them first (scripts/test-services.sh: as root, with apt-get).

A test marked `@pytest.mark.needs("redis")` (or "postgresql", "chromium") skips where that
part is missing, naming it in pytest's summary; with RAT_REQUIRE_SERVICES=1 (CI) it fails
instead, so CI never passes by skipping. A pytest plugin: tests/conftest.py loads it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
INSTALL = " (make test installs it as root with apt-get)"


def required() -> bool:
    return os.environ.get("RAT_REQUIRE_SERVICES", "") not in ("", "0")


def unavailable(why: str) -> NoReturn:
    """Skip the test, saying why; fail it where CI requires every part."""
    if required():
        pytest.fail(why + " (RAT_REQUIRE_SERVICES is set)", pytrace=False)
    pytest.skip(why)


@functools.cache
def missing(part: str) -> str | None:
    """Why `part` cannot be used here, or None where it can."""
    if part == "postgresql":
        if os.environ.get("RAT_TEST_POSTGRES_URL", "").strip():
            return None
        try:
            found = subprocess.run(
                ["bash", str(SCRIPTS / "postgres.sh"), "bin"], capture_output=True
            )
        except OSError as exc:  # no bash on the PATH
            return f"cannot look for PostgreSQL: {exc}"
        return None if found.returncode == 0 else f"no PostgreSQL server is installed{INSTALL}"
    if part == "redis":
        return None if shutil.which("redis-server") else f"redis-server is not installed{INSTALL}"
    if part == "chromium":
        return None if Path(CHROMIUM).exists() else f"Debian's chromium is not installed{INSTALL}"
    raise ValueError(f"unknown part {part!r}: postgresql, redis or chromium")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs(*parts): the test drives postgresql, redis or chromium (services.py)"
    )


@pytest.hookimpl(tryfirst=True)  # before the test's fixtures start any server
def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        for part in mark.args:
            why = missing(part)
            if why:
                unavailable(why)
