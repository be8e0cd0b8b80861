"""Draft "answer": the model's own reply is the draft, its parts are the steps, and the
answer is that reply with each part revised on evidence, and otherwise exactly as written."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ListRetriever, ScriptedModel, current_step, prompt_text
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from rat_agent import build_graph
from rat_agent.agent import attest, code, layout, prompts
from rat_agent.agent.parsing import bears_on, dropped, invented, new_claim

QUESTION = "How do I make the cache keep at most 2 GB?"
REPLY = (
    "To cap the cache, follow these steps:\n\n"
    "1. Open the configuration file.\n"
    "2. Set the memory limit to 2 GB.\n"
    "3. Restart the server.\n\n"
    "That is all."
)
PARTS = [
    "Open the configuration file.",
    "Set the memory limit to 2 GB.",
    "Restart the server.",
    "That is all.",
]
PAGES = [
    Document(
        page_content="Set a memory usage limit with cache-max-bytes <bytes>, e.g. 2gb.",
        metadata={"title": "cache.conf", "source": "/srv/docs/cache.conf"},
    )
]
FACT = "1a. Set a memory usage limit with cache-max-bytes <bytes>, e.g. 2gb."


def scripted(revise: Any = None, reply: str = REPLY) -> ScriptedModel:
    def respond(kind: str, messages: list[BaseMessage]) -> str:
        if kind in ("draft", "direct"):
            return reply
        if kind == "query":
            return "memory limit setting"
        if kind == "revise":
            return str(revise(current_step(messages), messages)) if revise else "FACT: NONE"
        raise AssertionError(kind)

    return ScriptedModel(respond=respond, calls=[])


def run(model: ScriptedModel, **context: Any) -> dict[str, Any]:
    graph = build_graph(llm=model, retriever=ListRetriever(documents=PAGES))
    return graph.invoke({"question": QUESTION}, context={"draft": "answer", **context})


def test_the_draft_is_the_direct_reply_and_the_answer_is_it_revised_in_place() -> None:
    def revise(step: str, messages: list[BaseMessage]) -> str:
        if "memory limit" in step:
            return f"FACT: {FACT}\nSTEP: Set cache-max-bytes 2gb."
        return "FACT: NONE\nSTEP: " + step

    model = scripted(revise)
    result = run(model)
    # the draft is asked exactly as DIRECT asks: what the model alone would answer
    assert prompt_text(model.calls[0][1]) == prompt_text(prompts.direct_messages(QUESTION))
    # 1 + 2n calls for the n parts, and no call to write an answer
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 4
    assert [s["draft"] for s in result["steps"]] == PARTS
    assert [s["status"] for s in result["steps"]] == [
        "not_revised",
        "revised",
        "not_revised",
        "not_revised",
    ]
    assert result["steps"][1]["fact"] == FACT[4:]
    assert not any("refused" in step for step in result["steps"])
    assert result["answer"] == REPLY.replace(
        "Set the memory limit to 2 GB.", "Set cache-max-bytes 2gb."
    )


def test_with_nothing_that_bears_on_a_part_the_answer_is_the_direct_reply() -> None:
    direct = build_graph(llm=scripted(), retriever=ListRetriever(documents=PAGES)).invoke(
        {"question": QUESTION}, context={"method": "direct"}
    )
    result = run(scripted())
    assert result["answer"] == direct["answer"] == REPLY
    # cot with this draft is DIRECT itself
    assert run(scripted(), method="cot")["answer"] == REPLY


def test_a_revision_that_names_what_no_passage_gives_keeps_the_draft() -> None:
    def revise(step: str, messages: list[BaseMessage]) -> str:
        return f"FACT: {FACT}\nSTEP: Set cache_max_memory 2gb in /etc/cache/cache.conf."

    result = run(scripted(revise))
    assert result["answer"] == REPLY
    step = result["steps"][1]
    assert "cache_max_memory" in step["note"]
    assert {s["status"] for s in result["steps"]} == {"not_revised"}
    # what the model proposed stays beside the draft, for a user to judge
    assert step["refused"] == "Set cache_max_memory 2gb in /etc/cache/cache.conf."
    assert step["refused_fact"] == FACT[4:]
    assert "fact" not in step


def test_a_revision_saying_something_else_from_nothing_in_its_line_keeps_the_draft() -> None:
    """A part that says what a report shows is not made concrete by a new instruction the
    line suggests; a rewrite that names the line's setting is."""
    shows = "The info command then shows how much memory the cache uses."
    reply = f"1. Open the configuration file.\n2. {shows}"
    instead = "Set a memory usage limit to keep the cache from crashing."
    concrete = "Set cache-max-bytes 2gb to keep the cache from crashing."

    def answer(revised: str) -> dict[str, Any]:
        def revise(step: str, messages: list[BaseMessage]) -> str:
            return f"FACT: {FACT}\nSTEP: {revised}" if step == shows else "FACT: NONE"

        return run(scripted(revise, reply=reply))

    kept = answer(instead)
    assert kept["answer"] == reply
    assert kept["steps"][1]["note"].startswith("the revision said something other than the step")
    assert kept["steps"][1]["refused"] == instead
    assert answer(concrete)["answer"] == reply.replace(shows, concrete)


