"""What a run cost: model calls, tokens (processed and served from cache), and where time went."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult


@dataclass
class Usage:
    model_calls: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    retrieval_seconds: float = 0.0
    retrievals: int = 0

    @property
    def processed_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.cached_prompt_tokens

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "processed_prompt_tokens": self.processed_prompt_tokens}


class RunStats(BaseCallbackHandler):
    """Counts calls and times them, which LangChain's usage callback does not.

    Token counts come from each reply's `usage_metadata`; cached prompt tokens from its
    `input_token_details.cache_read`, which OpenAI-compatible servers fill in.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self.by_call: dict[str, Usage] = {}  # the same, per kind of call ("rat:revise" ...)
        self._kinds: dict[UUID, str] = {}
        self._started: dict[UUID, float] = {}
        self._lock = threading.Lock()
        self.wall_started = time.perf_counter()

    def _start(self, run_id: UUID) -> None:
        with self._lock:
            self._started[run_id] = time.perf_counter()

    def _elapsed(self, run_id: UUID) -> float:
        with self._lock:
            started = self._started.pop(run_id, None)
        return 0.0 if started is None else time.perf_counter() - started

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        kinds = [t.removeprefix("rat:") for t in kwargs.get("tags") or [] if t.startswith("rat:")]
        with self._lock:
            self._kinds[run_id] = kinds[0] if kinds else "other"
        self._start(run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        elapsed = self._elapsed(run_id)
        usage: Any = None
        generation = response.generations[0][0] if response.generations else None
        if isinstance(generation, ChatGeneration) and isinstance(generation.message, AIMessage):
            usage = generation.message.usage_metadata
        with self._lock:
            kind = self.by_call.setdefault(self._kinds.pop(run_id, "other"), Usage())
            for total in (self.usage, kind):
                total.model_calls += 1
                total.model_seconds += elapsed
                if usage:
                    total.prompt_tokens += usage.get("input_tokens", 0)
                    total.completion_tokens += usage.get("output_tokens", 0)
                    details = usage.get("input_token_details") or {}
                    total.cached_prompt_tokens += details.get("cache_read", 0) or 0

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        elapsed = self._elapsed(run_id)
        with self._lock:
            self._kinds.pop(run_id, None)
            self.usage.model_seconds += elapsed

    def on_retriever_start(
        self, serialized: Any, query: str, *, run_id: UUID, **kwargs: Any
    ) -> None:
        self._start(run_id)

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        elapsed = self._elapsed(run_id)
        with self._lock:
            self.usage.retrievals += 1
            self.usage.retrieval_seconds += elapsed

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.on_retriever_end(None, run_id=run_id)

    def summary(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.wall_started
        overhead = wall - self.usage.model_seconds - self.usage.retrieval_seconds
        return {**self.usage.as_dict(), "wall_seconds": wall, "other_seconds": overhead}
