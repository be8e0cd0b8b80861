"""A domain plugs in by entry points, as docs/domains.md shows: its worked example,
installed with pip, gives a retriever by name and a plan repair, and the graph runs both."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import ScriptedModel, current_step, prompt_text
from langchain_core.messages import BaseMessage

from rat_agent import build_graph, plugins, retrieval
from rat_agent.agent import extension
from rat_agent.errors import ConfigError

DOC = Path(__file__).resolve().parents[2] / "docs" / "domains.md"


def block(language: str) -> str:
    """The first code block of the docs example in `language`."""
    found = re.search(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)
    assert found, f"docs/domains.md has no {language} block"
    return found.group(1)


def forget() -> None:
    plugins.forget()
    retrieval.clear_cache()
    extension.forget()
    for name in [m for m in sys.modules if m.split(".")[0] == "kitchen_domain"]:
        del sys.modules[name]


@pytest.fixture
def kitchen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The docs example, installed with pip into a folder on the path, as a user's
    `pip install` would put it in site-packages."""
    source = tmp_path / "kitchen"
    (source / "kitchen_domain").mkdir(parents=True)
    (source / "kitchen_domain" / "__init__.py").write_text(block("python"))
    (source / "pyproject.toml").write_text(block("toml"))
    site = tmp_path / "site"
    offline = ["--no-deps", "--no-index", "--no-build-isolation", "--disable-pip-version-check"]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            *offline,
            "--target",
            str(site),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    monkeypatch.syspath_prepend(str(site))
    forget()
    yield
    monkeypatch.undo()
    forget()


BREAD = "Bake the bread."


def respond(kind: str, messages: list[BaseMessage]) -> str:
    """Drafts two steps; the revision of the baking step quotes its note and names what it
    needs (the general repair's reply: FACT, STEP, NEEDS)."""
    if kind == "draft":
        return f"STEP 1: {BREAD}\nSTEP 2: Serve it."
    if kind == "query":
        return current_step(messages)
    if kind == "revise":
        step = current_step(messages)
        if step == BREAD:
            line = next(
                line.strip()
                for line in prompt_text(messages).splitlines()
                if "bake it at 220 C" in line
            )
            return f"FACT: {line}\nSTEP: Bake the bread at 220 C.\nNEEDS: knead the dough"
        return f"FACT: NONE\nSTEP: {step}\nNEEDS: none"
    raise AssertionError(kind)


def test_the_docs_domain_plugs_in_by_entry_points_and_its_repair_runs(kitchen: None) -> None:
    assert {"kitchen"} <= set(plugins.installed(plugins.RETRIEVERS))
    model = ScriptedModel(respond=respond, calls=[])
    result = build_graph(llm=model).invoke(
        {"question": "How do I bake bread?"}, context={"retriever": "kitchen"}
    )
    # repair "auto" followed the source's domain: the need its note supports is inserted
    # before the step and checked like any other; the steps are the answer
    assert [s["draft"] for s in result["steps"]] == ["First, knead the dough.", BREAD, "Serve it."]
    assert result["steps"][1]["revised"] == "Bake the bread at 220 C."
    assert "kitchen:bread" in {s["source"] for s in result["steps"][1]["sources"]}
    assert result["answer"].startswith("STEP 1: First, knead the dough.")


def test_the_same_source_without_repair_runs_the_papers_loop(kitchen: None) -> None:
    model = ScriptedModel(respond=lambda kind, m: respond(kind, m) if kind != "answer" else "Done.")
    result = build_graph(llm=model).invoke(
        {"question": "How do I bake bread?"}, context={"retriever": "kitchen", "repair": "off"}
    )
    assert [s["draft"] for s in result["steps"]] == [BREAD, "Serve it."]
    assert result["answer"] == "Done."  # no plan repair: the answer written from the steps


def test_a_name_no_plug_in_registers_is_a_clear_error() -> None:
    graph = build_graph(llm=ScriptedModel(respond=respond, calls=[]))
    with pytest.raises(ConfigError, match="unknown retriever 'kitchen'"):
        graph.invoke({"question": "How do I bake bread?"}, context={"retriever": "kitchen"})
    with pytest.raises(ConfigError, match="unknown repair 'kitchen'"):
        graph.invoke(
            {"question": "Bake bread"}, context={"retriever": "qdrant", "repair": "kitchen"}
        )
