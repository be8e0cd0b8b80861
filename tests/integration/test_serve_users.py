"""Each user's own documents and thought memory on a keyed `make serve` with two workers,
driven by the LangGraph SDK: alice and bob each ingest into collections of their own and
read those and the operator's shared one, never each other's, however they name them.

The collections are in embedded Qdrant, which one process opens at a time, and no Qdrant
server installs on these machines: so worker 0 runs every run (RAT_SERVE_RUNNERS=1) and
worker 1 serves the API and queues for it, as docs/serving.md advises without QDRANT_URL.
Documents are served on loopback, which the operator allows (RAT_ALLOW_PRIVATE_URLS).
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from rat_agent.served import own_collection

pytestmark = pytest.mark.needs("postgresql", "redis")
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "serve.sh"
CONTEXT = {"model": "fakes:tagged_model", "retriever": "qdrant", "query_prompt": "", "k": 2}
DOCS = {
    "handbook.md": "The handbook: expenses are filed by the fifth of each month.",
    "alice.md": "Alice's plan: the launch of Q-700 moves to the fifth of May.",
    "bob.md": "Bob's plan: the budget review of Q-700 moves to the fifth of June.",
}


def _serve(*args: str, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        pytest.fail(f"serve.sh {' '.join(args)} failed: {done.stderr[-2000:]}", pytrace=False)
    return done.stdout.split()


def _cli(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class Served:
    def __init__(
        self, urls: list[str], keys: dict[str, str], docs: str, shared: str, env: dict[str, str]
    ) -> None:
        self.urls, self.keys, self.docs, self.shared, self.env = urls, keys, docs, shared, env

    def client(self, worker: int, user: str) -> LangGraphClient:
        return get_client(url=self.urls[worker], api_key=self.keys[user])


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    folder = Path(tempfile.mkdtemp(prefix="rat-serve-users-"))
    pages = folder / "pages"
    pages.mkdir()
    for name, text in DOCS.items():
        (pages / name).write_text(text + "\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(pages))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    env = {
        **os.environ,
        "RAT_SERVE_DIR": tempfile.mkdtemp(prefix="rat-serve-"),  # serve.sh opens it to 0711
        "RAT_SERVE_PORT": "0",
        "RAT_SERVE_KEYS": str(folder / "keys.json"),
        "RAT_DATA_DIR": str(folder / "data"),
        "PYTHONPATH": str(ROOT / "tests"),
        "RAT_KEEP_ALIVE": "0",
        "RAT_IMPORTS": "fakes",
        "RAT_SERVE_RUNNERS": "1",
        "RAT_ALLOW_PRIVATE_URLS": "127.0.0.1",
        # crons every few seconds, so a test sees one fire before and after a revocation
        "CRON_POLL_INTERVAL_SECONDS": "1",
        "CRON_ALLOW_SECONDS_SCHEDULE": "true",
    }
    shared = str(pages / "handbook.md")
    _cli("ingest", shared, "--collection", "handbook", env=env)  # the operator's, shared
    keys = {user: _cli("serve-keys", "add", user, env=env) for user in ("alice", "bob", "carol")}
    urls = _serve("start", "2", env=env)
    try:
        yield Served(urls, keys, f"http://127.0.0.1:{site.server_port}", shared, env)
    finally:
        _serve("stop", env=env)
        site.shutdown()


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _ingest(client: LangGraphClient, page: str, collection: str, served: Served) -> Any:
    thread = await client.threads.create()
    return await client.runs.wait(
        thread["thread_id"],
        "ingest",
        input={"paths": [f"{served.docs}/{page}"], "collection": collection},
    )


async def _ask(client: LangGraphClient, collection: str, **context: Any) -> dict[str, Any]:
    thread = await client.threads.create()
    result = await client.runs.wait(
        thread["thread_id"],
        "rat",
        input={"question": "When does Q-700 move?"},
        context={**CONTEXT, "collection": collection, **context},
    )
    assert isinstance(result, dict)
    return result


def _sources(result: dict[str, Any], kind: str = "document") -> set[str]:
    return {s["source"] for step in result["steps"] for s in step["sources"] if s["kind"] == kind}


async def _refused(client: LangGraphClient, collection: str) -> str:
    with pytest.raises(Exception) as caught:  # the SDK raises a run's error bare
        await _ask(client, collection)
    return str(caught.value)


def test_each_user_fills_and_reads_their_own_collections_and_the_shared_one(
    served: Served,
) -> None:
    async def go() -> None:
        alice, bob = served.client(1, "alice"), served.client(1, "bob")
        alice_at_0, bob_at_0 = served.client(0, "alice"), served.client(0, "bob")
        report = await _ingest(alice, "alice.md", "notes", served)
        assert report["collection"] == "notes" and report["added"] >= 1, report
        assert _sources(await _ask(alice_at_0, "notes")) == {f"{served.docs}/alice.md"}

        for name in ("notes", own_collection("notes", "alice")):  # bob cannot name hers
            why = await _refused(bob, name)
            assert f"no collection '{name}' of yours or shared" in why, why
            assert "alice" not in why.replace(name, "")  # and is told of no other
        # bob's "notes" are his own, even written under the name of hers
        for name in ("notes", own_collection("notes", "alice")):
            assert (await _ingest(bob_at_0, "bob.md", name, served))["added"] >= 1
        assert _sources(await _ask(bob, "notes")) == {f"{served.docs}/bob.md"}
        assert _sources(await _ask(alice, "notes")) == {f"{served.docs}/alice.md"}

        # the operator's collection: both read it; bob's ingest under its name is his own
        for client in (alice, bob_at_0):
            assert _sources(await _ask(client, "handbook")) == {served.shared}
        await _ingest(bob, "bob.md", "handbook", served)
        assert _sources(await _ask(alice_at_0, "handbook")) == {served.shared}

    run(go())


def test_each_users_thought_memory_is_theirs_alone(served: Served) -> None:
    async def go() -> None:
        alice, bob = served.client(0, "alice"), served.client(1, "bob")
        await _ingest(alice, "alice.md", "plans", served)
        first = await _ask(alice, "plans", memory="thoughts")
        stored = [t["id"] for t in first["thoughts"] if t["stored"]]
        assert stored, first["thoughts"]

        memory = own_collection("thoughts", "alice")
        why = await _refused(bob, memory)  # not as documents, by its name
        assert f"no collection '{memory}' of yours or shared" in why, why
        assert (await _ingest(bob, "bob.md", memory, served))["added"] >= 1  # his own
        await _ingest(bob, "bob.md", "plans", served)
        theirs = await _ask(bob, "plans", memory="thoughts")
        assert not _sources(theirs, "thought") & {f"thought:{t}" for t in stored}

        again = await _ask(alice, "plans", memory="thoughts")  # a later related run of hers
        assert {f"thought:{t}" for t in stored} <= _sources(again, "thought")

    run(go())


def test_a_revoked_users_crons_are_disabled_at_revocation(served: Served) -> None:
    """A cron runs as its maker with no request, so no key is asked for: revoking a user's
    last key disables their crons at once, and a run already started fails at its next
    model call or search, which ask the key file."""
    import psycopg

    context = {**CONTEXT, "retriever": "fakes:make_retriever"}

    async def go() -> None:
        carol = served.client(1, "carol")
        thread = (await carol.threads.create())["thread_id"]
        await carol.crons.create_for_thread(
            thread, "rat", schedule="*/2 * * * * *", input={"question": "Q-800"}, context=context
        )
        for _ in range(60):  # until one has run as her
            if any(r["status"] == "success" for r in await carol.runs.list(thread)):
                break
            await asyncio.sleep(0.5)
        else:
            pytest.fail("carol's cron never ran")

    run(go())
    done = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "serve-keys", "revoke", "carol"],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "disabled 1 cron of carol" in done.stderr, done.stderr
    database = Path(served.env["RAT_SERVE_DIR"], "database_url").read_text().strip()
    with psycopg.connect(database, autocommit=True) as conn:
        assert conn.execute(
            "SELECT bool_or(enabled) FROM crons WHERE user_id = 'carol'"
        ).fetchone() == (False,)
        (revoked,) = conn.execute("SELECT now()").fetchone()  # type: ignore[misc]
        time.sleep(8)  # four firings, were it still enabled
        (fired,) = conn.execute(  # type: ignore[misc]
            "SELECT count(*) FROM runs WHERE user_id = 'carol' AND created_at > %s", [revoked]
        ).fetchone()
    assert fired == 0


def test_one_users_stuck_runs_keep_no_one_else_waiting(served: Served) -> None:
    """Eight runs of alice's whose model never answers: each gets a thread (the pool had six,
    and the seventh run on waited), and bob's run and the health check go on at once. Last
    in the module: those threads stay blocked until the workers stop."""
    log = Path(served.env["RAT_SERVE_DIR"], "worker-0", "log")

    async def go() -> None:
        alice, bob = served.client(0, "alice"), served.client(1, "bob")
        stuck = {**CONTEXT, "model": "fakes:hanging_model", "retriever": "fakes:make_retriever"}
        for n in range(8):
            thread = await alice.threads.create()
            await alice.runs.create(
                thread["thread_id"], "rat", input={"question": f"Q-90{n}"}, context=stuck
            )
        for _ in range(120):  # until every one of them is in its model call
            if log.read_text(errors="replace").count("CALL STARTED") >= 8:
                break
            await asyncio.sleep(0.25)
        assert log.read_text(errors="replace").count("CALL STARTED") == 8
        started = time.monotonic()
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{served.urls[0]}/health", timeout=10)).status_code == 200
        thread = await bob.threads.create()
        done = await asyncio.wait_for(
            bob.runs.wait(
                thread["thread_id"],
                "rat",
                input={"question": "How do I make Q-910?"},
                context={**CONTEXT, "retriever": "fakes:make_retriever"},
            ),
            30,
        )
        assert isinstance(done, dict) and len(done["steps"]) == 2
        assert time.monotonic() - started < 30

    run(go())


@pytest.mark.needs("chromium")
def test_the_page_asks_for_a_key_and_lists_only_that_users_runs(served: Served) -> None:
    """The web page on a keyed server: it asks for the key, then lists the runs of the key's
    user only (the server filters; the page shows what it is given)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install 'rat-agent[dev]'")
    from server_fakes import FLAGS
    from services import CHROMIUM

    async def seed() -> None:
        for user in ("alice", "bob"):
            client = served.client(1, user)
            await client.threads.create(metadata={"question": f"What is {user}'s plan?"})

    run(seed())
    expect = sync_api.expect
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for user, other in (("alice", "bob"), ("bob", "alice")):
            page = browser.new_page()
            page.goto(f"{served.urls[1]}/ui/")
            page.get_by_label("API key").fill(served.keys[user])
            page.get_by_role("button", name="Use key").click()
            runs = page.locator(".past li")
            expect(runs.filter(has_text=f"What is {user}'s plan?")).to_have_count(1)
            expect(runs.filter(has_text=f"What is {other}'s plan?")).to_have_count(0)
            expect(page.get_by_label("API key")).to_have_count(0)
            # the key is forgotten at a click: the runs go, the page asks for a key again
            page.get_by_role("button", name="Forget key").click()
            expect(page.get_by_label("API key")).to_have_count(1)
            expect(runs).to_have_count(0)
            page.reload()
            expect(page.get_by_label("API key")).to_have_count(1)
            page.close()
        browser.close()
