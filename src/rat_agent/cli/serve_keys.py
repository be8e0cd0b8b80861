"""`rat serve-keys`: make, list and revoke the API keys of `make serve`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rat_agent.cli.safe import console, escape


def add_command(sub: Any) -> None:
    keys = sub.add_parser(
        "serve-keys", help="make, list or revoke the API keys that open `make serve`"
    )
    actions = keys.add_subparsers(dest="action")
    add = actions.add_parser(
        "add", help="make a key for a user; it is printed once, on stdout, and never stored"
    )
    add.add_argument("user", help="who the key stands for: the owner of what it creates")
    add.add_argument("--label", default="", help="a note shown by `list` (a laptop, a team)")
    actions.add_parser("list", help="every key's id, user, dates and label (the default)")
    revoke = actions.add_parser("revoke", help="revoke a key, or every key of a user")
    revoke.add_argument("which", help="the key's id (or the key), or a user name")


def _stop_crons(user: str, err: Any) -> None:
    from rat_agent.serve.keys import disable_crons, served_database

    database = served_database()
    if database is None:
        return  # no `make serve` on this machine: nothing fires
    try:
        stopped = disable_crons(user, database)
    except Exception as exc:  # the server is down: its crons fire as nobody once it is up
        err.print(
            f"[yellow]could not disable {escape(user)}'s crons[/yellow] ({type(exc).__name__}): "
            "start the server (`make serve`) and revoke again"
        )
        return
    err.print(f"disabled {stopped} cron{'s' if stopped != 1 else ''} of {escape(user)}")


def serve_keys_command(args: argparse.Namespace) -> int:
    from rat_agent.serve.keys import KeyFile

    keys, err = KeyFile(), console(stderr=True)
    if args.action == "add":
        record, key = keys.add(args.user, args.label)
        sys.stdout.write(key + "\n")  # alone on stdout: KEY=$(rat serve-keys add alice)
        err.print(
            f"key {record.id} for {escape(record.user)} added to {escape(str(keys.path))}; "
            "it is shown only now"
        )
        return 0
    if args.action == "revoke":
        revoked = keys.revoke(args.which)
        for record in revoked:
            err.print(f"revoked key {record.id} of {escape(record.user)}")
        live = {r.user for r in keys.records() if not r.revoked}
        for user in sorted({r.user for r in revoked} - live):  # their last key went
            _stop_crons(user, err)
        return 0
    out = console()
    records = keys.records()
    if not records:
        out.print(f"no keys in {escape(str(keys.path))}: make one with `rat serve-keys add USER`")
        return 0
    for r in records:
        state = f"revoked {r.revoked}" if r.revoked else "in use"
        label = f"  {escape(r.label)}" if r.label else ""
        out.print(f"{r.id}  {escape(r.user)}  made {r.created}  {state}{label}")
    return 0
