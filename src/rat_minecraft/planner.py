"""Reference plans: a correct route to any item from an empty inventory.

The tasks' reference plans and the plan-level ablation come from here; the simulator
accepts every plan it writes (the tasks are generated only from plans it accepts).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

from rat_minecraft.corpus import FUELS, IRON_GEAR, SMELTING, TIERS, Recipe
from rat_minecraft.simulator import RAW_SOURCES, PlanError, World, game_world, resolve_item


class _Planner:
    """Depth-first: obtain each ingredient (mine raw materials, smelt, craft), then the item."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.inventory: Counter[str] = Counter()
        self.steps: list[str] = []
        self.stack: list[str] = []
        self.tier = 0  # index in PICKAXE_TIERS of the best pickaxe mining needed

    def step(self, text: str) -> None:
        self.steps.append(text)

    def say(self, name: str) -> str:
        return self.world.title(name).lower()

    def obtain(self, name: str, count: int) -> None:
        if self.inventory[name] >= count:
            return
        if name in self.stack:
            raise PlanError(f"cycle at {name}")
        self.stack.append(name)
        try:
            need = count - self.inventory[name]
            if name in RAW_SOURCES:
                self.mine(name, need)
            elif self._smelt_source(name):
                self.smelt(name, need)
            else:
                self.craft(name, need)
        finally:
            self.stack.pop()

    def _ensure_tool(self, block: str) -> None:
        tool = self.world.data.tier_needed.get(block)
        if tool in PICKAXE_TIERS:
            self.tier = max(self.tier, PICKAXE_TIERS.index(tool))
        if tool and not self.inventory[tool]:
            self.obtain(tool, 1)

    def mine(self, name: str, need: int) -> None:
        block = RAW_SOURCES[name]
        if block is None:
            self.step(f"collect {need} {self.say(name)}")
            self.inventory[name] += need
            return
        self._ensure_tool(block)
        yields = dict(self.world.block_yield(block))
        if yields.get(name) == 1:
            self.step(f"mine {need} {self.say(block)}")
            for item, per in yields.items():
                self.inventory[item] += per * need
        else:
            self.step(f"mine {need} {self.say(name)}")
            self.inventory[name] += need

    def _smelt_source(self, name: str) -> str | None:
        recycled = set(IRON_GEAR) | {n for n in self.world.smelt_out if n.startswith("golden_")}
        for inputs, output, _ in SMELTING:
            if output == name:
                for source in inputs:
                    if source in recycled or source.endswith("_ore"):
                        continue
                    if (
                        source in RAW_SOURCES
                        or self.world.data.crafted.get(source)
                        or self._smelt_source(source)
                    ):
                        return source
        return None

    def smelt(self, name: str, need: int) -> None:
        source = self._smelt_source(name)
        assert source is not None
        self.obtain(source, self.inventory[source] + need)
        if not self.inventory["furnace"]:
            self.obtain("furnace", 1)
        fuel = "oak_planks"
        fuel_count = math.ceil(need / Fraction(FUELS[fuel]))
        self.obtain(fuel, fuel_count)
        self.step(
            f"smelt {need} {self.say(source)} into {self.say(name)} "
            f"using {fuel_count} {self.say(fuel)} as fuel"
        )
        self.inventory[source] -= need
        self.inventory[fuel] -= fuel_count
        self.inventory[name] += need

    def craft(self, name: str, need: int) -> None:
        recipes = [
            r
            for r in self.world.data.crafted.get(name, [])
            if not (r.count == 9 and r.amounts == [1])
        ]
        if not recipes:
            raise PlanError(f"no way to obtain {name}")
        failure: PlanError | None = None
        for recipe in recipes:
            saved = (Counter(self.inventory), list(self.steps))
            try:
                self._craft_with(name, need, recipe)
                return
            except PlanError as exc:
                failure = exc
                self.inventory, self.steps = saved
        assert failure is not None
        raise failure

    def _craft_with(self, name: str, need: int, recipe: Recipe) -> None:
        batches = math.ceil(need / recipe.count)
        chosen: list[tuple[str, int]] = []
        for slot, amount in enumerate(recipe.amounts):
            names = [self.world.data.items[i]["name"] for i in recipe.alternatives[slot]]
            total = amount * batches
            pick = next((n for n in names if self.inventory[n] >= total), None)
            pick = pick or next((n for n in names if n in RAW_SOURCES), names[0])
            if "oak_planks" in names:
                pick = "oak_planks"
            chosen.append((pick, total))
        if recipe.needs_table and not self.inventory["crafting_table"]:
            self.obtain("crafting_table", 1)
        for _ in range(4):  # obtaining a later ingredient may use up an earlier one
            for pick, total in chosen:
                self.obtain(pick, total)
            if all(self.inventory[pick] >= total for pick, total in chosen):
                break
        else:
            raise PlanError(f"ingredients of {name} keep using each other up")
        made = recipe.count * batches
        self.step(f"craft {made} {self.say(name)}")
        for pick, total in chosen:
            self.inventory[pick] -= total
        self.inventory[name] += made


# The best pickaxe a plan needs, from none ("hand") up; netherite is never needed.
PICKAXE_TIERS = ("hand", *(f"{tier}_pickaxe" for tier in TIERS[:-1]))


def plan_with_tier(goal: str) -> tuple[str, str]:
    planner = _Planner(game_world())
    planner.obtain(resolve_item(goal), 1)
    text = "\n".join(
        f"STEP {k}: {s[:1].upper()}{s[1:]}" for k, s in enumerate(planner.steps, start=1)
    )
    return text, PICKAXE_TIERS[planner.tier]


def reference_plan(goal: str) -> str:
    """A correct plan from an empty inventory, as STEP lines; PlanError if none is known."""
    return plan_with_tier(goal)[0]
