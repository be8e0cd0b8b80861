"""How a plan's words are read: steps, the actions their verbs name, and the items they
mention with counts and roles ("craft 4 planks from 1 oak log": craft; 4 planks; 1 oak log,
after "from"). The simulator (simulator.py) decides what the actions do to an inventory.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rat_minecraft.corpus import LOGS, TREES, GameData
from rat_minecraft.words import number

Action = Literal["mine", "craft", "smelt", "any"]

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
# Generic verbs that say a thing is made, not found: "make sticks" is no mining.
MAKE_VERBS = frozenset(
    ["make", "making", "create", "creating", "produce", "producing", "build", "building"]
)
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
INGREDIENT_PREPS = frozenset({"from", "with", "using", "use", "out", "by"})
# Where things are made: named in a step, one is where it happens ("in a crafting table").
STATIONS = frozenset(
    {
        "crafting_table",
        "furnace",
        "blast_furnace",
        "smoker",
        "stonecutter",
        "anvil",
        "smithing_table",
        "loom",
        "cartography_table",
        "grindstone",
        "brewing_stand",
        "fletching_table",
        "campfire",
    }
)
# Note verbs whose step needs what it names in hand ("place the crafting table").
HOLD_VERBS = frozenset({"place", "put", "equip", "hold", "select", "open"})
_EXCLUDED = frozenset({"air", "light", "target", "lead", "barrier", "jigsaw"})
PLANKS = tuple(f"{wood}_planks" for wood in (*TREES, "bamboo", "crimson", "warped"))
_NATURAL_LOGS = tuple(name for name in LOGS if not name.startswith("stripped_"))
# Shorthand a plan uses for a group of items; the first is the default when obtaining.
_GROUPS: dict[str, tuple[str, ...]] = {
    "planks": PLANKS,
    "plank": PLANKS,
    "wooden planks": PLANKS,
    "wood planks": PLANKS,
    "wooden plank": PLANKS,
    "wood plank": PLANKS,
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


@dataclass(frozen=True)
class Mention:
    candidates: tuple[str, ...]
    start: int
    count: int | None
    prep: str | None


@dataclass
class Clause:
    action: Action
    verb_at: int
    mentions: list[Mention]
    text: str


class Words:
    """How a plan names things: every item's names and the groups plans use, with the
    verbs read as actions."""

    def __init__(self, data: GameData) -> None:
        self.data = data
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
                self.aliases.setdefault(clean(key), (name,))
        for key, group in _GROUPS.items():
            self.aliases[clean(key)] = tuple(n for n in group if n in items)
        # "1 oak plank": a plural name read in the singular (its last word alone may be
        # known, "plank", which would otherwise win and lose the "oak" and the count)
        for key, names in list(self.aliases.items()):
            if " " in key and key.endswith("s") and not key.endswith("ss"):
                self.aliases.setdefault(key[:-1], names)
        for log in _NATURAL_LOGS:  # "3 birch trees" are 3 birch logs, not 3 of any log
            if log.endswith("_log"):
                self.aliases[clean(log.replace("_log", " tree"))] = (log,)
        self.vocab = {word for key in self.aliases for word in key.split()}
        self.pairs = {" ".join(key.split()[:2]) for key in self.aliases if " " in key}

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
        words = [self.normalize(w) for w in clean(text).split()]
        return self.aliases.get(" ".join(words))


def clean(text: str) -> str:
    text = text.lower().replace("_", " ").replace("-", " ").replace("\u00d7", "x")
    text = re.sub(r"\b\d+\s*x\s*\d+\b", " ", text)  # "3x3 grid" is no count
    return " ".join(re.findall(r"[a-z0-9']+|[,;.():+=]", text))


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


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for token in clean(text).split():
        if m := re.fullmatch(r"(\d+)x", token):
            out.append(m.group(1))
        elif m := re.fullmatch(r"x(\d+)", token):
            out += ["x", m.group(1)]
        else:
            out.append(token)
    return out


def find_mentions(world: Words, tokens: Sequence[str]) -> list[Mention]:
    """Greedy longest match of item names; counts come before ("4 planks", "4x planks")
    or right after in "x4"/"(4)" form."""
    found: list[Mention] = []
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
        found.append(Mention(candidates, i, count_at(tokens, i, i + n), prep))
        i += n
    return found


def count_at(tokens: Sequence[str], i: int, end: int) -> int | None:
    """The count of the name at tokens[i:end]: before it ("4 planks", "4 pieces of iron ore")
    or right after it ("planks x4", "planks (4)")."""
    j = i - 1
    while j >= 0 and tokens[j] in _FILLER:
        j -= 1
    if j >= 0 and (num := number(tokens[j])) is not None:
        return num
    after = tokens[end : end + 3]
    if len(after) >= 2 and after[0] in ("x", "(") and after[1].isdigit():
        return int(after[1])
    return None


def split_clauses(world: Words, step: str) -> list[Clause]:
    """One clause per action: "chop 2 logs and craft 8 planks" is two."""
    clauses: list[Clause] = []
    for sentence_no, sentence in enumerate(re.split(r"(?<=[a-z0-9)])\.\s+", step)):
        tokens = tokenize(sentence)
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
            found = find_mentions(world, part)
            verb_at, action = find_verb(world, part)
            if sentence_no > 0 and (action is None or not found):
                continue  # later sentences are often explanations
            clauses.append(Clause(action or "any", verb_at, found, " ".join(part)))
    return clauses


def find_verb(world: Words, tokens: Sequence[str]) -> tuple[int, Action | None]:
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


def after_purpose(tokens: Sequence[str], start: int) -> bool:
    """Whether the mention at `start` follows "to make/get/create ..." (counts and articles
    between are skipped): what the step is done to obtain."""
    k = start - 1
    while k >= 0 and (number(tokens[k]) is not None or tokens[k] in _FILLER or tokens[k] == "the"):
        k -= 1
    return k >= 1 and tokens[k] in _PURPOSE_VERBS and tokens[k - 1] == "to"


def is_note(step: str, clauses: Sequence[Clause]) -> bool:
    words = tokenize(step)
    return not any(c.verb_at >= 0 for c in clauses) and (
        not any(c.mentions for c in clauses) or (bool(words) and words[0] in _NOTE_VERBS)
    )
