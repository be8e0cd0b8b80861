"""The revision benchmark: its cases (keys checked against their sources, several sources
and code), what it counts as fixed, kept and broken, and `rat eval --benchmark revision`
end to end with deterministic fake models."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from rat_agent import cli
from rat_agent.eval import revision

ROOT = Path(__file__).resolve().parents[2]


def test_there_are_hundreds_of_cases_over_three_manuals_and_code_each_key_checked() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from revision_cases import check

    cases = revision.load_cases()
    assert len(cases) >= 300
    sources = Counter(revision.source_of(c["id"]) for c in cases)
    assert {"systemd", "openssh", "git", "python"} <= set(sources)
    for case in cases:
        check(case)  # the right value in its own passage, the wrong one not a default there
    # every subject gives the three cases, with one right and one wrong value
    by_subject: dict[str, set[str]] = {}
    for case in cases:
        by_subject.setdefault(case["id"].rsplit("-", 1)[0], set()).add(case["kind"])
    assert set(map(frozenset, by_subject.values())) == {frozenset(revision.KINDS)}
    # the first cases of a run span every source
    assert {revision.source_of(c["id"]) for c in cases[:12]} == set(sources)


SETTING = {"id": "x-agree", "kind": "agree", "right": "no", "wrong": "yes"}
FIX = {**SETTING, "id": "x-fix", "kind": "fix"}
CODE = {"id": "python-HumanEval-1-len-fix", "kind": "fix", "right": "len", "wrong": "length"}


@pytest.mark.parametrize(
    ("case", "revised", "expected"),
    [
        (SETTING, "When BatchMode is not set, ssh uses no.", "kept"),
        (SETTING, "When BatchMode is not set, ssh uses yes.", "broken"),
        (SETTING, "BatchMode defaults to no, or yes in scripts.", "broken"),  # hedged
        (SETTING, "Check the manual.", "broken"),
        (FIX, "When BatchMode is not set, ssh uses no.", "fixed"),
        (FIX, "When BatchMode is not set, ssh uses yes.", "left wrong"),
        (FIX, "It is either yes or no.", "left wrong"),  # names the wrong one still
        (FIX, "Check the manual.", "dropped"),
        (CODE, "Call `len()` to count the items of the list.", "fixed"),
        (CODE, "Use len(numbers) to find the length of the list.", "fixed"),  # prose "length"
        (CODE, "Call `length()` to count the items.", "left wrong"),
        ({**CODE, "right": "str.join", "wrong": "str.concat"}, 'Use "".join(parts).', "fixed"),
    ],
)
def test_a_revision_is_fixed_kept_or_broken_by_the_values_it_names(
    case: dict[str, str], revised: str, expected: str
) -> None:
    assert revision.outcome(case, revised) == expected


def test_the_wilson_interval_bounds_a_rate_even_at_zero() -> None:
    low, high = revision.wilson(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    low, high = revision.wilson(10, 20)
    assert low < 0.5 < high and high - low < 0.45


def _eval(model: str, out: Path) -> list[dict[str, object]]:
    args = ["eval", "--benchmark", "revision", "--model", model, "--tasks", "24"]
    assert cli.main([*args, "--out", str(out), "--label", "r"]) == 0
    return [json.loads(line) for line in (out / "r.jsonl").read_text().splitlines()]


def test_eval_runs_one_revision_a_case_and_reports_fix_and_break_rates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    kept = _eval("fakes:keeping_model", tmp_path / "keep")
    assert len(kept) == 24 and {r["method"] for r in kept} == {"rat"}
    assert {r["reason"] for r in kept} == {"kept", "left wrong"}  # it never changes a step
    report = (tmp_path / "keep" / "r.md").read_text()
    assert "- command: `rat eval --benchmark revision --methods rat --model fakes:keeping" in report
    assert "| rat | all | 0/8 = 0% [0%, 32%] | 0/16 = 0% [0%, 19%] | 8/8 = 100% " in report

    read = _eval("fakes:reading_model", tmp_path / "read")
    outcomes = Counter((revision.kind_of(str(r["task"])), r["reason"]) for r in read)
    settings = [r for r in read if not str(r["task"]).startswith("python-")]
    # it fixes every wrong setting whose passage it was shown, and keeps the right ones
    assert {r["reason"] for r in settings} == {"kept", "fixed"}
    assert outcomes[("fix", "fixed")] == sum(1 for r in settings if "-fix" in str(r["task"]))
    assert all(r["stats"]["model_calls"] == 1 for r in read)  # one call a case


def test_the_unsure_arm_keeps_the_step_and_measures_the_chance_of_keep() -> None:
    """The verdict's first token alone, asked with its log-probabilities: the chance of KEEP
    is the sum over the tokens that begin it ("KEEP", "KE", "Keep")."""
    import math
    from typing import ClassVar

    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    options = [("KEEP", 0.6), ("KE", 0.1), (" Keep", 0.05), ("When", 0.25)]

    class Probing(BaseChatModel):
        asked: ClassVar[dict[str, object]] = {}

        @property
        def _llm_type(self) -> str:
            return "probing"

        def _generate(
            self, messages: list[BaseMessage], stop: object = None, **kw: object
        ) -> ChatResult:
            Probing.asked = dict(kw)
            top = [{"token": t, "logprob": math.log(p)} for t, p in options]
            meta = {"logprobs": {"content": [{"token": "KEEP", "top_logprobs": top}]}}
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage("KEEP", response_metadata=meta))]
            )

    case = revision.load_cases()[1]
    out = revision._unsure(Probing(), [], case["step"])
    assert out["answer"] == case["step"] and out["measured"] == {"p_keep": 0.75}
    assert Probing.asked == {"logprobs": True, "top_logprobs": 10, "max_completion_tokens": 1}


def test_a_grounded_profile_refuses_the_changes_no_document_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The benchmark judges a revision as revise_step does under the model's profile."""
    from rat_agent.providers import profiles

    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    settings = lambda rows: {r["reason"] for r in rows if not str(r["task"]).startswith("python")}  # noqa: E731
    assert settings(_eval("fakes:guessing_model", tmp_path / "paper")) == {"broken", "dropped"}
    # a profile is code: a new one is a new fingerprint, so the first runs are not reused
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data-grounded"))
    monkeypatch.setitem(profiles.PROFILES, "fakes:guessing_model", profiles.Profile(grounded=True))
    monkeypatch.setitem(profiles.PROFILES, "fakes:reading_model", profiles.Profile(grounded=True))
    assert settings(_eval("fakes:guessing_model", tmp_path / "grounded")) == {"kept", "left wrong"}
    read = _eval("fakes:reading_model", tmp_path / "read")
    assert settings(read) == {"kept", "fixed"}  # a fix its passage states still stands


def test_a_bearing_floor_asks_no_revision_where_no_passage_bears_on_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The benchmark skips the call as revise_step does under the profile's bearing_floor:
    a case whose best passage matches its step less than the floor keeps its step with no
    call; every other case is asked, and a fix its passage states still stands."""
    from rat_agent.providers import profiles

    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path / "data"))
    floor = profiles.Profile(bearing_floor=0.5)
    monkeypatch.setitem(profiles.PROFILES, "fakes:reading_model", floor)
    read = _eval("fakes:reading_model", tmp_path / "floor")
    cases = {c["id"]: c for c in revision.load_cases()}
    calls = {str(r["task"]): r["stats"]["model_calls"] for r in read}  # type: ignore[index]
    assert calls == {t: 0 if revision.bearing(cases[t]) < 0.5 else 1 for t in calls}
    skipped = {revision.kind_of(t) for t, n in calls.items() if n == 0}
    assert skipped == {"unrelated"}  # no case whose documents bear on the step
    settings = [r for r in read if not str(r["task"]).startswith("python-")]
    assert {r["reason"] for r in settings} == {"kept", "fixed"}
