"""The run's model and knowledge source as the nodes reach them.

Every model call and search first asks whether a served run's user still holds a key:
however a run started (a cron, a queued run, a resume or a fork of a checkpoint), a revoked
user's stops there. A call made ahead with the same prompt and settings answers a model
call (ahead.py). Without a model or retriever passed in code, each run builds (once per
process, cached) the ones its context names, so one compiled graph serves runs with
different settings.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever

from rat_agent.ahead import Ahead, key_of
from rat_agent.aio import Wait
from rat_agent.errors import RatError, RetrievalError
from rat_agent.providers.call import Call, aask, ask
from rat_agent.providers.profiles import profile_of
from rat_agent.retrieval import get_retriever
from rat_agent.retrieval.settings import (
    EVIDENCE_KEY,
    EVIDENCE_TOKENS,
    PENALTY_KEY,
    RetrieverSettings,
)
from rat_agent.served import check as check_user
from rat_agent.served import current_user

if TYPE_CHECKING:
    from rat_agent.retrieval.evidence import Evidence

log = logging.getLogger(__name__)


class Context(RetrieverSettings, Protocol):
    """The run settings these read (rat_agent.agent.context.Context has them all)."""

    @property
    def model(self) -> str: ...

    @property
    def temperature(self) -> float: ...

    @property
    def max_tokens(self) -> int: ...


class Services:
    """The model and the retriever, optionally chosen in code, and the calls made ahead."""

    def __init__(self, llm: BaseChatModel | None = None, retriever: BaseRetriever | None = None):
        self.llm = llm
        self.retriever = retriever
        self.ahead = Ahead()  # the calls made ahead of the loop (ahead.py)

    def model(self, ctx: Context) -> BaseChatModel:
        """The run's chat model: the one passed to build_graph, else the context's."""
        check_user()
        if self.llm is not None:
            return self.llm
        from rat_agent.providers.chat import (
            get_chat_model,  # lazy: provider clients are slow to import
        )

        return get_chat_model(ctx.model, temperature=ctx.temperature, max_tokens=ctx.max_tokens)

    def ask(
        self,
        ctx: Context,
        call: Call | str,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None = None,
        whole: bool = False,
        grammar: str | None = None,
    ) -> str:
        """One model call, tagged "rat:<call>"; with `schema`, the server enforces that JSON,
        with `grammar` that llama.cpp grammar; with `whole`, a reply cut at the token limit
        is returned empty."""
        key = self._key(ctx, call, messages, schema, whole, grammar)
        return self.ahead.call(
            key, lambda: ask(self.model(ctx), call, messages, schema, whole, grammar)
        )

    def asking(
        self,
        ctx: Context,
        call: Call | str,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None = None,
        whole: bool = False,
    ) -> Wait[str]:
        """`ask` as a node's body waits on it: under an event loop, the model is awaited."""
        key = self._key(ctx, call, messages, schema, whole, None)

        async def make() -> str:
            model = await asyncio.to_thread(self.model, ctx)  # a local model may start
            return await aask(model, call, messages, schema, whole)

        return Wait(
            partial(self.ask, ctx, call, messages, schema, whole),
            lambda: self.ahead.acall(key, make),
        )

    def _key(
        self,
        ctx: Context,
        call: Call | str,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None,
        whole: bool,
        grammar: str | None,
    ) -> str:
        settings = [ctx.model, ctx.temperature, ctx.max_tokens, id(self.llm)]
        prompt = [(m.type, m.content) for m in messages]
        return key_of(call, settings, prompt, schema, grammar, whole, current_user())

    def constrained(self, ctx: Context) -> bool:
        """Whether the model's server enforces a JSON schema on a reply (its profile)."""
        return self.llm is None and profile_of(ctx.model).schema

    def prefills(self, ctx: Context) -> bool:
        """Whether the model's server continues a reply begun in the prompt, under a grammar
        for the rest (its profile)."""
        return self.llm is None and profile_of(ctx.model).prefill

    def grounded(self, ctx: Context) -> bool:
        """Whether a revision must rest on its documents' words to stand (its profile)."""
        return self.llm is None and profile_of(ctx.model).grounded

    def bearing_floor(self, ctx: Context) -> float:
        """The best passage's match below which a step is kept unrevised (its profile)."""
        return profile_of(ctx.model).bearing_floor if self.llm is None else 0.0

    def source(self, ctx: Context) -> BaseRetriever:
        """The run's retriever, for a user who still holds a key."""
        check_user()
        return self.retriever or get_retriever(ctx)

    def declared(self, ctx: Context) -> dict[str, Any]:
        """What the run's source declares of itself: its LangChain metadata (its passage
        budget, its tasks' draft, its domain)."""
        return getattr(self.retriever or get_retriever(ctx), "metadata", None) or {}

    def search(self, ctx: Context, query: str) -> list[dict[str, str]]:
        """The knowledge source's top-k documents for a query, any failure typed."""
        retriever = self.source(ctx)
        with typed_search():
            return [as_dict(d) for d in retriever.invoke(query)[: ctx.k]]

    async def asearch(self, ctx: Context, query: str) -> list[dict[str, str]]:
        """`search`, awaited."""
        retriever = await asyncio.to_thread(self.source, ctx)
        with typed_search():
            return [as_dict(d) for d in (await retriever.ainvoke(query))[: ctx.k]]

    def passages(
        self, ctx: Context, documents: list[dict[str, str]], targets: list[str]
    ) -> Evidence:
        """The retrieved documents cut to their passages closest to `targets`, within the
        source's budget of tokens (its metadata, else 600), and how well the best matches.
        A source whose budget is 0 is shown whole, and the embedder is never loaded for it."""
        from rat_agent.retrieval import evidence  # lazy: numpy and the embedder, for retrievals

        if not documents:
            return evidence.Evidence(documents, None)
        metadata = self.declared(ctx)
        budget = int(metadata.get(EVIDENCE_KEY, EVIDENCE_TOKENS))
        if budget <= 0:
            return evidence.Evidence(documents, None)
        try:
            return evidence.select(documents, targets, budget, metadata.get(PENALTY_KEY, 0.0))
        except Exception as exc:  # the embedder failing must not cost the step its documents
            log.warning("passage selection failed, showing whole documents: %s", exc)
            return evidence.Evidence(documents, None)


@contextmanager
def typed_search() -> Iterator[None]:
    """Any source's error as one typed, retryable error; the project's own pass through."""
    try:
        yield
    except RatError:
        raise
    except Exception as exc:
        raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc


def as_dict(doc: Document) -> dict[str, str]:
    """A retrieved document as the prompts and citations read it."""
    meta = doc.metadata
    source = str(meta.get("source") or meta.get("url") or meta.get("id") or "")
    title = str(meta.get("title") or source or "untitled")
    kind = "thought" if meta.get("kind") == "thought" else "document"
    return {"title": title, "source": source, "content": doc.page_content, "kind": kind}
