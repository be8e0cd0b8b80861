"""`rat ingest` and `rat collections`: fill, list and delete Qdrant collections."""

from __future__ import annotations

import argparse
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from rat_agent.agent.context import Context
from rat_agent.cli import interrupted_message, on_interrupt
from rat_agent.cli.progress import PlainProgress
from rat_agent.cli.safe import confirm, console, escape
from rat_agent.retrieval.settings import DRAFTS

DEFAULT_COLLECTION = Context.__dataclass_fields__["collection"].default


def add_commands(sub: Any) -> None:
    ingest = sub.add_parser(
        "ingest",
        help="index files, folders and URLs into a Qdrant collection",
        description="Markdown, text, HTML, PDF and source code; folders are walked "
        "recursively. Safe to re-run: unchanged files are skipped, changed ones replaced.",
    )
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="file, folder or http(s) URL")
    ingest.add_argument(
        "--collection",
        default=DEFAULT_COLLECTION,
        help=f"collection to fill (default: {DEFAULT_COLLECTION})",
    )
    ingest.add_argument(
        "--draft",
        choices=list(DRAFTS),
        default="",
        help="the draft this collection's tasks want, for runs that leave --draft auto: "
        "'cot' or 'direct' for code documentation, 'sourced' or 'rag' for a manual of facts "
        "(default: the model's own)",
    )
    ingest.add_argument(
        "--allow-private",
        action="store_true",
        help="allow URLs on private, loopback and link-local addresses",
    )
    ingest.add_argument(
        "--follow-links",
        action="store_true",
        help="follow symbolic links inside folders (by default they are skipped: they may "
        "point outside the folder)",
    )

    collections = sub.add_parser("collections", help="list or delete Qdrant collections")
    actions = collections.add_subparsers(dest="action")
    actions.add_parser("list", help="list collections (the default)")
    delete = actions.add_parser("delete", help="delete a collection and all its chunks")
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def ingest_command(args: argparse.Namespace) -> int:
    from rat_agent.ingest.pipeline import ingest
    from rat_agent.retrieval.qdrant.client import location

    on_interrupt("what was stored is kept; run the same command again to finish")
    out = console()
    err = console(stderr=True)
    columns = (
        TextColumn("{task.description:9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    plain = PlainProgress(err) if not err.is_terminal else None
    with Progress(*columns, console=err, transient=True, disable=plain is not None) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if plain is not None:  # a log or a pipe: a line now and then, not a bar
                plain(stage, done, total)
                return
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        try:
            report = ingest(
                args.paths,
                collection=args.collection,
                allow_private=True if args.allow_private else None,
                follow_links=args.follow_links,
                progress=progress,
                draft=args.draft,
            )
        except KeyboardInterrupt:  # in-process callers; the `rat` script leaves in its handler
            bar.stop()
            err.print(escape(interrupted_message()))
            return 130
    for item, reason in report.failed:
        err.print(f"[yellow]skipped[/yellow] {escape(item)}: {escape(reason)}")
    for item, note in report.notes:
        err.print(f"[yellow]note[/yellow] {escape(item)}: {escape(note)}")
    if report.sources == 0 and not report.failed:
        err.print(
            f"[yellow]nothing to ingest[/yellow] in {escape(' '.join(args.paths))}: no file of a "
            "kind it reads (Markdown, text, HTML, PDF, source code)"
        )
        return 1
    out.print(
        f"{report.sources} sources in collection {escape(report.collection)!r} "
        f"({escape(location())}): {report.added} chunks added, {report.kept} kept, "
        f"{report.removed} removed, {report.unchanged} sources unchanged"
        + (f", {len(report.failed)} skipped" if report.failed else "")
    )
    return 1 if report.failed else 0


def collections_command(args: argparse.Namespace) -> int:
    from rat_agent.retrieval.qdrant.client import delete_collection, list_collections, location

    out = console()
    if args.action == "delete":
        from rat_agent.retrieval.settings import check_collection_name

        check_collection_name(args.name)  # a bad name is said before anything is asked
        if args.name not in {info.name for info in list_collections()}:
            delete_collection(args.name)  # says there is no such collection, and where
        if not args.yes and not confirm(
            f"delete collection {args.name!r} and all its chunks?",
            f"`rat collections delete {args.name}` deletes every chunk: add --yes to confirm",
        ):
            out.print("nothing deleted")
            return 1
        delete_collection(args.name)
        out.print(f"deleted collection {escape(args.name)!r} at {escape(location())}")
        return 0
    infos = list_collections()
    if not infos:
        out.print(
            f"[dim]no collections at {escape(location())}: create one with `rat ingest PATH`[/dim]"
        )
    for info in infos:
        if info.damaged:
            out.print(f"{escape(info.name)}  [red]damaged[/red]: {escape(info.damaged)}")
            continue
        note = "" if info.ours else "  [dim](not made by rat ingest: not searchable)[/dim]"
        out.print(f"{escape(info.name)}  {info.points} chunks{note}")
    return 0
