"""Plan length against the reference planner, and the steps a plan can do without."""

from __future__ import annotations

from rat_agent.eval.runner import Result
from rat_minecraft import plans
from rat_minecraft.planner import reference_plan
from rat_minecraft.simulator import needless_steps
from rat_minecraft.tasks import load_tasks

TABLE = """STEP 1: Mine 1 oak log
STEP 2: Craft 4 oak planks from 1 oak log
STEP 3: Craft 1 crafting table from 4 oak planks"""


def test_no_reference_plan_has_a_needless_step() -> None:
    assert [t.goal for t in load_tasks() if needless_steps(t.goal, reference_plan(t.goal))] == []


def test_a_second_batch_the_plan_never_uses_is_needless() -> None:
    plan = (
        "STEP 1: Mine 2 oak logs\n"
        "STEP 2: Craft 4 oak planks from 1 oak log\n"
        "STEP 3: Craft 4 oak planks from 1 oak log\n"
        "STEP 4: Craft 1 crafting table from 4 oak planks"
    )
    assert needless_steps("crafting_table", plan) == [3]


def test_a_tool_never_swung_is_needless() -> None:
    plan = (
        "STEP 1: Mine 3 oak logs\n"
        "STEP 2: Craft 12 oak planks from 3 oak logs\n"
        "STEP 3: Craft 4 sticks from 2 oak planks\n"
        "STEP 4: Craft 1 crafting table from 4 oak planks\n"
        "STEP 5: Craft 1 wooden sword from 2 oak planks and 1 stick using the crafting table\n"
        "STEP 6: Craft 1 wooden pickaxe from 3 oak planks and 2 sticks using the crafting table"
    )
    assert needless_steps("wooden_pickaxe", plan) == [5]


def test_notes_are_not_counted_and_a_plan_that_fails_has_none() -> None:
    noted = TABLE + "\nSTEP 4: Place the crafting table on the ground"
    assert needless_steps("crafting_table", noted) == []
    assert needless_steps("crafting_table", TABLE.replace("Mine 1 oak log", "Mine 1 stone")) is None
    assert needless_steps("crafting_table", "no steps here") is None


def result(method: str, task: str, answer: str) -> Result:
    return Result(f"{method}-{task}", task, method, "fake", 0.0, None, "", answer)


def test_the_table_sets_each_plan_against_the_reference() -> None:
    goal = next(t for t in load_tasks() if t.goal == "crafting_table")
    reference = plans.reference_length("crafting_table")
    doubled = TABLE.replace("Mine 1 oak log", "Mine 2 oak logs") + (
        "\nSTEP 4: Craft 4 oak planks from 1 oak log"
    )
    rows = plans.table(
        [result("rat", goal.id, doubled), result("direct", goal.id, "STEP 1: Craft a table")]
    ).splitlines()
    assert rows[2] == f"| rat | 1 | 4 | {reference} | {4 / reference:.2f} | 1 | 25% |"
    assert rows[3] == f"| direct | 1 | 1 | {reference} | {1 / reference:.2f} | 0 | - |"
