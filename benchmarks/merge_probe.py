"""Could a draft written from the model's own answer and the passages together keep what
the model knew and add what the passages give? A probe for the next step of issue 42.

The default draft is rag's reply where the task's passages bear on it; on the second
corpus (benchmarks/results/second-corpus.md) it lost 2 questions direct answered. Here the
bundled model is shown the passages rag read (top 3, 600 tokens) and its own answer (direct's,
from a committed results file) and asked to keep its answer unless a passage contradicts it
and to add what the passages give. One call a question; keys scored as `rat eval` scores
them, beside direct's and rag's. Questions: the docs tune split where a committed run holds
direct's answer (7), and the 20 Python questions of benchmarks/second_corpus.py (looked at
already: a probe, not a test). Run from the repository root:
`python benchmarks/merge_probe.py` (about a minute a question on 2 cores). Prints a line a
question and the means. Nothing in the graph calls it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage
from second_corpus import QUESTIONS
from task_support import rag_parts

if TYPE_CHECKING:
    from rat_agent.eval.runner import Case

RESULTS = Path(__file__).parent / "results"
INSTRUCTION = (
    "Above is your own answer to the task, written before you read the documents. Write "
    "the answer to the task again: keep what your own answer says unless a document "
    "contradicts it, and add the settings, functions or commands the documents give that "
    "the task needs, named exactly as the documents write them."
)


def _answers(path: Path, method: str) -> dict[str, str]:
    with path.open() as lines:
        return {r["task"]: r["answer"] for r in map(json.loads, lines) if r["method"] == method}


def tune_work() -> list[tuple[Case, str, str, str]]:
    """(case, collection, direct's answer, rag's answer) for the docs tune questions with
    committed answers of both and the 20 Python questions of second_corpus.py."""
    from rat_agent.eval import docs, runner

    redis_direct = _answers(RESULTS / "docs-tune-distinct.jsonl", "direct")
    redis_rag = _answers(RESULTS / "docs-tune-task-values.jsonl", "rag")
    python_direct = _answers(RESULTS / "second-corpus.jsonl", "direct")
    python_rag = _answers(RESULTS / "second-corpus.jsonl", "rag")
    work = [
        (c, docs.COLLECTION, redis_direct[c.id], redis_rag[c.id])
        for c in docs.cases("tune")
        if c.id in redis_direct and c.id in redis_rag
    ]
    work += [
        (runner.Case(i, q, {"task": i, "keys": k}), "python-docs", python_direct[i], python_rag[i])
        for i, q, k in QUESTIONS
    ]
    return work


def main() -> None:
    from rat_agent.eval import docs, humaneval
    from rat_agent.providers.call import ask
    from rat_agent.providers.chat import get_chat_model

    docs.ensure_collection()
    humaneval.ensure_docs_collection()
    work = tune_work()
    model = get_chat_model("local", max_tokens=512)
    totals = {"direct": 0.0, "rag": 0.0, "merged": 0.0}
    for case, collection, own, rag in work:
        system, text = rag_parts(collection, case.question)
        messages = [system, HumanMessage(f"{text}Your own answer:\n{own}\n\n{INSTRUCTION}")]
        start = time.time()
        merged = ask(model, "draft", messages)
        scores = {
            "direct": docs.score(case, own).score,
            "rag": docs.score(case, rag).score,
            "merged": docs.score(case, merged).score,
        }
        for name, value in scores.items():
            totals[name] += value
        cells = " ".join(f"{name} {value:.2f}" for name, value in scores.items())
        print(f"{case.id} {cells} {time.time() - start:.0f}s", flush=True)
    means = " ".join(f"{name} {value / len(work):.2%}" for name, value in totals.items())
    print(f"mean over {len(work)}: {means}", file=sys.stdout)


if __name__ == "__main__":
    main()
