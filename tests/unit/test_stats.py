"""RunStats counts a run's model calls in all and by kind of call."""

from __future__ import annotations

from fakes import ListRetriever, plan_model, wiki_docs

from rat_agent import build_graph
from rat_agent.providers.stats import RunStats


def test_calls_are_counted_in_all_and_by_kind() -> None:
    stats = RunStats()
    graph = build_graph(
        llm=plan_model("STEP 1: get logs\nSTEP 2: make planks"),
        retriever=ListRetriever(documents=wiki_docs(2)),
    )
    graph.invoke({"question": "How?"}, {"callbacks": [stats]}, context={"answer_prompt": ""})
    kinds = {name: usage.model_calls for name, usage in stats.by_call.items()}
    assert kinds == {"draft": 1, "query": 2, "revise": 2}
    assert stats.summary()["model_calls"] == 5
