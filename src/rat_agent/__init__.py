"""Retrieval Augmented Thoughts (RAT) as a LangGraph agent."""

from rat_agent.context import Context
from rat_agent.errors import (
    ConfigError,
    ModelError,
    RatError,
    RequestRejected,
    RetrievalError,
    UnusableReply,
)
from rat_agent.graph import build_graph

__all__ = ["ConfigError", "Context", "ModelError", "RatError", "RequestRejected", "RetrievalError",
           "UnusableReply", "build_graph"]
