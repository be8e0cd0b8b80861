"""End to end on the real stack: the tiny local model served by xllamacpp, the real corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_agent import build_graph, cli
from rat_agent.providers.chat import get_chat_model
from rat_agent.providers.stats import RunStats
from rat_agent.retrieval.qdrant import client as qdrant

pytestmark = pytest.mark.integration


def test_tiny_model_runs_rat_end_to_end() -> None:
    stats = RunStats()
    result = build_graph().invoke(
        {"question": "How do I obtain a crafting table in Minecraft?"},
        {"callbacks": [stats]},
        context={
            "model": "local-tiny",
            "retriever": "minecraft",
            "repair": "off",  # the paper's loop on the real corpus; its extension: test_defaults
            "answer_prompt": "",
            "max_steps": 2,
            "max_tokens": 48,
            "k": 2,
        },
    )
    steps = result["steps"]
    assert 1 <= len(steps) <= 2
    assert result["answer"].startswith("STEP 1:")
    for step in steps:
        assert step["query"]
        assert len(step["sources"]) == 2
        assert all(s["source"].startswith("minecraft-corpus:") for s in step["sources"])
        assert step["revised"]
    usage = stats.usage
    assert usage.model_calls == 1 + 2 * len(steps)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    # the stable-prefix layout lets the server reuse its KV cache across calls
    assert usage.cached_prompt_tokens > 0


def test_tiny_model_over_ingested_documents_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ferry.md").write_text(
        "# Ferry timetable\n\nThe island ferry leaves the harbour "
        "at 7:15 and 16:40 every weekday.\n"
    )
    (docs / "bakery.txt").write_text("The bakery on Mill Lane sells rye bread on Fridays.\n")
    assert cli.main(["ingest", str(docs), "--collection", "town"]) == 0
    capsys.readouterr()
    code = cli.main(
        [
            "ask",
            "When does the island ferry leave?",
            "--json",
            "--model",
            "local-tiny",
            "--retriever",
            "qdrant",
            "--collection",
            "town",
            "--k",
            "1",
            "--max-steps",
            "2",
            "--max-tokens",
            "48",
            "--memory",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert 1 <= len(result["steps"]) <= 2
    cited = {Path(s["source"]).name for step in result["steps"] for s in step["sources"]}
    assert cited and cited <= {"ferry.md", "bakery.txt"}
    # memory: one thought tried per checked step and one for the answer, each accounted for
    checked = [s for s in result["steps"] if s["status"] != "not_revised"]
    assert len(result["thoughts"]) == len(checked) + (1 if checked else 0)
    for note in result["thoughts"]:
        assert note["stored"] == (note["reason"] == "stored")
        assert note["reason"].split(":")[0] in {
            "stored",
            "not confident",
            "unreadable reply",
            "redundant",
        }
    assert cli.main(["memory", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(n["id"][:8] in listed for n in result["thoughts"] if n["stored"])
    qdrant.close_clients()


def test_every_method_runs_on_the_tiny_model_through_rat_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plumbing of each method on a real model (3 tasks); the scores mean nothing here."""
    from rat_agent.eval.runner import ALL_METHODS

    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "results"
    code = cli.main(
        [
            "eval",
            "--model",
            "local-tiny",
            "--tasks",
            "3",
            "--max-steps",
            "2",
            "--max-tokens",
            "40",
            "--k",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    table = (out / "minecraft-local-tiny.md").read_text()
    for method in ALL_METHODS:
        assert f"| {method} | 3 |" in table
    rows = [
        json.loads(line) for line in (out / "minecraft-local-tiny.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 3 * len(ALL_METHODS)
    assert all(row["error"] == "" and row["stats"]["model_calls"] >= 1 for row in rows)
    # the report of a larger run that has not computed its new task yet: nothing is run
    args = [
        "eval",
        "--model",
        "local-tiny",
        "--tasks",
        "4",
        "--max-steps",
        "2",
        "--max-tokens",
        "40",
        "--k",
        "1",
        "--out",
        str(out),
        "--cached-only",
    ]
    assert cli.main(args) == 0
    partial = (out / "minecraft-local-tiny.md").read_text()
    assert f"partial: {len(rows)} of {4 * len(ALL_METHODS)} runs" in partial
    assert cli.main([*args, "--k", "2"]) == 2  # other settings: nothing computed, an error


def test_local_tiny_answers_and_reuses_its_server() -> None:
    from rat_agent.providers import local_server

    model = get_chat_model("local-tiny", max_tokens=16)
    reply = model.invoke("Name one colour.")
    assert isinstance(reply.content, str)
    assert reply.content.strip()
    usage = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0
    assert 0 < usage["output_tokens"] <= 16

    other = get_chat_model("local-tiny", temperature=0.5, max_tokens=8)
    assert other is not model
    (server,) = [s for s in local_server.running_servers() if s.alias == "local-tiny"]
    assert getattr(model, "base_url", None) == server.base_url
    assert getattr(other, "base_url", None) == server.base_url
    assert get_chat_model("local-tiny", max_tokens=16) is model

    # Same prompt again: llama.cpp's prompt cache serves the prefix, and it shows up.
    again = model.invoke("Name one colour.")
    assert again.usage_metadata is not None
    assert again.usage_metadata.get("input_token_details", {}).get("cache_read", 0) > 0


def test_a_revision_begun_with_its_one_quotable_line_finishes_as_the_schema_asks() -> None:
    """The local server continues plan repair's reply after the quote the schema fixes
    (`reply.begun`): the reply holds that quote, and the rest keeps the schema's form."""
    from langchain_core.messages import AIMessage

    from rat_agent.agent.prompts import SYSTEM
    from rat_agent.providers.call import ask
    from rat_agent.repair import reply
    from rat_minecraft.repair import REVISE_JSON

    line = "Crafting: 8 Cobblestone gives 1 Furnace. Needs a Crafting Table."
    documents = [{"title": "Furnace", "source": "wiki/Furnace", "content": line}]
    messages = reply.grounded_messages(
        SYSTEM, "How do I get a furnace?", "Make a furnace.", 2, documents, instruction=REVISE_JSON
    )
    schema = reply.revision_schema(reply.facts(documents, best=1), needs=True, none=False)
    begun = reply.begun(schema)
    assert begun is not None
    model = get_chat_model("local-tiny", max_tokens=256)
    text = ask(model, "revise", [*messages, AIMessage(begun.prefix)], grammar=begun.grammar)
    data = json.loads(begun.joined(text))
    assert list(data) == ["fact", "step", "needs"]
    assert data["fact"] == line
    assert 3 <= len(data["step"]) <= 300 and "\n" not in data["step"]
    assert len(data["needs"]) <= 6 and all(1 <= len(n) <= 80 for n in data["needs"])
    assert reply.parse_revision(begun.joined(text), 2).fact == line
