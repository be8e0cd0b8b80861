"""Retrieval Augmented Thoughts (RAT) as a LangGraph agent.

The public surface; everything else is imported by its full path (see the README's "How it
works"). Exports load on first use: `import rat_agent` compiles no graph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rat_agent.agent.context import Context
    from rat_agent.agent.graph import build_graph
    from rat_agent.errors import (
        ConfigError,
        ModelError,
        RatError,
        RequestRejected,
        RetrievalError,
        UnusableReply,
    )
    from rat_agent.tool import as_tool

_HOME = {
    "Context": "rat_agent.agent.context",
    "build_graph": "rat_agent.agent.graph",
    "as_tool": "rat_agent.tool",
    **dict.fromkeys(
        (
            "ConfigError",
            "ModelError",
            "RatError",
            "RequestRejected",
            "RetrievalError",
            "UnusableReply",
        ),
        "rat_agent.errors",
    ),
}
__all__ = [
    "ConfigError",
    "Context",
    "ModelError",
    "RatError",
    "RequestRejected",
    "RetrievalError",
    "UnusableReply",
    "as_tool",
    "build_graph",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
