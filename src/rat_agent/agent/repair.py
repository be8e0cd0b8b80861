"""Plan repair: what a step needs that no earlier step made becomes a new step before it.

A grounded revision names what its step uses ("8 planks", "a crafting table"). Each need
that the plan so far does not provide is inserted as a draft step ("Get 8 planks.") before
the current one, and the loop checks it like any other step, so the prerequisites of a
prerequisite are found too. The current step is checked again after them, with them in
its revised past.

What the plan provides is a ledger kept from the steps themselves, with no knowledge of
any domain: an inserted step makes the need it was inserted for, a step of the model's
draft checked against a quote makes what it says ("Craft 4 sticks from 2 planks"), and a
step's counted needs ("8 planks") use up what it names, while uncounted ones ("a crafting
table") are tools that stay. Names match when the words of one contain the other's and their
last words agree ("planks" and "oak planks", not "clay" and "clay ball"), singular or plural.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rat_agent.agent.state import DraftMeta, Step

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
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
_ASIDE = re.compile(r"\s*\([^)]*\)")  # "(or a Blast Furnace, faster)", "(any kind)"
# A leading count or article: "8 ", "an ", "the ".
_LEADING = re.compile(r"^\s*(?:\d+|the|some|" + "|".join(_NUMBER_WORDS) + r")\s+", re.I)


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
    text = _ASIDE.sub(" ", text.lower())
    count: int | None = None
    words: set[str] = set()
    head = ""
    for word in _WORD.findall(text):
        if word.isdigit() or (word in _NUMBER_WORDS and not words):
            if count is None and not words:
                count = int(word) if word.isdigit() else _NUMBER_WORDS[word]
            continue
        if word not in _FILLER:
            head = _stem(word)
            words.add(head)
    if count == 1 and text.strip().startswith(("a ", "an ")):
        count = None  # "a crafting table": a thing to have, not an amount to use up
    return Item(frozenset(words), count, head)


def _overlap(a: Item, b: Item) -> bool:
    return bool(a.words and b.words) and (a.words <= b.words or b.words <= a.words)


def _same(a: Item, b: Item) -> bool:
    """One name's words contain the other's and both name the same kind of thing: "planks"
    and "oak planks", not "clay" and "clay ball" nor "bone" and "bone meal" (a step making
    8 clay from 32 clay balls needs the balls; it is no loop)."""
    return _overlap(a, b) and (a.words == b.words or a.head == b.head)


# The step template puts what a step uses after "from" and its tool or place after these
# ("... from 3 cobblestone and 2 sticks in a crafting table", "Mine 1 iron ore with a stone
# pickaxe"): a need named there is kept, whatever count the model gave it.
_TOOL_MARK = re.compile(r"\b(?:with|in|at|using|inside|on)\b")
# Where the tool's name ends: a clause, or what the step goes on to say it does with it.
_CLAUSE_END = re.compile(r"[;:.,]|\s(?:from|to|for|and|or|then|until|so)\s")


def _tool_part(step: str, *, first: bool = False) -> str:
    """What follows the step's tool mark: past "from" to the step's end, as the template
    puts it; or, `first`, the first tool or place named anywhere, to its clause's end:
    "Mine 1 redstone ore with an iron pickaxe (or better); it drops ..." -> "an iron
    pickaxe" (the 1.5B model copies a page's mining line as its step, with no count, or
    names the tool before "from": "Mine gold ore with an iron pickaxe from the ground")."""
    text = _ASIDE.sub(" ", step.lower()) if first else step.lower()
    start = -1 if first else text.find(" from ")
    found = _TOOL_MARK.search(text, start + 1 if start >= 0 else 0)
    if found is None:
        return ""
    rest = text[found.end() :]
    end = _CLAUSE_END.search(rest) if first else None
    return rest[: end.start()] if end else rest


def _tool_words(step: str) -> set[str]:
    return set(_phrase(_tool_part(step)))


def _counted_by(wanted: Item, fact: str) -> bool:
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
        and not _counted_by(wanted, fact)
    ):
        return Item(wanted.words, None, wanted.head)
    return wanted


def ledger(steps: Sequence[Step]) -> list[tuple[Item, int]]:
    """What the plan's checked steps have made and not yet used up, in order."""
    stock: list[tuple[Item, int]] = []
    for step in steps:
        if step["status"] == "dropped":
            continue
        for need in step.get("needs", []):
            wanted = needed(need, step["revised"], step.get("fact", ""))
            if wanted.count is None:
                continue
            left = wanted.count
            for n, (have, count) in enumerate(stock):
                if left and count and _same(have, wanted):
                    take = min(count, left)
                    stock[n] = (have, count - take)
                    left -= take
        if step.get("makes"):
            made = item(step["makes"])
            stock.append((made, max(made.count or 1, _yield(step["revised"], made))))
        elif step.get("fact") and (made_here := product(step["revised"])) is not None:
            # a step of the model's draft, checked against a quote, makes what it says
            stock.append((made_here, made_here.count or 1))
    return stock