def test_a_new_claim_keeps_under_a_third_of_the_step_and_names_nothing_from_the_line() -> None:
    line = "client-output-buffer-limit <class> <hard limit> <soft limit> <soft seconds>"
    step = "If the subscriber stays idle for more than 90 seconds, it is disconnected."
    assert not new_claim(step, "Set client-output-buffer-limit pubsub 64mb 16mb 90.", line)
    assert new_claim(step, "Raise the limits of every client class.", line)
    assert not new_claim(step, "If the subscriber stays idle for 90 seconds, drop it.", line)
    # a name the step lacked but the line does not give is no sign of the line
    assert new_claim(step, "Set maxmemory-clients to 64mb.", line)


def test_a_revision_cut_at_the_token_limit_keeps_the_draft() -> None:
    """A reply stopped at max_tokens ends mid-sentence; put in the answer, it would replace
    a whole part with the first half of one."""
    long = f"FACT: {FACT}\nSTEP: Set cache-max-bytes 2gb, then restart the server" + " now" * 40

    whole = run(scripted(lambda step, _: long if "memory limit" in step else "FACT: NONE"))
    assert whole["steps"][1]["status"] == "revised"  # the same reply, not cut, is taken

    model = scripted(lambda step, _: long if "memory limit" in step else "FACT: NONE")
    model.limit = len(REPLY)  # the draft fits; the revision is cut in its STEP line
    result = run(model)
    assert result["answer"] == REPLY
    assert result["steps"][1]["status"] == "not_revised"
    assert "cut short" in result["steps"][1]["note"]


def test_a_revision_that_leaves_out_a_name_the_draft_gave_keeps_the_draft() -> None:
    """The bundled model, asked to check a list item that names a setting, has answered
    with the passage's prose about it: the answer a user gets must not lose the name."""
    reply = "Set these in cache.conf:\n\n1. `cache-max-bytes 2gb`\n2. Restart the server."

    def revise(step: str, messages: list[BaseMessage]) -> str:
        return f"FACT: {FACT}\nSTEP: Set a memory usage limit for the cache."

    result = run(scripted(revise, reply=reply))
    assert result["answer"] == reply
    assert result["steps"][0]["draft"] == "`cache-max-bytes 2gb`"
    assert "cache-max-bytes" in result["steps"][0]["note"]
    assert result["steps"][0]["status"] == "not_revised"


