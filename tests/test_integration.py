"""End to end on the real stack: the tiny local model served by xllamacpp, the real corpus."""

from __future__ import annotations

import pytest

from rat_agent import build_graph
from rat_agent.stats import RunStats

pytestmark = pytest.mark.integration


def test_tiny_model_runs_rat_end_to_end() -> None:
    stats = RunStats()
    result = build_graph().invoke(
        {"question": "How do I obtain a crafting table in Minecraft?"},
        {"callbacks": [stats]},
        context={"model": "local-tiny", "retriever": "minecraft", "max_steps": 2,
                 "max_tokens": 48, "k": 2},
    )
    steps = result["steps"]
    assert 1 <= len(steps) <= 2
    assert result["answer"].startswith("STEP 1:")
    for step in steps:
        assert step["query"]
        assert len(step["sources"]) == 2
        assert all(s["source"].startswith("minecraft-corpus:") for s in step["sources"])
        assert step["revised"]
    usage = stats.usage
    assert usage.model_calls == 1 + 2 * len(steps)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    # the stable-prefix layout lets the server reuse its KV cache across calls
    assert usage.cached_prompt_tokens > 0
