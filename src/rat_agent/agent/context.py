"""Per-run settings. Studio builds its configuration panel from these fields and descriptions."""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from rat_agent.agent import prompts
from rat_agent.errors import ConfigError
from rat_agent.retrieval.settings import (
    DEFAULT_COLLECTION,
    DEFAULT_RETRIEVER,
    check_collection_name,
)
from rat_agent.text import FALSE, TRUE, typed

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from rat_agent.agent.state import State

Method = Literal["rat", "rag", "cot", "direct", "react"]
Draft = Literal["auto", "cot", "sourced", "direct", "rag"]
# The choices a run resolves once, when it starts (RatNodes.resolve): "auto" is the model's
# profile (providers/profiles.py) or the paper's default.
CHOICES: dict[str, Any] = {"method": Method, "draft": Draft}

ENV_PREFIX = "RAT_"
THOUGHTS = "thoughts"  # the thought memory's collection where a run only turns memory on
RANGES: dict[str, tuple[float, float]] = {
    "k": (1, 20),
    "max_steps": (1, 32),
    "temperature": (0.0, 2.0),
    "max_tokens": (16, 8192),
    "speculate": (0, 32),
}


def _prompt(default: str, what: str) -> Any:
    return field(default=default, metadata={"description": what})


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
            "description": "'rat' (the method: draft a chain of thought, then check and revise "
            "it step by step against the source); the paper's baselines on the same model, "
            "source and budgets: 'direct' (answer only), 'cot' (the draft only), 'rag' (one "
            "retrieval with the task, then answer); 'react' (the tool-calling agent a "
            "LangGraph user would build instead, with the retriever as its one tool, at most "
            "rat's calls: 2 max_steps + 1)."
        },
    )
    # Studio shows a model picker for a field marked so (as LangGraph's templates mark theirs).
    model: Annotated[str, {"__template_metadata__": {"kind": "llm"}}] = field(
        default="local",
        metadata={
            "description": "Chat model: 'local' (bundled Qwen2.5-Coder-1.5B), 'local-tiny' "
            "(SmolLM2-135M, for plumbing tests), any LangChain 'provider:model', "
            "e.g. 'openai:gpt-4o-mini', or your own as 'package.module:attribute'."
        },
    )
    retriever: str = field(
        default=DEFAULT_RETRIEVER,
        metadata={
            "description": "Knowledge source each step is checked against: 'qdrant' (your "
            "documents, see `collection`), 'tavily' (web search snippets, TAVILY_API_KEY), "
            "'tavily-pages' (each result's page, its passages closest to the query), "
            "without a key 'searxng' (your instance, SEARXNG_URL) and 'duckduckgo', each with "
            "a '-pages' form too, a "
            "source an installed domain plug-in names (the default is the bundled domain's "
            f"offline corpus, {DEFAULT_RETRIEVER!r}; docs/sources.md), or any "
            "LangChain retriever as 'package.module:attribute'."
        },
    )
    collection: str = field(
        default=DEFAULT_COLLECTION,
        metadata={
            "description": "Qdrant collection searched by retriever 'qdrant' "
            "(filled by `rat ingest`)."
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
    draft: Draft = field(
        default="auto",
        metadata={
            "description": "'cot': a zero-shot chain of thought, as the paper drafts; "
            "'sourced': the same, written with the passages closest to the task shown (one "
            "more retrieval); 'direct', 'rag': that method's answer, each paragraph a step, "
            "and the checked paragraphs are the response (no call rewrites them); "
            "'auto': where the run writes an answer, the draft its source "
            "declares (`rat ingest --draft`), else the model's profile's (the bundled "
            "model's: 'rag'), else 'cot'."
        },
    )
    temperature: float = field(
        default=0.0,
        metadata={"description": "Sampling temperature of every model call (0-2)."},
    )
    max_tokens: int = field(
        default=512,
        metadata={"description": "Most tokens the model may write in one reply (16-8192)."},
    )
    speculate: int = field(
        default=0,
        metadata={
            "description": "Steps checked ahead while a step is checked, on the guess that "
            "the steps before them stay as drafted (0-32; 0: one step after another). The "
            "result is the same: a call made ahead answers the loop only if its prompt is "
            "the one the loop sends. A wrong guess costs its calls; on a model that takes "
            "calls in parallel (an API) the right ones save their time."
        },
    )
    review_draft: bool = field(
        default=False,
        metadata={
            "description": "Pause after the draft so a person can edit, add or delete steps "
            "before they are checked (needs a checkpointer; resume with the edited steps)."
        },
    )
    memory: str = field(
        default="",
        metadata={
            "description": "Thought memory (Thought-Retriever): the Qdrant collection of "
            f"thoughts, e.g. {THOUGHTS!r}, one per user or project (`rat memory list` shows "
            "it). Every step also retrieves thoughts of earlier runs from it, and this run's "
            "confident, novel conclusions are stored there for later ones. '': off.",
            "bare": THOUGHTS,  # what `--memory` alone means
        },
    )
    repair: str = field(
        default="auto",
        metadata={
            "description": "Plan repair, an extension of the loop for plans: a step's "
            "missing prerequisites are inserted as steps and checked in turn. 'auto': the "
            "one a domain plug-in registers for the domain the source declares, else "
            "'off'; 'off' (the paper's loop); an installed "
            "plug-in's by name; or your own as 'package.module:attribute' (a function "
            "returning a rat_agent.repair.Repair)."
        },
    )
    system_prompt: str = _prompt(
        prompts.SYSTEM, "The system message of every model call, of every method."
    )
    draft_prompt: str = _prompt(
        prompts.DRAFT,
        "The instruction that drafts the chain of thought, after the task; {max_steps} is "
        "replaced by max_steps.",
    )
    # An empty prompt skips its call; the shipped one leaves that choice to the run, so a
    # client sending every default back (as Studio may) changes nothing.
    query_prompt: str = _prompt(
        prompts.QUERY,
        "The instruction that writes a step's search query, after the task, the revised "
        "steps and the current step. Empty: the step's own text is its query, with no call. "
        "As shipped: the model's profile may query an answer draft's paragraphs by their "
        "text (the bundled model's does).",
    )
    revise_prompt: str = _prompt(
        prompts.REVISE,
        "The instruction that revises a step, after the task, the revised steps, the "
        "documents and the current step: the reply is the revised step.",
    )
    answer_prompt: str = _prompt(
        prompts.ANSWER,
        "The instruction that writes the response from the revised steps. Empty: the revised "
        "steps are the response (a plan), with no call. As shipped: a run with plan repair "
        "answers with its steps.",
    )

    def retrieves(self) -> bool:
        """Whether the method reads the knowledge source at all (direct and cot do not)."""
        return self.method not in ("direct", "cot")

    def __post_init__(self) -> None:
        given: frozenset[str] = getattr(self, "_given", frozenset())
        from_env = []
        for f in fields(self):
            if f.default is MISSING or f.name in given:
                continue
            env = os.environ.get(ENV_PREFIX + f.name.upper())
            if env is not None:
                where = f"environment variable {ENV_PREFIX}{f.name.upper()}"
                setattr(self, f.name, typed(env, type(f.default), where))
                from_env.append(f.name)
        self.memory = _memory(self.memory)
        try:
            self.validate()
        except ConfigError as exc:  # a bad value set in the environment: say where it is
            named = [n for n in from_env if str(exc).startswith((f"{n} ", f"the {n} "))]
            if named:
                where = f"{ENV_PREFIX}{named[0].upper()}"
                raise ConfigError(f"{exc} (from the environment variable {where})") from None
            raise

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
        for name, kind in CHOICES.items():
            choices = get_args(kind)
            if getattr(self, name) not in choices:
                raise ConfigError(
                    f"{name} must be one of {', '.join(choices)}, got {getattr(self, name)!r}"
                )
        if not isinstance(self.review_draft, bool):
            raise ConfigError(f"review_draft must be true or false, got {self.review_draft!r}")
        for f in fields(self):  # a request's JSON may hold any type where text belongs
            if isinstance(f.default, str) and not isinstance(getattr(self, f.name), str):
                raise ConfigError(f"{f.name} must be text, got {getattr(self, f.name)!r}")
        for name in ("model", "retriever", "system_prompt", "draft_prompt", "revise_prompt"):
            if not str(getattr(self, name)).strip():
                raise ConfigError(f"{name} must not be empty")
        if not self.repair.strip():  # a name is checked against the plug-ins when a run starts
            raise ConfigError("repair must not be empty")
        check_collection_name(self.collection, "collection")
        if self.memory:
            check_collection_name(self.memory, "memory")
        if self.memory and not self.retrieves():
            raise ConfigError(f"memory needs a method that retrieves; {self.method!r} does not")

    @classmethod
    def restore(cls, saved: dict[str, Any]) -> Context:
        """The context a run saved when it started (`State.settings`), its choices resolved;
        fields it does not know are left out (a checkpoint of an older release)."""
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in _older(saved).items() if name in known})


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context as given; a run started without one gets the defaults (and
    environment)."""
    if runtime is None or runtime.context is None:
        return Context()
    return runtime.context


def settings_of(state: State, runtime: Runtime[Context] | None) -> Context:
    """The settings the run started with, its "auto" choices resolved (`State.settings`), so
    a resumed or replayed run goes on as it began."""
    saved = state.get("settings")
    if saved:
        try:
            return Context.restore(saved)
        except ConfigError:  # a checkpoint of an older release: the run's context
            pass
    return context_of(runtime)


def _memory(value: Any) -> Any:
    """memory as a switch (true, "on", "0") names the default collection or none, as
    RAT_MEMORY=1 and a client of an older release's `"memory": true` mean."""
    if isinstance(value, bool) or (isinstance(value, str) and value.lower() in TRUE | FALSE):
        return THOUGHTS if str(value).lower() in TRUE else ""
    return value


