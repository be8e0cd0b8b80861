"""Where rat-agent keeps its cache (models, indexes) and its data (run checkpoints)."""

import os
import uuid
from pathlib import Path

import platformdirs

from rat_agent.errors import ConfigError


def cache_dir() -> Path:
    """Rebuildable artefacts: the assembled model, the corpus index. `RAT_CACHE_DIR` overrides."""
    return _folder("RAT_CACHE_DIR", platformdirs.user_cache_dir("rat-agent"))


def data_dir() -> Path:
    """What the user would miss if deleted: checkpointed runs, collections, thoughts, keys;
    made readable by its owner only. `RAT_DATA_DIR` overrides."""
    return _folder("RAT_DATA_DIR", platformdirs.user_data_dir("rat-agent"), mode=0o700)


def _folder(variable: str, default: str, mode: int = 0o777) -> Path:
    path = Path(os.environ.get(variable) or default)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=mode)
    except OSError as exc:  # a file in the way, no permission, a read-only disk
        why = "it is a file" if path.is_file() else (exc.strerror or str(exc))
        raise ConfigError(f"cannot use {path} as the {variable} folder: {why}") from exc
    return path


def write_atomic(path: Path, text: str, *, private: bool = False) -> None:
    """Whole or not at all: a reader, or a process killed mid-write, sees the old file or
    the new one, never half of either.

    The temporary file sits beside `path` (a rename is atomic only within one file system)
    and is named per process and call, so concurrent writers never share one. `private`
    makes it readable by this user only from the start (it may hold a key). Leftovers of a
    killed writer end in `.tmp` and start with a dot.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
