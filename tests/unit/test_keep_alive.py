"""RAT_KEEP_ALIVE: how long a warm local model server stays after its last request."""

from __future__ import annotations

import pytest

from rat_agent.errors import ConfigError
from rat_agent.providers import warm


@pytest.mark.parametrize(
    ("raw", "seconds"), [("", 300.0), ("0", 0.0), ("90s", 90.0), ("5m", 300.0), ("-1", None)]
)
def test_keep_alive_reads_durations(
    monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float | None
) -> None:
    monkeypatch.setenv("RAT_KEEP_ALIVE", raw)
    assert warm.keep_alive() == (float("inf") if seconds is None else seconds)


def test_keep_alive_rejects_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_KEEP_ALIVE", "soon")
    with pytest.raises(ConfigError, match="RAT_KEEP_ALIVE"):
        warm.keep_alive()