# An older release's settings, as its clients and checkpoints send them: an empty prompt now
# says what output "steps" and query_mode "text" said (the prompt a value empties, or "").
OLDER = {
    "output": {"auto": "", "answer": "", "steps": "answer_prompt"},
    "query_mode": {"auto": "", "llm": "", "text": "query_prompt"},
}


def _older(values: dict[str, Any]) -> dict[str, Any]:
    values = dict(values)
    if values.get("memory") is True:  # memory on, in memory_collection
        values["memory"] = values.pop("memory_collection", THOUGHTS)
    for name, empties in OLDER.items():
        if name not in values:
            continue
        if (value := values.pop(name)) not in empties:
            raise ConfigError(f"{name} must be one of {', '.join(empties)}, got {value!r}")
        if empties[value]:
            values[empties[value]] = ""
    return values


_dataclass_init = Context.__init__
SETTINGS = frozenset(f.name for f in fields(Context))


def _init(self: Context, **given: Any) -> None:
    # The generated __init__ cannot tell a value given from its default; the environment
    # must fill only what was not given (LangGraph builds the context as Context(**values)).
    given = _older(given)
    if unknown := sorted(set(given) - SETTINGS):
        raise ConfigError(
            f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: "
            f"the settings are {', '.join(sorted(SETTINGS))}"
        )
    object.__setattr__(self, "_given", frozenset(given))
    _dataclass_init(self, **given)


Context.__init__ = _init  # type: ignore[method-assign]