_RECIPE = re.compile(
    r"^(?P<verb>\S+) (?P<count>\d+) (?P<what>.+?) from (?P<inputs>.+?)"
    r"(?P<tool> (?:with|in|at|using|inside|on) .*)?$",
    re.I,
)


def _recipe(step: str) -> re.Match[str] | None:
    return _RECIPE.match(step.strip().rstrip("."))


def _times(text: str, factor: int) -> str:
    return re.sub(r"\b\d+\b", lambda n: str(int(n.group()) * factor), text)


def scale(step: str, needs: Sequence[str], makes: str, fact: str = "") -> tuple[str, list[str]]:
    """A step inserted for N of a thing but written from a recipe that makes M < N runs the
    recipe ceil(N/M) times: its amounts are multiplied ("Get 6 sandstone." revised as "Craft
    1 sandstone from 4 sand" becomes "Craft 6 sandstone from 24 sand"); a step with no
    inputs gets as many (`_more_of`). The model copies a recipe's amounts well; this
    arithmetic it gets wrong."""
    wanted = item(makes)
    found = _recipe(step)
    if wanted.count is None:
        return step, list(needs)
    if found is None:
        return _more_of(step, wanted, makes), list(needs)
    made = item(f"{found['count']} {found['what']}")
    if made.count is None or not 0 < made.count < wanted.count or not wanted.words <= made.words:
        return step, list(needs)
    factor = math.ceil(wanted.count / made.count)
    tool = found["tool"] or ""
    burned = _counted_tools(tool)  # "using 1 oak planks as fuel", when the quote counts it
    if burned and all(_counted_by(item(text), fact) for text in burned):
        tool = _times(tool, factor)
    scaled = (
        f"{found['verb']} {made.count * factor} {found['what']} from "
        f"{_times(found['inputs'], factor)}{tool}."
    )
    used = [
        _times(need, factor) if needed(need, step, fact).count is not None else need
        for need in needs
    ]
    return scaled, used


# "... to get an Oak Log": the one thing a step says it gets, named after the article.
_GETS_ONE = re.compile(
    r"\b(?:get|gets|obtain|collect)\s+(?P<one>a|an|one)\s+(?P<name>[^.;,]+)", re.I
)


def _more_of(step: str, wanted: Item, makes: str) -> str:
    """A step with no inputs that gets fewer than it was inserted for ("Punch a tree trunk
    by hand to get 1 Oak Log" for 3 oak logs) gets as many: there is nothing to run more
    times, and the ledger counts what it was inserted for. One that names the thing with
    no count ("Drop a slimeball from a nearby mob" for 9 slimeballs, "Drop a bone from a
    Skeleton" for 1 bone) says in figures the amount the ledger counts, in place of its
    article or as what it is done for."""
    made = product(step)
    if made is None and wanted.count is not None and wanted.words <= set(_phrase(step)):
        one = _GETS_ONE.search(step)
        if one is not None and _same(item(one["name"]), wanted):
            return f"{step[: one.start('one')]}{wanted.count}{step[one.end('one') :]}"
        return f"{step.rstrip().rstrip('.')} to get {makes}."
    if (
        made is None
        or made.count is None
        or wanted.count is None
        or made.count >= wanted.count
        or not _same(made, wanted)
    ):
        return step
    head, sep, tail = step.partition(" from ")
    return re.sub(rf"\b{made.count}\b", str(wanted.count), head, count=1) + sep + tail


def _inputs(found: re.Match[str]) -> list[str]:
    return [part.strip() for part in re.split(r",|\band\b|\+", found["inputs"]) if part.strip()]


