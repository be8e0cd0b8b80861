"""Deterministic stand-ins for a chat model and a retriever, recording what they were given."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from pydantic import Field


def prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def kind_of(tags: list[str] | None) -> str:
    """Which call this is, by the tag the node gives it ("rat:revise"), not by its wording."""
    kinds = [tag.removeprefix("rat:") for tag in tags or [] if tag.startswith("rat:")]
    assert len(kinds) == 1, f"a model call without one rat:<call> tag: {tags}"
    return kinds[0]


def current_step(messages: list[BaseMessage]) -> str:
    text = prompt_text(messages)
    marker = "draft):\n" if "draft):\n" in text else "Draft of STEP"
    body = text.rsplit(marker, 1)[1]
    if marker == "Draft of STEP":
        body = body.split(":\n", 1)[1]
    return body.split("\n\n", 1)[0]


def revision(messages: list[BaseMessage], text: str) -> str:
    """A reply to a revision prompt that rewrites the step as `text`: for the grounded
    revision (the default for plans), the line shown that shares most words with the step
    is quoted first (the first line, when none shares any)."""
    prompt = prompt_text(messages)
    if "FACT:" not in prompt and '"fact"' not in prompt:
        return text  # the paper's plain revision
    import re

    from rat_agent.terms import words

    shown = re.findall(r"^\d+[a-z]+\. .*$", prompt, re.MULTILINE)
    step = set(words(current_step(messages))) if "draft):\n" in prompt else set()
    best = max(shown, key=lambda line: len(step & set(words(line))), default="NONE")
    return f"FACT: {best}\nSTEP: {text}"


class ScriptedModel(BaseChatModel):
    """Answers each prompt with `respond(kind, messages)`; records every call."""

    respond: Callable[[str, list[BaseMessage]], str]
    calls: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)
    # each call's options (response_format, extra_body) beside the message it ends with
    options: list[dict[str, Any]] = Field(default_factory=list)
    # like max_tokens: a longer reply is cut there and says so, as a server's does
    limit: int | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kind = kind_of(run_manager.tags if run_manager else None)
        self.calls.append((kind, messages))
        self.options.append({"last": messages[-1], **kwargs})
        text = self.respond(kind, messages)
        cut = self.limit is not None and len(text) > self.limit
        metadata = {"finish_reason": "length" if cut else "stop"}
        message = AIMessage(content=text[: self.limit] if cut else text, response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])


def plan_model(draft: str) -> ScriptedModel:
    """A model that drafts `draft`, queries 'about: <step>' and revises to 'FIXED <step>'
    (quoting the first line shown, when the revision is grounded)."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind == "draft":
            return draft
        if kind == "query":
            return f"about: {current_step(messages)}"
        if kind == "revise":
            return revision(messages, f"FIXED {current_step(messages)}")
        if kind == "answer":
            return "final answer"
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


class ListRetriever(BaseRetriever):
    """Returns the same documents for every query; records the queries. With `echo`, each
    page opens with a line on what was searched for (the query, less the fake models'
    "about: "), as a search engine's hits do: its passages bear on the step searched for."""

    documents: list[Document]
    queries: list[str] = Field(default_factory=list)
    fail: Callable[[str], bool] | None = None
    echo: bool = False

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.queries.append(query)
        if self.fail is not None and self.fail(query):
            raise ConnectionError("source unreachable")
        if self.echo:
            return [
                Document(
                    page_content=f"{query.removeprefix('about: ')}.\n\n{d.page_content}",
                    metadata=d.metadata,
                )
                for d in self.documents
            ]
        return list(self.documents)


def wiki_docs(n: int = 3) -> list[Document]:
    return [
        Document(
            # what the tests' plans are about, so a revision quoting it bears on their steps,
            # and the word plan_model's revisions add (FIXED): they rest on their documents
            page_content=f"Page {i} says: the fixed fact number {i}, on logs, wood, planks, "
            "tables, sticks and every part of a task.",
            metadata={"title": f"Page {i}", "source": f"corpus:page{i}"},
        )
        for i in range(1, n + 1)
    ]


# --- retrievers loaded by import path (`retriever="fakes:..."`) ----------------------------

SHARED_RETRIEVER = ListRetriever(documents=wiki_docs(2))
NOT_A_RETRIEVER = 42


def make_retriever(k: int) -> ListRetriever:
    """The retriever the server tests load by import path: its pages are about each query, so
    the revision of any step, such as a reviewer's edit, has a line about it to quote."""
    return ListRetriever(documents=wiki_docs(k), echo=True)


def misdeclared_retriever(k: int) -> ListRetriever:
    """A plug-in's retriever with a bug (`fakes:misdeclared_retriever`): its evidence budget
    is a path, not a number, so the retrieval step fails with an error not of the project's
    making, one whose text names the path."""
    return ListRetriever(
        documents=wiki_docs(k), echo=True, metadata={"rat_evidence_tokens": "/srv/rat/plugin.py"}
    )


def make_nothing() -> str:
    return "not a retriever"


def general_repair() -> Any:
    """Plan repair with the plain-words domain, as a plug-in built on it would register."""
    from rat_agent.repair import Repair
    from rat_agent.repair.general import General

    return Repair(General())


def make_model(temperature: float = 0.0) -> ScriptedModel:
    """A model loaded by import path (`model="fakes:make_model"`)."""
    model = plan_model("STEP 1: one\nSTEP 2: two")
    model.metadata = {"temperature": temperature}
    return model


def hanging_model(temperature: float = 0.0) -> ScriptedModel:
    """A model by import path whose first call never ends by itself: it says so on stdout
    and sleeps, like a long prefill on a worker thread (`fakes:hanging_model`)."""

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        import time

        print("CALL STARTED", flush=True)
        time.sleep(600)
        return "STEP 1: too late"

    return ScriptedModel(respond=respond, calls=[])


