"""The README's test command is what CI runs: `.ci/run` adds only fresh folders and its
demand that every server and browser be there. Where `make test` cannot install a part, the
tests that need it skip with the reason in pytest's summary; where CI demands it, they fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _commands(script: str) -> list[str]:
    """The lines of a shell script that do something beyond setting up its shell."""
    setup = re.compile(r"(set |cd |export |trap |[A-Z_]+=|#|$)")
    return [line.strip() for line in script.splitlines() if not setup.match(line.strip())]


def _recipe(makefile: str, target: str) -> tuple[list[str], list[str]]:
    """A Makefile target's prerequisites and recipe lines."""
    head = re.search(rf"^{target}:(.*)$", makefile, re.M)
    assert head, f"no {target} target"
    lines = makefile[head.end() + 1 :].splitlines()
    recipe = [
        line.strip()
        for line in lines[
            : next((i for i, line in enumerate(lines) if not line.startswith("\t")), len(lines))
        ]
    ]
    return head.group(1).split(), recipe


def test_ci_runs_the_readmes_test_command_and_nothing_else() -> None:
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set-up: two commands", 1)[1].split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in setup.splitlines()[1:]]
    assert [command for command in commands if command] == [
        "make demo",
        "make test",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert _commands(ci) == ["make test"]
    assert "export RAT_REQUIRE_SERVICES=1" in ci


def test_make_test_installs_the_servers_and_the_browser_then_runs_every_test() -> None:
    makefile = (ROOT / "Makefile").read_text()
    needs, recipe = _recipe(makefile, "test")
    assert "test-services" in needs and "lint" in needs
    assert _recipe(makefile, "test-services")[1] == ["bash scripts/test-services.sh"]
    assert recipe == ["$(VENV)/bin/python -m pytest -q -rs"]  # testpaths: all of tests/
    script = (ROOT / "scripts" / "test-services.sh").read_text()
    for installer in ("postgres.sh install", "serve.sh install", "chromium.sh"):
        assert installer in script


NEEDS_REDIS = """
import pytest

@pytest.mark.needs("redis")
def test_drives_redis():
    assert False, "ran without its server"

def test_plain():
    pass
"""


def _run_without_redis(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_needs.py").write_text(NEEDS_REDIS)
    empty = tmp_path / "bin"
    empty.mkdir()
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "services",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_needs.py"),
        ],
        env={**os.environ, "PATH": str(empty), "PYTHONPATH": str(ROOT / "tests"), **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_server_skips_its_tests_naming_it(tmp_path: Path) -> None:
    done = _run_without_redis(tmp_path, RAT_REQUIRE_SERVICES="0")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 skipped" in done.stdout
    assert "SKIPPED" in done.stdout and "redis-server is not installed" in done.stdout


def test_a_missing_server_fails_its_tests_where_ci_requires_it(tmp_path: Path) -> None:
    done = _run_without_redis(tmp_path, RAT_REQUIRE_SERVICES="1")
    assert done.returncode == 1, done.stdout
    assert "1 passed, 1 error" in done.stdout  # failed in its setup
    assert "redis-server is not installed" in done.stdout
    assert "ran without its server" not in done.stdout  # failed before the test ran
