"""Text on one line, shortened for a snippet, a list row or an error message."""


def shorten(text: str, size: int) -> str:
    """`text` with its whitespace collapsed, at most `size` characters, "…" marking a cut.

    Not textwrap.shorten: that returns the placeholder alone when the first word is longer
    than `size` (a URL, a long token in an error), where this keeps the word's start.
    """
    text = " ".join(text.split())
    if len(text) <= size:
        return text
    return text[: size - 1].rsplit(" ", 1)[0] + "…"
