"""Plan repair's ledger: what the plan so far provides, in any domain's words."""

from __future__ import annotations

import pytest

from rat_agent.agent.state import Step
from rat_minecraft import quotes
from rat_minecraft.ledger import ledger, makes_goal, missing
from rat_minecraft.names import item


def step(
    revised: str, needs: list[str] | None = None, makes: str = "", status: str = "revised"
) -> Step:
    s: Step = {
        "draft": revised,
        "query": "",
        "sources": [],
        "revised": revised,
        "status": status,
        "note": "",
    }  # type: ignore[typeddict-item]
    if needs is not None:
        s["needs"] = needs
    if makes:
        s["makes"] = makes
    return s


def test_items_read_counts_and_names_in_singular() -> None:
    assert item("8 Planks of any kind (such as Oak Planks)") == item("8 plank")
    assert item("8 planks").count == 8
    assert item("three eggs").count == 3 and item("three eggs").words == {"egg"}
    assert item("a crafting table").count is None  # a thing to have, not an amount
    assert item("2 loaves of bread").words == {"loaf", "bread"}


def test_a_tool_made_once_serves_every_later_step() -> None:
    steps = [step("Build 1 oven.", makes="an oven")]
    assert missing(["an oven", "500 g flour"], steps) == ["500 g flour"]
    assert missing(["oven"], steps) == []


def test_amounts_are_used_up_by_the_steps_that_need_them() -> None:
    steps = [
        step("Buy 8 eggs.", makes="8 eggs"),
        step("Bake a cake from 6 eggs.", needs=["6 eggs", "an oven"]),
    ]
    assert ledger(steps)[0][1] == 2
    assert missing(["2 eggs"], steps) == []
    assert missing(["3 eggs"], steps) == ["3 eggs"]


def test_names_match_when_one_contains_the_other() -> None:
    steps = [step("Craft 8 oak planks.", makes="8 oak planks")]
    assert missing(["8 planks"], steps) == []
    assert missing(["4 birch planks"], steps) == ["4 birch planks"]


def test_dropped_steps_provide_nothing() -> None:
    steps = [step("", makes="an oven", status="dropped")]
    assert missing(["an oven"], steps) == ["an oven"]


def test_a_step_never_needs_its_own_product_or_a_waiting_one() -> None:
    assert missing(["Torch", "1 stick"], [], waiting=["4 torches"]) == ["1 stick"]
    assert missing(["a stick"], [], waiting=["", "2 sticks"]) == []
    # planks for a table on the way to planks for a pickaxe: more planks, no loop; the
    # table those planks wait for is one
    chain = ["4 planks", "a crafting table", "3 planks"]
    assert missing(["1 log", "a crafting table"], [], waiting=chain) == ["1 log"]
    assert missing(["4 planks"], [], waiting=["a crafting table", "3 planks"]) == ["4 planks"]
    # a thing its quote's recipe uses under its own name is an input, not the product,
    # though the names share their last word (seen in a tune run: white terracotta)
    dyed = "Craft 8 white terracotta from 8 terracotta and 1 white dye in a crafting table."
    quote = "Crafting: 8 Terracotta + 1 White Dye gives 8 White Terracotta (3x3 shape)."
    needs = ["8 terracotta", "1 white dye"]
    assert missing(needs, [], waiting=["White Terracotta"], step=dyed, fact=quote) == needs
    assert missing(needs, [], waiting=["White Terracotta"], step=dyed) == ["1 white dye"]
    planks = "Crafting: 1 Oak Log gives 4 Oak Planks."
    assert missing(["4 planks"], [], waiting=["4 oak planks"], fact=planks) == []


def test_what_a_step_names_as_its_tool_is_kept_whatever_its_count() -> None:
    made = [step("Build 1 oven from 10 bricks.", makes="1 oven")]
    bake = "Bake 1 cake from 6 eggs in an oven."
    steps = [*made, step(bake, needs=["1 oven", "6 eggs"])]
    assert ledger(steps)[0][1] == 1  # the oven is still there after baking
    assert missing(["1 oven"], steps, step="Bake 1 pie from 3 apples in an oven.") == []
    # named among what the step uses, the same count is used up
    steps = [*made, step("Bake 1 cake from 1 oven and 6 eggs.", needs=["1 oven", "6 eggs"])]
    assert missing(["1 oven"], steps, step="Bake 1 pie from 1 oven and 3 apples.") == ["1 oven"]


