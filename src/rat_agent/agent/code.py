"""A step that is a fenced block of code (draft "answer"): its revision put back in the
draft's fences, and the checks that keep a revision from breaking it."""

from __future__ import annotations

import ast
import re
import textwrap

_FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)")
_PYTHON = {"python", "py", "python3", ""}


def rewrap(draft: str, body: str) -> str | None:
    """`body` in the draft block's own fences and indentation; None for no code."""
    if not body.strip():
        return None
    lines = draft.splitlines()
    fence = _FENCE.match(lines[0]) if lines else None
    if fence is None:
        return body.rstrip()
    indent = fence.group(1)
    closing = [lines[-1]] if len(lines) > 1 and _FENCE.match(lines[-1]) else []
    inner = textwrap.indent(textwrap.dedent(body).strip("\n"), indent)
    return "\n".join([lines[0], inner, *closing])


def _body(block: str) -> tuple[str, str]:
    """A block's language tag and its code, without fences or indentation."""
    lines = block.splitlines()
    fence = _FENCE.match(lines[0]) if lines else None
    if fence is None:
        return "", textwrap.dedent(block)
    end = len(lines) - 1 if len(lines) > 1 and _FENCE.match(lines[-1]) else len(lines)
    return fence.group(2).lower(), textwrap.dedent("\n".join(lines[1:end]))


def _defined(tree: ast.Module) -> set[str]:
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def is_python(block: str) -> bool:
    """Whether a block is Python: tagged so, or untagged and parsing as Python. Other
    blocks (a config file, a shell command) are held to the names they give, as prose is."""
    tag, body = _body(block)
    if tag not in _PYTHON:
        return False
    try:
        ast.parse(body)
    except SyntaxError:
        return tag != ""
    return True


_BLOCKS = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.M | re.S)


def holds_block(text: str) -> bool:
    """Whether a text holds a fenced block of code (a task that gives a function to finish)."""
    return _BLOCKS.search(text) is not None


def has_python(text: str) -> bool:
    """Whether a part is Python or holds a Python block (a joined tail of prose and code)."""
    return is_python(text) or any(is_python(m.group(0)) for m in _BLOCKS.finditer(text))


def unlike(draft: str, revised: str) -> str:
    """Why the revised block cannot replace the draft's ("" when it can): Python that the
    draft wrote must still parse and define every function and class the draft defined."""
    tag, before = _body(draft)
    _, after = _body(revised)
    if tag not in _PYTHON:
        return ""
    try:
        old = ast.parse(before)
    except SyntaxError:
        return ""  # not Python, or already broken: nothing to hold it to
    try:
        new = ast.parse(after)
    except SyntaxError:
        return "does not parse as Python"
    lost = sorted(_defined(old) - _defined(new))
    return f"no longer defines {', '.join(lost)}" if lost else ""