def follow(step: str, needs: Sequence[str], fact: str) -> tuple[str, list[str]]:
    """A recipe for the product its quote makes, but from other inputs ("Craft 1 diamond
    pickaxe from 3 iron ingots and 2 sticks" against "3 Diamond + 2 Stick gives 1 Diamond
    Pickaxe"), takes the quote's inputs, run as often as the count it wrote takes: the
    1.5B model quotes the right line and still writes the recipe it had in mind. Its tool
    or place is kept; the inputs it named give way in its needs. Left as it is where every
    input it names is one the quote counts, or the quote counts no inputs for the product."""
    found, made = _recipe(step), product(step)
    if found is None or made is None or made.count is None:
        return step, list(needs)
    line = _quoted_line(fact, lambda out: _is_product(out, made), made)
    if line is None:
        return step, list(needs)
    out, inputs = item(line[0]), line[1]
    uses = [item(text) for text in _inputs(found)]
    # Any containment will do here, whatever kind each name says ("raw iron ore" for the
    # quote's "1 Raw Iron (or Iron Ore)"): the step's own wording of the quote's inputs.
    if not inputs or all(any(_overlap(use, item(text)) for text in inputs) for use in uses):
        return step, list(needs)
    runs = math.ceil(made.count / (out.count or 1))
    rewritten, used = _quoted_recipe(
        found["verb"], runs * (out.count or 1), found["what"], inputs, runs, fact, found["tool"]
    )
    kept = [need for need in needs if not any(_same(item(need), use) for use in uses)]
    return rewritten, [*used, *kept]


def _quoted_line(
    fact: str, makes: Callable[[Item], bool], name: Item | None = None
) -> tuple[str, list[str]] | None:
    """The first counted thing the quote names that `makes` accepts, one named exactly as
    `name` first, and the counted things named before it (its recipe's inputs: "8
    Cobblestone gives 1 Furnace"). Exactly first: in "4 Clay Ball gives 1 Clay" the clay
    is the product, though "clay ball" contains its name."""
    quoted = counted(fact)
    found = [n for n, text in enumerate(quoted) if item(text).count and makes(item(text))]
    exact = [n for n in found if name is not None and item(quoted[n]).words == name.words]
    for n in exact[:1] or found[:1]:
        return quoted[n], [before for before in quoted[:n] if item(before).words]
    return None


def _quoted_recipe(
    verb: str, count: int, what: str, inputs: Sequence[str], runs: int, fact: str, tool: str | None
) -> tuple[str, list[str]]:
    """A step that runs the quote's recipe `runs` times, and what it uses up: what the quote
    uses in a role ("1 Oak Planks as fuel") is named in that role, once."""
    plain = _ASIDE.sub(" ", fact.lower())
    used, burned, tool = [], "", tool or ""
    for text in inputs:
        scaled = _times(text, runs)
        role = re.search(re.escape(text) + r"\s+as\s+(\w+)", plain)  # "1 planks as fuel"
        if role is None:
            used.append(scaled)
        elif not item(text).words & set(_phrase(tool)):  # not named by the step already
            burned += f" using {scaled} as {role.group(1)}"
    return f"{verb} {count} {what} from {' and '.join(used)}{burned}{tool}.", used


# A quote's heading names what its recipe does ("Crafting: ...", "Smelting: ...").
_HEADING = re.compile(r"^\s*([a-z]+)ing\s*:", re.I)
# Where a recipe runs, as its quote says ("Needs a Crafting Table", "... in a Furnace.").
_PLACE = re.compile(r"\b(?:needs?|in|at|using)\s+(an?\s+[a-z][a-z ]*?)\s*(?=[.,;:]|$)")


def _verb(heading: re.Match[str]) -> str:
    stem = heading.group(1)
    if len(stem) > 3 and stem[-1] == stem[-2]:  # "Stonecutting" -> "Stonecut"
        stem = stem[:-1]
    return stem.capitalize()


