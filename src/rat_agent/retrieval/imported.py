"""Any LangChain retriever the user already has, named `package.module:attribute`."""

from __future__ import annotations

from typing import cast

from langchain_core.retrievers import BaseRetriever

from rat_agent.providers import imports


def import_retriever(path: str, *, k: int) -> BaseRetriever:
    """The `BaseRetriever` at `path`, or the one a function (or class) there returns.

    A callable that takes a `k` argument is given the run's `k`; documents beyond `k` are
    dropped by the retrieve step either way.
    """
    return cast(BaseRetriever, imports.load(path, BaseRetriever, "retriever", k=k))
