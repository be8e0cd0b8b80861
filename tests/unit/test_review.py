"""review_draft: the run pauses after the draft; a person edits, adds or deletes steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import ListRetriever, ScriptedModel, plan_model, wiki_docs
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from rat_agent import cli, retrieval
from rat_agent.agent.graph import build_graph
from rat_agent.providers import chat

DRAFT = "STEP 1: get logs\nSTEP 2: make planks\nSTEP 3: craft a table"
CONTEXT = {"review_draft": True}


def paused_graph(**context: object) -> tuple[object, ScriptedModel, dict[str, object]]:
    model = plan_model(DRAFT)
    graph = build_graph(
        checkpointer=InMemorySaver(), llm=model, retriever=ListRetriever(documents=wiki_docs(1))
    )
    config = {"configurable": {"thread_id": "t"}}
    result = graph.invoke({"question": "table?"}, config, context={**CONTEXT, **context})
    (pending,) = result["__interrupt__"]
    assert pending.value == {
        "question": "table?",
        "drafts": ["get logs", "make planks", "craft a table"],
    }
    assert [kind for kind, _ in model.calls] == ["draft"]  # nothing checked yet
    return graph, model, config


def revised(result: dict[str, object]) -> list[str]:
    return [s["revised"] for s in result["steps"]]  # type: ignore[attr-defined]


def test_accepting_keeps_the_draft() -> None:
    graph, model, config = paused_graph()
    result = graph.invoke(Command(resume=True), config, context=CONTEXT)  # type: ignore[attr-defined]
    assert revised(result) == ["FIXED get logs", "FIXED make planks", "FIXED craft a table"]
    assert [kind for kind, _ in model.calls].count("draft") == 1  # the draft is not redone


def test_edited_steps_replace_the_draft() -> None:
    graph, _, config = paused_graph()
    edited = {"drafts": ["get four logs", "craft a table"]}  # one edited, one deleted
    result = graph.invoke(Command(resume=edited), config, context=CONTEXT)  # type: ignore[attr-defined]
    assert revised(result) == ["FIXED get four logs", "FIXED craft a table"]
    assert [s["draft"] for s in result["steps"]] == edited["drafts"]
    origin = graph.get_state(config).values["draft_from"]  # type: ignore[attr-defined]
    assert origin == "a person's edit of the model's chain of thought"


def test_a_text_of_steps_is_accepted_and_bounded_by_max_steps() -> None:
    """The run's max_steps, as it started: a resume goes on with the run's settings."""
    graph, _, config = paused_graph(max_steps=3)
    text = "STEP 1: a\nSTEP 2: b\nSTEP 3: c\nSTEP 4: d"
    result = graph.invoke(Command(resume=text), config, context=CONTEXT)  # type: ignore[attr-defined]
    assert [s["draft"] for s in result["steps"]][:2] == ["a", "b"]
    assert len(result["steps"]) == 3  # the tail is merged, never dropped
    assert "d" in result["steps"][2]["draft"]


def test_accept_as_a_dict_for_json_clients() -> None:
    graph, _, config = paused_graph()
    result = graph.invoke(
        Command(resume={"accept": True}),
        config,  # type: ignore[attr-defined]
        context=CONTEXT,
    )
    assert len(result["steps"]) == 3


@pytest.mark.parametrize("bad", [{"drafts": []}, {"drafts": [1, 2]}, 42])
def test_a_bad_review_asks_again_saying_why(bad: object) -> None:
    graph, model, config = paused_graph()
    result = graph.invoke(Command(resume=bad), config, context=CONTEXT)  # type: ignore[attr-defined]
    (pending,) = result["__interrupt__"]
    assert pending.value["drafts"] == ["get logs", "make planks", "craft a table"]
    assert "steps" in pending.value["error"]
    result = graph.invoke(Command(resume=True), config, context=CONTEXT)  # type: ignore[attr-defined]
    assert len(result["steps"]) == 3
    assert [kind for kind, _ in model.calls].count("draft") == 1


@pytest.fixture
def fake_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    model = plan_model(DRAFT)
    monkeypatch.setattr(chat, "get_chat_model", lambda name, **kw: model)
    monkeypatch.setitem(
        retrieval.FACTORIES, "fake", lambda ctx: ListRetriever(documents=wiki_docs(1), echo=True)
    )
    retrieval.clear_cache()
    return model


def test_the_cli_pauses_then_resumes_with_edited_steps(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(["ask", "table?", "--retriever", "fake", "--review-draft", "--thread", "r1"]) == 0
    )
    captured = capsys.readouterr()
    assert "paused for review" in captured.err and "--thread r1 --steps FILE" in captured.err
    steps = tmp_path / "steps.txt"
    steps.write_text("STEP 1: get four logs\nSTEP 2: craft a table\n")
    assert cli.main(["ask", "--thread", "r1", "--steps", str(steps), "--json"]) == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert [s["revised"] for s in result["steps"]] == ["FIXED get four logs", "FIXED craft a table"]


def test_the_cli_json_reports_the_pause_and_a_bare_resume_accepts(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert (
        cli.main(
            [
                *("ask", "table?", "--retriever", "fake", "--review-draft", "--thread", "r2"),
                *("--json", "--answer-prompt", ""),
            ]
        )
        == 0
    )
    paused = json.loads(capsys.readouterr().out)
    assert paused["status"] == "paused_for_review" and len(paused["drafts"]) == 3
    assert cli.main(["ask", "--thread", "r2", "--quiet"]) == 0
    assert "STEP 3: FIXED craft a table" in capsys.readouterr().out


def test_the_cli_reports_a_bad_steps_file_and_stays_paused(
    fake_world: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(
            [
                *("ask", "table?", "--retriever", "fake", "--review-draft", "--thread", "r3"),
                *("--answer-prompt", ""),
            ]
        )
        == 0
    )
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    assert cli.main(["ask", "--thread", "r3", "--steps", str(empty)]) == 2
    assert "no steps" in capsys.readouterr().err
    binary = tmp_path / "steps.bin"
    binary.write_bytes(b"STEP 1: \xff\xfe\x00 log")
    assert cli.main(["ask", "--thread", "r3", "--steps", str(binary)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
    assert cli.main(["ask", "--thread", "r3", "--quiet"]) == 0
    assert "STEP 3: FIXED craft a table" in capsys.readouterr().out


def test_steps_without_a_paused_run_is_an_error(
    fake_world: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ask", "table?", "--retriever", "fake", "--steps", "x.txt"]) == 2
    assert "paused for review" in capsys.readouterr().err