def test_a_step_that_makes_more_than_was_asked_stocks_the_rest() -> None:
    steps = [step("Craft 4 sticks from 2 planks.", makes="2 sticks")]
    assert ledger(steps)[0][1] == 4
    assert (
        missing(
            ["2 sticks"],
            [*steps, step("Craft 1 torch from 2 sticks and 1 coal.", needs=["2 sticks", "1 coal"])],
        )
        == []
    )
    # a step that makes something else (or says no count) stocks what was asked for
    assert ledger([step("Chop 3 logs.", makes="2 sticks")])[0][1] == 2


def test_a_recipe_for_fewer_than_needed_runs_as_many_times_as_it_takes() -> None:
    from rat_minecraft.mending import scale

    assert scale(
        "Bake 1 loaf from 2 cups of flour in an oven.", ["2 cups of flour", "1 oven"], "3 loaves"
    ) == (
        "Bake 3 loaf from 6 cups of flour in an oven.",
        ["6 cups of flour", "1 oven"],
    )  # the oven is its tool
    assert scale("Bake 4 rolls from 1 cup of flour.", ["1 cup of flour"], "6 rolls") == (
        "Bake 8 rolls from 2 cup of flour.",
        ["2 cup of flour"],
    )
    # enough already, or something else: left as written
    for step, makes in (
        ("Bake 4 rolls from 1 cup of flour.", "2 rolls"),
        ("Bake 1 loaf from 2 cups of flour.", "3 cakes"),
    ):
        assert scale(step, ["x"], makes) == (step, ["x"])
    # no recipe: nothing to run more times, so it gets as many
    assert scale("Buy 1 loaf.", ["x"], "3 loaves") == ("Buy 3 loaf.", ["x"])


def test_a_need_is_grounded_by_its_words_or_by_its_noun_named_plainly() -> None:
    from rat_minecraft.quotes import grounded

    recipe = "Crafting Table: crafted from 4 Planks (any kind)."
    # the model's "oak planks" are the page's planks of any kind
    assert grounded(["4 oak planks", "a crafting table"], recipe) == [
        "4 oak planks",
        "a crafting table",
    ]
    # a noun the passage names with a kind of its own grounds only that kind
    assert grounded(["an iron pickaxe"], "Diamond Ore: mined with a stone pickaxe.") == []
    assert grounded(["an iron pickaxe"], "mined with an iron pickaxe or better") == [
        "an iron pickaxe"
    ]
    assert grounded(["1 coal"], "Furnace: any fuel, such as Coal") == ["1 coal"]
    assert grounded(["8 eggs"], "Cake: 3 Milk + 2 Sugar") == []
    assert grounded(["8 eggs"], "") == ["8 eggs"]  # no quote: nothing to check against
    # named only to say it is not needed
    planks = (
        "Crafting: 1 Oak Log gives 4 Oak Planks (shapeless). Fits the 2x2 inventory "
        "grid: no Crafting Table needed."
    )
    assert grounded(["1 oak log", "a crafting table"], planks) == ["1 oak log"]
    assert grounded(["an oven"], "Bake without an oven, or in one: not a mixer.") == []
    # the page's alternatives name things too
    assert grounded(["1 raw iron ore"], "Smelting: 1 Raw Iron (or Iron Ore) gives 1 Ingot") == [
        "1 raw iron ore"
    ]


def test_a_step_never_needs_what_it_says_it_makes() -> None:
    from rat_minecraft.mending import makes_from_itself

    mine = "Mine 1 iron ore from the ground with a stone pickaxe."
    assert missing(["1 iron ore", "a stone pickaxe"], [], step=mine) == ["a stone pickaxe"]
    # something named inside the product's name is a real input
    assert missing(["3 stone"], [], step="Craft 6 stone slabs from 3 stone.") == ["3 stone"]
    assert makes_from_itself("Craft 3 oak planks from 5 oak planks with a crafting table.")
    assert makes_from_itself("Bake 2 loaves from 1 loaf and 1 egg.")
    assert not makes_from_itself("Craft 6 stone slabs from 3 stone.")
    assert not makes_from_itself("Smelt 1 smooth stone from 1 stone in a furnace.")
    assert not makes_from_itself(mine)
    assert not makes_from_itself("Mine 3 diamonds from diamond ore.")  # a source, uncounted


