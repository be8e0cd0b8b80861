"""The README's own-model line for an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM
Studio): OPENAI_BASE_URL and `--model openai:NAME`, no key, against a fake server on
127.0.0.1 that answers as such a server does."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

ROOT = Path(__file__).resolve().parents[2]


def completion(text: str) -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "qwen2.5:1.5b",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    made = HTTPServer(host="127.0.0.1", port=0)
    made.start()
    yield made
    made.clear()
    made.stop()


def test_the_readmes_openai_compatible_line_runs_the_loop_without_a_key(
    server: HTTPServer, tmp_path: Path
) -> None:
    def answer(request: Request) -> Response:
        prompt = json.loads(request.get_data())["messages"][-1]["content"]
        if "STEP <number>:" in prompt:  # the draft
            text = "STEP 1: Open the settings.\nSTEP 2: Turn on backups."
        elif "search query" in prompt:
            text = "backup settings"
        elif "final response" in prompt:
            text = "Open the settings and turn on backups."
        else:  # a revision
            text = "KEEP"
        return Response(json.dumps(completion(text)), content_type="application/json")

    server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(answer)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "RAT_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT / "tests"),
        "OPENAI_BASE_URL": server.url_for("/v1"),  # the README's line, no OPENAI_API_KEY
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rat_agent.cli",
            "ask",
            "How do I turn on backups?",
            "--model",
            "openai:qwen2.5:1.5b",
            "--retriever",
            "fakes:make_retriever",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Open the settings and turn on backups." in done.stdout
    sent = [json.loads(r.get_data()) for r, _ in server.log]
    assert (
        len(sent) == 1 + 2 * 2 + 1
    )  # the paper's loop: draft, a query and a revision a step, answer
    assert {body["model"] for body in sent} == {"qwen2.5:1.5b"}
    assert all(r.headers.get("Authorization") == "Bearer none" for r, _ in server.log)
