"""What `rat eval` runs: a benchmark's tasks, how an answer is scored, and the settings its
tasks run at unless a flag says otherwise.

Built in: HumanEval (eval/humaneval.py), the how-to question sets, one dataset file each
(eval/docs/*.json; `rat eval --benchmark path/to/set.json` runs one of your own), and the
revision benchmark (eval/revision.py), one revision a case. An
installed plug-in adds its own by the entry point "rat_agent.benchmarks"
(rat_agent.plugins): the bundled Minecraft domain's planning suite is one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rat_agent import plugins
from rat_agent.errors import ConfigError
from rat_agent.eval.runner import Case, Grounding, Invoke, Result, Scorer


@dataclass(frozen=True)
class Selection:
    """Which tasks to run, as the command line asks: a split (None: in order), how many,
    task ids never to draw, and samples of each (pass@k)."""

    split: str | None = None
    tasks: int = 30
    exclude: frozenset[str] = frozenset()
    samples: int = 1


# The cases to run and their scorer, for a selection and the settings the run resolved (a
# benchmark may build its collection first, where the run searches it).
Load = Callable[[Selection, Mapping[str, Any]], tuple[list[Case], Scorer]]


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    score_name: str  # the table's score column: "executable", "pass@1", "keys named"
    scoring: str  # how an answer is scored, for the report
    load: Load
    context: Mapping[str, Any] = field(default_factory=dict)  # its default settings
    grounding: Grounding | None = None  # a second score: what the cited passages give
    report: Callable[[Sequence[Result]], str] | None = None  # a section the report adds
    # The packages whose code a result depends on, besides rat_agent (cache keys), and their
    # modules that only ask and score, which `--rescore` may change.
    packages: tuple[str, ...] = ()
    harness: frozenset[str] = frozenset()
    # A benchmark of one call rather than a graph run (the revision benchmark), and the
    # methods it runs when --methods does not say (None: every method).
    invoke: Invoke | None = None
    methods: tuple[str, ...] | None = None


def names() -> list[str]:
    """Every benchmark by name: built-in, then installed."""
    from rat_agent.eval import docs

    return ["humaneval", "revision", *docs.SETS, *sorted(plugins.installed(plugins.BENCHMARKS))]


def get(name: str) -> Benchmark:
    """The benchmark `name` names: built in, installed, or a how-to set's dataset file."""
    from rat_agent.eval import docs, humaneval, revision

    if name == "humaneval":
        return humaneval.BENCHMARK
    if name == "revision":
        return revision.BENCHMARK
    if name in docs.SETS:
        return docs.benchmark(docs.SETS[name])
    if name in plugins.installed(plugins.BENCHMARKS):
        made = plugins.load(plugins.BENCHMARKS, name)
        made = made if isinstance(made, Benchmark) else made()
        if not isinstance(made, Benchmark):
            raise ConfigError(f"plug-in benchmark {name!r} gives no Benchmark")
        return made
    if name.endswith(".json") and Path(name).is_file():
        return docs.benchmark(docs.read_set(Path(name)))
    raise ConfigError(
        f"unknown benchmark {name!r}: choose one of {', '.join(names())}, or give a how-to "
        "set's dataset file (.json)"
    )
