"""What a retriever reads of a run's settings.

A protocol rather than the agent's `Context`, so retrieval sits below the agent: the
agent's `Context` satisfies it, and so does any object with these attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rat_agent.errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.retrievers import BaseRetriever

DEFAULT_COLLECTION = "documents"  # what `rat ingest` fills and retriever "qdrant" searches

# A retriever says which domain its documents are in by this key of its LangChain
# `metadata`; the run's plan repair follows it (context field `repair`, "auto").
DOMAIN_KEY = "rat_domain"
# ... and which draft its tasks want where a run writes an answer and leaves `draft` "auto":
# one of DRAFTS ("sourced", "rag" for facts: a manual, a wiki; "cot", "direct" for code
# documentation); ahead of the model's profile.
DRAFT_KEY = "rat_draft"
DRAFTS = ("cot", "sourced", "direct", "rag")
# ... and how many tokens of passages a step reads from it.
EVIDENCE_KEY = "rat_evidence_tokens"
EVIDENCE_TOKENS = 600  # a source that says nothing
# ... and, for pages that put their main facts first, the cosine a passage gives up per
# place its document is lower in the retrieval and per line further down (evidence.select).
PENALTY_KEY = "rat_position_penalty"
# The source a run reads when it names none: the bundled domain plug-in's offline corpus
# (rat_minecraft), what the offline demo runs.
DEFAULT_RETRIEVER = "minecraft"
DOC_CHARS = 1200  # what a web retriever keeps of a page: the passages a prompt can show


def check_collection_name(name: str, what: str = "collection") -> str:
    """A Qdrant collection name, or ConfigError saying why not (Qdrant's own rules, checked
    up front so the error is one line of bad input, not a failed store)."""
    if not name.strip():
        raise ConfigError(f"the {what} name is empty")
    # The embedded store keeps a collection in a folder of that name: no path may come of it.
    if any(c in name for c in "/\\\0") or name.startswith(".") or len(name) > 255:
        raise ConfigError(
            f"the {what} name {name!r} cannot be used: no '/' or '\\', not starting with "
            "'.', and at most 255 characters"
        )
    return name


class RetrieverSettings(Protocol):
    """The run settings retrievers are built from (see `rat_agent.agent.context`)."""

    @property
    def retriever(self) -> str: ...

    @property
    def k(self) -> int: ...

    @property
    def collection(self) -> str: ...


@dataclass(frozen=True)
class Source:
    """A named knowledge source: how to build its retriever from a run's settings, and
    the environment variables it reads (a change of one builds it anew). A plug-in's
    entry point in "rat_agent.retrievers" names a Source or a plain build function."""

    build: Callable[[RetrieverSettings], BaseRetriever]
    environment: tuple[str, ...] = ()