def test_a_revision_loses_a_name_only_where_it_names_fewer_in_its_place() -> None:
    assert dropped("1. `tls-ca-cert-file ca.crt`", "1. Configure a CA bundle for TLS/SSL.") == [
        "ca.crt",
        "tls-ca-cert-file",
    ]
    # a correction names what replaces the name; a value is an amount a revision may fix
    assert dropped("Set `requirepass` to no.", "Set protected-mode to no.") == []
    assert dropped("Set `maxmemory 2gb`.", "Set `maxmemory 2048mb` in cache.conf.") == []
    assert dropped("Open the `redis.conf` file.", "Open redis.conf in an editor.") == []
    assert dropped("Use `os.path.join` here.", "Join the paths.") == ["os.path.join"]
    assert dropped("Turn on the X feature.", "Turn on X by setting x-mode to full.") == []


CODE_REPLY = "Here it is:\n\n```python\ndef words(text):\n    return text.split(',')\n```"
SPLIT_DOC = Document(
    page_content="str.split(sep=None) splits on runs of whitespace when sep is None.",
    metadata={"title": "str", "source": "python-docs/str.txt"},
)


@pytest.mark.parametrize(
    ("code", "kept", "note"),
    [
        ("def words(text):\n    return text.split()", False, ""),
        ("def words(text)\n    return text.split()", True, "does not parse as Python"),
        ("def other(text):\n    return text.split()", True, "no longer defines words"),
    ],
)
def test_a_code_part_changes_only_into_code_that_still_does_the_job(
    code: str, kept: bool, note: str
) -> None:
    def revise(step: str, messages: list[BaseMessage]) -> str:
        assert "shows a mistake in the code" in prompt_text(messages)
        return f"FACT: 1a. {SPLIT_DOC.page_content}\nCODE:\n```python\n{code}\n```"

    model = scripted(revise, reply=CODE_REPLY)
    graph = build_graph(llm=model, retriever=ListRetriever(documents=[SPLIT_DOC]))
    result = graph.invoke({"question": "Break a text into its words."}, context={"draft": "answer"})
    step = result["steps"][0]
    assert step["draft"] == "```python\ndef words(text):\n    return text.split(',')\n```"
    if kept:
        assert result["answer"] == CODE_REPLY
        assert note in step["note"]
    else:
        assert result["answer"] == f"Here it is:\n\n```python\n{code}\n```"
        assert step["status"] == "revised"


TAIL_REPLY = (
    "Split the text where the commas are.\n\n"
    "```python\ndef words(text):\n    return text.split(',')\n```\n\n"
    "It returns the words as a list."
)


@pytest.mark.parametrize(
    ("code", "note"),
    [
        ("def words(text):\n    return text.split()", ""),
        ("def words(text)\n    return text.split()", "the revised code does not parse as Python"),
        ("def other(text):\n    return text.split()", "the revised code no longer defines words"),
    ],
)
def test_a_joined_tail_of_prose_and_python_keeps_its_code_working(code: str, note: str) -> None:
    """Past max_steps the reply's parts are joined into one, prose and a Python block
    together; it is revised as code, and its Python block is held to parse and define
    what the draft's did, as a part that is one block is."""

    def revise(step: str, messages: list[BaseMessage]) -> str:
        return f"FACT: 1a. {SPLIT_DOC.page_content}\nCODE:\n```python\n{code}\n```"

    model = scripted(revise, reply=TAIL_REPLY)
    graph = build_graph(llm=model, retriever=ListRetriever(documents=[SPLIT_DOC]))
    context = {"draft": "answer", "max_steps": 1}
    result = graph.invoke({"question": "Break a text into its words."}, context=context)
    (step,) = result["steps"]
    assert "Split the text" in step["draft"] and "It returns" in step["draft"]
    if note:
        assert step["note"] == f"{note}; the draft was kept"
        assert result["answer"] == TAIL_REPLY
    else:  # the code changed in place, the prose around it as written
        assert step["status"] == "revised", step["note"]
        assert result["answer"] == TAIL_REPLY.replace("text.split(',')", "text.split()")


