"""Wiki-like pages about Minecraft items, generated offline from `minecraft-data` (Java 1.20).

The RAT agent revises a small model's plans against these pages, so each page states the
facts a plan gets wrong most: the exact recipe and its counts, whether it needs a crafting
table, what must be smelted (the data has no furnace recipes: a hand-written table below),
and which pickaxe tier a block needs before it drops anything.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from rat_agent.errors import RetrievalError
from rat_minecraft import quotes
from rat_minecraft.quotes import FARMING, MINING

# Words every Minecraft question has ("how do I obtain X in Minecraft", "make", "get"),
# dropped from the corpus's lexical search on top of the generic function words.
QUESTION_WORDS = frozenset({"get", "getting", "make", "minecraft", "obtain", "use", "using"})

MINECRAFT_VERSION = "1.20"
# Bump when the page wording changes, so cached indexes are rebuilt.
CORPUS_VERSION = "7"


@dataclass(frozen=True)
class Page:
    """One item's page: `id` is the Minecraft id, also the document id in the index."""

    id: str
    title: str
    text: str


# --- hand-written facts the data lacks -----------------------------------------------------

# The overworld's trees; bamboo and the nether's stems make planks too, but no logs.
TREES = ("oak", "spruce", "birch", "jungle", "acacia", "cherry", "dark_oak", "mangrove")
LOGS = tuple(
    f"{prefix}{wood}_{kind}"
    for wood in TREES
    for prefix in ("", "stripped_")
    for kind in ("log", "wood")
)
COLORS = (
    "white",
    "orange",
    "magenta",
    "light_blue",
    "yellow",
    "lime",
    "pink",
    "gray",
    "light_gray",
    "cyan",
    "purple",
    "blue",
    "brown",
    "green",
    "red",
    "black",
)
IRON_GEAR = (
    "iron_pickaxe",
    "iron_shovel",
    "iron_axe",
    "iron_hoe",
    "iron_sword",
    "iron_helmet",
    "iron_chestplate",
    "iron_leggings",
    "iron_boots",
    "iron_horse_armor",
    "chainmail_helmet",
    "chainmail_chestplate",
    "chainmail_leggings",
    "chainmail_boots",
)
_GOLD_GEAR = (
    "golden_pickaxe",
    "golden_shovel",
    "golden_axe",
    "golden_hoe",
    "golden_sword",
    "golden_helmet",
    "golden_chestplate",
    "golden_leggings",
    "golden_boots",
    "golden_horse_armor",
)

# (inputs, output, appliance that also works besides the furnace)
SMELTING: tuple[tuple[tuple[str, ...], str, str | None], ...] = (
    (("raw_iron", "iron_ore", "deepslate_iron_ore"), "iron_ingot", "blast_furnace"),
    (
        ("raw_gold", "gold_ore", "deepslate_gold_ore", "nether_gold_ore"),
        "gold_ingot",
        "blast_furnace",
    ),
    (("raw_copper", "copper_ore", "deepslate_copper_ore"), "copper_ingot", "blast_furnace"),
    (("ancient_debris",), "netherite_scrap", "blast_furnace"),
    (("coal_ore", "deepslate_coal_ore"), "coal", "blast_furnace"),
    (("diamond_ore", "deepslate_diamond_ore"), "diamond", "blast_furnace"),
    (("emerald_ore", "deepslate_emerald_ore"), "emerald", "blast_furnace"),
    (("lapis_ore", "deepslate_lapis_ore"), "lapis_lazuli", "blast_furnace"),
    (("redstone_ore", "deepslate_redstone_ore"), "redstone", "blast_furnace"),
    (("nether_quartz_ore",), "quartz", "blast_furnace"),
    (IRON_GEAR, "iron_nugget", "blast_furnace"),
    (_GOLD_GEAR, "gold_nugget", "blast_furnace"),
    (("sand", "red_sand"), "glass", None),
    (("cobblestone",), "stone", None),
    (("stone",), "smooth_stone", None),
    (("cobbled_deepslate",), "deepslate", None),
    (("sandstone",), "smooth_sandstone", None),
    (("red_sandstone",), "smooth_red_sandstone", None),
    (("quartz_block",), "smooth_quartz", None),
    (("basalt",), "smooth_basalt", None),
    (("stone_bricks",), "cracked_stone_bricks", None),
    (("nether_bricks",), "cracked_nether_bricks", None),
    (("deepslate_bricks",), "cracked_deepslate_bricks", None),
    (("deepslate_tiles",), "cracked_deepslate_tiles", None),
    (("polished_blackstone_bricks",), "cracked_polished_blackstone_bricks", None),
    (("clay_ball",), "brick", None),
    (("clay",), "terracotta", None),
    (("netherrack",), "nether_brick", None),
    (("wet_sponge",), "sponge", None),
    (("cactus",), "green_dye", None),
    (("sea_pickle",), "lime_dye", None),
    (("chorus_fruit",), "popped_chorus_fruit", None),
    (LOGS, "charcoal", None),
    (("kelp",), "dried_kelp", "smoker"),
    (("potato",), "baked_potato", "smoker"),
    (("beef",), "cooked_beef", "smoker"),
    (("porkchop",), "cooked_porkchop", "smoker"),
    (("chicken",), "cooked_chicken", "smoker"),
    (("mutton",), "cooked_mutton", "smoker"),
    (("rabbit",), "cooked_rabbit", "smoker"),
    (("cod",), "cooked_cod", "smoker"),
    (("salmon",), "cooked_salmon", "smoker"),
    *(((f"{color}_terracotta",), f"{color}_glazed_terracotta", None) for color in COLORS),
)

