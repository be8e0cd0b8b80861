"""The wording of the bundled corpus's recipe lines, written and read in one place.

The corpus (corpus.py) writes each way to obtain an item as one line under a heading that
names the action: "Crafting: 3 Diamond + 2 Stick gives 1 Diamond Pickaxe (3x3). Needs a
Crafting Table (3x3 grid).", "Smelting: 1 Raw Iron + 1 Oak Planks (or Planks of any other
kind) as fuel gives 1 Iron Ingot in a Furnace.". Plan repair's rules (mending.py) read a
quoted line back: its heading's verb, its recipe (the counted inputs before "gives" and the
product after), where it happens, what it burns, what it says is not needed. The project
reads its own writing here; tests/unit/test_quotes.py holds the two sides together. A quote
from another source (the live wiki) is read the same way where it happens to agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rat_minecraft.names import ASIDE, Item, counted, item, plain_mentions, words_of

CRAFTING, SMELTING, MINING, FARMING = "Crafting", "Smelting", "Mining", "Farming"
GIVES = "gives"  # between a recipe's inputs and its product
NEEDS_TABLE = "Needs a Crafting Table (3x3 grid)."
NO_TABLE = "Fits the 2x2 inventory grid: no Crafting Table needed."
FUEL = "1 Oak Planks (or Planks of any other kind) as fuel"


def crafting(inputs: Sequence[str], count: int, product: str, grid: str, table: bool) -> str:
    """ "Crafting: 3 Diamond + 2 Stick gives 1 Diamond Pickaxe (3x3). Needs a Crafting
    Table (3x3 grid)." `inputs` are counted names ("3 Diamond")."""
    where = NEEDS_TABLE if table else NO_TABLE
    return f"{CRAFTING}: {' + '.join(inputs)} {GIVES} {count} {product} ({grid}). {where}"


def smelting(source: str, product: str, faster: str = "") -> str:
    """ "Smelting: 1 Raw Iron + 1 Oak Planks ... as fuel gives 1 Iron Ingot in a Furnace (or
    a Blast Furnace, faster)." Counts and fuel are written as a recipe's are, so a plan that
    copies the line uses up planks for fuel, and counts them."""
    also = f" (or {faster}, faster)" if faster else ""
    return f"{SMELTING}: 1 {source} + {FUEL} {GIVES} 1 {product} in a Furnace{also}."


# --- reading ---------------------------------------------------------------------------------

# A line's heading names what its recipe does ("Crafting: ...", "Smelting: ...").
HEADING = re.compile(r"^\s*([a-z]+)ing\s*:", re.I)

# Where a recipe runs, as a line says it ("Needs a Crafting Table", "... in a Furnace.").
_PLACE = re.compile(r"\b(?:needs?|in|at|using)\s+(an?\s+[a-z][a-z ]*?)\s*(?=[.,;:]|$)")

# A clause that says what is not needed ("no Crafting Table needed", "without a tool").
NEGATED = re.compile(r"\b(?:no|not|without|never|nor)\b[^.;:,!?]*", re.I)


def verb(heading: re.Match[str]) -> str:
    """The verb a heading names: "Crafting" -> "Craft", "Stonecutting" -> "Stonecut"."""
    stem = heading.group(1)
    if len(stem) > 3 and stem[-1] == stem[-2]:
        stem = stem[:-1]
    return stem.capitalize()


def place(fact: str, heading: re.Match[str]) -> str | None:
    """Where the line's recipe runs ("a crafting table"), unless it says none is needed."""
    plain = NEGATED.sub(" ", ASIDE.sub(" ", fact.lower()))
    found = _PLACE.search(plain[heading.end() :])
    return found.group(1) if found else None


def role(fact: str, text: str) -> str | None:
    """What the line uses `text` as, if it names a role ("1 oak planks as fuel": fuel)."""
    found = re.search(re.escape(text) + r"\s+as\s+(\w+)", ASIDE.sub(" ", fact.lower()))
    return found.group(1) if found else None


def recipe(
    fact: str, makes: Callable[[Item], bool], name: Item | None = None
) -> tuple[str, list[str]] | None:
    """The first counted thing the line names that `makes` accepts, one named exactly as
    `name` first, and the counted things named before it (its recipe's inputs: "8
    Cobblestone gives 1 Furnace"). Exactly first: in "4 Clay Ball gives 1 Clay" the clay
    is the product, though "clay ball" contains its name."""
    quoted = counted(fact)
    found = [n for n, text in enumerate(quoted) if item(text).count and makes(item(text))]
    exact = [n for n in found if name is not None and item(quoted[n]).words == name.words]
    for n in exact[:1] or found[:1]:
        return quoted[n], [before for before in quoted[:n] if item(before).words]
    return None


def grounded(needs: Sequence[str], fact: str) -> list[str]:
    """The needs the quoted line names: all their words, or their noun named plainly
    ("4 oak planks" is grounded by "4 Planks"). A prerequisite the line does not mention,
    or mentions only to say it is not needed ("no Crafting Table needed"), is the model's
    own idea, and repair builds only on the sources."""
    if not fact:
        return list(needs)
    fact = NEGATED.sub(" ", fact)
    # the page's alternatives name things too: "1 Raw Iron (or Iron Ore)" grounds iron ore
    words = set(words_of(fact)) | set(words_of(fact.replace("(", " ").replace(")", " ")))
    plain = plain_mentions(fact)
    found = []
    for need in needs:
        phrase = words_of(need)
        if phrase and (set(phrase) <= words or phrase[-1] in plain):
            found.append(need)
    return found
