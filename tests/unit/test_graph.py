"""The causal contract of Algorithm 1, checked exactly with a recording fake model."""

from __future__ import annotations

import argparse
import itertools

import pytest
from fakes import (
    ListRetriever,
    ScriptedModel,
    current_step,
    plan_model,
    prompt_text,
    revision,
    wiki_docs,
)
from langchain_core.messages import BaseMessage
from langgraph.types import RetryPolicy

from rat_agent import ConfigError, build_graph
from rat_agent.agent import prompts
from rat_agent.errors import RetrievalError

DRAFT = "STEP 1: chop wood\nSTEP 2: craft planks\nSTEP 3: build a table\nSTEP 4: make sticks"
STEPS = ["chop wood", "craft planks", "build a table", "make sticks"]


FAST_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.01, retry_on=RetrievalError)


def run(model: ScriptedModel, retriever: ListRetriever | None = None, **context: object) -> dict:
    """The loop, its revised steps the answer (a written answer is test_core's)."""
    context = {"answer_prompt": "", **context}
    graph = build_graph(
        llm=model,
        retriever=retriever or ListRetriever(documents=wiki_docs()),
        retrieval_retry=FAST_RETRY,
    )
    return graph.invoke({"question": "How do I get sticks in Minecraft?"}, context=context)


def test_call_count_llm_queries_is_1_plus_2n() -> None:
    model = plan_model(DRAFT)
    run(model)
    kinds = [kind for kind, _ in model.calls]
    assert kinds == ["draft"] + ["query", "revise"] * 4


def test_call_count_text_queries_is_1_plus_n_and_query_is_the_step() -> None:
    model = plan_model(DRAFT)
    retriever = ListRetriever(documents=wiki_docs())
    result = run(model, retriever, query_prompt="")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["revise"] * 4
    assert retriever.queries == STEPS
    assert [s["query"] for s in result["steps"]] == STEPS


def test_query_sees_revised_past_and_current_draft_but_no_later_step() -> None:
    model = plan_model(DRAFT)
    retriever = ListRetriever(documents=wiki_docs())
    run(model, retriever)
    queries = [msgs for kind, msgs in model.calls if kind == "query"]
    for i, messages in enumerate(queries):
        text = prompt_text(messages)
        assert current_step(messages) == STEPS[i]
        for past in STEPS[:i]:
            assert f"FIXED {past}" in text  # the revision, not the draft, of past steps
        for later in STEPS[i + 1 :]:
            assert later not in text
        assert "How do I get sticks in Minecraft?" in text
    assert retriever.queries == [f"about: {s}" for s in STEPS]


def test_revision_sees_documents_and_replaces_the_draft() -> None:
    """The paper's revision sees the revised past as its stable prefix; plan repair's does
    not (tests/test_plan_repair.py)."""
    model = plan_model(DRAFT)
    result = run(model)
    revisions = [msgs for kind, msgs in model.calls if kind == "revise"]
    for i, messages in enumerate(revisions):
        text = prompt_text(messages)
        assert "<documents>" in text and "Page 1 says" in text
        for later in STEPS[i + 1 :]:
            assert later not in text
        # stable part first: documents and the current step come after the revised past
        if i:
            assert text.index(f"FIXED {STEPS[i - 1]}") < text.index("<documents>\n")
        assert text.index("<documents>\n") < text.rindex(STEPS[i])
    assert [s["revised"] for s in result["steps"]] == [f"FIXED {s}" for s in STEPS]
    assert [s["draft"] for s in result["steps"]] == STEPS
    assert all(s["status"] == "revised" for s in result["steps"])
    assert result["answer"] == "\n".join(f"STEP {n}: FIXED {s}" for n, s in enumerate(STEPS, 1))


def test_sources_are_cited_per_step() -> None:
    result = run(plan_model(DRAFT), k=2)
    for step in result["steps"]:
        assert [s["title"] for s in step["sources"]] == ["Page 1", "Page 2"]
        assert step["sources"][0]["source"] == "corpus:page1"
        assert step["sources"][0]["snippet"].startswith("Page 1 says")


