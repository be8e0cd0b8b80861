"""The Minecraft suite: one task per goal item, split once into tuning and test halves."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from rat_minecraft.corpus import COLORS
from rat_minecraft.planner import PICKAXE_TIERS, plan_with_tier
from rat_minecraft.simulator import PlanError, check_plan, game_world


@dataclass(frozen=True)
class Task:
    """One evaluation question: obtain `goal` starting from an empty inventory.

    `split`: "tune" tasks are for choosing prompts and defaults, "test" tasks for reporting
    (never looked at while tuning).
    """

    id: str
    goal: str
    question: str
    tier: str
    split: str = "test"


# The RAT paper's instruction for its Minecraft experiments (appendix A.3), word for word:
# every method gets it as the task.
TASK_PROMPT = (
    "Give you nothing in the inventory, generate a step-by-step plan for the task of "
    "obtaining a {item} in Minecraft survival mode, and describe the object Minecraft item "
    "and its number at every step. For every step, start with 'STEP' as start."
)


# Goals every task set should have, whatever the automatic selection picks.
_CORE_GOALS = (
    "crafting_table",
    "stick",
    "wooden_pickaxe",
    "wooden_axe",
    "wooden_sword",
    "wooden_shovel",
    "stone_pickaxe",
    "stone_axe",
    "stone_sword",
    "stone_shovel",
    "furnace",
    "chest",
    "torch",
    "iron_ingot",
    "iron_pickaxe",
    "iron_axe",
    "iron_sword",
    "iron_shovel",
    "bucket",
    "shears",
    "compass",
    "clock",
    "rail",
    "golden_apple",
    "gold_ingot",
    "golden_pickaxe",
    "diamond_pickaxe",
    "diamond_sword",
    "diamond_axe",
    "enchanting_table",
    "book",
    "bookshelf",
)


def generate_tasks(limit: int = 150) -> list[Task]:
    """Tasks whose reference plan the simulator accepts: core goals, then other craftable
    items in id order, skipping colour variants and plans over 40 steps.

    `tier` is the best pickaxe some block in the plan needs ("hand": none), so tiers run
    from a crafting table ("hand") to the enchanting table's obsidian ("diamond_pickaxe")."""
    world = game_world()
    names = list(_CORE_GOALS) + sorted(
        (
            n
            for n in world.data.crafted
            if n not in _CORE_GOALS
            and not any(n.startswith(c + "_") for c in COLORS if c != "white")
        ),
        key=lambda n: world.data.items_name[n]["id"],
    )
    tasks: list[Task] = []
    for name in names:
        if len(tasks) >= limit:
            break
        try:
            plan, tier = plan_with_tier(name)
        except PlanError:
            continue
        if plan.count("\n") >= 40 or not check_plan(name, plan).executable:
            continue
        tasks.append(
            Task(
                id=f"mc-{name}",
                goal=name,
                tier=tier,
                question=TASK_PROMPT.format(item=world.title(name).lower()),
            )
        )
    return _assign_splits(tasks)


def _order(task: Task) -> str:
    """A fixed shuffle: neither the id order nor the core goals first decide a split."""
    return hashlib.sha256(task.id.encode()).hexdigest()


def _by_tier(tasks: Iterable[Task]) -> dict[str, list[Task]]:
    tiers: dict[str, list[Task]] = {tier: [] for tier in PICKAXE_TIERS}
    for task in sorted(tasks, key=_order):
        tiers.setdefault(task.tier, []).append(task)
    return {tier: found for tier, found in tiers.items() if found}


def _assign_splits(tasks: Sequence[Task]) -> list[Task]:
    """Half of every tier is for tuning, half for testing (test takes an odd one out)."""
    split = {
        t.id: ("test" if n % 2 == 0 else "tune")
        for found in _by_tier(tasks).values()
        for n, t in enumerate(found)
    }
    return [dataclasses.replace(t, split=split[t.id]) for t in tasks]


def sample(tasks: Sequence[Task], n: int, split: str, exclude: Collection[str] = ()) -> list[Task]:
    """A stratified sample of `n` tasks of a split: every tier in proportion to its share
    of the whole suite (each at least once), in a fixed shuffled order within a tier.
    Tasks in `exclude` (ids: ones already looked at) are never drawn; the next in their
    tier's order are."""
    share = Counter(t.tier for t in tasks)
    pool = _by_tier(t for t in tasks if t.split == split and t.id not in exclude)
    n = min(n, sum(len(found) for found in pool.values()))
    quota = {
        tier: min(len(pool[tier]), max(1, math.floor(n * share[tier] / len(tasks))))
        for tier in pool
    }
    by_remainder = sorted(pool, key=lambda tier: -(n * share[tier] / len(tasks)) % 1)
    while sum(quota.values()) < n:  # largest remainders first, then round again
        for tier in by_remainder:
            if sum(quota.values()) < n and quota[tier] < len(pool[tier]):
                quota[tier] += 1
    while sum(quota.values()) > n:  # the minimum of one per tier overshot: trim the largest
        quota[max(quota, key=lambda tier: quota[tier])] -= 1
    chosen = {t.id for tier, found in pool.items() for t in found[: quota[tier]]}
    return [t for t in tasks if t.id in chosen]


def load_tasks() -> list[Task]:
    """The committed task set (tasks.json, written by `python -m` this module)."""
    raw: Any = json.loads(
        resources.files("rat_minecraft").joinpath("tasks.json").read_text("utf-8")
    )
    return [Task(**entry) for entry in raw]


def _write(tasks: Iterable[Task]) -> str:
    entries = [
        {"id": t.id, "goal": t.goal, "question": t.question, "tier": t.tier, "split": t.split}
        for t in tasks
    ]
    return json.dumps(entries, indent=1) + "\n"


if __name__ == "__main__":
    path = resources.files("rat_minecraft").joinpath("tasks.json")
    with resources.as_file(path) as file:
        file.write_text(_write(generate_tasks()), encoding="utf-8")
