"""Steps checked ahead (`speculate`): the loop sends the prompts the plain loop sends and
ends with the same steps; a call made ahead under the right guess is the loop's call, not
one more; a crash mid-pipeline resumes without losing or repeating a revised step."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from rat_agent import build_graph
from rat_agent.errors import UnusableReply

QUESTION = "Plan the task QX"
DRAFTS = [f"Do part {n} of QX." for n in range(1, 7)]
DRAFT = "\n".join(f"STEP {n}: {text}" for n, text in enumerate(DRAFTS, 1))
PAGES = [
    Document(
        page_content=f"Part {n} of QX is done with the alpha tool at level {n}.",
        metadata={"title": f"QX part {n}", "source": f"corpus:qx-{n}"},
    )
    for n in range(1, 7)
]
Revise = Callable[[str], str]


def kept(step: str) -> str:
    return step


def changed(step: str) -> str:
    return f"{step} Use the alpha tool."


def half(step: str) -> str:
    return changed(step) if DRAFTS.index(step) % 2 else step


def scripted(revise: Revise) -> ScriptedModel:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "query":
            return f"query for {current_step(messages)}"
        if kind == "revise":
            step = current_step(messages)
            return revise(step) if step in DRAFTS else step
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def run(revise: Revise, speculate: int, **config: Any) -> tuple[dict[str, Any], ScriptedModel]:
    model = scripted(revise)
    graph = build_graph(llm=model, retriever=ListRetriever(documents=PAGES), **config)
    context = {"answer_prompt": "", "speculate": speculate}
    result = graph.invoke({"question": QUESTION}, context=context)
    return result, model


def prompts_of(model: ScriptedModel) -> Counter[tuple[str, str]]:
    return Counter((kind, prompt_text(messages)) for kind, messages in model.calls)


@pytest.mark.parametrize("revise", [kept, changed, half], ids=["kept", "changed", "half"])
def test_ahead_the_loop_sends_the_plain_loops_prompts_and_ends_alike(revise: Revise) -> None:
    plain, plain_model = run(revise, 0)
    ahead, ahead_model = run(revise, 4)
    assert ahead["steps"] == plain["steps"] and ahead["answer"] == plain["answer"]
    # every prompt of the plain loop was sent; ahead, only guesses were added
    assert not prompts_of(plain_model) - prompts_of(ahead_model)


def test_right_guesses_cost_no_call() -> None:
    """Every step stays as drafted: each call made ahead is one the loop claims, so the
    pipelined run makes exactly the plain run's calls."""
    _, plain_model = run(kept, 0)
    _, ahead_model = run(kept, 8)
    assert prompts_of(ahead_model) == prompts_of(plain_model)
    assert len(plain_model.calls) == 1 + 2 * len(DRAFTS)


def test_a_wrong_guess_costs_calls_not_the_result() -> None:
    _, plain_model = run(changed, 0)
    _, ahead_model = run(changed, 2)
    assert len(ahead_model.calls) > len(plain_model.calls)


def test_a_crash_mid_pipeline_resumes_without_losing_or_repeating_a_step(tmp_path: Any) -> None:
    failed: list[str] = []

    def crashing(revise: Revise) -> ScriptedModel:
        """Fails once, on the loop's own revision of step 3 (the one whose prompt holds
        steps 1 and 2 as revised), not on a guess made ahead."""
        model = scripted(revise)
        respond = model.respond

        def respond_or_fail(kind: str, messages: list[BaseMessage]) -> str:
            text = prompt_text(messages)
            loops = kind == "revise" and changed(DRAFTS[1]) in text
            if loops and current_step(messages) == DRAFTS[2] and not failed:
                failed.append(text)
                raise UnusableReply("the model went away")
            return respond(kind, messages)

        model.respond = respond_or_fail
        return model

    config: Any = {"configurable": {"thread_id": "t"}}
    context = {"answer_prompt": "", "speculate": 4}
    with sqlite3.connect(tmp_path / "runs.db", check_same_thread=False) as connection:
        saver = SqliteSaver(connection)
        first = crashing(changed)
        graph = build_graph(llm=first, retriever=ListRetriever(documents=PAGES), checkpointer=saver)
        with pytest.raises(UnusableReply):
            graph.invoke({"question": QUESTION}, config, context=context)
        done = graph.get_state(config).values["steps"]
        assert [s["draft"] for s in done] == DRAFTS[:2]  # what was checked is kept
        second = scripted(changed)
        graph = build_graph(
            llm=second, retriever=ListRetriever(documents=PAGES), checkpointer=saver
        )
        result = graph.invoke(None, config, context=context)
    plain, _ = run(changed, 0)
    assert result["steps"] == plain["steps"]
    revised_again = [current_step(m) for kind, m in second.calls if kind == "revise"]
    assert not set(revised_again) & set(DRAFTS[:2])  # steps 1 and 2 are not checked again
