"""What a release before the depth bound stored nested past it, cut when a worker starts.

The request guard (app.py) refuses JSON nested more than `limits.JSON_DEPTH` levels; before
it, a thread's metadata or a run's input could be stored some 300 levels deep, and every
list of that user's threads then failed in the reply writer, so its owner could neither see
the thread nor delete it. Each JSON column of the server's database is searched once at
start (PostgreSQL's `.**{level}` path, no full read) and a value nested too deep has what
lies past the bound replaced by a note; the rest of the row is kept. Checkpoint blobs are
not JSON columns: a thread whose state holds such a value still lists and deletes.
"""

from __future__ import annotations

import logging
from typing import Any

from rat_agent.limits import JSON_DEPTH

log = logging.getLogger(__name__)

CUT = f"(cut when the server started: nested more than {JSON_DEPTH} levels)"
_COLUMNS = (
    "SELECT table_schema, table_name, column_name FROM information_schema.columns "
    "WHERE data_type = 'jsonb' AND table_schema NOT IN ('pg_catalog', 'information_schema')"
)


def cut(value: Any, depth: int = 1) -> Any:
    """`value` with every object or array nested past the bound (the request guard's count:
    the top level is 1) replaced by CUT."""
    if isinstance(value, dict | list) and depth > JSON_DEPTH:
        return CUT
    if isinstance(value, dict):
        return {key: cut(child, depth + 1) for key, child in value.items()}
    if isinstance(value, list):
        return [cut(child, depth + 1) for child in value]
    return value


def cut_deep_values(database_url: str) -> int:
    """Cut every stored JSON value nested past the bound; the number of values cut."""
    import psycopg
    from psycopg import sql
    from psycopg.types.json import Jsonb

    done = 0
    # a container at depth JSON_DEPTH + 1 is an item at path level JSON_DEPTH
    deep = f"strict $.**{{{JSON_DEPTH}}}"
    with psycopg.connect(database_url, autocommit=True) as connection:
        for schema, table, column in connection.execute(_COLUMNS).fetchall():
            name, col = sql.Identifier(schema, table), sql.Identifier(column)
            found = connection.execute(
                sql.SQL("SELECT ctid, {} FROM {} WHERE jsonb_path_exists({}, %s)").format(
                    col, name, col
                ),
                [deep],
            ).fetchall()
            for ctid, value in found:
                if (kept := cut(value)) == value:
                    continue
                connection.execute(
                    sql.SQL("UPDATE {} SET {} = %s WHERE ctid = %s::tid").format(name, col),
                    [Jsonb(kept), ctid],
                )
                done += 1
                log.warning("cut a value nested past %d levels in %s.%s", JSON_DEPTH, table, column)
    return done
