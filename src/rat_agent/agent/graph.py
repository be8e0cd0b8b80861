"""Algorithm 1 of the RAT paper as a LangGraph graph.

    draft_cot                      T = {T1..Tn} <- p(.|I)
    [review_draft]                 a person edits T (review_draft=true): pause, resume
    repeat for i = 1..n:
        to_query                   Qi  <- ToQuery(I, T*1..i-1, Ti)
        retrieve                   Ri  <- RetrieveFromCorpus(Qi)
        revise_step                T*i <- p(.|I, T*1..i-1, Ti, Ri)
        append_next                i   <- i + 1
    write_answer                   the response, from T*1..n (unless the steps are it)
    reply                          the answer as the chat's next message, sources cited
    remember                       memory on:   thoughts <- p(.|I, T*, answer)

n draft steps cost 1 + 2n model calls (n with an empty query prompt), and one more for
the answer (none with an empty answer prompt). A plan repair extension (extension.py; a
domain plug-in's source switches its own on) may drop Ti, or insert before it the steps it
needs, which the loop then checks too.

The context's `method` turns the same graph into each baseline: direct (START -> direct),
cot (draft_cot, then the answer), rag (START -> retrieve_once -> answer_once); react
(START -> react: the tool-calling agent a user would build instead, react.py). With
memory on (its collection named), retrieval also reads the thought memory, and every method
that retrieves ends in remember (Thought-Retriever).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import RetryPolicy

from rat_agent.agent.context import Context, context_of, settings_of
from rat_agent.agent.methods.baselines import (
    answer_once,
    direct,
    retrieve_once,
    retrieve_once_failed,
)
from rat_agent.agent.methods.react import react
from rat_agent.agent.nodes import RatNodes
from rat_agent.agent.remember import remember
from rat_agent.agent.state import (
    ANSWER_ONCE,
    APPEND_NEXT,
    DIRECT,
    DRAFT_COT,
    REACT,
    REMEMBER,
    REPLY,
    RETRIEVE,
    RETRIEVE_ONCE,
    REVIEW_DRAFT,
    REVISE_STEP,
    TO_QUERY,
    WRITE_ANSWER,
    InputState,
    OutputState,
    State,
)
from rat_agent.aio import node
from rat_agent.chat import reply
from rat_agent.errors import (
    ModelError,
    RequestRejected,
    RetrievalError,
    SourceUnavailable,
    UnusableReply,
)


def _retry_model(exc: Exception) -> bool:
    """Transient model failures (a dropped connection, a timeout, 429, a 5xx) are retried
    with backoff; configuration errors, rejected requests and unusable replies are not, as
    retrying cannot fix them."""
    return isinstance(exc, ModelError) and not isinstance(exc, UnusableReply | RequestRejected)


MODEL_RETRY = RetryPolicy(max_attempts=3, initial_interval=1.0, retry_on=_retry_model)


def _retry_retrieval(exc: Exception) -> bool:
    """Sources that retry on their own (Tavily) say so with SourceUnavailable."""
    return isinstance(exc, RetrievalError) and not isinstance(exc, SourceUnavailable)


# A source that keeps failing after these leaves its step unrevised (nodes.retrieval_failed).
RETRIEVAL_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, retry_on=_retry_retrieval)


# What each router may return: LangGraph reads its edges from these, and mypy checks them.
AfterReply = Literal["remember", "__end__"]
AfterSteps = Literal["write_answer", "reply"]
AfterStep = Literal["to_query", AfterSteps]
AfterDraft = Literal["review_draft", "to_query", AfterSteps]
Start = Literal["direct", "retrieve_once", "draft_cot", "react"]


def _runtime() -> Runtime[Context] | None:
    """The run's runtime for a router; None in a state update (Studio's edit, the API's POST
    .../state), which runs the routers outside a run: a router that asked for `runtime` as a
    parameter failed every such update with LangGraph's ValueError."""
    return get_runtime(Context)


def route_start(state: State) -> Start:
    """The one-call baselines skip the draft."""
    method = context_of(_runtime()).method
    if method == "direct":
        return DIRECT
    if method == "react":
        return REACT
    return RETRIEVE_ONCE if method == "rag" else DRAFT_COT


