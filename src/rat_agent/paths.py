"""Where rat-agent keeps its cache (models, indexes) and its data (run checkpoints)."""

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """Rebuildable artefacts: the assembled model, the corpus index. `RAT_CACHE_DIR` overrides."""
    path = Path(os.environ.get("RAT_CACHE_DIR") or platformdirs.user_cache_dir("rat-agent"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """What the user would miss if deleted: checkpointed runs. `RAT_DATA_DIR` overrides."""
    path = Path(os.environ.get("RAT_DATA_DIR") or platformdirs.user_data_dir("rat-agent"))
    path.mkdir(parents=True, exist_ok=True)
    return path
