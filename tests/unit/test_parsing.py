"""Draft splitting and reply cleaning: many shapes, and no text ever lost."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rat_agent.parsing import (
    BULLET_MARKER,
    NUMBER_MARKER,
    STEP_MARKER,
    clean_query,
    clean_reply,
    drop_repeats,
    merge_tail,
    normalize,
    paragraphs,
    parse_thought,
    pick_step,
    revision,
    split_steps,
    strip_thinking,
)
from rat_agent.repair.reply import Revision, parse_revision
from rat_minecraft.ledger import goal_name

# Step texts that cannot themselves look like list markers or code fences.
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
step_text = st.lists(words, min_size=1, max_size=8).map(" ".join)
steps_list = st.lists(step_text, min_size=2, max_size=12)

SHAPES = {
    "step": lambda steps: "\n".join(f"STEP {n}: {s}" for n, s in enumerate(steps, 1)),
    "bold_step": lambda steps: "\n".join(f"**Step {n}:** {s}" for n, s in enumerate(steps, 1)),
    "numbered": lambda steps: "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1)),
    "paren": lambda steps: "\n".join(f"{n}) {s}" for n, s in enumerate(steps, 1)),
    "bullets": lambda steps: "\n".join(f"- {s}" for s in steps),
    "stars": lambda steps: "\n".join(f"* {s}" for s in steps),
    "paragraphs": lambda steps: "\n\n".join(steps),
    "think_then_steps": lambda steps: (
        "<think>let me see\n1. x\n2. y</think>\n"
        + "\n".join(f"STEP {n}: {s}" for n, s in enumerate(steps, 1))
    ),
    "fenced": lambda steps: (
        "```\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1)) + "\n```"
    ),
}


@given(steps_list, st.sampled_from(sorted(SHAPES)))
def test_every_shape_round_trips(steps: list[str], shape: str) -> None:
    assert split_steps(SHAPES[shape](steps)) == steps


@given(steps_list)
def test_markdown_headings_start_steps(steps: list[str]) -> None:
    text = "\n".join(f"## Part {n}\n{s}" for n, s in enumerate(steps, 1))
    assert split_steps(text) == [f"## Part {n}\n{s}" for n, s in enumerate(steps, 1)]


@given(st.text(max_size=400))
def test_no_line_is_lost(text: str) -> None:
    """Whatever the shape, every line's words land in some step (markers aside)."""
    joined = "\n".join(split_steps(text))
    visible = strip_thinking(text)
    for line in visible.splitlines():
        if line.strip().startswith("```"):
            continue
        for pattern in (STEP_MARKER, NUMBER_MARKER, BULLET_MARKER):
            line = pattern.sub("", line, count=1)
        line = re.sub(r"^[*_]+\s*", "", line.strip())
        assert line.strip() in joined


def test_one_long_paragraph_is_split_into_sentences() -> None:
    sentences = [f"Sentence number {n} talks about crafting a thing with tools." for n in range(12)]
    assert split_steps(" ".join(sentences)) == sentences


def test_short_single_paragraph_is_one_step() -> None:
    assert split_steps("Mine some logs.") == ["Mine some logs."]


def test_preamble_joins_the_first_step() -> None:
    text = "Here is the plan:\nSTEP 1: mine logs\nSTEP 2: craft planks"
    assert split_steps(text) == ["Here is the plan:\nmine logs", "craft planks"]


def test_sub_bullets_stay_inside_their_step() -> None:
    text = "STEP 1: gather\n- 3 logs\n- 2 sticks\nSTEP 2: craft"
    assert split_steps(text) == ["gather\n- 3 logs\n- 2 sticks", "craft"]


@given(st.lists(step_text, min_size=1, max_size=20), st.integers(min_value=1, max_value=10))
def test_merge_tail_bounds_and_keeps_everything(steps: list[str], limit: int) -> None:
    merged = merge_tail(steps, limit)
    assert len(merged) == min(len(steps), limit)
    assert "\n".join(merged) == "\n".join(steps)


def test_clean_reply_drops_thinking_fences_and_labels() -> None:
    assert clean_reply("<think>no</think>Revised step 2: craft planks") == "craft planks"
    assert clean_reply("```text\n**Revised STEP 3:** use 4 planks\n```") == "use 4 planks"
    assert clean_reply("reasoning here</think>\nAnswer: yes") == "yes"


def test_clean_query_takes_the_first_real_line() -> None:
    assert clean_query('Search query: "diamond pickaxe recipe"\nbecause...') == (
        "diamond pickaxe recipe"
    )
    assert clean_query("<think>x</think>\n\n- iron ore tool") == "iron ore tool"
    assert clean_query("  \n ...") == ""


def test_a_goal_is_the_name_without_the_verb_and_setting_around_it() -> None:
    assert goal_name("Obtain sandstone in Minecraft survival mode") == "sandstone"
    assert goal_name("To craft a diamond pickaxe.") == "a diamond pickaxe"
    assert goal_name('"Gold block"\nIt is made of gold.') == "Gold block"
    assert goal_name("Block of Gold") == "Block of Gold"  # "of" is part of a name
    assert goal_name("Getting in") == "Getting in"  # nothing left: the reply as it was


