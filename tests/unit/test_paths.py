"""paths.write_atomic: the old file or the new one, never half; no leftovers."""

import stat
from pathlib import Path

import pytest

from rat_agent.paths import write_atomic


def test_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    write_atomic(path, "new")
    assert path.read_text() == "new"
    assert [f.name for f in tmp_path.iterdir()] == ["state.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("rat_agent.paths.os.replace", fail)
    with pytest.raises(OSError, match="No space"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["state.json"]


def test_private_files_are_never_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "server.json"
    write_atomic(path, '{"key": "k"}', private=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
