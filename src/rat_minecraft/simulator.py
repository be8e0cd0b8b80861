"""Checks a Minecraft plan ("STEP 1: ...") by executing it in a small simulator.

A plan is judged by running it, not by comparing text, so any correct route passes. The
simulator uses the same minecraft-data (Java 1.20) as the retrieval corpus, plus its
hand-written smelting and fuel tables. It holds a plan to what a player following its words
could do; how the words are read (verbs, items, counts, roles) is reading.py's part.

Rules, in short (see `_Sim` for details):

- The inventory starts empty. `mine`/`chop`/`collect`/`gather`/`kill` ... adds items:
  naming a block ("mine 3 iron ore", "mine 3 stone") gives its drops per block (raw_iron,
  cobblestone); naming an item ("collect 3 diamonds", "get 2 leather") gives that many of
  it, from a natural block, or from a mob: an everyday mob drop (string, leather ...) by name
  alone, any other only where the step names the mob. The block's harvest tool must be in
  the inventory; a tool the step names must be too, and so must what it does its work
  "with" or "using" ("kill a rabbit with a bow"). A purpose ("to get X", "for X") is what
  the step gets if the named block or mob drops it; a count on the block or mob only ("mine
  3 stone to get cobblestone") gives the per-block (or one per mob) drop that many times,
  and no product may claim more than its counted blocks or mobs drop, the mobs named in an
  earlier clause of the step included ("kill a rabbit and get 4 rabbit hide" fails). Every
  product a mining step counts is mined ("mine 3 coal ore and 3 iron ore").
- `craft` needs a real recipe, all ingredients (alternatives such as any planks may be
  mixed) and a crafting table in the inventory for recipes larger than 2x2. A count is a
  number of items, rounded up to whole recipe batches; with no count, the counted
  ingredients set the batches ("planks from 2 logs": 2); with neither, one batch. A stated
  ingredient count must cover the batches.
- `smelt`/`cook` needs a furnace (or the blast furnace/smoker the recipe allows) and fuel
  in the inventory; fuel burns as in `FUELS` (one coal smelts 8 items, planks 1.5). Fuel the
  step names is what burns, as much as it says; a product count may not exceed the input's.
- A station a step names as where it happens (crafting table, furnace, smoker ...) must be
  in the inventory and be one where that action happens, whether or not the recipe needs
  it; the 2x2 inventory grid is no station.
- Generic verbs (get, obtain; make, create, build: never mining) must be one action that
  gets the item from what is in hand: none fails, and two that could ("get white wool"
  with string in hand: shear or craft) fail as not saying how.
- A step without any action verb is a note and is skipped when it names no item or starts
  with a non-action verb (find, go, look ...); a note that places, puts, equips, holds or
  opens things needs them in the inventory; otherwise it fails.
- Old-version wording is accepted where the outcome is the same: "smelt iron ore" uses the
  raw iron that mining iron ore gave.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

from rat_minecraft.corpus import (
    FUELS,
    LOGS,
    ORE_DROP_COUNTS,
    SMELTING,
    GameData,
    Recipe,
)
from rat_minecraft.reading import (
    HOLD_VERBS,
    INGREDIENT_PREPS,
    MAKE_VERBS,
    PLANKS,
    STATIONS,
    Action,
    Clause,
    Mention,
    Words,
    after_purpose,
    count_at,
    is_note,
    parse_steps,
    split_clauses,
    tokenize,
)


@dataclass(frozen=True)
class PlanCheck:
    """The verdict: `failed_step` is the 1-based position of the first failing step.

    `executable` is False with `failed_step` None when every step ran but the goal item was
    never in the inventory at the end ("goal never reached"), or when no step was found.
    """

    executable: bool
    failed_step: int | None
    reason: str


class PlanError(Exception):
    """A step cannot be executed; the message says why."""


_TOOL_KINDS = ("pickaxe", "axe", "shovel", "hoe", "sword")
_PAST: dict[Action, str] = {"mine": "mined", "craft": "crafted", "smelt": "smelted", "any": "got"}
# Naturally occurring sources a reference plan mines: item -> block (None: a mob drop).
RAW_SOURCES: dict[str, str | None] = {
    "oak_log": "oak_log",
    "cobblestone": "stone",
    "coal": "coal_ore",
    "raw_iron": "iron_ore",
    "raw_gold": "gold_ore",
    "raw_copper": "copper_ore",
    "diamond": "diamond_ore",
    "redstone": "redstone_ore",
    "lapis_lazuli": "lapis_ore",
    "emerald": "emerald_ore",
    "sand": "sand",
    "gravel": "gravel",
    "flint": "gravel",
    "clay_ball": "clay",
    "sugar_cane": "sugar_cane",
    "obsidian": "obsidian",
    "apple": "oak_leaves",
    "dirt": "dirt",
    "string": None,
    "leather": None,
    "feather": None,
    "bone": None,
    "gunpowder": None,
    "slime_ball": None,
    "white_wool": None,
    "beef": None,
    "porkchop": None,
    "dandelion": "dandelion",
    "poppy": "poppy",
    "pumpkin": "pumpkin",
    "ice": None,
    "granite": "granite",
    "diorite": "diorite",
    "andesite": "andesite",
}


class World(Words):
    """minecraft-data, indexed for the simulator: what blocks drop, what smelts into what,
    on top of how plans name things."""

    def __init__(self) -> None:
        super().__init__(GameData())
        items = self.data.items_name
        self.smelt_out: dict[str, list[tuple[str, str | None]]] = {}
        for inputs, output, other in SMELTING:
            for name in inputs:
                self.smelt_out.setdefault(name, []).append((output, other))
        # block -> (item, how) natural drops without silk touch
        self.block_drops: dict[str, list[tuple[str, str]]] = {}
        for dropped, sources in self.data.dropped_by.items():
            for block, how in sources:
                if how in ("always", "chance", "crop") and block in items:
                    self.block_drops.setdefault(block, []).append((dropped, how))
        # item -> the mobs that always drop it, without needing a player kill
        self.mob_sources: dict[str, set[str]] = {}
        for dropped, mob_drops in self.data.mob_drops.items():
            mobs = {mob for mob, always, player in mob_drops if always and not player}
            if mobs:
                self.mob_sources[dropped] = mobs
        # and what reference plans collect from mobs the loot data leaves out (sheep's wool)
        self.mob_items = set(self.mob_sources) | {
            item for item, block in RAW_SOURCES.items() if block is None
        }

    def harvest_tools(self, block: str) -> set[str]:
        tools = self.data.blocks_name[block].get("harvestTools") or {}
        return {self.data.items[int(i)]["name"] for i in tools}

    def drop_count(self, block: str, item: str) -> int:
        if block.endswith("_ore") or block in ("clay", "glowstone", "melon"):
            return int(ORE_DROP_COUNTS.get(item, "1").split("-")[0])
        return 1

    def block_yield(self, block: str) -> list[tuple[str, int]]:
        """What mining one block gives: its sure drops, else its likeliest one."""
        drops = self.block_drops.get(block, [])
        sure = [(item, self.drop_count(block, item)) for item, how in drops if how == "always"]
        if sure:
            return sure
        for item, _ in sorted(drops, key=lambda d: d[0] != block):
            return [(item, self.drop_count(block, item))]
        return []

    def title(self, name: str) -> str:
        return self.data.title(name)


@cache
@cache
def game_world() -> World:
    return World()


def _tool_phrase(tool: str) -> str:
    tier, _, kind = tool.rpartition("_")
    if kind in _TOOL_KINDS and tier in ("wooden", "stone", "iron", "diamond"):
        return f"a {tool} or better"
    return "shears" if tool == "shears" else f"a {tool}"


def _is_tool(name: str) -> bool:
    return name == "shears" or name.rsplit("_", 1)[-1] in _TOOL_KINDS


# --- the simulator --------------------------------------------------------------------------


@dataclass
class _Sim:
    world: World
    inventory: Counter[str] = field(default_factory=Counter)
    # the step's clauses before the one being run: "kill a cow and take its leather"
    # names in one clause the mob the next one's drop comes from
    before: Sequence[Clause] = ()

    def have(self, name: str) -> int:
        return self.inventory[name]

    def run(self, clause: Clause) -> None:
        if not clause.mentions:
            raise PlanError(f"no known item in '{clause.text}'")
        action = clause.action
        if action == "any":
            action = self._one_action(clause)
        self.do(action, clause)

    def do(self, action: Action, clause: Clause) -> None:
        if action == "mine":
            self.mine(clause)
        elif action == "craft":
            self.craft(clause)
        else:
            self.smelt(clause)

    def _one_action(self, clause: Clause) -> Action:
        """A generic verb ("get", "make") names no action: the step is the one action that
        gets its item from what is in hand. Two that would tell a player nothing about which
        to do; none fails as the likeliest one does."""
        possible: list[Action] = []
        verb = clause.text.split()[clause.verb_at]
        for action in ("craft", "smelt") if verb in MAKE_VERBS else ("mine", "craft", "smelt"):
            trial = _Sim(self.world, Counter(self.inventory), self.before)
            try:
                trial.do(action, clause)
            except PlanError:
                continue
            possible.append(action)
        if len(possible) > 1:
            target = self._target(clause).candidates[0]
            raise PlanError(
                f"'{clause.text}' does not say how: {target} could be "
                f"{' or '.join(_PAST[a] for a in possible)} from what is in the inventory"
            )
        if possible:
            return possible[0]
        likeliest = self._likeliest_action(clause)
        return "craft" if likeliest == "mine" and verb in MAKE_VERBS else likeliest

    def _likeliest_action(self, clause: Clause) -> Action:
        """The action whose failure explains a generic step best: raw materials are mined,
        an ingot whose ore is at hand is smelted, anything else with a recipe is crafted."""
        names = self._target(clause).candidates
        if any(n in RAW_SOURCES for n in names):
            return "mine"
        smelted = {
            out for src, outs in self.world.smelt_out.items() if self.have(src) for out, _ in outs
        }
        if set(names) & smelted:
            return "smelt"
        if any(self.world.data.crafted.get(n) for n in names):
            return "craft"
        if set(names) & {out for outs in self.world.smelt_out.values() for out, _ in outs}:
            return "smelt"
        return "mine"

    def _at_hand(
        self,
        clause: Clause,
        action: Action,
        allowed: Collection[str],
        what: str,
        used: Sequence[Mention] = (),
    ) -> None:
        """A station the step names, other than what it makes or uses up, is where it
        happens: it must be in the inventory, and be one where that action happens. "Craft 1
        crafting table from 4 planks in a crafting table", or smelting iron "in a smoker", is
        no step a player can follow, whether or not the recipe needs a station."""
        for mention in clause.mentions:
            places = [c for c in mention.candidates if c in STATIONS]
            if not places or mention in used:
                continue
            place = places[0]
            if place not in allowed:
                raise PlanError(f"{what} is not {_PAST[action]} in a {place}")
            if not self.have(place):
                raise PlanError(f"the step {action}s in a {place}, and there is none in hand")

    def hold(self, step: str, clauses: Sequence[Clause]) -> None:
        """A step that places, puts, equips, holds or opens things needs them in hand:
        "Place the crafting table" before one is made is no step a player can follow."""
        verb = tokenize(step)[:1]
        if not verb or verb[0] not in HOLD_VERBS:
            return
        for clause in clauses:
            for mention in clause.mentions:
                if not any(self.have(c) for c in mention.candidates):
                    raise PlanError(
                        f"the step says to {verb[0]} {mention.candidates[0]}, and there is "
                        "none in hand"
                    )

    def _target(self, clause: Clause) -> Mention:
        into = [m for m in clause.mentions if m.prep == "into"]
        if into:
            return into[0]
        after = [m for m in clause.mentions if m.start > clause.verb_at]
        for m in after:
            if m.prep not in INGREDIENT_PREPS and m.prep not in ("at", "in", "on"):
                return m
        if after:
            return after[0]
        # Only mentions before the verb: "use the crafting table to craft items" names what
        # the step uses, not what it makes.
        for m in reversed(clause.mentions):
            if m.prep not in INGREDIENT_PREPS and m.prep not in ("at", "in", "on"):
                return m
        verb = clause.text.split()[clause.verb_at]
        raise PlanError(f"nothing to {verb} named in '{clause.text}'")

    # mining

    def _mine_sources(self, name: str) -> list[str]:
        """Blocks to mine for `name`: the block itself if it drops anything, else blocks
        that drop it. Only blocks that occur in the world count: a chest or planks exist
        only once someone made them, so mining is no way to obtain them."""
        world = self.world
        natural = world.data.natural
        if name in world.data.blocks_name and world.block_yield(name) and natural(name):
            return [name]
        return sorted(
            (
                b
                for b, drops in world.block_drops.items()
                if natural(b)
                and (
                    (name, "always") in drops
                    or any(item == name and how in ("chance", "crop") for item, how in drops)
                )
            ),
            key=lambda b: (b.startswith("deepslate_"), len(b)),
        )

    def mine(self, clause: Clause) -> None:
        world = self.world
        tools = [m for m in clause.mentions if all(_is_tool(c) for c in m.candidates)]
        # "punch a tree to collect 2 logs", "mine coal ore to get coal": the purpose counts,
        # if it is what the named block drops ("mine 8 stone for a furnace" mines stone).
        blocks = [
            m
            for m in clause.mentions
            if m.prep not in ("to", "for")
            and m not in tools
            and any(world.block_yield(c) for c in m.candidates)
        ]
        wanted = [
            m
            for m in clause.mentions
            if m.prep in ("to", "for")
            and m not in tools
            and any(self._mine_sources(c) or c in world.mob_items for c in m.candidates)
            and (not blocks or any(self._drops(b, c) for b in blocks for c in m.candidates))
        ]
        target = (
            wanted[-1]
            if wanted
            else next(
                (m for m in clause.mentions if m.start > clause.verb_at and m not in tools), None
            )
            or next((m for m in clause.mentions if m not in tools), None)
        )
        if target is None:
            raise PlanError(f"no block or item to mine in '{clause.text}'")
        tool = None
        if tools:
            tool = tools[0].candidates[0]
            if not self.have(tool):
                raise PlanError(f"no {tool} in the inventory")
        # what the step does it with must be in hand: "kill a rabbit with a bow" needs a bow
        used = [
            m
            for m in clause.mentions
            if m.prep in ("with", "using")
            and m not in tools
            and not set(m.candidates) & set(target.candidates)  # "chop a tree (1 log)"
        ]
        if used and not any(self.have(c) for m in used for c in m.candidates):
            names_used = " or ".join(m.candidates[0] for m in used)
            raise PlanError(f"the step uses {names_used}, and there is none in hand")
        # every product it counts is got: "mine 3 diamonds and 2 sticks" mines no stick
        for other in clause.mentions:
            if (
                other is not target
                and other.count
                and other.prep is None
                and other not in tools
                and not (target in wanted and other in blocks)
            ):
                self.mine(dataclasses.replace(clause, mentions=[other, *tools, *used]))
        names = target.candidates
        if target in wanted and blocks:  # "mine iron ore to get iron": raw iron, no ingot
            names = tuple(n for n in names if any(self._drops(b, n) for b in blocks))
        given = self._source_count(clause, names, [target, *tools])
        # a tree is many logs, however a step counts it ("punch a tree to get 3 logs")
        trees = any(set(b.candidates) & set(LOGS) for b in blocks)
        if target.count and given and target.count > given and not trees:
            raise PlanError(f"what the step mines gives {given} {names[0]}, not {target.count}")
        count = target.count or given or 1
        problems: list[str] = []
        for name in names:
            sources = self._mine_sources(name)
            for block in sources:
                needed = world.harvest_tools(block)
                if needed and not (needed & {t for t in self.inventory if self.have(t)}):
                    problems.append(
                        f"mining {block} needs "
                        f"{_tool_phrase(world.data.tier_needed.get(block, ''))}"
                    )
                    continue
                if needed and tool is not None and tool not in needed:
                    problems.append(
                        f"mining {block} needs {_tool_phrase(world.data.tier_needed[block])},"
                        f" not a {tool}"
                    )
                    continue
                if block == name:
                    for item, per_block in world.block_yield(block):
                        self.inventory[item] += per_block * count
                else:
                    self.inventory[name] += count
                return
            # a mob's drop: the everyday ones by name alone ("collect 3 string"); any other
            # only where the step names the mob ("3 iron ingots" are no mob drop one "gets")
            if name in world.mob_items and (
                RAW_SOURCES.get(name, "") is None or self._mobs_named(clause, name)
            ):
                self.inventory[name] += count
                return
        if problems:
            raise PlanError(problems[0])
        listed = " or ".join(target.candidates[:3])
        raise PlanError(f"{listed} cannot be mined or gathered" + self._how_hint(target))

    def _drops(self, source: Mention, name: str) -> int:
        """How many `name` one `source` gives: per block mined ("stone": 1 cobblestone,
        "redstone ore": 4 redstone, "gravel": 1 flint) or per mob killed (1); 0 if none."""
        world = self.world
        for candidate in source.candidates:
            per_block = dict(world.block_yield(candidate)).get(name)
            if per_block:
                return per_block
            if candidate in self._mine_sources(name):
                return world.drop_count(candidate, name)
            if candidate in world.mob_sources.get(name, ()):
                return 1
        return 0

    def _source_count(
        self, clause: Clause, names: Sequence[str], skip: Sequence[Mention]
    ) -> int | None:
        """How many of the target (`names`) the step gets when only its source has a count:
        "mine 3 stone to get cobblestone" (3), "kill 3 cows for leather" (3)."""
        for mention in clause.mentions:
            if mention.count and mention not in skip:
                for name in names:
                    if per := self._drops(mention, name):
                        return mention.count * per
        for name in names:
            for count in self._mobs_named(clause, name):
                if count:
                    return count
        return None

    def _mobs_named(self, clause: Clause, name: str) -> list[int | None]:
        """The count of each mob the step names that drops `name` ("3 cows" for leather:
        3; "a spider": 1; "spiders": None), in the clause or else in the step's clauses before
        it. Mobs are no items, so they are read here."""
        for source in (clause, *reversed(self.before)):
            tokens = source.text.split()
            # "4 rabbit hide" names an item, not 4 rabbits
            items = {m.start for m in source.mentions}
            found: list[int | None] = []
            for mob in sorted(self.world.mob_sources.get(name, ())):
                *first, last = mob.split("_")
                n = len(first) + 1
                for k in range(len(tokens) - n + 1):
                    if k in items and not any(
                        mob in m.candidates for m in source.mentions if m.start == k
                    ):
                        continue
                    if tokens[k : k + n - 1] == first and tokens[k + n - 1] in (last, last + "s"):
                        found.append(count_at(tokens, k, k + n))
            if found:
                return found
        return []

    def _how_hint(self, target: Mention) -> str:
        name = target.candidates[0]
        if name in {out for outs in self.world.smelt_out.values() for out, _ in outs}:
            return f" ({name} is smelted)"
        if self.world.data.crafted.get(name):
            return f" ({name} is crafted)"
        return ""

    # crafting

    def craft(self, clause: Clause) -> None:
        """Craft each target: "craft a crafting table and 4 sticks" has two; "craft 3 planks
        and 2 sticks to make a pickaxe" has one, made from the others."""
        purpose = [
            m
            for m in clause.mentions
            if m.start > clause.verb_at
            and after_purpose(clause.text.split(), m.start)
            and any(self.world.data.crafted.get(c) for c in m.candidates)
        ]
        if purpose:
            targets = purpose[:1]
        else:
            first = self._target(clause)
            targets = [first]
            if first.prep is None:
                targets = [m for m in clause.mentions if m.start >= first.start and m.prep is None]
        for target in targets:
            used = {
                self.world.data.items[i]["name"]
                for c in target.candidates
                for recipe in self.world.data.crafted.get(c, [])
                for slot in recipe.alternatives
                for i in slot
            }
            ingredients = [
                m
                for m in clause.mentions
                if m not in targets
                # a station is where a step crafts, unless the recipe itself takes one
                and not (set(m.candidates) & STATIONS and not set(m.candidates) & used)
                and not (m.start < clause.verb_at and set(m.candidates) & STATIONS)
            ]
            self._at_hand(
                clause, "craft", ("crafting_table",), target.candidates[0], [*targets, *ingredients]
            )
            self._craft_one(target, ingredients, alone=len(targets) == 1)

    def _craft_one(
        self, target: Mention, ingredients: Sequence[Mention], alone: bool = True
    ) -> None:
        world = self.world
        errors: list[str] = []
        for name in target.candidates:
            recipes = world.data.crafted.get(name, [])
            if not recipes:
                continue
            usable = [r for r in recipes if self._uses(r, ingredients)]
            if not usable:
                errors.append(
                    f"no recipe makes {name} from {', '.join(m.candidates[0] for m in ingredients)}"
                )
                continue
            best: tuple[int, str] | None = None
            for recipe in usable:
                batches = self._batches(recipe, target, ingredients if alone else ())
                shortage = self._shortage(recipe, batches, ingredients)
                if shortage is None:
                    if recipe.needs_table and not self.have("crafting_table"):
                        raise PlanError(f"crafting {name} needs a crafting_table")
                    self._consume(recipe, batches)
                    self.inventory[name] += recipe.count * batches
                    return
                if best is None or shortage[0] < best[0]:
                    best = (shortage[0], f"crafting {name} {shortage[1]}")
            assert best is not None
            errors.append(best[1])
        if errors:
            raise PlanError(errors[0])
        hint = self._how_hint(target)
        raise PlanError(f"no crafting recipe makes {target.candidates[0]}{hint}")

    def _batches(self, recipe: Recipe, target: Mention, ingredients: Sequence[Mention]) -> int:
        """The target's count rounded up to whole batches; with no count, as many batches
        as the counted ingredients make ("planks from 2 logs": 2); else one."""
        if target.count:
            return max(1, math.ceil(target.count / recipe.count))
        made = [
            mention.count // amount
            for slot, amount in enumerate(recipe.amounts)
            for mention in ingredients
            if mention.count and set(mention.candidates) & set(self._names(recipe, slot))
        ]
        return max(1, min(made, default=1))

    def _names(self, recipe: Recipe, slot: int) -> list[str]:
        return [self.world.data.items[i]["name"] for i in recipe.alternatives[slot]]

    def _uses(self, recipe: Recipe, ingredients: Sequence[Mention]) -> bool:
        """Every ingredient the step names is in the recipe (a mined block counts as its
        drop: "3 stone" for cobblestone)."""
        names = {n for slot in range(len(recipe.amounts)) for n in self._names(recipe, slot)}
        for mention in ingredients:
            options = set(mention.candidates)
            for candidate in mention.candidates:
                options |= {item for item, _ in self.world.block_yield(candidate)}
            if not options & names:
                return False
        return True

    def _shortage(
        self, recipe: Recipe, batches: int, ingredients: Sequence[Mention]
    ) -> tuple[int, str] | None:
        """None if the inventory holds everything, else (missing slots, "needs N x, have M").

        A stated ingredient count below what the batches need is an error too."""
        stock = Counter(self.inventory)
        missing: list[str] = []
        for slot, amount in enumerate(recipe.amounts):
            names = self._names(recipe, slot)
            need = amount * batches
            for mention in ingredients:
                if (
                    mention.count is not None
                    and set(mention.candidates) & set(names)
                    and mention.count < need
                ):
                    return (99, f"takes {need} {names[0]}, not {mention.count}")
            have = sum(stock[n] for n in names)
            if have < need:
                label = names[0] if len(names) == 1 else f"{names[0]} (or similar)"
                missing.append(f"needs {need} {label}, have {have}")
            else:
                for n in names:
                    take = min(stock[n], need)
                    stock[n] -= take
                    need -= take
        return (len(missing), "; ".join(missing)) if missing else None

    def _consume(self, recipe: Recipe, batches: int) -> None:
        for slot, amount in enumerate(recipe.amounts):
            need = amount * batches
            for name in sorted(self._names(recipe, slot), key=lambda n: -self.have(n)):
                take = min(self.have(name), need)
                self.inventory[name] -= take
                need -= take
        self.inventory = +self.inventory

    # smelting

    def smelt(self, clause: Clause) -> None:
        world = self.world
        mentions = [m for m in clause.mentions if not set(m.candidates) & STATIONS]
        outputs = {out for outs in world.smelt_out.values() for out, _ in outs}
        fuel_named = [
            m
            for m in mentions
            if m.prep in ("with", "using", "fuel", "as", "use")
            and any(c in FUELS for c in m.candidates)
        ]
        smeltable = set(world.smelt_out)
        # "into/to/for X" is the product, unless X is only ever smelted ("use coal to smelt
        # 3 raw iron", "smelt raw iron for the iron pickaxe").
        wanted = [
            m
            for m in mentions
            if (
                m.prep in ("into", "to", "for")
                and (set(m.candidates) & outputs or not set(m.candidates) & smeltable)
            )
            or (
                m not in fuel_named
                and set(m.candidates) <= outputs
                and not set(m.candidates) & smeltable
            )
        ]
        inputs = [m for m in mentions if m not in fuel_named and m not in wanted]
        given = next((m.count for m in inputs if m.count), None)
        claimed = next((m.count for m in wanted if m.count), None)
        count = given or claimed or 1
        source, output, other = self._smelt_input(inputs, wanted, count)
        if given and claimed and claimed > given:
            raise PlanError(f"smelting {given} {source} gives {given} {output}, not {claimed}")
        stations = ("furnace", other) if other else ("furnace",)
        self._at_hand(clause, "smelt", stations, source)
        if not any(self.have(s) for s in stations):
            raise PlanError(f"smelting {source} needs a furnace")
        if self.have(source) < count:
            raise PlanError(f"smelting needs {count} {source}, have {self.have(source)}")
        self.inventory[source] -= count
        self._burn(count, fuel_named)
        self.inventory[output] += count
        self.inventory = +self.inventory

    def _smelt_input(
        self, inputs: Sequence[Mention], wanted: Sequence[Mention], count: int
    ) -> tuple[str, str, str | None]:
        world = self.world
        want = {c for m in wanted for c in m.candidates}
        options: list[tuple[str, str, str | None]] = []
        names = [c for m in inputs for c in m.candidates]
        for name in names:
            # "smelt iron ore" after mining it: the raw iron it dropped is what is smelted.
            for candidate in [name, *(item for item, _ in world.block_yield(name))]:
                for output, other in world.smelt_out.get(candidate, []):
                    if not want or output in want:
                        options.append((candidate, output, other))
        if not names:
            options = [
                (src, out, other)
                for src, outs in world.smelt_out.items()
                for out, other in outs
                if out in want and self.have(src)
            ]
        if not options:
            if names:
                target = f" into {sorted(want)[0]}" if want else ""
                raise PlanError(f"{names[0]} cannot be smelted{target}")
            raise PlanError("nothing to smelt named")
        for option in options:
            if self.have(option[0]) >= count:
                return option
        return max(options, key=lambda o: self.have(o[0]))

    def _burn(self, count: int, named: Sequence[Mention]) -> None:
        """Consume fuel for `count` items. Fuel the step names is what burns, as much as it
        says ("using 1 coal" smelts 8 items, not 16); with none named, coal, charcoal, then
        wood, from the inventory."""
        generic = self.world.aliases["fuel"]  # "as fuel" names no fuel in particular
        named = [m for m in named if m.candidates != generic] or named
        plan: list[tuple[str, int]] = []
        for mention in named:
            fuels = [c for c in mention.candidates if c in FUELS and self.have(c)]
            want = mention.count or sum(self.have(c) for c in fuels)
            if not fuels or sum(self.have(c) for c in fuels) < want:
                listed = f"{mention.count} " if mention.count else ""
                raise PlanError(f"the step burns {listed}{mention.candidates[0]}: not in hand")
            for name in fuels:
                plan.append((name, min(want, self.have(name))))
                want -= plan[-1][1]
        if not named:
            order = ["coal", "charcoal", "coal_block", *PLANKS, *LOGS, *FUELS]
            plan = [(f, self.have(f)) for f in dict.fromkeys(order) if f in FUELS and self.have(f)]
            if not plan:
                raise PlanError("smelting needs fuel (coal, charcoal, planks or logs): no fuel")
        left = Fraction(count)
        for fuel, most in plan:
            if left <= 0:
                break
            rate = Fraction(FUELS[fuel])
            take = min(most, math.ceil(left / rate))
            self.inventory[fuel] -= take
            left -= rate * take
        if left > 0:
            burned = ", ".join(f"{n} {f}" for f, n in plan)
            raise PlanError(f"not enough fuel to smelt {count} items: {burned}")


