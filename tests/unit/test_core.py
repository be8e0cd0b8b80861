"""The core at its defaults, on a source that declares no domain, is the paper's Algorithm 1:
a chain-of-thought draft; for each step a query from the task, the revised steps before it
and the step; a retrieval with that query; a revision that sees the task, the revised
steps before it, the step and its documents, and whose reply is the step."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, wiki_docs
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from rat_agent import build_graph
from rat_agent.agent import prompts
from rat_agent.agent.context import Context
from rat_agent.agent.nodes import RatNodes
from rat_agent.errors import UnusableReply
from rat_agent.retrieval.settings import DRAFT_KEY
from rat_minecraft import METADATA as MINECRAFT

QUESTION = "Plan the task QX"
DRAFT = "STEP 1: Do the first part of QX.\nSTEP 2: Do the second part.\nSTEP 3: Finish QX."
DRAFTS = ["Do the first part of QX.", "Do the second part.", "Finish QX."]
PAGES = [
    Document(
        page_content="ALPHAWOOD: each part of QX is done, to finish it, with the alpha tool "
        "at level 3.",
        metadata={"title": "QX guide", "source": "corpus:qx"},
    ),
    Document(
        page_content="QUERY1 about ALPHAWOOD is answered by the second chapter.",
        metadata={"title": "Alpha notes", "source": "corpus:alpha"},
    ),
]


def revised_text(step: str) -> str:
    return f"{step} Use the alpha tool at level 3."


def scripted(revise: Any = None) -> ScriptedModel:
    """Drafts DRAFT; each query names its step's number; each revision adds a detail."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "query":
            step = current_step(messages)
            return f"QUERY{DRAFTS.index(step) + 1}" if step in DRAFTS else step
        if kind == "revise":
            step = current_step(messages)
            return str(revise(step, messages)) if revise is not None else revised_text(step)
        if kind == "goal":  # only a plan repair extension asks it
            return "Nothing in particular"
        if kind == "answer":
            return "The written answer."
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def run(model: ScriptedModel, retriever: Any = None, **context: Any) -> dict[str, Any]:
    graph = build_graph(llm=model, retriever=retriever or ListRetriever(documents=PAGES))
    return graph.invoke({"question": QUESTION}, context=context)


def test_three_steps_are_seven_calls_and_three_retrievals_each_revision_causal() -> None:
    """Steps as the answer: 1 + 2n calls for n draft steps, n retrievals with the model's
    queries; each query and revision prompt holds the revised steps before it and no later
    draft step; each revised step is the model's reply."""
    model, retriever = scripted(), ListRetriever(documents=PAGES)
    result = run(model, retriever, answer_prompt="")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3
    assert retriever.queries == ["QUERY1", "QUERY2", "QUERY3"]
    drafting = prompts.draft_messages(prompts.SYSTEM, prompts.DRAFT, QUESTION, 8)
    assert prompt_text(model.calls[0][1]) == prompt_text(drafting)
    assert "<documents>\n" not in prompt_text(model.calls[0][1])  # no retrieval before the draft
    for i in range(3):
        for kind, messages in model.calls[1 + 2 * i : 3 + 2 * i]:
            text = prompt_text(messages)
            assert current_step(messages) == DRAFTS[i], kind
            for before in DRAFTS[:i]:
                assert revised_text(before) in text  # T*_1..i-1
            for later in DRAFTS[i + 1 :]:
                assert later not in text  # never a later draft step
            assert ("ALPHAWOOD" in text) == (kind == "revise")  # R_i, in the revision only
    steps = result["steps"]
    assert [s["draft"] for s in steps] == DRAFTS
    assert [s["revised"] for s in steps] == [revised_text(d) for d in DRAFTS]
    assert [s["status"] for s in steps] == ["revised"] * 3
    for step in steps:
        assert {s["source"] for s in step["sources"]} == {"corpus:qx", "corpus:alpha"}
    assert result["answer"] == "\n".join(
        f"STEP {n}: {revised_text(d)}" for n, d in enumerate(DRAFTS, 1)
    )


