"""The evaluation runner: scores from the checker, results cached and resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, prompt_text, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent.agent.graph import build_graph
from rat_agent.eval.runner import cache_file, table
from rat_minecraft import METADATA as MINECRAFT
from rat_minecraft.benchmark import BENCHMARK, run_minecraft
from rat_minecraft.benchmark import case as minecraft_case
from rat_minecraft.planner import reference_plan
from rat_minecraft.tasks import load_tasks

TASKS = load_tasks()[:3]


def PAGES() -> ListRetriever:
    """The Minecraft suite's source, as the bundled corpus declares itself."""
    return ListRetriever(documents=wiki_docs(1), metadata=dict(MINECRAFT))


PLANS = {task.question: reference_plan(task.goal) for task in TASKS}


def planner() -> ScriptedModel:
    """Drafts the right plan; answers 'direct' with something no simulator accepts."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        question = prompt_text(messages).split("Task: ", 1)[1].split("\n", 1)[0]
        if kind == "draft":
            return PLANS[question]
        if kind == "direct":
            return "Just find one."
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


@pytest.fixture(autouse=True)
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_DATA_DIR", str(tmp_path))


def test_scores_come_from_the_checker_and_results_are_cached() -> None:
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    seen: list[tuple[int, int]] = []
    results = run_minecraft(
        ["direct", "cot"],
        context={"model": "fake", "max_steps": 32},
        tasks=TASKS,
        graph=graph,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert [(r.task, r.method) for r in results] == [
        (t.id, m) for t in TASKS for m in ("direct", "cot")
    ]
    assert [r.score for r in results if r.method == "cot"] == [1.0] * 3
    assert [r.score for r in results if r.method == "direct"] == [0.0] * 3
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)
    calls = len(model.calls)
    again = run_minecraft(
        ["direct", "cot"], context={"model": "fake", "max_steps": 32}, tasks=TASKS, graph=graph
    )
    assert len(model.calls) == calls and again == results  # nothing computed twice
    markdown = table(results)
    assert "| direct | 3 | 0% |" in markdown and "| cot | 3 | 100% |" in markdown


def test_an_interrupted_evaluation_computes_only_what_is_missing() -> None:
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32}
    run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph)
    path = cache_file("minecraft")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:20])  # a kill mid-write
    before = len(model.calls)
    results = run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph)
    assert len(model.calls) == before + 1 and [r.score for r in results] == [1.0] * 3
    # other settings are other results
    run_minecraft(["cot"], context={**context, "k": 2}, tasks=TASKS[:1], graph=graph)
    assert len(model.calls) == before + 2


def test_cached_only_reports_what_is_done_and_computes_nothing() -> None:
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32}
    run_minecraft(["cot"], context=context, tasks=TASKS[:2], graph=graph)
    before = len(model.calls)
    report = run_minecraft(
        ["direct", "cot"], context=context, tasks=TASKS, graph=graph, cached_only=True
    )
    assert len(model.calls) == before
    assert [(r.task, r.method) for r in report] == [(t.id, "cot") for t in TASKS[:2]]


def test_a_results_file_written_earlier_counts_as_cached(tmp_path: Path) -> None:
    """Re-running a committed command on a fresh clone computes only what is new."""
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32}
    first = run_minecraft(["cot"], context=context, tasks=TASKS[:2], graph=graph)
    committed = tmp_path / "committed.jsonl"
    committed.write_text(cache_file("minecraft").read_text())
    cache_file("minecraft").unlink()  # a fresh machine
    calls = len(model.calls)
    results = run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph, seed=committed)
    assert len(model.calls) == calls + 1  # only the third task ran
    assert results[:2] == first


def test_plots_show_the_score_and_the_cost_of_each_method(tmp_path: Path) -> None:
    import matplotlib.image

    from rat_agent.eval.plots import plot

    graph = build_graph(llm=planner(), retriever=PAGES())
    results = run_minecraft(
        ["direct", "cot"], context={"model": "fake", "max_steps": 32}, tasks=TASKS, graph=graph
    )
    files = plot(results, tmp_path / "minecraft-fake", "minecraft, fake")
    assert [f.name for f in files] == ["minecraft-fake-score.png", "minecraft-fake-cost.png"]
    for file in files:
        height, width, _ = matplotlib.image.imread(file).shape
        assert width > 600 and height > 300


def test_a_partial_reports_bars_say_of_how_many_runs_their_share_is() -> None:
    from rat_agent.eval.plots import score_labels

    assert score_labels([0.0, 50.0], [4, 4]) == (["0%", "50%"], "4 runs per method")
    assert score_labels([0.0, 80.0], [14, 5]) == (
        ["0% of 14", "80% of 5"],
        "runs per method differ (partial)",
    )


def test_a_changed_question_or_prompt_is_a_new_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results are cached under the exact question and every prompt's wording."""
    import dataclasses

    from rat_agent.agent import prompts

    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32}
    run_minecraft(["cot"], context=context, tasks=TASKS[:1], graph=graph)
    before = len(model.calls)
    run_minecraft(["cot"], context=context, tasks=TASKS[:1], graph=graph)
    assert len(model.calls) == before
    monkeypatch.setattr(prompts, "DIRECT", prompts.DIRECT + " Be brief.")
    run_minecraft(["cot"], context=context, tasks=TASKS[:1], graph=graph)
    assert len(model.calls) == before + 1
    reworded = dataclasses.replace(TASKS[0], question=TASKS[0].question + " ")
    PLANS[reworded.question.strip()] = PLANS[TASKS[0].question]
    run_minecraft(["cot"], context=context, tasks=[reworded], graph=graph)
    assert len(model.calls) == before + 2


