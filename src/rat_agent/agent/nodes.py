"""The nodes of Algorithm 1: draft_cot, to_query, retrieve, revise_step, append_next.

Each node reads only what the paper's causal formulation allows: the query and the
revision of step i see the task, the revised steps 1..i-1 and the draft of step i, never
a later draft step. The model's revision is the step; a reply that is empty or cut off
keeps the draft, and the step says so. Every node returns a small update, so a checkpoint
after each one holds all finished work. A plan repair extension (extension.py), where the
source switches one on, is asked at four fixed points; with none, this is the paper's loop.

Each node is a body that yields what it waits on (`aio.Wait`): `invoke` makes each wait in
turn, `ainvoke` awaits the model and the source, so a served run holds no thread while it
waits. A plug-in's hooks are sync, and run in a thread when awaited.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import asdict, replace
from functools import partial
from typing import Any, NamedTuple, cast

from langchain_core.messages import BaseMessage
from langgraph.config import get_stream_writer
from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from rat_agent import parsing
from rat_agent.agent import prompts
from rat_agent.agent.context import Context, Draft, context_of, settings_of
from rat_agent.agent.extension import (
    Drafted,
    Lookup,
    PlanRepair,
    domain_of,
    repair_for,
    repair_loaded,
    resolve_repair,
)
from rat_agent.agent.remember import check_memory, recall
from rat_agent.agent.speculate import look_ahead
from rat_agent.agent.state import REVISE_STEP, Found, Source, SourceKind, State, Step, revised
from rat_agent.ahead import key_of
from rat_agent.aio import Body, Wait, ready, run
from rat_agent.chat import new_turn, question_of, turns_of
from rat_agent.errors import ConfigError, RetrievalError, UnusableReply
from rat_agent.limits import check_question
from rat_agent.providers.profiles import PAPER, profile_of
from rat_agent.retrieval import check_retriever, get_retriever
from rat_agent.retrieval.settings import DRAFT_KEY, DRAFTS
from rat_agent.served import current_user
from rat_agent.services import Services, as_dict
from rat_agent.text import shorten

log = logging.getLogger(__name__)
SNIPPET_CHARS = 240
TEXT_CHARS = 2000  # a source keeps this much of what the step was shown
KEPT = "the draft was kept"
ANSWERS = ("direct", "rag")  # drafts that are a method's answer, so the response
SOURCED = ("sourced", "rag")  # drafts written from the task's passages
CHANGED = ("revised", "inserted")  # else a step stands as drafted, word for word


class Written(NamedTuple):
    """A draft as `_write` made it: its steps, its origin in words, the passages shown."""

    drafts: list[str]
    origin: str
    passages: list[dict[str, str]]


class RatNodes(Services):
    """The node functions, bound to an optional model and retriever chosen in code
    (services.py: how a node reaches the model and the source)."""

    settings = staticmethod(settings_of)

    def repair(self, ctx: Context) -> PlanRepair | None:
        """The run's plan repair extension, if its resolved settings switch one on."""
        return repair_for(ctx)

    def domain(self, ctx: Context) -> str:
        """The domain the run's source declares (its metadata), "" for none."""
        return domain_of(self.retriever or get_retriever(ctx))

    def declared_draft(self, ctx: Context) -> Draft | None:
        """The draft the source declares for its tasks (its metadata), None for none."""
        declared = self.declared(ctx).get(DRAFT_KEY)
        return cast(Draft, declared) if declared in DRAFTS else None

    def resolve(self, ctx: Context) -> Context:
        """The run's choices, once, at its start: each "auto" is the model's profile
        (providers/profiles.py) or the paper's default, plan repair is the source's domain's
        (if one is installed), and the steps are the response where plan repair makes a plan
        (an empty answer prompt). An answer's draft is the one the source declares, else the
        profile's, as are its queries; a plan, and method cot, as the paper."""
        profile = profile_of(ctx.model) if self.llm is None else PAPER
        repair = resolve_repair(ctx.repair, ctx.method, lambda: self.domain(ctx))
        plan = repair != "off" and ctx.answer_prompt == prompts.ANSWER
        answer = ctx.answer_prompt if not plan else ""
        draft = ctx.draft
        if draft == "auto":
            declared = self.declared_draft(ctx) if answer and ctx.retrieves() else None
            draft = declared or (profile.draft if answer else "") or "cot"
            if ctx.method == "cot" and draft in ANSWERS:  # that baseline is a chain of thought
                draft = "cot"
        by_text = ctx.query_prompt == prompts.QUERY and draft in ANSWERS and profile.query_by_text
        query = "" if by_text else ctx.query_prompt
        return replace(ctx, repair=repair, answer_prompt=answer, draft=draft, query_prompt=query)

    def lookup(self, state: State, ctx: Context) -> Wait[Lookup]:
        """How plan repair looks the step up (a plug-in's hook: in a thread when awaited)."""
        repair = self.repair(ctx)
        return Wait(lambda: repair.lookup(state, ctx)) if repair else ready(Lookup())

    def settled(self, state: State, runtime: Runtime[Context]) -> Wait[Context]:
        """The run's settings (`settings_of`), its plan repair loaded: loading a plug-in
        imports it, which blocks, so when awaited the first load is in a thread."""

        def settle() -> Context:
            ctx = settings_of(state, runtime)
            self.repair(ctx)
            return ctx

        async def asettle() -> Context:
            ctx = settings_of(state, runtime)
            return ctx if repair_loaded(ctx) else await asyncio.to_thread(settle)

        return Wait(settle, asettle)

    # --- Algorithm 1 -----------------------------------------------------------------

    def start(self, runtime: Runtime[Context]) -> Wait[Context]:
        """The run's settings resolved, its sources checked: building a source may block."""

        def start() -> Context:
            ctx = check_sources(self, self.resolve(context_of(runtime)))
            self.repair(ctx)  # loaded here, off the event loop
            return ctx

        return Wait(start)

    def task(self, state: State, ctx: Context) -> Body[tuple[str, dict[str, Any]]]:
        """The run's question, and what it adds to the chat: a `question` input becomes
        the chat's next message; a chat's follow-up is rewritten to stand alone (one call),
        so every method, search and prompt after it reads one question."""
        question = question_of(state)
        turns = turns_of(state)
        if (added := new_turn(state, question)) or not turns:
            return question, added
        prompt = prompts.standalone_messages(ctx.system_prompt, turns, question)
        rewritten = parsing.clean_query((yield self.asking(ctx, "standalone", prompt)))
        return check_question(rewritten) if rewritten else question, {}

    def draft_cot(self, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
        """T = p(.|I): a zero-shot, step-by-step draft, split into at most max_steps steps."""
        ctx = yield self.start(runtime)
        question, chat = yield from self.task(state, ctx)
        written = [Written([], "the model's chain of thought", [])]
        repair = self.repair(ctx)
        if repair:

            def write() -> list[str]:  # the plug-in's hooks are sync: in a thread when awaited
                written.append(run(self._write(ctx, question)))
                return written[-1].drafts

            drafted = yield Wait(lambda: repair.draft(self, ctx, question, write))
        else:
            written.append((yield from self._write(ctx, question)))
            drafted = Drafted(written[-1].drafts)
        origin, passages = written[-1].origin, written[-1].passages
        runtime.stream_writer(
            {"event": "draft", "drafts": drafted.drafts, "reviewed": False, "from": origin}
        )
        # method "cot" stops here: the draft is the answer
        answer = parsing.format_steps(drafted.drafts) if ctx.method == "cot" else ""
        return start_run(
            question,
            ctx,
            **chat,
            drafts=drafted.drafts,
            goal=drafted.goal,
            meta=list(drafted.meta),
            index=0,
            answer=answer,
            draft_from=origin,
            passages=passages,
        )

    def _write(self, ctx: Context, question: str) -> Body[Written]:
        passages: list[dict[str, str]] = []  # the task's, for the answer too
        shown = ""
        if ctx.draft in SOURCED:
            passages = yield Wait(lambda: self._task_passages(ctx, question))
            shown = f" written from {len(passages)} passages"
        if ctx.draft in ANSWERS:  # that method's own prompt: its answer, a paragraph a step
            origin = f"method {ctx.draft}'s answer{shown}"
            messages = (
                prompts.rag_messages(ctx.system_prompt, question, passages)
                if ctx.draft == "rag"
                else prompts.direct_messages(ctx.system_prompt, question)
            )
            drafts = parsing.paragraphs((yield self.asking(ctx, "draft", messages)), ctx.max_steps)
        else:
            messages = prompts.draft_messages(
                ctx.system_prompt, ctx.draft_prompt, question, ctx.max_steps, passages
            )
            steps = parsing.drop_repeats(
                parsing.split_steps((yield self.asking(ctx, "draft", messages)))
            )
            drafts = [s for s in steps if parsing.says_something(s)]
            drafts = parsing.merge_tail(drafts, ctx.max_steps)
            origin = f"a chain of thought{shown}" if shown else "the model's chain of thought"
        if not drafts:
            raise UnusableReply("the model returned an empty draft; try again or use another model")
        return Written(drafts, origin, passages)

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
                drafts = parsing.reviewed(reply, settings_of(state, runtime).max_steps)
                break
            except ConfigError as exc:
                payload = {**payload, "error": str(exc)}
        shown = state["drafts"] if drafts is None else drafts
        origin = state.get("draft_from", "")
        if drafts is not None:
            origin = f"a person's edit of {origin or 'the draft'}"
        runtime.stream_writer({"event": "draft", "drafts": shown, "reviewed": True, "from": origin})
        return {} if drafts is None else {"drafts": drafts, "meta": [], "draft_from": origin}

    def to_query(self, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
        """Q_i = ToQuery(I, T*_1..i-1, T_i); the steps after it start ahead (`speculate`)."""
        ctx = yield self.settled(state, runtime)
        yield look_ahead(self, state, ctx)
        query = yield from self.query(state, ctx)
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

    def query(self, state: State, ctx: Context) -> Body[str]:
        """The query for the current step; "" for a step dropped unchecked."""
        lookup: Lookup = yield self.lookup(state, ctx)
        if lookup.skip:
            return ""  # dropped unchecked: nothing to look up
        if lookup.query is not None:
            return lookup.query
        draft = lookup.target or state["drafts"][state["index"]]
        if not ctx.query_prompt:  # the step's own text is the query
            return parsing.head(draft)
        messages = prompts.query_messages(
            ctx.system_prompt, ctx.query_prompt, state["question"], revised(state["steps"]), draft
        )
        reply = yield self.asking(ctx, "query", messages)
        return parsing.clean_query(reply) or parsing.head(draft)  # no query in it: the step

    def retrieve(self, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
        """R_i = top-k documents for Q_i, cut to the passages closest to Q_i and T_i, and
        with memory on, the thoughts of earlier runs closest to Q_i. Failures are retried
        by the node's retry policy."""
        ctx = yield self.settled(state, runtime)
        lookup = yield self.lookup(state, ctx)
        if lookup.skip or lookup.written:  # dropped; or written from that revision's sources
            written = lookup.written["sources"] if lookup.written else []
            _sources_event(state, [{"title": s["title"]} for s in written], "")
            return {"documents": [], "support": None, "retrieval_error": ""}
        draft = lookup.target or state["drafts"][state["index"]]
        query = state["query"]
        documents, support, problem = yield self.found(ctx, query, [query, parsing.head(draft)])
        _sources_event(state, documents, problem)
        return {"documents": documents, "support": support, "retrieval_error": problem}

    def found(self, ctx: Context, query: str, targets: list[str]) -> Wait[Found]:
        """R_i: the passages of the top-k documents closest to `targets`, the thoughts of
        earlier runs (memory on), how well the best passage matches, and what went wrong
        with the memory. Under an event loop the source and the memory are read at once."""
        source = [id(self.retriever), ctx.retriever, ctx.collection, ctx.k]
        memory = [ctx.memory, current_user()]
        key = key_of("found", source, memory, query, targets)

        def make() -> Found:
            found = self.passages(ctx, self.search(ctx, query), targets)
            thoughts, problem = recall(ctx, query)
            return [*found.documents, *map(as_dict, thoughts)], found.support, problem

        async def amake() -> Found:
            documents, (thoughts, problem) = await asyncio.gather(
                self.asearch(ctx, query), asyncio.to_thread(recall, ctx, query)
            )
            found = await asyncio.to_thread(self.passages, ctx, documents, targets)
            return [*found.documents, *map(as_dict, thoughts)], found.support, problem

        return Wait(partial(self.ahead.call, key, make), partial(self.ahead.acall, key, amake))

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

    def revise_step(self, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
        """T*_i = p(.|I, T*_1..i-1, T_i, R_i); the revision replaces the draft step.

        A plan repair extension may instead drop the step, or insert the steps it needs
        before it (then this step waits, to be checked again after them).
        """
        ctx = yield self.settled(state, runtime)
        i = state["index"]
        lookup = yield self.lookup(state, ctx)
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
            insert = yield Wait(lambda: repair.revise(self, state, runtime, step, steps, lookup))
            if insert is not None:
                return cast(dict[str, Any], insert)
        elif not documents:
            step["note"] = f"{step['note'] or 'no documents retrieved'}; {KEPT}"
        elif self.unrelated(state, ctx):
            step["note"] = f"no passage bears on it (best match {state['support']:.2f}); {KEPT}"
        else:
            yield from self._revise(state, ctx, step)
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
        answer = checked(new_steps, state["drafts"]) if ctx.draft in ANSWERS else ""
        update = {"steps": new_steps, "answer": answer or parsing.format_steps(revised(new_steps))}
        if repair is not None and i + 1 == len(state["drafts"]):  # the last step
            update |= yield Wait(lambda: repair.finish(state, runtime, new_steps))
        return update

    def _revise(self, state: State, ctx: Context, step: Step) -> Body[None]:
        """The paper's revision: the model's reply is the step. A reply of KEEP keeps it as
        drafted (a step that stands costs one word to say so, not the step written out
        again); only a reply with nothing in it, or one the token limit cut short, keeps
        the draft otherwise."""
        number = len(revised(state["steps"])) + 1
        messages = self.revise_messages(state, ctx, step["revised"])
        reply = yield self.asking(ctx, "revise", messages, whole=True)
        documents = state.get("documents", [])
        shown = partial(prompts.shown, documents) if self.grounded(ctx) else None
        text, changed, lacks = parsing.revision(reply, step["revised"], number, shown)
        if text is None:
            step["note"] = f"the model's revision was empty or cut short; {KEPT}"
        elif lacks:
            words = ", ".join(lacks[:5])
            step["note"] = f"the revision added words the closest document lacks ({words}); {KEPT}"
            step["status"] = "unchanged"
        else:
            step["revised"], step["status"] = text, "revised" if changed else "unchanged"

    def unrelated(self, state: State, ctx: Context) -> bool:
        """Whether no document bears on the step: its best passage matches less than the
        model's floor (thoughts from memory are not scored, so they are always read)."""
        support, floor = state.get("support"), self.bearing_floor(ctx)
        if not floor or support is None:
            return False
        return support < floor and all(d.get("kind") != "thought" for d in state["documents"])

    def revise_messages(self, state: State, ctx: Context, draft: str) -> list[BaseMessage]:
        return prompts.revise_messages(
            ctx.system_prompt,
            ctx.revise_prompt,
            state["question"],
            revised(state["steps"]),
            draft,
            state.get("documents", []),
        )

    def append_next(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Move to T_i+1; the per-step scratch fields are cleared.

        After a plan repair nothing was appended, and the index stays on the first inserted
        step: one finished step per draft position, so `len(steps)` is always `index`.
        """
        return {
            "index": len(state["steps"]),
            "query": "",
            "documents": [],
            "support": None,
            "retrieval_error": "",
        }

    def write_answer(self, state: State, runtime: Runtime[Context]) -> Body[dict[str, Any]]:
        """The response, written from the revised steps (method cot: from
        its unchecked draft) and, with draft "sourced", the passages the draft was shown; an
        answer draft's checked paragraphs, with no call."""
        ctx = settings_of(state, runtime)
        if ctx.draft in ANSWERS:  # the draft was the response: its checked paragraphs are
            runtime.stream_writer({"event": "answer"})
            return {"answer": checked(state["steps"], state["drafts"])}
        steps = revised(state["steps"]) or list(state["drafts"])
        messages = prompts.answer_messages(
            ctx.system_prompt,
            ctx.answer_prompt,
            state["question"],
            steps,
            checked=bool(state["steps"]),
            passages=state.get("passages") or [],
        )
        answer = parsing.strip_thinking((yield self.asking(ctx, "answer", messages))).strip()
        runtime.stream_writer({"event": "answer"})
        return {"answer": answer or parsing.format_steps(steps)}

    def _task_passages(self, ctx: Context, question: str) -> list[dict[str, str]]:
        """The passages of the source closest to the task itself (draft "sourced"); none if
        the source fails, as the draft can be written without them."""
        try:
            found = self.search(ctx, question)
        except RetrievalError as exc:
            log.warning("retrieval for the task failed: %s", exc)
            return []
        return self.passages(ctx, found, [question]).documents


def check_sources(nodes: RatNodes, ctx: Context) -> Context:
    """Fail fast on bad retriever or memory settings, before any model call is spent.

    Methods that never retrieve (direct, cot) check only the retriever's name: building it
    would cost them time (the corpus's Qdrant client alone takes ~0.6 s to import)."""
    if nodes.retriever is None:
        check_retriever(ctx, build=ctx.retrieves())
    if ctx.memory:
        check_memory(ctx)
    return ctx


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
    """What every method's first node writes: the task, the settings it runs with (its
    choices resolved), and nothing left of an earlier run on the same thread."""
    return {
        "question": question,
        "drafts": [],
        "steps": [],
        "settings": asdict(ctx),
        "thoughts": [],
        "draft_from": "",
        "passages": [],
        **values,
    }


def checked(steps: list[Step], drafts: list[str]) -> str:
    """An answer draft as checked so far: revised paragraphs in place of their drafts, the
    others word for word, the rest as drafted (a stopped run has it whole)."""
    kept = [s["revised"] if s["status"] in CHANGED else s["draft"] for s in steps]
    kept = [k for k, s in zip(kept, steps, strict=True) if s["status"] != "dropped"]
    return "\n\n".join(kept + drafts[len(steps) :] or drafts)


def source_of(doc: dict[str, str]) -> Source:
    """A retrieved document as a step cites it: a snippet to show, and the text the step was
    shown, so what a step rests on can be checked."""
    snippet = shorten(doc["content"], SNIPPET_CHARS)
    kind: SourceKind = "thought" if doc.get("kind") == "thought" else "document"
    return {
        "title": doc["title"],
        "source": doc["source"],
        "snippet": snippet,
        "kind": kind,
        "text": doc["content"][:TEXT_CHARS],
    }
