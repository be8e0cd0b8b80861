"""The Thought-Retriever paper's self-evolution finding, on the Minecraft suite.

One sequence of related tasks (the suite's first ones: the wooden, stone and iron tiers
share most of their steps) is run twice with method rat: once without memory, and once
with a memory that starts empty and keeps every confident, novel thought. Per task we
record what the run's retrieval covered, whether the plan executes, and the model calls,
against the number of thoughts in memory when the task began.

Retrieval quality is recall of the knowledge the task needs: the items the reference plan
crafts or smelts (and the goal), each covered when its corpus page was retrieved for some
step or a retrieved thought names it. It needs no model to judge and is the same measure
for both arms.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rat_agent.errors import ConfigError, RatError
from rat_agent.memory.store import Memory
from rat_agent.paths import data_dir
from rat_minecraft.ablation import product_of
from rat_minecraft.corpus import SOURCE_PREFIX
from rat_minecraft.planner import reference_plan
from rat_minecraft.reading import parse_steps
from rat_minecraft.simulator import check_plan
from rat_minecraft.tasks import Task

ARMS = ("no memory", "memory")


@dataclass
class Point:
    arm: str
    position: int  # 1-based place in the sequence
    task: str
    thoughts_before: int  # thoughts in memory when the task began
    executable: bool
    failed_step: int | None
    reason: str
    recall: float  # share of the needed items the run's retrieval covered
    needed: list[str]
    covered_by_thoughts: list[str]  # needed items only a retrieved thought covered
    thoughts_retrieved: int  # thought sources over all steps
    thoughts_stored: int  # thoughts this run added
    answer_calls: int  # model calls spent answering
    thought_calls: int  # model calls spent making thoughts
    wall_seconds: float
    answer: str


def needed_items(goal: str) -> list[str]:
    """What the task needs to know: the items its reference plan crafts or smelts."""
    items = {item for step in parse_steps(reference_plan(goal)) if (item := product_of(step))}
    return sorted(items | {goal})


def coverage(needed: Sequence[str], steps: Sequence[dict[str, Any]]) -> tuple[float, list[str]]:
    """(recall of `needed` over every step's sources, the items only thoughts covered)."""
    pages, thought_text = set(), []
    for step in steps:
        for source in step["sources"]:
            if source.get("kind") == "thought":
                thought_text.append(source["snippet"].lower())
            elif source["source"].startswith(SOURCE_PREFIX):
                pages.add(source["source"][len(SOURCE_PREFIX) :])
    by_thought = [
        item
        for item in needed
        if item not in pages
        and any(re.search(rf"\b{re.escape(item.replace('_', ' '))}", text) for text in thought_text)
    ]
    covered = sum(item in pages for item in needed) + len(by_thought)
    return covered / max(len(needed), 1), by_thought


def run_sequence(
    tasks: Sequence[Task],
    *,
    context: dict[str, Any],
    graph: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Point]:
    """Both arms over `tasks`, in order; resumable, as each finished task is saved at once.

    The memory arm's collection is named after the settings, so a resumed run finds the
    thoughts of the tasks before it, and a fresh run (no saved points) starts it empty.
    """
    from rat_agent.agent.graph import build_graph
    from rat_agent.providers.stats import RunStats

    graph = graph or build_graph()
    settings = {**context, "method": "rat"}
    tag = hashlib.sha256(
        json.dumps({"tasks": [t.id for t in tasks], **settings}, sort_keys=True).encode()
    ).hexdigest()[:12]
    path = data_dir() / "eval" / f"evolution-{tag}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = _load(path)
    memory = Memory(f"eval-evolution-{tag}")
    if not any(arm == "memory" for arm, _ in saved):
        memory.clear()
    points = []
    for arm in ARMS:
        for position, task in enumerate(tasks, 1):
            if progress:
                progress(arm, position - 1, len(tasks))
            key = (arm, position)
            if key in saved:
                points.append(saved[key])
                continue
            run_settings = {
                **settings,
                "memory": memory.collection if arm == "memory" else "",
            }
            before = memory.count() if arm == "memory" else 0
            stats = RunStats()
            try:
                output = graph.invoke(
                    {"question": task.question}, {"callbacks": [stats]}, context=run_settings
                )
            except ConfigError:
                raise
            except RatError as exc:  # a failed run is a failed plan; the sequence goes on
                output = {
                    "answer": "",
                    "steps": [],
                    "thoughts": [],
                    "error": f"{type(exc).__name__}: {exc}",
                }
            point = _point(arm, position, task, before, output, stats.summary())
            with path.open("a") as file:
                file.write(json.dumps(asdict(point)) + "\n")
                file.flush()
                os.fsync(file.fileno())
            points.append(point)
    return points


def _point(
    arm: str,
    position: int,
    task: Task,
    before: int,
    output: dict[str, Any],
    summary: dict[str, Any],
) -> Point:
    check = check_plan(task.goal, output["answer"])
    reason = output.get("error") or check.reason
    needed = needed_items(task.goal)
    recall, by_thought = coverage(needed, output["steps"])
    notes = output.get("thoughts", [])
    return Point(
        arm=arm,
        position=position,
        task=task.id,
        thoughts_before=before,
        executable=check.executable,
        failed_step=check.failed_step,
        reason=reason,
        recall=recall,
        needed=needed,
        covered_by_thoughts=by_thought,
        thoughts_retrieved=sum(
            s.get("kind") == "thought" for step in output["steps"] for s in step["sources"]
        ),
        thoughts_stored=sum(n["stored"] for n in notes),
        answer_calls=int(summary["model_calls"]) - len(notes),
        thought_calls=len(notes),
        wall_seconds=float(summary["wall_seconds"]),
        answer=str(output["answer"]),
    )


def _load(path: Path) -> dict[tuple[str, int], Point]:
    if not path.exists():
        return {}
    points = {}
    for line in path.read_text().splitlines():
        if line.strip():
            point = Point(**json.loads(line))
            points[(point.arm, point.position)] = point
    return points


def table(points: Sequence[Point]) -> str:
    """Per arm, over the whole sequence and over its first and second halves."""
    header = (
        "| arm | tasks | executable | retrieval recall | recall, first half | "
        "recall, second half | thoughts retrieved / task | model calls answering | "
        "model calls making thoughts | thoughts in memory at the end |"
    )
    rows = [header, "|" + "---|" * header.count(" | ") + "---|"]
    for arm in ARMS:
        mine = sorted((p for p in points if p.arm == arm), key=lambda p: p.position)
        if not mine:
            continue
        half = len(mine) // 2

        def mean(values: Sequence[float]) -> float:
            return sum(values) / max(len(values), 1)

        end = mine[-1].thoughts_before + mine[-1].thoughts_stored if arm == "memory" else 0
        rows.append(
            "| "
            + " | ".join(
                [
                    arm,
                    str(len(mine)),
                    f"{mean([p.executable for p in mine]):.0%}",
                    f"{mean([p.recall for p in mine]):.0%}",
                    f"{mean([p.recall for p in mine[:half]]):.0%}",
                    f"{mean([p.recall for p in mine[half:]]):.0%}",
                    f"{mean([p.thoughts_retrieved for p in mine]):.1f}",
                    f"{mean([p.answer_calls for p in mine]):.1f}",
                    f"{mean([p.thought_calls for p in mine]):.1f}",
                    str(end),
                ]
            )
            + " |"
        )
    return "\n".join(rows)


def plot(points: Sequence[Point], png: Path, title: str) -> Path:
    """Recall, executability and model calls of both arms against the thoughts in memory
    when each task began (the memory arm's count; the same task sits at the same x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    memory_arm = {p.position: p for p in points if p.arm == "memory"}
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
    for arm, style in zip(ARMS, ("o--", "o-"), strict=True):
        mine = sorted((p for p in points if p.arm == arm), key=lambda p: p.position)
        xs = [
            memory_arm[p.position].thoughts_before
            if p.position in memory_arm
            else p.thoughts_before
            for p in mine
        ]
        running = [sum(q.executable for q in mine[: n + 1]) / (n + 1) for n in range(len(mine))]
        axes[0].plot(xs, [100 * p.recall for p in mine], style, label=arm)
        axes[1].plot(xs, [100 * r for r in running], style, label=arm)
        axes[2].plot(xs, [p.answer_calls for p in mine], style, label=f"{arm}: answering")
        if arm == "memory":
            axes[2].plot(xs, [p.thought_calls for p in mine], "s:", label="memory: making thoughts")
    for ax, label in zip(
        axes, ("retrieval recall (%)", "executable so far (%)", "model calls per task"), strict=True
    ):
        ax.set_xlabel("thoughts in memory when the task began")
        ax.set_ylabel(label)
        ax.legend(fontsize="small")
    axes[0].set_ylim(0, 105)
    axes[1].set_ylim(0, 105)
    fig.suptitle(title)
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return png
