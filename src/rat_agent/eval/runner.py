"""`rat eval`: run a benchmark for several methods on one model, resumably.

Each (task, method, model, settings) result is appended to a JSON-lines cache as soon as it
exists, so an interrupted evaluation resumes where it stopped and a re-run computes only
what is missing. Scores come from the benchmark's own checker (the Minecraft simulator).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rat_agent.context import Context, Method
from rat_agent.errors import ConfigError
from rat_agent.eval.minecraft import Task, check_plan, load_tasks
from rat_agent.paths import data_dir

Progress = Callable[[int, int], None]


@dataclass
class Result:
    key: str
    task: str
    method: str
    model: str
    score: float  # 1.0: the plan is executable
    failed_step: int | None
    reason: str
    answer: str
    stats: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def result_key(task: Task, method: str, settings: dict[str, Any]) -> str:
    blob = json.dumps({"task": task.id, "goal": task.goal, "method": method, **settings},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def cache_file(benchmark: str) -> Path:
    folder = data_dir() / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{benchmark}.jsonl"


def _load(path: Path) -> dict[str, Result]:
    results: dict[str, Result] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                data = json.loads(line)
                results[data["key"]] = Result(**data)
            except (ValueError, TypeError, KeyError):
                continue  # a line cut by a kill: that result is computed again
    return results


def run_minecraft(
    methods: Sequence[str],
    *,
    context: dict[str, Any],
    tasks: Sequence[Task] | None = None,
    limit: int | None = None,
    concurrency: int = 1,
    graph: Any = None,
    progress: Progress | None = None,
) -> list[Result]:
    """Every (task, method) result, from the cache where it is already there."""
    from rat_agent.graph import build_graph
    from rat_agent.stats import RunStats

    for method in methods:
        Context(**{**context, "method": method})  # bad settings fail before any work
    chosen = list(tasks if tasks is not None else load_tasks())[: limit or None]
    graph = graph or build_graph()
    path = cache_file("minecraft")
    cached = _load(path)
    lock = threading.Lock()
    todo = []
    for task in chosen:
        for method in methods:
            settings = {**context, "method": method}
            key = result_key(task, method, settings)
            if key not in cached:
                todo.append((task, method, settings, key))
    total = len(chosen) * len(methods)
    done = total - len(todo)
    if progress:
        progress(done, total)

    def one(item: tuple[Task, str, dict[str, Any], str]) -> None:
        nonlocal done
        task, method, settings, key = item
        stats = RunStats()
        try:
            output = graph.invoke({"question": task.question}, {"callbacks": [stats]},
                                  context=settings)
            answer, error = str(output["answer"]), ""
        except ConfigError:
            raise
        except Exception as exc:  # a failed run scores 0 and says why; the others go on
            answer, error = "", f"{type(exc).__name__}: {exc}"
        check = check_plan(task.goal, answer)
        result = Result(key, task.id, method, str(settings.get("model", "local")),
                        1.0 if check.executable else 0.0, check.failed_step, check.reason,
                        answer, stats.summary(), error)
        with lock:
            with path.open("a") as file:
                file.write(json.dumps(asdict(result)) + "\n")
                file.flush()
                os.fsync(file.fileno())
            cached[key] = result
            done += 1
            if progress:
                progress(done, total)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, todo))
    return [cached[result_key(t, m, {**context, "method": m})] for t in chosen for m in methods]


def table(results: Sequence[Result]) -> str:
    """Executability and cost per method, as Markdown."""
    rows = ["| method | tasks | executable | model calls | prompt tokens (cached) | "
            "completion tokens | wall s |", "|---|---|---|---|---|---|---|"]
    methods = list(dict.fromkeys(r.method for r in results))
    for method in methods:
        mine = [r for r in results if r.method == method]
        n = len(mine)

        def mean(name: str, rows_: list[Result] = mine, n_: int = n) -> float:
            return sum(float(r.stats.get(name, 0) or 0) for r in rows_) / n_

        rows.append(
            f"| {method} | {n} | {sum(r.score for r in mine) / n:.0%} | "
            f"{mean('model_calls'):.1f} | {mean('prompt_tokens'):.0f} "
            f"({mean('cached_prompt_tokens'):.0f}) | {mean('completion_tokens'):.0f} | "
            f"{mean('wall_seconds'):.1f} |"
        )
    return "\n".join(rows)


ALL_METHODS: tuple[Method, ...] = ("direct", "cot", "rag", "cot_rag", "rat_noncausal", "rat",
                                   "rat_official_layout")
