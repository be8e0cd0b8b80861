"""Where the CLI keeps its runs: SQLite in the user data folder, one row per checkpoint."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from rat_agent.paths import data_dir


def default_db() -> Path:
    return data_dir() / "runs.sqlite"


def sqlite_saver(path: Path | None = None) -> SqliteSaver:
    """A saver on a connection the CLI owns; each checkpoint commits as it is written."""
    conn = sqlite3.connect(str(path or default_db()), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")  # a reader (`rat show`) never blocks a run
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def thread_ids(saver: SqliteSaver, limit: int = 50) -> list[str]:
    """Threads, most recently written first."""
    rows = saver.conn.execute(
        "SELECT thread_id FROM checkpoints GROUP BY thread_id ORDER BY max(rowid) DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [str(row[0]) for row in rows]
