"""Focused evidence: a document's passages, as any source writes them."""

from __future__ import annotations

from typing import Any

from fakes import ListRetriever, ScriptedModel, prompt_text
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from rat_agent import build_graph
from rat_agent.retrieval.evidence import passages
from rat_agent.retrieval.settings import EVIDENCE_KEY
from rat_minecraft import METADATA as MINECRAFT

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


def _shown(retriever: BaseRetriever, **context: Any) -> int:
    """How many of the page's 60 settings a rag run's one prompt shows."""
    model = ScriptedModel(respond=lambda kind, messages: "Use number7.")
    graph = build_graph(llm=model, retriever=retriever)
    graph.invoke(
        {"question": "Which setting caps the cache?"}, context={"method": "rag", **context}
    )
    [(_, messages)] = model.calls
    return sum(f"number{n} " in prompt_text(messages) for n in range(60))


def test_a_step_reads_the_budget_its_source_declares_else_600_tokens() -> None:
    page = "\n\n".join(f"Setting number{n} caps part {n} of the cache." for n in range(60))
    pages = [Document(page_content=page, metadata={"title": "cache.conf", "source": "/c"})]
    plain = ListRetriever(documents=pages)
    small = ListRetriever(documents=pages, metadata={EVIDENCE_KEY: 150})
    # each passage is about 12 tokens: 600 tokens show most of the page, 150 a few lines
    assert 35 <= _shown(plain) <= 50
    assert 8 <= _shown(small) <= 12
    assert MINECRAFT[EVIDENCE_KEY] == 150  # the budget the Minecraft figures were made at
