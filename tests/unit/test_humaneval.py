"""HumanEval: the sandbox runs the real tests, code is read from replies, docs are indexed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from fakes import ListRetriever, ScriptedModel, prompt_text, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent import retrieval
from rat_agent.agent.context import Context
from rat_agent.agent.graph import build_graph
from rat_agent.errors import ConfigError
from rat_agent.eval import humaneval, runner

PROBLEMS = humaneval.load_problems()
FIRST = PROBLEMS[0]  # has_close_elements


def full_function(problem: dict[str, object]) -> str:
    """The reference solution written as a whole function, as a chat model replies."""
    return f"{problem['prompt']}{problem['canonical_solution']}"


pytestmark = pytest.mark.usefixtures("fresh_data")  # conftest.py


def test_the_published_problems_load_in_order() -> None:
    assert len(PROBLEMS) == 164
    assert [p["task_id"] for p in PROBLEMS[:3]] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert "has_close_elements" in humaneval.question(FIRST)


def test_the_splits_report_on_the_first_40_and_tune_on_the_next_60() -> None:
    problems = humaneval.load_problems()
    test, tune = humaneval.split(problems, "test"), humaneval.split(problems, "tune")
    assert [p["task_id"] for p in test] == [f"HumanEval/{n}" for n in range(40)]
    assert [p["task_id"] for p in tune] == [f"HumanEval/{n}" for n in range(40, 100)]
    assert humaneval.split(problems, None) == problems  # 100-163 only when asked for all
    with pytest.raises(ConfigError, match="split"):
        humaneval.split(problems, "train")


def test_rat_drafts_steps_for_a_problem_and_writes_the_code_from_them() -> None:
    """The benchmark's settings: each step's text is its query; the answer, the code, is
    written from the revised steps and passes the problem's tests."""
    question = humaneval.question(FIRST)

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return "STEP 1: Compare every pair of numbers.\nSTEP 2: Return True if two are close."
        if kind == "revise":
            return "Compare every pair of numbers, i < j, by their absolute difference."
        assert kind == "answer", kind
        return f"```python\n{full_function(FIRST)}\n```"

    model = ScriptedModel(respond=respond)
    retriever = ListRetriever(documents=wiki_docs(1))
    context = {"retriever": "qdrant", "query_prompt": ""}  # as humaneval.BENCHMARK runs
    result = build_graph(llm=model, retriever=retriever).invoke(
        {"question": question}, context=context
    )
    assert [kind for kind, _ in model.calls] == ["draft", "revise", "revise", "answer"]
    assert retriever.queries == ["Compare every pair of numbers.", "Return True if two are close."]
    assert "i < j" in prompt_text(model.calls[-1][1])
    code = humaneval.extract_code(result["answer"], FIRST["entry_point"])
    assert humaneval.run_tests(FIRST, code) == (True, "")


@pytest.mark.parametrize("index", [0, 12, 32, 53, 107, 163])
def test_reference_solutions_pass_as_a_body_and_as_a_whole_function(index: int) -> None:
    problem = PROBLEMS[index]
    assert humaneval.run_tests(problem, problem["canonical_solution"]) == (True, "")
    assert humaneval.run_tests(problem, full_function(problem)) == (True, "")


def test_a_wrong_solution_fails_and_says_why() -> None:
    code = "def has_close_elements(numbers, threshold):\n    return True\n"
    assert humaneval.run_tests(FIRST, code) == (False, "AssertionError")
    passed, why = humaneval.run_tests(FIRST, "def has_close_elements(:\n")
    assert not passed and "SyntaxError" in why


def test_the_sandbox_stops_endless_loops_and_memory_hogs() -> None:
    loop = "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
    assert humaneval.run_tests(FIRST, loop, timeout=2) == (False, "timed out after 2 s")
    hog = "def has_close_elements(numbers, threshold):\n    return len(bytearray(8 << 30)) > 0\n"
    passed, why = humaneval.run_tests(FIRST, hog, memory_mb=512)
    assert not passed and "MemoryError" in why


