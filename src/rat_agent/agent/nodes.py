"""The nodes of Algorithm 1: draft_cot, to_query, retrieve, revise_step, append_next.

Each node reads only what the paper's causal formulation allows: the query and the
revision of step i see the task, the revised steps 1..i-1 and the draft of step i, never
a later draft step. Every node returns a small update, so a checkpoint after each one
holds all finished work.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config, get_stream_writer
from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from rat_agent.agent import mending, names, parsing, prompts, repair, thoughts
from rat_agent.agent.context import Context
from rat_agent.agent.state import (
    REVISE_STEP,
    DraftMeta,
    Source,
    SourceKind,
    State,
    Step,
)
from rat_agent.errors import (
    ConfigError,
    ModelError,
    RatError,
    RequestRejected,
    RetrievalError,
    UnusableReply,
)
from rat_agent.memory.thought import thought_id
from rat_agent.retrieval import check_retriever, get_retriever
from rat_agent.text import shorten

if TYPE_CHECKING:
    from rat_agent.agent.evidence import Evidence

log = logging.getLogger(__name__)
SNIPPET_CHARS = 240


# Every model call a node makes, by what it asks for; ask() tags the call "rat:<call>".
Call = Literal[
    "draft",
    "goal",
    "query",
    "revise",
    "prefix",
    "answer",
    "thought",
    "direct",
    "rag",
    "revise_all",
]


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context; a run started without one gets the defaults (and environment)."""
    if runtime is None or runtime.context is None:
        return Context()
    return runtime.context


def _skipped(state: State, meta: DraftMeta, ctx: Context) -> str:
    """Why draft step `index` is dropped unchecked, if it is: the goal came before it, or it
    was inserted for a need that an earlier step has met since (siblings inserted together
    may each need a crafting table; the first one made it)."""
    if meta["drop"]:
        return meta["drop"]
    goal = state.get("goal", "")
    if ctx.stop_at_goal and goal:
        # A draft step that does not name the goal may be revised into the step that makes
        # it, and a small model's later steps then make it again (seen: a chain-of-thought
        # plan for a wooden pickaxe went on for 8 steps after the one that crafted it).
        kept = [step for step in state["steps"] if step["status"] != "dropped"]
        for n, step in enumerate(kept, start=1):
            if repair.makes_goal(step["revised"], goal):
                return f"the task is done at step {n}, which makes {goal!r}"
    # The goal's own step (reach_goal) is done only by a step that makes the goal as named
    # (above): the ledger lets a modifier pass ("planks" for "oak planks"), and "stone" made
    # is not the "smooth stone" the task asks for.
    if (
        meta["makes"]
        and meta["makes"] != goal
        and not repair.missing([meta["makes"]], state["steps"])
    ):
        return f"{meta['makes']}: already made by an earlier step"
    return ""


def _repeated(state: State, ctx: Context) -> int | None:
    """reuse_repairs: the earlier step an inserted step is written from, if any."""
    meta = repair.meta_at(state.get("meta", []), state["index"])
    if not (ctx.reuse_repairs and meta["makes"] and ctx.quotes_each_step()):
        return None
    return repair.resolved(meta["makes"], state["steps"])


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