def test_by_default_the_answer_is_written_from_the_revised_steps() -> None:
    model = scripted()
    result = run(model)
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3 + ["answer"]
    written = prompt_text(model.calls[-1][1])
    assert "STEP 3: Finish QX. Use the alpha tool at level 3." in written
    assert prompts.ANSWER in written and "<documents>\n" not in written
    assert result["answer"] == "The written answer."


def test_text_queries_cost_no_call() -> None:
    model, retriever = scripted(), ListRetriever(documents=PAGES)
    run(model, retriever, answer_prompt="", query_prompt="")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["revise"] * 3
    assert retriever.queries == DRAFTS


@pytest.mark.parametrize(
    ("reply", "status", "revised"),
    [
        ("Do the first part of QX.", "unchanged", DRAFTS[0]),  # kept as drafted
        ("KEEP", "unchanged", DRAFTS[0]),  # kept, in one word
        ("keep.", "unchanged", DRAFTS[0]),
        ("Keep the alpha tool at level 3.", "revised", "Keep the alpha tool at level 3."),
        ("STEP 1: Something else entirely.", "revised", "Something else entirely."),
        ("Revised step: Something else entirely.", "revised", "Something else entirely."),
        ("No word of it is in any document.", "revised", "No word of it is in any document."),
    ],
)
def test_the_models_revision_is_the_step(reply: str, status: str, revised: str) -> None:
    """No rule second-guesses a revision: only its labels are taken off."""
    model = scripted(lambda step, messages: reply if step == DRAFTS[0] else step)
    result = run(model, answer_prompt="")
    assert result["steps"][0]["status"] == status
    assert result["steps"][0]["revised"] == revised
    assert result["steps"][0]["note"] == ""


@pytest.mark.parametrize("reply", ["", "  \n ", "<think>only thinking</think>"])
def test_an_empty_revision_keeps_the_draft_and_says_so(reply: str) -> None:
    model = scripted(lambda step, messages: reply)
    result = run(model, answer_prompt="")
    assert [s["revised"] for s in result["steps"]] == DRAFTS
    assert {s["status"] for s in result["steps"]} == {"not_revised"}
    assert {s["note"] for s in result["steps"]} == {
        "the model's revision was empty or cut short; the draft was kept"
    }


def test_a_step_with_no_documents_keeps_its_draft() -> None:
    model = scripted()
    result = run(model, ListRetriever(documents=[]), answer_prompt="")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query"] * 3
    assert {s["note"] for s in result["steps"]} == {"no documents retrieved; the draft was kept"}


def test_a_sourced_draft_is_written_with_the_tasks_passages() -> None:
    model, retriever = scripted(), ListRetriever(documents=PAGES)
    result = run(model, retriever, draft="sourced", answer_prompt="")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3
    assert retriever.queries == [QUESTION, "QUERY1", "QUERY2", "QUERY3"]
    drafted = prompt_text(model.calls[0][1])
    assert "[1] QX guide (corpus:qx)" in drafted and "ALPHAWOOD" in drafted
    assert drafted.index("</documents>") < drafted.index("Answer the task with step-by-step")
    assert len(result["steps"]) == 3


def test_a_sourced_answer_sees_the_drafts_passages_and_the_checked_steps() -> None:
    """The answer is written from the revised steps and the passages the draft was shown,
    passages first as in the draft's prompt; a chain-of-thought run's answer sees the steps
    only, as the paper's."""
    model, retriever = scripted(), ListRetriever(documents=PAGES)
    result = run(model, retriever, draft="sourced")
    assert [kind for kind, _ in model.calls][-1] == "answer"
    answered = prompt_text(model.calls[-1][1])
    assert "[1] QX guide (corpus:qx)" in answered
    assert answered.index("</documents>") < answered.index("Checked steps so far:")
    assert revised_text(DRAFTS[2]) in answered
    assert result["answer"] == "The written answer."
    # what it was written from is cited first, then each step's sources, numbered once
    assert [p["title"] for p in result["passages"]] == ["QX guide", "Alpha notes"]
    message = result["messages"][-1]
    assert message.text.splitlines()[1:3] == [
        "Drafted and answered from [1] [2]",
        "STEP 1 checked against [1] [2]",
    ]
    assert [s["title"] for s in message.additional_kwargs["sources"]] == ["QX guide", "Alpha notes"]
    from rat_agent.eval.runner import cited

    assert "ALPHAWOOD: each part of QX" in cited(result)[0]
    plain = scripted()
    run(plain, ListRetriever(documents=PAGES), draft="cot")
    assert "<documents>\n" not in prompt_text(plain.calls[-1][1])