def test_a_self_made_recipe_takes_the_inputs_its_fact_names() -> None:
    from rat_minecraft.mending import with_inputs
    from rat_minecraft.names import counted

    broken = "Craft 3 oak planks from 5 oak planks with a crafting table."
    assert with_inputs(broken, ["5 oak planks", "a crafting table"], [" 1 oak log"]) == (
        "Craft 3 oak planks from 1 oak log with a crafting table.",
        ["1 oak log", "a crafting table"],
    )
    # inputs that are the product again, or none: left as it was
    assert with_inputs(broken, ["5 oak planks"], ["2 oak planks"]) == (broken, ["5 oak planks"])
    assert with_inputs(broken, ["5 oak planks"], []) == (broken, ["5 oak planks"])
    line = "2a. Dough: 2 Flour + 1 Water (any kind), in a Mixer, gives 1 Dough."
    assert counted(line) == ["2 flour", "1 water", "1 dough"]
    assert with_inputs("Mix 2 dough from 2 dough.", ["2 dough"], counted(line)) == (
        "Mix 2 dough from 2 flour and 1 water.",
        ["2 flour", "1 water"],
    )


def test_a_self_made_recipe_inserted_for_something_else_makes_that() -> None:
    from rat_minecraft.mending import with_product

    assert with_product("Craft 6 sand from 24 sand.", ["24 sand"], "6 sandstone") == (
        "Craft 6 sandstone from 24 sand.",
        ["24 sand"],
    )
    broken = "Craft 3 oak planks from 5 oak planks."
    assert with_product(broken, ["5 oak planks"], "3 oak planks") == (broken, ["5 oak planks"])
    assert with_product(broken, ["5 oak planks"], "") == (broken, ["5 oak planks"])


def test_a_tool_named_with_a_count_is_asked_for_as_one_thing_to_have() -> None:
    mine = "Mine 8 stone from the ground with a wooden pickaxe."
    assert missing(["8 wooden pickaxe", "1 log"], [], step=mine) == ["a wooden pickaxe", "1 log"]
    assert missing(["8 apples"], [], step="Bake 1 pie from 8 apples in an oven.") == ["8 apples"]
    # counted where the step names it as its tool, it is asked for as counted
    assert missing(["2 bolts"], [], step="Fix 1 door from 1 board with 2 bolts.") == ["2 bolts"]
    # named with no count, it is asked for as the model wrote it
    assert missing(["oven"], [], step="Bake 1 pie in an oven.") == ["oven"]


def test_a_recipe_makes_what_its_quoted_inputs_make() -> None:
    from rat_minecraft.mending import agree

    fact = "Crafting: 1 Bone gives 3 Bone Meal (1x1 shape)."
    # the model kept the quote's input but wrote the count it was asked for
    assert agree("Craft 9 bone meal from 1 bone.", ["1 bone"], fact) == (
        "Craft 9 bone meal from 3 bone.",
        ["3 bone"],
    )
    assert agree("Craft 2 bone meal from 1 bone in a crafting table.", ["1 bone"], fact) == (
        "Craft 3 bone meal from 1 bone in a crafting table.",
        ["1 bone"],
    )
    # already in agreement, a multiple of the recipe, or not the quote's recipe: as written
    planks = "Crafting: 2 Oak Planks gives 4 Sticks."
    for step in (
        "Craft 4 sticks from 2 oak planks.",
        "Craft 8 sticks from 4 oak planks.",
        "Craft 4 sticks from 3 oak planks.",
        "Craft 4 sticks from 2 birch logs.",
        "Smelt 3 iron ingots from 3 raw iron.",
    ):
        assert agree(step, ["x"], planks) == (step, ["x"])
    assert agree("Craft 9 bone meal from 1 bone.", ["1 bone"], "Bone Meal: from bones.") == (
        "Craft 9 bone meal from 1 bone.",
        ["1 bone"],
    )
    # the product is the thing named exactly, though an input's name contains it (seen in a
    # tune run: "Craft 16 clay from 4 clay balls" was taken as agreeing with the quote)
    clay = "Crafting: 4 Clay Ball gives 1 Clay (2x2 shape)."
    assert agree("Craft 16 clay from 4 Clay Balls.", ["4 clay balls"], clay) == (
        "Craft 16 clay from 64 Clay Balls.",
        ["64 clay balls"],
    )


