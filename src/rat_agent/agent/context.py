"""Per-run settings. Studio builds its configuration panel from these fields and descriptions."""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, get_args

from rat_agent.errors import ConfigError
from rat_agent.retrieval.settings import DEFAULT_COLLECTION, check_collection_name

QueryMode = Literal["llm", "text"]
ReviseScope = Literal["step", "prefix"]
Output = Literal["auto", "steps", "answer"]
MinecraftSource = Literal["offline", "wiki", "auto"]
Method = Literal[
    "rat", "rat_noncausal", "rat_official_layout", "cot_rag", "rag", "cot", "direct", "react"
]
MemoryFrom = Literal["both", "steps", "answer"]
Evidence = Literal["passages", "documents"]
Revision = Literal["auto", "grounded", "plain"]
ReplyFormat = Literal["auto", "json", "text"]
Draft = Literal["auto", "cot", "answer", "sourced", "goal"]
REPAIRS = ("auto", "off", "general", "minecraft")

ENV_PREFIX = "RAT_"
RANGES: dict[str, tuple[float, float]] = {
    "k": (1, 20),
    "max_steps": (1, 32),
    "temperature": (0.0, 2.0),
    "max_tokens": (16, 8192),
    "doc_chars": (100, 20000),
    "evidence_tokens": (0, 8000),  # 0: the source's own budget; else at least 50
    "repair_steps": (0, 64),
    "min_support": (0.0, 1.0),
    "sourced_support": (0.0, 1.0),
    "fact_choices": (1, 50),
    "memory_k": (0, 20),
    "memory_min_score": (0.0, 1.0),
    "memory_novelty": (0.0, 1.0),
    "max_calls": (1, 64),
}


