"""The nodes of Algorithm 1: draft_cot, to_query, retrieve, revise_step, append_next.

Each node reads only what the paper's causal formulation allows: the query and the
revision of step i see the task, the revised steps 1..i-1 and the draft of step i, never
a later draft step. Every node returns a small update, so a checkpoint after each one
holds all finished work. A plan repair extension (extension.py), where the source switches
one on, is asked at four fixed points; with none, this is the paper's loop.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.config import get_stream_writer
from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from rat_agent.agent import attest, code, layout, parsing, prompts
from rat_agent.agent.context import Context, Draft
from rat_agent.agent.extension import Drafted, Lookup, PlanRepair, domain_of, repair_for
from rat_agent.agent.model import Call, ask
from rat_agent.agent.remember import check_memory, recall
from rat_agent.agent.state import REVISE_STEP, Source, SourceKind, State, Step, StepStatus
from rat_agent.errors import ConfigError, RatError, RetrievalError, UnusableReply
from rat_agent.limits import check_question
from rat_agent.retrieval import check_retriever, get_retriever
from rat_agent.retrieval.settings import EVIDENCE_KEY, EVIDENCE_TOKENS
from rat_agent.serve.keys import check_user
from rat_agent.served import current_user
from rat_agent.text import shorten

if TYPE_CHECKING:
    from rat_agent.agent.evidence import Evidence

log = logging.getLogger(__name__)
SNIPPET_CHARS = 240
TEXT_CHARS = 2000  # a source keeps this much of what the step was shown


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context; a run started without one gets the defaults (and environment)."""
    if runtime is None or runtime.context is None:
        return Context()
    return runtime.context


