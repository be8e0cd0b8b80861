"""What a step or a quoted line names: things, their amounts, a step's product, a recipe's
inputs, and whether two names mean the same thing.

Read by rule, with no knowledge of any domain and no model call: asked, a small model
lists a recipe's product among its inputs, or "None". Names match when the words of one
contain the other's and their last words agree ("planks" and "oak planks", not "clay" and
"clay ball"), singular or plural. Plan repair (repair.py) and the rules that put a revision
right against its quote (mending.py) are built on these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rat_minecraft.words import NUMBER_WORDS

# Words that say nothing about which thing is meant.
_FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "any",
        "kind",
        "kinds",
        "some",
        "more",
        "or",
        "better",
        "and",
        "x",
        "piece",
        "pieces",
        "unit",
        "units",
        "total",
        "each",
        "your",
        "enough",
        "at",
        "least",
        "new",
        "extra",
        "another",
        "other",
        "similar",
        "such",
        "as",
    }
)


_WORD = re.compile(r"[a-z0-9]+")


_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")  # words and punctuation


ASIDE = re.compile(r"\s*\([^)]*\)")  # "(or a Blast Furnace, faster)", "(any kind)"


# A leading count or article: "8 ", "an ", "the ".
LEADING = re.compile(r"^\s*(?:\d+|the|some|" + "|".join(NUMBER_WORDS) + r")\s+", re.I)


@dataclass(frozen=True)
class Item:
    """A named thing and how many of it (None: uncounted, e.g. a tool or a place), and
    the last word of its name, which says what kind of thing it is ("clay ball" is a ball,
    "clay" is not)."""

    words: frozenset[str]
    count: int | None
    head: str = ""


def _stem(word: str) -> str:
    for cut, add in (
        ("ies", "y"),
        ("ves", "f"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("axes", "axe"),
        ("xes", "x"),
        ("ses", "s"),
        ("s", ""),
    ):
        if word.endswith(cut) and len(word) - len(cut) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(cut)] + add
    return word


def item(text: str) -> Item:
    """ "8 Planks of any kind (such as Oak Planks)" -> planks, 8."""
    text = ASIDE.sub(" ", text.lower())
    count: int | None = None
    words: set[str] = set()
    head = ""
    for word in _WORD.findall(text):
        if word.isdigit() or (word in NUMBER_WORDS and not words):
            if count is None and not words:
                count = int(word) if word.isdigit() else NUMBER_WORDS[word]
            continue
        if word not in _FILLER:
            head = _stem(word)
            words.add(head)
    if count == 1 and text.strip().startswith(("a ", "an ")):
        count = None  # "a crafting table": a thing to have, not an amount to use up
    return Item(frozenset(words), count, head)


def overlaps(a: Item, b: Item) -> bool:
    return bool(a.words and b.words) and (a.words <= b.words or b.words <= a.words)


def same_thing(a: Item, b: Item) -> bool:
    """One name's words contain the other's and both name the same kind of thing: "planks"
    and "oak planks", not "clay" and "clay ball" nor "bone" and "bone meal" (a step making
    8 clay from 32 clay balls needs the balls; it is no loop)."""
    return overlaps(a, b) and (a.words == b.words or a.head == b.head)


# The step template puts what a step uses after "from" and its tool or place after these
# ("... from 3 cobblestone and 2 sticks in a crafting table", "Mine 1 iron ore with a stone
# pickaxe"): a need named there is kept, whatever count the model gave it.
TOOL_MARK = re.compile(r"\b(?:with|in|at|using|inside|on)\b")


# Where the tool's name ends: a clause, or what the step goes on to say it does with it.
_CLAUSE_END = re.compile(r"[;:.,]|\s(?:from|to|for|and|or|then|until|so)\s")


def tool_part(step: str, *, first: bool = False) -> str:
    """What follows the step's tool mark: past "from" to the step's end, as the template
    puts it; or, `first`, the first tool or place named anywhere, to its clause's end:
    "Mine 1 redstone ore with an iron pickaxe (or better); it drops ..." -> "an iron
    pickaxe" (a small model copies a page's mining line as its step, with no count, or
    names the tool before "from": "Mine gold ore with an iron pickaxe from the ground")."""
    text = ASIDE.sub(" ", step.lower()) if first else step.lower()
    start = -1 if first else text.find(" from ")
    found = TOOL_MARK.search(text, start + 1 if start >= 0 else 0)
    if found is None:
        return ""
    rest = text[found.end() :]
    end = _CLAUSE_END.search(rest) if first else None
    return rest[: end.start()] if end else rest


def _tool_words(step: str) -> set[str]:
    return set(words_of(tool_part(step)))


def counted_by(wanted: Item, fact: str) -> bool:
    return any(wanted.words <= item(text).words for text in counted(fact))


def needed(need: str, step: str = "", fact: str = "") -> Item:
    """A need as the step uses it: its count is None when the step names it as its tool,
    unless the step's quote counts it: "using 1 oak planks as fuel" under a quote of
    "1 Raw Iron + 1 Oak Planks as fuel" burns the planks."""
    wanted = item(need)
    if (
        wanted.count is not None
        and wanted.words
        and wanted.words <= _tool_words(step)
        and not counted_by(wanted, fact)
    ):
        return Item(wanted.words, None, wanted.head)
    return wanted


_RECIPE = re.compile(
    r"^(?P<verb>\S+) (?P<count>\d+) (?P<what>.+?) from (?P<inputs>.+?)"
    r"(?P<tool> (?:with|in|at|using|inside|on) .*)?$",
    re.I,
)


def recipe_of(step: str) -> re.Match[str] | None:
    return _RECIPE.match(step.strip().rstrip("."))


def inputs_of(found: re.Match[str]) -> list[str]:
    return [part.strip() for part in re.split(r",|\band\b|\+", found["inputs"]) if part.strip()]


def product(step: str) -> Item | None:
    """What a step says it makes: "Mine 1 iron ore from the ground" -> iron ore, 1; its
    name ends where its tool or the rest of its clause begins ("Mine 8 cobblestone with a
    pickaxe" makes cobblestone, not a kind of pickaxe)."""
    counted = re.search(r"\b\d+\b.*", step.lower().split(" from ")[0])
    if counted is None:
        return None
    text = counted.group(0)
    ends = [m.start() for m in (TOOL_MARK.search(text), _CLAUSE_END.search(text)) if m]
    made = item(text[: min(ends)] if ends else text)
    return made if made.words else None


def is_product(need: Item, made: Item | None) -> bool:
    """The need is the product itself, named at least as exactly ("5 oak planks" for oak
    planks; not "3 stone" for a stone slab, nor "stone" for smooth stone), or the source it
    is taken from, uncounted ("diamond ore" for diamonds); an amount of another kind of
    thing is none ("32 clay balls" for clay)."""
    return (
        made is not None
        and bool(need.words)
        and made.words <= need.words
        and (need.count is None or made.words == need.words or made.head == need.head)
    )


# Words that end a counted name in a recipe line ("2 Flour + 1 Water, in a Mixer, gives").
_NAME_END = frozenset(
    {
        "gives",
        "give",
        "makes",
        "make",
        "yields",
        "and",
        "or",
        "with",
        "in",
        "as",
        "into",
        "to",
        "for",
        "from",
        "at",
        "on",
        "by",
        "per",
        "each",
    }
)


def counted(fact: str) -> list[str]:
    """The counted things a line names ("2 Flour + 1 Water, in a Mixer, gives 1 Dough" ->
    2 flour, 1 water, 1 dough): what a recipe line uses and makes, in any domain's words.
    Read by rule, not asked of the model: asked, a small model lists the product too, or
    "None"."""
    tokens = _TOKEN.findall(ASIDE.sub(" ", fact.lower()))
    found: list[str] = []
    for n, token in enumerate(tokens):
        if not token.isdigit():
            continue
        words = []
        for word in tokens[n + 1 : n + 5]:
            if not word[0].isalpha() or word in _NAME_END:
                break
            words.append(word)
        if words:
            found.append(f"{token} {' '.join(words)}")
    return found


def words_of(text: str) -> list[str]:
    return [
        _stem(w)
        for w in _WORD.findall(ASIDE.sub(" ", text.lower()))
        if w not in _FILLER and not w.isdigit() and w not in NUMBER_WORDS
    ]


# Words after which a noun is named plainly, with no kind of its own ("from 4 planks",
# "needs: sticks").
_LEAD = frozenset(
    {"from", "with", "using", "uses", "use", "needs", "need", "requires", "require", "into", "plus"}
)


def plain_mentions(fact: str) -> set[str]:
    """The nouns a passage names with no modifier of their own: "4 Planks" names planks of
    any kind, while "a stone pickaxe" names only that one."""
    tokens = _TOKEN.findall(fact.lower())
    plain: set[str] = set()
    for n, token in enumerate(tokens):
        before = tokens[n - 1] if n else ","
        if token[0].isalpha() and (
            not before[0].isalnum()
            or before.isdigit()
            or before in NUMBER_WORDS
            or before in _FILLER
            or before in _LEAD
        ):
            plain.add(_stem(token))
    return plain