def test_prompts_share_a_stable_prefix() -> None:
    """Consecutive calls start with the same text, so a server's prompt cache can reuse it."""
    model = plan_model(DRAFT)
    run(model)
    texts = [prompt_text(msgs) for _, msgs in model.calls]
    for before, after in itertools.pairwise(texts[1:]):
        common = 0
        while common < min(len(before), len(after)) and before[common] == after[common]:
            common += 1
        assert common >= len(before.split("Current step")[0].split("<documents>")[0])


def test_max_steps_merges_the_tail_without_losing_it() -> None:
    model = plan_model(DRAFT)
    result = run(model, max_steps=2, draft="cot")
    assert [s["draft"] for s in result["steps"]] == [
        "chop wood",
        "craft planks\nbuild a table\nmake sticks",
    ]
    assert len(model.calls) == 1 + 2 * 2


def test_the_answer_prompt_adds_a_final_call() -> None:
    model = plan_model(DRAFT)
    result = run(model, answer_prompt=prompts.ANSWER)
    assert [kind for kind, _ in model.calls][-1] == "answer"
    assert result["answer"] == "final answer"
    assert "FIXED make sticks" in prompt_text(model.calls[-1][1])


def test_useless_revision_keeps_the_draft_and_goes_on() -> None:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "revise" and current_step(messages) == "craft planks":
            return "<think>hmm</think>\n```\n```"
        return revision(messages, f"ok {current_step(messages)}")

    result = run(ScriptedModel(respond=respond, calls=[]), query_prompt="")
    statuses = [s["status"] for s in result["steps"]]
    assert statuses == ["revised", "not_revised", "revised", "revised"]
    assert result["steps"][1]["revised"] == "craft planks"
    assert result["steps"][1]["note"]


def test_failing_retrieval_keeps_the_step_unrevised() -> None:
    model = plan_model(DRAFT)
    retriever = ListRetriever(documents=wiki_docs(), fail=lambda q: "planks" in q)
    result = run(model, retriever, query_prompt="")
    step = result["steps"][1]
    assert step["status"] == "not_revised" and step["revised"] == "craft planks"
    assert "retrieval failed" in step["note"]
    assert [kind for kind, _ in model.calls] == ["draft"] + ["revise"] * 3
    assert result["steps"][2]["status"] == "revised"
    assert retriever.queries.count("craft planks") == 3  # retried before giving up


def test_a_transient_retrieval_failure_is_retried() -> None:
    failures = iter([True, True])
    retriever = ListRetriever(
        documents=wiki_docs(), fail=lambda q: "planks" in q and next(failures, False)
    )
    result = run(plan_model(DRAFT), retriever, query_prompt="")
    assert [s["status"] for s in result["steps"]] == ["revised"] * 4
    assert retriever.queries.count("craft planks") == 3


def test_a_bad_retriever_setting_fails_the_run_not_the_step() -> None:
    class Misconfigured(ListRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: object) -> list:  # type: ignore[override]
            raise ConfigError("collection 'x' is missing")

    with pytest.raises(ConfigError, match="collection 'x'"):
        run(plan_model(DRAFT), Misconfigured(documents=[]), query_prompt="")


def test_empty_draft_is_a_typed_error_asked_once() -> None:
    from rat_agent import UnusableReply

    model = ScriptedModel(respond=lambda kind, messages: "  ", calls=[])
    with pytest.raises(UnusableReply):
        run(model)
    assert len(model.calls) == 1  # the same prompt gets the same nothing: not retried


