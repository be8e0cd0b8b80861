"""Every benchmark `rat eval` runs, by name.

Built in: HumanEval (eval/humaneval.py), the how-to question sets, one dataset file each
(eval/docs/*.json; `rat eval --benchmark path/to/set.json` runs one of your own), and the
revision benchmark (eval/revision.py), one revision a case. An installed plug-in adds its
own by the entry point "rat_agent.benchmarks" (rat_agent.plugins): the bundled Minecraft
domain's planning suite is one.
"""

from __future__ import annotations

from pathlib import Path

from rat_agent import plugins
from rat_agent.errors import ConfigError
from rat_agent.eval import docs, humaneval, revision
from rat_agent.eval.benchmark import Benchmark


def names() -> list[str]:
    """Every benchmark by name: built-in, then installed."""
    return ["humaneval", "revision", *docs.SETS, *sorted(plugins.installed(plugins.BENCHMARKS))]


def get(name: str) -> Benchmark:
    """The benchmark `name` names: built in, installed, or a how-to set's dataset file."""
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
