"""The paper's baselines, as modes of the same graph (context field `method`).

DIRECT answers in one call; RAG retrieves once with the task as the query; CoT+RAG
retrieves once with the whole draft and revises it in one call. They share rat's model
calls, retriever, evidence selection and budgets (nodes.py), so a comparison differs in
the method only.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from rat_agent.agent import parsing, prompts
from rat_agent.agent.context import Context
from rat_agent.agent.nodes import (
    RatNodes,
    as_dict,
    check_sources,
    context_of,
    doc_chars,
    evidence_budget,
    focus,
    question_of,
    source_of,
    start_run,
)
from rat_agent.agent.remember import recall
from rat_agent.agent.state import ANSWER_ONCE, State, Step
from rat_agent.errors import RetrievalError, UnusableReply

log = logging.getLogger(__name__)


def direct(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """DIRECT: one call, the answer only."""
    ctx = context_of(runtime)
    check_sources(nodes, ctx)
    question = question_of(state)
    answer = parsing.strip_thinking(
        nodes.ask(ctx, "direct", prompts.direct_messages(question))
    ).strip()
    if not answer:
        raise UnusableReply("the model returned an empty answer")
    return start_run(question, ctx, answer=answer)


def _once(state: State, ctx: Context) -> tuple[str, dict[str, Any]]:
    """The baseline's one query, and the state a RAG run starts with."""
    if ctx.method == "rag":
        question = question_of(state)
        return question, start_run(question, ctx)
    return parsing.format_steps(state["drafts"]), {}


def retrieve_once(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """RAG: one retrieval with the task as the query; CoT+RAG: with the whole draft.
    Failures are retried by the same policy as rat's `retrieve`."""
    ctx = context_of(runtime)
    query, update = _once(state, ctx)
    thoughts_found, problem = recall(ctx, query)
    docs = nodes.search(ctx, query)
    found = focus(
        ctx, [*docs, *map(as_dict, thoughts_found)], [query], nodes.evidence_budget(ctx)
    ).documents
    return {**update, "query": query, "documents": found, "retrieval_error": problem}


def retrieve_once_failed(state: State, runtime: Runtime[Context], error: NodeError) -> Command[str]:
    """After the last retry a baseline answers without its documents, as a rat step is
    kept unrevised; bad settings fail the run."""
    if not isinstance(error.error, RetrievalError):
        raise error.error
    ctx = context_of(runtime)
    query, update = _once(state, ctx)
    log.warning("retrieval failed: %s", error.error)
    thoughts_found, _ = recall(ctx, query)
    return Command(
        update={
            **update,
            "query": query,
            # thoughts only: the source's own budget is not asked of a source that failed
            "documents": focus(
                ctx, [as_dict(d) for d in thoughts_found], [query], evidence_budget(ctx, None)
            ).documents,
            "retrieval_error": f"retrieval failed: {error.error}",
        },
        goto=ANSWER_ONCE,
    )


def answer_once(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """RAG answers from its documents, as DIRECT answers without them; CoT+RAG revises the
    whole draft once against them."""
    ctx = context_of(runtime)
    documents = state.get("documents", [])
    drafts = state.get("drafts", [])
    rag = ctx.method == "rag"
    if rag:
        messages = prompts.rag_messages(state["question"], documents, doc_chars=doc_chars(ctx))
    else:
        messages = prompts.revise_all_messages(
            state["question"], drafts, documents, doc_chars=doc_chars(ctx)
        )
    reply = parsing.clean_reply(nodes.ask(ctx, "rag" if rag else "revise_all", messages))
    texts = parsing.merge_tail(parsing.drop_repeats(parsing.split_steps(reply)), ctx.max_steps)
    texts = [t for t in texts if parsing.says_something(t)] or list(drafts)
    if not texts:
        raise UnusableReply("the model returned an empty answer")
    sources = [source_of(d) for d in documents]
    steps: list[Step] = [
        {
            "draft": drafts[n] if n < len(drafts) else "",
            "query": state.get("query", ""),
            "sources": sources,
            "revised": text,
            "status": "revised" if sources else "not_revised",
            "note": state.get("retrieval_error") or "",
        }
        for n, text in enumerate(texts)
    ]
    # RAG's answer is its reply, as DIRECT's is; CoT+RAG's is the revised draft's steps
    answer = reply if rag and parsing.says_something(reply) else parsing.format_steps(texts)
    return {"steps": steps, "answer": answer}
