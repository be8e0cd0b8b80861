"""The general core: on a source that declares no domain, default settings run exactly the
paper's loop and write the answer from its steps, and a revision changes a step only on a
passage that bears on it."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, wiki_docs
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage

from rat_agent import build_graph
from rat_agent.agent import prompts
from rat_agent.agent.context import Context
from rat_agent.retrieval.settings import MINECRAFT

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


def scripted(revise: Any = None) -> ScriptedModel:
    """Drafts DRAFT; quotes the first line shown and names a prerequisite in every
    revision (which only a plan repair extension would act on)."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "query":
            return f"QUERY{len(current_step(messages))}"
        if kind == "revise":
            step = current_step(messages)
            if revise is not None:
                return str(revise(step, messages))
            return (
                "FACT: 1a. ALPHAWOOD: each part of QX is done, to finish it, with the alpha "
                f"tool at level 3.\nSTEP: {step} Use the alpha tool at level 3.\nNEEDS: Get QUERY1 "
                "about ALPHAWOOD"
            )
        if kind == "goal":  # only a plan repair extension asks it
            return "Nothing in particular"
        if kind == "answer":
            return "The written answer."
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def run(model: ScriptedModel, retriever: Any = None, **context: Any) -> dict[str, Any]:
    graph = build_graph(llm=model, retriever=retriever or ListRetriever(documents=PAGES))
    return graph.invoke({"question": QUESTION}, context=context)


def test_the_default_loop_on_a_passed_in_retriever_is_the_papers() -> None:
    """2 + 2n calls for n draft steps: the draft is a reply, written from the task's own
    passages where they bear on it and the source confirms no name of the model's own
    answer (the prompt the rag method sends, after the model's own), each of its parts a
    step; n revised steps, each the model's revision, each with its sources; nothing
    dropped, inserted or rewritten by a rule; the answer is that reply with its parts
    revised in place."""
    model, retriever = scripted(), ListRetriever(documents=PAGES)
    result = run(model, retriever)
    assert [kind for kind, _ in model.calls] == ["draft"] * 2 + ["query", "revise"] * 3
    assert prompt_text(model.calls[0][1]) == prompt_text(prompts.direct_messages(QUESTION))
    assert retriever.queries == [QUESTION] + [f"QUERY{len(d)}" for d in DRAFTS]
    drafted = prompt_text(model.calls[1][1])
    assert prompts.RAG_ANSWER.strip() in drafted and "[1] QX guide (corpus:qx)" in drafted
    steps = result["steps"]
    assert [s["draft"] for s in steps] == DRAFTS
    assert [s["revised"] for s in steps] == [f"{d} Use the alpha tool at level 3." for d in DRAFTS]
    assert [s["status"] for s in steps] == ["revised"] * 3
    for step in steps:
        assert {s["source"] for s in step["sources"]} == {"corpus:qx", "corpus:alpha"}
        assert step["fact"].startswith("ALPHAWOOD: each part")
        assert "makes" not in step and "QUERY1" not in step["revised"]
    assert result["answer"] == "\n".join(
        f"STEP {n}: {d} Use the alpha tool at level 3." for n, d in enumerate(DRAFTS, 1)
    )
    # the core's grounded prompt carries no domain example
    revision = prompt_text(model.calls[3][1])
    for word in ("craft", "recipe", "dough", "mixer", "flour", "NEEDS"):
        assert word not in revision


def test_a_chain_of_thought_draft_is_the_papers_loop_then_an_answer_from_its_steps() -> None:
    """draft "cot": 1 + 2n calls for the steps, then the answer written from them."""
    model = scripted()
    result = run(model, draft="cot")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3 + ["answer"]
    drafting = prompts.draft_messages(QUESTION, Context().max_steps)
    assert prompt_text(model.calls[0][1]) == prompt_text(drafting)
    assert [s["revised"] for s in result["steps"]] == [
        f"{d} Use the alpha tool at level 3." for d in DRAFTS
    ]
    assert result["answer"] == "The written answer."
    written = prompt_text(model.calls[-1][1])
    # the checked steps, the line they quoted and the passages closest to the task
    assert "STEP 3: Finish QX. Use the alpha tool at level 3." in written
    assert written.count("ALPHAWOOD: each part of QX") >= 2
    assert written.index("Checked steps so far") < written.index("<documents>\n")
    # as a plan, the steps are the answer
    model = scripted()
    result = run(model, draft="cot", output="steps")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3
    assert result["answer"] == "\n".join(
        f"STEP {n}: {d} Use the alpha tool at level 3." for n, d in enumerate(DRAFTS, 1)
    )


def test_the_general_revision_prompt_has_no_domain_words() -> None:
    for text in (prompts.SYSTEM, prompts.REVISE_GROUNDED, prompts.REVISE_GROUNDED_JSON):
        for word in ("craft", "recipe", "item", "tool", "quantit", "dough", "mixer"):
            assert word not in text.lower()


@pytest.mark.parametrize(
    "reply",
    [
        "FACT: NONE\nSTEP: Something else entirely.",
        "FACT: 9z. A line no document has.\nSTEP: Something else entirely.",
        "Something else entirely.",
    ],
)
def test_a_revision_without_a_passage_that_bears_on_it_keeps_the_draft(reply: str) -> None:
    model = scripted(lambda step, messages: reply)
    result = run(model)
    assert [s["revised"] for s in result["steps"]] == DRAFTS
    assert {s["status"] for s in result["steps"]} == {"not_revised"}
    assert {s["note"] for s in result["steps"]} == {"no passage bears on it; the draft was kept"}
    assert [kind for kind, _ in model.calls] == ["draft"] * 2 + ["query", "revise"] * 3
    assert result["answer"] == DRAFT  # the draft, unchanged


def test_a_retriever_by_import_path_gets_the_papers_loop() -> None:
    model = scripted()
    graph = build_graph(llm=model)
    result = graph.invoke({"question": QUESTION}, context={"retriever": "fakes:SHARED_RETRIEVER"})
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3
    assert len(result["steps"]) == 3


def test_a_retriever_that_declares_minecraft_gets_crafting_repair() -> None:
    """The domain is the source's to declare; plan repair follows it."""
    model = scripted()
    run(model, ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT)))
    assert [kind for kind, _ in model.calls][:2] == ["draft", "goal"]
    model = scripted()
    run(model, ListRetriever(documents=wiki_docs(2), metadata=dict(MINECRAFT)), repair="off")
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 3  # a plan


def test_general_repair_inserts_a_prerequisite_its_passage_supports() -> None:
    """repair="general": the revision's need goes before its step when the quoted line
    names it and no earlier step does it; it is checked like any step, and nothing is
    dropped."""

    def revise(step: str, messages: list[BaseMessage]) -> str:
        if step == "Do the second part.":
            return (
                "FACT: 1a. ALPHAWOOD: each part of QX is done, to finish it, with the alpha "
                "tool at level 3.\nSTEP: Do the second part with the alpha tool.\n"
                "NEEDS: Set the alpha tool to level 3, Buy a boat"
            )
        return f"FACT: NONE\nSTEP: {step}\nNEEDS: none"

    model = scripted(revise)
    result = run(model, repair="general")
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
