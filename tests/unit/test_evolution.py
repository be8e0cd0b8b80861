"""The self-evolution benchmark's plumbing: both arms, memory growing, resume, reports.

A scripted model and a fixed list of corpus pages make every number exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, revision
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from rat_agent import build_graph
from rat_minecraft import evolution
from rat_minecraft.tasks import load_tasks

PLANKS = "Four oak planks are crafted from one oak log, in the inventory grid."


pytestmark = pytest.mark.usefixtures("fresh_data")  # conftest.py


def scripted() -> ScriptedModel:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: mine 1 oak log\nSTEP 2: craft 4 oak planks from the log"
        if kind == "query":
            return current_step(messages)
        if kind == "revise":
            return revision(messages, current_step(messages))
        if kind == "thought":
            return f"CONFIDENT: 1\nTHOUGHT: {PLANKS}"
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def pages() -> ListRetriever:
    return ListRetriever(
        documents=[
            Document(
                page_content="Oak Log: mined from oak trees by hand.",
                metadata={"title": "Oak Log", "source": "minecraft-corpus:oak_log"},
            )
        ]
    )


def test_coverage_counts_pages_and_thoughts_naming_an_item() -> None:
    steps = [
        {
            "sources": [
                {
                    "kind": "document",
                    "source": "minecraft-corpus:stick",
                    "title": "Stick",
                    "snippet": "...",
                },
                {
                    "kind": "thought",
                    "source": "thought:1",
                    "title": "Thought",
                    "snippet": "A crafting table is made from four oak planks.",
                },
            ]
        }
    ]
    recall, by_thought = evolution.coverage(
        ["crafting_table", "oak_planks", "stick", "torch"], steps
    )
    assert recall == 0.75
    assert by_thought == ["crafting_table", "oak_planks"]


def test_needed_items_are_what_the_reference_plan_makes() -> None:
    assert evolution.needed_items("stick") == ["oak_planks", "stick"]
    assert evolution.needed_items("wooden_pickaxe") == [
        "crafting_table",
        "oak_planks",
        "stick",
        "wooden_pickaxe",
    ]


def test_both_arms_run_in_order_and_only_the_memory_arm_learns(tmp_path: Path) -> None:
    tasks = load_tasks()[:2]  # crafting table, then stick: both need oak planks
    model = scripted()
    graph = build_graph(llm=model, retriever=pages())
    points = evolution.run_sequence(
        tasks, context={"k": 1, "max_steps": 2, "answer_prompt": ""}, graph=graph
    )
    assert [(p.arm, p.position) for p in points] == [
        ("no memory", 1),
        ("no memory", 2),
        ("memory", 1),
        ("memory", 2),
    ]
    without, with_memory = points[:2], points[2:]
    assert all(p.thoughts_before == 0 and p.thought_calls == 0 for p in without)
    assert [p.answer_calls for p in points] == [5, 5, 5, 5]  # draft + 2 x (query, revise)
    first, second = with_memory
    assert first.thoughts_before == 0 and first.thoughts_stored == 1  # the rest redundant
    assert first.thought_calls == 3  # two steps and the answer
    assert second.thoughts_before == 1
    assert second.thoughts_retrieved > 0
    # the stored thought names oak planks, a page no step retrieved
    assert second.covered_by_thoughts == ["oak_planks"]
    assert second.recall == 0.5 > without[1].recall == 0.0

    # resumed: nothing is run again
    again = evolution.run_sequence(
        tasks,
        context={"k": 1, "max_steps": 2, "answer_prompt": ""},
        graph=build_graph(llm=ScriptedModel(respond=_no_calls), retriever=pages()),
    )
    assert again == points

    report = evolution.table(points)
    assert "| memory | 2 |" in report and "| no memory | 2 |" in report
    png = evolution.plot(points, tmp_path / "memory.png", "test")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _no_calls(kind: str, messages: list[BaseMessage]) -> str:
    raise AssertionError("a resumed sequence must not call the model")