def test_a_graph_with_a_checkpointer_keeps_each_run_under_its_key() -> None:
    """`rat eval --keep-runs`: a score can be explained from the run's own state, and a
    run computed again replaces its thread rather than continuing the finished one."""
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES(), checkpointer=saver)
    context = {"model": "fake", "max_steps": 32}
    first = run_minecraft(["cot", "direct"], context=context, tasks=TASKS[:2], graph=graph)
    for result in first:
        config: Any = {"configurable": {"thread_id": result.key}}
        values = graph.get_state(config).values
        assert values["question"] in PLANS and values["answer"] == result.answer
        assert values["settings"]["method"] == result.method
    kept = {r.key: len(list(saver.list({"configurable": {"thread_id": r.key}}))) for r in first}
    cache_file("minecraft").unlink()  # computed again, under the same keys
    again = run_minecraft(["cot", "direct"], context=context, tasks=TASKS[:2], graph=graph)
    assert [r.key for r in again] == [r.key for r in first]
    for result in again:
        config = {"configurable": {"thread_id": result.key}}
        assert len(list(saver.list(config))) == kept[result.key]
        assert graph.get_state(config).values["answer"] == result.answer


def test_results_are_keyed_by_the_methods_code_not_the_harness(tmp_path: Path) -> None:
    from rat_agent.eval.runner import code_fingerprint

    (tmp_path / "eval").mkdir()
    (tmp_path / "repair.py").write_text("RULE = 1\n")
    (tmp_path / "eval" / "runner.py").write_text("HARNESS = 1\n")
    before = code_fingerprint.__wrapped__(tmp_path)
    (tmp_path / "eval" / "runner.py").write_text("HARNESS = 2\n")
    assert code_fingerprint.__wrapped__(tmp_path) == before
    (tmp_path / "repair.py").write_text("RULE = 2\n")
    changed = code_fingerprint.__wrapped__(tmp_path)
    assert changed != before
    (tmp_path / "corpus.py").write_text("LINES = []\n")  # a new module is new code too
    assert code_fingerprint.__wrapped__(tmp_path) not in (before, changed)


def test_rescoring_reads_the_stored_answers_with_the_checker_as_it_is_now() -> None:
    from rat_agent.eval import runner

    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32, "answer_prompt": ""}  # as run_minecraft's
    first = run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph)
    assert [r.score for r in first] == [1.0] * 3
    calls = len(model.calls)
    strict = runner.Score(0.0, 1, "stricter checker")
    report = runner.run(
        "minecraft",
        [minecraft_case(t) for t in TASKS],
        ["cot"],
        score=lambda case, answer: strict,
        context=context,
        graph=graph,
        rescore=True,
        packages=BENCHMARK.packages,
        harness=BENCHMARK.harness,
    )
    assert len(model.calls) == calls
    assert [(r.score, r.reason) for r in report] == [(0.0, "stricter checker")] * 3
    assert [r.answer for r in report] == [r.answer for r in first]


def test_a_run_that_raised_is_kept_as_a_zero_until_errors_are_retried() -> None:
    """A server that died mid-run must not stay a 0 in every later report."""
    from rat_agent.eval import runner

    down = [True]
    plans = planner()

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if down[0] and TASKS[0].question in prompt_text(messages):
            raise ConnectionResetError("the server went away")
        return plans.respond(kind, messages)

    model = ScriptedModel(respond=respond, calls=[])
    graph = build_graph(llm=model, retriever=PAGES())
    context = {"model": "fake", "max_steps": 32}
    first = run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph)
    assert [r.score for r in first] == [0.0, 1.0, 1.0]
    assert "the server went away" in first[0].error and not first[1].error
    down[0] = False
    calls = len(model.calls)
    assert run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph) == first
    assert len(model.calls) == calls  # cached, error and all
    again = run_minecraft(["cot"], context=context, tasks=TASKS, graph=graph, retry_errors=True)
    assert [r.score for r in again] == [1.0] * 3 and not again[0].error
    assert again[1:] == first[1:]  # only the failed run was computed again
    assert runner._load(cache_file("minecraft"))[first[0].key] == again[0]  # the last line wins


