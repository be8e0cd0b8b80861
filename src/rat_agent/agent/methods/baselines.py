"""The paper's baselines, as modes of the same graph (context field `method`).

DIRECT answers in one call; RAG retrieves once with the task as the query and answers from
what it found. They share rat's system prompt, model, retriever, passage selection and
budgets (nodes.py), so a comparison differs in the method only. CoT is rat's draft alone
(graph.py).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from rat_agent import parsing
from rat_agent.agent import prompts
from rat_agent.agent.context import Context, context_of, settings_of
from rat_agent.agent.nodes import RatNodes, source_of, start_run
from rat_agent.agent.remember import recall
from rat_agent.agent.state import ANSWER_ONCE, State, Step
from rat_agent.aio import Body
from rat_agent.chat import new_turn, question_of
from rat_agent.errors import RetrievalError, UnusableReply
from rat_agent.services import as_dict

log = logging.getLogger(__name__)


def direct(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
    """DIRECT: one call, the answer only."""
    ctx = yield nodes.start(runtime)
    question, chat = yield from nodes.task(state, ctx)
    messages = prompts.direct_messages(ctx.system_prompt, question)
    answer = parsing.strip_thinking((yield nodes.asking(ctx, "direct", messages))).strip()
    if not answer:
        raise UnusableReply("the model returned an empty answer")
    return start_run(question, ctx, **chat, answer=answer)


def retrieve_once(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
    """RAG: one retrieval with the task as the query. Failures are retried by the same
    policy as rat's `retrieve`."""
    ctx = yield nodes.start(runtime)
    question, chat = yield from nodes.task(state, ctx)
    documents, _, problem = yield nodes.found(ctx, question, [question])
    return {
        **start_run(question, ctx, **chat),
        "query": question,
        "documents": documents,
        "retrieval_error": problem,
    }


def retrieve_once_failed(state: State, runtime: Runtime[Context], error: NodeError) -> Command[str]:
    """After the last retry RAG answers without its documents, as a rat step is kept
    unrevised; bad settings fail the run."""
    if not isinstance(error.error, RetrievalError):
        raise error.error
    ctx = context_of(runtime)
    question = question_of(state)
    log.warning("retrieval failed: %s", error.error)
    thoughts, _ = recall(ctx, question)
    return Command(
        update={
            **start_run(question, ctx, **new_turn(state, question)),
            "query": question,
            "documents": [as_dict(d) for d in thoughts],
            "retrieval_error": f"retrieval failed: {error.error}",
        },
        goto=ANSWER_ONCE,
    )


def answer_once(nodes: RatNodes, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
    """RAG answers from its documents, as DIRECT answers without them."""
    ctx = settings_of(state, runtime)
    documents = state.get("documents", [])
    messages = prompts.rag_messages(ctx.system_prompt, state["question"], documents)
    answer = parsing.strip_thinking((yield nodes.asking(ctx, "rag", messages))).strip()
    if not parsing.says_something(answer):
        raise UnusableReply("the model returned an empty answer")
    step: Step = {
        "draft": "",
        "query": state.get("query", ""),
        "sources": [source_of(d) for d in documents],
        "revised": answer,
        "status": "revised" if documents else "not_revised",
        "note": state.get("retrieval_error") or "",
    }
    return {"steps": [step], "answer": answer}
