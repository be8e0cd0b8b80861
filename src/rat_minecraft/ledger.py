"""The counted ledger of crafting plan repair: what the plan's steps have made and not yet
used up, and so which of a step's needs no earlier step provides.

A revision names what its step uses ("8 planks", "a crafting table"). What the plan
provides is kept from the steps themselves: an inserted step makes the need it was inserted
for, a step of the model's draft checked against a quote makes what it says ("Craft 4
sticks from 2 planks"), and a step's counted needs ("8 planks") use up what it names, while
uncounted ones ("a crafting table") are tools that stay. Names are read and matched as
names.py says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rat_agent import parsing
from rat_minecraft.names import (
    ASIDE,
    LEADING,
    TOOL_MARK,
    Item,
    is_product,
    item,
    needed,
    product,
    recipe_of,
    same_thing,
    tool_part,
    words_of,
)
from rat_minecraft.quotes import grounded, recipe

# A checked step of the plan, as the loop keeps it (agent/state.Step): its revised text,
# status, the quote it rests on, what it needs and, if inserted, what it makes.
Step = Mapping[str, Any]


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
                if left and count and same_thing(have, wanted):
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


def _yield(step: str, made: Item) -> int:
    """How many the step says it makes ("Craft 4 sticks from 2 planks" for "2 sticks"):
    a recipe may give more than was asked for, and the rest serves later steps."""
    makes = product(step)
    if makes is None or makes.count is None or not made.words <= makes.words:
        return 0
    return makes.count


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
            or any(same_thing(wanted, goal) and not _input_of(wanted, goal, fact) for goal in own)
            or (wanted.count is None and any(same_thing(wanted, goal) for goal in chain))
            or is_product(wanted, makes)
        ):  # "Mine 1 iron ore" lists the ore it mines
            continue
        have = sum(count for made, count in stock if same_thing(made, wanted))
        made_ever = any(same_thing(made, wanted) for made, _ in stock)
        if (wanted.count is None and not made_ever) or (
            wanted.count is not None and have < wanted.count
        ):
            named = ASIDE.sub("", need).strip()
            # a tool the step names with no count ("with a wooden pickaxe") is asked for once;
            # one it counts ("with 2 bolts") as many as it says
            once = wanted.count is None and item(need).count and item(tool_part(step)).count is None
            absent.append(_uncounted(named) if once else named)
    return absent


def _input_of(need: Item, made: Item, fact: str) -> bool:
    """The quote's recipe for `made` uses `need`, by that exact name, as something else: "8
    Terracotta + 1 White Dye gives 8 White Terracotta". The names share their last word, so
    without the quote the terracotta would read as the step's own product, a loop."""
    line = recipe(fact, lambda out: same_thing(out, made), made)
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
                or recipe_of(step["revised"]) is not None
            )
        ):
            return n
    return None


def _uncounted(need: str) -> str:
    """A tool named with a count ("8 wooden pickaxe" for "Mine 8 stone with a wooden
    pickaxe") as the one thing to have: inserted with its count, it was crafted 8 times."""
    named = LEADING.sub("", need)
    return f"{'an' if named[:1].lower() in 'aeiou' else 'a'} {named}"


# Words before a thing's name that say a step makes or gets it ("craft an iron shovel").
_MAKING_WORDS = (
    "craft make get obtain build create smelt cook mine collect gather chop acquire "
    "produce harvest crafting making getting obtaining building creating smelting cooking "
    "mining collecting gathering chopping acquiring producing harvesting"
)
_MAKING = frozenset(_MAKING_WORDS.split())


# What a goal reply wraps around the name: "Obtain sandstone in Minecraft survival mode".
_GOAL_VERB = re.compile(
    r"^(?:to\s+)?(?:obtain|obtaining|get|getting|make|making|craft|crafting|build|building|"
    r"acquire|acquiring|create|creating|collect|collecting)\s+",
    re.IGNORECASE,
)
_GOAL_TAIL = re.compile(r"\s+(?:in|for|from|using|with|by|at|on|inside|within)\s+.*$", re.I)


def goal_name(text: str) -> str:
    """The thing a goal reply names, without the verb and setting a small model wraps it
    in ("Obtain sandstone in Minecraft survival mode" -> "sandstone"): a step's product is
    matched against the goal word for word."""
    line = parsing.clean_query(text).rstrip(".").strip()
    name = _GOAL_TAIL.sub("", _GOAL_VERB.sub("", line)).strip()
    return name if parsing.says_something(name) else line


def goal_step(goal: str, drafts: Sequence[str]) -> int | None:
    """The first draft step that says to make or get the goal: a verb of making, then the
    goal's words in a row ("craft an iron shovel" for "Iron Shovel"; not "use your shovel
    on the iron ore", nor "put the wood in a chest" for a chest), if any."""
    wanted = words_of(goal)
    if not wanted:
        return None
    for n, text in enumerate(drafts):
        words = words_of(text)
        if any(
            words[k : k + len(wanted)] == wanted and k and words[k - 1] in _MAKING
            for k in range(len(words))
        ):
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


def unsupported(needs: Sequence[str], step: str, fact: str, steps: Sequence[Step]) -> list[str]:
    """The tools a step names in its own words that its quote does not name and no earlier
    step made ("Use a compass to find the direction of the ore" against "mine Iron Ore with
    a Stone Pickaxe"): the step rests on the model's own idea, not on its sources, and no
    step of the plan provides it. A step that says it makes an amount of something is kept
    (its product is what later steps use), and what a step takes from ("from the ground")
    and what it counts are left to the ledger."""
    if product(step) is not None:
        return []
    source = re.search(r"\bfrom\b(.*?)(?:" + TOOL_MARK.pattern + r"|$)", step.lower())
    named = set(words_of(step)) - set(words_of(source.group(1) if source else ""))
    kept = set(grounded(needs, fact))
    return [
        need
        for need in missing([n for n in needs if n not in kept], steps, step=step, fact=fact)
        if needed(need, step, fact).count is None
        and set(words_of(need)) <= named
        and words_of(need)
    ]
