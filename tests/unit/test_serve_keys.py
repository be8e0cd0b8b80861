"""The API keys of `make serve`: `rat serve-keys`, the key file, the auth handler that reads
it, the import paths a served user may name, and serve.sh's refusal to serve others openly."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph_sdk import Auth

from rat_agent.errors import ConfigError
from rat_agent.providers import imports
from rat_agent.serve import auth
from rat_agent.serve.keys import KeyFile, KeyRejected

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "serve.sh"


def rat(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_key_is_printed_once_stored_hashed_and_revoked_by_id_or_user(tmp_path: Path) -> None:
    env = {**os.environ, "RAT_SERVE_KEYS": str(tmp_path / "keys.json")}
    made = rat("serve-keys", "add", "alice", "--label", "laptop", env=env)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()  # alone on stdout, for KEY=$(rat serve-keys add alice)
    assert key.startswith("rat_") and len(key) == 60
    second = rat("serve-keys", "add", "alice", env=env).stdout.strip()
    bob = rat("serve-keys", "add", "bob", env=env).stdout.strip()

    text = (tmp_path / "keys.json").read_text()
    assert key.split("_", 2)[2] not in text and "alice" in text  # the secret is never stored
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600
    listed = rat("serve-keys", "list", env=env)
    assert listed.returncode == 0 and "laptop" in listed.stdout and key not in listed.stdout
    assert len(listed.stdout.strip().splitlines()) == 3

    keys = KeyFile(tmp_path / "keys.json")
    assert keys.user_of(key) == keys.user_of(second) == "alice" and keys.user_of(bob) == "bob"
    gone = rat("serve-keys", "revoke", key.split("_", 2)[1], env=env)
    assert gone.returncode == 0, gone.stderr
    with pytest.raises(KeyRejected, match="unknown or revoked"):
        keys.user_of(key)
    assert keys.user_of(second) == "alice"  # revoking one key leaves the user's others
    assert rat("serve-keys", "revoke", "alice", env=env).returncode == 0
    with pytest.raises(KeyRejected):
        keys.user_of(second)
    assert keys.user_of(bob) == "bob"
    again = rat("serve-keys", "revoke", "alice", env=env)
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "Traceback" not in again.stderr
    assert "revoked" in rat("serve-keys", "list", env=env).stdout


def test_a_bad_user_name_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "RAT_SERVE_KEYS": str(tmp_path / "keys.json")}
    done = rat("serve-keys", "add", "a b", env=env)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert not (tmp_path / "keys.json").exists()


def test_a_forged_or_malformed_key_opens_nothing(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    with pytest.raises(KeyRejected, match="no API keys"):
        keys.user_of("rat_000000000000_" + "a" * 43)
    _, key = keys.add("alice")
    ident, secret = key.split("_", 2)[1], key.split("_", 2)[2]
    for bad in (
        f"rat_{ident}_{secret[:-1]}{'B' if secret[-1] != 'B' else 'C'}",  # one character off
        f"rat_{'0' * 12}_{secret}",  # the secret under another id
        key + "x",
        key.upper(),
        "",
    ):
        with pytest.raises(KeyRejected):
            keys.user_of(bad)
    (tmp_path / "keys.json").write_text("{not json")
    with pytest.raises(ConfigError, match="unreadable"):
        KeyFile(tmp_path / "keys.json").records()


def test_concurrent_adds_all_land(tmp_path: Path) -> None:
    env = {**os.environ, "RAT_SERVE_KEYS": str(tmp_path / "keys.json")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rat_agent.cli", "serve-keys", "add", f"user{n}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for n in range(4)
    ]
    keys = [p.communicate(timeout=120)[0].strip() for p in procs]
    stored = KeyFile(tmp_path / "keys.json")
    assert len(json.loads((tmp_path / "keys.json").read_text())["keys"]) == 4
    assert [stored.user_of(k) for k in keys] == [f"user{n}" for n in range(4)]


def test_the_handler_reads_either_header_and_rejects_with_401(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    monkeypatch.setattr(auth, "_keys", keys)
    _, key = keys.add("alice")

    def call(headers: dict[str, str]) -> str:
        return str(asyncio.run(auth.authenticate(headers))["identity"])

    assert call({"x-api-key": key}) == "alice"
    assert call({"Authorization": f"Bearer {key}"}) == "alice"
    assert asyncio.run(auth.authenticate({b"x-api-key": key.encode()}))["identity"] == "alice"
    for headers, why in (
        ({}, "required"),
        ({"authorization": f"Basic {key}"}, "required"),
        ({"x-api-key": "lsv2_pt_somebody_elses"}, "malformed"),
    ):
        with pytest.raises(Auth.exceptions.HTTPException) as caught:
            call(headers)
        assert caught.value.status_code == 401 and why in str(caught.value.detail)
    keys.revoke("alice")  # the next request reads the replaced file
    with pytest.raises(Auth.exceptions.HTTPException, match="revoked"):
        call({"x-api-key": key})


def test_a_served_user_names_only_the_modules_the_operator_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_core.retrievers import BaseRetriever

    from rat_agent.agent.context import Context
    from rat_agent.agent.extension import repair_for

    monkeypatch.setenv("RAT_IMPORTS", "")
    with pytest.raises(ConfigError, match="RAT_IMPORTS"):
        imports.load("os:getcwd", BaseRetriever, "retriever")
    assert repair_for(Context(repair="minecraft")) is not None  # installed
    monkeypatch.setenv("RAT_IMPORTS", "fakes, my_kb")
    assert imports.allowed("fakes") and imports.allowed("my_kb.sub")
    assert not imports.allowed("fakesx") and not imports.allowed("os")
    loaded = imports.load("fakes:make_retriever", BaseRetriever, "retriever", k=2)
    assert isinstance(loaded, BaseRetriever)
    monkeypatch.delenv("RAT_IMPORTS")
    assert imports.allowed("os")  # one's own machine: anything


def test_serve_refuses_another_address_without_auth_and_starts_nothing(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "RAT_SERVE_DIR": str(tmp_path / "serve"),
        "RAT_SERVE_KEYS": str(tmp_path / "no-keys.json"),
        "RAT_SERVE_HOST": "0.0.0.0",
    }
    done = subprocess.run(
        ["bash", str(SCRIPT), "start", "1"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and done.stdout == ""
    assert "refusing to listen on 0.0.0.0 without auth" in done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "serve" / "pg").exists()
    forced = subprocess.run(
        ["bash", str(SCRIPT), "start", "1"],
        env={**env, "RAT_SERVE_HOST": "127.0.0.1", "RAT_SERVE_AUTH": "keys"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert forced.returncode != 0 and "does not exist" in forced.stderr
    assert not (tmp_path / "serve" / "pg").exists()