def test_a_recipe_takes_the_inputs_of_the_quote_that_makes_its_product() -> None:
    from rat_minecraft.mending import follow

    pickaxe = "Crafting: 3 Diamond + 2 Stick gives 1 Diamond Pickaxe. Needs a Crafting Table."
    assert follow(
        "Craft 1 diamond pickaxe from 3 iron ingots and 2 sticks in a crafting table.",
        ["3 iron ingots", "2 sticks", "a crafting table"],
        pickaxe,
    ) == (
        "Craft 1 diamond pickaxe from 3 diamond and 2 stick in a crafting table.",
        ["3 diamond", "2 stick", "a crafting table"],
    )
    # run as often as the count the step wrote takes
    assert (
        follow("Craft 2 diamond pickaxes from two diamonds and one iron ingot.", [], pickaxe)[0]
        == "Craft 2 diamond pickaxes from 6 diamond and 4 stick."
    )
    # what the quote uses in a role stays in that role, named once
    ingot = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) "
        "as fuel gives 1 Iron Ingot in a Furnace."
    )
    assert follow("Smelt 3 iron ingots from 3 iron nuggets in a furnace.", [], ingot) == (
        "Smelt 3 iron ingots from 3 raw iron using 3 oak planks as fuel in a furnace.",
        ["3 raw iron"],
    )
    assert (
        follow("Smelt 3 iron ingots from 3 nuggets using planks as fuel in a furnace.", [], ingot)[
            0
        ]
        == "Smelt 3 iron ingots from 3 raw iron using planks as fuel in a furnace."
    )
    # inputs the quote counts, in the step's words, or a quote with no recipe: as written
    for step, fact in (
        ("Craft 1 diamond pickaxe from 3 diamonds and 2 sticks.", pickaxe),
        ("Smelt 3 iron ingots from raw iron ore using planks as fuel in a furnace.", ingot),
        ("Craft 1 chest from 8 oak planks.", "Crafting: 8 Planks gives 1 Chest."),
        ("Mine 1 cobblestone from stone.", "Mining: mine Stone; it drops 1 Cobblestone."),
        ("Craft 1 diamond pickaxe from 3 iron ingots.", "Crafting: 2 Stick gives 1 Torch."),
    ):
        assert follow(step, ["x"], fact) == (step, ["x"])


def test_a_step_written_as_an_input_of_what_it_was_inserted_for_makes_that() -> None:
    from rat_minecraft.mending import redirect

    furnace = (
        "Crafting: 8 Cobblestone (or Blackstone) gives 1 Furnace (3x3 shape). "
        "Needs a Crafting Table (3x3 grid)."
    )
    mined = "Mine 8 cobblestones from the ground with a wooden pickaxe."
    assert redirect(mined, ["a wooden pickaxe"], "a furnace", furnace) == (
        "Craft 1 furnace from 8 cobblestone in a crafting table.",
        ["8 cobblestone"],
    )
    # run as often as the count it was inserted for takes; a role stays a role
    ingot = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) "
        "as fuel gives 1 Iron Ingot in a Furnace."
    )
    assert redirect("Mine 3 raw iron from iron ore.", [], "3 iron ingots", ingot) == (
        "Smelt 3 iron ingot from 3 raw iron using 3 oak planks as fuel in a furnace.",
        ["3 raw iron"],
    )
    sticks = "Crafting: 2 Planks gives 4 Stick. Fits the 2x2 grid: no Crafting Table needed."
    assert redirect("Craft 4 planks from 1 log.", [], "2 sticks", sticks)[0] == (
        "Craft 4 stick from 2 planks."
    )
    # an input named past where the step's product ends: written two levels down
    torch = (
        "Crafting: 1 Redstone Dust + 1 Stick gives 1 Redstone Torch (1x2 shape). "
        "Fits the 2x2 grid: no Crafting Table needed."
    )
    ore = (
        "Mine 1 redstone ore from a redstone ore block with an iron pickaxe (or better); "
        "it drops 4 Redstone Dust."
    )
    assert redirect(ore, ["an iron pickaxe"], "1 redstone torch", torch) == (
        "Craft 1 redstone torch from 1 redstone dust and 1 stick.",
        ["1 redstone dust", "1 stick"],
    )
    # it makes what it was inserted for; its product is no input of the quote's recipe;
    # the quote has no recipe for it, or no heading to take the verb from: as written
    for step, makes, fact in (
        ("Craft 1 furnace from 8 cobblestone.", "a furnace", furnace),
        ("Mine 8 stone with a wooden pickaxe.", "a furnace", furnace),
        ("Mine 3 raw iron.", "3 iron ingots", "Mining: mine Iron Ore; it drops 1 Raw Iron."),
        ("Mine 8 cobblestones.", "a furnace", "8 Cobblestone gives 1 Furnace."),
        ("Mine 8 cobblestones.", "", furnace),
    ):
        assert redirect(step, ["x"], makes, fact) == (step, ["x"])


