"""The Minecraft planning suite, as `rat eval --benchmark minecraft` runs it (entry point
"rat_agent.benchmarks"): one task per goal item, each plan, read from the steps of every
method that makes steps, played in the simulator from an empty inventory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rat_agent.errors import ConfigError
from rat_agent.eval.benchmark import Benchmark, Selection
from rat_agent.eval.runner import Case, Result, Score, Scorer, run
from rat_minecraft.simulator import check_plan
from rat_minecraft.tasks import Task, load_tasks, sample


def case(task: Task) -> Case:
    return Case(task.id, task.question, {"task": task.id, "goal": task.goal})


def score(case: Case, answer: str) -> Score:
    check = check_plan(case.key["goal"], answer)
    return Score(1.0 if check.executable else 0.0, check.failed_step, check.reason)


def _load(selection: Selection, context: Mapping[str, Any]) -> tuple[list[Case], Scorer]:
    if selection.samples > 1:
        raise ConfigError("--samples is for humaneval")
    tasks = load_tasks()
    if unknown := selection.exclude - {t.id for t in tasks}:
        raise ConfigError(f"--exclude: no such task: {', '.join(sorted(unknown))}")
    if selection.exclude and not selection.split:
        raise ConfigError("--exclude is for a --split sample")
    if selection.split:
        tasks = sample(tasks, selection.tasks, selection.split, selection.exclude)
    else:
        tasks = tasks[: selection.tasks]
    return [case(t) for t in tasks], score


def _plans(results: Sequence[Result]) -> str:
    from rat_minecraft import plans

    return (
        "Plan length against the reference planner's plan for the same task, and the steps "
        f"an executable plan can do without (rat_minecraft.plans)\n\n{plans.table(results)}"
    )


BENCHMARK = Benchmark(
    "minecraft",
    "Minecraft planning",
    "executable",
    "the plan is executable in the simulator (rat_minecraft.simulator.check_plan)",
    _load,
    # a plan is read from the steps, by every method
    context={"retriever": "minecraft", "answer_prompt": ""},
    report=_plans,
    packages=("rat_minecraft",),
    # what asks and scores: `--rescore` reads stored answers again with a changed checker
    harness=frozenset(
        {
            "benchmark.py",
            "plans.py",
            "ablation.py",
            "evolution.py",
            "reading.py",
            "simulator.py",
            "planner.py",
            "tasks.py",
        }
    ),
)


def benchmark() -> Benchmark:
    return BENCHMARK


def run_minecraft(
    methods: Sequence[str],
    *,
    context: dict[str, Any],
    tasks: Sequence[Task] | None = None,
    limit: int | None = None,
    **options: Any,
) -> list[Result]:
    """The suite from code: each plan, read from the steps of every method that makes
    steps (`output` "steps" unless the context says otherwise), is run through the
    simulator."""
    chosen = list(tasks if tasks is not None else load_tasks())[: limit or None]
    return run(
        "minecraft",
        [case(t) for t in chosen],
        methods,
        score=score,
        context={"answer_prompt": "", **context},
        packages=BENCHMARK.packages,
        harness=BENCHMARK.harness,
        **options,
    )