# Items smelted per fuel item in a furnace (10 s per item).
FUELS: Mapping[str, str] = {
    "coal": "8",
    "charcoal": "8",
    "coal_block": "80",
    "lava_bucket": "100",
    "blaze_rod": "12",
    "dried_kelp_block": "20",
    "stick": "0.5",
    "bamboo": "0.25",
    **{log: "1.5" for log in LOGS},
    **{
        f"{wood}_planks": "1.5"
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
        )
    },
}

# Worded as a fact, not an instruction: told to "put the fuel in the bottom slot", a small
# model wrote "Place the raw iron in the furnace's bottom slot" as a smelting step.
_FUEL_HINT = (
    "Fuel: a Furnace burns Planks or Logs (1.5 items each) or Coal or Charcoal (8 items "
    "each); each item takes 10 seconds."
)

# What the loot data gets wrong: it ignores how many items an ore drops.
ORE_DROP_COUNTS: Mapping[str, str] = {
    "coal": "1",
    "diamond": "1",
    "emerald": "1",
    "raw_iron": "1",
    "raw_gold": "1",
    "raw_copper": "2-5",
    "lapis_lazuli": "4-9",
    "redstone": "4-5",
    "quartz": "1",
    "gold_nugget": "2-6",
    "clay_ball": "4",
    "glowstone_dust": "2-4",
    "melon_slice": "3-7",
}

_EXTRA_OBTAIN: Mapping[str, str] = {
    "water_bucket": "Use an empty Bucket on a water source block.",
    "lava_bucket": "Use an empty Bucket on a lava source block.",
    "milk_bucket": "Use an empty Bucket on a Cow, Mooshroom or Goat.",
    "powder_snow_bucket": "Use an empty Bucket on Powder Snow.",
    "obsidian": "Forms where flowing water meets a lava source block.",
    "honey_bottle": "Use a Glass Bottle on a full Beehive or Bee Nest.",
    "mud": "Use a Water Bottle on Dirt.",
    **{
        f"netherite_{gear}": (
            f"Smithing: at a Smithing Table, combine a Diamond {gear.title()} with a Netherite "
            "Ingot and a Netherite Upgrade Smithing Template."
        )
        for gear in (
            "pickaxe",
            "axe",
            "shovel",
            "hoe",
            "sword",
            "helmet",
            "chestplate",
            "leggings",
            "boots",
        )
    },
    "egg": "Chickens lay an Egg every 5 to 10 minutes; pick it up from the ground.",
    "honeycomb": "Use Shears on a full Beehive or Bee Nest.",
    "scute": "A baby Turtle drops a Scute when it grows up.",
    "elytra": "Found in item frames on End Ships in End Cities, after defeating the Ender Dragon.",
    "trident": "Sometimes dropped by a Drowned that holds one.",
    "nautilus_shell": "Sometimes dropped by a Drowned; also caught by fishing.",
    "oak_log": "Trees are the first resource: punch a tree trunk by hand to get logs.",
}

