"""Plug-ins: what an installed package adds to rat-agent, found by name through Python entry
points (the packaging ecosystem's registry, as pytest's plug-ins use it).

A domain is a package that registers any of three groups in its `pyproject.toml`:

    [project.entry-points."rat_agent.retrievers"]   # a knowledge source, by its name
    mydomain = "my_domain.source:make_retriever"     # settings -> BaseRetriever
    [project.entry-points."rat_agent.repairs"]      # a plan repair extension of the loop
    mydomain = "my_domain.repair:repair"             # () -> PlanRepair
    [project.entry-points."rat_agent.benchmarks"]   # tasks and a checker for `rat eval`
    mydomain = "my_domain.bench:benchmark"           # () -> rat_agent.eval.Benchmark

A retriever whose metadata names a domain (`rat_domain`) gets the repair registered under
that name, where the run's `repair` is "auto". The bundled Minecraft domain
(`rat_minecraft`) plugs in this way; the core never imports it.
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from rat_agent.errors import ConfigError

RETRIEVERS = "rat_agent.retrievers"
REPAIRS = "rat_agent.repairs"
BENCHMARKS = "rat_agent.benchmarks"


@functools.cache
def installed(group: str) -> dict[str, EntryPoint]:
    """The plug-ins of `group` by name, read once per process (`forget` reads again)."""
    return {point.name: point for point in entry_points(group=group)}


def load(group: str, name: str) -> Any:
    """The object plug-in `name` of `group` registers; ConfigError if there is none or it
    fails to import (a broken plug-in is bad settings, not a failed run)."""
    point = installed(group).get(name)
    if point is None:
        raise ConfigError(f"no plug-in {name!r} among the installed {group}")
    try:
        return point.load()
    except Exception as exc:
        raise ConfigError(f"plug-in {name!r} ({point.value}) failed to load: {exc}") from exc


def forget() -> None:
    """Read the installed plug-ins again (after installing one in a running process)."""
    installed.cache_clear()
