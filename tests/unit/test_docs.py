"""docs/: the pages that are generated from the code are what the code says today."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_commands import Command, every_command

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def test_the_configuration_page_lists_every_context_field_as_the_code_has_it() -> None:
    script = ROOT / "scripts" / "config_page.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    from dataclasses import fields

    from rat_agent.agent.context import Context

    page = (ROOT / "docs" / "configuration.md").read_text()
    for f in fields(Context):
        assert f"| `{f.name}` (`RAT_{f.name.upper()}`) |" in page


# What a written command may be besides `rat`, and how it is checked.
MAKEFILE = (ROOT / "Makefile").read_text()


def _rat(command: Command, capsys: pytest.CaptureFixture[str]) -> None:
    from rat_agent.cli.app import _parser

    try:
        _parser().parse_args(command.argv[1:])
    except SystemExit as exit_:
        if exit_.code:
            pytest.fail(f"{command}: {capsys.readouterr().err.strip()}")


def _script(command: Command) -> None:
    script = ROOT / command.argv[1]
    assert script.is_file(), f"{command}: no {command.argv[1]}"
    helped = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, check=False
    )
    assert helped.returncode == 0, helped.stderr
    for flag in (word.split("=")[0] for word in command.argv[2:] if word.startswith("--")):
        assert flag in helped.stdout, f"{command}: {flag} is not an option of the script"


@pytest.mark.parametrize("command", every_command(), ids=str)
def test_every_command_written_in_the_docs_names_what_exists(
    command: Command, capsys: pytest.CaptureFixture[str]
) -> None:
    """A renamed flag, a moved script or a make target gone fails here, not for a reader.
    The README's quick starts also run for real (tests/integration/test_doc_commands.py)."""
    program, args = command.program, command.argv[1:]
    if program == "rat":
        _rat(command, capsys)
    elif program == "make":
        assert re.search(rf"^{re.escape(args[0])}:", MAKEFILE, re.M), f"{command}: no target"
    elif program in ("python", "python3"):
        _script(command)
    elif program == "pip":
        extras = re.search(r"\[([\w,-]+)\]", " ".join(args))
        assert extras, command
        for extra in extras.group(1).split(","):
            assert re.search(rf"^{extra} = \[", PYPROJECT, re.M), f"{command}: no extra {extra}"
    elif program == "langgraph":
        assert args[0] == "dev", command
        helped = subprocess.run(
            [str(Path(sys.executable).parent / "langgraph"), "dev", "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        for flag in (word for word in args[1:] if word.startswith("--")):
            assert flag in helped.stdout, f"{command}: langgraph dev has no {flag}"
    else:  # setting up a shell, not running the project
        assert program in ("export", "cd", "git"), f"{command}: a command no test checks"


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_every_link_to_a_file_of_the_repository_finds_it(page: Path) -> None:
    """A results file renamed or a page moved fails here, not for a reader (links are
    relative to the page, as GitHub resolves them)."""
    text = page.read_text()
    targets = [m.group(1) for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)]
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local or page.name != "benchmarks.md"  # the pattern does find links
    missing = [t for t in local if not (page.parent / t).exists()]
    assert missing == [], f"{page.name} links to files that do not exist: {missing}"


# --- the code's own words ------------------------------------------------------------------

SOURCES = sorted(p for top in ("src", "benchmarks", "scripts") for p in (ROOT / top).rglob("*.py"))
# A path to a Python file, as a docstring or comment names one ("retrieval/evidence.py").
NAMED_FILE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.py)\b")
# Files a docstring names as a user's or a sandbox's, not the repository's.
NOT_OURS = {"my_kb.py", "main.py"}
# A benchmark question by its id: the harness that loads them may name them, the method not.
QUESTION_ID = re.compile(r"\b(?:redis|pg|php)-\d{2}\b|\bmc-[a-z_]+\b|HumanEval/\d+")


def test_no_comment_points_to_a_file_that_is_not_there() -> None:
    ours = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if ".venv" not in p.parts]
    missing = []
    for path in SOURCES:
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            for named in NAMED_FILE.findall(line):
                if named in NOT_OURS or any(f == named or f.endswith("/" + named) for f in ours):
                    continue
                missing.append(f"{path.relative_to(ROOT)}:{n}: {named}")
    assert missing == []


def test_no_code_outside_the_harness_cites_a_benchmark_question() -> None:
    harness = ROOT / "src" / "rat_agent" / "eval"
    cited = [
        f"{path.relative_to(ROOT)}:{n}: {found}"
        for path in SOURCES
        if harness not in path.parents
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        for found in QUESTION_ID.findall(line)
    ]
    assert cited == []


def test_benchmarks_import_no_other_benchmark_and_no_test() -> None:
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
    helpers = {p.stem for p in (ROOT / "tests").rglob("*.py")}
    wrong = []
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            wrong += [f"{path.name}: {n}" for n in names if n.split(".")[0] in scripts | helpers]
    assert wrong == []


RESULTS = ROOT / "benchmarks" / "results"
RESULT_LINK = re.compile(r"(?:benchmarks/results/|\]\()([\w.-]+\.(?:md|png|jsonl))")


def test_the_results_folder_keeps_only_what_the_docs_cite() -> None:
    """README and docs/ cite a results file; a cited file may cite another; a results
    file's .jsonl (the cache it seeds) goes with it. Nothing else stays."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    cited: set[str] = set()
    todo = [page.read_text("utf-8") for page in pages]
    while todo:
        for name in RESULT_LINK.findall(todo.pop()):
            if name not in cited and (RESULTS / name).is_file():
                cited.add(name)
                if name.endswith(".md"):
                    todo.append((RESULTS / name).read_text("utf-8"))
    kept = {p.name for p in RESULTS.iterdir()}
    companions = {name.removesuffix(".md") + ".jsonl" for name in cited}
    assert kept - cited - companions == set()
