"""Where rat-agent keeps its cache (models, indexes) and its data (run checkpoints)."""

import os
from pathlib import Path

import platformdirs

from rat_agent.errors import ConfigError


def cache_dir() -> Path:
    """Rebuildable artefacts: the assembled model, the corpus index. `RAT_CACHE_DIR` overrides."""
    return _folder("RAT_CACHE_DIR", platformdirs.user_cache_dir("rat-agent"))


def data_dir() -> Path:
    """What the user would miss if deleted: checkpointed runs. `RAT_DATA_DIR` overrides."""
    return _folder("RAT_DATA_DIR", platformdirs.user_data_dir("rat-agent"))


def _folder(variable: str, default: str) -> Path:
    path = Path(os.environ.get(variable) or default)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, a read-only disk
        why = "it is a file" if path.is_file() else (exc.strerror or str(exc))
        raise ConfigError(f"cannot use {path} as the {variable} folder: {why}") from exc
    return path