def test_an_answer_draft_is_rags_answer_and_its_checked_paragraphs_the_response() -> None:
    """Draft "rag": rag's own prompt writes the draft; each paragraph is a step, checked
    as the paper checks a step; the response is the paragraphs again, a revised one in its
    place and the others word for word, with no call to rewrite them."""
    answer = "To do QX:\n\n1. **First** part:\n   ```ini\n   a = 1\n\n   b = 2\n   ```\n\nDone."

    def revise(messages: list[BaseMessage]) -> str:
        step = prompt_text(messages).rsplit("draft):\n", 1)[1].rsplit("\n\n", 1)[0]
        return "Finished with the alpha tool at level 3." if step == "Done." else step.upper()

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return answer
        if kind == "query":
            return current_step(messages).split()[0]
        return revise(messages)

    model, retriever = ScriptedModel(respond=respond, calls=[]), ListRetriever(documents=PAGES)
    result = run(model, retriever, draft="rag")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3
    assert prompt_text(model.calls[0][1]) == prompt_text(
        prompts.rag_messages(prompts.SYSTEM, QUESTION, result["passages"])
    )
    middle = answer.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
    assert [s["draft"] for s in result["steps"]] == ["To do QX:", middle, "Done."]
    # the echoed steps changed nothing (the same words): they stand as written, fences kept
    assert [s["status"] for s in result["steps"]] == ["unchanged", "unchanged", "revised"]
    assert result["answer"] == answer.replace("Done.", "Finished with the alpha tool at level 3.")


def test_an_answer_draft_stopped_mid_run_leaves_its_answer_whole(tmp_path: Any) -> None:
    """The answer checkpointed after each step is the response so far: the checked
    paragraphs, then the rest as drafted, in the answer's own format (no STEP lines)."""
    answer = "Set alpha.\n\nThen beta.\n\nDone."

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return answer
        if kind == "query":
            return current_step(messages).split()[0]
        step = prompt_text(messages).rsplit("draft):\n", 1)[1].rsplit("\n\n", 1)[0]
        if step == "Done.":
            raise UnusableReply("the model went away")
        return "Set the alpha tool at level 3." if step == "Set alpha." else step

    config: Any = {"configurable": {"thread_id": "t"}}
    with sqlite3.connect(tmp_path / "runs.db", check_same_thread=False) as connection:
        model = ScriptedModel(respond=respond, calls=[])
        graph = build_graph(
            llm=model,
            retriever=ListRetriever(documents=PAGES),
            checkpointer=SqliteSaver(connection),
        )
        with pytest.raises(UnusableReply):
            graph.invoke({"question": QUESTION}, config, context={"draft": "rag"})
        saved = graph.get_state(config).values
    assert [s["status"] for s in saved["steps"]] == ["revised", "unchanged"]
    assert saved["answer"] == "Set the alpha tool at level 3.\n\nThen beta.\n\nDone."


def test_the_prompts_are_the_runs_to_set() -> None:
    model = scripted()
    run(
        model,
        answer_prompt="",
        system_prompt="You are terse.",
        draft_prompt="Plan in {max_steps} steps or fewer.",
        query_prompt="QUERY PLEASE",
        revise_prompt="REVISE PLEASE",
    )
    assert all(messages[0].content == "You are terse." for _, messages in model.calls)
    assert prompt_text(model.calls[0][1]).endswith("Plan in 8 steps or fewer.")
    assert prompt_text(model.calls[1][1]).endswith("QUERY PLEASE")
    assert prompt_text(model.calls[2][1]).endswith("REVISE PLEASE")