class RatNodes:
    """The node functions, bound to an optional model and retriever chosen in code.

    Without overrides, each run builds (once per process, cached) the model and the
    retriever its context names, so one compiled graph serves runs with different settings.
    """

    def __init__(self, llm: BaseChatModel | None = None, retriever: BaseRetriever | None = None):
        self.llm = llm
        self.retriever = retriever

    context = staticmethod(context_of)

    def model(self, ctx: Context) -> BaseChatModel:
        """The run's chat model: the one passed to build_graph, else the context's. Every
        model call and search asks first whether a served run's user still holds a key:
        however a run started (a cron, a queued run, a resume or a fork of a checkpoint),
        a revoked user's stops there."""
        check_user(current_user())
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
        whole: bool = False,
    ) -> str:
        """One model call, tagged "rat:<call>"; with `schema`, the server enforces that JSON;
        with `whole`, a reply cut at the token limit is returned empty."""
        return ask(self.model(ctx), call, messages, schema, whole)

    def constrained(self, ctx: Context) -> bool:
        """Whether grounded revisions reply in schema-enforced JSON (reply_format)."""
        if ctx.reply_format != "auto":
            return ctx.reply_format == "json"
        from rat_agent.providers.chat import (
            LOCAL_MODELS,  # llama.cpp enforces a schema as a grammar
        )

        return self.llm is None and ctx.model in LOCAL_MODELS

    def repair(self, ctx: Context) -> PlanRepair | None:
        """The run's plan repair extension, if its settings and source switch one on."""
        return repair_for(ctx, lambda: self._domain(ctx))

    def draft_mode(self, ctx: Context) -> Draft:
        """The run's draft: "auto" is a reply for method rat, so a step of the reply a user
        would get changes only on evidence (written from the task's passages where they
        bear on it: `_draft_passages`); the paper's chain of thought for the baselines, the
        ablations, and plans (plan repair on, or the Minecraft source)."""
        if ctx.draft != "auto":
            return ctx.draft
        plans = self.repair(ctx) is not None or self._domain(ctx) == "minecraft"
        return "answer" if ctx.method == "rat" and not plans else "cot"

    def writes_answer(self, ctx: Context) -> bool:
        """Whether a final call writes the response (`output`): "auto" keeps the steps as
        the answer where plans are checked step by step, and the model's own answer, its
        parts revised, where that is the draft; it writes one elsewhere."""
        if ctx.output != "auto":
            return ctx.output == "answer"
        if self.draft_mode(ctx) in ("answer", "sourced"):
            return False
        return self._domain(ctx) != "minecraft" and ctx.repair in ("auto", "off")

    def _domain(self, ctx: Context) -> str:
        """The domain the run's source declares."""
        if self.retriever is not None:
            return domain_of(self.retriever)
        if ctx.retriever == "minecraft":
            return "minecraft"
        if ":" in ctx.retriever:  # a retriever by import path may declare one
            return domain_of(get_retriever(ctx))
        return ""

    def evidence_budget(self, ctx: Context) -> int:
        """The tokens of passages one step or retrieval shows (context field evidence_tokens)."""
        return evidence_budget(ctx, self.retriever or get_retriever(ctx))

    def _lookup(self, state: State, ctx: Context) -> Lookup:
        repair = self.repair(ctx)
        return repair.lookup(state, ctx) if repair else Lookup()

    # --- Algorithm 1 -----------------------------------------------------------------

    def draft_cot(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """T = p(.|I): a zero-shot, step-by-step draft, split into at most max_steps steps."""
        ctx = context_of(runtime)
        check_sources(self, ctx)
        question = question_of(state)

        own: list[str] = []  # draft "answer": the reply the parts are put back into
        origin = ["the model's chain of thought"]  # what the draft was written as

        def write() -> list[str]:
            mode = self.draft_mode(ctx)
            if mode in ("answer", "sourced"):
                reply, origin[0] = self._reply_draft(ctx, question, mode)
                own.append(reply)
                drafts = [p.text(own[0]) for p in layout.parts(own[0], ctx.max_steps)]
                if not drafts:
                    raise UnusableReply(
                        "the model returned an empty draft; try again or use another model"
                    )
                return drafts
            reply = self.ask(ctx, "draft", prompts.draft_messages(question, ctx.max_steps))
            steps = parsing.drop_repeats(parsing.split_steps(reply))
            drafts = parsing.merge_tail(
                [s for s in steps if parsing.says_something(s)], ctx.max_steps
            )
            if not drafts:
                raise UnusableReply(
                    "the model returned an empty draft; try again or use another model"
                )
            return drafts

        repair = self.repair(ctx)
        drafted = repair.draft(self, ctx, question, write) if repair else Drafted(write())
        runtime.stream_writer(
            {"event": "draft", "drafts": drafted.drafts, "reviewed": False, "from": origin[0]}
        )
        reply = own[0] if own and repair is None else ""
        # method "cot" stops here: the draft is the answer
        answer = (reply or parsing.format_steps(drafted.drafts)) if ctx.method == "cot" else ""
        return start_run(
            question,
            ctx,
            drafts=drafted.drafts,
            goal=drafted.goal,
            meta=list(drafted.meta),
            index=0,
            answer=answer,
            draft_reply=reply,
            draft_from=origin[0],
        )

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
        origin = state.get("draft_from", "")
        if drafts is not None:
            origin = f"a person's edit of {origin or 'the draft'}"
        runtime.stream_writer({"event": "draft", "drafts": shown, "reviewed": True, "from": origin})
        return {} if drafts is None else {"drafts": drafts, "meta": [], "draft_from": origin}

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
        lookup = self._lookup(state, ctx)
        if lookup.skip:
            return ""  # dropped unchecked: nothing to look up
        if lookup.query is not None:
            return lookup.query
        draft = lookup.target or state["drafts"][i]
        if ctx.query_mode == "text":
            return parsing.head(draft)
        # Non-causal RAT (a baseline) writes every query from the unrevised draft.
        past = state["drafts"][:i] if ctx.method == "rat_noncausal" else _revised(state["steps"])
        reply = self.ask(
            ctx, "query", prompts.query_messages(state["question"], past, draft, len(past) + 1)
        )
        return parsing.clean_query(reply) or draft  # a useless reply falls back to the step

    def retrieve(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """R_i = top-k documents for Q_i, cut to the passages closest to Q_i and T_i.
        Failures are retried by the node's retry policy."""
        ctx = context_of(runtime)
        lookup = self._lookup(state, ctx)
        if lookup.skip:
            _sources_event(state, [], "")
            return {"documents": [], "support": None, "retrieval_error": ""}
        if lookup.written is not None:  # written from that revision's sources
            titles = [{"title": s["title"]} for s in lookup.written["sources"]]
            _sources_event(state, titles, "")
            return {"documents": [], "support": None, "retrieval_error": ""}
        docs = self.search(ctx, state["query"])
        thoughts_found, problem = recall(ctx, state["query"])
        draft = lookup.target or state["drafts"][state["index"]]
        found = focus(
            ctx,
            [*docs, *map(as_dict, thoughts_found)],
            [state["query"], parsing.head(draft)],
            self.evidence_budget(ctx),
        )
        _sources_event(state, found.documents, problem)
        return {"documents": found.documents, "support": found.support, "retrieval_error": problem}

    def search(self, ctx: Context, query: str) -> list[dict[str, str]]:
        """The knowledge source's top-k documents for a query, any failure typed; only for
        a user who still holds a key (see `model`)."""
        check_user(current_user())
        retriever = self.retriever or get_retriever(ctx)
        try:
            docs = retriever.invoke(query)[: ctx.k]
        except RatError:
            raise
        except Exception as exc:  # any source's error becomes one typed, retryable error
            raise RetrievalError(f"{type(exc).__name__}: {exc}") from exc
        return [as_dict(d) for d in docs]

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

        A plan repair extension may instead drop the step, or insert the steps it needs
        before it (then this step waits, to be checked again after them).
        """
        ctx = context_of(runtime)
        i = state["index"]
        lookup = self._lookup(state, ctx)
        steps = [s.copy() for s in state["steps"]]
        documents = state.get("documents", [])
        step: Step = {
            "draft": lookup.target or state["drafts"][i],  # as the model first wrote it
            "query": state["query"],
            "sources": [source_of(d) for d in documents],
            "revised": state["drafts"][i],
            "status": "not_revised",
            "note": state.get("retrieval_error") or "",
        }
        repair = self.repair(ctx)
        if repair is not None:
            if (insert := repair.revise(self, state, runtime, step, steps, lookup)) is not None:
                return insert
        elif not documents:
            step["note"] = step["note"] or "no documents retrieved"
        elif ctx.quotes_each_step() and (parts := _parts(state, ctx)) and parts[i].code:
            self._revise_code(state, ctx, step)
        elif ctx.quotes_each_step():
            self._revise_grounded(state, ctx, step)
        else:
            self._revise_free(state, ctx, step, steps)
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
        update = {"steps": new_steps, "answer": _answer(state, ctx, new_steps)}
        if repair is not None and i + 1 == len(state["drafts"]):  # the last step
            update |= repair.finish(state, runtime, new_steps)
        return update

    def _revise_grounded(self, state: State, ctx: Context, step: Step) -> None:
        """Fills `step` from a revision that first quotes the one passage that bears on it.
        With no such passage (or a quote that is in none of them) the step is kept as
        drafted: a revision changes a step only on evidence."""
        documents = state.get("documents", [])
        number = len(_revised(state["steps"])) + 1
        as_json = self.constrained(ctx)
        messages = prompts.grounded_messages(
            state["question"],
            step["revised"],
            number,
            documents,
            doc_chars=doc_chars(ctx),
            instruction=prompts.REVISE_GROUNDED_JSON if as_json else prompts.REVISE_GROUNDED,
        )
        quotable = prompts.facts(documents, doc_chars(ctx))
        schema = prompts.revision_schema(quotable, draft=step["revised"]) if as_json else None
        reply = self.ask(ctx, "revise", messages, schema, whole=True)
        found = parsing.parse_revision(reply, number)
        if not reply:
            step["note"] = "the model's revision was empty or cut short; the draft was kept"
        elif not found.fact or not parsing.quotes(found.fact, quotable):
            step["note"] = "no passage bears on it; the draft was kept"
        elif not parsing.bears_on(found.fact, step["revised"], state["question"]):
            step["note"] = "the line it quoted is not about this step; the draft was kept"
        elif found.drop is not None or not parsing.says_something(found.step):
            step["note"] = "the model's revision was empty; the draft was kept"
        elif why := _says_other(state, step["revised"], found.step, quotable, found.fact):
            step["note"] = why
        elif why := code.unlike_within(step["revised"], found.step):  # a step holding code
            step["note"] = f"the revised code {why}; the draft was kept"
        else:
            changed = parsing.normalize(found.step) != parsing.normalize(step["revised"])
            step.update(
                {
                    "revised": found.step,
                    "fact": found.fact,
                    "status": "revised" if changed else "unchanged",
                }
            )
            return
        _refused(step, found.step, found.fact)

    def _revise_code(self, state: State, ctx: Context, step: Step) -> None:
        """A step that is a block of code, revised as a grounded step is: it changes only
        where a quoted line shows a mistake, and only into code that still reads as the
        draft's language and defines what the draft defined."""
        documents = state.get("documents", [])
        as_json = self.constrained(ctx)
        messages = prompts.grounded_messages(
            state["question"],
            step["revised"],
            len(_revised(state["steps"])) + 1,
            documents,
            doc_chars=doc_chars(ctx),
            instruction=prompts.REVISE_CODE_JSON if as_json else prompts.REVISE_CODE,
        )
        quotable = prompts.facts(documents, doc_chars(ctx))
        schema = prompts.code_schema(quotable) if as_json else None
        reply = self.ask(ctx, "revise", messages, schema, whole=True)
        found = parsing.parse_code_revision(reply)
        revised = code.rewrap(step["revised"], found.step)
        # only Python changes in a part that holds it (rewrap), and a parser holds Python
        python = code.has_python(step["revised"])
        names = not python  # in Python every call is a name
        if not reply or revised is None:
            step["note"] = "the model's revision was empty or cut short; the draft was kept"
        elif not found.fact or not parsing.quotes(found.fact, quotable):
            step["note"] = "no passage shows a mistake in it; the draft was kept"
        elif not parsing.bears_on(found.fact, step["revised"], state["question"], names):
            step["note"] = "the line it quoted is not about this code; the draft was kept"
        elif why := code.unlike(step["revised"], revised):
            step["note"] = f"the revised code {why}; the draft was kept"
        elif not python and (
            why := _says_other(state, step["revised"], revised, [found.fact], block=True)
        ):
            step["note"] = why
        else:
            changed = revised.strip() != step["revised"].strip()  # in code, marks matter
            status: StepStatus = "revised" if changed else "unchanged"
            step.update({"revised": revised, "fact": found.fact, "status": status})
            return
        _refused(step, revised or "", found.fact)

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
        call: Call = "prefix" if prefix else "revise"
        reply = parsing.clean_reply(self.ask(ctx, call, messages, whole=True))
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
            step["note"] = "the model's revision was empty or cut short; the draft was kept"

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

    def _task_passages(self, ctx: Context, question: str) -> list[dict[str, str]]:
        """The passages of the source closest to the task itself, for the written answer;
        none if the source fails (the steps are checked already)."""
        return self._task_evidence(ctx, question).documents

    def _task_evidence(self, ctx: Context, question: str) -> Evidence:
        try:
            found = self.search(ctx, question)
            return focus(ctx, found, [question], self.evidence_budget(ctx))
        except RetrievalError as exc:
            from rat_agent.agent import evidence  # lazy, as in `focus`

            log.warning("retrieval for the task failed: %s", exc)
            return evidence.Evidence([], None)

    def _reply_draft(self, ctx: Context, question: str, mode: Draft) -> tuple[str, str]:
        """The reply a draft "answer" or "sourced" is made of, with what it is and why
        (`State.draft_from`). Draft "auto" writes it from the task's passages where they
        bear on the task (sourced_support), the task holds no code block (code that a task
        starts, the model finishes better alone than from pages that bear on it loosely),
        and the source does not give every name the model's own answer uses: where it
        does, the model knew the answer, and a reply from the passages could lose it."""
        own = "the model's own answer"
        passages, why = self._draft_passages(ctx, question, mode)
        if passages is None:
            return self._reply(ctx, prompts.direct_messages(question)), why
        sourced = prompts.rag_messages(question, passages, doc_chars=doc_chars(ctx))
        if mode == "sourced":
            return self._reply(ctx, sourced), why
        answer = self._reply(ctx, prompts.direct_messages(question))
        unknown = self.unknown_name(ctx, question, answer)
        if unknown is None:
            return answer, f"{own}: the source gives every name it uses"
        return self._reply(ctx, sourced), f"{why}: {own} {unknown}"

    def _reply(self, ctx: Context, messages: list[BaseMessage]) -> str:
        return parsing.strip_thinking(self.ask(ctx, "draft", messages)).strip()

    def unknown_name(self, ctx: Context, question: str, answer: str) -> str | None:
        """Why the source does not confirm the model's own answer (None where it gives every
        name the answer uses): a name it does not give, too many names to look up, or
        none at all. A failing lookup confirms nothing."""
        given = attest.names(answer, question)
        if not given:
            return "names nothing the source could confirm"
        if len(given) > attest.LOOKUPS:
            return f"names more than {attest.LOOKUPS} things to look up"
        for name in given:
            try:
                found = self.search(ctx, name)
            except RetrievalError as exc:
                log.warning("looking up %r failed: %s", name, exc)
                return f"uses {name}, which the source failed to look up"
            if not attest.gives(name, found):
                return f"uses {name}, which the source does not give"
        return None

    def _draft_passages(
        self, ctx: Context, question: str, mode: Draft
    ) -> tuple[list[dict[str, str]] | None, str]:
        """The task's passages a reply draft may be written from (the reply rag gives), or
        None for the model's own answer alone, with what the draft is and why."""
        own = "the model's own answer"
        if mode == "answer" and ctx.draft != "auto":
            return None, own
        if mode == "answer" and code.holds_block(question):
            return None, f"{own}: the task holds a code block"
        found = self._task_evidence(ctx, question)
        match = "" if found.support is None else f" (best match {found.support:.2f})"
        sourced = f"a reply written from {len(found.documents)} passages of the source{match}"
        if found.support is None:  # no passage, or the source failed
            none = "no passage was found for the task"
            return (None, f"{own}: {none}") if mode == "answer" else ([], f"{sourced}: {none}")
        if mode == "sourced":
            return found.documents, sourced
        if found.support < ctx.sourced_support:
            why = f"the task's best passage matched {found.support:.2f}, under "
            return None, f"{own}: {why}sourced_support {ctx.sourced_support:.2f}"
        return found.documents, sourced

    def write_answer(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """For code or long writing: the final response, written from the revised steps."""
        ctx = context_of(runtime)
        steps = _revised(state["steps"]) or list(state["drafts"])  # method cot: the draft
        quoted = _quoted(state["steps"])
        if quoted and ctx.retrieves():
            quoted += self._task_passages(ctx, state["question"])
        messages = prompts.answer_messages(
            state["question"], steps, checked=bool(state["steps"]), quoted=quoted
        )
        answer = parsing.strip_thinking(self.ask(ctx, "answer", messages)).strip()
        runtime.stream_writer({"event": "answer"})
        return {"answer": answer or parsing.format_steps(steps)}


def _parts(state: State, ctx: Context) -> list[layout.Part] | None:
    """The parts of the model's own answer the draft steps are (draft "answer"); None where
    the steps are not those parts (another draft, or a person edited them)."""
    reply = state.get("draft_reply", "")
    if not reply:
        return None
    found = layout.parts(reply, ctx.max_steps)
    return found if [p.text(reply) for p in found] == state["drafts"] else None


def _answer(state: State, ctx: Context, steps: Sequence[Step]) -> str:
    """The answer so far: the model's own answer with its parts revised (draft "answer"),
    else the revised steps."""
    parts = _parts(state, ctx)
    if parts is None:
        return parsing.format_steps(_revised(steps))
    texts = [s["revised"] for s in steps] + state["drafts"][len(steps) :]
    return layout.assemble(state["draft_reply"], parts, texts)


def evidence_budget(ctx: Context, retriever: BaseRetriever | None) -> int:
    """evidence_tokens; with 0, the budget `retriever` declares for its passages, else 600."""
    if ctx.evidence_tokens:
        return ctx.evidence_tokens
    metadata = getattr(retriever, "metadata", None) or {}
    return int(metadata.get(EVIDENCE_KEY, EVIDENCE_TOKENS))


def focus(
    ctx: Context, documents: list[dict[str, str]], targets: list[str], budget: int
) -> Evidence:
    """What the model reads of the retrieved documents (context field `evidence`), within
    `budget` tokens, and how well their best passage supports the step (scored only when
    min_support asks)."""
    from rat_agent.agent import evidence  # lazy: numpy and the HTML cleaner, for retrievals

    if not documents or (ctx.evidence == "documents" and not ctx.min_support):
        return evidence.Evidence(documents, None)
    try:
        found = evidence.select(documents, targets, budget)
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
        check_memory(ctx)


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
        "draft_reply": "",
        "draft_from": "",
        **values,
    }


def question_of(state: State) -> str:
    """The run's task; an empty one is bad input, not a model error."""
    question = (state.get("question") or "").strip()
    if not question:
        raise ConfigError("the question is empty")
    return check_question(question)


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


def _says_other(
    state: State,
    draft: str,
    revised: str,
    known: Sequence[str],
    fact: str = "",
    block: bool = False,
) -> str:
    """Why a revision may not replace its draft ("" when it may): it names what neither
    the task, the draft nor `known` gives (the passages shown; for a block, the line it
    quoted), it says less than the draft did, or (prose) it says something else and takes
    nothing from `fact`, the line it quoted."""
    shown = _headers(state.get("documents", []))
    if made_up := parsing.invented(revised, state["question"], draft, *known, *shown, code=block):
        given = (
            "neither the task, the draft nor the line it quoted" if block else "no passage shown"
        )
        why = f"the revision named {', '.join(made_up)}, which {given} gives"
    elif lost := parsing.dropped(draft, revised, code=block):
        why = f"the revision left out {', '.join(lost)}, which the draft named, and named "
        why += "fewer in their place"
    elif fact and not block and parsing.new_claim(draft, revised, fact):
        why = "the revision said something other than the step and took no name or amount "
        why += "from the line it quoted"
    else:
        return ""
    return why + "; the draft was kept"


def _refused(step: Step, proposed: str, fact: str | None) -> None:
    """Keeps a revision the checks kept out beside the draft, so a user sees what the
    model proposed and the line it quoted, not only why it was not taken."""
    if proposed.strip() and proposed.strip() != step["revised"].strip():
        step["refused"] = proposed
        if fact:
            step["refused_fact"] = fact


_PATH_MARKS = re.compile(r"[/\\?#=&]+")


def _headers(documents: Sequence[dict[str, str]]) -> list[str]:
    """Each document's title and source as the revision was shown them, a path's parts as
    words of their own: a revision may name the file it read ("redis.conf")."""
    return [f"{d['title']} {d['source']} {_PATH_MARKS.sub(' ', d['source'])}" for d in documents]


def _revised(steps: Sequence[Step]) -> list[str]:
    """The plan so far: every checked step the revision kept (dropped steps are not in it)."""
    return [s["revised"] for s in steps if s["status"] != "dropped"]


def _quoted(steps: Sequence[Step]) -> list[dict[str, str]]:
    """The lines the kept steps' revisions quoted, each once, under its step's first
    source."""
    found: dict[str, dict[str, str]] = {}
    for step in steps:
        fact = step.get("fact", "")
        if fact and step["status"] != "dropped" and fact not in found:
            first = step["sources"][0] if step["sources"] else {"title": "", "source": ""}
            found[fact] = {"title": first["title"], "source": first["source"], "content": fact}
    return list(found.values())


def _split_prefix(reply: str, number: int) -> tuple[list[str], str]:
    """A prefix-scope reply: revisions of steps 1..number-1 and of the current step.

    When the model returns fewer steps than asked, it rewrote the current step only.
    """
    parts = parsing.split_steps(reply)
    if len(parts) >= number:
        return parts[: number - 1], "\n".join(parts[number - 1 :])
    return [], "\n".join(parts)


def as_dict(doc: Document) -> dict[str, str]:
    meta = doc.metadata
    source = str(meta.get("source") or meta.get("url") or meta.get("id") or "")
    title = str(meta.get("title") or source or "untitled")
    kind = "thought" if meta.get("kind") == "thought" else "document"
    return {"title": title, "source": source, "content": doc.page_content, "kind": kind}


def source_of(doc: dict[str, str]) -> Source:
    """A retrieved document as a step cites it: a snippet to show, and the text the step was
    shown, so what a step rests on can be checked (the docs benchmark's grounded keys)."""
    snippet = shorten(doc["content"], SNIPPET_CHARS)
    kind: SourceKind = "thought" if doc.get("kind") == "thought" else "document"
    return {
        "title": doc["title"],
        "source": doc["source"],
        "snippet": snippet,
        "kind": kind,
        "text": doc["content"][:TEXT_CHARS],
    }
