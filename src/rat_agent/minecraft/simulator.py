"""Checks a Minecraft plan ("STEP 1: ...") by executing it in a small simulator.

A plan is judged by running it, not by comparing text, so any correct route passes. The
simulator uses the same minecraft-data (Java 1.20) as the retrieval corpus, plus its
hand-written smelting and fuel tables, so a plan the corpus pages support is executable.

Rules, in short (see `_Sim` and `_parse_clause` for details):

- The inventory starts empty. `mine`/`chop`/`collect`/`gather`/`get`/`kill` ... adds items:
  naming a block ("mine 3 iron ore", "mine 3 stone") gives its drops per block (raw_iron,
  cobblestone); naming an item ("collect 3 diamonds", "get 2 leather") gives that many of
  it, from a natural block or a mob that always drops it. The block's harvest tool (any
  of the data's `harvestTools`) must be in the inventory; a tool the step names must be too.
  A purpose ("to get X", "for X") is what the step gets if the named block or mob drops it;
  a count on the block or mob only ("mine 3 stone to get cobblestone", "kill 3 cows for
  leather") gives the per-block (or one per mob) drop that many times.
- `craft`/`make` needs a real recipe, all ingredients (alternatives such as any planks may be
  mixed) and a crafting table in the inventory for recipes larger than 2x2. A count is a
  number of items, rounded up to whole recipe batches; with no count, the counted
  ingredients set the batches ("planks from 2 logs": 2); with neither, one batch.
- `smelt`/`cook` needs a furnace (or the blast furnace/smoker the recipe allows) and fuel
  in the inventory; fuel burns as in `FUELS` (one coal smelts 8 items, planks 1.5).
- Generic verbs (get, obtain, make, create, produce) do whatever the named item needs:
  mine it if it can be mined, else craft it, else smelt it.
- A step without any action verb is a note and is skipped when it names no item or starts
  with a non-action verb (place, open, find, go, equip ...); otherwise it fails.
- Old-version wording is accepted where the outcome is the same: "smelt iron ore" uses the
  raw iron that mining iron ore gave.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Literal

from rat_agent.minecraft.corpus import (
    FUELS,
    LOGS,
    ORE_DROP_COUNTS,
    SMELTING,
    GameData,
    Recipe,
)

Action = Literal["mine", "craft", "smelt", "any"]


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


# --- vocabulary -----------------------------------------------------------------------------

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_VERBS: dict[str, Action] = {}
for _words, _action in (
    (
        "mine mining mined dig digging break breaking punch punching chop chopping cut cutting "
        "harvest harvesting collect collecting gather gathering kill killing hunt hunting slay "
        "pick",
        "mine",
    ),
    (
        "craft crafting crafted assemble assembling combine combining turn turning convert "
        "converting",
        "craft",
    ),
    ("smelt smelting smelted cook cooking cooked roast burn burning", "smelt"),
    (
        "get getting obtain obtaining acquire acquiring make making create creating produce "
        "producing build building",
        "any",
    ),
):
    for _word in _words.split():
        _VERBS[_word] = _action  # type: ignore[assignment]
_NOTE_VERBS = frozenset(
    {
        "place",
        "put",
        "open",
        "equip",
        "hold",
        "select",
        "find",
        "locate",
        "go",
        "walk",
        "travel",
        "explore",
        "look",
        "search",
        "wait",
        "return",
        "navigate",
        "move",
        "stand",
        "click",
        "right",
        "left",
        "ensure",
        "note",
        "check",
        "keep",
        "store",
        "drop",
        "stay",
        "sleep",
        "eat",
    }
)
# Words between a count and its item: "3 pieces of iron ore", "2 more sticks".
_FILLER = frozenset(
    {
        "more",
        "extra",
        "additional",
        "piece",
        "pieces",
        "of",
        "unit",
        "units",
        "total",
        "pcs",
        "x",
        "block",
        "blocks",
    }
)
# The last one of these before a mention is its role in the step.
_PREPS = frozenset(
    {
        "into",
        "to",
        "from",
        "with",
        "using",
        "use",
        "fuel",
        "as",
        "for",
        "at",
        "in",
        "on",
        "by",
        "out",
    }
)
_INGREDIENT_PREPS = frozenset({"from", "with", "using", "use", "out", "by"})
_STATIONS = frozenset({"crafting_table", "furnace", "blast_furnace", "smoker"})
_TOOL_KINDS = ("pickaxe", "axe", "shovel", "hoe", "sword")
_EXCLUDED = frozenset({"air", "light", "target", "lead", "barrier", "jigsaw"})
_PLANKS = tuple(
    f"{wood}_planks"
    for wood in (
        "oak",
        "spruce",
        "birch",
        "jungle",
        "acacia",
        "cherry",
        "dark_oak",
        "mangrove",
        "bamboo",
        "crimson",
        "warped",
    )
)
_NATURAL_LOGS = tuple(name for name in LOGS if not name.startswith("stripped_"))
# Shorthand a plan uses for a group of items; the first is the default when obtaining.
_GROUPS: dict[str, tuple[str, ...]] = {
    "planks": _PLANKS,
    "plank": _PLANKS,
    "wooden planks": _PLANKS,
    "wood planks": _PLANKS,
    "wooden plank": _PLANKS,
    "wood plank": _PLANKS,
    "log": LOGS,
    "wood": _NATURAL_LOGS,
    "wooden log": LOGS,
    "wood log": LOGS,
    "tree": _NATURAL_LOGS,
    "tree trunk": _NATURAL_LOGS,
    "wood block": _NATURAL_LOGS,
    "iron": ("iron_ingot", "raw_iron", "iron_ore"),
    "gold": ("gold_ingot", "raw_gold", "gold_ore"),
    "copper": ("copper_ingot", "raw_copper", "copper_ore"),
    "cobble": ("cobblestone",),
    "workbench": ("crafting_table",),
    "crafting bench": ("crafting_table",),
    "enchantment table": ("enchanting_table",),
    "sugarcane": ("sugar_cane",),
    "redstone dust": ("redstone",),
    "lapis": ("lapis_lazuli",),
    "wool": ("white_wool",),
    "bed": ("white_bed",),
    "fuel": ("coal", "charcoal"),
    "iron nugget": ("iron_nugget",),
    "gold nugget": ("gold_nugget",),
    "iron bar": ("iron_ingot",),
    "gold bar": ("gold_ingot",),
}
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


@dataclass(frozen=True)
class _Mention:
    candidates: tuple[str, ...]
    start: int
    count: int | None
    prep: str | None


@dataclass
class _Clause:
    action: Action
    verb_at: int
    mentions: list[_Mention]
    text: str


class World:
    """minecraft-data, indexed for the simulator: aliases, drops, recipes, smelting."""

    def __init__(self) -> None:
        self.data = GameData()
        items = self.data.items_name
        self.aliases: dict[str, tuple[str, ...]] = {}
        for item in items.values():
            name = item["name"]
            if name in _EXCLUDED:
                continue
            keys = {name.replace("_", " "), item["displayName"].lower()}
            for key in list(keys):
                for old, new in (("wooden ", "wood "), ("golden ", "gold ")):
                    if key.startswith(old):
                        keys.add(new + key.removeprefix(old))
                keys.add(key.replace("pickaxe", "pick"))
            for key in keys:
                self.aliases.setdefault(_clean(key), (name,))
        for key, group in _GROUPS.items():
            self.aliases[_clean(key)] = tuple(n for n in group if n in items)
        # "1 oak plank": a plural name read in the singular (its last word alone may be
        # known, "plank", which would otherwise win and lose the "oak" and the count)
        for key, names in list(self.aliases.items()):
            if " " in key and key.endswith("s") and not key.endswith("ss"):
                self.aliases.setdefault(key[:-1], names)
        for log in _NATURAL_LOGS:  # "3 birch trees" are 3 birch logs, not 3 of any log
            if log.endswith("_log"):
                self.aliases[_clean(log.replace("_log", " tree"))] = (log,)
        self.vocab = {word for key in self.aliases for word in key.split()}
        self.pairs = {" ".join(key.split()[:2]) for key in self.aliases if " " in key}
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

    def is_verb(self, tokens: Sequence[str], k: int) -> bool:
        """A verb, unless it starts an item name ("crafting table", "cooked beef")."""
        token = tokens[k]
        if token not in _VERBS or (token == "pick" and tokens[k + 1 : k + 2] != ["up"]):
            return False
        if token in ("turn", "turning") and "into" not in tokens[k + 1 :]:
            return False  # "turn the furnace on" crafts nothing; "turn 9 ingots into a block"
        after = tokens[k + 1 : k + 2]
        return not (after and f"{token} {self.normalize(after[0])}" in self.pairs)

    def normalize(self, word: str) -> str:
        """Map a plural or singular word onto the spelling the item names use."""
        if word in self.vocab or len(word) < 3:
            return word
        for cut, add in (("ies", "y"), ("es", ""), ("s", ""), ("", "s")):
            if word.endswith(cut) and (stem := word[: len(word) - len(cut)] + add) in self.vocab:
                return stem
        return word

    def resolve(self, text: str) -> tuple[str, ...] | None:
        words = [self.normalize(w) for w in _clean(text).split()]
        return self.aliases.get(" ".join(words))

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
def game_world() -> World:
    return World()


def _clean(text: str) -> str:
    text = text.lower().replace("_", " ").replace("-", " ").replace("\u00d7", "x")
    text = re.sub(r"\b\d+\s*x\s*\d+\b", " ", text)  # "3x3 grid" is no count
    return " ".join(re.findall(r"[a-z0-9']+|[,;.():+=]", text))


def _tool_phrase(tool: str) -> str:
    tier, _, kind = tool.rpartition("_")
    if kind in _TOOL_KINDS and tier in ("wooden", "stone", "iron", "diamond"):
        return f"a {tool} or better"
    return "shears" if tool == "shears" else f"a {tool}"


def _is_tool(name: str) -> bool:
    return name == "shears" or name.rsplit("_", 1)[-1] in _TOOL_KINDS


# --- parsing --------------------------------------------------------------------------------

_STEP = re.compile(
    r"^\s*(?:[#>*+\-\u2022]+\s*)*(?:\*\*|__)?\s*(?:step\s*(\d+)\b|(\d+)\s*[.):](?!\d))"
    r"\s*(?:\*\*|__)?\s*[:.)\-\u2013\u2014]*\s*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)


def parse_steps(plan_text: str) -> list[str]:
    """The body of each "STEP k" / "k." line, in order; other lines are prose and ignored.

    A header with an empty body ("Step 1:") takes the next prose line as its body.
    """
    steps: list[str] = []
    pending = False
    for line in plan_text.splitlines():
        match = _STEP.match(line)
        if match:
            steps.append(match.group(3).strip().strip("*_ ").strip())
            pending = not steps[-1]
        elif pending and line.strip():
            steps[-1] = line.strip().lstrip("-*\u2022 ").strip()
            pending = False
    return steps


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for token in _clean(text).split():
        if m := re.fullmatch(r"(\d+)x", token):
            out.append(m.group(1))
        elif m := re.fullmatch(r"x(\d+)", token):
            out += ["x", m.group(1)]
        else:
            out.append(token)
    return out


def _number(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    return _NUMBER_WORDS.get(token)


def _mentions(world: World, tokens: Sequence[str]) -> list[_Mention]:
    """Greedy longest match of item names; counts come before ("4 planks", "4x planks")
    or right after in "x4"/"(4)" form."""
    found: list[_Mention] = []
    prep: str | None = None

    def longest(i: int) -> tuple[int, tuple[str, ...] | None]:
        words = [world.normalize(t) for t in tokens[i : i + 6]]
        for n in range(len(words), 0, -1):
            if candidates := world.aliases.get(" ".join(words[:n])):
                return n, candidates
        return 0, None

    i = 0
    while i < len(tokens):
        n, candidates = longest(i)
        # "1 block of gold ore" is an amount of gold ore, not a block of gold and "ore":
        # "block(s) of" is a unit when what follows it names a longer item.
        if candidates and tokens[i] in ("block", "blocks") and tokens[i + 1 : i + 2] == ["of"]:
            after, _ = longest(i + 2)
            if after and i + 2 + after > i + n:
                i += 2
                continue
        if not candidates:
            if tokens[i] in _PREPS:
                prep = tokens[i]
            elif tokens[i] in ("(", ":", "+", "="):  # "pickaxe (3 planks + 2 sticks)"
                prep = "with"
            i += 1
            continue
        found.append(_Mention(candidates, i, _count_at(tokens, i, i + n), prep))
        i += n
    return found


def _count_at(tokens: Sequence[str], i: int, end: int) -> int | None:
    """The count of the name at tokens[i:end]: before it ("4 planks", "4 pieces of iron ore")
    or right after it ("planks x4", "planks (4)")."""
    j = i - 1
    while j >= 0 and tokens[j] in _FILLER:
        j -= 1
    if j >= 0 and (num := _number(tokens[j])) is not None:
        return num
    after = tokens[end : end + 3]
    if len(after) >= 2 and after[0] in ("x", "(") and after[1].isdigit():
        return int(after[1])
    return None


def _split_clauses(world: World, step: str) -> list[_Clause]:
    """One clause per action: "chop 2 logs and craft 8 planks" is two."""
    clauses: list[_Clause] = []
    for sentence_no, sentence in enumerate(re.split(r"(?<=[a-z0-9)])\.\s+", step)):
        tokens = _tokens(sentence)
        cuts = [0]
        seen_verb = False
        for k in range(len(tokens)):
            if world.is_verb(tokens, k) and tokens[k - 1 : k] not in (["to"], ["by"]):
                if seen_verb and k > 0 and tokens[k - 1] in (",", ";", "and", "then", "also"):
                    cuts.append(k)
                seen_verb = True
        cuts.append(len(tokens))
        for a, b in itertools.pairwise(cuts):
            part = tokens[a:b]
            mentions = _mentions(world, part)
            verb_at, action = _find_verb(world, part)
            if sentence_no > 0 and (action is None or not mentions):
                continue  # later sentences are often explanations
            clauses.append(_Clause(action or "any", verb_at, mentions, " ".join(part)))
    return clauses


def _find_verb(world: World, tokens: Sequence[str]) -> tuple[int, Action | None]:
    """The clause's action: a specific verb beats a generic one ("get X by smelting Y")."""
    first: tuple[int, Action | None] = (-1, None)
    for k, token in enumerate(tokens):
        if not world.is_verb(tokens, k):
            continue
        action = _VERBS[token]
        if action != "any":
            return (k if first[0] < 0 else first[0]), action
        if first[0] < 0:
            first = (k, action)
    return first