def after_draft(state: State) -> AfterDraft:
    ctx = settings_of(state, _runtime())
    if ctx.method == "cot":
        return after_steps(state)
    return REVIEW_DRAFT if ctx.review_draft else TO_QUERY


def after_step(state: State) -> AfterStep:
    """Loop while draft steps remain; then finish."""
    if state["index"] < len(state["drafts"]):
        return TO_QUERY
    return after_steps(state)


def after_steps(state: State) -> AfterSteps:
    """The one rule of the output: the steps are the answer (a plan: an empty answer
    prompt, resolved when the run starts), or a last call writes the response from them."""
    if settings_of(state, _runtime()).answer_prompt:
        return WRITE_ANSWER
    return REPLY


def after_reply(state: State) -> AfterReply:
    """With memory on, the finished run's conclusions become thoughts."""
    return REMEMBER if settings_of(state, _runtime()).memory else "__end__"


def _targets(route: Any) -> list[str]:
    """The nodes a router may return, from its Literal return type."""
    return list(get_args(route))


def build_graph(
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    llm: BaseChatModel | None = None,
    retriever: BaseRetriever | None = None,
    retrieval_retry: RetryPolicy = RETRIEVAL_RETRY,
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    """The compiled RAT graph; `llm` and `retriever` override what a run's context names."""
    nodes = RatNodes(llm=llm, retriever=retriever)
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node(DRAFT_COT, node(nodes.draft_cot, DRAFT_COT), retry_policy=MODEL_RETRY)
    builder.add_node(REVIEW_DRAFT, nodes.review_draft)
    builder.add_node(TO_QUERY, node(nodes.to_query, TO_QUERY), retry_policy=MODEL_RETRY)
    builder.add_node(
        RETRIEVE,
        node(nodes.retrieve, RETRIEVE),
        retry_policy=retrieval_retry,
        error_handler=nodes.retrieval_failed,
    )
    builder.add_node(REVISE_STEP, node(nodes.revise_step, REVISE_STEP), retry_policy=MODEL_RETRY)
    builder.add_node(APPEND_NEXT, nodes.append_next)
    builder.add_node(WRITE_ANSWER, node(nodes.write_answer, WRITE_ANSWER), retry_policy=MODEL_RETRY)
    builder.add_node(REPLY, reply)
    builder.add_node(REMEMBER, node(partial(remember, nodes), REMEMBER))
    # the baselines, sharing the model, retriever and budgets
    builder.add_node(DIRECT, node(partial(direct, nodes), DIRECT), retry_policy=MODEL_RETRY)
    builder.add_node(
        RETRIEVE_ONCE,
        node(partial(retrieve_once, nodes), RETRIEVE_ONCE),
        retry_policy=retrieval_retry,
        error_handler=retrieve_once_failed,
    )
    builder.add_node(
        ANSWER_ONCE, node(partial(answer_once, nodes), ANSWER_ONCE), retry_policy=MODEL_RETRY
    )
    builder.add_node(REACT, partial(react, nodes), retry_policy=MODEL_RETRY)

    builder.add_conditional_edges(START, route_start)
    builder.add_conditional_edges(DRAFT_COT, after_draft, _targets(AfterDraft))
    builder.add_edge(REVIEW_DRAFT, TO_QUERY)
    builder.add_edge(TO_QUERY, RETRIEVE)
    builder.add_edge(RETRIEVE, REVISE_STEP)
    builder.add_edge(REVISE_STEP, APPEND_NEXT)
    builder.add_conditional_edges(APPEND_NEXT, after_step, _targets(AfterStep))
    builder.add_edge(RETRIEVE_ONCE, ANSWER_ONCE)
    for last in (WRITE_ANSWER, DIRECT, ANSWER_ONCE, REACT):
        builder.add_edge(last, REPLY)
    builder.add_conditional_edges(REPLY, after_reply, _targets(AfterReply))
    builder.add_edge(REMEMBER, END)
    return builder.compile(checkpointer=checkpointer, name="rat")


# For `langgraph dev` / LangGraph Server, which brings its own checkpointer.
graph = build_graph()
