"""Focused evidence: a document's passages, as any source writes them."""

from __future__ import annotations

from rat_agent.agent.evidence import passages

CONF = """################################ MEMORY MANAGEMENT ################################

# Set a memory usage limit to the specified amount of bytes.
# When the memory limit is reached Redis will try to remove keys
# according to the eviction policy selected (see maxmemory-policy).
#
# maxmemory <bytes>
"""


def test_a_commented_paragraph_is_one_passage_and_a_setting_line_its_own() -> None:
    assert {heading for heading, _ in passages(CONF)} == {"MEMORY MANAGEMENT"}
    assert [text for _, text in passages(CONF)] == [
        "Set a memory usage limit to the specified amount of bytes. When the memory limit is "
        "reached Redis will try to remove keys according to the eviction policy selected "
        "(see maxmemory-policy).",
        "maxmemory <bytes>",
    ]


def test_list_items_stay_apart_under_their_heading() -> None:
    page = (
        "Diamond\n\nHow to obtain Diamond:\n- Mining: mine Diamond Ore.\n"
        "- Crafting: 1 Block of Diamond gives 9 Diamond.\n"
    )
    assert passages(page) == [
        ("How to obtain Diamond:", "Mining: mine Diamond Ore."),
        ("How to obtain Diamond:", "Crafting: 1 Block of Diamond gives 9 Diamond."),
    ]


def test_wrapped_prose_joins_and_a_long_paragraph_is_cut_at_sentences() -> None:
    text = "The ferry leaves at 7:15\nevery weekday.\n\n" + " ".join(
        f"Sentence number {n} says something about the harbour." for n in range(20)
    )
    found = [text for _, text in passages(text)]
    assert found[0] == "The ferry leaves at 7:15 every weekday."
    assert len(found) > 2 and all(len(p) <= 400 for p in found[1:])
    assert " ".join(found[1:]).startswith("Sentence number 0 says")
