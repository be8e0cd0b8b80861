"""The paper's retrieval ablation (its Table 3) without an LLM: which query finds the page
a plan step needs?

From each task's correct plan we make a draft with injected errors (wrong counts, a wrong
ingredient named), as a model's draft would have. For every crafting or smelting step the
gold document is the corpus page of the item the step makes. Three queries compete, as the
methods use them: the task (RAG), the whole draft (CoT+RAG), and the step's own draft text
(RAT with an empty query prompt, where each query sees only its own step). Deterministic: fixed
seed, no model.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rat_agent.parsing import format_steps
from rat_minecraft.planner import reference_plan
from rat_minecraft.reading import parse_steps
from rat_minecraft.simulator import resolve_item
from rat_minecraft.tasks import Task

QUERIES = ("rag", "cot_rag", "rat")
_PRODUCT = re.compile(
    r"^(?:craft|smelt)\s+\d+\s+(?:.+?\s+into\s+)?(?P<item>[a-z ]+?)"
    r"(?:\s+(?:using|with|from)\b.*)?$",
    re.IGNORECASE,
)
_WRONG_INGREDIENTS = ("cobblestone", "gravel", "string", "flint", "clay ball", "bone")

Search = Callable[[str, int], list[str]]  # (query, k) -> page ids, best first


@dataclass(frozen=True)
class StepCase:
    task: str
    question: str
    draft: list[str]  # the whole draft, errors injected
    index: int  # 0-based step whose page is wanted
    gold: str  # item id of the page that step needs


def product_of(step: str) -> str | None:
    match = _PRODUCT.match(step.strip())
    if not match or not step.lower().startswith(("craft", "smelt")):
        return None
    try:
        return resolve_item(match.group("item"))
    except ValueError:
        return None


def _inject(step: str, rng: random.Random) -> str:
    """A plausible wrong version: another count, and sometimes a wrong ingredient."""
    wrong = re.sub(
        r"\b(\d+)\b", lambda m: str(int(m.group(1)) + rng.choice((1, 2, 3))), step, count=1
    )
    if rng.random() < 0.5:
        wrong += f" from {rng.choice(_WRONG_INGREDIENTS)}"
    return wrong


def cases(tasks: Sequence[Task], *, seed: int = 0) -> list[StepCase]:
    rng = random.Random(seed)
    out = []
    for task in tasks:
        steps = parse_steps(reference_plan(task.goal))
        draft = [_inject(step, rng) for step in steps]
        for index, step in enumerate(steps):
            gold = product_of(step)
            if gold is not None:
                out.append(StepCase(task.id, task.question, draft, index, gold))
    return out


def query(case: StepCase, kind: str) -> str:
    if kind == "rag":
        return case.question
    if kind == "cot_rag":
        return format_steps(case.draft)
    return case.draft[case.index]


@dataclass(frozen=True)
class Score:
    kind: str
    steps: int
    hits: int

    @property
    def recall(self) -> float:
        return self.hits / self.steps if self.steps else 0.0


def run(step_cases: Sequence[StepCase], search: Search, k: int = 3) -> list[Score]:
    """Recall@k of the gold page per query kind; a query shared by steps is searched once."""
    scores = []
    for kind in QUERIES:
        found: dict[str, list[str]] = {}
        hits = 0
        for case in step_cases:
            text = query(case, kind)
            if text not in found:
                found[text] = search(text, k)
            hits += case.gold in found[text]
        scores.append(Score(kind, len(step_cases), hits))
    return scores


def corpus_search(query_text: str, k: int) -> list[str]:
    """The offline Minecraft retriever, as RAT uses it; page ids, best first."""
    from rat_agent.agent.context import Context
    from rat_agent.retrieval import get_retriever

    retriever = get_retriever(Context(retriever="minecraft", k=k))
    return [str(d.metadata["id"]) for d in retriever.invoke(query_text)]
