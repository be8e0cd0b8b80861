import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# tests/postgres.py: a throwaway PostgreSQL server (postgres_url) and a fresh database per
# test (postgres_db), started by scripts/postgres.sh; tests/services.py: the needs() marker,
# which skips a test whose server or browser is missing (fails it in CI).
pytest_plugins = ["services", "postgres"]


# The cache and data folders are kept (CI points them at fresh folders), and CI's demand
# for every server and browser; every other RAT_* setting, and the sources' endpoints and
# keys, would change what a test runs.
_KEEP = frozenset(
    {"RAT_CACHE_DIR", "RAT_DATA_DIR", "RAT_REQUIRE_SERVICES", "RAT_TEST_POSTGRES_URL"}
)
_SOURCES = (
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "TAVILY_API_KEY",
    "TAVILY_API_BASE_URL",
    "SEARXNG_URL",
    "DDGS_PROXY",
    "MINECRAFT_WIKI_API",
)


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one fixture that isolates every test from the developer's environment: every
    test runs with the defaults users get, unless it sets a value itself."""
    for name in list(os.environ):
        if name.startswith("RAT_") and name not in _KEEP:
            monkeypatch.delenv(name)
    for name in _SOURCES:
        monkeypatch.delenv(name, raising=False)
    # A test's model server ends with the test process; test_warm_server sets its own.
    monkeypatch.setenv("RAT_KEEP_ALIVE", "0")


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
