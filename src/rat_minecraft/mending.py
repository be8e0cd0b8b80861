"""The rules that put a grounded revision right against its quote, before plan repair reads
what the step needs.

A small model quotes the right line and still writes the step it had in mind: the recipe
of its draft, another count, a prerequisite one level down, a tool from another line of the
page. Each rule rewrites what its quote decides and leaves the rest; `mend` applies them in
order.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from rat_minecraft import quotes
from rat_minecraft.names import (
    ASIDE,
    LEADING,
    TOOL_MARK,
    Item,
    counted,
    counted_by,
    inputs_of,
    is_product,
    item,
    needed,
    overlaps,
    product,
    recipe_of,
    same_thing,
    tool_part,
    words_of,
)
from rat_minecraft.quotes import grounded


def _times(text: str, factor: int) -> str:
    return re.sub(r"\b\d+\b", lambda n: str(int(n.group()) * factor), text)


def scale(step: str, needs: Sequence[str], makes: str, fact: str = "") -> tuple[str, list[str]]:
    """A step inserted for N of a thing but written from a recipe that makes M < N runs the
    recipe ceil(N/M) times: its amounts are multiplied ("Get 6 sandstone." revised as "Craft
    1 sandstone from 4 sand" becomes "Craft 6 sandstone from 24 sand"); a step with no
    inputs gets as many (`_more_of`). The model copies a recipe's amounts well; this
    arithmetic it gets wrong."""
    wanted = item(makes)
    found = recipe_of(step)
    if wanted.count is None:
        return step, list(needs)
    if found is None or not counted(found["inputs"]):
        # No counted inputs to run more times ("Mine 3 cobblestones from the ground"): the
        # step gets as many, not a multiple of its count (9 cobblestones for 8).
        return _more_of(step, wanted, makes), list(needs)
    made = item(f"{found['count']} {found['what']}")
    if made.count is None or not 0 < made.count < wanted.count or not wanted.words <= made.words:
        return step, list(needs)
    factor = math.ceil(wanted.count / made.count)
    tool = found["tool"] or ""
    burned = _counted_tools(tool)  # "using 1 oak planks as fuel", when the quote counts it
    if burned and all(counted_by(item(text), fact) for text in burned):
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
    if made is None and wanted.count is not None and wanted.words <= set(words_of(step)):
        one = _GETS_ONE.search(step)
        if one is not None and same_thing(item(one["name"]), wanted):
            return f"{step[: one.start('one')]}{wanted.count}{step[one.end('one') :]}"
        return f"{step.rstrip().rstrip('.')} to get {makes}."
    if (
        made is None
        or made.count is None
        or wanted.count is None
        or made.count >= wanted.count
        or not same_thing(made, wanted)
    ):
        return step
    head, sep, tail = step.partition(" from ")
    return re.sub(rf"\b{made.count}\b", str(wanted.count), head, count=1) + sep + tail


def follow(step: str, needs: Sequence[str], fact: str) -> tuple[str, list[str]]:
    """A recipe for the product its quote makes, but from other inputs ("Craft 1 diamond
    pickaxe from 3 iron ingots and 2 sticks" against "3 Diamond + 2 Stick gives 1 Diamond
    Pickaxe"), takes the quote's inputs, run as often as the count it wrote takes: a
    small model quotes the right line and still writes the recipe it had in mind. Its tool
    or place is kept; the inputs it named give way in its needs. Left as it is where every
    input it names is one the quote counts, or the quote counts no inputs for the product."""
    found, made = recipe_of(step), product(step)
    if found is None or made is None or made.count is None:
        return step, list(needs)
    line = quotes.recipe(fact, lambda out: is_product(out, made), made)
    if line is None:
        return step, list(needs)
    out, inputs = item(line[0]), line[1]
    uses = [item(text) for text in inputs_of(found)]
    # Any containment will do here, whatever kind each name says ("raw iron ore" for the
    # quote's "1 Raw Iron (or Iron Ore)"): the step's own wording of the quote's inputs.
    if not inputs or all(any(overlaps(use, item(text)) for text in inputs) for use in uses):
        return step, list(needs)
    runs = math.ceil(made.count / (out.count or 1))
    rewritten, used = _quoted_recipe(
        found["verb"], runs * (out.count or 1), found["what"], inputs, runs, fact, found["tool"]
    )
    kept = [need for need in needs if not any(same_thing(item(need), use) for use in uses)]
    return rewritten, [*used, *kept]


def _quoted_recipe(
    verb: str, count: int, what: str, inputs: Sequence[str], runs: int, fact: str, tool: str | None
) -> tuple[str, list[str]]:
    """A step that runs the quote's recipe `runs` times, and what it uses up: what the quote
    uses in a role ("1 Oak Planks as fuel") is named in that role, once."""
    used, burned, tool = [], "", tool or ""
    for text in inputs:
        scaled = _times(text, runs)
        role = quotes.role(fact, text)  # "1 planks as fuel"
        if role is None:
            used.append(scaled)
        elif not item(text).words & set(words_of(tool)):  # not named by the step already
            burned += f" using {scaled} as {role}"
    return f"{verb} {count} {what} from {' and '.join(used)}{burned}{tool}.", used


def heading_verb(step: str, fact: str) -> str:
    """A recipe step takes the verb its quote's heading names for that recipe ("Mix 1 white
    dye from 1 bone meal" against "Crafting: 1 Bone Meal gives 1 White Dye" becomes "Craft
    1 white dye from 1 bone meal"): the quote says what is done, and the model's own word
    for it may be one nothing understands. Left as it is where the quote has no heading or
    no recipe with inputs for the step's product (a "Mining:" line has none)."""
    found, made, heading = recipe_of(step), product(step), quotes.HEADING.match(fact)
    if found is None or made is None or heading is None:
        return step
    line = quotes.recipe(fact, lambda out: is_product(out, made), made)
    verb = quotes.verb(heading)
    if line is None or not line[1] or found["verb"].lower() == verb.lower():
        return step
    return verb + step.strip()[len(found["verb"]) :]


def redirect(step: str, needs: Sequence[str], makes: str, fact: str) -> tuple[str, list[str]]:
    """A step inserted to make one thing that the model wrote as making one of that thing's
    inputs ("Get a furnace." revised as "Mine 8 cobblestones with a wooden pickaxe" against
    "Crafting: 8 Cobblestone gives 1 Furnace") becomes the quote's recipe for what it was
    inserted for ("Craft 1 furnace from 8 cobblestone in a crafting table"). A small model
    writes the prerequisite one level down; kept as it is, the ledger would count a furnace
    that no step makes. What it uses is then needed like anything else, so repair inserts
    the step the model wrote before it. The step may name that input anywhere, not only as
    its product: "Get 1 redstone torch." written as "Mine 1 redstone ore ...; it drops 4
    Redstone Dust" is two levels down. Left as it is where the step makes what it was
    inserted for, or names none of the recipe's inputs, or its quote has no such recipe, or
    no heading to name the verb by."""
    wanted, made = item(makes), product(step)
    heading = quotes.HEADING.match(fact)
    if not wanted.words or made is None or same_thing(wanted, made) or heading is None:
        return step, list(needs)
    line = quotes.recipe(fact, lambda out: same_thing(out, wanted), wanted)
    if line is None:
        return step, list(needs)
    product_text, inputs = line
    named = set(words_of(step))  # "... it drops 4 Redstone Dust": past where its product ends
    if not any(same_thing(made, use) or use.words <= named for use in map(item, inputs)):
        return step, list(needs)
    out = item(product_text)
    runs = math.ceil((wanted.count or 1) / (out.count or 1))
    place = quotes.place(fact, heading)
    return _quoted_recipe(
        quotes.verb(heading),
        runs * (out.count or 1),
        LEADING.sub("", product_text),
        inputs,
        runs,
        fact,
        f" in {place}" if place else None,
    )


def agree(step: str, needs: Sequence[str], fact: str) -> tuple[str, list[str]]:
    """A recipe whose inputs the model copied from its quote but whose product count it
    did not ("Craft 9 bone meal from 1 bone" against "1 Bone gives 3 Bone Meal") makes what
    its inputs make, run as many times as the count it wrote takes ("Craft 9 bone meal
    from 3 bone"). Left as it is where the quote counts no such recipe."""
    found, made = recipe_of(step), product(step)
    if found is None or made is None or made.count is None:
        return step, list(needs)
    quoted = [item(text) for text in counted(fact)]
    products = [q for q in quoted if q.count and is_product(q, made)]
    out = next((q for q in products if q.words == made.words), next(iter(products), None))
    uses = [item(text) for text in inputs_of(found)]
    if out is None or out.count is None or not uses:
        return step, list(needs)
    ratios = set()
    for use in uses:  # the step's wording of the quote's inputs, as in `follow`
        match = next((q for q in quoted if q is not out and q.count and overlaps(q, use)), None)
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
    "with/in/using", then the rest of its needs: a small model's list of needs often omits
    what its own step uses ("Craft 1 crafting table from 4 oak planks" needs 4 oak planks,
    listed or not) and the furnace it smelts in. An input the step does not count is taken
    as many times as it counts its product ("Smelt 3 iron ingots from raw iron": 3 raw
    iron), not as a tool that is never used up; a source named with the product's name
    ("Mine 3 diamonds from diamond ore") is no input. Its tools and places are needed once
    (the quote must still name them to be inserted: `grounded`), except what the quote
    counts, which is used up ("using oak planks as fuel"). With no quote nothing grounds
    what the step's words add, and the needs are kept as they are."""
    found, made = recipe_of(step), product(step)
    if not fact:
        return list(needs)
    if found is None:  # not "Verb N thing from ...": only its tool or place can be read
        tools = _tool_uses(tool_part(step, first=True), made, fact)
        return [
            *tools,
            *(need for need in needs if not any(same_thing(item(need), item(t)) for t in tools)),
        ]
    uses = []
    for text in inputs_of(found):
        use = item(text)
        if not use.words or is_product(use, made):
            continue
        if use.count is None:
            if made is None or made.count is None:
                continue
            text = f"{made.count} {LEADING.sub('', text)}"
        uses.append(text.rstrip("."))
    uses += _tool_uses(found["tool"] or "", made, fact)
    kept = [need for need in needs if not any(same_thing(item(need), item(u)) for u in uses)]
    return [*uses, *kept]


_ROLE = re.compile(r"\s+as\s+.*$")  # "oak planks as fuel" -> "oak planks"


def without_unnamed_tools(step: str, fact: str) -> str:
    """A recipe step without the tools and places its quote does not name ("Craft 1
    sandstone from 4 sand using a wooden pickaxe" against "4 Sand gives 1 Sandstone ... no
    Crafting Table needed" -> "Craft 1 sandstone from 4 sand."): the model takes a tool
    from another line of the page, and whoever follows the plan reads it as an ingredient.
    Such a need is never inserted (`grounded`); this takes it out of the text too. Nor is
    a step done in or with what it makes ("Craft 1 crafting table from 4 oak planks in a
    crafting table"): the quote names the product, but no player has one yet. Left as it
    is with no quote, or off the recipe template."""
    found = recipe_of(step)
    if found is None or not fact or not found["tool"]:
        return step
    made = product(step)
    tool = found["tool"]
    marks = [m.start() for m in TOOL_MARK.finditer(tool)] + [len(tool)]
    kept = []
    for start, end in itertools.pairwise(marks):
        segment = tool[start:end]
        named = ASIDE.sub(" ", _ROLE.sub("", TOOL_MARK.sub("", segment, count=1))).strip(" .,")
        if not words_of(named) or (grounded([named], fact) and not is_product(item(named), made)):
            kept.append(segment.strip())
    rest = f" {' '.join(kept)}".rstrip(" .,") if kept else ""
    return f"{step.strip().rstrip('.')[: found.start('tool')]}{rest}."


def _tool_uses(tool: str, made: Item | None, fact: str) -> list[str]:
    """The things a step's tool part names ("using oak planks as fuel in a furnace" -> 3
    oak planks for 3 ingots, a furnace), each as the step uses it."""
    uses = []
    for part in TOOL_MARK.split(tool.lower()):
        text = ASIDE.sub("", _ROLE.sub("", part)).strip(" .,")
        use = item(text)
        if not use.words or is_product(use, made):
            continue
        if counted_by(Item(use.words, 1, use.head), fact):  # the quote counts it: used up
            if use.count is None:
                if made is None or made.count is None:
                    continue
                text = f"{made.count} {LEADING.sub('', text)}"
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


def makes_from_itself(step: str) -> bool:
    """A recipe that uses an amount of what it makes ("Craft 3 oak planks from 5 oak
    planks"): the model wrote the step's product where the fact's input belongs. Such a
    step can never run, and repair would take its input for a loop and insert nothing.
    An uncounted source is no such input ("Mine 3 diamonds from diamond ore")."""
    found = recipe_of(step)
    made = product(step)
    if found is None:
        return False
    return any(
        item(text).count is not None and is_product(item(text), made) for text in inputs_of(found)
    )


def with_inputs(step: str, needs: Sequence[str], uses: Sequence[str]) -> tuple[str, list[str]]:
    """A recipe that makes its product from itself, rewritten with the inputs its fact
    names ("Craft 3 planks from 5 planks" and "1 log" -> "Craft 3 planks from 1 log");
    the product among its needs gives way to them. Left as it is where that fails."""
    found = recipe_of(step)
    made = product(step)
    uses = [u.strip().rstrip(".") for u in uses if item(u).words and not is_product(item(u), made)]
    if found is None or not uses:
        return step, list(needs)
    rewritten = (
        f"{found['verb']} {found['count']} {found['what']} from "
        f"{' and '.join(uses)}{found['tool'] or ''}."
    )
    if makes_from_itself(rewritten):
        return step, list(needs)
    kept = [n for n in needs if not is_product(needed(n, step), made)]
    return rewritten, [*uses, *kept]


def with_product(step: str, needs: Sequence[str], makes: str) -> tuple[str, list[str]]:
    """A self-made recipe inserted to make something else makes that ("Craft 6 sand from
    24 sand", inserted for 6 sandstone -> "Craft 6 sandstone from 24 sand"); left as it is
    when it already names what it was inserted for, or still uses its product."""
    found = recipe_of(step)
    wanted, made = item(makes), product(step)
    if found is None or not wanted.words or made is None or same_thing(wanted, made):
        return step, list(needs)
    rewritten = f"{found['verb']} {makes} from {found['inputs']}{found['tool'] or ''}."
    if makes_from_itself(rewritten):
        return step, list(needs)
    return rewritten, list(needs)


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