def _provider_error(status: int) -> Exception:
    import httpx
    import openai

    response = httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return openai.APIStatusError(
        f"Error code: {status} - refused\nmore detail", response=response, body=None
    )


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_rejected_request_fails_at_once_in_one_line(status: int) -> None:
    from rat_agent import RequestRejected

    def refuse(kind: str, messages: list[BaseMessage]) -> str:
        raise _provider_error(status)

    model = ScriptedModel(respond=refuse, calls=[])
    with pytest.raises(RequestRejected, match=f"rejected the request \\(HTTP {status}\\)") as err:
        run(model)
    assert len(model.calls) == 1 and "\n" not in str(err.value)


@pytest.mark.parametrize("status", [408, 429, 500, 503])
def test_a_transient_provider_failure_is_retried(status: int) -> None:
    failures = iter([True, True])
    planner = plan_model(DRAFT)

    def flaky(kind: str, messages: list[BaseMessage]) -> str:
        if next(failures, False):
            raise _provider_error(status)
        return planner.respond(kind, messages)

    model = ScriptedModel(respond=flaky, calls=[])
    result = run(model)
    assert [s["status"] for s in result["steps"]] == ["revised"] * 4
    assert [kind for kind, _ in model.calls[:3]] == [model.calls[0][0]] * 3  # asked 3 times


def test_bad_context_is_a_typed_error() -> None:
    with pytest.raises(ConfigError, match="k must be between"):
        run(plan_model(DRAFT), k=0)
    with pytest.raises(ConfigError, match="unknown retriever"):
        build_graph(llm=plan_model(DRAFT)).invoke({"question": "q"}, context={"retriever": "nope"})


@pytest.mark.usefixtures("fresh_data")
def test_methods_that_never_retrieve_check_the_retriever_name_only() -> None:
    """direct and cot do not build the source (no corpus or Qdrant to open), yet a
    misspelt retriever is still an error up front."""
    model = ScriptedModel(respond=lambda kind, _: "Use a pickaxe.")
    graph = build_graph(llm=model)
    missing = {"retriever": "qdrant", "collection": "no_such_collection"}
    for method in ("direct", "cot"):
        result = graph.invoke({"question": "q"}, context={"method": method, **missing})
        assert result["answer"]
    with pytest.raises(ConfigError, match="no_such_collection"):
        graph.invoke({"question": "q"}, context={"method": "rag", **missing})
    with pytest.raises(ConfigError, match="unknown retriever"):
        graph.invoke({"question": "q"}, context={"method": "direct", "retriever": "nope"})


def test_a_given_setting_beats_the_environment_even_when_it_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rat_agent import Context

    monkeypatch.setenv("RAT_K", "5")
    assert Context(k=3).k == 3 and Context().k == 5
    retriever = ListRetriever(documents=wiki_docs(5))
    graph = build_graph(llm=plan_model(DRAFT), retriever=retriever)
    events = list(graph.stream({"question": "q?"}, stream_mode="custom", context={"k": 3}))
    assert {len(e["sources"]) for e in events if e["event"] == "step"} == {3}


def test_memory_names_its_collection_and_a_switch_names_the_usual_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rat_agent import Context
    from rat_agent.cli.ask import add_command

    assert Context().memory == "" and Context(memory="mine").memory == "mine"
    assert Context(memory=True).memory == "thoughts" and Context(memory="off").memory == ""
    monkeypatch.setenv("RAT_MEMORY", "1")
    assert Context().memory == "thoughts"
    with pytest.raises(ConfigError, match="memory"):
        Context(memory="a/b")
    # a checkpoint of the release that kept the collection apart goes on in it
    assert Context.restore({"memory": True, "memory_collection": "ours"}).memory == "ours"
    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())
    assert parser.parse_args(["ask", "q", "--memory"]).memory == "thoughts"
    assert parser.parse_args(["ask", "q", "--memory", "ours"]).memory == "ours"
    assert parser.parse_args(["ask", "q"]).memory is None
    # the flag before the question: argparse hands it the question, which is no name
    from rat_agent.cli.ask import question_of

    swallowed = parser.parse_args(["ask", "--memory", "How do I brew?"])
    assert question_of(swallowed) == "How do I brew?" and swallowed.memory == "thoughts"
    named = parser.parse_args(["ask", "--memory", "ours", "How?"])
    assert question_of(named) == "How?" and named.memory == "ours"