def test_what_a_step_uses_is_needed_whether_listed_or_not() -> None:
    from rat_minecraft.mending import with_uses

    quote = "Some quote."
    table = "Craft 1 crafting table from 4 oak planks in a crafting table."
    assert with_uses(table, [], quote) == ["4 oak planks"]
    assert with_uses(table, ["4 planks", "a crafting table"], quote) == [
        "4 oak planks",
        "a crafting table",
    ]  # listed in other words: as the step says it
    # with no quote, nothing grounds what the step's words add
    assert with_uses(table, ["a crafting table"], "") == ["a crafting table"]
    # an uncounted input is used as many times as the product is made, not kept as a tool
    assert with_uses(
        "Smelt 3 iron ingots from raw iron in a furnace.", ["raw iron", "a furnace"], quote
    ) == ["3 raw iron", "a furnace"]
    assert with_uses(
        "Bake 2 cakes from 3 eggs, 2 cups of milk and the flour.", ["an oven"], quote
    ) == ["3 eggs", "2 cups of milk", "2 flour", "an oven"]
    # a source named with the product's name is no input; no recipe, nothing to read
    assert with_uses("Mine 3 diamonds from diamond ore.", ["an iron pickaxe"], quote) == [
        "an iron pickaxe"
    ]
    assert with_uses("Chop some logs from a tree.", ["an axe"], quote) == ["an axe"]


def test_what_a_step_burns_is_used_up_when_its_quote_counts_it() -> None:
    from rat_minecraft.mending import scale, with_uses

    fact = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) "
        "as fuel gives 1 Iron Ingot in a Furnace."
    )
    smelt = "Smelt 1 iron ingot from 1 raw iron using 1 oak planks as fuel in a furnace."
    # named after "using", yet the quote counts it: the step's own need even if not listed
    assert with_uses(smelt, ["a furnace"], fact) == ["1 raw iron", "1 oak planks", "a furnace"]
    made = [
        step("Craft 1 oak planks from 1 oak log.", makes="1 oak planks"),
        step("Craft a furnace.", makes="a furnace"),
    ]
    burned = step(smelt, ["1 raw iron", "1 oak planks", "a furnace"], makes="1 iron ingot")
    burned["fact"] = fact
    assert [left for _, left in ledger([*made, burned])] == [0, 1, 1]
    # the same planks with no quote counting them are a tool, kept
    kept = step(smelt, ["1 raw iron", "1 oak planks", "a furnace"], makes="1 iron ingot")
    assert [left for _, left in ledger([*made, kept])] == [1, 1, 1]
    # asked for as an amount, not as a thing to have once
    assert missing(["1 oak planks"], [], step=smelt, fact=fact) == ["1 oak planks"]
    # run three times, the step burns three times the fuel its quote counts
    assert scale(smelt, ["1 raw iron", "1 oak planks"], "3 iron ingot", fact) == (
        "Smelt 3 iron ingot from 3 raw iron using 3 oak planks as fuel in a furnace.",
        ["3 raw iron", "3 oak planks"],
    )


def test_what_a_step_names_as_its_tool_or_place_is_needed_once() -> None:
    from rat_minecraft.mending import with_uses
    from rat_minecraft.quotes import grounded

    fact = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) "
        "as fuel gives 1 Iron Ingot in a Furnace (or a Blast Furnace, faster)."
    )
    smelt = "Smelt 3 iron ingots from raw iron ore using oak planks as fuel in a furnace."
    # the fuel the quote counts is used up, as often as the step makes its product
    assert with_uses(smelt, [], fact) == ["3 raw iron ore", "3 oak planks", "a furnace"]
    mine = "Mine 3 cobblestone from the ground using a Wooden Pickaxe (or better)."
    cobble = "Mining: mine Stone with a Wooden Pickaxe (or better); it drops 1 Cobblestone."
    assert with_uses(mine, [], cobble)[-1] == "a wooden pickaxe"
    # no thing to have: hands, the ground
    assert with_uses("Craft 4 oak planks from 1 oak log with your hands.", [], "by hand") == [
        "1 oak log"
    ]
    # named by the step, but a quote that says it is not needed does not ground it
    planks = "Crafting: 1 Oak Log gives 4 Oak Planks. No Crafting Table needed."
    needs = with_uses("Craft 4 oak planks from 1 oak log in a crafting table.", [], planks)
    assert needs == ["1 oak log", "a crafting table"]
    assert grounded(needs, planks) == ["1 oak log"]


