"""Exact names: a name a step writes otherwise than the passages it was shown spell it (but
for separators and case) is respelled as they give it; nothing else changes."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from rat_agent import build_graph
from rat_agent.agent.names import respell, spellings

CONF = (
    "# The TCP listen() backlog.\n"
    "tcp-backlog 511\n"
    "# Set a memory usage limit to the specified amount of bytes.\n"
    "# maxmemory <bytes>\n"
    "# Maxmemory is checked before each command.\n"
    "# maxmemory-policy noeviction picks what is evicted; allkeys-lru evicts any key."
)


@pytest.mark.parametrize(
    ("written", "wanted", "changes"),
    [
        (
            "Set `tcp_backlog` to 4096.",
            "Set `tcp-backlog` to 4096.",
            ["tcp_backlog -> tcp-backlog"],
        ),
        ("max_memory 2gb", "maxmemory 2gb", ["max_memory -> maxmemory"]),
        (
            "run with --Maxmemory_Policy allkeys_lru",
            "run with --maxmemory-policy allkeys-lru",
            ["Maxmemory_Policy -> maxmemory-policy", "allkeys_lru -> allkeys-lru"],
        ),
        ("maxMemory", "maxmemory", ["maxMemory -> maxmemory"]),
        # plain words, names no passage gives, and names already right stay as written
        ("Maxmemory and tcp backlog", "Maxmemory and tcp backlog", []),
        ("cache_size 10 and client-timeout", "cache_size 10 and client-timeout", []),
        ("tcp-backlog 4096", "tcp-backlog 4096", []),
    ],
)
def test_a_joined_name_is_respelled_as_the_passages_give_it(
    written: str, wanted: str, changes: list[str]
) -> None:
    assert respell(written, spellings([CONF])) == (wanted, changes)


def test_a_name_the_passages_join_two_ways_is_left_alone() -> None:
    known = spellings(["use log-file here", "or log_file there"])
    assert respell("set logFile", known) == ("set logFile", [])
    # a key too short to tell a name from chance ("a-b" is "ab")
    assert respell("set a_b", spellings(["a-b"])) == ("set a_b", [])


QUESTION = "How do I raise the TCP backlog to 4096?"
REPLY = "Do this:\n\n1. Set `tcp_backlog` to 4096 in redis.conf.\n2. Restart the server."
PAGES = [Document(page_content=CONF, metadata={"title": "redis.conf", "source": "redis.conf"})]


def run(revise: Any, reply: str = REPLY, **context: Any) -> tuple[dict[str, Any], ScriptedModel]:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return reply
        if kind == "query":
            return "tcp backlog"
        if kind == "revise":
            return str(revise(current_step(messages)))
        raise AssertionError(kind)

    model = ScriptedModel(respond=respond, calls=[])
    graph = build_graph(llm=model, retriever=ListRetriever(documents=PAGES))
    return graph.invoke({"question": QUESTION}, context={"draft": "answer", **context}), model


def test_a_kept_step_is_respelled_from_its_passages_with_a_note() -> None:
    result, _ = run(lambda step: "FACT: NONE")
    first = result["steps"][0]
    assert first["revised"] == "Set `tcp-backlog` to 4096 in redis.conf."
    assert first["status"] == "not_revised"  # the model changed nothing: only the spelling
    assert first["note"] == (
        "no passage bears on it; the draft was kept; names spelled as its passages give "
        "them: tcp_backlog -> tcp-backlog"
    )
    assert result["answer"] == REPLY.replace("tcp_backlog", "tcp-backlog")
    # off, the user's answer is the draft as the model wrote it
    result, _ = run(lambda step: "FACT: NONE", exact_names=False)
    assert result["answer"] == REPLY
    assert "names spelled" not in result["steps"][0]["note"]


def test_a_revision_with_a_misspelt_name_is_checked_as_the_passage_spells_it() -> None:
    """`max_memory` is in no passage, so the revision would be refused as made up; spelled
    as the passage gives it, it is accepted, and the answer carries that spelling."""

    def revise(step: str) -> str:
        if "tcp" not in step:
            return "FACT: NONE"
        return (
            "FACT: 1b. tcp-backlog 511\n"
            "STEP: Set `tcp_backlog 4096` and `max_memory 2gb` in redis.conf."
        )

    result, _ = run(revise)
    first = result["steps"][0]
    assert first["revised"] == "Set `tcp-backlog 4096` and `maxmemory 2gb` in redis.conf."
    assert first["status"] == "revised"
    result, _ = run(revise, exact_names=False)
    assert "which no passage shown gives" in result["steps"][0]["note"]
    assert result["answer"] == REPLY


def test_code_is_never_respelled() -> None:
    """A code part's names are the program's: `tcp_backlog` there is a variable."""
    reply = "Like this:\n\n```python\ntcp_backlog = 4096\nprint(tcp_backlog)\n```"
    result, _ = run(lambda step: "FACT: NONE", reply=reply)
    assert result["answer"] == reply
