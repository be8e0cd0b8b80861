"""One model call: tagged for traces and tests, and any provider's error typed.

Every node asks the model through `ask`, so a run fails the same way on any provider: a
rejected request (HTTP 4xx but 408 and 429) is `RequestRejected`, which retrying cannot fix;
anything else is `ModelError`, which the graph's retry policy retries.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from rat_agent.errors import ModelError, RatError, RequestRejected

# The calls the loop and its baselines make, by what they ask for; ask() tags each
# "rat:<call>". An extension names its own (plan repair's "goal").
Call = Literal[
    "standalone", "draft", "query", "revise", "answer", "thought", "direct", "rag", "react"
]


def ask(
    model: BaseChatModel,
    call: Call | str,
    messages: list[BaseMessage],
    schema: dict[str, Any] | None = None,
    whole: bool = False,
    grammar: str | None = None,
) -> str:
    """The reply's text; with `schema`, the server is asked to enforce that JSON, with
    `grammar` that llama.cpp grammar. With `whole`, a reply the token limit cut short is
    returned empty: a revision that stops mid-sentence would replace a whole step with part
    of one."""
    with typed_errors():
        options = constraint_options(model, schema, grammar)
        reply = model.invoke(messages, _config(call), **options)
    return _text(reply, whole)


async def aask(
    model: BaseChatModel,
    call: Call | str,
    messages: list[BaseMessage],
    schema: dict[str, Any] | None = None,
    whole: bool = False,
    grammar: str | None = None,
) -> str:
    """`ask`, awaited."""
    with typed_errors():
        options = constraint_options(model, schema, grammar)
        reply = await model.ainvoke(messages, _config(call), **options)
    return _text(reply, whole)


def _config(call: Call | str) -> RunnableConfig:
    return {"tags": [f"rat:{call}"]}


def _text(reply: BaseMessage, whole: bool) -> str:
    if whole and _cut(reply.response_metadata):
        return ""
    content = reply.content
    if isinstance(content, list):  # providers that return content blocks
        content = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
    return str(content)


def _cut(metadata: dict[str, Any]) -> bool:
    """Whether the provider stopped the reply at the token limit: OpenAI-compatible servers
    (llama.cpp's too) say finish_reason "length", Anthropic stop_reason "max_tokens",
    Google finish_reason "MAX_TOKENS"."""
    reason = metadata.get("finish_reason") or metadata.get("stop_reason") or ""
    return str(reason).lower() in ("length", "max_tokens")


@contextmanager
def typed_errors() -> Iterator[None]:
    """Any provider's error inside, as one typed error; the project's own pass through."""
    try:
        yield
    except RatError:
        raise
    except Exception as exc:
        status = _status(exc)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            raise RequestRejected(
                f"the model provider rejected the request (HTTP {status}): {_first_line(exc)}"
            ) from exc
        raise ModelError(f"model call failed: {type(exc).__name__}: {_first_line(exc)}") from exc


def constraint_options(
    model: BaseChatModel, schema: dict[str, Any] | None, grammar: str | None = None
) -> dict[str, Any]:
    """The call options that ask the server to enforce `schema`, or llama.cpp's `grammar`
    (none without either)."""
    body = getattr(model, "extra_body", None)
    if grammar is not None:  # llama.cpp's own field: only a server that takes it is sent one
        return {"extra_body": {**(body if isinstance(body, dict) else {}), "grammar": grammar}}
    if schema is None:
        return {}
    wanted = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    if isinstance(body, dict):
        # In the request body rather than as `response_format=`, which makes langchain-openai
        # parse the reply and raise on one cut at max_tokens; parse_revision reads a cut
        # reply and keeps the draft instead.
        return {"extra_body": {**body, "response_format": wanted}}
    return {"response_format": wanted}


def _status(exc: Exception) -> int | None:
    """The HTTP status of a provider's error: openai, anthropic and others carry it as
    `status_code`, httpx's on its `response`."""
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