def tagged_model(temperature: float = 0.0) -> ScriptedModel:
    """A model by import path that drafts from the question's tag ("Q-7"), so a run that got
    another run's question, or steps, shows it (`fakes:tagged_model`)."""
    import re

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        found = re.search(r"Q-\d+", prompt_text(messages))
        tag = found.group(0) if found else "none"
        if kind == "draft":
            return f"STEP 1: gather what {tag} needs\nSTEP 2: make {tag}"
        if kind == "query":
            return f"about: {current_step(messages)}"
        if kind == "revise":
            return revision(messages, f"FIXED {current_step(messages)}")
        if kind == "answer":
            return f"answer for {tag}"
        if kind == "goal":  # asked where plan repair runs: on the Minecraft corpus
            return tag
        if kind == "thought":  # memory=true
            return f"CONFIDENT: 1\nTHOUGHT: To get {tag}, first gather what it needs, then make it."
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


@contextmanager
def as_served(user: str) -> Iterator[None]:
    """Code in this block runs as part of a run a server made for authenticated `user`, as
    Aegra and LangGraph's server set it in the run's config."""
    from langchain_core.runnables.config import var_child_runnable_config

    auth_user = {"identity": user, "is_authenticated": True}
    token = var_child_runnable_config.set({"configurable": {"langgraph_auth_user": auth_user}})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def slow_tagged_model(temperature: float = 0.0) -> ScriptedModel:
    """tagged_model that takes RAT_TEST_CALL_DELAY seconds a call and, once a call has
    finished, appends "PID KIND TEXT" to the file RAT_TEST_CALL_LOG ("PID start KIND TEXT" when
    it starts): a test that kills the process running it can tell which calls finished, and
    where (`fakes:slow_tagged_model`)."""
    import os
    import time

    inner = tagged_model(temperature).respond

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        text = inner(kind, messages)
        with open(os.environ["RAT_TEST_CALL_LOG"], "a") as log:
            log.write(f"{os.getpid()} start {kind} {text.splitlines()[0]}\n")
        time.sleep(float(os.environ.get("RAT_TEST_CALL_DELAY", "0.5")))
        with open(os.environ["RAT_TEST_CALL_LOG"], "a") as log:
            log.write(f"{os.getpid()} {kind} {text.splitlines()[0]}\n")
        return text

    return ScriptedModel(respond=respond, calls=[])


class AgentModel(BaseChatModel):
    """A chat model that can call tools: `respond(tools, messages)` gets the names of the
    tools bound to this call (none: it must answer) and returns the reply; records calls."""

    respond: Callable[[list[str], list[BaseMessage]], AIMessage]
    calls: list[tuple[list[str], list[BaseMessage]]] = Field(default_factory=list)
    tags_seen: list[list[str]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-agent"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t)["function"]["name"] for t in tools])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        self.calls.append((tools, messages))
        self.tags_seen.append(list(run_manager.tags if run_manager else []))
        return ChatResult(generations=[ChatGeneration(message=self.respond(tools, messages))])


def make_pdf(text: str) -> bytes:
    """A minimal valid one-page PDF showing `text` (no PDF writer is a dependency)."""
    return pdf_drawing(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())


def pdf_drawing(
    content: bytes, *, listed: int = 1, drawn: int = 1, compress: bool = False
) -> bytes:
    """A valid PDF of one page drawing `content`: its page tree lists the page `listed` times
    and the page draws the content `drawn` times, as a bomb would."""
    import zlib

    stream = zlib.compress(content) if compress else content
    kids = b" ".join([b"3 0 R"] * listed)
    draws = b"[" + b" ".join([b"4 0 R"] * drawn) + b"]" if drawn > 1 else b"4 0 R"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % listed,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents " + draws + b" >>",
        b"<< /Length %d%s >>\nstream\n"
        % (len(stream), b" /Filter /FlateDecode" if compress else b"")
        + stream
        + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def keeping_model(temperature: float = 0.0) -> ScriptedModel:
    """A model by import path whose every revision keeps its step (`fakes:keeping_model`)."""
    return ScriptedModel(respond=lambda kind, messages: "KEEP", calls=[])


def reading_model(temperature: float = 0.0) -> ScriptedModel:
    """A model by import path that revises a step from the documents shown: where a shown
    passage names the step's setting, the step takes the default that passage states
    ("Defaults to X", "The default is X", "X (the default)"); otherwise it keeps the step
    (`fakes:reading_model`)."""
    import re

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        assert kind == "revise"
        step, text = current_step(messages), prompt_text(messages)
        setting = re.match(r"When (\S+?)=? is not set", step)
        shown = re.findall(
            r"^\[\d+\] [^\n]*\n(\S+?)=?\n(.*?)(?=\n\n|\n</documents>)", text, re.M | re.S
        )
        for named, passage in shown:
            stated = re.search(
                r"(?:[Dd]efaults? to|default is) \"?([\w./-]+)", passage
            ) or re.search(r"(\w+) \(the default\)", passage)
            if setting and named == setting.group(1) and stated:
                return re.sub(r"uses \"?[\w./-]+\"?\.$", f"uses {stated.group(1)}.", step)
        return "KEEP"

    return ScriptedModel(respond=respond, calls=[])


def guessing_model(temperature: float = 0.0) -> ScriptedModel:
    """A model by import path whose every revision gives its step a value no document
    states (`fakes:guessing_model`)."""
    import re

    def respond(kind: str, messages: list[BaseMessage]) -> str:
        return re.sub(r"uses \"?[\w./-]+\"?\.$", "uses sometimes.", current_step(messages))

    return ScriptedModel(respond=respond, calls=[])
