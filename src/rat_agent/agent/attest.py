"""Whether the source gives the names the model's own answer uses (draft "auto").

A model that knows an answer names real functions, settings and commands; one that does
not invents plausible ones ("tcp_keepalive" for redis.conf's "tcp-keepalive"). Where the
source gives every name the model's own answer uses, that answer is the draft and the
passages only revise its parts; a reply written from the passages can lose what the model
knew (rag's `zip` where the model had `itertools.zip_longest`). No model judgment is
asked: the names are looked up.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from rat_agent.agent.code import python_sources
from rat_agent.agent.parsing import names_of, tokens

LOOKUPS = 8  # names looked up at most (a web source pays per search); more: the passages write
_ABBREVIATION = re.compile(r"^[a-z]\.[a-z]$")  # "e.g", "i.e" end in a dot, as names do
_NUMBER = re.compile(r"^(?=.*\d)[\d.eE+-]+$")  # an example's values ("2.0", "1e-9"), not names


def names(answer: str, question: str) -> list[str]:
    """The names an answer gives that a reader would copy, in order: words written as code
    or in code marks (`names_of`), but not those the task gives, numbers, one letter, the
    words of its Python's strings (example data: `"another_key"`), nor the variables,
    functions and parameters its own Python defines; a dotted name on one of those is its
    attribute (`text.rstrip` is `rstrip`)."""
    own, values = _in_code(answer)
    given = tokens(question) | values
    found: list[str] = []
    for name in sorted(names_of(answer), key=lambda n: (answer.lower().find(n), n)):
        head, _, rest = name.partition(".")
        if head in own:
            name = rest.rsplit(".", 1)[-1]
        if len(name) < 2 or name in given or name in own or name in found:
            continue
        if not (_ABBREVIATION.match(name) or _NUMBER.match(name)):
            found.append(name)
    return found


def gives(name: str, documents: Sequence[dict[str, str]]) -> bool:
    """Whether a document (not a remembered thought) gives the name whole, alone or as a
    part of a path or dotted name (`collections` in `collections.abc`, `redis.conf` in
    `/etc/redis/redis.conf`); a module's function also as the page of that module writes it
    (`re.split` as `split`)."""
    text = "\n".join(d["content"] for d in documents if d.get("kind", "document") == "document")
    words = tokens(text)
    dotted = name.split(".")
    if len(dotted) > 1 and all(p.isidentifier() for p in dotted) and dotted[-1] in words:
        return True
    part = re.compile(rf"(?:^|[./\\:]){re.escape(name)}(?:$|[./\\:])")
    return any(part.search(word) for word in words)


def _in_code(answer: str) -> tuple[set[str], set[str]]:
    """The names the answer's Python blocks bind (variables, functions, classes, their
    parameters, loop targets and import aliases) and the words of their strings, in lower
    case as `names_of` gives them."""
    bound: set[str] = set()
    values: set[str] = set()
    for source in python_sources(answer):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                values |= tokens(node.value)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                bound.add(node.asname)
    return {b.lower() for b in bound}, values
