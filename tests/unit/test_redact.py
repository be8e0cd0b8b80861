"""Secrets never reach the terminal, a log or a checkpoint, even when a server echoes them."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from rat_agent import cli
from rat_agent.errors import ModelError, RetrievalError
from rat_agent.redact import redact, register
from rat_agent.retrieval.qdrant import client as qdrant

KEY = "sk-proj-Zq8xW2mN5vB7cD1fG3hJ9kL0pR4tY6u"
CUT = KEY[:12] + KEY[13:]  # one character cut out of the middle
ECHOES = (KEY, KEY.upper(), CUT, KEY[: len(KEY) * 2 // 3])


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


@pytest.mark.parametrize("echo", ECHOES)
def test_an_echoed_key_is_masked_however_transformed(key: str, echo: str) -> None:
    text = f"Incorrect API key provided: {echo}. You can find your key at platform."
    masked = redact(text)
    assert echo not in masked and "***" in masked
    assert masked.startswith("Incorrect API key provided:") and "platform" in masked


def test_url_passwords_and_registered_secrets_are_masked() -> None:
    register("local-server-key-123456")
    text = "postgresql://rat:hunter2!x@127.0.0.1:5432/db refused; key local-server-key-123456"
    assert redact(text) == "postgresql://rat:***@127.0.0.1:5432/db refused; key ***"


def test_ordinary_text_is_left_alone(key: str) -> None:
    text = "STEP 1: craft 4 oak planks (minecraft-corpus:oak_planks) at http://127.0.0.1:80/x"
    assert redact(text) == text


def test_typed_errors_mask_their_own_message(key: str) -> None:
    assert KEY not in str(ModelError(f"HTTP 401: {KEY}"))
    assert KEY.upper() not in str(RetrievalError("echo", KEY.upper()))


def _provider_answers_401(httpserver: HTTPServer, echo: str) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {echo}.", "code": "invalid"}}
    httpserver.expect_request("/v1/chat/completions").respond_with_json(body, status=401)


@pytest.fixture
def provider(
    key: str, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> HTTPServer:
    """An OpenAI-compatible server on loopback, and runs stored in a fresh data folder."""
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_BASE", httpserver.url_for("/v1"))
    return httpserver


@pytest.mark.parametrize("echo", ECHOES[:3])
def test_a_key_echoed_by_the_provider_is_neither_printed_nor_stored(
    provider: HTTPServer, echo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _provider_answers_401(provider, echo)
    argv = ["ask", "How do I craft a torch?", "--model", "openai:gpt-4o-mini", "--thread", "t1"]
    assert cli.main([*argv, "--method", "direct"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "***" in err
    assert echo not in err and echo.lower() not in err.lower()
    stored = (tmp_path / "data" / "runs.sqlite").read_bytes()
    for spelling in (echo, echo.upper(), echo.lower()):
        assert spelling.encode() not in stored
    with sqlite3.connect(tmp_path / "data" / "runs.sqlite") as db:  # the error was stored
        assert db.execute("select count(*) from writes").fetchone()[0] > 0


def test_debug_tracebacks_are_masked_too(
    provider: HTTPServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAT_DEBUG", "1")
    _provider_answers_401(provider, KEY)
    assert cli.main(["ask", "q", "--model", "openai:gpt-4o-mini", "--method", "direct"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "AuthenticationError" in err  # the cause is shown...
    assert KEY not in err  # ...masked


def test_rat_debug_0_is_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAT_DEBUG", "0")
    assert cli.main(["ask", "q", "--retriever", "nope"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_qdrant_401_is_one_line_without_key_or_password(
    httpserver: HTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = "qdrant-Key-9f8e7d6c5b4a3210"
    url = httpserver.url_for("/").replace("http://", "http://admin:pa55word-xyz@").rstrip("/")
    monkeypatch.setenv("QDRANT_URL", url)
    monkeypatch.setenv("QDRANT_API_KEY", secret)
    httpserver.expect_request("/collections").respond_with_data(
        f"Invalid api-key {secret} for admin:pa55word-xyz", status=401
    )
    qdrant.close_clients()
    try:
        assert cli.main(["collections"]) == 4
    finally:
        qdrant.close_clients()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert secret not in err and "pa55word-xyz" not in err and "did not answer" in err


def test_log_lines_are_masked(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["models"]) == 0  # the CLI installs its log handler
    logging.getLogger("rat_agent.test").warning("provider said %s", json.dumps({"k": KEY}))
    err = capsys.readouterr().err
    assert "provider said" in err and KEY not in err