def test_the_sandbox_disables_destructive_calls_and_large_files(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("mine")
    remove = (
        f"import os\ndef has_close_elements(numbers, threshold):\n    os.remove({str(target)!r})\n"
    )
    passed, why = humaneval.run_tests(FIRST, remove)
    assert not passed and "NoneType" in why and target.read_text() == "mine"
    big = (
        "def has_close_elements(numbers, threshold):\n    open('big', 'wb').write(bytes(4 << 20))\n"
    )
    passed, why = humaneval.run_tests(FIRST, big)
    assert not passed and ("File too large" in why or "signal" in why)


def test_code_is_read_from_the_block_that_defines_the_function() -> None:
    reply = (
        "Here is a helper:\n```python\nprint('demo')\n```\nAnd the answer:\n"
        "```python\nimport math\n\ndef f(x):\n    return math.floor(x)\n```\nDone."
    )
    code = humaneval.extract_code(reply, "f")
    assert code == "import math\n\ndef f(x):\n    return math.floor(x)\n"
    assert humaneval.extract_code("```py\ng = 1\n```", "f") == "g = 1\n"
    assert humaneval.extract_code("def f(x):\n    return x", "f") == "def f(x):\n    return x"
    # a reply cut by the token budget still yields its code
    assert humaneval.extract_code("```python\ndef f(x):\n    return x\n", "f").startswith("def f")


def test_the_runner_scores_pass_at_1_and_pass_at_k_per_method() -> None:
    """direct writes the right code; cot writes it on every other sample only."""
    problems = PROBLEMS[:2]
    by_question = {humaneval.question(p): p for p in problems}
    seen: dict[str, int] = {}

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        text = prompt_text(messages)
        problem = next(p for q, p in by_question.items() if q in text)
        if kind == "direct":
            return f"```python\n{full_function(problem)}```"
        if kind == "draft":
            return "STEP 1: loop over the pairs\nSTEP 2: compare"
        if kind == "answer":
            seen[problem["task_id"]] = seen.get(problem["task_id"], 0) + 1
            good = seen[problem["task_id"]] % 2 == 1
            body = problem["canonical_solution"] if good else "    return None\n"
            return f"```python\n{problem['prompt']}{body}```"
        raise AssertionError(kind)

    graph = build_graph(
        llm=ScriptedModel(respond=respond, calls=[]),
        retriever=ListRetriever(documents=wiki_docs(1)),
    )
    results = runner.run(
        "humaneval",
        humaneval.cases(problems, samples=2),
        ["direct", "cot"],
        score=humaneval.scorer(problems),
        graph=graph,
        context={"model": "fake", "temperature": 0.8},
    )
    assert len(results) == 2 * 2 * 2
    assert {r.sample for r in results} == {0, 1}
    scores = {(r.method, r.task, r.sample): r.score for r in results}
    assert all(scores[("direct", p["task_id"], s)] == 1.0 for p in problems for s in (0, 1))
    assert sorted(scores[("cot", p["task_id"], s)] for p in problems for s in (0, 1)) == [
        0.0,
        0.0,
        1.0,
        1.0,
    ]
    markdown = runner.table(results, "pass@1", [1, 2])  # pass@1 is the score: one column
    assert "| method | tasks | pass@1 | pass@2 | model calls |" in markdown
    assert "| direct | 2 | 100% | 100% |" in markdown
    assert "| cot | 2 | 50% | 100% |" in markdown
    assert math.isnan(runner.pass_at_k([[1.0]], 2))


def test_the_documentation_corpus_is_indexed_and_found(tmp_path: Path) -> None:
    files = humaneval.write_docs(tmp_path / "docs", ["heapq", "str", "no.such.thing"])
    assert [f.name for f in files] == ["heapq.txt", "str.txt"]
    assert "heappush" in files[0].read_text() and "\b" not in files[0].read_text()
    humaneval.ensure_docs_collection("py-test", topics=["heapq", "bisect"])
    humaneval.ensure_docs_collection("py-test", topics=["heapq", "bisect"])  # nothing to redo
    found = retrieval.get_retriever(Context(retriever="qdrant", collection="py-test", k=2)).invoke(
        "push an item onto a heap and keep the heap invariant"
    )
    assert found and "heapq" in found[0].metadata["source"]