def test_an_answers_paragraphs_give_it_back_word_for_word() -> None:
    """Drafts "direct" and "rag": a paragraph a step, verbatim; a blank line inside a code
    fence does not end one, a rule joins the paragraph before it, a tail past the limit the
    last step."""
    answer = "Set two keys:\n\n```ini\na = 1\n\nb = 2\n```\n\n---\n\n1. Then\n2. restart."
    steps = paragraphs(answer, 8)
    assert steps == ["Set two keys:", "```ini\na = 1\n\nb = 2\n```\n\n---", "1. Then\n2. restart."]
    assert "\n\n".join(steps) == answer
    assert paragraphs(answer, 2) == ["Set two keys:", answer.split("\n\n", 1)[1]]


def test_a_step_that_is_a_list_is_revised_as_a_list() -> None:
    """An answer's paragraph may be a numbered list: the reply is that paragraph revised,
    whole and as written, not item `number` of it."""
    draft = "1. Open php.ini.\n2. Find `session.save_path`.\n3. Set it to `2;/tmp`."
    reply = "1. Open php.ini.\n2. Find `session.save_path`.\n3. Set it to `2;/var/lib`."
    assert revision(reply, draft, 3) == (reply, True, [])
    assert revision("STEP 3: set it", "set it to 2", 3).text == "set it"  # one step: its label off


def test_pick_step_keeps_the_current_one_from_a_whole_plan() -> None:
    reply = "STEP 1: mine logs\nSTEP 2: craft 4 planks\nSTEP 3: build a table"
    assert pick_step(reply, 2) == "craft 4 planks"
    assert pick_step("STEP 2: craft 4 planks", 2) == "craft 4 planks"
    assert pick_step("craft 4 planks\nfrom 1 log", 2) == "craft 4 planks\nfrom 1 log"


def test_drop_repeats_removes_a_model_loop_only() -> None:
    looped = ["find ore", "mine it", "Mine it.", "mine it", "craft pick", "mine it"]
    assert drop_repeats(looped) == ["find ore", "mine it", "craft pick", "mine it"]
    cycling = ["a", "get log", "make planks"] + ["get log", "make planks"] * 3 + ["z"]
    assert drop_repeats(cycling) == ["a", "get log", "make planks", "z"]
    assert drop_repeats(["a b", "b a"]) == ["a b", "b a"]
    plan = ["mine log", "craft planks", "craft table", "mine log", "craft planks", "craft stick"]
    assert drop_repeats(plan) == plan  # steps recurring apart are real


def test_normalize_ignores_layout_but_not_words() -> None:
    assert normalize("Obtain a pickaxe.\n- Two diamonds") == normalize(
        "obtain a Pickaxe two diamonds"
    )
    assert normalize("3 diamonds") != normalize("2 diamonds")


def test_a_single_step_label_is_stripped() -> None:
    assert split_steps("STEP 1: chop a log") == ["chop a log"]


def test_fenced_code_keeps_its_indentation_comments_and_blank_lines() -> None:
    code = "```python\nfor i in range(n):\n    # compare\n\n    if x:\n        return True\n```"
    draft = f"STEP 1: Loop over pairs.\n{code}\nSTEP 2: Return False."
    assert split_steps(draft) == [f"Loop over pairs.\n{code}", "Return False."]
    # a draft that is all code: its "# comments" are not headings that split it
    only_code = "```python\n# parse\ndef f(s):\n    # split\n    return s.split()\n```"
    assert split_steps(only_code) == [only_code]
    assert pick_step(code, 2) == code


def test_indented_lines_keep_their_relative_indentation() -> None:
    text = "STEP 1: Write the loop:\n    for x in xs:\n        total += x\nSTEP 2: return total"
    assert split_steps(text) == ["Write the loop:\nfor x in xs:\n    total += x", "return total"]


def test_fences_around_prose_go_but_code_fences_stay() -> None:
    assert clean_reply("```\ncraft planks\n```") == "craft planks"
    assert clean_reply("```markdown\n1. mine\n2. craft\n```") == "1. mine\n2. craft"
    code = "```\ndef f():\n    return 1\n```"
    assert clean_reply(code) == code


