"""The README's quick starts, run as a reader would type them: the installed `rat` in a
fresh home and data folder, on the tiny local model (the bundled one takes minutes a run),
with small budgets; the web with keys on loopback fakes of Tavily and an OpenAI-compatible
server. Every other written command is checked against the CLI by tests/unit/test_docs.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doc_commands import ROOT, Command, commands
from fakes import make_pdf
from pytest_httpserver import HTTPServer

pytestmark = pytest.mark.integration

RAT = str(Path(sys.executable).parent / "rat")
# Small budgets, so the tiny model's runs take seconds; the flags stay the reader's own. Plan
# repair's own budget is the plug-in's, so it is off here (test_defaults runs it as shipped).
BUDGET = ["--max-steps", "2", "--max-tokens", "48", "--repair", "off"]
SNIPPET = "Create the environment with py -m venv .venv, then run .venv\\Scripts\\activate."


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


@pytest.fixture
def reader(tmp_path: Path, httpserver: HTTPServer) -> dict[str, str]:
    """A reader's machine: a home with notes, a folder with a manual, no runs yet, and the
    providers' endpoints on loopback."""
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "keys.md").write_text(
        "# API keys\n\nRotate the API keys every 90 days from the admin console: create the "
        "new key, deploy it, then revoke the old one.\n"
    )
    (tmp_path / "work" / "docs").mkdir(parents=True)
    (tmp_path / "work" / "docs" / "manual.pdf").write_bytes(
        make_pdf("To rotate the API keys open Settings then Keys then Rotate")
    )
    httpserver.expect_request("/search").respond_with_json(
        {
            "query": "q",
            "answer": None,
            "images": [],
            "results": [
                {
                    "title": "Python venv on Windows",
                    "url": "https://docs.example/venv",
                    "content": SNIPPET,
                    "score": 0.9,
                    "raw_content": None,
                }
            ],
            "response_time": 0.1,
        }
    )
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        completion("STEP 1: Create a virtual environment with py -m venv .venv.")
    )
    keep = {"PATH", "LANG", "RAT_CACHE_DIR", "PYTHONDONTWRITEBYTECODE"}
    return {
        **{k: v for k, v in os.environ.items() if k in keep},
        "HOME": str(home),
        "RAT_DATA_DIR": str(tmp_path / "data"),
        "RAT_KEEP_ALIVE": "0",
        "TAVILY_API_BASE_URL": httpserver.url_for("").rstrip("/"),
        "OPENAI_BASE_URL": httpserver.url_for("/v1"),
        "OPENAI_API_BASE": httpserver.url_for("/v1"),
        "CWD": str(tmp_path / "work"),
    }


def run(command: Command, env: dict[str, str], thread: str) -> subprocess.CompletedProcess[str]:
    argv = [RAT if command.program == "rat" else command.argv[0], *command.argv[1:]]
    argv = [thread if word == "THREAD" else word for word in argv]
    if argv[1] == "ask":
        if "--model" not in argv:
            argv += ["--model", "local-tiny"]
        argv += [*BUDGET, "--json"]
    home = {**env, **command.env}
    if "OPENAI_BASE_URL" in command.env:  # the reader's own OpenAI-compatible server: the fake
        home["OPENAI_BASE_URL"] = env["OPENAI_BASE_URL"]
    argv = [word.replace("~", home["HOME"], 1) if word.startswith("~") else word for word in argv]
    return subprocess.run(
        argv,
        cwd=env["CWD"],
        env={k: v for k, v in home.items() if k != "CWD"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_readme_quick_starts_run_as_written(reader: dict[str, str]) -> None:
    env, thread, answers = dict(reader), "", []
    # `rat ui` serves until stopped: tests/integration/test_ui.py starts it and reads the page
    # DuckDuckGo is the real web and `ollama:` a package and a server the reader installs:
    # tests/unit/test_keyless.py runs the first on a fake client; the rest run here
    readme = [
        c
        for c in commands(ROOT / "README.md")
        if c.program in ("rat", "export")
        and c.argv[1:2] != ["ui"]
        and not any(w.startswith(("duckduckgo", "ollama:")) for w in c.argv)
    ]
    assert len([c for c in readme if c.program == "rat"]) >= 5
    for command in readme:
        if command.program == "export":  # the reader's keys: any value reaches the fakes
            env.update({word.split("=")[0]: "test-key" for word in command.argv[1:]})
            continue
        done = run(command, env, thread)
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
        if command.argv[1] == "ask":
            result = json.loads(done.stdout)
            thread = result["thread"]
            assert result["answer"].strip() and result["steps"], command
            answers.append(result)
        elif command.argv[1] == "show":
            assert thread in done.stdout or result["question"] in done.stdout
    # your documents: the steps cite the notes or the manual; the web: the fake page
    cited = [{s["source"] for step in r["steps"] for s in step["sources"]} for r in answers]
    assert any(Path(src).name in {"keys.md", "manual.pdf"} for src in cited[1]), cited[1]
    web = [c for r, c in zip(answers, cited, strict=True) if "Windows" in r["question"]]
    assert web and all("https://docs.example/venv" in sources for sources in web)
