"""The checkpoint store chosen by URL: SQLite or PostgreSQL, read back by a fresh saver."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes import ListRetriever, plan_model, wiki_docs
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from rat_agent import ConfigError, build_graph
from rat_agent.persistence import server
from rat_agent.persistence.checkpoints import (
    URL_ENV,
    async_checkpointer,
    checkpointer,
    parse_url,
    postgres_saver,
    redact,
    thread_ids,
    unfinished,
)

DRAFT = "STEP 1: chop wood\nSTEP 2: craft planks\nSTEP 3: build a table"
QUESTION = "How do I build a crafting table?"
SECRET = "s3cret-Pw0rd"
UNREACHABLE = f"postgresql://rat:{SECRET}@127.0.0.1:1/rat"  # port 1: refused at once


def graph_on(saver: Any, model: Any = None) -> Any:
    return build_graph(
        checkpointer=saver,
        llm=model or plan_model(DRAFT),
        retriever=ListRetriever(documents=wiki_docs()),
    )


def config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def run(saver: Any, thread: str, **context: Any) -> dict[str, Any]:
    result: dict[str, Any] = graph_on(saver).invoke(
        {"question": QUESTION}, config(thread), context=context, durability="sync"
    )
    return result


def marks(graph: Any, thread: str) -> list[tuple[Any, ...]]:
    return [
        (s.metadata["step"], s.metadata["source"], s.next)
        for s in graph.get_state_history(config(thread))
    ]


# --- choosing the store ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "store", "location"),
    [
        ("/var/data/runs.sqlite", "sqlite", "/var/data/runs.sqlite"),
        ("runs.sqlite", "sqlite", "runs.sqlite"),
        ("sqlite:////var/data/runs.sqlite", "sqlite", "/var/data/runs.sqlite"),
        ("sqlite:///runs.sqlite", "sqlite", "runs.sqlite"),
        ("postgresql://rat@db:5432/rat", "postgres", "postgresql://rat@db:5432/rat"),
        ("postgres://rat:pw@db/rat", "postgres", "postgres://rat:pw@db/rat"),
        ("POSTGRESQL://db/rat", "postgres", "POSTGRESQL://db/rat"),
    ],
)
def test_url_picks_the_store(url: str, store: str, location: str) -> None:
    assert parse_url(url) == (store, location)


@pytest.mark.parametrize(
    "url",
    [
        f"mysql://rat:{SECRET}@db/rat",
        f"redis://:{SECRET}@db:6379",
        "sqlite://",
        "sqlite:///",
        "sqlite:runs.db",
        "",
        "   ",
    ],
)
def test_unknown_store_is_a_config_error_without_the_password(url: str) -> None:
    with pytest.raises(ConfigError, match="unknown checkpoint store") as err:
        parse_url(url)
    assert SECRET not in str(err.value)
    assert "postgresql://" in str(err.value)  # says what would work


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://rat:{SECRET}@db:5432/rat", "postgresql://rat:***@db:5432/rat"),
        (
            f"postgresql://db/rat?password={SECRET}&sslmode=require",
            "postgresql://db/rat?password=***&sslmode=require",
        ),
        ("postgresql://rat@db/rat", "postgresql://rat@db/rat"),
        (
            f"postgresql://rat:{SECRET}@h1:5432,h2:5433/rat",
            "postgresql://rat:***@h1:5432,h2:5433/rat",
        ),
    ],
)
def test_redact_hides_the_password_only(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_default_is_sqlite_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(URL_ENV, raising=False)
    with checkpointer() as saver:
        assert isinstance(saver, SqliteSaver)
        run(saver, "t1")
    assert (tmp_path / "runs.sqlite").exists()


def test_env_url_names_a_sqlite_file_and_its_folder_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "new" / "folder" / "runs.db"
    monkeypatch.setenv(URL_ENV, f"sqlite:///{db}")
    with checkpointer() as saver:
        assert isinstance(saver, SqliteSaver)
        run(saver, "t1")
    with checkpointer(str(db)) as saver:
        assert thread_ids(saver) == ["t1"]


def test_unusable_sqlite_path_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with (
        pytest.raises(ConfigError, match="checkpoint"),
        checkpointer(str(tmp_path / "file" / "runs.sqlite")),
    ):
        pass


@pytest.mark.parametrize(
    "url", [UNREACHABLE, f"postgresql://rat@127.0.0.1:1/rat?password={SECRET}"]
)
def test_unreachable_postgres_is_one_line_naming_the_host_not_the_password(url: str) -> None:
    with pytest.raises(ConfigError) as err, checkpointer(url):
        pass
    message = str(err.value)
    assert message.startswith("cannot reach the checkpoint database postgresql://rat")
    assert "127.0.0.1:1" in message
    assert SECRET not in message and SECRET not in repr(err.value.__cause__)
    assert "\n" not in message


def test_unreachable_postgres_async_is_a_config_error() -> None:
    async def go() -> None:
        async with async_checkpointer(UNREACHABLE):
            pass

    with pytest.raises(ConfigError, match=r"127\.0\.0\.1:1") as err:
        asyncio.run(go())
    assert SECRET not in str(err.value)


def test_thread_ids_on_any_saver() -> None:
    saver = InMemorySaver()
    for thread in ("a", "b", "c"):
        run(saver, thread)
    assert thread_ids(saver) == ["c", "b", "a"]
    assert thread_ids(saver, limit=1) == ["c"]


# --- a killed run's state ----------------------------------------------------------------


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs, and nothing catches it."""


