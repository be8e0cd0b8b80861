"""What the CLI prints of text it did not write (retrieved titles, sources and snippets,
model replies, error messages): shown as text, never as terminal control or Rich markup."""

from __future__ import annotations

import re
import sys

from rich.console import Console
from rich.markup import escape as _markup_escape

# C0 and C1 controls but newline and tab (ESC starts the sequences that clear a screen or
# set a window title), and the bidirectional overrides that reorder what a line shows.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """`text` without terminal control characters."""
    return _CONTROL.sub("", text)


def escape(text: str) -> str:
    """`text` for a Rich console: no control characters, its [markup] shown literally."""
    return _markup_escape(plain(text))


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Rich exits with 1 when the reader of stdout is gone (`rat ... | head`); let the
        CLI end as a Unix tool does instead (quietly, 141)."""
        raise BrokenPipeError


def console(*, stderr: bool = False) -> Console:
    """The CLI's console: no automatic highlighting, long lines left to the terminal."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True)


def confirm(question: str, refusal: str) -> bool:
    """A yes typed at the terminal; with no terminal to ask (a pipe, a script), the refusal
    as an error, so a script never deletes without saying --yes."""
    from rat_agent.errors import ConfigError

    if not sys.stdin.isatty():
        raise ConfigError(refusal)
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
