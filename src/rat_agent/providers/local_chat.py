"""The chat model for the bundled llama.cpp server, over its OpenAI-compatible endpoint.

langchain-openai's ChatOpenAI speaks the same protocol, and this project used it for the
local models until importing it (with the openai SDK's ~900 type modules) was measured at
0.4 s of every command's ~2 s fixed cost (issue 15, benchmarks/startup.py). The server is
ours, so the subset it needs is small: one request shape, usage with cached prompt tokens,
streaming, and the server's JSON-schema enforcement through `extra_body`. Providers with
keys still go through their own LangChain packages.
"""

from __future__ import annotations

import functools
import json
import os
import ssl
import threading
import zlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    convert_to_openai_messages,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCall, ToolCallChunk, invalid_tool_call, tool_call
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field, PrivateAttr, SecretStr

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

_SEEN_RUNS = 1024  # runs remembered per model; one forgotten gets a fresh prefill, no more


class LocalServerError(Exception):
    """An error status from the server; `status_code` is what the nodes classify by."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code


class LocalChat(BaseChatModel):
    """Chat completions from a llama.cpp server (`POST {base_url}/chat/completions`)."""

    base_url: str = Field(description="the server's OpenAI-compatible root, ending in /v1")
    api_key: SecretStr
    model_name: str = Field(alias="model")
    temperature: float = 0.0
    max_tokens: int = 512
    extra_body: dict[str, Any] = Field(default_factory=dict)
    timeout: float = 600.0
    """A CPU prefill of a long prompt takes minutes; the server is on loopback."""
    slots: int = 1
    """The server's parallel slots; with two or more, calls are pinned to slots (`slot`)."""
    second_slot_nodes: frozenset[str] = frozenset({"to_query"})
    """Graph nodes whose calls go to the second slot of a pair: RAT's query calls."""
    _seen: OrderedDict[tuple[int | None, str], None] = PrivateAttr(default_factory=OrderedDict)
    """(slot, run) pairs that have made a call, oldest first (slot None: the server picks)."""
    _seen_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def slot(self, run: str, node: str | None) -> int | None:
        """The server slot for a call of `run` (`_run`) from graph `node`, or None to let the
        server choose.

        Why pin: a llama.cpp slot reuses the KV cache of its last prompt's prefix. RAT
        alternates query and revision calls whose prompts share only the system message and
        the task, so on one slot each call evicts the other's prefix: the revision's
        instruction, example and document header were prefilled again at every step (2825
        prompt tokens processed in a 4-step run, 2090 pinned).
        The server's own host-RAM prompt cache restored them at no step (measured): it is
        consulted only when the slot's prefix is a small share of the new prompt, and the
        126 shared tokens are not. So each run (a process and thread id) gets a pair of slots,
        its query calls on one and every other call on the other. With an odd number of
        slots the last one is a "pair" of one, for runs that get it.
        """
        if self.slots < 2:
            return None
        first = 2 * (zlib.crc32(run.encode()) % ((self.slots + 1) // 2))
        if first + 1 == self.slots:
            return first
        return first + (node in self.second_slot_nodes)

    def _reuses(self, slot: int | None, run: str) -> bool:
        """Whether this call may reuse the KV cache its slot holds: not on a run's first
        call there.

        Why: llama.cpp computes a reused prefix in other batches than a fresh prefill would,
        and its logits are not bit-for-bit the same across batch sizes (its server README,
        `cache_prompt`). A greedy reply then depended on which run had used the slot before,
        so a task's plan changed with the tasks an evaluation ran before it. With a fresh
        first call, a run's replies depend only on its own calls whenever runs take turns
        (an evaluation, the CLI). It costs the system message and instruction a run could
        have shared with the one before; the prefix its own steps share is still reused.
        Runs that interleave on one slot still reuse each other's prefixes after their first
        call, as before: their replies depend on timing anyway (continuous batching).
        """
        with self._seen_lock:
            reuse = (slot, run) in self._seen
            self._seen[slot, run] = None
            self._seen.move_to_end((slot, run))
            while len(self._seen) > _SEEN_RUNS:
                self._seen.popitem(last=False)
        return reuse

    @property
    def _llm_type(self) -> str:
        return "rat-local"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        """Tools in OpenAI's request shape: llama.cpp's server renders them with the model's
        own chat template and parses the calls it writes back (`--jinja`, on by default)."""
        from langchain_core.utils.function_calling import convert_to_openai_tool  # only agents

        body: dict[str, Any] = {"tools": [convert_to_openai_tool(t) for t in tools], **kwargs}
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        return self.bind(**body)

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model_name, "temperature": self.temperature}

    # --- the request --------------------------------------------------------------------

    def _body(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        stream: bool,
        kwargs: Any,
        run_manager: Any = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": convert_to_openai_messages(messages),
            "temperature": self.temperature,
            "max_completion_tokens": self.max_tokens,
            **self.extra_body,
        }
        options = dict(kwargs)
        body.update(options.pop("extra_body", None) or {})
        body.update(options)  # e.g. response_format, as an OpenAI client would send it
        if stop:
            body["stop"] = stop
        metadata = getattr(run_manager, "metadata", None) or {}
        run = _run(metadata)
        if (slot := self.slot(run, metadata.get("langgraph_node"))) is not None:
            body["id_slot"] = slot  # llama.cpp's field; the request waits for that slot
        if not self._reuses(slot, run):
            body["cache_prompt"] = False
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key.get_secret_value()}"}

    def _url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    # --- invoke -------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with httpx.Client(timeout=self.timeout, verify=_tls()) as client:
            response = client.post(
                self._url(),
                json=self._body(messages, stop, False, kwargs, run_manager),
                headers=self._headers(),
            )
        return _result(_checked(response).json())

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        async with httpx.AsyncClient(timeout=self.timeout, verify=_tls()) as client:
            response = await client.post(
                self._url(),
                json=self._body(messages, stop, False, kwargs, run_manager),
                headers=self._headers(),
            )
        return _result(_checked(response).json())

    # --- stream (LangGraph's "messages" mode, Studio) -------------------------------------

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        body = self._body(messages, stop, True, kwargs, run_manager)
        with (
            httpx.Client(timeout=self.timeout, verify=_tls()) as client,
            client.stream("POST", self._url(), json=body, headers=self._headers()) as response,
        ):
            if response.is_error:
                response.read()
                _checked(response)
            for line in response.iter_lines():
                chunk = _chunk(line)
                if chunk is not None:
                    if run_manager and chunk.text:
                        run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                    yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        body = self._body(messages, stop, True, kwargs, run_manager)
        async with (
            httpx.AsyncClient(timeout=self.timeout, verify=_tls()) as client,
            client.stream("POST", self._url(), json=body, headers=self._headers()) as response,
        ):
            if response.is_error:
                await response.aread()
                _checked(response)
            async for line in response.aiter_lines():
                chunk = _chunk(line)
                if chunk is not None:
                    if run_manager and chunk.text:
                        await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                    yield chunk


