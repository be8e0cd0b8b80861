"""The revision benchmark (`rat eval --benchmark revision`): what one revision does to a step.

Each case is one call of the loop's revision, made as `revise_step` makes it (the same
prompt, reply parsing and settings): a task, the steps revised before it, one draft step and
the documents a search returned, with the truth known (eval/revisions/*.json, built from
third-party manuals and Python's documentation by benchmarks/revision_cases.py):

- agree: the step is right and the documents say so: a revision must keep it;
- fix: the step has one wrong value or name and the documents hold the right one: it must
  fix it;
- unrelated: the step is right and no document bears on it: it must keep it.

A revision keeps or fixes a step when it names the right value and not the wrong one
(values as words, code names as called or quoted: `len(`, `len`), so a reply that hedges
between both counts as neither. It breaks a right step when it no longer names its value,
or names the wrong one. End-to-end sets move five points an answer; here one call is one
case, so hundreds of them give fix and break rates with narrow intervals.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache, partial
from itertools import zip_longest
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from rat_agent.errors import ConfigError
from rat_agent.eval.benchmark import Benchmark, Selection
from rat_agent.eval.runner import Case, Result, Score, Scorer

FOLDER = Path(__file__).parent / "revisions"
KINDS = ("agree", "fix", "unrelated")


@cache
def load_cases() -> tuple[dict[str, Any], ...]:
    """Every case, the sources taken in turn a subject at a time (its agree, fix and
    unrelated cases together, which share a prompt's start for the server's cache), so
    that the first N cases of a run span every source."""
    sources = [json.loads(p.read_text())["cases"] for p in sorted(FOLDER.glob("*.json"))]
    subjects = [
        [cases[i : i + len(KINDS)] for i in range(0, len(cases), len(KINDS))] for cases in sources
    ]
    return tuple(c for row in zip_longest(*subjects) for group in row if group for c in group)


def source_of(case_id: str) -> str:
    return case_id.split("-", 1)[0]


def kind_of(case_id: str) -> str:
    return case_id.rsplit("-", 1)[1]


def cases(selection: Selection) -> list[Case]:
    if selection.split is not None or selection.exclude or selection.samples > 1:
        raise ConfigError("--split, --exclude and --samples are not for the revision benchmark")
    return [Case(c["id"], c["task"], {"case": c}) for c in load_cases()[: selection.tasks]]


def _said(text: str, value: str, code: bool) -> bool:
    """Whether a step names a value: as a word, or for code a name called or quoted."""
    name = re.escape(value.split(".")[-1])
    if code:
        return re.search(rf"(?<!\w){name}\s*\(|`[\w.]*{name}`", text) is not None
    return re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text, re.IGNORECASE) is not None


def outcome(case: Mapping[str, Any], revised: str) -> str:
    """kept, fixed, left wrong, broken or dropped: what the revision did to the step."""
    code = case["id"].startswith("python-")
    right, wrong = _said(revised, case["right"], code), _said(revised, case["wrong"], code)
    if case["kind"] == "fix":
        return "fixed" if right and not wrong else "left wrong" if wrong else "dropped"
    return "kept" if right and not wrong else "broken"


def score(case: Case, answer: str) -> Score:
    what = outcome(case.key["case"], answer)
    return Score(1.0 if what in ("kept", "fixed") else 0.0, None, what)


# A verdict first: a step that stands costs one word, not the step written out again. On
# this benchmark the model then kept every step (docs/benchmarks.md), so no profile uses it.
REVISE_VERDICT = (
    "Check the current step against the documents. If they show it is wrong, or that it "
    "misses a detail the task needs, reply with the corrected step only, without its 'STEP' "
    "label. If the step is right, or the documents do not bear on it, reply KEEP and "
    "nothing else."
)


def invoke(case: Case, settings: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
    """One revision, as the loop's revise_step makes it: its prompt, call and parsing. A
    revise_prompt of "paper" or "verdict" is the paper's instruction or REVISE_VERDICT."""
    from rat_agent import parsing
    from rat_agent.agent import prompts
    from rat_agent.agent.context import Context
    from rat_agent.providers.call import ask
    from rat_agent.providers.chat import get_chat_model
    from rat_agent.providers.profiles import profile_of

    ctx = Context(**settings)
    data = case.key["case"]
    floor = profile_of(ctx.model).bearing_floor
    if floor and bearing(data) < floor:  # as revise_step: kept, without the call
        return {"answer": data["step"], "changed": False}
    model = get_chat_model(ctx.model, temperature=ctx.temperature, max_tokens=ctx.max_tokens)
    revisions = {"paper": prompts.REVISE, "verdict": REVISE_VERDICT}
    messages = prompts.revise_messages(
        ctx.system_prompt,
        revisions.get(UNSURE.get(ctx.revise_prompt, ctx.revise_prompt), ctx.revise_prompt),
        data["task"],
        data["revised"],
        data["step"],
        data["documents"],
    )
    if ctx.revise_prompt in UNSURE:  # the verdict's first token only, and its probability
        return _unsure(model.with_config(config), messages, data["step"])
    reply = ask(model.with_config(config), "revise", messages, whole=True)  # type: ignore[arg-type]
    shown = partial(prompts.shown, data["documents"]) if profile_of(ctx.model).grounded else None
    text, changed, _ = parsing.revision(reply, data["step"], len(data["revised"]) + 1, shown)
    return {"answer": data["step"] if text is None else text, "changed": changed}