def test_a_crash_mid_loop_resumes_the_same_pattern(tmp_path: Any) -> None:
    """A revision that fails stops the run after step 1 is checkpointed; resumed, the run
    revises step 2 with step 1 revised in its prompt, and nothing is asked twice."""

    def failing(step: str, messages: list[BaseMessage]) -> str:
        if step == DRAFTS[1]:
            raise UnusableReply("the model went away")
        return revised_text(step)

    config: Any = {"configurable": {"thread_id": "t"}}
    with sqlite3.connect(tmp_path / "runs.db", check_same_thread=False) as connection:
        saver = SqliteSaver(connection)
        first = scripted(failing)
        graph = build_graph(llm=first, retriever=ListRetriever(documents=PAGES), checkpointer=saver)
        with pytest.raises(UnusableReply):
            graph.invoke({"question": QUESTION}, config, context={"answer_prompt": ""})
        assert [kind for kind, _ in first.calls] == ["draft", "query", "revise", "query", "revise"]
        second = scripted()
        graph = build_graph(
            llm=second, retriever=ListRetriever(documents=PAGES), checkpointer=saver
        )
        result = graph.invoke(None, config, context={"answer_prompt": ""})
    assert [kind for kind, _ in second.calls] == ["revise", "query", "revise"]
    assert revised_text(DRAFTS[0]) in prompt_text(second.calls[0][1])
    assert DRAFTS[2] not in prompt_text(second.calls[0][1])
    assert [s["revised"] for s in result["steps"]] == [revised_text(d) for d in DRAFTS]


def test_a_retriever_by_import_path_gets_the_papers_loop() -> None:
    model = scripted()
    graph = build_graph(llm=model)
    result = graph.invoke({"question": QUESTION}, context={"retriever": "fakes:SHARED_RETRIEVER"})
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3 + ["answer"]
    assert len(result["steps"]) == 3


def test_a_retriever_that_declares_minecraft_gets_crafting_repair() -> None:
    """The domain is the source's to declare; plan repair follows it, and with it the steps
    are the answer."""
    model = scripted()
    run(model, ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT)))
    assert [kind for kind, _ in model.calls][:2] == ["draft", "goal"]
    assert "answer" not in [kind for kind, _ in model.calls]
    model = scripted()
    run(model, ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT)), repair="off")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3 + ["answer"]
    # an answer prompt the run writes is used: the repaired plan's steps become notes
    model = scripted()
    wiki = ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT))
    result = run(model, wiki, answer_prompt="Write the answer.")
    assert next(kind for kind, _ in model.calls) == "draft"  # no goal: notes for an answer
    assert [kind for kind, _ in model.calls][-1] == "answer"
    assert result["answer"] == "The written answer."


def test_auto_is_resolved_once_from_the_models_profile() -> None:
    """A model the user brings gets the paper's defaults; the choices are saved with the run."""
    nodes = RatNodes(retriever=ListRetriever(documents=PAGES))
    brought = nodes.resolve(Context(model="openai:gpt-4o-mini"))
    assert (brought.draft, brought.query_prompt, brought.answer_prompt, brought.repair) == (
        "cot",
        prompts.QUERY,
        prompts.ANSWER,
        "off",
    )
    chosen = nodes.resolve(Context(model="openai:gpt-4o-mini", draft="sourced", answer_prompt=""))
    assert (chosen.draft, chosen.answer_prompt) == ("sourced", "")
    # the bundled model's profile drafts answers as rag answers; a plan, as the paper does;
    # a value the run sets wins
    assert nodes.resolve(Context(model="local")).draft == "rag"
    # ...and queries with each paragraph's own text (an empty query prompt); a chain of
    # thought, a plan, a query prompt the run writes: the model
    assert nodes.resolve(Context(model="local")).query_prompt == ""
    assert nodes.resolve(Context(model="local", query_prompt="Q?")).query_prompt == "Q?"
    assert nodes.resolve(Context(model="local", draft="cot")).query_prompt == prompts.QUERY
    assert nodes.resolve(Context(model="local", answer_prompt="")).query_prompt == prompts.QUERY
    assert nodes.resolve(Context(model="local", draft="cot")).draft == "cot"
    assert nodes.resolve(Context(model="local", answer_prompt="")).draft == "cot"
    assert nodes.resolve(Context(model="local", method="cot")).draft == "cot"  # the baseline
    assert nodes.resolve(Context(model="local", method="cot", draft="rag")).draft == "rag"
    # a source that declares its tasks' draft (code documentation: direct's answer)
    # is followed ahead of the profile, for answers only; a value the run sets still wins
    code = RatNodes(retriever=ListRetriever(documents=PAGES, metadata={DRAFT_KEY: "cot"}))
    assert code.resolve(Context(model="local")).draft == "cot"
    assert code.resolve(Context(model="local", draft="sourced")).draft == "sourced"
    facts = RatNodes(retriever=ListRetriever(documents=PAGES, metadata={DRAFT_KEY: "sourced"}))
    assert facts.resolve(Context(model="openai:gpt-4o-mini")).draft == "sourced"
    assert facts.resolve(Context(model="local", answer_prompt="")).draft == "cot"
    wiki = RatNodes(retriever=ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT)))
    plan = wiki.resolve(Context(model="local"))
    assert (plan.draft, plan.answer_prompt, plan.repair) == ("cot", "", "minecraft")
    model = scripted()
    graph = build_graph(llm=model, retriever=ListRetriever(documents=PAGES))
    state = graph.invoke({"question": QUESTION}, context={"answer_prompt": ""})
    assert "settings" not in state  # not in the output; saved in the checkpoint (test_resume)


