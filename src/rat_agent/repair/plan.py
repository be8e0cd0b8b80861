"""Plan repair: what a step needs that no earlier step made becomes a new step before it.

A revision names what its step needs. Each need the plan so far does not provide is
inserted as a draft step before the current one, and the loop checks it like any other
step, so the prerequisites of a prerequisite are found too; the current step is checked
again after them, with them in its revised past (written from its own first revision:
what it needs is checked against the longer plan). With a domain that
tracks the goal, one call names what the task asks for: the plan ends at the step that
makes it, and a plan that runs out before one does gets a step for it. A domain may also
drop draft steps its sources do not support.

`Repair` answers the loop's four questions (agent/extension.py); what a step makes, needs
and provides is its `Domain`'s business: the Minecraft plug-in's keeps a counted ledger of
recipes (rat_minecraft/repair.py), the general one reads plain words (general.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from rat_agent import parsing
from rat_agent.agent import prompts
from rat_agent.agent.context import Context, settings_of
from rat_agent.agent.extension import Drafted, Lookup, Model
from rat_agent.agent.state import DraftMeta, State, Step
from rat_agent.repair import reply
from rat_agent.repair.reply import Revision

GOAL = (
    "Name the one thing this task asks to obtain, make or achieve, in at most six words. "
    "Reply with the name only."
)

# A step is checked again after its prerequisites; it may ask for more a few times (a
# sibling used up what was made for it), but not forever.
MAX_REPAIRS = 4


@dataclass(frozen=True)
class Settings:
    """How plan repair behaves: the plug-in's own settings, not the run's."""

    repair_steps: int = 48  # the most steps one run inserts
    # A domain that drops steps (`Domain.drops`) drops a draft step whose best passage is
    # less similar to it than this (embedding cosine): the sources say nothing about it. The
    # domain sets it from its own measurements (0: none dropped).
    min_support: float = 0.0
    # A domain that tracks the goal (`Domain.goals`): steps after the one that makes it are
    # dropped unchecked (stop_at_goal), and a plan that ends before one does gets a step for
    # it (reach_goal).
    stop_at_goal: bool = True
    reach_goal: bool = True
    # A step checked again after its prerequisites, or a prerequisite inserted again for the
    # same thing, is written from the revision made before, with no retrieval and no call.
    reuse: bool = True


class Domain(Protocol):
    """What plan repair needs to know of a domain's steps."""

    goals: bool  # it can tell a step that makes the goal: the plan ends there, or reaches it
    drops: bool  # draft steps its sources do not support are dropped (min_support)

    def instruction(self, as_json: bool) -> str:
        """The revision's instruction: a quote, the step, and what the step needs."""
        ...

    def quotable(self, documents: Sequence[dict[str, str]], ctx: Context) -> list[str]: ...

    def schema(self, quotable: Sequence[str]) -> dict[str, Any]: ...

    def reply(self, found: Revision, makes: str) -> tuple[Revision, str]:
        """The parsed reply put right, and a note on what was done to it."""
        ...

    def mend(
        self, step: str, needs: Sequence[str], fact: str, makes: str
    ) -> tuple[str, list[str]]: ...

    def grounded(self, needs: Sequence[str], fact: str) -> list[str]:
        """The needs the quoted passage supports."""
        ...

    def missing(
        self,
        needs: Sequence[str],
        steps: Sequence[Step],
        waiting: Sequence[str] = (),
        step: str = "",
        fact: str = "",
    ) -> list[str]:
        """The needs no earlier step provides (`waiting`: what this step and the steps
        waiting on it make; needing one of them is a loop)."""
        ...

    def unsupported(
        self, needs: Sequence[str], step: str, fact: str, steps: Sequence[Step]
    ) -> list[str]:
        """What a draft step rests on that neither its quote nor an earlier step gives."""
        ...

    def goal_of(self, reply: str) -> str:
        """The thing a goal reply names (a domain that tracks the goal)."""
        ...

    def makes_goal(self, step: str, goal: str) -> bool: ...

    def goal_step(self, goal: str, drafts: Sequence[str]) -> int | None: ...

    def resolved(self, makes: str, steps: Sequence[Step]) -> int | None: ...

    def draft_for(self, need: str) -> str:
        """The draft of a step inserted for a need."""
        ...


