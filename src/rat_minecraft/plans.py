"""How long a method's Minecraft plans are and how much of them is needless.

A plan can be executable and still one no player would follow: punching a single log four
times, crafting planks three times over. Each plan is set against the reference planner's
plan for the same task (`planner.py`), and an executable plan's needless steps
are counted (`simulator.needless_steps`: steps it can do without, whose products it never
uses).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from rat_agent.eval.runner import Result, by_method
from rat_minecraft.planner import reference_plan
from rat_minecraft.reading import parse_steps
from rat_minecraft.simulator import needless_steps
from rat_minecraft.tasks import load_tasks


@dataclass(frozen=True)
class Shape:
    steps: int
    reference: int
    needless: int | None  # None: the plan is not executable


@cache
def _goals() -> dict[str, str]:
    return {t.id: t.goal for t in load_tasks()}


@cache
def reference_length(goal: str) -> int:
    return len(parse_steps(reference_plan(goal)))


def shape(goal: str, answer: str) -> Shape:
    found = needless_steps(goal, answer)
    return Shape(
        len(parse_steps(answer)), reference_length(goal), None if found is None else len(found)
    )


def table(results: Sequence[Result]) -> str:
    """Per method, as Markdown: the median plan length, the median of its ratio to the
    reference plan's, and in the executable plans the share of steps they can do without."""
    goals = _goals()
    rows = [
        "| method | plans | median steps | median reference steps | median ratio "
        "| executable plans | needless steps in them |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, mine in by_method(results).items():
        shapes = [shape(goals[r.task], r.answer) for r in mine if r.task in goals]
        if not shapes:
            continue
        ran = [s for s in shapes if s.needless is not None]
        needless = sum(s.needless or 0 for s in ran)
        share = f"{needless / sum(s.steps for s in ran):.0%}" if ran else "-"
        rows.append(
            f"| {method} | {len(shapes)} | {statistics.median(s.steps for s in shapes):g} | "
            f"{statistics.median(s.reference for s in shapes):g} | "
            f"{statistics.median(s.steps / s.reference for s in shapes):.2f} | "
            f"{len(ran)} | {share} |"
        )
    return "\n".join(rows)
