"""Thought memory in the loop (Thought-Retriever): reading thoughts with each retrieval, and
the `remember` node that turns a finished run's conclusions into thoughts for later runs."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langgraph.config import get_config
from langgraph.runtime import Runtime

from rat_agent.agent import prompts
from rat_agent.agent.context import Context, settings_of
from rat_agent.agent.state import State
from rat_agent.aio import Body, Wait
from rat_agent.errors import ConfigError, ModelError, RatError, RetrievalError
from rat_agent.memory import making
from rat_agent.memory.thought import thought_id
from rat_agent.served import current_user, own_collection

if TYPE_CHECKING:
    from rat_agent.memory.store import Memory
    from rat_agent.services import Services

log = logging.getLogger(__name__)
MEMORY_K = 2  # thoughts read with each retrieval, besides the k documents
MIN_SCORE = 0.5  # the least cosine similarity of a thought to the query for it to be read
NOVELTY = 0.85  # a new thought closer than this to a stored one is not stored (the paper's)
MEMORY_FROM = "both"  # thoughts from each checked step and from the answer: one call each


def memory_collection(ctx: Context) -> str:
    """The run's thought memory: on a server with keys, each user's own, since thoughts carry
    what that user's documents said."""
    user = current_user()
    return own_collection(ctx.memory, user) if user else ctx.memory


def recall(ctx: Context, query: str) -> tuple[list[Document], str]:
    """With memory on: thoughts of earlier runs for a query, and a note if memory failed.

    A memory that cannot be read leaves the step to its documents rather than failing it.
    """
    if not ctx.memory:
        return [], ""
    from rat_agent.memory.store import ThoughtRetriever  # lazy: only runs with memory need it

    try:
        found = ThoughtRetriever(
            collection=memory_collection(ctx), k=MEMORY_K, min_score=MIN_SCORE
        ).invoke(query)
    except ConfigError:
        raise
    except RatError as exc:
        log.warning("thought memory failed: %s", exc)
        return [], f"thought memory failed: {exc}"
    return found, ""


def check_memory(ctx: Context) -> None:
    """Fail fast on a collection that is not a thought memory; an unreachable one only
    warns, as each step will say so."""
    from rat_agent.memory.store import Memory  # lazy, as in recall

    try:
        Memory(memory_collection(ctx)).exists()
    except RetrievalError as exc:
        log.warning("%s", exc)


def remember(nodes: Services, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
    """With memory on: the run's checked conclusions become thoughts for later runs.

    Never fails the run: the answer is already saved, and a thought that cannot be made
    or stored says why in the output's `thoughts`.
    """
    from rat_agent.memory.store import Memory  # lazy, as in recall

    ctx = settings_of(state, runtime)
    memory = Memory(memory_collection(ctx))
    cited = {
        ident
        for step in state.get("steps", [])
        for s in step["sources"]
        if (ident := thought_id(s["source"])) and s.get("kind") == "thought"
    }
    levels = yield Wait(lambda: _levels(memory, sorted(cited)))
    found = making.candidates(
        state["question"],
        state.get("steps", []),
        state.get("answer", ""),
        MEMORY_FROM,
        levels,
    )
    replies: list[str | None] = []
    for candidate in found:  # one call per thought, as the paper does
        messages = prompts.thought_messages(
            ctx.system_prompt,
            candidate.question,
            candidate.answer,
            [o.title for o in candidate.origins],
        )
        try:
            replies.append((yield nodes.asking(ctx, "thought", messages)))
        except ModelError as exc:
            log.warning("thought making failed: %s", exc)
            replies.append(None)
    thread = (get_config().get("configurable") or {}).get("thread_id") or ""
    notes = yield Wait(
        lambda: making.store(
            memory,
            list(zip(found, replies, strict=True)),
            novelty=NOVELTY,
            nearest_documents=lambda text: [
                Document(page_content=d["content"]) for d in nodes.search(ctx, text)
            ],
            thread=str(thread),
            model=ctx.model if nodes.llm is None else nodes.llm.get_name(),
        )
    )
    runtime.stream_writer({"event": "memory", "thoughts": notes})
    return {"thoughts": notes}


def _levels(memory: Memory, cited: list[str]) -> dict[str, float]:
    try:
        return memory.levels(cited)
    except RetrievalError:
        return {}  # storing will fail too, and each thought will say so
