"""Where runs are kept: one checkpoint per finished node, in SQLite or PostgreSQL.

The store is named by a URL, `RAT_CHECKPOINT_URL` by default:

    (unset)                          runs.sqlite in the user data folder
    /path/runs.sqlite, sqlite:///P   a SQLite file (sqlite:///rel/path, sqlite:////abs/path)
    postgresql://USER:PW@HOST/DB     a PostgreSQL database (postgres:// too), shared by machines

A checkpoint is committed before the next node starts (the CLI streams with
durability="sync"), so a killed run resumes from its last finished node on either store.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from rat_agent.errors import ConfigError
from rat_agent.paths import data_dir

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.types import StateSnapshot

URL_ENV = "RAT_CHECKPOINT_URL"
SQLITE_PREFIX = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 10  # libpq waits forever for a host that drops packets
# Two processes creating the tables of a new database at once collide in the catalog;
# a session-level advisory lock (any fixed 64-bit key) lets them take turns. Waiters poll
# with short statements: one blocked in pg_advisory_lock would deadlock with the holder's
# CREATE INDEX CONCURRENTLY, which waits for every open transaction to end.
SETUP_LOCK_KEY = 0x7261745F636B7074  # "rat_ckpt"
TRY_LOCK = "SELECT pg_try_advisory_lock(%s) AS locked"
SETUP_POLL_S = 0.05
SETUP_WAIT_S = 120

Store = Literal["sqlite", "postgres"]


def default_db() -> Path:
    return data_dir() / "runs.sqlite"


def checkpoint_url() -> str:
    """The configured store: `RAT_CHECKPOINT_URL`, else the SQLite file in the data folder."""
    return os.environ.get(URL_ENV, "").strip() or str(default_db())


def parse_url(url: str) -> tuple[Store, str]:
    """("sqlite", file path) or ("postgres", connection URL); ConfigError for anything else."""
    url = url.strip()
    if url.startswith(SQLITE_PREFIX) and len(url) > len(SQLITE_PREFIX):
        return "sqlite", url[len(SQLITE_PREFIX) :]
    if "://" in url:
        if url.split("://", 1)[0].lower() in POSTGRES_SCHEMES:
            return "postgres", url
    elif url and not url.lower().startswith("sqlite:"):
        return "sqlite", url
    raise ConfigError(
        f"unknown checkpoint store {redact(url)!r} ({URL_ENV}): use a file path, "
        "sqlite:///PATH or postgresql://USER@HOST:PORT/DATABASE"
    )


def redact(url: str) -> str:
    """The URL with its password (in the user part or a password= parameter) replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"://[^@/]*@", "://***@", url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, hosts = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{hosts}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _password(url: str) -> str:
    try:
        parts = urlsplit(url)
        given = dict(parse_qsl(parts.query)).get("password", "")
        return parts.password or given
    except ValueError:
        return ""


def _unreachable(url: str, exc: Exception, doing: str = "reach") -> ConfigError:
    """One readable line naming the database, never its password."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    secret = _password(url)
    if len(secret) >= 4:  # libpq does not echo passwords; this guards against ones that do
        reason = reason.replace(secret, "***")
    return ConfigError(f"cannot {doing} the checkpoint database {redact(url)}: {reason}")


def _setup_timeout(url: str) -> ConfigError:
    return ConfigError(
        f"the checkpoint tables of {redact(url)} are being set up by another "
        f"process that has not finished in {SETUP_WAIT_S} s"
    )


def _sqlite_file(location: str) -> Path:
    path = Path(location).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder of checkpoint file {path}: {exc}") from exc
    return path


def _connect_kwargs(url: str) -> dict[str, Any]:
    extra: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
    if "connect_timeout" not in url:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    return extra


# --- synchronous savers: the CLI ---------------------------------------------------------


def sqlite_saver(path: Path | None = None) -> SqliteSaver:
    """A saver on a connection the CLI owns; each checkpoint commits as it is written."""
    try:
        conn = sqlite3.connect(str(path or default_db()), check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")  # a reader (`rat show`) never blocks a run
        saver = SqliteSaver(conn)
        saver.setup()
    except sqlite3.DatabaseError as exc:
        if _is_damage(exc):
            raise damaged_file(path or default_db(), exc) from exc
        raise ConfigError(f"cannot open checkpoint file {path or default_db()}: {exc}") from exc
    return saver


def _is_damage(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in text or "not a database" in text
    )


def damaged_file(path: Path, exc: BaseException) -> ConfigError:
    """A damaged checkpoint file: what it is, and the two ways out."""
    return ConfigError(
        f"the checkpoint file {path} is damaged ({exc}): move it aside to start with no "
        f"saved runs (`mv {path} {path}.damaged`); `sqlite3 {path} .recover` can salvage "
        "what is left of it"
    )


def postgres_saver(url: str) -> PostgresSaver:
    """A saver on its own connection (close it with `saver.conn.close()`), tables set up."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    try:
        conn = psycopg.Connection.connect(url, row_factory=dict_row, **_connect_kwargs(url))
    except psycopg.Error as exc:
        raise _unreachable(url, exc) from None
    saver = PostgresSaver(conn)
    try:
        for _ in range(int(SETUP_WAIT_S / SETUP_POLL_S)):
            if conn.execute(TRY_LOCK, (SETUP_LOCK_KEY,)).fetchone() == {"locked": True}:
                break
            time.sleep(SETUP_POLL_S)
        else:
            raise _setup_timeout(url)
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
    except BaseException as exc:
        conn.close()
        if isinstance(exc, psycopg.Error):
            raise _unreachable(url, exc, "set up the tables of") from None
        raise
    return saver


