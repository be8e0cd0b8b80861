"""The graph served by `langgraph dev` from langgraph.json, driven through the LangGraph SDK.

What Studio and SDK users rely on: the input form and the context schema, streamed step
events, the final state and history of a thread, the draft review (interrupt, resume with
edited steps), concurrent runs kept apart, and threads that outlive a restart.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from server_fakes import (
    FAKE_CONTEXT,
    STEPS,
    DevServer,
    dev_server,
    draft_for,
    mixed_runs,
    run_load,
)

from rat_agent.agent.context import CHOICES, Context

pytest.importorskip("langgraph_api", reason="needs the server: pip install 'langgraph-cli[inmem]'")
pytestmark = [pytest.mark.server, pytest.mark.timeout(120)]

ALGORITHM = [
    ["__start__"],
    ["draft_cot"],
    *[["to_query"], ["retrieve"], ["revise_step"], ["append_next"]] * STEPS,
    ["write_answer"],  # on a source other than the Minecraft corpus the answer is written
    ["reply"],  # the answer as the chat's next message
    [],
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with dev_server(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture
def client(server: DevServer) -> SyncLangGraphClient:
    return get_sync_client(url=server.url)


def stream(client: SyncLangGraphClient, thread_id: str, **kwargs: Any) -> list[tuple[str, Any]]:
    return [(chunk.event, chunk.data) for chunk in client.runs.stream(thread_id, "rat", **kwargs)]


def values_of(client: SyncLangGraphClient, thread_id: str) -> dict[str, Any]:
    values = client.threads.get_state(thread_id)["values"]
    assert isinstance(values, dict)
    return values


def test_studio_gets_the_input_form_and_every_context_field(client: SyncLangGraphClient) -> None:
    (assistant,) = client.assistants.search(graph_id="rat")
    schemas = client.assistants.get_schemas(assistant["assistant_id"])

    assert schemas["input_schema"] is not None, "Studio would show no input form"
    question = schemas["input_schema"]["properties"]["question"]
    assert question["type"] == "string" and question["description"]
    # a question, or a chat client's messages: either alone is an input
    assert schemas["input_schema"]["properties"]["messages"]["description"]
    assert not schemas["input_schema"].get("required")
    assert {"question", "answer", "steps", "messages"} <= set(
        schemas["output_schema"]["properties"]
    )

    context = schemas["context_schema"]["properties"]
    assert list(context) == [f.name for f in fields(Context)]
    for f in fields(Context):
        assert context[f.name]["description"] == f.metadata["description"]
        assert context[f.name]["default"] == f.default
    for name, choices in CHOICES.items():
        assert context[name]["enum"] == list(get_args(choices))
    # model and retriever also take import paths: free text, the choices in the description
    assert context["model"]["type"] == context["retriever"]["type"] == "string"
    assert "local-tiny" in context["model"]["description"]
    assert "tavily" in context["retriever"]["description"]


def test_a_chat_client_asks_a_follow_up_answered_with_the_first_turn(
    client: SyncLangGraphClient,
) -> None:
    thread_id = client.threads.create()["thread_id"]
    first = "How do I build a beacon?"
    client.runs.wait(
        thread_id,
        "rat",
        input={"messages": [{"role": "user", "content": first}]},
        context=FAKE_CONTEXT,
    )
    follow_up = "And how do I light it?"
    client.runs.wait(
        thread_id,
        "rat",
        input={"messages": [{"role": "user", "content": follow_up}]},
        context=FAKE_CONTEXT,
    )
    values = values_of(client, thread_id)
    standalone = f"{follow_up} (following: {first})"
    assert values["question"] == standalone
    assert values["steps"][0]["draft"] == draft_for(standalone)[0]
    messages = values["messages"]
    assert [(m["type"], m["content"].split("\n")[0]) for m in messages] == [
        ("human", first),
        ("ai", f"answer to {first}"),
        ("human", follow_up),
        ("ai", f"answer to {standalone}"),
    ]
    sources = messages[-1]["additional_kwargs"]["sources"]
    assert sources and "[1] " in messages[-1]["content"]


def test_the_ingest_graph_fills_a_collection_the_rat_graph_searches(
    client: SyncLangGraphClient, tmp_path: Path
) -> None:
    note = tmp_path / "harbour.md"
    note.write_text("# Harbour\n\nThe island ferry leaves the harbour at 7:15 on weekdays.\n")
    report = client.runs.wait(None, "ingest", input={"paths": [str(note)], "collection": "served"})
    assert isinstance(report, dict) and report["added"] == 1 and report["failed"] == []
    thread_id = client.threads.create()["thread_id"]
    context = {**FAKE_CONTEXT, "retriever": "qdrant", "collection": "served", "k": 1}
    client.runs.wait(
        thread_id, "rat", input={"question": "When does the ferry leave?"}, context=context
    )
    steps = values_of(client, thread_id)["steps"]
    assert steps and all(s["sources"][0]["source"] == str(note) for s in steps)


def test_memory_through_the_server_stores_thoughts_a_later_run_cites(
    client: SyncLangGraphClient,
) -> None:
    context = {**FAKE_CONTEXT, "memory": "served-thoughts"}
    first = client.threads.create()["thread_id"]
    client.runs.wait(first, "rat", input={"question": "How do I light a furnace?"}, context=context)
    stored = [n for n in values_of(client, first)["thoughts"] if n["stored"]]
    assert stored and all(n["text"].startswith("Checked fact:") for n in stored)
    later = client.threads.create()["thread_id"]
    client.runs.wait(
        later, "rat", input={"question": "How do I light a furnace again?"}, context=context
    )
    cited = [s for step in values_of(client, later)["steps"] for s in step["sources"]]
    thought = next(s for s in cited if s["kind"] == "thought")
    assert thought["source"] in {f"thought:{n['id']}" for n in stored}


def test_a_streamed_run_reports_each_step_and_keeps_its_history(
    client: SyncLangGraphClient,
) -> None:
    thread_id = client.threads.create()["thread_id"]
    question = "How do I build a beacon?"
    events = stream(
        client,
        thread_id,
        input={"question": question},
        context=FAKE_CONTEXT,
        stream_mode=["updates", "custom", "messages-tuple"],
    )

    assert "error" not in [kind for kind, _ in events], events
    drafts = draft_for(question)
    custom = [data for kind, data in events if kind == "custom" and data["event"] == "step"]
    assert [(e["event"], e["step"], e["of"], e["query"], e["status"]) for e in custom] == [
        ("step", n, STEPS, f"about: {d}", "revised") for n, d in enumerate(drafts, 1)
    ]
    assert all(len(e["sources"]) == FAKE_CONTEXT["k"] for e in custom)
    updated = [next(iter(data)) for kind, data in events if kind == "updates"]
    assert updated == [step[0] for step in ALGORITHM[1:-1]]
    messages = [data for kind, data in events if kind == "messages"]
    assert [(meta["langgraph_node"], m["type"]) for m, meta in messages] == [
        ("draft_cot", "ai"),
        ("draft_cot", "human"),  # the question, as the chat's turn
        *[("to_query", "ai"), ("revise_step", "ai")] * STEPS,
        ("write_answer", "ai"),
        ("reply", "ai"),  # the answer, as the chat's turn
    ]
    assert messages[0][0]["content"].startswith(f"STEP 1: {drafts[0]}")

    assert client.threads.get_state(thread_id)["next"] == []
    values = values_of(client, thread_id)
    assert [s["draft"] for s in values["steps"]] == drafts
    assert [s["revised"] for s in values["steps"]] == [f"FIXED {d}" for d in drafts]
    assert values["answer"] == f"answer to {question}"
    assert values["settings"]["model"] == FAKE_CONTEXT["model"]

    history = client.threads.get_history(thread_id, limit=100)
    assert [h["next"] for h in reversed(history)] == ALGORITHM


def test_review_draft_pauses_with_the_draft_and_revises_the_edited_steps(
    client: SyncLangGraphClient,
) -> None:
    thread_id = client.threads.create()["thread_id"]
    question = "How do I tame a wolf?"
    context = {**FAKE_CONTEXT, "review_draft": True}
    events = stream(
        client,
        thread_id,
        input={"question": question},
        context=context,
        stream_mode=["updates", "custom"],
    )

    interrupts = [
        data["__interrupt__"]
        for kind, data in events
        if kind == "updates" and "__interrupt__" in data
    ]
    assert [i["value"] for i in interrupts[0]] == [
        {"question": question, "drafts": draft_for(question)}
    ]
    custom = [data["event"] for kind, data in events if kind == "custom"]
    assert custom == ["draft"], "the draft, and no step before the review"
    paused = client.threads.get_state(thread_id)
    assert paused["next"] == ["review_draft"]
    assert paused["interrupts"][0]["value"]["drafts"] == draft_for(question)

    stream(client, thread_id, command={"resume": {"drafts": []}}, context=context)
    asked_again = client.threads.get_state(thread_id)
    assert asked_again["next"] == ["review_draft"], "an empty draft is refused, not run"
    assert "at least one" in asked_again["interrupts"][0]["value"]["error"]

    edited = ["Find a wolf in a forest", "Give it bones until hearts appear"]
    events = stream(
        client,
        thread_id,
        command={"resume": {"drafts": edited}},
        context=context,
        stream_mode=["updates", "custom"],
    )

    assert [e["query"] for kind, e in events if kind == "custom" and e["event"] == "step"] == [
        f"about: {step}" for step in edited
    ]
    steps = values_of(client, thread_id)["steps"]
    assert [s["draft"] for s in steps] == edited
    assert [s["revised"] for s in steps] == [f"FIXED {step}" for step in edited]


def test_an_assistant_holds_the_context_so_a_resume_needs_none(
    client: SyncLangGraphClient,
) -> None:
    assistant = client.assistants.create("rat", context={**FAKE_CONTEXT, "review_draft": True})
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, assistant["assistant_id"], input={"question": "Who?"})
    assert client.threads.get_state(thread_id)["next"] == ["review_draft"]

    client.runs.wait(thread_id, assistant["assistant_id"], command={"resume": True})
    steps = values_of(client, thread_id)["steps"]
    assert [s["revised"] for s in steps] == [f"FIXED {d}" for d in draft_for("Who?")]


def test_a_bad_context_fails_the_run_with_its_message(client: SyncLangGraphClient) -> None:
    thread_id = client.threads.create()["thread_id"]
    events = stream(
        client,
        thread_id,
        input={"question": "Why?"},
        context={**FAKE_CONTEXT, "k": 99},
        stream_mode=["updates"],
    )

    errors = [data for kind, data in events if kind == "error"]
    assert errors and "k must be between 1 and 20" in str(errors[0]), events


def test_concurrent_runs_each_keep_their_own_steps(server: DevServer) -> None:
    results, _ = asyncio.run(run_load(server.url, 8))

    assert len(results) == 8
    assert mixed_runs(results) == []


def test_threads_and_paused_reviews_survive_a_restart(tmp_path: Path) -> None:
    context = {**FAKE_CONTEXT, "review_draft": True}
    with dev_server(tmp_path) as first:
        client = get_sync_client(url=first.url)
        done = client.threads.create()["thread_id"]
        client.runs.wait(done, "rat", input={"question": "Done?"}, context=FAKE_CONTEXT)
        paused = client.threads.create()["thread_id"]
        client.runs.wait(paused, "rat", input={"question": "Paused?"}, context=context)
    # stopped with SIGTERM: a clean shutdown (Ctrl-C is one too) saves the threads

    db = tmp_path / ".langgraph_api" / "rat_checkpoints.sqlite"
    with sqlite3.connect(db) as conn:  # the checkpointer named in langgraph.json
        stored = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert {done, paused} <= stored

    with dev_server(tmp_path) as second:
        client = get_sync_client(url=second.url)
        assert {t["thread_id"] for t in client.threads.search()} == {done, paused}
        steps = values_of(client, done)["steps"]
        assert [s["revised"] for s in steps] == [f"FIXED {d}" for d in draft_for("Done?")]
        assert client.threads.get_state(paused)["next"] == ["review_draft"]

        client.runs.wait(paused, "rat", command={"resume": ["Check it again"]}, context=context)
        steps = values_of(client, paused)["steps"]
        assert [s["revised"] for s in steps] == ["FIXED Check it again"]


def test_an_mcp_client_lists_both_graphs_with_their_descriptions_and_runs_one(
    server: DevServer, client: SyncLangGraphClient
) -> None:
    """`langgraph dev` serves every assistant as an MCP tool at /mcp: a calling agent must
    learn from the description when to use it and what it returns."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    client.assistants.create(
        "rat",
        context=FAKE_CONTEXT,
        name="rat_with_fakes",
        description="The rat graph on the test fakes.",
    )

    async def session_work() -> tuple[dict[str, str], str]:
        async with (
            streamable_http_client(server.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = (await session.list_tools()).tools
            tools = {tool.name: tool.description or "" for tool in listed}
            result = await session.call_tool("rat_with_fakes", {"question": "Who?"})
            assert not result.is_error
            return tools, " ".join(getattr(part, "text", "") for part in result.content)

    tools, text = asyncio.run(session_work())
    assert "step by step, each step checked against retrieved sources" in tools["rat"]
    assert "Qdrant collection" in tools["ingest"]
    assert not any(d.startswith("Tool based on") for d in (tools["rat"], tools["ingest"]))
    for draft in draft_for("Who?"):
        assert f"FIXED {draft}" in text  # the revised steps come back to the caller