# --- the checker ----------------------------------------------------------------------------
# --- the checker ----------------------------------------------------------------------------


def resolve_item(name: str) -> str:
    """The Minecraft id for an id or display name in any case/spacing; ValueError if none."""
    world = game_world()
    exact = name.strip().lower().replace(" ", "_")
    if exact in world.data.items_name and exact != "air":
        return exact
    found = world.resolve(name)
    if not found:
        raise ValueError(f"unknown item: {name!r}")
    return found[0]


def check_plan(goal: str, plan_text: str) -> PlanCheck:
    """Run the plan's steps from an empty inventory; executable if all run and the goal
    item is in the inventory at the end."""
    steps = parse_steps(plan_text)
    if not steps:
        return PlanCheck(False, None, "no STEP lines found in the plan")
    return _check_steps(resolve_item(goal), steps)


def needless_steps(goal: str, plan_text: str) -> list[int] | None:
    """The 1-based numbers of the acting steps an executable plan can do without (None for
    a plan that is not executable): from the last step back, a step goes when the plan
    without it, and without those already gone, still reaches the goal. What such a step
    makes, the plan never uses: a second batch of planks, a pickaxe never swung. Notes act
    on nothing and are not counted."""
    world = game_world()
    goal_id = resolve_item(goal)
    steps = parse_steps(plan_text)
    if not steps or not _check_steps(goal_id, steps).executable:
        return None
    kept = list(range(len(steps)))
    gone: list[int] = []
    for n in reversed(range(len(steps))):
        if is_note(steps[n], split_clauses(world, steps[n])):
            continue
        trial = [i for i in kept if i != n]
        if _check_steps(goal_id, [steps[i] for i in trial]).executable:
            kept = trial
            gone.append(n + 1)
    return sorted(gone)


def _check_steps(goal_id: str, steps: Sequence[str]) -> PlanCheck:
    world = game_world()
    sim = _Sim(world)
    for number, step in enumerate(steps, start=1):
        clauses = split_clauses(world, step)
        try:
            if is_note(step, clauses):
                sim.hold(step, clauses)
                continue
            actions = [c for c in clauses if c.verb_at >= 0]
            if not actions:
                raise PlanError(f"no action verb (mine, craft, smelt ...) in '{step}'")
            for at, clause in enumerate(actions):
                sim.before = actions[:at]
                sim.run(clause)
        except PlanError as exc:
            return PlanCheck(False, number, f"STEP {number}: {exc}")
    if sim.have(goal_id):
        return PlanCheck(True, None, f"{goal_id} obtained")
    return PlanCheck(False, None, f"goal never reached: no {goal_id} after the last step")