def test_an_empty_prompt_skips_its_call_as_an_older_releases_modes_did() -> None:
    """output "steps" and query_mode "text" were the empty prompts; a client and a
    checkpoint of that release still say so, and a value it never took is refused."""
    from rat_agent import Context

    model = plan_model(DRAFT)
    run(model, query_prompt="")  # each step's own text is its query: no query call
    assert [kind for kind, _ in model.calls] == ["draft"] + ["revise"] * 4
    older = Context(output="steps", query_mode="text")
    assert (older.answer_prompt, older.query_prompt) == ("", "")
    kept = Context(output="answer", query_mode="llm")
    assert (kept.answer_prompt, kept.query_prompt) == (prompts.ANSWER, prompts.QUERY)
    saved = {"output": "steps", "query_mode": "llm", "answer_prompt": prompts.ANSWER, "k": 2}
    assert Context.restore(saved).answer_prompt == "" and Context.restore(saved).k == 2
    with pytest.raises(ConfigError, match="output must be one of auto, answer, steps"):
        Context(output="sideways")


def test_the_custom_stream_tells_the_whole_run() -> None:
    """The events a UI (and the CLI) renders: the draft, then per step its query, its
    sources and the checked step."""
    graph = build_graph(llm=plan_model(DRAFT), retriever=ListRetriever(documents=wiki_docs(2)))
    context = {"k": 2, "answer_prompt": ""}
    stream = list(graph.stream({"question": "q?"}, stream_mode="custom", context=context))
    assert [e["event"] for e in stream] == ["draft", *["query", "sources", "step"] * 4]
    draft = dict(stream[0])
    assert draft.pop("from") == "the model's chain of thought"
    assert draft == {"event": "draft", "drafts": STEPS, "reviewed": False}
    assert stream[1] == {
        "event": "query",
        "step": 1,
        "of": 4,
        "draft": STEPS[0],
        "query": "about: chop wood",
    }
    assert stream[2] == {"event": "sources", "step": 1, "titles": ["Page 1", "Page 2"], "error": ""}
    events = [e for e in stream if e["event"] == "step"]
    assert events[0]["revision"]["revised"] == "FIXED chop wood"
    assert [e["step"] for e in events] == [1, 2, 3, 4]
    assert all(e["of"] == 4 and e["status"] == "revised" for e in events)
    assert events[0]["query"] == "about: chop wood"
    assert [s["title"] for s in events[0]["sources"]] == ["Page 1", "Page 2"]


def test_studio_forms_come_from_the_schemas() -> None:
    from dataclasses import fields

    from rat_agent.agent.context import Context

    graph = build_graph()
    question = graph.get_input_jsonschema()["properties"]["question"]
    assert question["type"] == "string" and question["description"]
    context = graph.get_context_jsonschema()["properties"]
    assert set(context) == {f.name for f in fields(Context)}
    assert all(prop.get("description") for prop in context.values())
    assert context["draft"]["enum"] == ["auto", "cot", "sourced", "direct", "rag"]
    assert context["revise_prompt"]["default"] == prompts.REVISE  # Studio can edit the prompts
    # the options a user sets, then the prompts: nothing else
    assert [name for name in context if not name.endswith("_prompt")] == [
        "method",
        "model",
        "retriever",
        "collection",
        "k",
        "max_steps",
        "draft",
        "temperature",
        "max_tokens",
        "speculate",
        "review_draft",
        "memory",
        "repair",
    ]
    assert context["review_draft"]["type"] == "boolean"
    assert set(graph.get_output_jsonschema()["properties"]) == {
        "question",
        "answer",
        "steps",
        "thoughts",
        "passages",  # what a sourced draft and its answer were written from
        "messages",  # the chat's turns, for LangGraph's chat clients
    }
    assert graph.get_input_jsonschema()["properties"]["messages"]["description"]