_PURPOSE_VERBS = frozenset(w for w, action in _VERBS.items() if action in ("any", "craft"))


def _after_purpose(tokens: Sequence[str], start: int) -> bool:
    """Whether the mention at `start` follows "to make/get/create ..." (counts and articles
    between are skipped): what the step is done to obtain."""
    k = start - 1
    while k >= 0 and (_number(tokens[k]) is not None or tokens[k] in _FILLER or tokens[k] == "the"):
        k -= 1
    return k >= 1 and tokens[k] in _PURPOSE_VERBS and tokens[k - 1] == "to"


# --- the simulator --------------------------------------------------------------------------


@dataclass
class _Sim:
    world: World
    inventory: Counter[str] = field(default_factory=Counter)

    def have(self, name: str) -> int:
        return self.inventory[name]

    def run(self, clause: _Clause) -> None:
        if not clause.mentions:
            raise PlanError(f"no known item in '{clause.text}'")
        action = clause.action
        if action == "any":
            action = self._guess_action(clause)
        if action == "mine":
            self.mine(clause)
        elif action == "craft":
            self.craft(clause)
        else:
            self.smelt(clause)

    def _guess_action(self, clause: _Clause) -> Action:
        """For "get"/"make": raw materials are mined, an ingot whose ore is at hand is
        smelted, anything else with a recipe is crafted."""
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

    def _target(self, clause: _Clause) -> _Mention:
        into = [m for m in clause.mentions if m.prep == "into"]
        if into:
            return into[0]
        after = [m for m in clause.mentions if m.start > clause.verb_at]
        for m in after:
            if m.prep not in _INGREDIENT_PREPS and m.prep not in ("at", "in", "on"):
                return m
        if after:
            return after[0]
        # Only mentions before the verb: "use the crafting table to craft items" names what
        # the step uses, not what it makes.
        for m in reversed(clause.mentions):
            if m.prep not in _INGREDIENT_PREPS and m.prep not in ("at", "in", "on"):
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

    def mine(self, clause: _Clause) -> None:
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
        names = target.candidates
        if target in wanted and blocks:  # "mine iron ore to get iron": raw iron, no ingot
            names = tuple(n for n in names if any(self._drops(b, n) for b in blocks))
        count = target.count or self._source_count(clause, names, [target, *tools]) or 1
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
            if name in world.mob_items:
                self.inventory[name] += count
                return
        if problems:
            raise PlanError(problems[0])
        listed = " or ".join(target.candidates[:3])
        raise PlanError(f"{listed} cannot be mined or gathered" + self._how_hint(target))

    def _drops(self, source: _Mention, name: str) -> int:
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
        self, clause: _Clause, names: Sequence[str], skip: Sequence[_Mention]
    ) -> int | None:
        """How many of the target (`names`) the step gets when only its source has a count:
        "mine 3 stone to get cobblestone" (3), "kill 3 cows for leather" (3)."""
        for mention in clause.mentions:
            if mention.count and mention not in skip:
                for name in names:
                    if per := self._drops(mention, name):
                        return mention.count * per
        tokens = clause.text.split()  # mobs are no items: "cows", "spiders"
        for name in names:
            for mob in sorted(self.world.mob_sources.get(name, ())):
                *first, last = mob.split("_")
                n = len(first) + 1
                for k in range(len(tokens) - n + 1):
                    if (
                        tokens[k : k + n - 1] == first
                        and tokens[k + n - 1] in (last, last + "s")
                        and (count := _count_at(tokens, k, k + n))
                    ):
                        return count
        return None

    def _how_hint(self, target: _Mention) -> str:
        name = target.candidates[0]
        if name in {out for outs in self.world.smelt_out.values() for out, _ in outs}:
            return f" ({name} is smelted)"
        if self.world.data.crafted.get(name):
            return f" ({name} is crafted)"
        return ""

    # crafting

    def craft(self, clause: _Clause) -> None:
        """Craft each target: "craft a crafting table and 4 sticks" has two; "craft 3 planks
        and 2 sticks to make a pickaxe" has one, made from the others."""
        purpose = [
            m
            for m in clause.mentions
            if m.start > clause.verb_at
            and _after_purpose(clause.text.split(), m.start)
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
                and not (set(m.candidates) & _STATIONS and not set(m.candidates) & used)
                and not (m.start < clause.verb_at and set(m.candidates) & _STATIONS)
            ]
            self._craft_one(target, ingredients, alone=len(targets) == 1)

    def _craft_one(
        self, target: _Mention, ingredients: Sequence[_Mention], alone: bool = True
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

    def _batches(self, recipe: Recipe, target: _Mention, ingredients: Sequence[_Mention]) -> int:
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

    def _uses(self, recipe: Recipe, ingredients: Sequence[_Mention]) -> bool:
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
        self, recipe: Recipe, batches: int, ingredients: Sequence[_Mention]
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

    def smelt(self, clause: _Clause) -> None:
        world = self.world
        mentions = [m for m in clause.mentions if not set(m.candidates) & _STATIONS]
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
        count = (
            next((m.count for m in inputs if m.count), None)
            or next((m.count for m in wanted if m.count), None)
            or 1
        )
        choice = self._smelt_input(inputs, wanted, count)
        source, output, other = choice
        stations = ("furnace", other) if other else ("furnace",)
        if not any(self.have(s) for s in stations):
            raise PlanError(f"smelting {source} needs a furnace")
        if self.have(source) < count:
            raise PlanError(f"smelting needs {count} {source}, have {self.have(source)}")
        self.inventory[source] -= count
        self._burn(count, [c for m in fuel_named for c in m.candidates])
        self.inventory[output] += count
        self.inventory = +self.inventory

    def _smelt_input(
        self, inputs: Sequence[_Mention], wanted: Sequence[_Mention], count: int
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

    def _burn(self, count: int, named: Sequence[str]) -> None:
        """Consume fuel for `count` items: named fuel first, then coal, charcoal, wood."""
        order = [
            *named,
            "coal",
            "charcoal",
            "coal_block",
            *_PLANKS,
            *LOGS,
            *(f for f in FUELS if f not in named),
        ]
        if not any(self.have(f) for f in order if f in FUELS):
            raise PlanError("smelting needs fuel (coal, charcoal, planks or logs): no fuel")
        left = Fraction(count)
        plan: list[tuple[str, int]] = []
        stock = Counter(self.inventory)
        for fuel in dict.fromkeys(order):
            if fuel not in FUELS or left <= 0:
                continue
            rate = Fraction(FUELS[fuel])
            take = min(stock[fuel], math.ceil(left / rate))
            if take:
                plan.append((fuel, take))
                stock[fuel] -= take
                left -= rate * take
        if left > 0:
            raise PlanError(f"not enough fuel to smelt {count} items")
        for fuel, take in plan:
            self.inventory[fuel] -= take


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


def _is_note(step: str, clauses: Sequence[_Clause]) -> bool:
    words = _tokens(step)
    return not any(c.verb_at >= 0 for c in clauses) and (
        not any(c.mentions for c in clauses) or (bool(words) and words[0] in _NOTE_VERBS)
    )


def check_plan(goal: str, plan_text: str) -> PlanCheck:
    """Run the plan's steps from an empty inventory; executable if all run and the goal
    item is in the inventory at the end."""
    world = game_world()
    goal_id = resolve_item(goal)
    steps = parse_steps(plan_text)
    if not steps:
        return PlanCheck(False, None, "no STEP lines found in the plan")
    sim = _Sim(world)
    for number, step in enumerate(steps, start=1):
        clauses = _split_clauses(world, step)
        if _is_note(step, clauses):
            continue
        try:
            actions = [c for c in clauses if c.verb_at >= 0]
            if not actions:
                raise PlanError(f"no action verb (mine, craft, smelt ...) in '{step}'")
            for clause in actions:
                sim.run(clause)
        except PlanError as exc:
            return PlanCheck(False, number, f"STEP {number}: {exc}")
    if sim.have(goal_id):
        return PlanCheck(True, None, f"{goal_id} obtained")
    return PlanCheck(False, None, f"goal never reached: no {goal_id} after the last step")
