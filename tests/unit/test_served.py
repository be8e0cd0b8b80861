"""What a served user's run may reach (a server with keys, `make serve`): no module outside
RAT_IMPORTS, no provider that reads the server's files or a hub, no collection of another
user's, no path of the server in an error, and no input past the bounds. Real embedded
Qdrant and the real embedder; the run's user is set as the servers set it (fakes.as_served).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import sys
from pathlib import Path

import httpx
import pytest
from fakes import as_served, pdf_drawing, plan_model
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langgraph_sdk import Auth

from rat_agent import ConfigError, RetrievalError, retrieval
from rat_agent.agent.context import Context
from rat_agent.agent.graph import build_graph
from rat_agent.ingest import pipeline
from rat_agent.limits import (
    QUESTION_CHARS,
    TooLarge,
    check_context,
    check_ingest,
    check_payload,
)
from rat_agent.memory.store import Memory, embed
from rat_agent.memory.thought import Thought
from rat_agent.providers import chat, imports
from rat_agent.retrieval.qdrant import client as qdrant
from rat_agent.retrieval.qdrant import hybrid
from rat_agent.serve import auth
from rat_agent.served import HIDDEN_PATH, own_collection

pytestmark = pytest.mark.usefixtures("fresh_data")  # conftest.py


def _retriever(collection: str) -> BaseRetriever:
    return retrieval.get_retriever(Context(retriever="qdrant", collection=collection, k=3))


def _sources(collection: str, query: str) -> set[str]:
    return {str(d.metadata["source"]) for d in _retriever(collection).invoke(query)}


# --- 1. import paths ----------------------------------------------------------------------


def test_a_served_run_looks_up_no_module_outside_the_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Finding `this.x` would import `this` (it prints the Zen of Python): refused first."""
    monkeypatch.delenv("RAT_IMPORTS", raising=False)
    sys.modules.pop("this", None)
    with as_served("bob"):
        for name in ("this.x:y", "this:y"):
            with pytest.raises(ConfigError, match="RAT_IMPORTS"):
                chat.get_chat_model(name)
            with pytest.raises(ConfigError, match="RAT_IMPORTS"):
                retrieval.check_retriever(Context(retriever=name))
        with pytest.raises(ConfigError, match="RAT_IMPORTS"):
            retrieval.get_retriever(Context(retriever="fakes:make_retriever"))
    assert "this" not in sys.modules
    # what the operator built on their own is no pass for a served run
    assert isinstance(chat.get_chat_model("fakes:make_model"), chat.BaseChatModel)
    with as_served("bob"), pytest.raises(ConfigError, match="RAT_IMPORTS"):
        chat.get_chat_model("fakes:make_model")


