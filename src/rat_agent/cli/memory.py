"""`rat memory`: list, show (with provenance), forget and clear the thought memory."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console

from rat_agent.agent.context import THOUGHTS
from rat_agent.cli.safe import confirm, console, escape
from rat_agent.errors import ConfigError
from rat_agent.text import shorten

if TYPE_CHECKING:
    from rat_agent.memory.store import Memory


def add_command(sub: Any) -> None:
    memory = sub.add_parser("memory", help="list, show, forget or clear stored thoughts")
    actions = memory.add_subparsers(dest="action")
    show_list = actions.add_parser("list", help="every thought, oldest first (the default)")
    show = actions.add_parser("show", help="a thought with its sources, down to documents")
    show.add_argument("id", help="the thought's id, or the start of it")
    forget = actions.add_parser("forget", help="delete one thought")
    forget.add_argument("id", help="the thought's id, or the start of it")
    clear = actions.add_parser("clear", help="delete every thought in the memory")
    clear.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    for parser in (memory, show_list, show, forget, clear):
        parser.add_argument(
            "--collection",
            default=argparse.SUPPRESS,
            help=f"the memory collection (default: {THOUGHTS})",
        )


def memory_command(args: argparse.Namespace) -> int:
    from rat_agent.memory.store import Memory

    memory = Memory(getattr(args, "collection", THOUGHTS))
    out = console()
    if args.action == "show":
        return _show(out, memory, args.id)
    if args.action == "forget":
        gone = memory.forget(args.id)
        out.print(f"forgot thought {gone.id[:8]}: {escape(shorten(gone.text, 100))}")
        return 0
    if args.action == "clear":
        if not args.yes and not _confirm(memory):
            out.print("nothing deleted")
            return 1
        held = memory.clear()
        out.print(
            f"cleared {held} thought{'s' if held != 1 else ''} from memory "
            f"{escape(memory.collection)!r}"
        )
        return 0
    thoughts = memory.all()
    if not thoughts:
        out.print(
            f"[dim]memory {escape(memory.collection)!r} is empty: run with --memory "
            "to fill it[/dim]"
        )
        return 0
    for thought in thoughts:
        out.print(
            f"{thought.id[:8]}  level {thought.level:g}  {thought.created}  "
            f"{escape(shorten(thought.text, 100))}"
        )
    out.print(f"[dim]{len(thoughts)} thoughts in memory {escape(memory.collection)!r}[/dim]")
    return 0


def _show(out: Console, memory: Memory, ident: str) -> int:
    thought = memory.get(ident)
    if thought is None:
        raise ConfigError(f"there is no thought {ident!r} in memory {memory.collection!r}")
    where = f"step {thought.step}" if thought.step else "the answer"
    out.print(f"[bold]thought {thought.id}[/bold]  level {thought.level:g}")
    out.print(escape(thought.text))
    out.print(f"\n[dim]from {where} of: {escape(thought.question)}[/dim]")
    out.print(
        f"[dim]thread {escape(thought.thread or '-')}, {where}, model "
        f"{escape(thought.model or '-')}, {thought.created}[/dim]"
    )
    out.print("\n[bold]Built from[/bold]")
    for origin in thought.origins:
        out.print(
            escape(f"- {origin.kind} (level {origin.level:g}): {origin.title} — {origin.source}")
        )
    if any(o.kind == "thought" for o in thought.origins):
        out.print("\n[bold]Documents it rests on[/bold]")
        for root in memory.roots(thought):
            out.print(escape(f"- {root.title} — {root.source}"))
    return 0


def _confirm(memory: Memory) -> bool:
    refusal = "`rat memory clear` deletes every thought: add --yes to confirm"
    if not sys.stdin.isatty():  # before counting: a script is refused without opening memory
        raise ConfigError(refusal)
    return confirm(
        f"delete all {memory.count()} thoughts in memory {memory.collection!r}?", refusal
    )
