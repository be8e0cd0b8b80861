"""How closely a task's own passages match it (the "support" evidence.select reports), for
the docs questions and HumanEval problems, each against its own source and the other's.

Could a run tell from support alone whether its source bears on the task, and so whether
to draft from the passages (draft "sourced") or from the model's own answer? Run from the
repository root: `python benchmarks/task_support.py` (options: `--k 3`, `--budget 600`).
Builds both collections in a temporary data folder, retrieves the top k for each task's
text as method rag does, keeps the passages within the budget and reports the best
passage's cosine to the task: min, quartiles and max per benchmark, split and source.
Writes benchmarks/results/task-support.md. No model is called.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from rat_agent.retrieval.evidence import Evidence

RESULTS = Path(__file__).parent / "results" / "task-support.md"


def _tasks() -> list[tuple[str, str, str]]:
    """(benchmark, split, task text) for every docs question and HumanEval problems 0-99
    (0-39 the test split, 40-99 the tune split; 100-163 are left alone)."""
    from rat_agent.eval import docs, humaneval

    tasks = [("docs", q["split"], q["question"]) for q in docs.load_questions()]
    for i, problem in enumerate(humaneval.load_problems()[:100]):
        tasks.append(("humaneval", "test" if i < 40 else "tune", humaneval.question(problem)))
    return tasks


def task_evidence(collection: str, text: str, k: int = 3, budget: int = 600) -> Evidence:
    """The passages of a task's top-k documents a step is shown (the rag method's)."""
    from rat_agent.agent.nodes import as_dict
    from rat_agent.retrieval import evidence
    from rat_agent.retrieval.qdrant import hybrid
    from rat_agent.retrieval.qdrant.client import locked_client

    with locked_client() as client:
        documents = [as_dict(p) for p in hybrid.search(client, collection, text, k)]
    return evidence.select(documents, [text], budget)


def support(collection: str, text: str, k: int, budget: int) -> float:
    """The best passage's similarity to the task (0 where nothing was found)."""
    found = task_evidence(collection, text, k, budget).support
    return found if found is not None else 0.0


def rag_parts(collection: str, question: str) -> tuple[BaseMessage, str]:
    """The rag prompt's system message and its text up to the instruction (the task's
    passages and the task), for a probe that asks something else of them."""
    from rat_agent.agent import prompts

    shown = task_evidence(collection, question).documents
    system, human = prompts.rag_messages(question, shown, doc_chars=100_000)
    return system, str(human.content).rsplit(prompts.RAG_ANSWER, 1)[0]


def _row(values: list[float]) -> str:
    q1, median, q3 = statistics.quantiles(values, n=4)
    return " | ".join(f"{v:.2f}" for v in (min(values), q1, median, q3, max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--budget", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAT_DATA_DIR"] = tmp
        from rat_agent.eval import docs, humaneval

        docs.ensure_collection()
        humaneval.ensure_docs_collection()
        own = {"docs": docs.COLLECTION, "humaneval": humaneval.DOCS_COLLECTION}
        found: dict[tuple[str, str, str], list[float]] = {}
        for benchmark, split, text in _tasks():
            for collection in own.values():
                source = "own" if collection == own[benchmark] else "other"
                found.setdefault((benchmark, split, source), []).append(
                    support(collection, text, args.k, args.budget)
                )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    other = {"docs": own["humaneval"], "humaneval": own["docs"]}
    rows = [
        f"| {benchmark} | {split} | {source} "
        f"({own[benchmark] if source == 'own' else other[benchmark]}) "
        f"| {len(values)} | {_row(values)} |"
        for (benchmark, split, source), values in sorted(found.items())
    ]
    lines = [
        f"Code: repository HEAD {commit}; {dt.date.today()}, {platform.machine()}, "
        f"Python {sys.version.split()[0]}.",
        f"Command: `python benchmarks/task_support.py --k {args.k} --budget {args.budget}`",
        "",
        "| benchmark | split | source | tasks | min | 25% | median | 75% | max |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    print("\n".join(lines))
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as out:
        out.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