@pytest.mark.parametrize(
    ("reply", "verdict", "text"),
    [
        (
            "CONFIDENT: 1\nTHOUGHT: Sticks come from two planks.",
            "confident",
            "Sticks come from two planks.",
        ),
        (
            "**Confidence:** yes\n**Thought:** Sticks come from two planks.",
            "confident",
            "Sticks come from two planks.",
        ),
        ("1\nSticks come from two planks.", "confident", "Sticks come from two planks."),
        (
            "CONFIDENT: 1 THOUGHT: Sticks come from two planks.",
            "confident",
            "Sticks come from two planks.",
        ),
        (
            "<think>is it real?</think>CONFIDENT: 1\nTHOUGHT: Sticks come from two planks.",
            "confident",
            "Sticks come from two planks.",
        ),
        ("CONFIDENT: 0", "not confident", ""),
        ("0", "not confident", ""),
        ("Confident: no\nThought: it cannot be answered", "not confident", ""),
        ("CONFIDENT: 1 (sure)", "unreadable", ""),  # confident, but no thought
        ("CONFIDENT: 1\nTHOUGHT: CONFIDENT: 1", "unreadable", ""),
        ("Sticks come from two planks.", "unreadable", ""),
        ("THOUGHT: Sticks come from two planks.\nCONFIDENT: 1", "unreadable", ""),
        ("CONFIDENT: 10\nTHOUGHT: x y z", "unreadable", ""),
        ("", "unreadable", ""),
    ],
)
def test_thought_replies_fail_closed(reply: str, verdict: str, text: str) -> None:
    assert parse_thought(reply) == (verdict, text)


# --- the grounded revision --------------------------------------------------------------


def test_grounded_json_reply_gives_fact_step_and_needs() -> None:
    reply = (
        '{"fact": "2a. Bread: bake 1 loaf of dough in an oven.", '
        '"step": "STEP 3: Bake 1 loaf of dough in an oven.", '
        '"needs": ["1 loaf of dough", "an oven", "none"]}'
    )
    found = parse_revision(reply, 3)
    assert found == Revision(
        "Bake 1 loaf of dough in an oven.",
        "Bread: bake 1 loaf of dough in an oven.",
        ["1 loaf of dough", "an oven"],
    )


def test_grounded_labelled_lines_with_emphasis_and_run_on_values() -> None:
    reply = (
        "**FACT:** 1b. Knead for 10 minutes.\n**STEP:** Knead the dough\nfor 10 minutes.\n"
        "**NEEDS:** 1 dough; a bowl"
    )
    found = parse_revision(reply, 1)
    assert found.fact == "Knead for 10 minutes."
    assert found.step == "Knead the dough\nfor 10 minutes."
    assert found.needs == ["1 dough", "a bowl"]


def test_a_dropped_step_keeps_its_reason() -> None:
    assert (
        parse_revision("FACT: none\nSTEP: DROP: the oven is already hot\nNEEDS: none", 2).drop
        == "the oven is already hot"
    )
    assert (
        parse_revision('{"fact": "x", "step": "DROP", "needs": []}', 2).drop
        == "the task does not need it"
    )
    assert parse_revision('{"fact": "x", "step": "dropped - done", "needs": []}', 2).drop == "done"
    assert parse_revision("STEP: DROP the step, it repeats step 1", 2).drop == (
        "the step, it repeats step 1"
    )


def test_a_step_whose_verb_is_drop_is_a_step() -> None:
    """Seen on the 1.5B model: "Drop a slimeball from a nearby mob." read as DROP lost the
    step it wrote for 9 slimeballs, three times, and the slime block had none."""
    found = parse_revision('{"fact": "x", "step": "Drop a slimeball from a mob.", "needs": []}', 2)
    assert found.drop is None and found.step == "Drop a slimeball from a mob."
    assert parse_revision("STEP: drop 3 seeds into the composter", 2).drop is None


def test_a_reply_that_ignores_the_format_still_keeps_its_correction() -> None:
    found = parse_revision("Bake the dough at 220 C for 30 minutes.", 2)
    assert found.step == "Bake the dough at 220 C for 30 minutes." and found.needs == []
    found = parse_revision("STEP 2: Bake at 220 C.\nNEEDS: an oven", 2)
    assert found.step == "Bake at 220 C." and found.needs == ["an oven"]


def test_needs_ignore_nothing_words_duplicates_and_sentences() -> None:
    found = parse_revision(
        '{"fact": "x", "step": "y z w", "needs": ["None", "an oven", '
        '"An oven", "' + "x" * 120 + '"]}',
        1,
    )
    assert found.needs == ["an oven"]


def test_a_json_revision_cut_at_max_tokens_keeps_only_finished_fields() -> None:
    cut = parse_revision('{"fact": "1a. Chest: 8 Planks", "step": "Craft 1 ch', 1)
    assert (cut.step, cut.fact) == ("", "Chest: 8 Planks")  # no half step: the draft stays
    done = parse_revision(
        '{"fact": "1a. Chest: 8 Planks", "step": "Craft 1 \\"big\\" chest", "needs": ["8 pl', 1
    )
    assert (done.step, done.needs) == ('Craft 1 "big" chest', [])


def test_steps_written_on_one_line_are_split() -> None:
    assert split_steps("STEP 1: Do a. STEP 2: Do b.  STEP 3: Do c.") == ["Do a.", "Do b.", "Do c."]
    assert split_steps("Use the STEP 2: label.") == ["Use the STEP 2: label."]  # not a step line
