"""`rat`: the parser and the dispatch; each subcommand lives in its own module.

Every run is checkpointed to SQLite, so `rat ask --thread ID` resumes a killed run from its
last finished node and `rat show ID` prints a past run. Errors are one line on stderr and
a non-zero exit code; set RAT_DEBUG=1 for a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from rich.console import Console

from rat_agent.cli import interrupted_message, on_interrupt
from rat_agent.cli.ask import add_command as add_ask
from rat_agent.cli.ask import ask_command
from rat_agent.cli.eval import add_command as add_eval
from rat_agent.cli.eval import eval_command
from rat_agent.cli.ingest import add_commands as add_ingest
from rat_agent.cli.ingest import collections_command, ingest_command
from rat_agent.cli.memory import add_command as add_memory
from rat_agent.cli.memory import memory_command
from rat_agent.cli.models import add_command as add_models
from rat_agent.cli.models import models_command
from rat_agent.cli.runs import add_commands as add_runs
from rat_agent.cli.runs import show_command, threads_command
from rat_agent.cli.safe import console, escape
from rat_agent.cli.serve_keys import add_command as add_serve_keys
from rat_agent.cli.serve_keys import serve_keys_command
from rat_agent.cli.ui import add_command as add_ui
from rat_agent.cli.ui import ui_command
from rat_agent.errors import RatError
from rat_agent.redact import redact
from rat_agent.timing import record, since_process_start


class _Parser(argparse.ArgumentParser):
    """A bad flag is one line naming it and what it accepts, not the whole usage: `rat ask`
    has dozens of flags. Subcommands' parsers are of this class too (argparse's default)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rat",
        description="Retrieval Augmented Thoughts: draft a chain of thought, then check and "
        "revise every step against a knowledge source.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    add_ask(sub)
    add_runs(sub)
    add_ingest(sub)
    add_eval(sub)
    add_memory(sub)
    add_models(sub)
    add_serve_keys(sub)
    add_ui(sub)
    return parser


class _MaskedStderr(logging.Handler):
    """Warnings and errors from any library, on stderr with secrets masked. Looks up
    sys.stderr at each record, so a redirected stderr is honoured."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(redact(self.format(record)) + "\n")
        except Exception:
            self.handleError(record)


def _log_to_stderr() -> None:
    root = logging.getLogger()
    if not any(isinstance(h, _MaskedStderr) for h in root.handlers):
        handler = _MaskedStderr(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    if (started := since_process_start()) is not None:
        record("process start", started)  # the interpreter and the imports above
    _log_to_stderr()
    on_interrupt("")  # a command sets its own (in-process callers run several)
    args = _parser().parse_args(argv)
    err = console(stderr=True)
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # here, so a closed pipe is caught below, not at exit
        return code
    except BrokenPipeError:  # `rat ... | head`: the reader has gone, as with any Unix tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE
    except RatError as exc:
        return _fail(err, exc, str(exc), exc.exit_code)
    except KeyboardInterrupt:  # in-process callers; the `rat` script leaves in its handler
        err.print(escape(interrupted_message()))
        return 130
    except Exception as exc:  # never a traceback for users; RAT_DEBUG=1 shows one
        return _fail(err, exc, f"{type(exc).__name__}: {exc}", 1)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "ask":
        return ask_command(args)
    if args.command == "show":
        return show_command(args.thread, as_json=args.json, history=args.history)
    if args.command == "ingest":
        return ingest_command(args)
    if args.command == "collections":
        return collections_command(args)
    if args.command == "eval":
        return eval_command(args)
    if args.command == "memory":
        return memory_command(args)
    if args.command == "models":
        return models_command(args)
    if args.command == "serve-keys":
        return serve_keys_command(args)
    if args.command == "ui":
        return ui_command(args)
    return threads_command(args)


def _fail(err: Console, exc: BaseException, message: str, code: int) -> int:
    """One line on stderr, or with RAT_DEBUG=1 the traceback; secrets masked in both (a
    provider's error may echo the key, and a cause's message is not a typed error's)."""
    if os.environ.get("RAT_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
        err.print(escape(redact("".join(traceback.format_exception(exc)))), end="")
    else:
        err.print(f"[red]error:[/red] {escape(redact(message))}")
    return code


if __name__ == "__main__":
    sys.exit(main())