SOURCE_PREFIX = "minecraft-corpus:"  # a corpus page's source: this, then its id
# Tool materials, worst first.
TIERS = ("wooden", "stone", "iron", "diamond", "netherite")

# Blocks a recipe or a furnace makes that also occur in the world, ready to mine. Any other
# made block (a chest, a torch, planks) exists only once someone made and placed it: mining
# it is not a way to obtain it from an empty inventory.
NATURAL_MADE_BLOCKS = frozenset(
    {
        "stone",
        "deepslate",
        "granite",
        "diorite",
        "andesite",
        "clay",
        "snow_block",
        "packed_ice",
        "blue_ice",
        "glowstone",
        "melon",
        "sandstone",
        "red_sandstone",
        "terracotta",
        "coarse_dirt",
        "mossy_cobblestone",
        "magma_block",
        "bone_block",
        "dripstone_block",
        "amethyst_block",
        "prismarine",
        "smooth_basalt",
        *(
            f"{color}_terracotta"
            for color in ("orange", "yellow", "brown", "red", "white", "light_gray")
        ),
    }
)

# Items every plan needs: listed first among an ingredient's uses.
_ESSENTIAL_USES = (
    "crafting_table",
    "stick",
    "oak_planks",
    "torch",
    "furnace",
    "chest",
    "wooden_pickaxe",
    "stone_pickaxe",
    "iron_pickaxe",
    "diamond_pickaxe",
    "wooden_axe",
    "stone_axe",
    "iron_axe",
    "diamond_axe",
    "wooden_sword",
    "stone_sword",
    "iron_sword",
    "diamond_sword",
    "wooden_shovel",
    "stone_shovel",
    "iron_shovel",
    "diamond_shovel",
    "bucket",
    "shears",
    "iron_block",
    "gold_block",
    "diamond_block",
    "bread",
    "bow",
    "arrow",
    "bed",
    "white_bed",
    "ladder",
    "book",
    "bookshelf",
    "enchanting_table",
    "anvil",
    "compass",
    "clock",
    "rail",
    "piston",
    "redstone_torch",
    "blast_furnace",
    "smoker",
    "iron_helmet",
    "iron_chestplate",
    "iron_leggings",
    "iron_boots",
    "diamond_helmet",
    "diamond_chestplate",
    "diamond_leggings",
    "diamond_boots",
    "flint_and_steel",
    "fishing_rod",
    "paper",
    "glass",
    "glass_bottle",
    "oak_door",
    "oak_boat",
    "minecart",
    "cake",
    "golden_apple",
    "lantern",
    "campfire",
    "smithing_table",
    "stonecutter",
    "beacon",
    "netherite_ingot",
)


# --- the data ---------------------------------------------------------------------------------


@dataclass
class Recipe:
    """Crafting recipes that differ only in interchangeable ingredients, merged."""

    count: int
    needs_table: bool
    grid: str
    alternatives: list[list[int]] = field(default_factory=list)
    amounts: list[int] = field(default_factory=list)