def test_in_a_part_of_several_blocks_the_revised_code_replaces_the_one_it_defines() -> None:
    part = "First:\n\n```python\ndef a():\n    pass\n```\n\nThen:\n\n```py\ndef b():\n    pass\n```"
    fixed = "def b():\n    return 1"
    assert code.rewrap(part, fixed) == part.replace("def b():\n    pass", fixed)
    assert code.rewrap(part, "x = 1") == part.replace("def a():\n    pass", "x = 1", 1)
    assert code.unlike(part, part.replace("def b():", "def b()")) == "does not parse as Python"
    assert code.unlike(part, part.replace("```py\n", "```\n")) == ""
    assert code.unlike(part, "First: a() does it.") == "left out a Python block the draft held"


CONF_REPLY = "Add to cache.conf:\n\n```\nmax-memory 2gb\nevict-keys lru\nsave-every 60\n```"


@pytest.mark.parametrize(
    ("lines", "note"),
    [
        ("cache-max-bytes 2gb\nevict-keys lru\nsave-every 60", ""),  # the passage's name
        ("cache-max-bytes 2gb", "left out evict-keys, lru, max-memory, save-every"),
        ("cache-max-bytes 2gb\nevict-keys lru\nsave-every 60\nswap-guard on", "named swap"),
    ],
)
def test_a_config_block_is_held_to_its_names_as_prose_is(lines: str, note: str) -> None:
    """A block that is not Python has no parser to hold it to: a revision may rename a
    setting to the passage's name, but not leave settings out or add ones nothing gives."""

    def revise(step: str, messages: list[BaseMessage]) -> str:
        return f"FACT: {FACT}\nCODE:\n```\n{lines}\n```"

    result = run(scripted(revise, reply=CONF_REPLY))
    step = result["steps"][0]
    assert step["draft"] == CONF_REPLY[CONF_REPLY.index("```") :]
    if note:
        assert result["answer"] == CONF_REPLY
        assert note in step["note"]
        assert step["status"] == "not_revised"
    else:
        assert result["answer"] == f"Add to cache.conf:\n\n```\n{lines}\n```"
        assert step["status"] == "revised"


@pytest.mark.parametrize("where", ["cache.conf", "/srv/docs/cache.conf"])
def test_a_revision_may_name_the_file_it_read(where: str) -> None:
    """The prompt shows each document under its title and source: a step that names the
    file it read names nothing the passages do not give."""

    def revise(step: str, messages: list[BaseMessage]) -> str:
        assert "(/srv/docs/cache.conf)" in prompt_text(messages)
        if "memory limit" in step:
            return f"FACT: {FACT}\nSTEP: Set cache-max-bytes 2gb in {where}."
        return "FACT: NONE"

    pages = [
        Document(
            page_content=PAGES[0].page_content,
            metadata={"source": PAGES[0].metadata["source"], "title": "Cache manual"},
        )
    ]
    graph = build_graph(llm=scripted(revise), retriever=ListRetriever(documents=pages))
    result = graph.invoke({"question": QUESTION}, context={"draft": "answer"})
    assert result["steps"][1]["status"] == "revised", result["steps"][1]["note"]
    assert f"Set cache-max-bytes 2gb in {where}." in result["answer"]


def test_a_config_block_adds_only_what_the_line_it_quoted_gives() -> None:
    """A block changes by the one line it quotes ("only that mistake corrected"): a
    setting another passage gives, which the quoted line does not, keeps the draft."""
    pages = [
        Document(
            page_content=PAGES[0].page_content + "\n\nTurn swapping off with swap-guard off.",
            metadata=PAGES[0].metadata,
        )
    ]

    lines = "cache-max-bytes 2gb\nevict-keys lru\nsave-every 60\nswap-guard off"

    def revise(step: str, messages: list[BaseMessage]) -> str:
        assert "swap-guard off" in prompt_text(messages)
        return f"FACT: {FACT}\nCODE:\n```\n{lines}\n```"

    graph = build_graph(
        llm=scripted(revise, reply=CONF_REPLY), retriever=ListRetriever(documents=pages)
    )
    result = graph.invoke({"question": QUESTION}, context={"draft": "answer"})
    step = result["steps"][0]
    assert result["answer"] == CONF_REPLY
    assert step["status"] == "not_revised"
    assert "named swap-guard, off, which neither the task, the draft nor the line" in step["note"]
    assert step["refused"] == f"```\n{lines}\n```"


