"""The corpus's recipe lines, written and read by one module (minecraft/quotes.py): what
the corpus writes is what plan repair reads back."""

from __future__ import annotations

from rat_minecraft import quotes
from rat_minecraft.corpus import build_pages
from rat_minecraft.names import item


def test_a_crafting_line_reads_back_as_written() -> None:
    line = quotes.crafting(["3 Diamond", "2 Stick"], 1, "Diamond Pickaxe", "3x3 shape", table=True)
    assert line == (
        "Crafting: 3 Diamond + 2 Stick gives 1 Diamond Pickaxe (3x3 shape). "
        "Needs a Crafting Table (3x3 grid)."
    )
    heading = quotes.HEADING.match(line)
    assert heading is not None and quotes.verb(heading) == "Craft"
    found = quotes.recipe(line, lambda out: out.words == item("diamond pickaxe").words)
    assert found == ("1 diamond pickaxe", ["3 diamond", "2 stick"])
    assert quotes.place(line, heading) == "a crafting table"
    assert quotes.grounded(["3 diamonds", "a crafting table", "an anvil"], line) == [
        "3 diamonds",
        "a crafting table",
    ]


def test_a_small_recipe_says_no_table_is_needed() -> None:
    line = quotes.crafting(["1 Oak Log"], 4, "Oak Planks", "shapeless", table=False)
    heading = quotes.HEADING.match(line)
    assert heading is not None
    assert quotes.place(line, heading) is None  # "no Crafting Table needed" is no place
    assert quotes.grounded(["a crafting table", "1 oak log"], line) == ["1 oak log"]


def test_a_smelting_line_reads_back_as_written() -> None:
    line = quotes.smelting("Raw Iron", "Iron Ingot", faster="a Blast Furnace")
    heading = quotes.HEADING.match(line)
    assert heading is not None and quotes.verb(heading) == "Smelt"
    found = quotes.recipe(line, lambda out: out.words == item("iron ingot").words)
    assert found is not None and found[0] == "1 iron ingot"
    assert found[1] == ["1 raw iron", "1 oak planks"]
    assert quotes.role(line, "1 oak planks") == "fuel"
    assert quotes.role(line, "1 raw iron") is None
    assert quotes.place(line, heading) == "a furnace"


def test_the_corpus_writes_its_recipes_with_these_writers() -> None:
    pages = {page.title: page.text for page in build_pages()}
    assert (
        quotes.crafting(["3 Diamond", "2 Stick"], 1, "Diamond Pickaxe", "3x3 shape", table=True)
        in pages["Diamond Pickaxe"]
    )
    source = "Raw Iron (or Iron Ore or Deepslate Iron Ore)"
    assert quotes.smelting(source, "Iron Ingot", faster="a Blast Furnace") in pages["Iron Ingot"]
    mining = [line for line in pages["Diamond"].splitlines() if quotes.MINING in line]
    assert mining and quotes.HEADING.match(mining[0].removeprefix("- ")) is not None
