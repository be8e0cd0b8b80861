"""Any LangChain retriever the user already has, named `package.module:attribute`."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from langchain_core.retrievers import BaseRetriever

from rat_agent.errors import ConfigError


def import_retriever(path: str, *, k: int) -> BaseRetriever:
    """The `BaseRetriever` at `path`, or the one a function (or class) there returns.

    A callable that takes a `k` argument is given the run's `k`; documents beyond `k` are
    dropped by the retrieve step either way.
    """
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"retriever {path!r}: write it as 'package.module:attribute'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"retriever {path!r}: cannot import {module_name!r}: {exc}") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(
                f"retriever {path!r}: {module_name!r} has no attribute {attribute!r}"
            ) from None
    if isinstance(target, BaseRetriever):
        return target
    if not callable(target):
        raise ConfigError(f"retriever {path!r} is a {type(target).__name__}, "
                          "not a BaseRetriever or a function returning one")
    try:
        accepts_k = "k" in inspect.signature(target).parameters
    except (TypeError, ValueError):  # some builtins have no signature
        accepts_k = False
    try:
        made = target(k=k) if accepts_k else target()
    except Exception as exc:
        raise ConfigError(f"retriever {path!r} failed to build: {type(exc).__name__}: {exc}"
                          ) from exc
    if not isinstance(made, BaseRetriever):
        raise ConfigError(f"retriever {path!r} returned a {type(made).__name__}, "
                          "not a BaseRetriever")
    return made
