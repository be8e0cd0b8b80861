"""Plan repair's revision: the model quotes the one passage that bears on the step, then
writes the step from it and names what the step needs.

A small model copies a line it has just written far more reliably than it reasons from a
page, and plan repair reads what a step needs from the reply; the paper's revision (the
core's) has neither. With a server that enforces a JSON schema (the model's profile), the
quote is one of the lines shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from rat_agent.agent import prompts
from rat_agent.agent.prompts import as_messages, documents_block, heading
from rat_agent.parsing import (
    BULLET_MARKER,
    STEP_MARKER,
    clean_reply,
    normalize,
    pick_step,
    says_something,
    unbold,
)

# The grounded revision : the model first quotes the passage that
# bears on the step, then writes the step from it; a small model copies a line it has just
# written far more reliably than it reasons from a page. No passage that bears on the step
# keeps the step as drafted. The instruction comes before the documents, so every revision
# of a run shares it as a cached prefix; the example is in no domain's words.
_GROUNDED_STEP = (
    "the current step rewritten to agree with that line, using the exact names, settings, "
    "commands and values it gives, as one short line"
)
REVISE_GROUNDED = (
    "Check the current step against the documents that follow. Reply in exactly two "
    "lines:\n"
    "FACT: the one line of the documents, with its label, that bears most directly on the "
    "current step, copied word for word; or NONE if no line bears on it\n"
    f"STEP: {_GROUNDED_STEP}; or the current step as it is, if the line confirms it\n"
    'For example, for the draft step "Turn on the X feature." and the line "2a. To turn '
    'on X, set x-mode to full.":\n'
    "FACT: 2a. To turn on X, set x-mode to full.\n"
    "STEP: Turn on the X feature by setting x-mode to full."
)
REVISE_GROUNDED_JSON = (
    'Check the current step against the documents that follow. Reply with JSON: "fact" is '
    "the one line of the documents, with its label, that bears most directly on the "
    'current step, or "none" if no line bears on it; "step" is '
    f"{_GROUNDED_STEP}, or the current step as it is if the line confirms it.\n"
    'For example, for the draft step "Turn on the X feature." and the line "2a. To turn on '
    'X, set x-mode to full.", reply {"fact": "2a. To turn on X, set x-mode to full.", '
    '"step": "Turn on the X feature by setting x-mode to full."}'
)
GROUNDED_REMINDER = "Reply as instructed above, for the current step only."


def facts(documents: Sequence[dict[str, str]], best: int = 0) -> list[str]:
    """The lines of the documents as shown, labels included: what a revision may quote.

    With `best`, only the `best` passages that match the step most closely, best first
    (whole documents have no ranks: all their lines count).
    """
    ranked: list[tuple[int, str]] = []
    for n, doc in enumerate(documents, 1):
        ranks = [int(r) for r in doc.get("passages", "").split(",") if r.strip().isdigit()]
        for i, line in enumerate(prompts.lines(doc, n)):
            if line.strip():
                ranked.append((ranks[i] if i < len(ranks) else len(ranked) + 10**6, line.strip()))
    if best:
        ranked = sorted(ranked)[:best]
    return list(dict.fromkeys(line for _, line in ranked))


def revision_schema(
    quotable: Sequence[str], needs: bool = False, none: bool = True, draft: str = ""
) -> dict[str, Any]:
    """The JSON a grounded revision writes when the server enforces a schema: its fact is
    one of the lines shown (or "none", where `none`), so it can neither invent one nor skip
    the choice; with `needs`, a plan repair extension's list of what the step uses.

    The step's length is capped so a looping model stops, but never below twice the
    draft's: a grammar that ends a string mid-word would cut a long part of an answer short.
    It is one line unless the draft has several (an item with lines under it)."""
    longest = max(300, 2 * len(draft))
    step: dict[str, Any] = (
        {"type": "string", "minLength": 3, "maxLength": longest}
        if "\n" in draft.strip()
        else {"type": "string", "pattern": f"^[^\\n]{{3,{longest}}}$"}
    )
    properties: dict[str, Any] = {
        "fact": {"enum": [*quotable, "none"] if none or not quotable else list(quotable)},
        "step": step,
    }
    if needs:
        properties["needs"] = {
            "type": "array",
            "maxItems": 6,
            "items": {"type": "string", "minLength": 1, "maxLength": 80},
        }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Begun:
    """A reply begun in the prompt: the start the schema fixes, and a grammar for the rest."""

    prefix: str
    grammar: str

    def joined(self, reply: str) -> str:
        """The whole reply: llama.cpp returns the begun part with the rest, another server
        may return the rest alone, or a whole reply of its own (JSON or labelled lines),
        which stands as written."""
        text = reply.lstrip()
        whole = text.startswith("{") or _FIELD.match(text.split("\n", 1)[0])
        return reply if reply.startswith(self.prefix) or whole else self.prefix + reply


def begun(schema: dict[str, Any]) -> Begun | None:
    """`revision_schema`'s reply begun up to its step, where every field before the step
    has one value (a fact with one line to quote), with llguidance's grammar for the rest;
    None where a field before the step has a choice. The model reads the fixed part as
    prompt instead of writing it token by token. The layout is the one the bundled model
    writes its JSON in, and the rest is the schema's own fields (llguidance's %json, as
    llama.cpp enforces the whole schema), so the reply is the one it writes under it."""
    properties: dict[str, dict[str, Any]] = schema["properties"]
    names = list(properties)
    if "step" not in names:
        return None
    at = names.index("step")
    fixed = [properties[name].get("enum", []) for name in names[:at]]
    if any(len(values) != 1 for values in fixed):
        return None
    prefix = "{\n"
    for name, values in zip(names[:at], fixed, strict=True):
        prefix += f"  {json.dumps(name)}: {json.dumps(values[0], ensure_ascii=False)},\n"
    # the prefix stops at the colon: the space and the quote after it are one token
    joins = ['" "', *(json.dumps(f",\n  {json.dumps(n)}: ") for n in names[at + 1 :])]
    lines = [
        "%llguidance {}",
        "start: " + " ".join(f"{j} f{i}" for i, j in enumerate(joins)) + ' "\\n}"',
        *(f"f{i}: %json {json.dumps(properties[n])}" for i, n in enumerate(names[at:])),
    ]
    return Begun(prefix + '  "step":', "\n".join(lines) + "\n")


def grounded_messages(
    system: str,
    question: str,
    step: str,
    number: int,
    documents: Sequence[dict[str, str]],
    *,
    instruction: str,
) -> list[BaseMessage]:
    """The grounded revision: task, instruction, passages and the step; a reply that quotes
    a line first. `instruction` is REVISE_GROUNDED, its JSON form, or a domain's own.

    It is not shown the plan so far: a small model shown earlier steps copies them instead
    of the line it quotes.
    """
    tail = (
        f"{instruction}\n\n{documents_block(documents)}Current step (STEP {number}, "
        f"draft):\n{step}\n\n{GROUNDED_REMINDER}"
    )
    return as_messages(system, heading(question, []) + tail)


def quotes(fact: str, lines: Sequence[str]) -> bool:
    """Whether a quoted fact is one of the lines shown, or a part of one (its words in a
    row, labels and punctuation aside): a quote the model wrote itself is no evidence."""
    said = normalize(_LABEL_OF_LINE.sub("", fact, count=1))
    return bool(said) and any(
        said in normalize(_LABEL_OF_LINE.sub("", line, count=1)) for line in lines
    )


# --- the grounded revision: FACT / STEP / NEEDS --------------------------------------------

_FIELD = re.compile(
    r"^\W*(fact|step|needs|drop)\b\s*(?:\d+\s*)?[*_]*\s*[:=\-\u2013]\s*[*_]*\s*(.*)$", re.IGNORECASE
)
# "DROP: the reason", as asked; in any case only with a mark after it: "Drop the old
# table" and "Drop privileges before serving" are steps the model wrote.
_DROP = re.compile(
    r"^\W*(?:DROP(?:PED)?\b|(?i:drop(?:ped)?)\s*(?:[:=\-\u2013]|$))\W*(.*)$", re.DOTALL
)
_NOTHING = {"none", "nothing", "n/a", "na", "no", "-", "", "none needed", "nothing else"}
MAX_NEEDS = 6


@dataclass(frozen=True)
class Revision:
    """A grounded revision: the quoted fact, the step written from it, what it needs.

    `drop` holds the reason when the model says the task does not need the step.
    """

    step: str
    fact: str = ""
    needs: list[str] = field(default_factory=list)
    drop: str | None = None


def parse_revision(reply: str, number: int) -> Revision:
    """A grounded reply, as JSON or as labelled lines; never loses a step the model wrote.

    A reply in neither form is read as a plain revision (the whole reply is the step), so a
    model that ignores the format still gets its correction kept.
    """
    text = clean_reply(reply)
    fields = _json_fields(text)
    if fields is None and text.lstrip().startswith("{"):
        fields = _cut_json(text)  # a JSON reply cut off at max_tokens
    # outside JSON, unlabelled lines are the step itself when no STEP line was written
    body = (
        ""
        if fields is not None
        else "\n".join(line for line in text.splitlines() if not _FIELD.match(line))
    )
    fields = fields if fields is not None else _labelled(text)
    if fields is None or not _text(fields.get("step")):
        rest = fields or {}
        if "drop" in rest:
            return Revision("", _fact(rest.get("fact")), [], _reason(rest["drop"]))
        return Revision(pick_step(body, number), _fact(rest.get("fact")), _needs(rest.get("needs")))
    step = _text(fields["step"])
    drop = _DROP.match(step)
    if drop or "drop" in fields:
        return Revision(
            "",
            _fact(fields.get("fact")),
            _needs(fields.get("needs")),
            _reason(drop.group(1) if drop else fields.get("drop")),
        )
    step = unbold(STEP_MARKER.sub("", step, count=1)).strip()
    return Revision(step, _fact(fields.get("fact")), _needs(fields.get("needs")))


def _json_fields(text: str) -> dict[str, object] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {str(k).lower(): v for k, v in data.items()}


_JSON_STRING = re.compile(r'"(\w+)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _cut_json(text: str) -> dict[str, object]:
    """The string fields a cut-off JSON reply finished; a field cut midway is lost, so the
    draft is kept rather than half a step."""
    fields: dict[str, object] = {}
    for name, value in _JSON_STRING.findall(text):
        try:
            fields[name.lower()] = json.loads(f'"{value}"')
        except ValueError:
            continue
    return fields


def _labelled(text: str) -> dict[str, object] | None:
    """FACT:/STEP:/NEEDS: lines; a value may run on over the lines that follow it."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _FIELD.match(line)
        if match:
            current = found.setdefault(match.group(1).lower(), [])
            current.append(match.group(2))
        elif current is not None and line.strip():
            current.append(line.strip())
    if not found:
        return None
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


_LABEL_OF_LINE = re.compile(r"^\s*\[?\d{1,2}[a-z]{1,2}[.)\]]\s+")


def _fact(value: object) -> str:
    """A quoted passage without the label the documents showed it with ("1a. ")."""
    return _LABEL_OF_LINE.sub("", _text(value), count=1)


def _text(value: object) -> str:
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    text = "" if value is None else str(value).strip().strip("\"'`").strip()
    return "" if text.lower().rstrip(".") in _NOTHING else text


def _reason(value: object) -> str:
    return _text(value).lstrip(":-\u2013 ").strip() or "the task does not need it"


def _needs(value: object) -> list[str]:
    """What a step needs, as short item phrases: "none" and sentences are not items."""
    if isinstance(value, list):
        items = [str(v) for v in value]
    else:
        items = re.split(r"[,;\n]", "" if value is None else str(value))
    needs: list[str] = []
    for item in items:
        item = BULLET_MARKER.sub("", item).strip().strip("\"'`.").strip()
        if item.lower() in _NOTHING or not says_something(item) or len(item) > 80:
            continue
        if item.lower() not in (n.lower() for n in needs):
            needs.append(item)
    return needs[:MAX_NEEDS]
