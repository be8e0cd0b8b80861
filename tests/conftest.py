import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# tests/postgres.py: a throwaway PostgreSQL server (postgres_url) and a fresh database per
# test (postgres_db), started by scripts/postgres.sh.
pytest_plugins = ["postgres"]


@pytest.fixture(autouse=True)
def keep_unsupported_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes' documents ("Page 1 says: the fact number 1.") are unrelated to their steps,
    so min_support would drop every step; and stop_at_goal would add a call that most fakes
    do not answer. Tests of either set it themselves."""
    monkeypatch.setenv("RAT_MIN_SUPPORT", "0")
    monkeypatch.setenv("RAT_STOP_AT_GOAL", "0")


@pytest.fixture
def fresh_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty data folder (embedded Qdrant, memory, runs) and no retriever built earlier."""
    from rat_agent import retrieval
    from rat_agent.retrieval.qdrant import client as qdrant

    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QDRANT_URL", raising=False)
    retrieval.clear_cache()
    yield
    qdrant.close_clients()
