"""What a reader checks in the results and the docs: every results file opens with the
command, the code (a commit), the machine and the date that made it; names no path of a
machine it ran on and no module that does not exist; and every link in the README, docs/
and the results resolves."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = sorted((ROOT / "benchmarks" / "results").glob("*.md"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *RESULTS]
HEAD = 12  # the lines a results file opens with
# entry point groups, which read like modules
GROUPS = {"rat_agent.retrievers", "rat_agent.benchmarks", "rat_agent.repairs"}
# entry point groups, which read like modules
GROUPS = {"rat_agent.retrievers", "rat_agent.benchmarks", "rat_agent.domains", "rat_agent.repairs"}


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_a_results_file_opens_with_its_command_commit_machine_and_date(path: Path) -> None:
    head = "\n".join(path.read_text().splitlines()[:HEAD])
    assert re.search(r"command", head, re.I), f"{path.name}: no command"
    commit = r"(?i)(code|commit|at)\b[^\n]{0,60}?\b[0-9a-f]{7,40}\b"  # named, not any number
    assert re.search(commit, head), f"{path.name}: no commit"
    assert re.search(r"x86_64|aarch64|CPU cores|\bcores\b", head), f"{path.name}: no machine"
    assert re.search(r"\b20\d\d-\d\d-\d\d(?!\d)", head), f"{path.name}: no date"


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is a module, not a package
        return False


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_a_page_names_no_machine_path_and_no_module_that_is_gone(path: Path) -> None:
    text = path.read_text()
    # a checkout or home on the machine that ran it (a worktree under /tmp in a command is
    # part of the command, which a reader re-runs as written)
    machine = re.search(r"(?<![\w.])/(root|home|work)/\S*", text)
    assert not machine, f"{path.name}: a machine path {machine.group(0)}"
    for module in set(re.findall(r"\b(rat_(?:agent|minecraft)(?:\.\w+)+)", text)) - GROUPS:
        parts = module.split(".")
        # the longest importable prefix must be the module, or hold the named attribute
        for cut in range(len(parts), 0, -1):
            if _importable(".".join(parts[:cut])):
                break
        found = importlib.import_module(".".join(parts[:cut]))
        for attribute in parts[cut:]:
            assert hasattr(found, attribute), f"{path.name}: {module} does not exist"
            found = getattr(found, attribute)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(path: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        local = (path.parent / target.split("#", 1)[0]).resolve()
        assert local.exists(), f"{path.name}: the link {target} is broken"