def _schema_options(model: BaseChatModel, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The call options that ask the server to enforce `schema` (none without one)."""
    if schema is None:
        return {}
    wanted = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    body = getattr(model, "extra_body", None)
    if isinstance(body, dict):
        # In the request body rather than as `response_format=`, which makes langchain-openai
        # parse the reply and raise on one cut at max_tokens; parse_revision reads a cut
        # reply and keeps the draft instead.
        return {"extra_body": {**body, "response_format": wanted}}
    return {"response_format": wanted}


class RatNodes:
    """The node functions, bound to an optional model and retriever chosen in code.

    Without overrides, each run builds (once per process, cached) the model and the
    retriever its context names, so one compiled graph serves runs with different settings.
    """

    def __init__(self, llm: BaseChatModel | None = None, retriever: BaseRetriever | None = None):
        self.llm = llm
        self.retriever = retriever

    def _model(self, ctx: Context) -> BaseChatModel:
        if self.llm is not None:
            return self.llm
        from rat_agent.providers.chat import (
            get_chat_model,  # lazy: provider clients are slow to import
        )

        return get_chat_model(ctx.model, temperature=ctx.temperature, max_tokens=ctx.max_tokens)

    def ask(
        self,
        ctx: Context,
        call: Call,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None = None,
    ) -> str:
        """One model call, tagged "rat:<call>" (traces and test fakes tell the calls apart
        by it); with `schema`, the server is asked to enforce that JSON."""
        try:
            model = self._model(ctx)
            config: RunnableConfig = {"tags": [f"rat:{call}"]}
            reply = model.invoke(messages, config, **_schema_options(model, schema))
        except RatError:
            raise
        except Exception as exc:  # any provider's error becomes one typed error
            status = _status(exc)
            if status is not None and 400 <= status < 500 and status not in (408, 429):
                raise RequestRejected(
                    f"the model provider rejected the request (HTTP {status}): {_first_line(exc)}"
                ) from exc
            raise ModelError(
                f"model call failed: {type(exc).__name__}: {_first_line(exc)}"
            ) from exc
        content = reply.content
        if isinstance(content, list):  # providers that return content blocks
            content = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
        return str(content)

    def constrained(self, ctx: Context) -> bool:
        """Whether grounded revisions reply in schema-enforced JSON (reply_format)."""
        if ctx.reply_format != "auto":
            return ctx.reply_format == "json"
        from rat_agent.providers.chat import (
            LOCAL_MODELS,  # llama.cpp enforces a schema as a grammar
        )

        return self.llm is None and ctx.model in LOCAL_MODELS

    # --- Algorithm 1 -----------------------------------------------------------------

    def draft_cot(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """T = p(.|I): a zero-shot, step-by-step draft, split into at most max_steps steps."""
        ctx = context_of(runtime)
        check_sources(self, ctx)
        question = question_of(state)
        if self._plans(ctx) and ctx.draft == "goal":
            goal = self._goal(ctx, question)
            if not goal:
                raise UnusableReply(
                    "the model named no goal for the task; try again or use another model"
                )
            drafts = [prompts.REPAIR_DRAFT.format(need=goal)]
            meta: list[DraftMeta] = []
        else:
            reply = self.ask(ctx, "draft", prompts.draft_messages(question, ctx.max_steps))
            steps = parsing.drop_repeats(parsing.split_steps(reply))
            drafts = parsing.merge_tail(
                [s for s in steps if parsing.says_something(s)], ctx.max_steps
            )
            if not drafts:
                raise UnusableReply(
                    "the model returned an empty draft; try again or use another model"
                )
            goal, meta = self._stop_at_goal(ctx, question, drafts)
        runtime.stream_writer({"event": "draft", "drafts": drafts, "reviewed": False})
        # method "cot" stops here: the draft is the answer
        answer = parsing.format_steps(drafts) if ctx.method == "cot" else ""
        return start_run(question, ctx, drafts=drafts, goal=goal, meta=meta, index=0, answer=answer)

    @staticmethod
    def _plans(ctx: Context) -> bool:
        """Whether this run writes a plan the goal settings apply to."""
        return ctx.output == "steps" and ctx.method in ("rat", "rat_noncausal")

    def _goal(self, ctx: Context, question: str) -> str:
        return parsing.goal_name(self.ask(ctx, "goal", prompts.goal_messages(question)))

    def _stop_at_goal(
        self, ctx: Context, question: str, drafts: list[str]
    ) -> tuple[str, list[DraftMeta]]:
        """A plan ends where the task is done: draft steps after the first one that names
        what the task asks for are dropped unchecked (small models go on past the goal)."""
        if not ((ctx.stop_at_goal or ctx.reach_goal) and self._plans(ctx)):
            return "", []
        goal = self._goal(ctx, question)
        last = repair.goal_step(goal, drafts)
        if last is None or not ctx.stop_at_goal:
            return goal, []
        meta = [repair.meta_at([], n) for n in range(len(drafts))]
        for n in range(last + 1, len(drafts)):
            meta[n]["drop"] = f"the task is done at draft step {last + 1}, which names {goal!r}"
        return goal, meta

    def review_draft(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """With review_draft on: pause with the draft steps until a person edits or accepts them.

        Resume with `Command(resume=...)`: True or {"accept": True} keeps the draft;
        {"drafts": [...]}, a list of steps, or a text of "STEP k:" lines replaces it.
        (LangGraph reads resume=None as "no resume" and {} as an empty map of interrupts.)
        """
        payload: dict[str, Any] = {"question": state["question"], "drafts": state["drafts"]}
        while True:  # a bad answer asks again, saying why, rather than failing the run
            reply = interrupt(payload)
            try:
                drafts = reviewed_drafts(reply, context_of(runtime).max_steps)
                break
            except ConfigError as exc:
                payload = {**payload, "error": str(exc)}
        shown = state["drafts"] if drafts is None else drafts
        runtime.stream_writer({"event": "draft", "drafts": shown, "reviewed": True})
        return {} if drafts is None else {"drafts": drafts, "meta": []}

    def to_query(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Q_i = ToQuery(I, T*_1..i-1, T_i)."""
        query = self._query(state, context_of(runtime))
        i = state["index"]
        runtime.stream_writer(
            {
                "event": "query",
                "step": i + 1,
                "of": len(state["drafts"]),
                "draft": state["drafts"][i],
                "query": query,
            }
        )
        return {"query": query}

    def _query(self, state: State, ctx: Context) -> str:
        """The query for the current step; "" for a step dropped unchecked."""
        i = state["index"]
        meta = repair.meta_at(state.get("meta", []), i)
        # A step checked again after its prerequisites looks up what it was for ("Get 2
        # sticks."), not its corrected text, whose inputs and tools would pull in their pages.
        draft = meta["original"] or state["drafts"][i]
        if _skipped(state, meta, ctx):
            return ""  # dropped unchecked: nothing to look up
        # An inserted step's draft ("Get 8 planks.") already names exactly what to look up.
        if ctx.query_mode == "text" or meta["makes"]:
            return parsing.head(draft)
        # Non-causal RAT (a baseline) writes every query from the unrevised draft.
        past = state["drafts"][:i] if ctx.method == "rat_noncausal" else _revised(state["steps"])
        reply = self.ask(
            ctx, "query", prompts.query_messages(state["question"], past, draft, len(past) + 1)
        )
        return parsing.clean_query(reply) or draft  # a useless reply falls back to the step

    def retrieve(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """R_i = top-k documents for Q_i. Failures are retried by the node's retry policy."""
        ctx = context_of(runtime)
        if _skipped(state, repair.meta_at(state.get("meta", []), state["index"]), ctx):
            _sources_event(state, [], "")
            return {"documents": [], "support": None, "retrieval_error": ""}
        if (earlier := _repeated(state, ctx)) is not None:  # written from that step's sources
            titles = [{"title": s["title"]} for s in state["steps"][earlier]["sources"]]
            _sources_event(state, titles, "")
            return {"documents": [], "support": None, "retrieval_error": ""}
        docs = self.search(ctx, state["query"])
        thoughts_found, problem = recall(ctx, state["query"])
        meta = repair.meta_at(state.get("meta", []), state["index"])
        draft = meta["original"] or state["drafts"][state["index"]]  # as in to_query
        found = focus(ctx, [*docs, *thoughts_found], [state["query"], parsing.head(draft)])
        _sources_event(state, found.documents, problem)
        return {"documents": found.documents, "support": found.support, "retrieval_error": problem}

    def search(self, ctx: Context, query: str) -> list[dict[str, str]]:
        """The knowledge source's top-k documents for a query, any failure typed."""
        retriever = self.retriever or get_retriever(ctx)
        try:
            docs = retriever.invoke(query)[: ctx.k]
        except RatError:
            raise
        except Exception as exc:  # any source's error becomes one typed, retryable error
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        return [_as_dict(d) for d in docs]

    @staticmethod
    def retrieval_failed(state: State, error: NodeError) -> Command[str]:
        """After the last retry: keep this step unrevised, say why, and go on.

        Bad settings (ConfigError) are not a flaky source: they fail the run.
        """
        if not isinstance(error.error, RetrievalError):
            raise error.error
        log.warning("retrieval failed for step %d: %s", state["index"] + 1, error.error)
        problem = f"retrieval failed: {error.error}"
        _sources_event(state, [], problem)
        return Command(update={"documents": [], "retrieval_error": problem}, goto=REVISE_STEP)

    def revise_step(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """T*_i = p(.|I, T*_1..i-1, T_i, R_i); the revision replaces the draft step.

        A grounded revision may also drop the step, or name prerequisites no earlier step
        made: those become draft steps before this one (plan repair), and this step waits,
        corrected, to be checked again after them.
        """
        ctx = context_of(runtime)
        i = state["index"]
        draft = state["drafts"][i]
        meta = repair.meta_at(state.get("meta", []), i)
        steps = [s.copy() for s in state["steps"]]
        documents = state.get("documents", [])
        step: Step = {
            "draft": meta["original"] or draft,  # as the model first wrote it
            "query": state["query"],
            "sources": [source_of(d) for d in documents],
            "revised": draft,
            "status": "not_revised",
            "note": state.get("retrieval_error") or "",
        }
        if meta["makes"]:
            step["makes"] = meta["makes"]
        grounded = ctx.quotes_each_step()
        support = state.get("support")
        repeat = _repeated(state, ctx)
        if skip := _skipped(state, meta, ctx):
            step.update({"revised": "", "status": "dropped", "note": skip})
        elif not documents and repeat is None:
            step["note"] = step["note"] or "no documents retrieved"
        elif (
            grounded
            and ctx.min_support
            and support is not None
            and support < ctx.min_support
            and not (meta["makes"] or meta["repairs"])
        ):  # a prerequisite is needed by definition
            step.update(
                {
                    "revised": "",
                    "status": "dropped",
                    "note": f"no passage supports it (best match {support:.2f} < "
                    f"min_support {ctx.min_support:g})",
                }
            )
        elif grounded:
            if insertion := self._revise_grounded(state, runtime, step, steps, meta, repeat):
                return insertion
        else:
            self._revise_free(state, ctx, step, steps)
        if meta["makes"] and step["status"] in ("revised", "unchanged"):
            step["status"] = "inserted"
            step["note"] = "; ".join(n for n in (meta["reason"], step["note"]) if n)
        new_steps = [*steps, step]
        runtime.stream_writer(
            {
                "event": "step",
                "step": len(new_steps),
                "of": len(state["drafts"]),
                "query": step["query"],
                "sources": step["sources"],
                "status": step["status"],
                "revision": step,
            }
        )
        update = {"steps": new_steps, "answer": parsing.format_steps(_revised(new_steps))}
        if i + 1 == len(state["drafts"]):  # the last step: does the plan reach the goal?
            update |= self._reach_goal(state, runtime, new_steps)
        return update

    def _revise_grounded(
        self,
        state: State,
        runtime: Runtime[Context],
        step: Step,
        steps: list[Step],
        meta: DraftMeta,
        repeat: int | None,
    ) -> dict[str, Any] | None:
        """Fills `step` from a revision that quotes its source; returns plan repair's update
        when the step names prerequisites no earlier step made, else None."""
        ctx = context_of(runtime)
        draft = state["drafts"][state["index"]]
        revised_past = _revised(steps)
        documents = state.get("documents", [])
        if repeat is not None:
            before = steps[repeat]
            found = parsing.Revision(
                step=before["revised"], fact=before["fact"], needs=before.get("needs", [])
            )
            why = f"written as step {repeat + 1} was, from its quote"
            step["sources"] = before["sources"]
        else:
            as_json = self.constrained(ctx)
            messages = prompts.grounded_messages(
                state["question"],
                revised_past,
                draft,
                len(revised_past) + 1,
                documents,
                doc_chars=doc_chars(ctx),
                as_json=as_json,
            )
            quotable = prompts.facts(documents, doc_chars(ctx), best=ctx.fact_choices)
            schema = prompts.revision_schema(quotable) if as_json else None
            found, why = self._revision(ctx, messages, schema, len(revised_past) + 1, meta["makes"])
        step["note"] = step["note"] or why
        if found.drop is not None:
            step.update(
                {"revised": "", "status": "dropped", "note": found.drop, "fact": found.fact}
            )
        elif parsing.says_something(found.step):
            text, needs = mending.mend(found.step, found.needs, found.fact, meta["makes"])
            step.update({"revised": text, "fact": found.fact, "needs": needs})
            changed = parsing.normalize(text) != parsing.normalize(step["draft"])
            step["status"] = "revised" if changed else "unchanged"
            # a prerequisite is needed by definition; a step of the draft is not
            lacking = [] if meta["makes"] else repair.unsupported(needs, text, found.fact, steps)
            if lacking:
                step.update(
                    {
                        "revised": "",
                        "status": "dropped",
                        "note": f"it needs {', '.join(lacking)}, which its sources do not "
                        f"name and no earlier step made (it was: {text!r})",
                    }
                )
            waiting = [meta["makes"], *meta["chain"]]
            absent = (
                []
                if meta["repairs"] >= repair.MAX_REPAIRS or lacking
                else repair.missing(
                    names.grounded(needs, found.fact), steps, waiting, text, found.fact
                )
            )
            room = ctx.repair_steps - repair.inserted_count(state.get("meta", []), steps)
            if absent and room > 0:
                return self._insert(state, runtime, step, absent[:room])
        else:
            step["note"] = "the model's revision was empty; the draft was kept"
        return None

    def _revise_free(self, state: State, ctx: Context, step: Step, steps: list[Step]) -> None:
        """Fills `step` from the paper's free-text revision (and, with the prefix scope,
        rewrites the earlier steps the model gave back)."""
        draft = state["drafts"][state["index"]]
        revised_past = _revised(steps)
        documents = state.get("documents", [])
        official = ctx.method == "rat_official_layout"
        if official:
            messages = prompts.official_revise_messages(
                state["question"], revised_past, draft, documents, doc_chars=doc_chars(ctx)
            )
        else:
            messages = prompts.revise_messages(
                state["question"],
                revised_past,
                draft,
                len(revised_past) + 1,
                documents,
                doc_chars=doc_chars(ctx),
                scope=ctx.revise_scope,
            )
        prefix = ctx.revise_scope == "prefix" or official
        reply = parsing.clean_reply(self.ask(ctx, "prefix" if prefix else "revise", messages))
        if prefix:
            earlier, current = _split_prefix(reply, len(revised_past) + 1)
            kept = [s for s in steps if s["status"] != "dropped"]
            for past, text in zip(kept, earlier, strict=False):
                past["revised"] = text
        else:
            current = parsing.pick_step(reply, len(revised_past) + 1)
        if parsing.says_something(current):
            step["revised"] = current
            changed = parsing.normalize(current) != parsing.normalize(draft)
            step["status"] = "revised" if changed else "unchanged"
        else:
            step["note"] = "the model's revision was empty; the draft was kept"

    def _revision(
        self,
        ctx: Context,
        messages: list[BaseMessage],
        schema: dict[str, Any] | None,
        number: int,
        makes: str,
    ) -> tuple[parsing.Revision, str]:
        """A grounded revision, and a note on it.

        One that makes its product from itself (a small model copies the product where the
        input belongs: "Craft 6 sand from 24 sand" for 6 sandstone) is mended by rule: a
        step inserted to make something else makes that; otherwise it takes the counted
        inputs its quote names. Asked to write the step again, or what the quote uses, the
        1.5B model copied the step again or answered "None".
        """
        found = parsing.parse_revision(self.ask(ctx, "revise", messages, schema), number)
        if found.drop is not None or not mending.makes_from_itself(found.step):
            return found, ""
        step, needs = mending.with_product(found.step, found.needs, makes)
        if step == found.step:
            step, needs = mending.with_inputs(found.step, found.needs, names.counted(found.fact))
        if step == found.step:
            return found, "makes its product from itself; its quote names no other input"
        return replace(
            found, step=step, needs=needs
        ), f"made its product from itself (it was: {found.step!r})"

    def _insert(
        self, state: State, runtime: Runtime[Context], step: Step, needs: list[str]
    ) -> dict[str, Any]:
        """Plan repair: draft steps for `needs` go before step i, which waits, corrected.

        Nothing is appended to `steps`, so append_next keeps the index on the first
        inserted step; step i is checked again once its prerequisites are.
        """
        i = state["index"]
        drafts = list(state["drafts"])
        meta = [repair.meta_at(state.get("meta", []), n) for n in range(len(drafts))]
        reason = f"needed by: {step['revised']}"
        chain = [m for m in (meta[i]["makes"], *meta[i]["chain"]) if m]
        added: list[DraftMeta] = [
            {**repair.meta_at([], 0), "makes": need, "reason": reason, "chain": chain}
            for need in needs
        ]
        texts = [prompts.REPAIR_DRAFT.format(need=need) for need in needs]
        current: DraftMeta = {
            **meta[i],
            "repairs": meta[i]["repairs"] + 1,
            "original": meta[i]["original"] or state["drafts"][i],
        }
        drafts[i : i + 1] = [*texts, step["revised"]]
        meta[i : i + 1] = [*added, current]
        runtime.stream_writer(
            {
                "event": "insert",
                "step": len(state["steps"]) + 1,
                "drafts": texts,
                "needed_by": step["revised"],
                "reason": reason,
            }
        )
        return {"drafts": drafts, "meta": meta}

    def _reach_goal(
        self, state: State, runtime: Runtime[Context], steps: list[Step]
    ) -> dict[str, Any]:
        """reach_goal: a plan whose steps ran out before one made the goal gets a step for
        it, checked as plan repair checks a prerequisite. A chain-of-thought draft may stop
        short of the goal, and a goal step may be revised into one of the goal's inputs
        ("Get sandstone." as "Mine 4 sand"); as an inserted step it is redirected to the
        quote's recipe for the goal, and what it uses is inserted before it. Once a run.
        Appended by revise_step, as repair's insertions are, so the checkpoint before the
        new step already holds its draft (time travel forks there)."""
        ctx = context_of(runtime)
        goal = state.get("goal", "")
        old = state.get("meta", [])
        reason = f"the plan ended before a step made {goal!r}"
        if (
            not (ctx.reach_goal and goal and self._plans(ctx) and ctx.quotes_each_step())
            or any(m["reason"] == reason for m in old)
            or any(repair.makes_goal(s["revised"], goal) for s in steps if s["status"] != "dropped")
            or ctx.repair_steps - repair.inserted_count(old, steps) <= 0
        ):
            return {}
        text = prompts.REPAIR_DRAFT.format(need=goal)
        meta = [repair.meta_at(old, n) for n in range(len(state["drafts"]))]
        meta.append({**repair.meta_at([], 0), "makes": goal, "reason": reason})
        runtime.stream_writer(
            {
                "event": "insert",
                "step": len(steps) + 1,
                "drafts": [text],
                "needed_by": "",
                "reason": reason,
            }
        )
        return {"drafts": [*state["drafts"], text], "meta": meta}

    def append_next(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Move to T_i+1; the per-step scratch fields are cleared.

        After a plan repair nothing was appended, and the index stays on the first inserted
        step: one finished step per draft position, so `len(steps)` is always `index`.
        """
        index = len(state["steps"])
        return {
            "index": index,
            "query": "",
            "documents": [],
            "support": None,
            "retrieval_error": "",
        }

    def write_answer(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """For code or long writing: the final response, written from the revised steps."""
        ctx = context_of(runtime)
        steps = _revised(state["steps"]) or list(state["drafts"])  # method cot: the draft
        messages = prompts.answer_messages(state["question"], steps, checked=bool(state["steps"]))
        answer = parsing.strip_thinking(self.ask(ctx, "answer", messages)).strip()
        runtime.stream_writer({"event": "answer"})
        return {"answer": answer or parsing.format_steps(steps)}

    def remember(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """memory=true: the run's checked conclusions become thoughts for later runs.

        Never fails the run: the answer is already saved, and a thought that cannot be made
        or stored says why in the output's `thoughts`.
        """
        from rat_agent.memory.store import Memory  # lazy: only runs with memory need Qdrant

        ctx = context_of(runtime)
        memory = Memory(ctx.memory_collection)
        cited = {
            ident
            for step in state.get("steps", [])
            for s in step["sources"]
            if (ident := thought_id(s["source"])) and s.get("kind") == "thought"
        }
        try:
            levels = memory.levels(sorted(cited))
        except RetrievalError:
            levels = {}  # storing will fail too, and each thought will say so
        found = thoughts.candidates(
            state["question"],
            state.get("steps", []),
            state.get("answer", ""),
            ctx.memory_from,
            levels,
        )
        replies: list[str | None] = []
        for candidate in found:  # one call per thought, as the paper does
            messages = prompts.thought_messages(
                candidate.question, candidate.answer, [o.title for o in candidate.origins]
            )
            try:
                replies.append(self.ask(ctx, "thought", messages))
            except ModelError as exc:
                log.warning("thought making failed: %s", exc)
                replies.append(None)
        thread = (get_config().get("configurable") or {}).get("thread_id") or ""
        notes = thoughts.store(
            memory,
            list(zip(found, replies, strict=True)),
            novelty=ctx.memory_novelty,
            nearest_documents=lambda text: [
                Document(page_content=d["content"]) for d in self.search(ctx, text)
            ],
            thread=str(thread),
            model=ctx.model if self.llm is None else self.llm.get_name(),
        )
        runtime.stream_writer({"event": "memory", "thoughts": notes})
        return {"thoughts": notes}


def focus(ctx: Context, documents: list[dict[str, str]], targets: list[str]) -> Evidence:
    """What the model reads of the retrieved documents (context field `evidence`), and how
    well their best passage supports the step (scored only when min_support asks)."""
    from rat_agent.agent import evidence  # lazy: numpy and the HTML cleaner, for retrievals

    if not documents or (ctx.evidence == "documents" and not ctx.min_support):
        return evidence.Evidence(documents, None)
    try:
        found = evidence.select(documents, targets, ctx.evidence_tokens)
    except Exception as exc:  # the embedder failing must not cost the step its documents
        log.warning("passage selection failed, showing whole documents: %s", exc)
        return evidence.Evidence(documents, None)
    if ctx.evidence == "documents":
        return evidence.Evidence(documents, found.support)
    return found


def doc_chars(ctx: Context) -> int:
    """Whole documents are cut to doc_chars; selected passages are already within budget."""
    return ctx.doc_chars if ctx.evidence == "documents" else 10 * ctx.doc_chars + 100_000


def check_sources(nodes: RatNodes, ctx: Context) -> None:
    """Fail fast on bad retriever or memory settings, before any model call is spent.

    Methods that never retrieve (direct, cot) check only the retriever's name: building it
    would cost them time (the corpus's Qdrant client alone takes ~0.6 s to import)."""
    if nodes.retriever is None:
        check_retriever(ctx, build=ctx.retrieves())
    if ctx.memory:
        from rat_agent.memory.store import Memory  # lazy: only runs with memory need Qdrant

        try:
            Memory(ctx.memory_collection).exists()  # ConfigError: not a thought memory
        except RetrievalError as exc:  # unreachable now; each step will say so
            log.warning("%s", exc)


def recall(ctx: Context, query: str) -> tuple[list[dict[str, str]], str]:
    """memory=true: thoughts of earlier runs for a query, and a note if memory failed.

    A memory that cannot be read leaves the step to its documents rather than failing it.
    """
    if not ctx.memory or ctx.memory_k == 0:
        return [], ""
    from rat_agent.memory.store import ThoughtRetriever  # lazy, as in remember

    try:
        found = ThoughtRetriever(
            collection=ctx.memory_collection, k=ctx.memory_k, min_score=ctx.memory_min_score
        ).invoke(query)
    except ConfigError:
        raise
    except RatError as exc:
        log.warning("thought memory failed: %s", exc)
        return [], f"thought memory failed: {exc}"
    return [_as_dict(d) for d in found], ""


def _sources_event(state: State, documents: Sequence[dict[str, str]], problem: str) -> None:
    """The custom stream's "sources" event; the error handler has no runtime, hence the
    writer from the run's config."""
    get_stream_writer()(
        {
            "event": "sources",
            "step": state["index"] + 1,
            "titles": [d["title"] for d in documents],
            "error": problem,
        }
    )


def start_run(question: str, ctx: Context, **values: Any) -> dict[str, Any]:
    """What every method's first node writes: the task, the settings it ran with, and
    nothing left of an earlier run on the same thread (its steps, drafts or thoughts)."""
    return {
        "question": question,
        "drafts": [],
        "steps": [],
        "settings": asdict(ctx),
        "thoughts": [],
        **values,
    }


def question_of(state: State) -> str:
    """The run's task; an empty one is bad input, not a model error."""
    question = (state.get("question") or "").strip()
    if not question:
        raise ConfigError("the question is empty")
    return question


def reviewed_drafts(reply: Any, max_steps: int) -> list[str] | None:
    """The edited draft from a review's resume value; None keeps the draft as it was."""
    if reply is None or reply is True:
        return None
    if isinstance(reply, dict):
        if reply.get("drafts") is None:
            return None
        reply = reply["drafts"]
    if isinstance(reply, str):
        steps = parsing.split_steps(reply)
    elif isinstance(reply, list) and all(isinstance(step, str) for step in reply):
        steps = [step.strip() for step in reply]
    else:
        raise ConfigError(
            "a review must give the steps as a list of strings or a text of "
            "'STEP k:' lines, or true to accept the draft"
        )
    steps = [step for step in steps if step]
    if not steps:
        raise ConfigError("the reviewed draft has no steps: keep at least one")
    return parsing.merge_tail(steps, max_steps)


def has_next_step(state: State) -> bool:
    return state["index"] < len(state["drafts"])


def _revised(steps: Sequence[Step]) -> list[str]:
    """The plan so far: every checked step the revision kept (dropped steps are not in it)."""
    return [s["revised"] for s in steps if s["status"] != "dropped"]


def _split_prefix(reply: str, number: int) -> tuple[list[str], str]:
    """A prefix-scope reply: revisions of steps 1..number-1 and of the current step.

    When the model returns fewer steps than asked, it rewrote the current step only.
    """
    parts = parsing.split_steps(reply)
    if len(parts) >= number:
        return parts[: number - 1], "\n".join(parts[number - 1 :])
    return [], "\n".join(parts)


def _as_dict(doc: Document) -> dict[str, str]:
    meta = doc.metadata
    source = str(meta.get("source") or meta.get("url") or meta.get("id") or "")
    title = str(meta.get("title") or source or "untitled")
    kind = "thought" if meta.get("kind") == "thought" else "document"
    return {"title": title, "source": source, "content": doc.page_content, "kind": kind}


def source_of(doc: dict[str, str]) -> Source:
    snippet = shorten(doc["content"], SNIPPET_CHARS)
    kind: SourceKind = "thought" if doc.get("kind") == "thought" else "document"
    return {"title": doc["title"], "source": doc["source"], "snippet": snippet, "kind": kind}
