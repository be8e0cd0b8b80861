"""Text on one line, shortened for a snippet, a list row or an error message; a setting
written as text, read as its type."""

from typing import Any

from rat_agent.errors import ConfigError

TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def shorten(text: str, size: int) -> str:
    """`text` with its whitespace collapsed, at most `size` characters, "…" marking a cut.

    Not textwrap.shorten: that returns the placeholder alone when the first word is longer
    than `size` (a URL, a long token in an error), where this keeps the word's start.
    """
    text = " ".join(text.split())
    if len(text) <= size:
        return text
    return text[: size - 1].rsplit(" ", 1)[0] + "…"


def typed(raw: str, kind: type[Any], where: str) -> Any:
    """A setting written as text (an environment variable, a flag), as `kind`; `where`
    names it in errors."""
    if kind is bool:  # bool("0") is True
        if raw.strip().lower() in TRUE | FALSE:
            return raw.strip().lower() in TRUE
        raise ConfigError(f"{where}={raw!r} is not true or false")
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{where}={raw!r} is not a valid {kind.__name__}") from None