def test_general_repair_inserts_a_prerequisite_its_passage_supports() -> None:
    """The plain-words domain a plug-in builds on: the revision's need goes before its step
    when the quoted line names it and no earlier step does it; it is checked like any step,
    and nothing is dropped."""

    def revise(step: str, messages: list[BaseMessage]) -> str:
        if step == "Do the second part.":
            return (
                "FACT: 1a. ALPHAWOOD: each part of QX is done, to finish it, with the alpha "
                "tool at level 3.\nSTEP: Do the second part with the alpha tool.\n"
                "NEEDS: Set the alpha tool to level 3, Buy a boat"
            )
        return f"FACT: NONE\nSTEP: {step}\nNEEDS: none"

    model = scripted(revise)
    result = run(model, repair="fakes:general_repair")
    assert [s["draft"] for s in result["steps"]] == [
        "Do the first part of QX.",
        "Set the alpha tool to level 3.",  # supported by the line; "a boat" is not
        "Do the second part.",
        "Finish QX.",
    ]
    assert result["steps"][1]["status"] == "not_revised"  # no line quoted for it
    assert result["steps"][1]["makes"] == "Set the alpha tool to level 3"
    assert result["steps"][2]["revised"] == "Do the second part with the alpha tool."
    assert "dropped" not in {s["status"] for s in result["steps"]}
    assert "goal" not in {kind for kind, _ in model.calls}


def test_a_grounded_profile_keeps_a_revision_only_where_its_documents_give_what_it_adds() -> None:
    """The bundled model's profile (grounded): a change whose every added word is in the
    document closest to the step stands; one adding words none of it holds does not, and
    the step says which."""
    from unittest.mock import patch

    replies = {
        DRAFTS[0]: "Do the first part of QX with the alpha tool at level 3.",
        DRAFTS[1]: "Do the second part with the beta saw.",
        DRAFTS[2]: "KEEP",
    }
    model = scripted(lambda step, messages: replies[step])
    with patch("rat_agent.agent.nodes.RatNodes.grounded", return_value=True):
        steps = run(model, answer_prompt="")["steps"]
    assert [s["revised"] for s in steps] == [replies[DRAFTS[0]], DRAFTS[1], DRAFTS[2]]
    assert [s["status"] for s in steps] == ["revised", "unchanged", "unchanged"]
    assert steps[1]["note"] == (
        "the revision added words the closest document lacks (beta, saw); the draft was kept"
    )
    assert (
        run(scripted(lambda step, messages: replies[step]), answer_prompt="")["steps"][1]["revised"]
        == replies[DRAFTS[1]]
    )  # the paper's loop, any model without the entry: the reply stands


def test_a_step_no_passage_bears_on_keeps_its_draft_without_a_call() -> None:
    """The bundled model's profile (bearing_floor): a step whose best passage matches it
    less than the floor is kept as drafted, and no revision is asked for it."""
    from unittest.mock import patch

    model = scripted()
    with patch("rat_agent.agent.nodes.RatNodes.bearing_floor", return_value=0.99):
        steps = run(model, answer_prompt="")["steps"]
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query"] * 3
    assert [s["revised"] for s in steps] == DRAFTS
    assert all(s["note"].startswith("no passage bears on it (best match 0.") for s in steps)
    assert [s["sources"][0]["title"] for s in steps] == ["QX guide"] * 3  # still cited
    kept = scripted()
    with patch("rat_agent.agent.nodes.RatNodes.bearing_floor", return_value=0.01):
        assert run(kept, answer_prompt="")["steps"][0]["revised"] == revised_text(DRAFTS[0])