def test_in_code_every_word_but_an_amount_is_a_name() -> None:
    draft = "```\nappendonly yes\nsave 60\n```"
    assert dropped(draft, "```\nsave 60\n```") == []  # in prose, plain words are not names
    assert dropped(draft, "```\nsave 60\n```", code=True) == ["appendonly", "yes"]
    assert dropped(draft, "```\nappendfsync always\nsave 300\n```", code=True) == []
    assert invented("```\nsave 300\nsudo reload\n```", draft, code=True) == ["sudo", "reload"]
    assert invented("```\nsave 300\nsudo reload\n```", draft) == []


@pytest.mark.parametrize(
    "reply",
    [
        REPLY,
        "Just one line.",
        "# Title\n\nA paragraph\nover two lines.\n\n- item one\n- item two\n  more of two\n\n"
        "```sh\nx=1\n\ny\n```\n",
        "STEP 1: Do the first.\nSTEP 2: Do the second.",
        "Intro:\n```\nunclosed\ncode",
    ],
)
def test_parts_put_back_unchanged_give_the_reply(reply: str) -> None:
    found = layout.parts(reply, 8)
    assert found
    assert layout.assemble(reply, found, [p.text(reply) for p in found]) == reply


def test_parts_leave_out_markers_headings_and_lead_ins_and_join_past_the_limit() -> None:
    reply = (
        "# Title\n\nDo this:\n\n- item one\n- item two\n  more of two\n\n```sh\nx=1\n\ny\n```\nEnd."
    )
    assert [p.text(reply) for p in layout.parts(reply, 8)] == [
        "item one",
        "item two\n  more of two",
        "```sh\nx=1\n\ny\n```",
        "End.",
    ]
    assert [p.code for p in layout.parts(reply, 8)] == [False, False, True, False]
    joined = layout.parts(reply, 2)
    assert [p.text(reply) for p in joined] == ["item one", reply[reply.index("item two") :]]
    assert joined[1].code


def test_invented_names_are_the_specific_ones_no_text_shown_contains() -> None:
    shown = "tcp-keepalive 300. If non-zero, use SO_KEEPALIVE. Use include /etc/extra.conf."
    assert invented("Set tcp_listen_backlog to 1024 in redis.conf.", "redis", shown) == [
        "tcp_listen_backlog",
        "redis.conf",
    ]
    assert invented("Set `tcp-keepalive 60` and SO_KEEPALIVE.", "", shown) == []
    assert invented("Raise it to 2gb, then 300 seconds.", "", shown) == []  # amounts
    assert invented("Add `include /opt/other.conf`.", "", shown) == ["opt/other.conf"]
    # a switch of script mid-sentence, seen from the bundled model, is not the step
    assert invented("It starts dropping新", "", "it starts dropping new connections", shown) == [
        "新"
    ]
    assert invented("设置 tcp-keepalive 60", "如何设置", shown) == []  # a task in Chinese


def test_a_line_about_the_task_but_not_the_step_does_not_revise_it() -> None:
    """The revision quotes a real line, but one that shares only the task's words with the
    step: the step is not rewritten into what that line says."""
    pages = [
        Document(
            page_content="Set a memory usage limit with cache-max-bytes <bytes>, e.g. 2gb.\n"
            "The cache listens on port 6390 by default.",
            metadata={"title": "cache.conf", "source": "/srv/docs/cache.conf"},
        )
    ]

    def revise(step: str, messages: list[BaseMessage]) -> str:
        return "FACT: 1b. The cache listens on port 6390 by default.\nSTEP: Use port 6390."

    graph = build_graph(llm=scripted(revise), retriever=ListRetriever(documents=pages))
    result = graph.invoke({"question": QUESTION}, context={"draft": "answer"})
    assert result["answer"] == REPLY
    assert {s["note"] for s in result["steps"]} == {
        "the line it quoted is not about this step; the draft was kept"
    }