def test_eval_flags_pick_a_stratified_split_and_any_context_field() -> None:
    from rat_agent.cli.eval import _settings

    assert _settings(["draft=sourced", "max-steps=4", "temperature=0.5", "review-draft=0"]) == {
        "draft": "sourced",
        "max_steps": 4,
        "temperature": 0.5,
        "review_draft": False,
    }
    from rat_agent import Context
    from rat_agent.errors import ConfigError

    assert Context(**_settings(["memory=false"])).memory == ""  # a switch: off
    assert Context(**_settings(["memory=mine"])).memory == "mine"

    with pytest.raises(ConfigError, match="context field"):
        _settings(["nonsense=1"])
    with pytest.raises(ConfigError, match="FIELD=VALUE"):
        _settings(["k"])


def test_each_run_has_its_own_thread_id() -> None:
    """What a many-slot local server pins concurrent runs apart by (LocalChat.slot)."""
    from langchain_core.callbacks import BaseCallbackHandler

    threads: list[str] = []

    class Seen(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            threads.append(str((kw.get("metadata") or {}).get("thread_id")))

    model = planner()
    model.callbacks = [Seen()]
    graph = build_graph(llm=model, retriever=PAGES())
    run_minecraft(
        ["direct", "cot"], context={"model": "fake", "max_steps": 32}, tasks=TASKS[:2], graph=graph
    )
    assert len(threads) == 4 and len(set(threads)) == 4 and "None" not in threads


def test_variants_alternate_task_by_task_under_the_keys_of_a_set_run() -> None:
    """--vary: each task runs under every value before the next task starts, so the arms
    share the machine's state; each value's results are the ones --set would compute."""
    model = planner()
    graph = build_graph(llm=model, retriever=PAGES())
    variants = {"max_steps=32": {"max_steps": 32}, "max_steps=2": {"max_steps": 2}}
    results = run_minecraft(
        ["cot"], context={"model": "fake"}, tasks=TASKS[:2], graph=graph, variants=variants
    )
    assert [(r.task, r.method) for r in results] == [
        (t.id, f"cot {name}") for t in TASKS[:2] for name in variants
    ]
    asked = [prompt_text(call).split("Task: ", 1)[1].split("\n", 1)[0] for _, call in model.calls]
    assert asked == [t.question for t in TASKS[:2] for _ in variants]
    before = len(model.calls)
    plain = run_minecraft(["cot"], context={"model": "fake", "max_steps": 2}, tasks=TASKS[:2])
    assert len(model.calls) == before  # the same keys: nothing computed again
    assert [r.key for r in plain] == [r.key for r in results if r.method == "cot max_steps=2"]


def test_paired_counts_the_tasks_each_arm_solves_alone_with_a_sign_test() -> None:
    from rat_agent.eval.runner import Result, paired, sign_test

    def result(task: str, method: str, score: float) -> Result:
        return Result(f"{task}{method}", task, method, "fake", score, None, "", "", {}, "", 0)

    base = [result(f"t{n}", "rat", 1.0 if n < 3 else 0.0) for n in range(6)]
    other = [result(f"t{n}", "rat draft=goal", 1.0 if n >= 2 else 0.0) for n in range(5)]
    markdown = paired(base + other, "rat")
    # on t0..t4: rat solves t0, t1, t2; the other t2, t3, t4: 2 tasks each alone
    assert "| rat draft=goal | 5 | 3 | 3 | 2 | 2 | 1 |" in markdown
    assert len(markdown.splitlines()) == 3  # the base is no row of its own
    assert sign_test(0, 5) == pytest.approx(0.0625)
    assert sign_test(8, 9) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(1, 3) == pytest.approx(0.625)


def test_vary_flag_names_one_field_and_two_or_more_values() -> None:
    from rat_agent.cli.eval import _variants
    from rat_agent.errors import ConfigError

    assert _variants([]) == {}
    assert _variants(["draft=cot,goal"]) == {
        "draft=cot": {"draft": "cot"},
        "draft=goal": {"draft": "goal"},
    }
    assert _variants(["k=2, 5"]) == {"k=2": {"k": 2}, "k=5": {"k": 5}}
    for bad in ("draft=goal", "draft", "k=3,3"):
        with pytest.raises(ConfigError, match="two or more different values"):
            _variants([bad])
    with pytest.raises(ConfigError, match="--vary 'nonsense=1'"):
        _variants(["nonsense=1,2"])
    with pytest.raises(ConfigError, match="k is varied twice"):
        _variants(["k=2,3", "k=4,5"])


def test_vary_repeated_changes_one_field_at_a_time_from_a_shared_base_arm() -> None:
    """Two fields of two values make three arms, not four: the base takes each field's
    first value, and every other arm differs from it in one field only."""
    from rat_agent.cli.eval import _variants

    assert _variants(["k=3,5,8", "speculate=0,4", "draft=cot,goal"]) == {
        "k=3 speculate=0 draft=cot": {"k": 3, "speculate": 0, "draft": "cot"},
        "k=5": {"k": 5, "speculate": 0, "draft": "cot"},
        "k=8": {"k": 8, "speculate": 0, "draft": "cot"},
        "speculate=4": {"k": 3, "speculate": 4, "draft": "cot"},
        "draft=goal": {"k": 3, "speculate": 0, "draft": "goal"},
    }
