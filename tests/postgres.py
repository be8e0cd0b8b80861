"""PostgreSQL for the tests: one throwaway server per session, one fresh database per test.

`scripts/postgres.sh` installs PostgreSQL when it is missing (as root, from Debian's packages)
and starts a loopback-only cluster in a temporary folder. The tests that need it skip, saying
why, only when it cannot be installed or started; with RAT_REQUIRE_SERVICES=1 (CI) they fail
instead (tests/services.py). RAT_TEST_POSTGRES_URL points the tests at an existing server
rather than starting one.

A pytest plugin: tests/conftest.py loads it with `pytest_plugins = ["postgres"]`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from services import unavailable

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "postgres.sh"
START_TIMEOUT_S = 600  # a first start may install the server package


def _start(folder: str) -> str:
    try:
        done = subprocess.run(
            ["bash", str(SCRIPT), "start", folder],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        unavailable(f"PostgreSQL is not available: scripts/postgres.sh start failed: {exc}")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        why = " ".join(done.stderr.strip().splitlines()[-3:]) or f"exit {done.returncode}"
        unavailable(f"PostgreSQL is not available: scripts/postgres.sh could not start it: {why}")
    return lines[-1]


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a running server (superuser, trust auth, 127.0.0.1 only)."""
    given = os.environ.get("RAT_TEST_POSTGRES_URL", "").strip()
    if given:
        yield given
        return
    folder = tempfile.mkdtemp(prefix="rat-pg-")  # not in pytest's private (0700) folder
    try:
        yield _start(folder)
    finally:
        subprocess.run(
            ["bash", str(SCRIPT), "stop", folder], capture_output=True, timeout=120, check=False
        )
        shutil.rmtree(folder, ignore_errors=True)


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def create_database(url: str) -> str:
    """A new, empty database on the server `url` names; its URL."""
    import psycopg

    name = "rat_" + uuid.uuid4().hex[:12]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(url, name)


@pytest.fixture
def postgres_db(postgres_url: str) -> str:
    """The URL of a fresh database, so a test sees only its own threads."""
    return create_database(postgres_url)