def heading_verb(step: str, fact: str) -> str:
    """A recipe step takes the verb its quote's heading names for that recipe ("Mix 1 white
    dye from 1 bone meal" against "Crafting: 1 Bone Meal gives 1 White Dye" becomes "Craft
    1 white dye from 1 bone meal"): the quote says what is done, and the model's own word
    for it may be one nothing understands. Left as it is where the quote has no heading or
    no recipe with inputs for the step's product (a "Mining:" line has none)."""
    found, made, heading = _recipe(step), product(step), _HEADING.match(fact)
    if found is None or made is None or heading is None:
        return step
    line = _quoted_line(fact, lambda out: _is_product(out, made), made)
    verb = _verb(heading)
    if line is None or not line[1] or found["verb"].lower() == verb.lower():
        return step
    return verb + step.strip()[len(found["verb"]) :]


def redirect(step: str, needs: Sequence[str], makes: str, fact: str) -> tuple[str, list[str]]:
    """A step inserted to make one thing that the model wrote as making one of that thing's
    inputs ("Get a furnace." revised as "Mine 8 cobblestones with a wooden pickaxe" against
    "Crafting: 8 Cobblestone gives 1 Furnace") becomes the quote's recipe for what it was
    inserted for ("Craft 1 furnace from 8 cobblestone in a crafting table"). The 1.5B model
    writes the prerequisite one level down; kept as it is, the ledger would count a furnace
    that no step makes. What it uses is then needed like anything else, so repair inserts
    the step the model wrote before it. The step may name that input anywhere, not only as
    its product: "Get 1 redstone torch." written as "Mine 1 redstone ore ...; it drops 4
    Redstone Dust" is two levels down. Left as it is where the step makes what it was
    inserted for, or names none of the recipe's inputs, or its quote has no such recipe, or
    no heading to name the verb by."""
    wanted, made = item(makes), product(step)
    heading = _HEADING.match(fact)
    if not wanted.words or made is None or _same(wanted, made) or heading is None:
        return step, list(needs)
    line = _quoted_line(fact, lambda out: _same(out, wanted), wanted)
    if line is None:
        return step, list(needs)
    product_text, inputs = line
    named = set(_phrase(step))  # "... it drops 4 Redstone Dust": past where its product ends
    if not any(_same(made, use) or use.words <= named for use in map(item, inputs)):
        return step, list(needs)
    out = item(product_text)
    runs = math.ceil((wanted.count or 1) / (out.count or 1))
    plain = _NEGATED.sub(" ", _ASIDE.sub(" ", fact.lower()))
    place = _PLACE.search(plain[heading.end() :])
    return _quoted_recipe(
        _verb(heading),
        runs * (out.count or 1),
        _LEADING.sub("", product_text),
        inputs,
        runs,
        fact,
        f" in {place.group(1)}" if place else None,
    )


