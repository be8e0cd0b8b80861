"""A step that is a fenced block of code (draft "answer"): its revision put back in the
draft's fences, and the checks that keep a revision from breaking it."""

from __future__ import annotations

import ast
import re
import textwrap

_FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)")
_PYTHON = {"python", "py", "python3", ""}


def rewrap(draft: str, body: str) -> str | None:
    """`body` in the draft block's own fences and indentation; None for no code. In a part
    of prose and blocks (a joined tail), `body` replaces the Python block whose functions
    and classes it defines most of (the first, on a tie), and the prose stays as written."""
    if not body.strip():
        return None
    lines = draft.splitlines()
    blocks = [m for m in _BLOCKS.finditer(draft) if is_python(m.group(0))]
    if lines and not _FENCE.match(lines[0]) and blocks:
        ours = _names_in(body)
        block = max(blocks, key=lambda m: len(ours & _names_in(_body(m.group(0))[1])))
        inner = rewrap(block.group(0), body) or block.group(0)
        return draft[: block.start()] + inner + draft[block.end() :]
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


def _names_in(code: str) -> set[str]:
    """The functions and classes a piece of Python defines (none where it does not parse)."""
    try:
        return _defined(ast.parse(textwrap.dedent(code)))
    except SyntaxError:
        return set()


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


def python_sources(text: str) -> list[str]:
    """The code of each Python block a text holds, without fences or indentation."""
    return [_body(m.group(0))[1] for m in _BLOCKS.finditer(text) if is_python(m.group(0))]


def has_python(text: str) -> bool:
    """Whether a part is Python or holds a Python block (a joined tail of prose and code)."""
    return is_python(text) or any(is_python(m.group(0)) for m in _BLOCKS.finditer(text))


def unlike(draft: str, revised: str) -> str:
    """Why the revised block cannot replace the draft's ("" when it can): Python that the
    draft wrote must still parse and define every function and class the draft defined.
    A part of prose and blocks (a joined tail) is held so block by block: `unlike_within`."""
    lines = draft.strip().splitlines()
    if lines and not _FENCE.match(lines[0]) and holds_block(draft):
        return unlike_within(draft, revised)
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


def unlike_within(draft: str, revised: str) -> str:
    """`unlike` for a part of prose and code (a joined tail): the revision must keep each
    Python block the draft held, and its Python must still parse and define every
    function and class the draft's did ("" when it does)."""
    old = [m.group(0) for m in _BLOCKS.finditer(draft) if is_python(m.group(0))]
    if not old:
        return ""
    new = [m.group(0) for m in _BLOCKS.finditer(revised) if _body(m.group(0))[0] in _PYTHON]
    if len(new) < len(old):
        return "left out a Python block the draft held"
    return unlike("```python\n" + _joined(old) + "\n```", "```python\n" + _joined(new) + "\n```")


def _joined(blocks: list[str]) -> str:
    return "\n\n".join(_body(block)[1] for block in blocks)