class GameData:
    """Indexes over minecraft-data the page writer looks things up in."""

    def __init__(self) -> None:
        try:
            import minecraft_data
        except ImportError as exc:
            raise RetrievalError("package minecraft-data-latest is not installed") from exc
        data: Any = minecraft_data(MINECRAFT_VERSION)
        self.items: dict[int, dict[str, Any]] = data.items
        self.items_name: dict[str, dict[str, Any]] = data.items_name
        self.blocks_name: dict[str, dict[str, Any]] = data.blocks_name
        self.foods: dict[str, dict[str, Any]] = data.foods_name
        self.recipes: dict[str, list[dict[str, Any]]] = data.recipes
        self.block_loot: dict[str, list[dict[str, Any]]] = data.blockLoot
        self.entity_loot: dict[str, list[dict[str, Any]]] = data.entityLoot
        self.entity_names = {e["name"]: e["displayName"] for e in data.entities_list}
        duplicated = _duplicates(item["displayName"] for item in data.items_list)
        self.titles: dict[str, str] = {
            item["name"]: (
                item["name"].replace("_", " ").title()
                if item["displayName"] in duplicated
                else item["displayName"]
            )
            for item in data.items_list
        }
        self.crafted = {
            self.items[int(result)]["name"]: self._merge(recipes)
            for result, recipes in self.recipes.items()
            if int(result) in self.items
        }
        self.uses: dict[str, set[str]] = defaultdict(set)
        for result, recipes in self.recipes.items():
            for recipe in recipes:
                for ingredient in _cells(recipe):
                    self.uses[self.items[ingredient]["name"]].add(self.items[int(result)]["name"])
        self.smelted_from: dict[str, list[tuple[tuple[str, ...], str | None]]] = defaultdict(list)
        self.smelts_into: dict[str, list[str]] = defaultdict(list)
        for inputs, output, other in SMELTING:
            present = tuple(name for name in inputs if name in self.items_name)
            if output in self.items_name and present:
                self.smelted_from[output].append((present, other))
                for name in present:
                    self.smelts_into[name].append(output)
        # item -> [(block, self-drop needs silk touch/shears, drop is conditional)]
        self.dropped_by: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for block, drops in self.block_loot.items():
            if block not in self.blocks_name:
                continue
            others = any(
                d["item"] != block and not d.get("noSilkTouch") and not d.get("blockAge")
                for d in drops
            )
            shears_block = others and any(
                d["item"] == block
                and d["dropChance"] < 1
                and not d.get("silkTouch")
                and not d.get("blockAge")
                for d in drops
            )
            by_item: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for drop in drops:
                if drop["item"] in self.items_name:
                    by_item[drop["item"]].append(drop)
            for item, entries in by_item.items():
                # The data's chances are unreliable (0.5 for each side of a silk-touch
                # split, 1 for a leaf's 2% stick), so only their kind is kept.
                if all(d.get("silkTouch") for d in entries):
                    how = "silk"
                elif any(d.get("blockAge") for d in entries):
                    how = "crop"
                elif any(d.get("noSilkTouch") for d in entries):
                    # Gravel: without silk touch it drops gravel *or* flint.
                    rivals = {d["item"] for d in drops if d.get("noSilkTouch")}
                    how = "chance" if len(rivals) > 1 else "always"
                elif item == block and others and entries[0]["dropChance"] < 1:
                    how = "shears"
                elif shears_block or entries[0]["dropChance"] < 1:
                    how = "chance"
                else:
                    how = "always"
                self.dropped_by[item].append((block, how))
        self.mob_drops: dict[str, list[tuple[str, bool, bool]]] = defaultdict(list)
        for entity, drops in self.entity_loot.items():
            for drop in drops:
                if drop["item"] in self.items_name:
                    self.mob_drops[drop["item"]].append(
                        (entity, drop["dropChance"] >= 1, bool(drop.get("playerKill")))
                    )
        # block -> lowest pickaxe (or other tool) tier that makes it drop anything
        self.tier_needed: dict[str, str] = {}
        for block in data.blocks_list:
            tools = [self.items[int(i)]["name"] for i in block.get("harvestTools") or {}]
            if tools:
                self.tier_needed[block["name"]] = _lowest_tool(tools)

    def _merge(self, recipes: list[dict[str, Any]]) -> list[Recipe]:
        merged: dict[tuple[Any, ...], Recipe] = {}
        for recipe in recipes:
            cells = _cells(recipe)
            if not cells:
                continue
            order: list[int] = []
            for cell in cells:
                if cell not in order:
                    order.append(cell)
            if "inShape" in recipe:
                shape = recipe["inShape"]
                height, width = len(shape), max(len(row) for row in shape)
                pattern = tuple(
                    tuple(None if c is None else order.index(c) for c in row) for row in shape
                )
                needs_table = height > 2 or width > 2
                grid = f"{width}x{height} shape"
            else:
                pattern = (tuple(order.index(c) for c in cells),)
                needs_table = len(cells) > 4
                grid = "shapeless"
            count = int(recipe["result"]["count"])
            key = (grid, pattern, count)
            entry = merged.get(key)
            if entry is None:
                entry = merged[key] = Recipe(count, needs_table, grid)
                entry.alternatives = [[] for _ in order]
                entry.amounts = [cells.count(c) for c in order]
            for slot, item in enumerate(order):
                if item not in entry.alternatives[slot]:
                    entry.alternatives[slot].append(item)
        return list(merged.values())

    def natural(self, block: str) -> bool:
        """Whether the block occurs in the world, so mining is a way to obtain it."""
        made = bool(self.crafted.get(block)) or block in self.smelted_from
        return not made or block in NATURAL_MADE_BLOCKS

    def title(self, name: str) -> str:
        return self.titles.get(name) or name.replace("_", " ").title()