@contextmanager
def checkpointer(url: str | None = None) -> Iterator[BaseCheckpointSaver[str]]:
    """The saver `url` (default: `checkpoint_url()`) names; its connection closes on exit."""
    store, location = parse_url(url or checkpoint_url())
    if store == "sqlite":
        path = _sqlite_file(location)
        lite = sqlite_saver(path)
        try:
            yield lite
        except sqlite3.DatabaseError as exc:  # damage found past the first page
            if _is_damage(exc):
                raise damaged_file(path, exc) from exc
            raise
        finally:
            lite.conn.close()
    else:
        pg = postgres_saver(location)
        try:
            yield pg
        finally:
            pg.conn.close()


def unfinished(snapshot: StateSnapshot) -> bool:
    """Whether a thread's run has work left; use this, not `snapshot.next`, to decide to resume.

    A run killed after a node's writes were saved but before the checkpoint that follows
    them was written has `next == ()`: LangGraph lists only tasks still to run, and the
    next step's tasks are not known until that checkpoint exists. Its finished tasks are
    still in `snapshot.tasks`, and `invoke(None, config)` goes on from them.
    """
    return bool(snapshot.next or snapshot.tasks)


def thread_ids(saver: BaseCheckpointSaver[Any], limit: int = 50) -> list[str]:
    """Threads, most recently written first, on any of the savers made here."""
    if isinstance(saver, SqliteSaver):
        with saver.lock:
            rows = saver.conn.execute(
                "SELECT thread_id FROM checkpoints GROUP BY thread_id "
                "ORDER BY max(rowid) DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [str(row[0]) for row in rows]
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection

    if isinstance(saver, PostgresSaver) and isinstance(saver.conn, Connection):
        # checkpoint ids are uuid6: their text order is the order they were written in
        with saver.lock, saver.conn.cursor() as cur:
            cur.execute(
                "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' "
                "GROUP BY thread_id ORDER BY max(checkpoint_id) DESC LIMIT %s",
                (limit,),
            )
            return [str(row["thread_id"]) for row in cur.fetchall()]
    latest: dict[str, str] = {}  # any other saver: scan every checkpoint
    for item in saver.list(None):
        conf = item.config["configurable"]
        if not conf.get("checkpoint_ns"):
            thread, ident = str(conf["thread_id"]), str(conf["checkpoint_id"])
            latest[thread] = max(latest.get(thread, ""), ident)
    return sorted(latest, key=lambda t: latest[t], reverse=True)[:limit]


# --- asynchronous savers: LangGraph Server (`langgraph.json` "checkpointer") -------------


@asynccontextmanager
async def async_checkpointer(
    url: str | None = None,
) -> AsyncIterator[AsyncSqliteSaver | AsyncPostgresSaver]:
    """The async saver `url` (default: `checkpoint_url()`) names, for an async server."""
    store, location = parse_url(url or checkpoint_url())
    if store == "sqlite":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = await asyncio.to_thread(_sqlite_file, location)  # no blocking call in the loop
        async with aiosqlite.connect(str(path)) as lite:
            await lite.execute("PRAGMA journal_mode=WAL")
            saver = AsyncSqliteSaver(lite)
            await saver.setup()
            yield saver
        return

    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    try:
        conn = await psycopg.AsyncConnection.connect(
            location, row_factory=dict_row, **_connect_kwargs(location)
        )
    except psycopg.Error as exc:
        raise _unreachable(location, exc) from None
    async with conn:
        pg = AsyncPostgresSaver(conn)
        try:
            for _ in range(int(SETUP_WAIT_S / SETUP_POLL_S)):
                row = await (await conn.execute(TRY_LOCK, (SETUP_LOCK_KEY,))).fetchone()
                if row == {"locked": True}:
                    break
                await asyncio.sleep(SETUP_POLL_S)
            else:
                raise _setup_timeout(location)
            try:
                await pg.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
        except psycopg.Error as exc:
            raise _unreachable(location, exc, "set up the tables of") from None
        yield pg
