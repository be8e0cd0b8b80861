"""What `rat eval` runs: a benchmark's tasks, how an answer is scored, and the settings its
tasks run at unless a flag says otherwise. A plug-in's benchmark is one of these
(eval/registry.py finds them by name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