def _cells(recipe: Mapping[str, Any]) -> list[int]:
    if "inShape" in recipe:
        return [c for row in recipe["inShape"] for c in row if c is not None]
    return [int(c) for c in recipe.get("ingredients", []) if c is not None]


def _duplicates(values: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    twice: set[str] = set()
    for value in values:
        (twice if value in seen else seen).add(value)
    return twice


def _lowest_tool(tools: Sequence[str]) -> str:
    """'iron_pickaxe' for diamond ore; golden tools count as wooden, so they are skipped."""
    kinds = {tool.rsplit("_", 1)[-1] for tool in tools}
    if kinds == {"pickaxe"}:
        for tier in TIERS:
            if f"{tier}_pickaxe" in tools:
                return f"{tier}_pickaxe"
    if "shears" in tools:
        return "shears"
    kind = sorted(kinds)[0]
    for tier in TIERS:
        if f"{tier}_{kind}" in tools:
            return f"{tier}_{kind}"
    return sorted(tools)[0]


# --- page writing -----------------------------------------------------------------------------


def _join(words: Sequence[str], last: str = "or") -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _tool_phrase(data: GameData, tool: str) -> str:
    """The least tool that works, by name, better ones in parentheses: a plan that names the
    tool to make ("a Wooden Pickaxe") is one step from making it; "any pickaxe" is not."""
    tier, _, kind = tool.rpartition("_")
    if tier in TIERS and kind in ("pickaxe", "axe", "shovel", "hoe", "sword"):
        return f"{_a(data.title(tool))} (or better)"
    if tool == "shears":
        return "Shears (or a sword)"
    return _a(data.title(tool))


def _ingredient(data: GameData, ids: Sequence[int]) -> str:
    """One ingredient slot: its first option, others in parentheses ("Oak Log (or Oak
    Wood ...)"), so a reader takes the first and the count reads as one amount."""
    names = [data.title(data.items[i]["name"]) for i in ids]
    if len(names) == 1:
        return names[0]
    last_words = {name.rsplit(" ", 1)[-1] for name in names}
    if len(names) > 3 and len(last_words) == 1:
        kind = last_words.pop()
        first = next((n for n in names if n.startswith("Oak ")), names[0])
        return f"{first} (or {kind} of any other kind)"
    if len(names) > 4:
        return f"{names[0]} (or one of {len(names) - 1} other kinds)"
    return f"{names[0]} (or {_join(names[1:])})"


def _is_unpacking(data: GameData, recipe: Recipe) -> bool:
    """'Block of Diamond -> 9 Diamond': true but never how a plan should get the item."""
    if recipe.count != 9 or recipe.amounts != [1]:
        return False
    return all(data.items[i]["name"].endswith("_block") for i in recipe.alternatives[0])


def _crafting_lines(data: GameData, name: str, unpacking: bool) -> list[str]:
    lines = []
    recipes = [r for r in data.crafted.get(name, []) if _is_unpacking(data, r) == unpacking]
    for recipe in recipes[:3]:
        parts = [
            f"{amount} {_ingredient(data, ids)}"
            for amount, ids in zip(recipe.amounts, recipe.alternatives, strict=True)
        ]
        lines.append(
            quotes.crafting(parts, recipe.count, data.title(name), recipe.grid, recipe.needs_table)
        )
    return lines


def _smelting_lines(data: GameData, name: str, secondary: bool) -> list[str]:
    """Smelting a silk-touched ore or recycling gear works but is rarely how one gets it.

    Worded as the crafting lines are, counts and fuel included ("1 Raw Iron + 1 Oak Planks
    as fuel gives 1 Iron Ingot"): a plan that copies it uses up planks for fuel, and counts
    them. One Planks smelts 1.5 items, so this overstates the fuel a little, never under.
    The planks are named as the crafting lines name them: told "Planks (any kind)", the
    model asked for "1 plank", and the search for it found Bamboo Planks."""
    lines = []
    recycled = set(IRON_GEAR + _GOLD_GEAR)
    for inputs, other in data.smelted_from.get(name, []):
        if all(i.endswith("_ore") or i in recycled for i in inputs) != secondary:
            continue
        titles = [data.title(i) for i in inputs]
        source = (
            titles[0]
            if len(titles) == 1
            else (
                f"{titles[0]} (or {_join(titles[1:4])}{', or similar' if len(titles) > 4 else ''})"
            )
        )
        lines.append(
            quotes.smelting(source, data.title(name), _a(data.title(other)) if other else "")
        )
    return lines


def _mining_lines(data: GameData, name: str) -> list[str]:
    # (how, tool) -> blocks: blocks that drop the item the same way share one line.
    groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for block, how in data.dropped_by.get(name, []):
        if data.natural(block):  # a made block (a campfire) is no source to mine
            groups[(how, data.tier_needed.get(block))].append(block)
    rank = {"always": 0, "crop": 0, "chance": 1, "shears": 2, "silk": 3}
    ordered = sorted(
        groups.items(), key=lambda g: (name not in g[1], rank[g[0][0]], min(map(len, g[1])))
    )
    lines = []
    for (how, tool), blocks in ordered[:3]:
        blocks = sorted(blocks, key=lambda b: (b != name, len(b)))
        shown = [data.title(b) for b in blocks[:4]]
        titles = _join(shown) + (" or similar blocks" if len(blocks) > 4 else "")
        using = f" with {_tool_phrase(data, tool)}" if tool else ""
        nothing = " By hand or with a weaker tool it drops nothing." if tool else ""
        if how == "silk":
            tool_kind = "tool"
            if tool:
                tier, _, tool_kind = tool.rpartition("_")
                if tier in TIERS[1:]:
                    tool_kind += f" ({tier} or better)"
            silk = f"only a Silk Touch {tool_kind} makes {titles} drop itself."
            drops = _natural_drops(data, name) if blocks == [name] else []
            if drops:  # what mining it is for comes first: an ore's page says how to mine it
                lines.append(
                    f"{MINING}: mine {titles}{using}; it drops {_join(drops)}, not itself: {silk}"
                )
            else:
                lines.append(f"{MINING}: {silk}")
        elif how == "shears":
            lines.append(f"{MINING}: break {titles} with Shears or a Silk Touch tool.")
        elif how == "crop":
            lines.append(
                f"{FARMING}: harvest a fully grown {titles} crop; it drops {data.title(name)}."
            )
        elif blocks == [name]:
            hand = using or " by hand (no tool needed)"
            lines.append(
                f"{MINING}: mine a placed or natural {titles}{hand}; it drops itself.{nothing}"
            )
        else:
            ore_like = all(
                b.endswith("_ore") or b in ("clay", "glowstone", "melon") for b in blocks
            )
            count = ORE_DROP_COUNTS.get(name, "") if ore_like else ""
            verb = "sometimes drops" if how == "chance" else "drops"
            line = f"{MINING}: mine {titles}{using}; it {verb} {count} {data.title(name)}.{nothing}"
            lines.append(line.replace("  ", " "))
    return lines


def _natural_drops(data: GameData, block: str) -> list[str]:
    """What a block drops when mined without Silk Touch (Iron Ore: Raw Iron)."""
    return sorted(
        data.title(item)
        for item, sources in data.dropped_by.items()
        if item != block and (block, "always") in sources
    )


def _mob_lines(data: GameData, name: str) -> list[str]:
    drops = data.mob_drops.get(name, [])
    drops = sorted(drops, key=lambda d: (not d[1], d[2], d[0]))[:4]
    if not drops:
        return []
    parts = []
    for entity, always, player in drops:
        how = "" if always else " (rarely)" if player else " (sometimes)"
        parts.append(f"{data.entity_names.get(entity, entity)}{how}")
    return [f"Mob drop: dropped by {_join(parts)} when killed."]


def _uses_lines(data: GameData, name: str) -> list[str]:
    lines = []

    uses = data.uses.get(name, set())
    if uses:
        priority = {item: i for i, item in enumerate(_ESSENTIAL_USES)}
        ranked = sorted(
            uses, key=lambda u: (priority.get(u, len(priority)), -len(data.uses.get(u, ())), u)
        )
        shown = [data.title(u) for u in ranked[:6]]
        more = f" and {len(uses) - 6} more" if len(uses) > 6 else ""
        lines.append(f"Ingredient for {_join(shown, 'and')}{more}.")
    outputs = data.smelts_into.get(name)
    if outputs:
        lines.append(f"Smelts into {_join([data.title(o) for o in outputs])} in a Furnace.")
    if name in FUELS:
        lines.append(f"Furnace fuel: one {data.title(name)} smelts {FUELS[name]} items.")
    tier, _, kind = name.rpartition("_")
    if kind == "pickaxe" and tier in TIERS:
        needs_this = sorted(b for b, tool in data.tier_needed.items() if tool == name)
        if needs_this:
            shown = [
                data.title(b)
                for b in needs_this
                if "ore" in b or "obsidian" in b or b == "ancient_debris"
            ] or [data.title(b) for b in needs_this]
            lines.append(
                f"It is the lowest pickaxe tier that can mine {_join(shown[:6], 'and')}"
                f"{' and more' if len(shown) > 6 else ''}."
            )
    return lines


def _notes(data: GameData, name: str) -> list[str]:
    """Facts about the item itself; no boilerplate, which would only crowd out the lines a
    plan needs when passages are picked by similarity to a step."""
    item = data.items_name[name]
    facts = []
    if item.get("maxDurability"):
        facts.append(f"It has {item['maxDurability']} durability and does not stack.")
    elif item.get("stackSize", 64) != 64:
        facts.append(f"It stacks up to {item['stackSize']}.")
    food = data.foods.get(name)
    if food:
        points = food["foodPoints"]
        facts.append(f"Eating it restores {points:g} hunger point{'' if points == 1 else 's'}.")
    if data.smelted_from.get(name):  # its own line, so the recipe line stays short
        facts.append(_FUEL_HINT)
    tool = data.tier_needed.get(name)
    if tool and data.natural(name):
        facts.append(
            f"Breaking the placed block needs {_tool_phrase(data, tool)}, "
            "otherwise it drops nothing."
        )
    return facts


def _page(data: GameData, name: str) -> Page | None:
    title = data.title(name)
    obtain = [
        *_smelting_lines(data, name, secondary=False),
        *_crafting_lines(data, name, unpacking=False),
        *_mining_lines(data, name),
        *_mob_lines(data, name),
        *_crafting_lines(data, name, unpacking=True),
        *_smelting_lines(data, name, secondary=True),
    ]
    if name in _EXTRA_OBTAIN:
        obtain.insert(0, _EXTRA_OBTAIN[name])
    if name.startswith("stripped_") and name.removeprefix("stripped_") in data.items_name:
        plain = data.title(name.removeprefix("stripped_"))
        obtain.insert(0, f"Stripping: use an Axe on {plain} (right-click) to strip it.")
    if not obtain:
        return None
    lines = [title, "", f"How to obtain {title}:"]
    lines += [f"- {line}" for line in obtain]
    uses = _uses_lines(data, name)
    if uses:
        lines += ["", "Uses:", *[f"- {line}" for line in uses]]
    notes = _notes(data, name)
    if notes:
        lines += ["", f"About {title}:", *[f"- {line}" for line in notes]]
    return Page(id=name, title=title, text="\n".join(lines))


@cache
def build_pages() -> tuple[Page, ...]:
    """Every obtainable item's page, in item id order; cheap (<1 s) and deterministic."""
    data = GameData()
    pages = []
    for item in sorted(data.items.values(), key=lambda i: i["id"]):
        page = _page(data, item["name"])
        if page is not None:
            pages.append(page)
    if not pages:
        raise RetrievalError("the Minecraft corpus came out empty")
    return tuple(pages)


def corpus_fingerprint(pages: Sequence[Page]) -> str:
    """Hash of everything that ends up in the index, so a changed page forces a rebuild."""
    digest = hashlib.sha256(CORPUS_VERSION.encode())
    for page in pages:
        for part in (page.id, page.title, page.text):
            digest.update(part.encode())
            digest.update(b"\0")
    return digest.hexdigest()
