"""The retrieval ablation: deterministic, no model; the real index on a few tasks."""

from __future__ import annotations

from rat_minecraft.ablation import cases, corpus_search, query, run
from rat_minecraft.tasks import load_tasks


def test_cases_are_deterministic_and_carry_errors() -> None:
    tasks = load_tasks()[:10]
    first, again = cases(tasks), cases(tasks)
    assert first == again and len(first) > 10
    case = first[0]
    assert query(case, "rag") == case.question
    assert query(case, "cot_rag").startswith("STEP 1:")
    assert query(case, "rat") == case.draft[case.index]


def test_a_fake_search_scores_exactly() -> None:
    step_cases = cases(load_tasks()[:3])

    # a search that finds the gold page only from the step's own text
    def search(text: str, k: int) -> list[str]:
        return [c.gold for c in step_cases if c.draft[c.index] == text][:k]

    scores = {s.kind: s for s in run(step_cases, search)}
    assert scores["rat"].recall == 1.0
    assert scores["rag"].hits == scores["cot_rag"].hits == 0


def test_step_queries_beat_task_and_draft_queries_on_the_real_index() -> None:
    scores = {s.kind: s.recall for s in run(cases(load_tasks()[:12]), corpus_search)}
    assert scores["rat"] > scores["cot_rag"] and scores["rat"] > scores["rag"]
    assert scores["rat"] >= 0.8