def test_a_line_bears_on_a_step_when_it_shares_a_word_the_task_does_not_give() -> None:
    question = "How do I make the cache close idle connections after 5 minutes?"
    timeout = "Close the connection after a client is idle for N seconds: timeout 0"
    assert bears_on(timeout, "Set a timeout for idle connections.", question)
    assert not bears_on("Accept connections on port 6379.", "Set a timeout of 300.", question)
    # the task's words and numbers anchor nothing
    assert not bears_on("save 900 1 300 60", "Close idle connections every 60 s.", question)


def test_a_line_that_shares_only_the_action_a_step_opens_with_is_not_about_it() -> None:
    """A step "Restart the server" and a line on what a restart loads share what the step does,
    not what it does it to: a revision from that line bolts a setting onto the restart."""
    question = "How do I turn off the report the server writes when it crashes?"
    restart = "Restart the server for the changes to take effect."
    loads = "If the log is truncated, the server refuses to start; fix it, then restart."
    assert not bears_on(loads, restart, question)
    assert not bears_on(loads, f"**Finally**: {restart}", question)  # past a label too
    # a short step is not about every line that shares its action either
    assert not bears_on("Save snapshots every 60 s: save 60 1", "Save the file.", question)
    # the action and what it acts on
    assert bears_on("Changes take effect after a restart.", restart, question)
    # a step that opens with a name is about that name
    setting = "`appendonly`: leave it at no."
    assert bears_on("appendonly no", setting, question)
    assert bears_on("The appendonly file is rewritten in the background.", setting, question)


def test_a_line_bears_on_a_step_that_names_its_setting_as_code() -> None:
    """A task that asks for a setting in plain words ("TCP keepalive") gives every word of
    its name; the step and the line still share the name as written ("tcp-keepalive")."""
    question = "How do I send TCP keepalive probes every 60 seconds?"
    step = (
        "Enable TCP keepalive, so dead peers are found on every client socket, by setting "
        "`tcp-keepalive` to 300 seconds in the server's configuration."
    )
    line = "A reasonable value is 300 seconds, the Redis default. tcp-keepalive 300"
    assert bears_on(line, step, question)
    assert not bears_on(line, step, question, names=False)  # Python names every call
    # a piece of a name is not a word of the line
    backlog = "`tcp_max_syn_backlog`: Set to 4096"
    clients = "Once the limit is reached Redis closes new connections: max number of clients."
    assert not bears_on(clients, backlog, question)
    assert bears_on(clients, backlog, question, names=False)
    # a name the line gives whole is shared, pieces and all, though the task names it too
    assert bears_on("about: make Q-7 from parts", "make Q-7", "How do I get Q-7?")
    assert not bears_on("TCP listen() backlog. tcp-backlog 511", step, question)
    # a name the task itself writes as code anchors nothing
    assert not bears_on(
        "tcp-keepalive 300", step, question.replace("TCP keepalive", "tcp-keepalive")
    )