def test_a_need_is_asked_for_without_the_asides_of_the_page_it_came_from() -> None:
    smelt = "Smelt 3 bricks from 3 clay balls in a furnace."
    assert missing(["a Furnace (or a Smoker, faster)", "3 clay balls (any)"], [], step=smelt) == [
        "a Furnace",
        "3 clay balls",
    ]


def test_steps_dropped_unchecked_take_none_of_the_repair_budget() -> None:
    from rat_agent.repair.plan import inserted_count, meta_at

    meta = [{**meta_at([], 0), "makes": need} for need in ("2 logs", "a table", "a table")]
    checked = step("", makes="2 logs", status="dropped")
    checked["fact"] = "Logs: not needed here."  # the model read it and dropped it: a call
    assert inserted_count(meta) == 3
    assert inserted_count(meta, [checked, step("", makes="a table", status="dropped")]) == 2


@pytest.mark.parametrize(
    ("text", "goal", "makes"),
    [
        ("Craft 1 block of redstone from 9 redstone dust.", "Redstone Block", True),
        ("Craft 1 wooden pickaxe from 3 planks and 2 sticks.", "a wooden pickaxe", True),
        ("Mine 3 diamonds from diamond ore with an iron pickaxe.", "Diamond", True),
        # seen in a held-out plan: the ore's words hold the goal's, but it is not the goal
        ("Mine 9 blocks of deepslate redstone ore using an iron pickaxe.", "Redstone Block", False),
        ("Craft 4 planks for the chest from 1 log.", "Chest", False),  # made for it
        ("Mine diamond ore with an iron pickaxe.", "Diamond", False),  # no count: no product
        ("Craft 2 torches from 1 coal and 1 stick.", "4 torches", False),  # too few
        ("Craft 4 torches from 1 coal and 1 stick.", "4 torches", True),
    ],
)
def test_a_step_makes_the_goal_only_when_its_product_is_the_goal(
    text: str, goal: str, makes: bool
) -> None:
    assert makes_goal(text, goal) is makes


def test_a_checked_draft_step_makes_what_it_says() -> None:
    """A step of the model's own draft, once checked against a quote, counts in the ledger
    like an inserted one: the pickaxe's sticks are not inserted again. Unchecked (no quote,
    e.g. no documents), it provides nothing."""
    sticks = step("Craft 4 sticks from 2 planks.", needs=["2 planks"])
    assert missing(["2 sticks", "a crafting table"], [sticks]) == ["2 sticks", "a crafting table"]
    sticks["fact"] = "1a. 2 Planks gives 4 Sticks."
    table = step("Craft 1 crafting table from 4 planks.", needs=["4 planks"])
    table["fact"] = "1a. 4 Planks gives 1 Crafting Table."
    assert ledger([sticks])[0][1] == 4
    assert missing(["2 sticks", "a crafting table"], [sticks, table]) == []
    assert missing(["5 sticks"], [sticks, table]) == ["5 sticks"]


def test_the_tool_of_a_step_off_the_template_is_needed_too() -> None:
    """A step with no count or no "from" (a page's mining line, copied) still needs the
    tool it names, up to where its clause ends; what it names without an article is no
    thing to have."""
    from rat_minecraft.mending import with_uses

    fact = (
        "Mining: mine Redstone Ore with an Iron Pickaxe (or better); it drops 4-5 Redstone "
        "Dust. By hand or with a weaker tool it drops nothing."
    )
    copied = (
        "Mine 1 redstone ore or deepslate redstone ore with an iron pickaxe (or better); it "
        "drops 4-5 Redstone Dust. By hand or with a weaker tool it drops nothing."
    )
    assert with_uses(copied, [], fact) == ["an iron pickaxe"]
    assert with_uses(copied, ["An Iron Pickaxe"], fact) == ["an iron pickaxe"]
    before_from = "Mine gold ore with an iron pickaxe from the ground."
    assert with_uses(before_from, ["1 torch"], fact) == ["an iron pickaxe", "1 torch"]
    assert with_uses("Mine stone with a wooden pickaxe to get cobblestone.", [], fact) == [
        "a wooden pickaxe"
    ]
    assert with_uses("Punch a tree trunk with your fists.", ["tree trunk"], fact) == ["tree trunk"]
    assert with_uses(copied, [], "") == []  # no quote: the needs as listed


