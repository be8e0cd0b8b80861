"""Retrieval Augmented Thoughts (RAT) as a LangGraph agent."""

from rat_agent.context import Context
from rat_agent.errors import ConfigError, ModelError, RatError, RetrievalError
from rat_agent.graph import build_graph

__all__ = ["ConfigError", "Context", "ModelError", "RatError", "RetrievalError", "build_graph"]
