"""The paper's baselines as modes of one graph: same model, retriever and budgets."""

from __future__ import annotations

from typing import Any

from fakes import ListRetriever, ScriptedModel, current_step, prompt_text, revision, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent import build_graph

DRAFT = "STEP 1: get logs\nSTEP 2: make planks\nSTEP 3: craft a table"
QUESTION = "How do I make a crafting table?"


def model() -> ScriptedModel:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return DRAFT
        if kind == "direct":
            return "Craft it from four planks."
        if kind == "rag":
            return "STEP 1: chop a log\nSTEP 2: craft 4 planks\nSTEP 3: craft the table"
        if kind == "query":
            return f"about: {current_step(messages)}"
        if kind == "revise":
            return revision(messages, f"FIXED {current_step(messages)}")
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def run(method: str, **context: Any) -> tuple[dict[str, Any], ScriptedModel, ListRetriever]:
    """A method's run on a plan, its steps the answer (a written answer: the tests below)."""
    fake, retriever = model(), ListRetriever(documents=wiki_docs(3))
    result = build_graph(llm=fake, retriever=retriever).invoke(
        {"question": QUESTION}, context={"method": method, "k": 2, "answer_prompt": "", **context}
    )
    return result, fake, retriever


def kinds(fake: ScriptedModel) -> list[str]:
    return [kind for kind, _ in fake.calls]


def test_direct_is_one_call_and_no_retrieval() -> None:
    result, fake, retriever = run("direct")
    assert kinds(fake) == ["direct"] and retriever.queries == []
    assert result["answer"] == "Craft it from four planks." and result["steps"] == []


def test_cot_is_the_draft_alone() -> None:
    result, fake, retriever = run("cot")
    assert kinds(fake) == ["draft"] and retriever.queries == []
    assert result["answer"] == DRAFT and result["steps"] == []


def test_rag_retrieves_once_with_the_task() -> None:
    result, fake, retriever = run("rag")
    assert kinds(fake) == ["rag"] and retriever.queries == [QUESTION]
    prompt = prompt_text(fake.calls[0][1])
    assert prompt.count("[1] Page 1") == 1 and "[3] Page 3" not in prompt  # k=2
    assert result["answer"] == "STEP 1: chop a log\nSTEP 2: craft 4 planks\nSTEP 3: craft the table"
    assert [len(s["sources"]) for s in result["steps"]] == [2]  # its reply, and its sources


def test_every_method_has_the_same_output_shape() -> None:
    for method in ("direct", "cot", "rag", "rat"):
        result, _, _ = run(method)
        assert set(result) == {"question", "answer", "steps", "thoughts", "passages", "messages"}, (
            method
        )
        assert result["messages"][-1].text.startswith(result["answer"]), method
        assert result["answer"], method


def test_output_answer_ends_every_method_with_a_written_response() -> None:
    """Code needs the final response, not the steps: each method with steps writes one;
    RAG's reply is its answer, as DIRECT's is."""
    expected = {
        "direct": ["direct"],
        "cot": ["draft", "answer"],
        "rag": ["rag"],
        "rat": ["draft"] + ["query", "revise"] * 3 + ["answer"],
    }
    for method, calls in expected.items():
        fake, retriever = model(), ListRetriever(documents=wiki_docs(3))
        fake.respond = answering(fake.respond)
        result = build_graph(llm=fake, retriever=retriever).invoke(
            {"question": QUESTION}, context={"method": method, "k": 2}
        )
        assert kinds(fake) == calls, method
        if method == "direct":
            assert result["answer"] == "Craft it from four planks."
            continue
        if method == "rag":
            assert result["answer"].startswith("STEP 1: chop a log")
            continue
        assert result["answer"] == "def final(): ...", method
        written = prompt_text(fake.calls[-1][1])
        # cot's steps were never checked, so its answer prompt does not call them checked
        label = "Steps:\n" if method == "cot" else "Checked steps so far:\n"
        assert label in written and "STEP 3:" in written, method


def test_code_in_the_steps_reaches_the_written_answer_as_written() -> None:
    """A draft's code keeps its indentation and comments on its way to the answer prompt."""
    code = "```python\nfor x in xs:\n    # add it\n    total += x\n```"
    fake = model()
    draft = fake.respond
    fake.respond = answering(
        lambda kind, messages: (
            f"STEP 1: Sum the list.\n{code}\nSTEP 2: Return the total."
            if kind == "draft"
            else draft(kind, messages)
        )
    )
    build_graph(llm=fake, retriever=ListRetriever(documents=wiki_docs(3))).invoke(
        {"question": QUESTION}, context={"method": "cot"}
    )
    assert f"STEP 1: Sum the list.\n{code}\nSTEP 2:" in prompt_text(fake.calls[-1][1])


def answering(respond: Any) -> Any:
    def wrapped(kind: str, messages: list[BaseMessage]) -> str:
        return "def final(): ..." if kind == "answer" else str(respond(kind, messages))

    return wrapped


def test_baselines_retry_a_failing_source_as_rat_does() -> None:
    from langgraph.types import RetryPolicy

    fast = RetryPolicy(
        max_attempts=3, initial_interval=0.01, jitter=False, retry_on=lambda exc: True
    )
    for method in ("rag",):
        failures = iter([True, True])
        retriever = ListRetriever(
            documents=wiki_docs(3), fail=lambda q, failures=failures: next(failures, False)
        )
        graph = build_graph(llm=model(), retriever=retriever, retrieval_retry=fast)
        steps = {"method": method, "k": 2, "answer_prompt": ""}
        result = graph.invoke({"question": QUESTION}, context=steps)
        assert len(retriever.queries) == 3 and len(set(retriever.queries)) == 1
        assert all(len(s["sources"]) == 2 for s in result["steps"])
        # a source that never answers: the baseline answers without documents, and says so
        down = ListRetriever(documents=wiki_docs(3), fail=lambda q: True)
        graph = build_graph(llm=model(), retriever=down, retrieval_retry=fast)
        result = graph.invoke({"question": QUESTION}, context=steps)
        assert len(down.queries) == 3 and result["answer"]
        assert all(s["sources"] == [] for s in result["steps"])
