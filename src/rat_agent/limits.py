"""How much one request may ask for: the graphs check their inputs against these, and a
server (serve/app.py) refuses a request past them with a 4xx before it stores or queues
anything. Each bound is far above real use: a question is a task, not a
document (documents go in through ingest), and a context is a handful of settings."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rat_agent.errors import ConfigError

QUESTION_CHARS = 20_000
CONTEXT_BYTES = 16_384  # a run's context as JSON
INGEST_ITEMS = 100  # files, folders or URLs in one ingest
INGEST_ITEM_CHARS = 4_096  # one path or URL
REQUEST_BYTES = 1 << 20  # one HTTP request body
# How deep a request's JSON may nest: well below the 255 levels the server's reply writer
# (orjson) takes, so whatever is stored can be read back out.
JSON_DEPTH = 64


class TooLarge(ConfigError):
    """Input past one of the bounds above (a server answers it with 413)."""


def check_text(text: str, what: str) -> str:
    """Text a model, a database and a log can take: valid Unicode (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"the {what} is not valid Unicode text (it holds a lone surrogate)"
        ) from None
    return text


def check_question(question: str) -> str:
    if len(question) > QUESTION_CHARS:
        raise TooLarge(
            f"the question is {len(question):,} characters; at most {QUESTION_CHARS:,} "
            "(put documents in a collection with ingest, and ask about them)"
        )
    return check_text(question, "question")


def check_ingest(paths: Sequence[str]) -> None:
    if len(paths) > INGEST_ITEMS:
        raise TooLarge(
            f"ingest takes at most {INGEST_ITEMS} paths or URLs at once, got {len(paths)}"
        )
    for path in paths:
        if not isinstance(path, str):
            raise ConfigError(f"each path or URL must be text, got {type(path).__name__}")
        if len(path) > INGEST_ITEM_CHARS:
            raise TooLarge(
                f"a path or URL is {len(path):,} characters; at most {INGEST_ITEM_CHARS:,}"
            )
        check_text(path, "path or URL")


def check_context(context: Mapping[str, Any]) -> None:
    """A run's settings: small, and numbers that are numbers (JSON has no NaN)."""
    try:
        size = len(json.dumps(context, allow_nan=False, ensure_ascii=False).encode("utf-8"))
    except UnicodeEncodeError:
        raise ConfigError(
            "the context is not valid Unicode text (it holds a lone surrogate)"
        ) from None
    except (ValueError, TypeError) as exc:  # NaN, an infinity, or no JSON at all
        raise ConfigError(f"the context is not plain JSON: {exc}") from None
    if size > CONTEXT_BYTES:
        raise TooLarge(f"the context is {size:,} bytes as JSON; at most {CONTEXT_BYTES:,}")


# What a request's run config may hold: the rest (callbacks, say) are objects in a process,
# which JSON cannot give, and failed the run with Python's own words.
CONFIG_KEYS = frozenset(
    {"configurable", "tags", "metadata", "recursion_limit", "run_name", "max_concurrency"}
)


def check_payload(value: Mapping[str, Any]) -> None:
    """What a request would give a run (a run, cron or assistant body, a state update, or
    the `params` or `kwargs` they nest in): its question, ingest list and context within
    the bounds."""
    for fields in (value, value.get("params"), value.get("kwargs")):
        if not isinstance(fields, Mapping):
            continue
        for given in (fields.get("input"), fields.get("values")):  # values: a state update
            if not isinstance(given, Mapping):
                continue
            if isinstance(given.get("question"), str):
                check_question(given["question"])
            if isinstance(given.get("paths"), list):
                check_ingest([str(p) for p in given["paths"]])
        config = fields.get("config")
        if "config" in fields and not isinstance(config, Mapping):  # Aegra read null as {}
            raise ConfigError("a request's config must be an object; leave it out for none")
        if isinstance(config, Mapping) and (unknown := sorted(set(config) - CONFIG_KEYS)):
            raise ConfigError(
                f"a request's config may set {', '.join(sorted(CONFIG_KEYS))}; "
                f"not {', '.join(map(str, unknown))}"
            )
        configurable = config.get("configurable") if isinstance(config, Mapping) else None
        for context in (fields.get("context"), configurable):
            if isinstance(context, Mapping):
                check_context(context)