class _ByQuery(ListRetriever):
    """The setting's page only for the question itself; a page beside the point for a
    step's own query, as a step's query often finds."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        self.queries.append(query)
        if query == QUESTION:
            return list(PAGES)
        return [Document(page_content="Restart the server with the service manager.")]


def test_the_default_draft_is_written_from_the_task_passages_where_they_bear_on_it() -> None:
    """Draft "auto" (method rat): the reply rag gives where the task's best passage is close
    to it (sourced_support), the task holds no code block, and the source does not confirm
    the model's own answer; else that answer. The run says which it drafted, and why."""

    def drafted(
        question: str, pages: list[Document], reply: str = REPLY, **context: Any
    ) -> tuple[list[str], list[str], str]:
        model, retriever = scripted(reply=reply), ListRetriever(documents=pages)
        graph = build_graph(llm=model, retriever=retriever)
        events = graph.stream({"question": question}, context=context, stream_mode="custom")
        origin = next(e["from"] for e in events if e["event"] == "draft")
        return [prompt_text(m) for k, m in model.calls if k == "draft"], retriever.queries, origin

    direct = prompt_text(prompts.direct_messages(QUESTION))
    # the model's own answer names nothing to look up: the reply from the passages
    asked, queries, origin = drafted(QUESTION, PAGES)
    assert asked[0] == direct and len(asked) == 2
    assert prompts.RAG_ANSWER.strip() in asked[1] and "cache-max-bytes" in asked[1]
    assert queries == [QUESTION]
    assert origin.startswith(f"a reply written from {len(PAGES)} passages of the source")
    assert origin.endswith(": the model's own answer names nothing the source could confirm")
    support = float(origin.split("best match ")[1].split(")")[0])
    assert 0.45 <= support <= 1
    unrelated = Document(
        page_content="The parrot is a tropical bird that learns to repeat words.",
        metadata={"title": "Parrots", "source": "/srv/docs/birds.txt"},
    )
    asked, _, origin = drafted(QUESTION, [unrelated])
    assert asked == [direct]
    assert origin.startswith("the model's own answer: the task's best passage matched 0.")
    assert origin.endswith("under sourced_support 0.45")
    asked, _, origin = drafted(QUESTION, PAGES, sourced_support=0.99)
    assert asked == [direct] and origin.endswith(f"{support:.2f}, under sourced_support 0.99")
    assert drafted(QUESTION, PAGES, draft="answer")[::2] == ([direct], "the model's own answer")
    # a task that gives code to finish: the model's own answer, with no search before it
    task = f"{QUESTION} Finish it:\n\n```python\ndef cap(cache):\n    pass\n```"
    asked, queries, origin = drafted(task, PAGES)
    assert asked == [prompt_text(prompts.direct_messages(task))] and task not in queries
    assert origin == "the model's own answer: the task holds a code block"


def test_the_model_keeps_its_own_answer_where_the_source_gives_every_name_it_uses() -> None:
    """A model that knows the answer names what the source gives; one that does not
    invents a name. Each name of the model's own answer is looked up in the source: all
    found, that answer is the draft (one draft call); one missing, the passages write it."""
    known = "Set `cache-max-bytes` to 2gb in the configuration file, then restart."
    model, retriever = scripted(reply=known), ListRetriever(documents=PAGES)
    graph = build_graph(llm=model, retriever=retriever, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "known"}}
    result = graph.invoke({"question": QUESTION}, thread)
    assert [k for k, _ in model.calls].count("draft") == 1
    assert retriever.queries[:2] == [QUESTION, "cache-max-bytes"]
    assert result["answer"] == known
    state = graph.get_state(thread).values
    assert state["draft_from"] == "the model's own answer: the source gives every name it uses"
    assert state["draft_reply"] == known

    invented = known.replace("cache-max-bytes", "cache_limit_mb")
    model, retriever = scripted(reply=invented), ListRetriever(documents=PAGES)
    graph = build_graph(llm=model, retriever=retriever, checkpointer=InMemorySaver())
    graph.invoke({"question": QUESTION}, thread)
    drafts = [prompt_text(m) for k, m in model.calls if k == "draft"]
    assert len(drafts) == 2 and prompts.RAG_ANSWER.strip() in drafts[1]
    origin = graph.get_state(thread).values["draft_from"]
    assert origin.endswith(
        ": the model's own answer uses cache_limit_mb, which the source does not give"
    )
    # a lookup that fails confirms nothing
    model = scripted(reply=known)
    failing = ListRetriever(documents=PAGES, fail=lambda query: query == "cache-max-bytes")
    graph = build_graph(llm=model, retriever=failing, checkpointer=InMemorySaver())
    graph.invoke({"question": QUESTION}, thread)
    origin = graph.get_state(thread).values["draft_from"]
    assert origin.endswith("uses cache-max-bytes, which the source failed to look up")