@pytest.mark.parametrize(
    ("revised", "documents", "unsupported"),
    [
        ("Set BatchMode to yes.", ["BatchMode: yes disables prompts."], []),
        ("Set BatchMode to no.", ["BatchMode: yes disables prompts."], ["no"]),
        # the document closest to the step decides, not any document
        ("Set BatchMode to no.", ["BatchMode: yes.", "Compression: no."], ["no"]),
        ("Set BatchMode to no.", ["Compression: no.", "BatchMode: no."], []),
        ("Set BatchMode to yes.", [], []),  # nothing to rest on: no revision was asked
        ("Set BatchMode.", ["Compression."], []),  # it only dropped words
    ],
)
def test_unsupported_words_are_those_a_revision_adds_that_its_closest_document_lacks(
    revised: str, documents: list[str], unsupported: list[str]
) -> None:
    from rat_agent.terms import unsupported as find

    assert find("Set BatchMode to maybe.", revised, documents) == unsupported


def test_a_state_update_outside_a_run_reaches_the_routers() -> None:
    """Studio's state edit and the API's POST .../state run the graph's routers outside a
    run, with no runtime: they read the defaults there, as a run without a context does."""
    from langgraph.checkpoint.memory import InMemorySaver

    graph = build_graph(llm=scripted(), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "edited"}}
    graph.update_state(config, None)
    assert graph.get_state(config).next == ("draft_cot",)
    graph.update_state(config, {"question": QUESTION}, as_node="draft_cot")
    assert graph.get_state(config).values["question"] == QUESTION


def test_a_grounded_revision_reads_the_documents_only_for_a_change() -> None:
    """The node and the revision benchmark judge a reply with one function: a KEEP or a
    reply that changes nothing never renders the documents; a change the closest document
    does not give keeps the draft and names what it lacks."""
    from rat_agent.parsing import revision

    def shown() -> list[str]:
        seen.append(1)
        return ["BatchMode: yes disables prompts."]

    seen: list[int] = []
    draft = "Set BatchMode to maybe."
    assert revision("KEEP", draft, 1, shown) == (draft, False, [])
    assert revision("STEP 1: Set BatchMode to maybe.", draft, 1, shown) == (draft, False, [])
    assert not seen
    assert revision("Set BatchMode to no.", draft, 1, shown) == (draft, False, ["no"])
    assert revision("Set BatchMode to yes.", draft, 1, shown) == ("Set BatchMode to yes.", True, [])
    assert revision("Set BatchMode to no.", draft, 1) == ("Set BatchMode to no.", True, [])
    assert revision("", draft, 1, shown) == (None, False, [])


def test_a_served_users_run_shows_a_foreign_error_as_one_line_with_an_id(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An error not of the project's making (a library's, a plug-in's) may name the server's
    paths or code: a served user reads a line with an id, the server's log keeps the rest.
    Outside a server the error is raised as it is."""
    from rat_agent.errors import InternalError

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("/srv/rat/secret.py line 3")

    monkeypatch.setattr(prompts, "revise_messages", broken)
    graph = build_graph(llm=scripted(), retriever=ListRetriever(documents=PAGES))
    with pytest.raises(KeyError):
        graph.invoke({"question": QUESTION}, context={"answer_prompt": ""})
    alice = {"identity": "alice", "is_authenticated": True}
    with pytest.raises(InternalError) as caught:
        graph.invoke(
            {"question": QUESTION},
            {"configurable": {"langgraph_auth_user": alice}},
            context={"answer_prompt": ""},
        )
    message = str(caught.value)
    ref = message.split("(error ")[1].split(")")[0]
    assert message == f"the run failed on the server (error {ref}); its log has the details"
    assert f"a served run failed (error {ref})" in caplog.text and "secret.py" in caplog.text
