"""Knowledge sources: a registry that builds the retriever a run's settings name.

Exports load on first use, so importing the settings (the agent's Context does) costs no
LangChain or Qdrant import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rat_agent.retrieval.registry import (
        FACTORIES,
        check_retriever,
        clear_cache,
        get_retriever,
    )
    from rat_agent.retrieval.settings import RetrieverSettings

__all__ = ["FACTORIES", "RetrieverSettings", "check_retriever", "clear_cache", "get_retriever"]
_HOME = {name: "registry" for name in __all__} | {"RetrieverSettings": "settings"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
