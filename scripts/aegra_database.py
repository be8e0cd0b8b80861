"""The database `make serve`'s workers use, and the role they use it as (scripts/serve.sh).

The role `aegra` logs in with a password and owns the database `aegra`; it is no superuser
and may make no database or role, so a worker, or whoever holds its password, reaches that
one database and nothing else of the cluster. A database from an earlier version of
serve.sh, whose tables the superuser owns, is handed over to the role.
Usage: python scripts/aegra_database.py SUPERUSER_URL PASSWORD_FILE
"""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
from psycopg import sql

ROLE = DATABASE = "aegra"

# What the role must own in the database's public schema, to migrate and use it.
OWNED = {
    "TABLE": "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tableowner <> %s",
    "SEQUENCE": "SELECT sequencename FROM pg_sequences "
    "WHERE schemaname = 'public' AND sequenceowner <> %s",
    "VIEW": "SELECT viewname FROM pg_views WHERE schemaname = 'public' AND viewowner <> %s",
    "TYPE": "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
    "WHERE n.nspname = 'public' AND t.typtype = 'e' AND pg_get_userbyid(t.typowner) <> %s",
}


def main() -> None:
    url, password = sys.argv[1], Path(sys.argv[2]).read_text().strip()
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [ROLE]).fetchone()
        conn.execute(
            sql.SQL(
                "{} ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD {}"
            ).format(
                sql.SQL("ALTER" if exists else "CREATE"),
                sql.Identifier(ROLE),
                sql.Literal(password),
            )
        )
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            conn.execute(
                sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                    sql.Identifier(DATABASE), sql.Identifier(ROLE)
                )
            )
        else:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(DATABASE), sql.Identifier(ROLE)
                )
            )
        conn.execute(
            sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(DATABASE))
        )
        # Every role may connect to the other databases by default (PUBLIC's CONNECT): the
        # workers' role reaches only its own.
        for other in ("postgres", "template1"):
            conn.execute(
                sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC").format(sql.Identifier(other))
            )
    with psycopg.connect(url.rsplit("/", 1)[0] + "/" + DATABASE, autocommit=True) as conn:
        for kind, query in OWNED.items():
            for (name,) in conn.execute(query, [ROLE]).fetchall():
                conn.execute(
                    sql.SQL("ALTER {} public.{} OWNER TO {}").format(
                        sql.SQL(kind), sql.Identifier(name), sql.Identifier(ROLE)
                    )
                )


if __name__ == "__main__":
    main()