@dataclass(kw_only=True)
class Context:
    """How one RAT run behaves.

    A value comes from the run's `context` first, then from the environment variable
    `RAT_<FIELD>` (for example `RAT_MODEL`), then from the default. A value given is
    given even when it equals the default: with RAT_K=5 set, `Context(k=3)` has k=3.
    """

    method: Method = field(
        default="rat",
        metadata={
            "description": "'rat' (the method); the paper's baselines on the same model, "
            "retriever and budgets: 'direct' (answer only), 'cot' (the draft only), 'rag' "
            "(one retrieval with the task, then answer), 'cot_rag' (one retrieval with the "
            "whole draft, one revision), 'rat_noncausal' (queries from the unrevised draft); "
            "'rat_official_layout' (RAT prompted as the official code: documents first, "
            "whole answer rewritten each step); 'react' (the tool-calling agent a LangGraph "
            "user would build instead, with the retriever as its one tool; see max_calls)."
        },
    )
    max_calls: int = field(
        default=16,
        metadata={
            "description": "Method 'react': the most model calls the agent makes (1-64); "
            "the last is made without the tool, so the agent answers."
        },
    )
    model: str = field(
        default="local",
        metadata={
            "description": "Chat model: 'local' (bundled Qwen2.5-Coder-1.5B), 'local-tiny' "
            "(SmolLM2-135M, for plumbing tests), any LangChain 'provider:model', "
            "e.g. 'openai:gpt-4o-mini', or your own as 'package.module:attribute'."
        },
    )
    retriever: str = field(
        default="minecraft",
        metadata={
            "description": "Knowledge source used to check every thought step: 'minecraft', "
            "'qdrant' (your documents, see `collection`), 'tavily' (web search, needs "
            "TAVILY_API_KEY) or any LangChain retriever as 'package.module:attribute'."
        },
    )
    collection: str = field(
        default=DEFAULT_COLLECTION,
        metadata={
            "description": "Qdrant collection searched by retriever 'qdrant' "
            "(filled by `rat ingest`)."
        },
    )
    source: MinecraftSource = field(
        default="offline",
        metadata={
            "description": "Where retriever 'minecraft' looks: 'offline' (bundled corpus), "
            "'wiki' (the live Minecraft Wiki, MINECRAFT_WIKI_API) or 'auto' (the wiki when "
            "it answers, else offline)."
        },
    )
    fetch_pages: bool = field(
        default=False,
        metadata={
            "description": "Retriever 'tavily': fetch each result's page and keep its "
            "passages closest to the query, instead of the search snippet."
        },
    )
    k: int = field(
        default=3,
        metadata={"description": "Documents retrieved for each thought step (1-20)."},
    )
    max_steps: int = field(
        default=8,
        metadata={
            "description": "Most thought steps revised (1-32); a longer draft has its tail "
            "merged into the last step, never dropped."
        },
    )
    query_mode: QueryMode = field(
        default="llm",
        metadata={
            "description": "'llm': the model writes a short search query for each step; "
            "'text': the step's own text is the query (no model call)."
        },
    )
    revise_scope: ReviseScope = field(
        default="step",
        metadata={
            "description": "'step': rewrite the current step only, with the revised past as "
            "context; 'prefix': rewrite the whole answer so far, as the paper's formula does."
        },
    )
    output: Output = field(
        default="auto",
        metadata={
            "description": "'steps': the revised steps are the answer (a plan); 'answer': a "
            "final call writes the full response from them, with the lines they quoted and "
            "the passages closest to the task (how-to questions, code, long writing); "
            "'auto': steps for a source whose plans are checked step by step (the Minecraft "
            "corpus, or any run with plan repair named), the answer otherwise."
        },
    )
    review_draft: bool = field(
        default=False,
        metadata={
            "description": "Pause after the draft so a person can edit, add or delete steps "
            "before they are checked (needs a checkpointer; resume with the edited steps)."
        },
    )
    temperature: float = field(
        default=0.0,
        metadata={"description": "Sampling temperature of every model call (0-2)."},
    )
    max_tokens: int = field(
        default=512,
        metadata={"description": "Most tokens the model may write in one reply."},
    )
    doc_chars: int = field(
        default=1200,
        metadata={
            "description": "Most characters of each retrieved document shown to the model; "
            "tight context keeps prompts fast on small local models."
        },
    )

    evidence: Evidence = field(
        default="passages",
        metadata={
            "description": "What of the retrieved documents the model reads: 'passages' (the "
            "passages closest to the step's query and draft, within evidence_tokens, each "
            "with its document's title and source) or 'documents' (each document whole, cut "
            "to doc_chars)."
        },
    )
    # 0: on redis.conf, 150 tokens held the setting a question needs for 46% of its keys
    # (tune split), 600 for 87% (benchmarks/docs_recall.py); the Minecraft wiki keeps the
    # 150 its figures were tuned and measured at.
    evidence_tokens: int = field(
        default=0,
        metadata={
            "description": "Token budget of the passages shown for one step or one "
            "retrieval (evidence 'passages'; 50-8000). 0: the source's own (a retriever's "
            "metadata 'rat_evidence_tokens'; the Minecraft retrievers say 150), else 600."
        },
    )
    revision: Revision = field(
        default="auto",
        metadata={
            "description": "'grounded': the revision first quotes the one passage that bears "
            "on the step, then writes the step from it (no passage that bears on it keeps the "
            "step as drafted); 'plain': it writes the revised step only, as the paper does; "
            "'auto': grounded."
        },
    )
    repair: str = field(
        default="auto",
        metadata={
            "description": "Plan repair, an extension of the loop for plans (output 'steps', "
            "grounded revisions): 'minecraft' (crafting rules: a counted ledger of what "
            "steps make and use, the goal, prerequisites inserted as steps, steps dropped); "
            "'general' (a prerequisite the revision names, supported by a passage and made "
            "by no earlier step, is inserted as a step; nothing is dropped); 'off' (the "
            "paper's loop); 'auto': the source's own, i.e. 'minecraft' for the Minecraft "
            "retriever (or a retriever whose metadata says rat_domain 'minecraft'), 'off' "
            "for every other source; or your own, as 'package.module:attribute' "
            "(a function returning a rat_agent.repair.Repair)."
        },
    )

    def retrieves(self) -> bool:
        """Whether the method reads the knowledge source at all (direct and cot do not)."""
        return self.method not in ("direct", "cot")

    def grounded(self) -> bool:
        """Whether revisions quote a passage before they write the step."""
        return self.revision != "plain"

    def quotes_each_step(self) -> bool:
        """Whether each step is revised alone against a quote: plan repair builds on it (a
        prefix rewrite and the official layout quote nothing)."""
        return (
            self.grounded() and self.revise_scope == "step" and self.method != "rat_official_layout"
        )

    reply_format: ReplyFormat = field(
        default="auto",
        metadata={
            "description": "How a grounded revision replies: 'json' (a JSON schema the server "
            "enforces, its quote chosen among the passages), 'text' (labelled lines, for any "
            "model), or 'auto' (json for the bundled local models, text otherwise)."
        },
    )
    min_support: float = field(
        default=0.4,
        metadata={
            "description": "Plan repair ('minecraft'): a draft step whose best retrieved "
            "passage is less similar to it than this (embedding cosine) is dropped: the "
            "sources say nothing about it (0 keeps every step; 0-1)."
        },
    )
    draft: Draft = field(
        default="auto",
        metadata={
            "description": "'auto': for method rat, 'answer' where the task holds a code "
            "block, its passages do not bear on it (sourced_support), or the source gives "
            "every name the model's own answer uses (each looked up: one search, at most 8), "
            "else 'sourced'; 'cot' for the baselines, the ablations and plans (plan repair "
            "on, or the Minecraft source). 'cot' drafts a "
            "chain of thought, as the paper does; 'answer' "
            "drafts the reply the model gives when asked directly, the paper's 'draft response "
            "itself': its paragraphs, list items and code blocks are the steps, and the answer "
            "is that reply with each part revised (output 'auto'); 'sourced' is 'answer' "
            "written from the passages closest to the question (the reply method rag gives), "
            "each part then checked as in 'answer'; 'goal' (plan "
            "repair 'minecraft') asks only what the task asks for and drafts one step that "
            "gets it, so plan repair writes the steps before it from the sources (for a "
            "model whose own drafts are mostly invented)."
        },
    )
    # On the tune split the docs questions' best passage scores at least 0.47 on their own
    # source (redis.conf) and at most 0.42 on an unrelated one (benchmarks/task_support.py).
    sourced_support: float = field(
        default=0.45,
        metadata={
            "description": "Draft 'auto' (method rat): the draft may be the reply written "
            "from the passages closest to the task ('sourced') only where the best of them is "
            "at least this similar to it (embedding cosine); else it is the model's own "
            "answer (0-1)."
        },
    )
    stop_at_goal: bool = field(
        default=True,
        metadata={
            "description": "Plan repair ('minecraft'): one call names what the task asks "
            "for; draft steps after the first one that says to make or get it, and steps "
            "after a checked step that makes it, are dropped unchecked: the plan ends where "
            "the task is done."
        },
    )
    reach_goal: bool = field(
        default=True,
        metadata={
            "description": "Plan repair ('minecraft'): when the steps run out and none makes "
            "what the task asks for, one more step 'Get <goal>.' is appended and checked like "
            "a step plan repair inserts (its prerequisites are inserted before it), once, "
            "within repair_steps."
        },
    )
    fact_choices: int = field(
        default=1,
        metadata={
            "description": "Plan repair: a JSON revision quotes one of this many passages "
            "that match its step best (1: the best one, so the step is written from the "
            "passage the similarity ranking puts first; more lets the model choose; 1-50)."
        },
    )
    repair_steps: int = field(
        default=48,
        metadata={
            "description": "Plan repair: most steps one run may insert for prerequisites a "
            "revision names and no earlier step made (each inserted step is checked in "
            "turn); 0 inserts none (0-64)."
        },
    )

    reuse_repairs: bool = field(
        default=True,
        metadata={
            "description": "Plan repair: a step checked again after its prerequisites is "
            "written from its own first revision, and a prerequisite inserted again for the "
            "same thing from the step that resolved it before, with its quote and sources, "
            "scaled to the amount, with no retrieval or model call; what it needs is still "
            "checked and inserted."
        },
    )

    memory: bool = field(
        default=False,
        metadata={
            "description": "Thought memory (Thought-Retriever): every step also retrieves "
            "checked thoughts of earlier runs, and this run's confident, novel conclusions "
            "are stored for later ones."
        },
    )
    memory_collection: str = field(
        default="thoughts",
        metadata={
            "description": "Qdrant collection of the thought memory: one per user or "
            "project (`rat memory list` shows it)."
        },
    )
    memory_k: int = field(
        default=2,
        metadata={
            "description": "Most thoughts retrieved for each step, besides the k "
            "documents (0-20; 0 stores thoughts without reading them)."
        },
    )
    memory_min_score: float = field(
        default=0.5,
        metadata={
            "description": "Least cosine similarity between a step's query and a "
            "thought for the thought to be retrieved (0-1)."
        },
    )
    memory_novelty: float = field(
        default=0.85,
        metadata={
            "description": "A new thought is stored only if its cosine similarity to "
            "every stored thought and to the nearest documents is below "
            "this (0-1; the paper uses 0.85)."
        },
    )
    memory_from: MemoryFrom = field(
        default="both",
        metadata={
            "description": "What becomes thoughts: 'steps' (each checked step), "
            "'answer' (the question and final answer) or 'both'; one "
            "model call per thought."
        },
    )

    def __post_init__(self) -> None:
        given: frozenset[str] = getattr(self, "_given", frozenset())
        for f in fields(self):
            if f.default is MISSING or f.name in given:
                continue
            env = os.environ.get(ENV_PREFIX + f.name.upper())
            if env is not None:
                setattr(self, f.name, convert(f.name, env, type(f.default)))
        self.validate()

    def validate(self) -> None:
        """Reject bad values here, once, so no node has to guard against them."""
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            whole = isinstance(self.__dataclass_fields__[name].default, int)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{name} must be a number, got {value!r}")
            if whole and not isinstance(value, int):
                if not float(value).is_integer():  # JSON may write 3 as 3.0; 3.5 is no count
                    raise ConfigError(f"{name} must be a whole number, got {value!r}")
                setattr(self, name, value := int(value))
            if not low <= value <= high:  # NaN compares false: refused here too
                raise ConfigError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
        if 0 < self.evidence_tokens < 50:
            raise ConfigError(
                "evidence_tokens must be 0 (the source's own) or 50-8000, "
                f"got {self.evidence_tokens}"
            )
        for name, kind in (
            ("query_mode", QueryMode),
            ("revise_scope", ReviseScope),
            ("output", Output),
            ("source", MinecraftSource),
            ("method", Method),
            ("memory_from", MemoryFrom),
            ("evidence", Evidence),
            ("revision", Revision),
            ("reply_format", ReplyFormat),
            ("draft", Draft),
        ):
            choices = get_args(kind)
            if getattr(self, name) not in choices:
                raise ConfigError(
                    f"{name} must be one of {', '.join(choices)}, got {getattr(self, name)!r}"
                )
        for name in (
            "fetch_pages",
            "review_draft",
            "memory",
            "stop_at_goal",
            "reach_goal",
            "reuse_repairs",
        ):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        for f in fields(self):  # a request's JSON may hold any type where text belongs
            if isinstance(f.default, str) and not isinstance(getattr(self, f.name), str):
                raise ConfigError(f"{f.name} must be text, got {getattr(self, f.name)!r}")
        for name in ("model", "retriever"):
            if not str(getattr(self, name)).strip():
                raise ConfigError(f"{name} must not be empty")
        if self.repair not in REPAIRS and ":" not in str(self.repair):
            raise ConfigError(
                f"repair must be one of {', '.join(REPAIRS)} or 'package.module:attribute', "
                f"got {self.repair!r}"
            )
        check_collection_name(self.collection, "collection")
        check_collection_name(self.memory_collection, "memory_collection")
        if self.memory and not self.retrieves():
            raise ConfigError(f"memory needs a method that retrieves; {self.method!r} does not")


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def convert(name: str, raw: str, kind: type[Any], where: str = "") -> Any:
    """A setting written as text, as its field's type; `where` names it in errors (default:
    the environment variable)."""
    where = where or f"environment variable {ENV_PREFIX}{name.upper()}"
    if kind is bool:  # bool("0") is True
        if raw.strip().lower() in _TRUE | _FALSE:
            return raw.strip().lower() in _TRUE
        raise ConfigError(f"{where}={raw!r} is not true or false")
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{where}={raw!r} is not a valid {kind.__name__}") from None


_dataclass_init = Context.__init__


def _init(self: Context, **given: Any) -> None:
    # The generated __init__ cannot tell a value given from its default; the environment
    # must fill only what was not given (LangGraph builds the context as Context(**values)).
    object.__setattr__(self, "_given", frozenset(given))
    _dataclass_init(self, **given)


Context.__init__ = _init  # type: ignore[method-assign]
