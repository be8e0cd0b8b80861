"""Retrieval Augmented Thoughts (RAT) as a LangGraph agent.

The public surface; everything else is imported by its full path (see the README's
"How it works").
"""

from rat_agent.agent.context import Context
from rat_agent.agent.graph import build_graph
from rat_agent.agent.tool import as_tool
from rat_agent.errors import (
    ConfigError,
    ModelError,
    RatError,
    RequestRejected,
    RetrievalError,
    UnusableReply,
)

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