def test_a_tool_or_place_the_quote_does_not_name_leaves_the_step() -> None:
    from rat_minecraft.mending import without_unnamed_tools

    sand = "Crafting: 4 Sand gives 1 Sandstone (2x2 shape). Fits the 2x2 inventory grid: no "
    sand += "Crafting Table needed."
    assert (
        without_unnamed_tools("Craft 1 sandstone from 4 sand using a wooden Pickaxe.", sand)
        == "Craft 1 sandstone from 4 sand."
    )
    # named only to say it is not needed: not named
    assert (
        without_unnamed_tools("Craft 1 sandstone from 4 sand in a crafting table.", sand)
        == "Craft 1 sandstone from 4 sand."
    )
    smelt = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) as "
        "fuel gives 1 Iron Ingot in a Furnace (or a Blast Furnace, faster)."
    )
    kept = "Smelt 3 iron ingots from raw iron using oak planks as fuel in a furnace."
    assert without_unnamed_tools(kept, smelt) == kept  # each one named: kept, roles and all
    assert (
        without_unnamed_tools("Smelt 3 iron ingots from raw iron using coal in a furnace.", smelt)
        == "Smelt 3 iron ingots from raw iron in a furnace."
    )
    assert without_unnamed_tools(kept, "") == kept  # no quote: nothing to judge by
    # the quote names the product, but the step cannot happen in what it makes
    table = "Crafting: 4 Oak Planks gives 1 Crafting Table (2x2). " + quotes.NO_TABLE
    for place in ("in a crafting table", "using the Crafting Table", "with a crafting table"):
        assert (
            without_unnamed_tools(f"Craft 1 crafting table from 4 oak planks {place}.", table)
            == "Craft 1 crafting table from 4 oak planks."
        )
    furnace = "Crafting: 8 Cobblestone gives 1 Furnace (3x3). " + quotes.NEEDS_TABLE
    needed = "Craft 1 furnace from 8 cobblestone in a crafting table."
    assert without_unnamed_tools(needed, furnace) == needed  # a table it needs stays
    assert without_unnamed_tools("Chop a tree with an axe.", smelt) == "Chop a tree with an axe."


def test_names_of_another_kind_of_thing_do_not_match() -> None:
    """The last word says what a thing is: clay balls are not clay, bone is not bone meal,
    though one name contains the other."""
    from rat_minecraft.mending import makes_from_itself, with_uses
    from rat_minecraft.names import product

    clay = "Craft 8 clay from 32 clay balls."
    # what the step uses is no loop of what it makes
    assert missing(["32 clay balls"], [], waiting=["8 clay"], step=clay) == ["32 clay balls"]
    bone = "Craft 3 bone meal from 1 bone."
    assert missing(["1 bone"], [], waiting=["1 bone meal"], step=bone) == ["1 bone"]
    # nor does clay in stock serve a need for clay balls
    assert missing(["4 clay balls"], [step(clay, makes="8 clay")]) == ["4 clay balls"]
    assert with_uses(clay, [], "Crafting: 4 Clay Ball gives 1 Clay.") == ["32 clay balls"]
    assert not makes_from_itself(clay)
    # a modifier still names the same thing
    assert missing(["8 planks"], [step("Craft 8 oak planks.", makes="8 oak planks")]) == []
    # a step's product ends where its tool begins
    assert product("Mine 8 cobblestone with a pickaxe.") == item("8 cobblestone")
    assert product("Craft 4 sticks for the pickaxe, in a crafting table.") == item("4 sticks")


def test_a_step_that_needs_a_tool_its_sources_never_name_is_unsupported() -> None:
    """Seen in a tune run (iron bars): "Use a compass to find the direction of the ore",
    quoting a line on mining iron ore; the plan failed there."""
    from rat_minecraft.ledger import unsupported

    mining = "Mining: mine Iron Ore with a Stone Pickaxe (or better); it drops Raw Iron."
    compass = "Use a compass to find the direction of the ore."
    assert unsupported(["compass"], compass, mining, []) == ["compass"]
    # made by an earlier step, it is no longer the model's own idea
    assert (
        unsupported(["compass"], compass, mining, [step("Craft 1 compass.", makes="a compass")])
        == []
    )
    # a tool the quote names, a place the step takes from, a need the step does not name,
    # and a step that makes an amount of something are all kept
    assert (
        unsupported(["a stone pickaxe"], "Mine iron ore using a stone pickaxe.", mining, []) == []
    )
    assert unsupported(["ground"], "Mine iron ore from the ground.", mining, []) == []
    sticks = "Crafting: 2 Oak Planks gives 4 Stick. No Crafting Table needed."
    assert unsupported(["a crafting table"], "Craft 4 sticks from 2 planks.", sticks, []) == []
    assert unsupported(["a furnace"], "Smelt 1 iron ingot in a furnace.", mining, []) == []