def bearing(data: dict[str, Any]) -> float:
    """How well the case's best passage matches its step, as the loop's retrieval scores it
    (retrieval.evidence; the step stands in for the query a run also scores against)."""
    from rat_agent.retrieval.evidence import select
    from rat_agent.retrieval.settings import EVIDENCE_TOKENS

    support = select(data["documents"], [data["step"]], EVIDENCE_TOKENS).support
    return 1.0 if support is None else support


# Arms that keep the step and measure how sure the model is that it stands: the chance of
# KEEP as the first token of the verdict instruction's reply. benchmarks/revision_sweep.py
# joins it with the paper arm's revision of the same case: revise only where the model is
# unsure of its step, as iRAT does, at every threshold.
UNSURE = {"verdict-p": "verdict"}


def _unsure(model: Any, messages: list[Any], step: str) -> dict[str, Any]:
    reply = model.invoke(messages, logprobs=True, top_logprobs=10, max_completion_tokens=1)
    first = (reply.response_metadata.get("logprobs") or {}).get("content") or [{}]
    keep = sum(
        math.exp(option["logprob"])
        for option in first[0].get("top_logprobs", [])
        if option["token"].strip() and "KEEP".startswith(option["token"].strip().upper())
    )
    return {"answer": step, "measured": {"p_keep": round(keep, 6)}}


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a rate (sound at 0 and at n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{hits}/{n} = {hits / n:.0%} [{low:.0%}, {high:.0%}]" if n else "-"


def report(results: Sequence[Result]) -> str:
    """Fix, break and keep rates with 95% intervals, per arm and per source."""
    arms: dict[str, list[Result]] = {}
    for r in results:
        arms.setdefault(r.method, []).append(r)
    lines = [
        "What the revision did, per arm (95% Wilson intervals): fixed = a wrong step made "
        "right; broken = a right step no longer right (agree and unrelated cases together); "
        "kept = a right step left right.",
        "",
        "| arm | source | fixed | broken | kept, documents agree | kept, documents unrelated |",
        "|---|---|---|---|---|---|",
    ]
    for arm, mine in arms.items():
        sources = sorted({source_of(r.task) for r in mine})
        for source in ["all", *sources]:
            rows = [r for r in mine if source in ("all", source_of(r.task))]
            by = {k: [r for r in rows if kind_of(r.task) == k] for k in KINDS}
            right = by["agree"] + by["unrelated"]
            lines.append(
                f"| {arm} | {source} | "
                f"{rate(sum(r.reason == 'fixed' for r in by['fix']), len(by['fix']))} | "
                f"{rate(sum(r.reason == 'broken' for r in right), len(right))} | "
                f"{rate(sum(r.reason == 'kept' for r in by['agree']), len(by['agree']))} | "
                f"{rate(sum(r.reason == 'kept' for r in by['unrelated']), len(by['unrelated']))} |"
            )
    return "\n".join(lines)


def _load(selection: Selection, context: Mapping[str, Any]) -> tuple[list[Case], Scorer]:
    return cases(selection), score


BENCHMARK = Benchmark(
    "revision",
    "Revisions: what one revision fixes and breaks",
    "right after revision",
    "the step names its right value and not the wrong one after one revision "
    "(rat_agent.eval.revision.outcome)",
    _load,
    report=report,
    invoke=invoke,
    methods=("rat",),
)