def agree(step: str, needs: Sequence[str], fact: str) -> tuple[str, list[str]]:
    """A recipe whose inputs the model copied from its quote but whose product count it
    did not ("Craft 9 bone meal from 1 bone" against "1 Bone gives 3 Bone Meal") makes what
    its inputs make, run as many times as the count it wrote takes ("Craft 9 bone meal
    from 3 bone"). Left as it is where the quote counts no such recipe."""
    found, made = _recipe(step), product(step)
    if found is None or made is None or made.count is None:
        return step, list(needs)
    quoted = [item(text) for text in counted(fact)]
    products = [q for q in quoted if q.count and _is_product(q, made)]
    out = next((q for q in products if q.words == made.words), next(iter(products), None))
    uses = [item(text) for text in _inputs(found)]
    if out is None or out.count is None or not uses:
        return step, list(needs)
    ratios = set()
    for use in uses:  # the step's wording of the quote's inputs, as in `follow`
        match = next((q for q in quoted if q is not out and q.count and _overlap(q, use)), None)
        if match is None or match.count is None or use.count is None or use.count % match.count:
            return step, list(needs)
        ratios.add(use.count // match.count)
    runs = ratios.pop() if len(ratios) == 1 else 0
    if not runs or made.count == runs * out.count:
        return step, list(needs)
    once = (
        f"{found['verb']} {runs * out.count} {found['what']} from {found['inputs']}"
        f"{found['tool'] or ''}."
    )
    return scale(once, needs, f"{made.count} {found['what']}")


def with_uses(step: str, needs: Sequence[str], fact: str) -> list[str]:
    """What the step uses after "from", as the step says it, then what it names after
    "with/in/using", then the rest of its needs: the 1.5B model's list of needs often omits
    what its own step uses ("Craft 1 crafting table from 4 oak planks" needs 4 oak planks,
    listed or not) and the furnace it smelts in. An input the step does not count is taken
    as many times as it counts its product ("Smelt 3 iron ingots from raw iron": 3 raw
    iron), not as a tool that is never used up; a source named with the product's name
    ("Mine 3 diamonds from diamond ore") is no input. Its tools and places are needed once
    (the quote must still name them to be inserted: `grounded`), except what the quote
    counts, which is used up ("using oak planks as fuel"). With no quote nothing grounds
    what the step's words add, and the needs are kept as they are."""
    found, made = _recipe(step), product(step)
    if not fact:
        return list(needs)
    if found is None:  # not "Verb N thing from ...": only its tool or place can be read
        tools = _tool_uses(_tool_part(step, first=True), made, fact)
        return [
            *tools,
            *(need for need in needs if not any(_same(item(need), item(t)) for t in tools)),
        ]
    uses = []
    for text in _inputs(found):
        use = item(text)
        if not use.words or _is_product(use, made):
            continue
        if use.count is None:
            if made is None or made.count is None:
                continue
            text = f"{made.count} {_LEADING.sub('', text)}"
        uses.append(text.rstrip("."))
    uses += _tool_uses(found["tool"] or "", made, fact)
    kept = [need for need in needs if not any(_same(item(need), item(u)) for u in uses)]
    return [*uses, *kept]


_ROLE = re.compile(r"\s+as\s+.*$")  # "oak planks as fuel" -> "oak planks"


def without_unnamed_tools(step: str, fact: str) -> str:
    """A recipe step without the tools and places its quote does not name ("Craft 1
    sandstone from 4 sand using a wooden pickaxe" against "4 Sand gives 1 Sandstone ... no
    Crafting Table needed" -> "Craft 1 sandstone from 4 sand."): the 1.5B model takes a
    tool from another line of the page, and whoever follows the plan reads it as an
    ingredient. Such a need is never inserted (`grounded`); this takes it out of the text
    too. Left as it is with no quote, or off the recipe template."""
    found = _recipe(step)
    if found is None or not fact or not found["tool"]:
        return step
    tool = found["tool"]
    marks = [m.start() for m in _TOOL_MARK.finditer(tool)] + [len(tool)]
    kept = []
    for start, end in itertools.pairwise(marks):
        segment = tool[start:end]
        named = _ASIDE.sub(" ", _ROLE.sub("", _TOOL_MARK.sub("", segment, count=1))).strip(" .,")
        if not _phrase(named) or grounded([named], fact):
            kept.append(segment.strip())
    rest = f" {' '.join(kept)}".rstrip(" .,") if kept else ""
    return f"{step.strip().rstrip('.')[: found.start('tool')]}{rest}."


def _tool_uses(tool: str, made: Item | None, fact: str) -> list[str]:
    """The things a step's tool part names ("using oak planks as fuel in a furnace" -> 3
    oak planks for 3 ingots, a furnace), each as the step uses it."""
    uses = []
    for part in _TOOL_MARK.split(tool.lower()):
        text = _ASIDE.sub("", _ROLE.sub("", part)).strip(" .,")
        use = item(text)
        if not use.words or _is_product(use, made):
            continue
        if _counted_by(Item(use.words, 1, use.head), fact):  # the quote counts it: used up
            if use.count is None:
                if made is None or made.count is None:
                    continue
                text = f"{made.count} {_LEADING.sub('', text)}"
        elif use.count is not None or not re.match(r"an? ", text):
            # a counted tool the quote does not count: as the model listed it; and only
            # "a thing" is one to have ("with your hands", "from the ground" are not)
            continue
        uses.append(text)
    return uses


def _counted_tools(tool: str) -> list[str]:
    """The counted things a step's tool part names ("using 1 oak planks as fuel in a
    furnace" -> 1 oak planks)."""
    return [text for text in counted(tool) if item(text).words]


def _yield(step: str, made: Item) -> int:
    """How many the step says it makes ("Craft 4 sticks from 2 planks" for "2 sticks"):
    a recipe may give more than was asked for, and the rest serves later steps."""
    makes = product(step)
    if makes is None or makes.count is None or not made.words <= makes.words:
        return 0
    return makes.count


def product(step: str) -> Item | None:
    """What a step says it makes: "Mine 1 iron ore from the ground" -> iron ore, 1; its
    name ends where its tool or the rest of its clause begins ("Mine 8 cobblestone with a
    pickaxe" makes cobblestone, not a kind of pickaxe)."""
    counted = re.search(r"\b\d+\b.*", step.lower().split(" from ")[0])
    if counted is None:
        return None
    text = counted.group(0)
    ends = [m.start() for m in (_TOOL_MARK.search(text), _CLAUSE_END.search(text)) if m]
    made = item(text[: min(ends)] if ends else text)
    return made if made.words else None


def _is_product(need: Item, made: Item | None) -> bool:
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


def makes_from_itself(step: str) -> bool:
    """A recipe that uses an amount of what it makes ("Craft 3 oak planks from 5 oak
    planks"): the model wrote the step's product where the fact's input belongs. Such a
    step can never run, and repair would take its input for a loop and insert nothing.
    An uncounted source is no such input ("Mine 3 diamonds from diamond ore")."""
    found = _recipe(step)
    made = product(step)
    if found is None:
        return False
    return any(
        item(text).count is not None and _is_product(item(text), made) for text in _inputs(found)
    )


def with_inputs(step: str, needs: Sequence[str], uses: Sequence[str]) -> tuple[str, list[str]]:
    """A recipe that makes its product from itself, rewritten with the inputs its fact
    names ("Craft 3 planks from 5 planks" and "1 log" -> "Craft 3 planks from 1 log");
    the product among its needs gives way to them. Left as it is where that fails."""
    found = _recipe(step)
    made = product(step)
    uses = [u.strip().rstrip(".") for u in uses if item(u).words and not _is_product(item(u), made)]
    if found is None or not uses:
        return step, list(needs)
    rewritten = (
        f"{found['verb']} {found['count']} {found['what']} from "
        f"{' and '.join(uses)}{found['tool'] or ''}."
    )
    if makes_from_itself(rewritten):
        return step, list(needs)
    kept = [n for n in needs if not _is_product(needed(n, step), made)]
    return rewritten, [*uses, *kept]


def with_product(step: str, needs: Sequence[str], makes: str) -> tuple[str, list[str]]:
    """A self-made recipe inserted to make something else makes that ("Craft 6 sand from
    24 sand", inserted for 6 sandstone -> "Craft 6 sandstone from 24 sand"); left as it is
    when it already names what it was inserted for, or still uses its product."""
    found = _recipe(step)
    wanted, made = item(makes), product(step)
    if found is None or not wanted.words or made is None or _same(wanted, made):
        return step, list(needs)
    rewritten = f"{found['verb']} {makes} from {found['inputs']}{found['tool'] or ''}."
    if makes_from_itself(rewritten):
        return step, list(needs)
    return rewritten, list(needs)


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


def mend(step: str, needs: Sequence[str], fact: str, makes: str = "") -> tuple[str, list[str]]:
    """A grounded revision put right against its quote by the rules above, in this order:
    each reads the step the one before it left. `makes` is what an inserted step was
    inserted for ("" for a step of the draft)."""
    text, found = step, list(needs)
    if makes:  # the model may write a prerequisite of what it was asked
        text, found = redirect(text, found, makes, fact)
    text, found = follow(text, found, fact)
    text, found = agree(text, found, fact)
    text = heading_verb(text, fact)
    if makes:  # a prerequisite: as many as the step after it uses
        text, found = scale(text, found, makes, fact)
    text = without_unnamed_tools(text, fact)
    return text, with_uses(text, found, fact)


def counted(fact: str) -> list[str]:
    """The counted things a line names ("2 Flour + 1 Water, in a Mixer, gives 1 Dough" ->
    2 flour, 1 water, 1 dough): what a recipe line uses and makes, in any domain's words.
    Read by rule, not asked of the model: asked, the 1.5B model lists the product too, or
    "None"."""
    tokens = _TOKEN.findall(_ASIDE.sub(" ", fact.lower()))
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


def missing(
    needs: Sequence[str],
    steps: Sequence[Step],
    waiting: Sequence[str] = (),
    step: str = "",
    fact: str = "",
) -> list[str]:
    """The needs the plan so far does not provide: a tool must have been made, an amount
    must be in stock (made by earlier steps and not used up).

    `waiting` is what this step is meant to make, then what the steps waiting on it (not
    its siblings) are: needing its own product is a loop, and so is needing a tool one of
    them makes (the planks for a crafting table cannot need that table). An amount of what
    a waiting step makes is no loop: 4 planks for the table, on the way to 3 planks for a
    pickaxe, are made by a recipe run once more. `step` is the step's text, which tells its
    tools from what it uses up, and names its product, which it never needs; `fact`, its
    quote, tells what the step burns from its tools.
    """
    stock = ledger(steps)
    own = [item(text) for text in waiting[:1] if text]
    chain = [item(text) for text in waiting[1:] if text]
    makes = product(step)
    absent: list[str] = []
    for need in needs:
        wanted = needed(need, step, fact)
        if (
            not wanted.words
            or any(_same(wanted, goal) and not _input_of(wanted, goal, fact) for goal in own)
            or (wanted.count is None and any(_same(wanted, goal) for goal in chain))
            or _is_product(wanted, makes)
        ):  # "Mine 1 iron ore" lists the ore it mines
            continue
        have = sum(count for made, count in stock if _same(made, wanted))
        made_ever = any(_same(made, wanted) for made, _ in stock)
        if (wanted.count is None and not made_ever) or (
            wanted.count is not None and have < wanted.count
        ):
            named = _ASIDE.sub("", need).strip()
            # a tool the step names with no count ("with a wooden pickaxe") is asked for once;
            # one it counts ("with 2 bolts") as many as it says
            once = (
                wanted.count is None and item(need).count and item(_tool_part(step)).count is None
            )
            absent.append(_uncounted(named) if once else named)
    return absent


def _input_of(need: Item, made: Item, fact: str) -> bool:
    """The quote's recipe for `made` uses `need`, by that exact name, as something else: "8
    Terracotta + 1 White Dye gives 8 White Terracotta". The names share their last word, so
    without the quote the terracotta would read as the step's own product, a loop."""
    line = _quoted_line(fact, lambda out: _same(out, made), made)
    return (
        line is not None
        and item(line[0]).words != need.words
        and any(item(text).words == need.words for text in line[1])
    )


def resolved(makes: str, steps: Sequence[Step]) -> int | None:
    """The last step inserted for the same thing as `makes` ("4 planks" after "3 planks")
    that a quote resolved into a step making it, if any: a plan short of planks asks for
    them again and again, and each time the same page gives the same recipe."""
    wanted = item(makes)
    if not wanted.words:
        return None
    for n in range(len(steps) - 1, -1, -1):
        step = steps[n]
        made = product(step["revised"])
        if (
            step["status"] == "inserted"
            and step.get("fact")
            and item(step.get("makes", "")).words == wanted.words
            and made is not None
            and wanted.words <= made.words
            # as many as wanted, or a recipe `scale` runs more times ("Chop 1 log." is not)
            and (
                wanted.count is None
                or (made.count or 1) >= wanted.count
                or _recipe(step["revised"]) is not None
            )
        ):
            return n
    return None


def _uncounted(need: str) -> str:
    """A tool named with a count ("8 wooden pickaxe" for "Mine 8 stone with a wooden
    pickaxe") as the one thing to have: inserted with its count, it was crafted 8 times."""
    named = _LEADING.sub("", need)
    return f"{'an' if named[:1].lower() in 'aeiou' else 'a'} {named}"


# A step is checked again after its prerequisites; it may ask for more a few times (a
# sibling used up what was made for it, as a crafting table takes the planks made for a
# pickaxe), but not forever.
MAX_REPAIRS = 4


def meta_at(meta: Sequence[DraftMeta], index: int) -> DraftMeta:
    """The notes on draft step `index`; a step of the model's own draft has none."""
    if index < len(meta):
        return meta[index]
    return {"makes": "", "reason": "", "repairs": 0, "original": "", "drop": "", "chain": []}


def _phrase(text: str) -> list[str]:
    return [
        _stem(w)
        for w in _WORD.findall(_ASIDE.sub(" ", text.lower()))
        if w not in _FILLER and not w.isdigit() and w not in _NUMBER_WORDS
    ]


def goal_step(goal: str, drafts: Sequence[str]) -> int | None:
    """The first draft step that names the goal, its words in a row ("craft an iron shovel"
    names "Iron Shovel"; "use your shovel on the iron ore" does not), if any."""
    wanted = _phrase(goal)
    if not wanted:
        return None
    for n, text in enumerate(drafts):
        words = _phrase(text)
        if any(words[k : k + len(wanted)] == wanted for k in range(len(words))):
            return n
    return None


def makes_goal(step: str, goal: str) -> bool:
    """Whether a checked step makes the goal itself, named as the goal is ("Craft 1 block
    of redstone" makes "Redstone Block"; "Mine 9 redstone ore" and "Craft 4 planks for the
    chest" do not), as many as it asks for."""
    wanted, made = item(goal), product(step)
    return (
        made is not None
        and bool(wanted.words)
        and made.words == wanted.words
        and (wanted.count is None or (made.count or 1) >= wanted.count)
    )


# Words after which a noun is named plainly, with no kind of its own ("from 4 planks",
# "needs: sticks").
_LEAD = frozenset(
    {"from", "with", "using", "uses", "use", "needs", "need", "requires", "require", "into", "plus"}
)


def _plain_mentions(fact: str) -> set[str]:
    """The nouns a passage names with no modifier of their own: "4 Planks" names planks of
    any kind, while "a stone pickaxe" names only that one."""
    tokens = _TOKEN.findall(fact.lower())
    plain: set[str] = set()
    for n, token in enumerate(tokens):
        before = tokens[n - 1] if n else ","
        if token[0].isalpha() and (
            not before[0].isalnum()
            or before.isdigit()
            or before in _NUMBER_WORDS
            or before in _FILLER
            or before in _LEAD
        ):
            plain.add(_stem(token))
    return plain


# A clause that says what is not needed ("no Crafting Table needed", "without a tool").
_NEGATED = re.compile(r"\b(?:no|not|without|never|nor)\b[^.;:,!?]*", re.I)


def grounded(needs: Sequence[str], fact: str) -> list[str]:
    """The needs the quoted passage names: all their words, or their noun named plainly
    ("4 oak planks" is grounded by "4 Planks"). A prerequisite the passage does not
    mention, or mentions only to say it is not needed ("no Crafting Table needed"), is the
    model's own idea, and repair builds only on the sources."""
    if not fact:
        return list(needs)
    fact = _NEGATED.sub(" ", fact)
    # the page's alternatives name things too: "1 Raw Iron (or Iron Ore)" grounds iron ore
    words = set(_phrase(fact)) | set(_phrase(fact.replace("(", " ").replace(")", " ")))
    plain = _plain_mentions(fact)
    found = []
    for need in needs:
        phrase = _phrase(need)
        if phrase and (set(phrase) <= words or phrase[-1] in plain):
            found.append(need)
    return found


def unsupported(needs: Sequence[str], step: str, fact: str, steps: Sequence[Step]) -> list[str]:
    """The tools a step names in its own words that its quote does not name and no earlier
    step made ("Use a compass to find the direction of the ore" against "mine Iron Ore with
    a Stone Pickaxe"): the step rests on the model's own idea, not on its sources, and no
    step of the plan provides it. A step that says it makes an amount of something is kept
    (its product is what later steps use), and what a step takes from ("from the ground")
    and what it counts are left to the ledger."""
    if product(step) is not None:
        return []
    source = re.search(r"\bfrom\b(.*?)(?:" + _TOOL_MARK.pattern + r"|$)", step.lower())
    named = set(_phrase(step)) - set(_phrase(source.group(1) if source else ""))
    kept = set(grounded(needs, fact))
    return [
        need
        for need in missing([n for n in needs if n not in kept], steps, step=step, fact=fact)
        if needed(need, step, fact).count is None and set(_phrase(need)) <= named and _phrase(need)
    ]


def inserted_count(meta: Sequence[DraftMeta], steps: Sequence[Step] = ()) -> int:
    """The steps repair has inserted, less those dropped unchecked because a sibling met
    their need since: they cost no model call, so they take none of the budget."""
    unchecked = sum(
        1 for s in steps if s.get("makes") and s["status"] == "dropped" and "fact" not in s
    )
    return sum(1 for m in meta if m["makes"]) - unchecked