class Repair:
    """Plan repair with one domain: the loop's extension (agent/extension.PlanRepair)."""

    def __init__(self, domain: Domain, settings: Settings | None = None):
        self.domain = domain
        self.settings = settings or Settings()

    # --- the draft ---------------------------------------------------------------------

    def draft(
        self, model: Model, ctx: Context, question: str, write: Callable[[], list[str]]
    ) -> Drafted:
        drafts = write()
        goals = self.domain.goals and not ctx.answer_prompt  # a plan, not notes for an answer
        if not (goals and (self.settings.stop_at_goal or self.settings.reach_goal)):
            return Drafted(drafts)
        # A plan ends where the task is done: draft steps after the first one that makes
        # what the task asks for are dropped unchecked (small models go on past the goal).
        goal = self._goal(model, ctx, question)
        last = self.domain.goal_step(goal, drafts)
        if last is None or not self.settings.stop_at_goal:
            return Drafted(drafts, goal)
        meta = [meta_at([], n) for n in range(len(drafts))]
        for n in range(last + 1, len(drafts)):
            meta[n]["drop"] = f"the task is done at draft step {last + 1}, which names {goal!r}"
        return Drafted(drafts, goal, meta)

    def _goal(self, model: Model, ctx: Context, question: str) -> str:
        messages = prompts.head_messages(ctx.system_prompt, question, GOAL)
        return self.domain.goal_of(model.ask(ctx, "goal", messages))

    # --- looking a step up ------------------------------------------------------------------

    def lookup(self, state: State, ctx: Context) -> Lookup:
        meta = meta_at(state.get("meta", []), state["index"])
        # A step checked again after its prerequisites looks up what it was for ("Get 2
        # sticks."), not its corrected text, whose inputs and tools would pull in their pages;
        # it is written from its own first revision instead: asked again
        # with the same passages, the model only rewrote the same step.
        original = meta["original"] or state["drafts"][state["index"]]
        checked = meta.get("checked") if self.settings.reuse else None
        reuse = None if checked else self._reused(state, ctx, meta)
        if checked is not None:
            query: str | None = checked["query"]
        else:  # an inserted step's draft ("Install the Y module.") names exactly what to look up
            query = parsing.head(original) if meta["makes"] else None
        return Lookup(
            skip=self._skipped(state, meta, ctx),
            query=query,
            reuse=reuse,
            written=checked or (state["steps"][reuse] if reuse is not None else None),
            target=meta["original"],
        )

    def _skipped(self, state: State, meta: DraftMeta, ctx: Context) -> str:
        """Why the step is dropped unchecked, if it is: the goal came before it, or it was
        inserted for a need that an earlier step has met since (siblings inserted together
        may each need the same tool; the first one made it)."""
        if meta["drop"]:
            return meta["drop"]
        goal = state.get("goal", "")
        if self.settings.stop_at_goal and goal:
            # A draft step that does not name the goal may be revised into the step that
            # makes it, and a small model's later steps then make it again.
            kept = [step for step in state["steps"] if step["status"] != "dropped"]
            for n, step in enumerate(kept, start=1):
                if self.domain.makes_goal(step["revised"], goal):
                    return f"the task is done at step {n}, which makes {goal!r}"
        # The goal's own step is done only by a step that makes the goal as
        # named (above), not by what the ledger takes for it.
        if (
            meta["makes"]
            and meta["makes"] != goal
            and not self.domain.missing([meta["makes"]], state["steps"])
        ):
            return f"{meta['makes']}: already made by an earlier step"
        return ""

    def _reused(self, state: State, ctx: Context, meta: DraftMeta) -> int | None:
        """The earlier step an inserted step is written from, if any."""
        if not (self.settings.reuse and meta["makes"]):
            return None
        return self.domain.resolved(meta["makes"], state["steps"])

    # --- the revision -------------------------------------------------------------------

    def revise(
        self,
        model: Model,
        state: State,
        runtime: Runtime[Context],
        step: Step,
        steps: list[Step],
        lookup: Lookup,
    ) -> dict[str, Any] | None:
        meta = meta_at(state.get("meta", []), state["index"])
        documents = state.get("documents", [])
        support = state.get("support")
        if meta["makes"]:
            step["makes"] = meta["makes"]
        if lookup.skip:
            step.update({"revised": "", "status": "dropped", "note": lookup.skip})
        elif not documents and lookup.written is None:
            step["note"] = step["note"] or "no documents retrieved"
        elif (
            self.domain.drops
            and support is not None
            and support < self.settings.min_support
            and not (meta["makes"] or meta["repairs"])
        ):  # a prerequisite is needed by definition
            step.update(
                {
                    "revised": "",
                    "status": "dropped",
                    "note": f"no passage supports it (best match {support:.2f} < "
                    f"min_support {self.settings.min_support:g})",
                }
            )
        elif (insert := self._revise(model, state, runtime, step, steps, meta, lookup)) is not None:
            return insert
        if meta["makes"] and step["status"] in ("revised", "unchanged"):
            step["status"] = "inserted"
            step["note"] = "; ".join(n for n in (meta["reason"], step["note"]) if n)
        return None

    def _revise(
        self,
        model: Model,
        state: State,
        runtime: Runtime[Context],
        step: Step,
        steps: list[Step],
        meta: DraftMeta,
        lookup: Lookup,
    ) -> dict[str, Any] | None:
        """Fills `step` from a revision that quotes its source; returns the update that
        inserts steps for the needs no earlier step provides, else None."""
        ctx = settings_of(state, runtime)
        draft = state["drafts"][state["index"]]
        number = len(_revised(steps)) + 1
        documents = state.get("documents", [])
        if lookup.written is not None:
            before = lookup.written
            found = Revision(
                step=before["revised"], fact=before["fact"], needs=before.get("needs", [])
            )
            why = (
                f"written as step {lookup.reuse + 1} was, from its quote"
                if lookup.reuse is not None
                else before["note"]  # its own revision, checked again
            )
            step["sources"] = before["sources"]
        else:
            as_json = model.constrained(ctx)
            messages = reply.grounded_messages(
                ctx.system_prompt,
                state["question"],
                draft,
                number,
                documents,
                instruction=self.domain.instruction(as_json),
            )
            schema = self.domain.schema(self.domain.quotable(documents, ctx)) if as_json else None
            begun = reply.begun(schema) if schema and model.prefills(ctx) else None
            if begun is not None:  # the quote is fixed: sent as the reply's start
                messages = [*messages, AIMessage(begun.prefix)]
                text = begun.joined(model.ask(ctx, "revise", messages, grammar=begun.grammar))
            else:
                text = model.ask(ctx, "revise", messages, schema)
            found, why = self.domain.reply(reply.parse_revision(text, number), meta["makes"])
        step["note"] = step["note"] or why
        if found.drop is not None:
            step.update(
                {"revised": "", "status": "dropped", "note": found.drop, "fact": found.fact}
            )
            return None
        if not parsing.says_something(found.step):
            step["note"] = step["note"] or "the model's revision was empty; the draft was kept"
            return None
        text, needs = self.domain.mend(found.step, found.needs, found.fact, meta["makes"])
        step.update({"revised": text, "fact": found.fact, "needs": needs})
        changed = parsing.normalize(text) != parsing.normalize(step["draft"])
        step["status"] = "revised" if changed else "unchanged"
        # a prerequisite is needed by definition; a step of the draft is not
        lacking = [] if meta["makes"] else self.domain.unsupported(needs, text, found.fact, steps)
        if lacking:
            step.update(
                {
                    "revised": "",
                    "status": "dropped",
                    "note": f"it needs {', '.join(lacking)}, which its sources do not "
                    f"name and no earlier step made (it was: {text!r})",
                }
            )
            return None
        if meta["repairs"] >= MAX_REPAIRS:
            return None
        waiting = [meta["makes"], *meta["chain"]]
        absent = self.domain.missing(
            self.domain.grounded(needs, found.fact), steps, waiting, text, found.fact
        )
        room = self.settings.repair_steps - inserted_count(state.get("meta", []), steps)
        if absent and room > 0:
            return self._insert(state, runtime, step, absent[:room])
        return None

    def _insert(
        self, state: State, runtime: Runtime[Context], step: Step, needs: list[str]
    ) -> dict[str, Any]:
        """Draft steps for `needs` go before step i, which waits, corrected.

        Nothing is appended to `steps`, so append_next keeps the index on the first
        inserted step; step i is checked again once its prerequisites are.
        """
        i = state["index"]
        drafts = list(state["drafts"])
        meta = [meta_at(state.get("meta", []), n) for n in range(len(drafts))]
        reason = f"needed by: {step['revised']}"
        chain = [m for m in (meta[i]["makes"], *meta[i]["chain"]) if m]
        added: list[DraftMeta] = [
            {**meta_at([], 0), "makes": need, "reason": reason, "chain": chain} for need in needs
        ]
        texts = [self.domain.draft_for(need) for need in needs]
        current: DraftMeta = {
            **meta[i],
            "repairs": meta[i]["repairs"] + 1,
            "original": meta[i]["original"] or state["drafts"][i],
            "checked": step,
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

    # --- the end of the plan -------------------------------------------------------------

    def finish(self, state: State, runtime: Runtime[Context], steps: list[Step]) -> dict[str, Any]:
        """A plan whose steps ran out before one made the goal gets a step for
        it, checked as a prerequisite is (a draft may stop short of the goal). Once a run.
        Appended by revise_step, as insertions are, so the checkpoint before the new step
        already holds its draft (time travel forks there)."""
        goal = state.get("goal", "")
        old = state.get("meta", [])
        reason = f"the plan ended before a step made {goal!r}"
        if (
            not (self.settings.reach_goal and goal)
            or any(m["reason"] == reason for m in old)
            or any(
                self.domain.makes_goal(s["revised"], goal)
                for s in steps
                if s["status"] != "dropped"
            )
            or self.settings.repair_steps - inserted_count(old, steps) <= 0
        ):
            return {}
        text = self.domain.draft_for(goal)
        meta = [meta_at(old, n) for n in range(len(state["drafts"]))]
        meta.append({**meta_at([], 0), "makes": goal, "reason": reason})
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


def meta_at(meta: Sequence[DraftMeta], index: int) -> DraftMeta:
    """The notes on draft step `index`; a step of the model's own draft has none."""
    if index < len(meta):
        return meta[index]
    return {"makes": "", "reason": "", "repairs": 0, "original": "", "drop": "", "chain": []}


def inserted_count(meta: Sequence[DraftMeta], steps: Sequence[Step] = ()) -> int:
    """The steps repair has inserted, less those dropped unchecked because a sibling met
    their need since: they cost no model call, so they take none of the budget."""
    unchecked = sum(
        1 for s in steps if s.get("makes") and s["status"] == "dropped" and "fact" not in s
    )
    return sum(1 for m in meta if m["makes"]) - unchecked


def _revised(steps: Sequence[Step]) -> list[str]:
    return [s["revised"] for s in steps if s["status"] != "dropped"]