def _run(metadata: dict[str, Any]) -> str:
    """The run a call belongs to: this process and the graph thread (a call outside a graph
    belongs to none, so such calls share a slot's cache with each other)."""
    return f"{os.getpid()}:{metadata.get('thread_id', '')}"


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for the clients made per call (an async client is bound to its event
    loop): building a context is most of a new httpx client's ~25 ms."""
    return ssl.create_default_context()


# --- the reply ------------------------------------------------------------------------------


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        try:
            error = response.json().get("error", {})
            message = error.get("message", "") if isinstance(error, dict) else str(error)
        except (ValueError, AttributeError):
            message = ""
        raise LocalServerError(response.status_code, message or response.reason_phrase)
    return response


def _usage(usage: dict[str, Any] | None) -> UsageMetadata | None:
    """OpenAI's usage, with llama.cpp's cached prompt tokens as `cache_read`."""
    if not usage:
        return None
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0)
    return UsageMetadata(
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=prompt + completion,
        input_token_details={"cache_read": cached},
    )


def _result(data: dict[str, Any]) -> ChatResult:
    choice = data["choices"][0]
    metadata = {"finish_reason": choice.get("finish_reason"), "model_name": data.get("model")}
    if choice.get("logprobs"):  # asked for (logprobs=True): the tokens' log-probabilities
        metadata["logprobs"] = choice["logprobs"]
    calls, invalid = _tool_calls(choice["message"].get("tool_calls") or [])
    message = AIMessage(
        content=choice["message"].get("content") or "",
        id=data.get("id"),
        usage_metadata=_usage(data.get("usage")),
        response_metadata=metadata,
        tool_calls=calls,
        invalid_tool_calls=invalid,
    )
    return ChatResult(generations=[ChatGeneration(message=message, generation_info=metadata)])


def _tool_calls(raw: list[dict[str, Any]]) -> tuple[list[ToolCall], list[Any]]:
    """The server's tool calls; one whose arguments are not a JSON object is kept as
    invalid, as LangChain's OpenAI client does, so the agent can tell the model."""
    calls: list[ToolCall] = []
    invalid: list[Any] = []
    for item in raw:
        function = item.get("function") or {}
        name, arguments = function.get("name") or "", function.get("arguments") or "{}"
        try:
            args = json.loads(arguments)
        except ValueError:
            args = None
        if isinstance(args, dict) and name:
            calls.append(tool_call(name=name, args=args, id=item.get("id")))
        else:
            invalid.append(invalid_tool_call(name=name, args=arguments, id=item.get("id")))
    return calls, invalid


def _chunk(line: str) -> ChatGenerationChunk | None:
    """One server-sent event line as a chunk; None for keep-alives, [DONE] and empty deltas."""
    if not line.startswith("data:"):
        return None
    payload = line[5:].strip()
    if payload == "[DONE]":
        return None
    data = json.loads(payload)
    choices = data.get("choices") or []
    text = ""
    metadata: dict[str, Any] = {}
    calls: list[ToolCallChunk] = []
    if choices:
        delta = choices[0].get("delta") or {}
        text = delta.get("content") or ""
        calls = [
            ToolCallChunk(
                name=(item.get("function") or {}).get("name"),
                args=(item.get("function") or {}).get("arguments"),
                id=item.get("id"),
                index=item.get("index"),
            )
            for item in delta.get("tool_calls") or []
        ]
        if choices[0].get("finish_reason"):
            metadata = {
                "finish_reason": choices[0]["finish_reason"],
                "model_name": data.get("model"),
            }
    usage = _usage(data.get("usage"))
    if not text and not calls and not metadata and usage is None:
        return None
    message = AIMessageChunk(
        content=text,
        id=data.get("id"),
        usage_metadata=usage,
        response_metadata=metadata,
        tool_call_chunks=calls,
    )
    return ChatGenerationChunk(message=message, generation_info=metadata or None)