def die_at_put(saver: Any, n: int) -> None:
    put = saver.put
    count = [0]

    def dying(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        if count[0] == n:
            raise Killed
        return put(*args, **kwargs)

    saver.put = dying


def check_unfinished_resumes(url: str) -> None:
    """Killed after draft_cot's writes were saved, before the checkpoint after it."""
    with checkpointer(url) as saver:
        die_at_put(saver, 3)  # 1: input, 2: before draft_cot, 3: after it
        with pytest.raises(Killed):
            run(saver, "k1")
    with checkpointer(url) as saver:
        model = plan_model(DRAFT)
        graph = graph_on(saver, model)
        snapshot = graph.get_state(config("k1"))
        assert snapshot.next == ()  # LangGraph shows no task to run ...
        assert [t.name for t in snapshot.tasks] == ["draft_cot"]
        assert unfinished(snapshot)  # ... yet the run is not over
        result = graph.invoke(None, config("k1"), durability="sync")
        # no second draft: the three steps, then the answer written from them
        assert [kind for kind, _ in model.calls] == ["query", "revise"] * 3 + ["answer"]
        assert [s["revised"] for s in result["steps"]] == [
            "FIXED chop wood",
            "FIXED craft planks",
            "FIXED build a table",
        ]
        assert not unfinished(graph.get_state(config("k1")))


def test_unfinished_sees_saved_writes_without_checkpoint_sqlite(tmp_path: Path) -> None:
    check_unfinished_resumes(str(tmp_path / "runs.sqlite"))


def test_unfinished_sees_saved_writes_without_checkpoint_postgres(postgres_db: str) -> None:
    check_unfinished_resumes(postgres_db)


# --- PostgreSQL --------------------------------------------------------------------------


def test_graph_run_on_postgres_reads_back_through_a_fresh_saver(
    postgres_db: str, tmp_path: Path
) -> None:
    with checkpointer(postgres_db) as saver:
        assert isinstance(saver, PostgresSaver)
        result = run(saver, "pg1")
        run(saver, "pg2")
    with checkpointer(str(tmp_path / "runs.sqlite")) as lite:
        run(lite, "pg1")
        expected = marks(graph_on(lite), "pg1")

    with checkpointer(postgres_db) as saver:  # a new connection sees only committed data
        graph = graph_on(saver)
        snapshot = graph.get_state(config("pg1"))
        assert not unfinished(snapshot)
        assert snapshot.values["steps"] == result["steps"]
        assert snapshot.values["answer"] == result["answer"]
        assert [s["revised"] for s in result["steps"]] == [
            "FIXED chop wood",
            "FIXED craft planks",
            "FIXED build a table",
        ]
        assert marks(graph, "pg1") == expected  # the same checkpoints as on SQLite
        assert thread_ids(saver) == ["pg2", "pg1"]


def test_postgres_scheme_and_env_url(postgres_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_ENV, postgres_db.replace("postgresql://", "postgres://", 1))
    with checkpointer() as saver:
        assert isinstance(saver, PostgresSaver)
        run(saver, "env")
        assert thread_ids(saver) == ["env"]


def test_review_pause_survives_on_postgres(postgres_db: str) -> None:
    with checkpointer(postgres_db) as saver:
        graph = graph_on(saver)
        graph.invoke(
            {"question": QUESTION}, config("r1"), context={"review_draft": True}, durability="sync"
        )
    with checkpointer(postgres_db) as saver:
        graph = graph_on(saver)
        snapshot = graph.get_state(config("r1"))
        assert snapshot.next == ("review_draft",)
        assert snapshot.interrupts[0].value["drafts"] == [
            "chop wood",
            "craft planks",
            "build a table",
        ]
        result = graph.invoke(
            Command(resume={"drafts": ["chop wood", "make a table"]}),
            config("r1"),
            context={"review_draft": True},
            durability="sync",
        )
    assert [s["revised"] for s in result["steps"]] == ["FIXED chop wood", "FIXED make a table"]


def test_concurrent_first_setup_on_an_empty_database(postgres_db: str) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            postgres_saver(postgres_db).conn.close()
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=open_one) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []


# --- async savers: LangGraph Server ------------------------------------------------------


def check_async_run(url: str, kind: type) -> None:
    async def go() -> dict[str, Any]:
        async with async_checkpointer(url) as saver:
            assert isinstance(saver, kind)
            result: dict[str, Any] = await graph_on(saver).ainvoke(
                {"question": QUESTION}, config("a1"), durability="sync"
            )
            return result

    result = asyncio.run(go())
    with checkpointer(url) as saver:  # what the server wrote, the CLI reads
        assert graph_on(saver).get_state(config("a1")).values["steps"] == result["steps"]
        assert thread_ids(saver) == ["a1"]


def test_async_sqlite(tmp_path: Path) -> None:
    check_async_run(f"sqlite:///{tmp_path / 'runs.sqlite'}", AsyncSqliteSaver)


def test_async_postgres(postgres_db: str) -> None:
    check_async_run(postgres_db, AsyncPostgresSaver)


def test_server_checkpointer_follows_the_env_url(
    postgres_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(URL_ENV, postgres_db)

    async def go() -> type:
        async with server.checkpointer() as saver:
            return type(saver)

    assert asyncio.run(go()) is AsyncPostgresSaver
