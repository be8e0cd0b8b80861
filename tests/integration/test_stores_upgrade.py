"""A serve folder's PostgreSQL made by the release before passwords (trust auth, the workers
on the superuser) is upgraded in place by today's scripts, its data kept: the cluster takes
its generated password only, and the workers' database passes to a role that is no
superuser. The earlier release's script is read from git, as it was released."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

pytestmark = pytest.mark.needs("postgresql")
ROOT = Path(__file__).resolve().parents[2]
BEFORE_PASSWORDS = "7ba3d98"  # the last release whose postgres.sh used trust auth


def _script(path: Path, *args: str) -> str:
    done = subprocess.run(
        ["bash", str(path), *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="rat-pg-upgrade-"))  # not in pytest's private folder
    made.chmod(0o711)  # as serve.sh leaves $RAT_SERVE_DIR: PostgreSQL's user passes through
    yield made
    subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop", str(made / "pg")])
    shutil.rmtree(made, ignore_errors=True)


def test_an_earlier_trust_cluster_gets_its_password_and_keeps_its_data(folder: Path) -> None:
    old = folder / "old_postgres.sh"
    shown = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BEFORE_PASSWORDS}:scripts/postgres.sh"],
        capture_output=True,
        text=True,
        check=False,
    )
    if shown.returncode != 0:
        pytest.skip(f"not a git checkout with {BEFORE_PASSWORDS}: {shown.stderr.strip()}")
    old.write_text(shown.stdout)
    trusted = _script(old, "start", str(folder / "pg"))
    assert "@127.0.0.1" in trusted and ":" not in urlsplit(trusted).netloc.split("@")[0]
    with psycopg.connect(trusted, autocommit=True) as conn:  # the workers' database, as it was
        conn.execute("CREATE DATABASE aegra")
    with psycopg.connect(trusted.rsplit("/", 1)[0] + "/aegra", autocommit=True) as conn:
        conn.execute("CREATE TABLE thread (id text)")
        conn.execute("INSERT INTO thread VALUES ('alice-1')")

    url = _script(ROOT / "scripts" / "postgres.sh", "start", str(folder / "pg"))
    parts = urlsplit(url)
    assert parts.password and parts.username
    bare = urlunsplit(parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}"))
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(bare, connect_timeout=5).close()

    password = folder / "aegra_password"
    password.write_text("workers-secret-0123456789abcdef\n")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "aegra_database.py"), url, str(password)],
        check=True,
        timeout=120,
    )
    workers = (
        f"postgresql://aegra:workers-secret-0123456789abcdef@{parts.hostname}:{parts.port}/aegra"
    )
    with psycopg.connect(workers, autocommit=True) as conn:
        assert conn.execute("SELECT id FROM thread").fetchall() == [("alice-1",)]
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = 'aegra'").fetchone() == (
            False,
        )
        owner = conn.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'thread'")
        assert owner.fetchone() == ("aegra",)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE DATABASE other")