def test_a_step_with_no_inputs_gets_as_many_as_it_was_inserted_for() -> None:
    """Seen in a tune run (gold block): "Get 3 oak log." written as "Punch a tree trunk by
    hand to get 1 Oak Log from the trees."; the ledger counted 3 logs, the plan had 1."""
    from rat_minecraft.mending import scale

    punch = "Punch a tree trunk by hand to get 1 Oak Log from the trees."
    assert scale(punch, ["tree trunk"], "3 oak log") == (
        "Punch a tree trunk by hand to get 3 Oak Log from the trees.",
        ["tree trunk"],
    )
    assert scale("Mine 3 cobblestone with a pickaxe.", [], "8 cobblestone")[0] == (
        "Mine 8 cobblestone with a pickaxe."
    )
    # "from" a place, no counted input: as many, not 9 (seen in the demo, reused for a furnace)
    assert (
        scale("Mine 3 cobblestones from the ground using a wooden pickaxe.", [], "8 cobblestone")[0]
        == "Mine 8 cobblestones from the ground using a wooden pickaxe."
    )
    # named with no count (seen in a tune run, slime block): it says the amount
    assert scale("Drop a slimeball from a nearby mob.", [], "9 slimeballs")[0] == (
        "Drop a slimeball from a nearby mob to get 9 slimeballs."
    )
    assert scale("Punch a tree by hand to get an Oak Log.", [], "3 oak log")[0] == (
        "Punch a tree by hand to get 3 Oak Log."
    )
    assert scale("Drop a bone from a Skeleton.", [], "1 bone")[0] == (
        "Drop a bone from a Skeleton to get 1 bone."
    )
    assert scale("Get an oak log.", [], "1 oak log")[0] == "Get 1 oak log."
    # enough already, another thing, or an uncounted need: as written
    for step in (punch, "Kill 1 slime to get 1 slimeball."):
        assert scale(step, [], "1 oak log")[0] == step
    for step in ("Get an oak log.", "Kill a spider."):
        assert scale(step, [], "3 string")[0] == step
    assert scale("Get a crafting table.", [], "a crafting table")[0] == "Get a crafting table."


def test_a_recipe_in_its_own_words_for_more_than_its_inputs_make_runs_more_times() -> None:
    """Seen in a tune run (iron bars): "Smelt 6 iron ingots from 1 raw iron ore and 1 oak
    plank" against "1 Raw Iron (or Iron Ore) + 1 Oak Planks as fuel gives 1 Iron Ingot"."""
    from rat_minecraft.mending import agree

    fact = (
        "Smelting: 1 Raw Iron (or Iron Ore) + 1 Oak Planks (or Planks of any other kind) as "
        "fuel gives 1 Iron Ingot in a Furnace."
    )
    step = "Smelt 6 iron ingots from 1 raw iron ore and 1 oak plank in a furnace."
    assert agree(step, ["1 raw iron ore", "1 oak plank", "a furnace"], fact) == (
        "Smelt 6 iron ingots from 6 raw iron ore and 6 oak plank in a furnace.",
        ["6 raw iron ore", "6 oak plank", "a furnace"],
    )


def test_a_recipe_step_takes_the_verb_its_quote_names() -> None:
    from rat_minecraft.mending import heading_verb

    dye = (
        "Crafting: 1 Bone Meal (or Lily of the Valley) gives 1 White Dye (shapeless). "
        "Fits the 2x2 inventory grid: no Crafting Table needed."
    )
    assert heading_verb("Mix 1 white dye from 1 bone meal.", dye) == (
        "Craft 1 white dye from 1 bone meal."
    )
    cut = "Stonecutting: 1 Stone gives 2 Stone Slab. Needs a Stonecutter."
    assert heading_verb("Cut 2 stone slab from 1 stone in a stonecutter.", cut) == (
        "Stonecut 2 stone slab from 1 stone in a stonecutter."
    )
    # the verb it has already; a quote line with no inputs (mining), or no heading, or
    # another product; a step that is no recipe: as written
    ore = "Mining: mine Iron Ore with a Stone Pickaxe; it drops 1 Raw Iron."
    for step, fact in (
        ("Craft 1 white dye from 1 bone meal.", dye),
        ("Dig 1 raw iron from iron ore.", ore),
        ("Mix 1 white dye from 1 bone meal.", "1 Bone Meal gives 1 White Dye."),
        ("Mix 2 cyan dye from 1 green dye and 1 lapis.", dye),
        ("Mix the bone meal into white dye.", dye),
    ):
        assert heading_verb(step, fact) == step