def test_the_names_an_answer_gives_are_those_a_reader_would_look_up() -> None:
    answer = (
        "Use `itertools.zip_longest`, e.g. with a `fillvalue` of 0.0:\n\n"
        "```python\nfrom itertools import zip_longest as zl\n\n"
        "def pairs(first, second):\n    return list(zl(first, second, fillvalue=0.0))\n\n"
        "text = 'a b '\nclean = text.rstrip()\ncache = {'another_key': 1}\n```\n"
        "Here `pairs` pads the shorter list; `r` and 2.5 are not names."
    )
    assert attest.names(answer, "How do I zip two lists of different lengths?") == [
        "itertools.zip_longest",
        "zip_longest",
        "fillvalue",
        "rstrip",
    ]
    page = {
        "title": "itertools",
        "source": "",
        "content": "itertools.zip_longest(*it, fillvalue=None)",
    }
    assert attest.gives("itertools.zip_longest", [page]) and attest.gives("fillvalue", [page])
    # a module's function as its own page writes it; not a piece of another name
    assert attest.gives("re.split", [{**page, "content": "re.split(pattern, string)"}])
    assert attest.gives("re.split", [{**page, "content": "split(pattern, string, maxsplit=0)"}])
    assert not attest.gives("zip", [page])
    assert not attest.gives("path/to/ca.crt", [{**page, "content": "ca.crt is the CA file"}])
    # a name the source writes only inside a path or dotted name is still given whole
    assert attest.gives("collections", [{**page, "content": "see collections.abc.Mapping"}])
    path = {**page, "content": "./redis-server /path/to/redis.conf"}
    assert attest.gives("redis.conf", [path])
    assert not attest.gives("max", [{**page, "content": "maxmemory-policy max_len"}])
    # a thought the memory holds is the model's own words, not the source's
    assert not attest.gives("fillvalue", [{**page, "kind": "thought"}])


def test_a_source_that_fails_on_the_task_leaves_the_models_own_draft() -> None:
    model = scripted()
    retriever = ListRetriever(documents=PAGES, fail=lambda query: query == QUESTION)
    result = build_graph(llm=model, retriever=retriever).invoke({"question": QUESTION})
    assert prompt_text(model.calls[0][1]) == prompt_text(prompts.direct_messages(QUESTION))
    assert result["answer"] == REPLY
    graph = build_graph(llm=scripted(), retriever=retriever, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    graph.invoke({"question": QUESTION}, thread)
    origin = graph.get_state(thread).values["draft_from"]
    assert origin == "the model's own answer: no passage was found for the task"


def test_a_sourced_draft_is_the_reply_rag_gives_then_checked_part_by_part() -> None:
    model, retriever = scripted(), _ByQuery(documents=[])
    graph = build_graph(llm=model, retriever=retriever)
    result = graph.invoke({"question": QUESTION}, context={"draft": "sourced"})
    draft_prompt = prompt_text(model.calls[0][1])
    assert "cache-max-bytes" in draft_prompt  # written from the question's passages
    assert prompts.RAG_ANSWER.strip() in draft_prompt  # with rag's own instruction
    assert retriever.queries[0] == QUESTION
    assert [kind for kind, _ in model.calls] == ["draft"] + ["query", "revise"] * 4
    assert result["answer"] == REPLY  # no part revised (the fake confirms nothing)


@pytest.mark.parametrize(
    ("part", "python"),
    [
        ("```python\ndef f(:\n```", True),  # tagged: Python, if broken
        ("Then:\n\n```py\ndef f():\n    return 1\n```\nThat is all.", True),  # a joined tail
        ("```\nsave 60\nappendonly yes\n```", False),
        ("```conf\nsave 60\n```\nRestart.", False),
    ],
)
def test_a_part_holds_python_when_it_is_a_python_block_or_contains_one(
    part: str, python: bool
) -> None:
    """Where Python is, a name shared with a line is no sign the line is about the part."""
    assert code.has_python(part) is python