def test_a_module_that_exits_on_import_is_an_error_not_the_end_of_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exits_now.py").write_text("import sys\nsys.exit(2)\n")
    (tmp_path / "exits_later.py").write_text("import sys\n\ndef build():\n    sys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("RAT_IMPORTS", raising=False)  # one's own machine: any module
    with pytest.raises(ConfigError, match="SystemExit"):
        chat.get_chat_model("exits_now.inner:model")  # finding it imports exits_now
    with pytest.raises(ConfigError, match="SystemExit"):
        imports.load("exits_now:model", BaseRetriever, "retriever")
    with pytest.raises(ConfigError, match="SystemExit"):
        imports.load("exits_later:build", BaseRetriever, "retriever")


# --- 4. providers -------------------------------------------------------------------------


def test_a_served_run_names_no_provider_that_loads_files_or_hub_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAT_PROVIDERS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    errors = []
    with as_served("bob"):
        for path in ("/etc", "/nonexistent", "sentence-transformers/all-MiniLM-L6-v2"):
            with pytest.raises(ConfigError) as caught:
                chat.get_chat_model(f"huggingface:{path}")
            errors.append(str(caught.value).replace(path, "PATH"))
        assert chat.get_chat_model("openai:gpt-4o-mini") is not None  # a hosted API: offered
    assert len(set(errors)) == 1 and "no 'huggingface' models" in errors[0]  # nothing probed
    assert chat.provider_allowed("huggingface")  # one's own machine
    monkeypatch.setenv("RAT_PROVIDERS", "huggingface, openai")
    with as_served("bob"):
        assert chat.provider_allowed("huggingface") and not chat.provider_allowed("anthropic")


# --- 3. errors ----------------------------------------------------------------------------


def test_an_error_in_a_served_run_names_no_path_of_the_server() -> None:
    text = "cannot open /srv/rat/data/qdrant/collection/x: see https://example.org/a/b and/or"
    with as_served("bob"):
        shown = str(ConfigError(text))
    assert shown == f"cannot open {HIDDEN_PATH}: see https://example.org/a/b and/or"
    assert str(ConfigError(text)) == text  # the owner, on their own machine, sees it all


def test_an_unknown_collection_names_no_other_collection_to_a_served_user(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.md").write_text("Alpha notes.\n")
    pipeline.ingest([str(tmp_path / "a.md")], collection="private-plans")
    with pytest.raises(ConfigError) as mine:
        _retriever("nope")
    assert "private-plans" in str(mine.value)  # the CLI lists them, for its owner
    with as_served("bob"), pytest.raises(ConfigError) as theirs:
        _retriever("nope")
    assert str(theirs.value) == (
        "there is no collection 'nope' of yours or shared on this server: fill one with the "
        "ingest graph"
    )


def test_a_qdrant_url_is_shown_without_its_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDRANT_URL", "https://ops:hunter2hunter2@qdrant.internal:6333/?key=zz")
    assert qdrant.shown_location() == "https://qdrant.internal:6333/"


# --- 2. collections and memories ----------------------------------------------------------


def test_each_served_user_reads_their_own_collections_and_the_shared_ones(
    tmp_path: Path,
) -> None:
    for name, text in (
        ("handbook.md", "The handbook: expenses are filed by the fifth of each month."),
        ("alice.md", "Alice's plan: the launch moves to the fifth of May."),
        ("bob.md", "Bob's plan: the budget review moves to the fifth of June."),
    ):
        (tmp_path / name).write_text(text + "\n")
    pipeline.ingest([str(tmp_path / "handbook.md")], collection="handbook")  # the operator's
    with as_served("alice"):
        pipeline.ingest([str(tmp_path / "alice.md")], collection=own_collection("notes", "alice"))
    with as_served("bob"):
        pipeline.ingest([str(tmp_path / "bob.md")], collection=own_collection("notes", "bob"))

    query = "what moves to the fifth"
    alice_doc, bob_doc = str(tmp_path / "alice.md"), str(tmp_path / "bob.md")
    with as_served("alice"):
        assert _sources("notes", query) == {alice_doc}
        assert _sources("handbook", query) == {str(tmp_path / "handbook.md")}
    with as_served("bob"):
        assert _sources("notes", query) == {bob_doc}
        assert _sources("handbook", query) == {str(tmp_path / "handbook.md")}
        for name in (own_collection("notes", "alice"), "notes--alice"):
            with pytest.raises(ConfigError, match="of yours or shared"):
                _retriever(name)
        # nor may bob write into alice's collection, or the operator's
        for name in (own_collection("notes", "alice"), "handbook"):
            with pytest.raises(ConfigError, match="of yours or shared"):
                pipeline.ingest([bob_doc], collection=name)
    with as_served("alice"):
        assert _sources("notes", query) == {alice_doc}  # as she left it


def _store_thought(memory: Memory, text: str) -> Thought:
    thought = Thought(text=text, question="How is iron made?", origins=(), level=2.0)
    memory.add(thought, embed([text])[0])
    return thought


def test_a_thought_memory_is_reached_only_through_the_memory(tmp_path: Path) -> None:
    with as_served("alice"):
        name = own_collection("thoughts", "alice")
        stored = _store_thought(Memory(name), "Iron comes from smelting raw iron in a furnace.")
    (tmp_path / "b.md").write_text("Bob writes this into her memory.\n")
    for user in ("", "alice", "bob"):
        with as_served(user) if user else contextlib.nullcontext():
            with pytest.raises(ConfigError, match=r"thought memory|of yours or shared"):
                _retriever(name)
            with pytest.raises(ConfigError, match=r"thought memory|of yours or shared"):
                pipeline.ingest([str(tmp_path / "b.md")], collection=name)
    with as_served("bob"), pytest.raises(ConfigError, match="not your thought memory"):
        Memory(name).all()
    with as_served("alice"):
        assert [t.id for t in Memory(name).all()] == [stored.id]


def test_a_point_that_is_not_a_thought_is_a_typed_error() -> None:
    memory = Memory("thoughts")
    stored = _store_thought(memory, "Sticks are made from planks.")
    client, lock = qdrant.get_client()
    chunk = hybrid.point(  # a chunk, as an ingest into the memory wrote before it was refused
        stored.id,
        "Sticks are made from planks.",
        {"source": "x.md", "chunk": 1},
        embed(["Sticks are made from planks."])[0],
        hybrid.sparse_documents(["Sticks are made from planks."], [["x"]])[0],
    )
    with lock:
        client.upsert("thoughts", [chunk])
    with pytest.raises(RetrievalError, match="not a thought"):
        memory.all()


# --- 6. and 7. bounds and inputs ----------------------------------------------------------


def test_settings_that_are_no_numbers_are_refused_up_front() -> None:
    with pytest.raises(ConfigError, match="k must be a whole number"):
        Context(k=3.5)  # type: ignore[arg-type]
    assert Context(k=3.0).k == 3 and isinstance(Context(k=3.0).k, int)  # type: ignore[arg-type]
    for value in (math.nan, math.inf):
        with pytest.raises(ConfigError, match="temperature"):
            Context(temperature=value)
    for name in ("..", ".hidden", "a\\b"):
        with pytest.raises(ConfigError, match="cannot be used"):
            Context(collection=name)


def test_a_question_past_the_bound_or_not_unicode_fails_before_any_model_call() -> None:
    llm = plan_model("STEP 1: one")
    graph = build_graph(llm=llm, retriever=_ListOfOne())
    for question, why in (("x" * (QUESTION_CHARS + 1), "at most"), ("bad \ud800", "surrogate")):
        with pytest.raises(ConfigError, match=why):
            graph.invoke({"question": question})
    assert llm.calls == []


class _ListOfOne(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager: object) -> list[Document]:
        return [Document(page_content="x", metadata={"title": "x", "source": "x"})]


def test_a_request_that_would_give_a_run_too_much_is_refused_on_every_route() -> None:
    """The bounds hold for a run's body (v1), the `params` of Aegra's event-streaming
    commands (which call no auth handler) and LangGraph's `kwargs`."""

    def refused(value: dict[str, object]) -> type[Exception]:
        with pytest.raises(ConfigError) as caught:
            check_payload(value)
        return type(caught.value)

    long = "x" * (QUESTION_CHARS + 1)
    assert refused({"input": {"question": long}}) is TooLarge
    assert refused({"method": "run.start", "params": {"input": {"question": long}}}) is TooLarge
    assert refused({"input": {"paths": ["http://a.example/"] * 101}}) is TooLarge
    assert refused({"kwargs": {"context": {"model": "m" * 20_000}}}) is TooLarge
    assert refused({"params": {"context": {"pad": "x" * 200_000}}}) is TooLarge
    assert refused({"config": {"configurable": {"k": math.nan}}}) is ConfigError
    check_payload({"input": {"question": "How?"}, "context": {"k": 3}})  # passes
    with pytest.raises(TooLarge):
        check_ingest(["x" * 5000])
    check_context({"k": 3, "model": "local"})


def test_a_store_search_uses_only_the_stores_filter_operators() -> None:
    class Ctx:
        action = "search"

    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        asyncio.run(auth.store(Ctx(), {"filter": {"secret": {"$regex": ".*"}}}))  # type: ignore[arg-type]
    assert caught.value.status_code == 422 and "$regex" in str(caught.value.detail)
    asyncio.run(auth.store(Ctx(), {"filter": {"n": {"$gte": 3}, "tag": "x"}}))  # type: ignore[arg-type]


def test_the_server_app_refuses_bodies_postgres_cannot_store_or_past_the_bound() -> None:
    from sqlalchemy.exc import IntegrityError
    from starlette.types import Receive, Scope, Send

    from rat_agent.serve.app import RequestGuard, conflict

    seen: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guarded = RequestGuard(app, max_bytes=5000)

    async def post(body: bytes) -> httpx.Response:
        transport = httpx.ASGITransport(app=guarded)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            return await http.post("/runs", content=body)

    ok = asyncio.run(post(b'{"input": {"question": "How?"}}'))
    assert ok.status_code == 200 and seen == [b'{"input": {"question": "How?"}}']
    too_big = asyncio.run(post(b'{"q": "' + b"x" * 6000 + b'"}'))
    assert too_big.status_code == 413 and "larger than 5,000 bytes" in too_big.json()["message"]
    nan = asyncio.run(post(b'{"context": {"k": NaN}}'))
    assert nan.status_code == 422 and "NaN" in nan.json()["message"]
    lone = asyncio.run(post(b'{"input": {"question": "x\\ud800"}}'))
    assert lone.status_code == 422 and "surrogate" in lone.json()["message"]
    nul = asyncio.run(post(b'{"namespace": ["x\\u0000"], "key": "k", "value": {}}'))
    assert nul.status_code == 422 and "NUL" in nul.json()["message"]
    deep = asyncio.run(post(b'{"context": {"x": ' + b"[" * 2000 + b"]" * 2000 + b"}}"))
    assert deep.status_code == 422 and "nested" in deep.json()["message"]
    v2 = asyncio.run(
        post(b'{"method": "run.start", "params": {"context": {"pad": "' + b"x" * 900 + b'"}}}')
    )
    assert v2.status_code == 200  # within the bounds
    guarded = RequestGuard(app)  # the server's own bound: a context past its bound is refused
    padded = b'{"method": "run.start", "params": {"context": {"pad": "' + b"x" * 20_000 + b'"}}}'
    v2_large = asyncio.run(post(padded))
    assert v2_large.status_code == 413 and "16,384" in v2_large.json()["message"]
    assert len(seen) == 2  # only the two it let through reached the app
    answered = asyncio.run(conflict(None, IntegrityError("UPDATE", {}, Exception("dup"))))  # type: ignore[arg-type]
    assert answered.status_code == 409


def test_a_listed_module_offers_only_its_public_top_level_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Following names through a listed module reached the worker's builtins (clearing them
    stopped it) and objects every user shares."""
    import builtins

    import fakes

    from rat_agent.agent.extension import repair_for

    monkeypatch.setenv("RAT_IMPORTS", "fakes")
    shared = list(fakes.SHARED_RETRIEVER.documents)
    with as_served("bob"):
        for path, why in (
            ("fakes:make_retriever.__builtins__.clear", "private"),
            ("fakes:make_model.__globals__.clear", "private"),
            ("fakes:_private", "private"),
            ("fakes:SHARED_RETRIEVER.documents.clear", "module itself"),
        ):
            with pytest.raises(ConfigError, match=why):
                retrieval.check_retriever(Context(retriever=path))
            with pytest.raises(ConfigError, match=why):
                chat.get_chat_model(path)
            with pytest.raises(ConfigError, match=why):
                repair_for(Context(repair=path))
        for path in ("fakes:BaseChatModel", "fakes:contextmanager"):  # fakes imports them
            with pytest.raises(ConfigError, match="does not define"):
                retrieval.check_retriever(Context(retriever=path))
        assert isinstance(
            retrieval.get_retriever(Context(retriever="fakes:make_retriever")), BaseRetriever
        )
    assert fakes.SHARED_RETRIEVER.documents == shared and hasattr(builtins, "len")
    monkeypatch.delenv("RAT_IMPORTS")  # one's own machine: a public object inside another
    assert retrieval.get_retriever(Context(retriever="fakes:SHARED_RETRIEVER")) is not None


def test_a_revoked_users_runs_stop_where_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cron, a queued run or a resumed one goes on as its user after their keys are
    revoked, unless the run asks the key file: it does before every model call and search."""
    from rat_agent.ingest.graph import graph as ingest_graph
    from rat_agent.serve.keys import KeyFile

    monkeypatch.setenv("RAT_SERVE_KEYS", str(tmp_path / "keys.json"))
    KeyFile().add("alice")
    llm = plan_model("STEP 1: one")
    graph = build_graph(llm=llm, retriever=_ListOfOne())
    context = {"answer_prompt": "", "query_prompt": ""}
    with as_served("alice"):
        assert graph.invoke({"question": "How?"}, context=context)["steps"]
        calls = len(llm.calls)
        KeyFile().revoke("alice")
        for method in ("rat", "rag", "direct"):
            with pytest.raises(ConfigError, match="no live API key"):
                graph.invoke({"question": "How?"}, context={**context, "method": method})
        with pytest.raises(ConfigError, match="no live API key"):
            asyncio.run(ingest_graph.ainvoke({"paths": [], "collection": "c"}))
    assert len(llm.calls) == calls
    # a run paused for review before the revocation does not go on after it
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    KeyFile().add("alice")
    saved = build_graph(llm=llm, retriever=_ListOfOne(), checkpointer=InMemorySaver())
    alice = {"identity": "alice", "is_authenticated": True}  # a config's own, as a server's
    thread = {"configurable": {"thread_id": "review", "langgraph_auth_user": alice}}
    with as_served("alice"):
        saved.invoke({"question": "How?"}, thread, context={**context, "review_draft": True})
        KeyFile().revoke("alice")
        calls = len(llm.calls)
        with pytest.raises(ConfigError, match="no live API key"):
            saved.invoke(Command(resume=True), thread, context={**context, "review_draft": True})
    assert len(llm.calls) == calls
    assert graph.invoke({"question": "How?"}, context=context)["steps"]  # the operator's own


def test_slow_ingests_hold_neither_the_servers_threads_nor_every_ingest_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An ingest of pages that answer slowly on purpose ran in the threads that the runs, key
    checks and health checks share: six of them stalled a worker for every user. They run
    in their own pool now, one at a time per user."""
    import threading
    import time

    from rat_agent.ingest import graph as ingest_graph
    from rat_agent.ingest.pipeline import Report

    spans: list[tuple[str, float, float, str]] = []

    def slow_ingest(paths: list[str], *, collection: str) -> Report:
        started = time.monotonic()
        time.sleep(0.4)  # a site that holds each request
        spans.append((collection, started, time.monotonic(), threading.current_thread().name))
        return Report(collection)

    monkeypatch.setattr(pipeline, "ingest", slow_ingest)

    def served(user: str) -> dict[str, object]:
        return {
            "configurable": {"langgraph_auth_user": {"identity": user, "is_authenticated": True}}
        }

    async def go() -> None:
        runs = [
            ingest_graph.graph.ainvoke(
                {"paths": ["https://slow.example/"], "collection": f"c{n}"}, served("bob")
            )
            for n in range(4)
        ]
        runs.append(
            ingest_graph.graph.ainvoke(
                {"paths": ["https://slow.example/"], "collection": "a"}, served("alice")
            )
        )
        await asyncio.gather(*runs)

    asyncio.run(go())
    # none in the threads that key checks and sync nodes share
    assert all(name.startswith("rat-ingest") for *_, name in spans)
    bob = sorted((start, end) for collection, start, end, _ in spans if "--bob-" in collection)
    assert len(bob) == 4 and all(b[0] >= a[1] for a, b in itertools.pairwise(bob))
    (alice_end,) = [end for collection, _, end, _ in spans if "--alice-" in collection]
    assert alice_end < bob[-1][1]  # she did not wait behind all of his


def test_a_served_users_own_collection_is_read_from_the_search_after_she_makes_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "handbook.md").write_text("The handbook: expenses are filed by the fifth.\n")
    (tmp_path / "mine.md").write_text("Alice's handbook: expenses go to Carol by the fifth.\n")
    pipeline.ingest([str(tmp_path / "handbook.md")], collection="handbook")
    with as_served("alice"):
        retriever = _retriever("handbook")
        assert _sources("handbook", "expenses") == {str(tmp_path / "handbook.md")}
        pipeline.ingest([str(tmp_path / "mine.md")], collection=own_collection("handbook", "alice"))
        assert _retriever("handbook") is retriever  # built before, and kept
        assert _sources("handbook", "expenses") == {str(tmp_path / "mine.md")}


def test_ids_and_settings_of_the_wrong_type_are_refused_in_one_line() -> None:
    from starlette.types import Receive, Scope, Send

    from rat_agent.serve.app import RequestGuard

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def call(method: str, url: str, body: bytes = b"") -> int:
        transport = httpx.ASGITransport(app=RequestGuard(app))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            return (await http.request(method, url, content=body)).status_code

    assert asyncio.run(call("GET", "/store/items?key=a%00b&namespace=x")) == 422
    assert asyncio.run(call("GET", "/threads/a%00b")) == 422
    assert asyncio.run(call("GET", "/threads/x?status=%ED%A0%80")) == 422
    assert asyncio.run(call("DELETE", "/store/items", b'{"key": "a\\u0000b"}')) == 422
    assert asyncio.run(call("GET", "/threads/3f1c?status=ok&key=caf%C3%A9")) == 200
    big = 1 << 63  # offsets and limits are PostgreSQL bigints
    assert asyncio.run(call("GET", f"/threads/t/runs?limit={big}")) == 422
    assert asyncio.run(call("GET", f"/threads/t/runs?offset={big - 1}")) == 200
    assert asyncio.run(call("POST", "/threads/search", f'{{"offset": {big}}}'.encode())) == 422
    assert asyncio.run(call("POST", "/threads/search", f'{{"offset": {-big}}}'.encode())) == 200
    for field, value in (("collection", 5), ("repair", {}), ("model", ["local"])):
        with pytest.raises(ConfigError, match=f"{field} must be text"):
            Context(**{field: value})
    with pytest.raises(TooLarge):
        check_payload({"values": {"question": "x" * (QUESTION_CHARS + 1)}})  # a state update


def test_new_metadata_on_a_thread_keeps_its_owner() -> None:
    class User:
        identity = "alice"

    class Ctx:
        action = "update"
        user = User()

    value: dict[str, object] = {"metadata": {"owner": "bob", "tag": "x"}}
    assert asyncio.run(auth.owner(Ctx(), value)) == {"owner": "alice"}  # type: ignore[arg-type]
    assert value["metadata"] == {"owner": "alice", "tag": "x"}


def test_the_model_cache_keeps_the_most_recent_clients_only() -> None:
    """A run may ask for any temperature and token limit; each pair made a client kept for
    the life of the process."""
    for n in range(chat.MODELS_KEPT + 10):
        chat.get_chat_model("fakes:make_model", temperature=n / 100)
    assert len(chat._model_cache) <= chat.MODELS_KEPT
    newest = chat.get_chat_model("fakes:make_model", temperature=(chat.MODELS_KEPT + 9) / 100)
    assert newest is chat.get_chat_model(
        "fakes:make_model", temperature=(chat.MODELS_KEPT + 9) / 100
    )


def test_a_list_of_runs_is_held_to_the_bounds_too() -> None:
    from rat_agent.serve.app import _refusal

    long = "x" * (QUESTION_CHARS + 1)
    runs = [{"input": {"question": "How?"}}, {"input": {"question": long}}]
    refused = _refusal(json.dumps(runs).encode())
    assert refused is not None and refused[0] == 413
    assert _refusal(b'[{"input": {"question": "How?"}}, 3]') is None


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"metadata": ' + '{"a": ' * 65 + "1" + "}" * 65 + "}", "nested more than 64"),
        ('{"metadata": {"x": ' + "[" * 300 + "]" * 300 + "}}", "nested more than 64"),
        ('{"value": {"a": 1e999}}', "too large for JSON"),
        ('{"metadata": {"a": -1E400}}', "too large for JSON"),
    ],
)
def test_what_the_reply_writer_could_not_write_back_is_refused(body: str, why: str) -> None:
    from rat_agent.serve.app import _refusal

    refused = _refusal(body.encode())
    assert refused is not None and refused[0] == 422 and why in refused[1]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"assistant_id": "rat", "config": {"callbacks": ["x"]}}', "not callbacks"),
        ('{"assistant_id": "ingest", "input": {"paths": [{"a": 1}]}}', None),
    ],
)
def test_a_run_config_or_ingest_list_python_cannot_use_is_refused_in_our_words(
    body: str, why: str | None
) -> None:
    from rat_agent.limits import check_ingest
    from rat_agent.serve.app import _refusal

    if why:
        refused = _refusal(body.encode())
        assert refused is not None and refused[0] == 422 and why in refused[1]
    else:
        with pytest.raises(ConfigError, match="each path or URL must be text, got dict"):
            check_ingest(json.loads(body)["input"]["paths"])


def test_json_as_deep_as_the_bound_and_large_finite_numbers_pass() -> None:
    from rat_agent.limits import JSON_DEPTH
    from rat_agent.serve.app import _refusal

    deepest = '{"a": ' * (JSON_DEPTH - 1) + "[1]" + "}" * (JSON_DEPTH - 1)
    assert _refusal(deepest.encode()) is None
    assert _refusal(b'{"metadata": {"a": 1e308, "b": -2.5e-300}}') is None


def test_a_small_pdf_never_becomes_a_mountain_of_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page listed many times is read once, and a served user's ingest reads a bounded
    amount of text in all; the rest of its inputs say why they were not read."""
    from rat_agent.ingest import pdf

    text = b"BT /F1 12 Tf 72 720 Td (" + b"lorem ipsum " * 400 + b") Tj ET"
    bomb = pdf_drawing(text, listed=5000, compress=True)
    _, text, note = pdf.text_of(bomb)
    assert len(bomb) < 40_000 and 4000 < len(text) < 6000 and note == ""

    monkeypatch.setattr(pipeline, "SERVED_INGEST_CHARS", 500)  # less than one file
    for n in range(3):
        (tmp_path / f"d{n}.md").write_text(f"Document {n}: " + "words of text " * 60 + "\n")
    with as_served("bob"):
        report = pipeline.ingest(
            [str(tmp_path / f"d{n}.md") for n in range(3)], collection=own_collection("d", "bob")
        )
    assert report.sources == 1
    assert [why for _, why in report.failed] == [pipeline.SERVED_TEXT_SPENT] * 2


def test_a_pdf_that_would_take_any_amount_of_work_is_skipped_within_the_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One page can draw one long stream of content many times; parsing it yields no text
    and costs seconds of CPU and hundreds of MB a copy. The child process that reads a PDF
    is stopped at its limits (here 2 s), and the ingest goes on."""
    from rat_agent.ingest import pdf

    out = pdf_drawing(b"BT /F1 12 Tf () Tj ET\n" * 50_000, drawn=50, compress=True)  # no text
    monkeypatch.setattr(pdf, "CPU_SECONDS", 2)
    assert len(out) < 5000
    with pytest.raises(pdf.Unreadable, match="took more than 2 s of CPU"):
        pdf.text_of(out)


def test_an_ingest_stops_when_its_users_key_is_revoked_midway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_data: None
) -> None:
    """Between sources and before each stored batch, the ingest asks the key file too."""
    from fakes import as_served

    from rat_agent.ingest.pipeline import ingest
    from rat_agent.serve.keys import KeyFile

    monkeypatch.setenv("RAT_SERVE_KEYS", str(tmp_path / "keys.json"))
    KeyFile().add("alice")
    files = []
    for n in range(3):
        files.append(tmp_path / f"note{n}.md")
        files[-1].write_text(f"# Note {n}\n\nThe backups of site {n} run at noon.\n")

    def revoke_after_the_first(stage: str, done: int, total: int) -> None:
        if stage == "reading" and done == 1:
            KeyFile().revoke("alice")

    with as_served("alice"), pytest.raises(ConfigError, match="no live API key"):
        ingest([str(f) for f in files], collection="notes", progress=revoke_after_the_first)
