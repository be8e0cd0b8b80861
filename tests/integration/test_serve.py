"""RAT on Aegra (scripts/serve.sh): two workers sharing PostgreSQL and Redis, driven by the
LangGraph SDK as a client app would. Fake models by import path keep it offline and exact.

The workers are real processes started by the project's script; so are PostgreSQL and Redis.
Auth is on, as for any server with users: keys made with `rat serve-keys` for alice, bob and
carol; every client below is alice's unless it says otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import AuthenticationError, NotFoundError

pytestmark = pytest.mark.needs("postgresql", "redis")
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "serve.sh"
CONTEXT = {"model": "fakes:tagged_model", "retriever": "fakes:make_retriever", "query_prompt": ""}


def _serve(folder: str, *args: str, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        pytest.fail(f"serve.sh {' '.join(args)} failed: {done.stderr[-2000:]}", pytrace=False)
    return done.stdout.split()


class Served:
    def __init__(
        self, folder: str, env: dict[str, str], urls: list[str], keys: dict[str, str]
    ) -> None:
        self.folder, self.env, self.urls, self.keys = folder, env, urls, keys

    def client(self, worker: int, user: str = "alice") -> LangGraphClient:
        return get_client(url=self.urls[worker], api_key=self.keys[user])

    def pid(self, worker: int) -> int:
        return int(Path(self.folder, f"worker-{worker}", "pid").read_text())

    def kill(self, worker: int) -> None:
        _serve(self.folder, "kill", str(worker), env=self.env)

    def restart(self, worker: int) -> None:
        _serve(self.folder, "restart", str(worker), env=self.env)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    folder = tempfile.mkdtemp(prefix="rat-serve-")
    env = {
        **os.environ,
        "RAT_SERVE_DIR": folder,
        "RAT_SERVE_PORT": "0",  # free ports
        "PYTHONPATH": str(ROOT / "tests"),
        "RAT_KEEP_ALIVE": "0",
        "RAT_TEST_CALL_LOG": str(Path(folder) / "calls.log"),
        "RAT_SERVE_KEYS": str(Path(folder) / "keys.json"),
        "RAT_IMPORTS": "fakes",  # the fake models and retrievers the runs name
        # a dead worker's runs are taken up after seconds, not Aegra's default ~50 s
        "LEASE_DURATION_SECONDS": "6",
        "HEARTBEAT_INTERVAL_SECONDS": "2",
        "REAPER_INTERVAL_SECONDS": "2",
    }
    keys = {user: serve_keys("add", user, env=env) for user in ("alice", "bob", "carol")}
    urls = _serve(folder, "start", "2", env=env)
    assert len(urls) == 2
    try:
        yield Served(folder, env, urls, keys)
    finally:
        _serve(folder, "stop", env=env)


def serve_keys(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rat_agent.cli", "serve-keys", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_threads_streams_and_history_across_two_workers(served: Served) -> None:
    async def go() -> None:
        first, second = served.client(0), served.client(1)
        thread = await first.threads.create()
        events = [
            (part.event, part.data)
            async for part in first.runs.stream(
                thread["thread_id"],
                "rat",
                input={"question": "How do I make Q-1?"},
                context=CONTEXT,
                stream_mode=["updates", "custom"],
            )
        ]
        kinds = [e for e, _ in events]
        assert "custom" in kinds and "updates" in kinds and kinds[-1] != "error"
        customs = [d["event"] for e, d in events if e == "custom"]
        assert customs[0] == "draft" and customs.count("step") == 2

        # the other worker sees the same thread, state and history
        state = await second.threads.get_state(thread["thread_id"])
        assert [s["revised"] for s in state["values"]["steps"]] == [
            "FIXED gather what Q-1 needs",
            "FIXED make Q-1",
        ]
        page = await second.threads.get_history(thread["thread_id"], limit=3)
        assert len(page) == 3
        older = await second.threads.get_history(
            thread["thread_id"], limit=3, before=page[-1]["checkpoint"]
        )
        assert older and {h["checkpoint"]["checkpoint_id"] for h in older}.isdisjoint(
            h["checkpoint"]["checkpoint_id"] for h in page
        )

    run(go())


def test_a_review_paused_on_one_worker_is_resumed_through_the_other(served: Served) -> None:
    async def go() -> None:
        first, second = served.client(0), served.client(1)
        thread = await first.threads.create()
        await first.runs.wait(
            thread["thread_id"],
            "rat",
            input={"question": "How do I make Q-2?"},
            context={**CONTEXT, "review_draft": True},
        )
        paused = await first.threads.get(thread["thread_id"])
        assert paused["status"] == "interrupted"
        result = await second.runs.wait(
            thread["thread_id"],
            "rat",
            command={"resume": {"drafts": ["make Q-2 by hand"]}},
            context={**CONTEXT, "review_draft": True},
        )
        assert isinstance(result, dict)
        assert [s["revised"] for s in result["steps"]] == ["FIXED make Q-2 by hand"]

    run(go())


def test_twenty_concurrent_background_runs_are_neither_mixed_up_nor_lost(
    served: Served,
) -> None:
    async def go() -> None:
        clients = [served.client(0), served.client(1)]
        started = []
        for n in range(20):
            client = clients[n % 2]
            thread = await client.threads.create()
            created = await client.runs.create(
                thread["thread_id"],
                "rat",
                input={"question": f"How do I make Q-{100 + n}?"},
                context=CONTEXT,
            )
            started.append((n, thread["thread_id"], created["run_id"]))
        for n, thread_id, run_id in started:
            await clients[(n + 1) % 2].runs.join(thread_id, run_id)  # joined via the other
        for n, thread_id, run_id in started:
            run_row = await clients[0].runs.get(thread_id, run_id)
            assert run_row["status"] == "success", run_row
            state = await clients[1].threads.get_state(thread_id)
            assert [s["revised"] for s in state["values"]["steps"]] == [
                f"FIXED gather what Q-{100 + n} needs",
                f"FIXED make Q-{100 + n}",
            ]

    run(go())


def _errors(served: Served) -> str:
    """The workers' logged errors, for a failed run's message."""
    lines = []
    for log in sorted(Path(served.folder).glob("worker-*/log")):
        text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
        lines += [line for line in text.splitlines() if "Error" in line][-5:]
    return "\n".join(lines)


SLOW = {"model": "fakes:slow_tagged_model", "retriever": "fakes:make_retriever"}


def _calls(served: Served, tag: str) -> list[tuple[int, str, str]]:
    """(pid, kind, reply's first line) of each call for question `tag`, in the order logged;
    kind "start" marks a call that began (its kind is then the text's first word)."""
    path = Path(served.env["RAT_TEST_CALL_LOG"])
    lines = path.read_text().splitlines() if path.exists() else []
    calls = []
    for line in lines:
        pid, kind, text = line.split(" ", 2)
        if tag in text:
            calls.append((int(pid), kind, text))
    return calls


def _finished(calls: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    return [c for c in calls if c[1] != "start"]


def test_a_run_whose_worker_is_killed_finishes_on_the_other(served: Served) -> None:
    """SIGKILL the worker running a background run during its fourth model call: the lease
    runs out, the survivor's reaper queues the run again, and it goes on there from the
    last checkpoint: the steps are an uninterrupted run's, and no finished call is redone
    (only the call that was cut off)."""

    async def go() -> tuple[list[str], list[str], list[tuple[int, str, str]], int]:
        clients = [served.client(0), served.client(1)]
        reference = await clients[0].threads.create()
        done = await clients[0].runs.wait(
            reference["thread_id"], "rat", input={"question": "How do I make Q-900?"}, context=SLOW
        )
        assert isinstance(done, dict)
        expected = [s["revised"].replace("Q-900", "Q-901") for s in done["steps"]]

        thread = await clients[0].threads.create()
        created = await clients[0].runs.create(
            thread["thread_id"],
            "rat",
            input={"question": "How do I make Q-901?"},
            context=SLOW,
            durability="sync",  # a node's checkpoint is written before the next node starts
        )
        for _ in range(600):  # until the 4th call is under way: 3 finished, 1 in flight
            calls = _calls(served, "Q-901")
            if len(_finished(calls)) >= 3 and calls[-1][1] == "start":
                break
            await asyncio.sleep(0.05)
        running = calls[0][0]
        worker = [served.pid(0), served.pid(1)].index(running)
        served.kill(worker)
        survivor = clients[1 - worker]
        await asyncio.wait_for(survivor.runs.join(thread["thread_id"], created["run_id"]), 180)
        row = await survivor.runs.get(thread["thread_id"], created["run_id"])
        assert row["status"] == "success", row
        state = await survivor.threads.get_state(thread["thread_id"])
        got = [s["revised"] for s in state["values"]["steps"]]
        # taken over, the run and its thread are still alice's alone
        assert (await survivor.threads.get(thread["thread_id"]))["metadata"]["owner"] == "alice"
        with pytest.raises(NotFoundError):
            await served.client(1 - worker, "bob").runs.get(thread["thread_id"], created["run_id"])
        return expected, got, _finished(_calls(served, "Q-901")), worker

    expected, got, calls, worker = run(go())
    try:
        assert got == expected
        finished_before = [c for c in calls if c[0] == served.pid(worker)]
        after = [(kind, text) for pid, kind, text in calls if pid != served.pid(worker)]
        assert len(finished_before) == 3
        repeated = [(kind, text) for _, kind, text in finished_before if (kind, text) in after]
        print(f"before the kill: {finished_before}; after: {after}")
        assert repeated == [], f"finished model calls made again after the kill: {repeated}"
    finally:
        served.restart(worker)


def test_restarting_every_worker_loses_no_thread_run_or_paused_review(served: Served) -> None:
    async def go() -> None:
        clients = [served.client(0), served.client(1)]
        done = await clients[0].threads.create()
        finished = await clients[0].runs.create(
            done["thread_id"], "rat", input={"question": "How do I make Q-700?"}, context=CONTEXT
        )
        await clients[0].runs.join(done["thread_id"], finished["run_id"])
        paused = await clients[1].threads.create()
        await clients[1].runs.wait(
            paused["thread_id"],
            "rat",
            input={"question": "How do I make Q-701?"},
            context={**CONTEXT, "review_draft": True},
        )
        busy = await clients[0].threads.create()
        running = await clients[0].runs.create(
            busy["thread_id"],
            "rat",
            input={"question": "How do I make Q-702?"},
            context=SLOW,
            durability="sync",
        )

        for worker in (0, 1):  # one after the other, as a rolling restart does
            served.restart(worker)

        assert (await clients[1].runs.get(done["thread_id"], finished["run_id"]))[
            "status"
        ] == "success"
        assert (await clients[0].threads.get(paused["thread_id"]))["status"] == "interrupted"
        resumed = await clients[0].runs.wait(
            paused["thread_id"],
            "rat",
            command={"resume": True},
            context={**CONTEXT, "review_draft": True},
        )
        assert isinstance(resumed, dict)
        assert [s["revised"] for s in resumed["steps"]] == [
            "FIXED gather what Q-701 needs",
            "FIXED make Q-701",
        ]
        await asyncio.wait_for(clients[1].runs.join(busy["thread_id"], running["run_id"]), 180)
        row = await clients[1].runs.get(busy["thread_id"], running["run_id"])
        assert row["status"] == "success", row
        state = await clients[1].threads.get_state(busy["thread_id"])
        assert [s["revised"] for s in state["values"]["steps"]] == [
            "FIXED gather what Q-702 needs",
            "FIXED make Q-702",
        ]

    run(go())


def test_every_worker_searches_the_bundled_corpus(served: Served) -> None:
    """Embedded Qdrant lets one process open the corpus folder: the other workers search an
    in-memory copy of the same index. Runs on both workers search it at once."""

    async def go() -> list[dict[str, Any]]:
        clients = [served.client(0), served.client(1)]
        context = {**SLOW, "retriever": "minecraft", "k": 1, "query_prompt": ""}
        threads = [await clients[n % 2].threads.create() for n in range(6)]
        runs = [
            await clients[n % 2].runs.create(
                t["thread_id"],
                "rat",
                input={"question": f"How do I craft a torch? Q-{300 + n}"},
                context=context,
            )
            for n, t in enumerate(threads)
        ]
        states = []
        for n, (t, r) in enumerate(zip(threads, runs, strict=True)):
            await asyncio.wait_for(clients[n % 2].runs.join(t["thread_id"], r["run_id"]), 300)
            row = await clients[0].runs.get(t["thread_id"], r["run_id"])
            assert row["status"] == "success", _errors(served)
            states.append((await clients[1].threads.get_state(t["thread_id"]))["values"])
        return states

    states = run(go())
    pids = {pid for pid, kind, _ in _calls(served, "Q-30") if kind != "start"}
    assert pids <= {served.pid(0), served.pid(1)}
    assert len(pids) == 2, "every run went to one worker: the test proves nothing"
    from rat_minecraft.corpus import SOURCE_PREFIX

    for state in states:
        assert all(s["sources"][0]["source"].startswith(SOURCE_PREFIX) for s in state["steps"])


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


def test_each_user_finds_only_their_own_threads(served: Served) -> None:
    async def go() -> None:
        tag = {"tag": "search-501"}
        for worker, user in ((0, "alice"), (1, "alice"), (0, "bob"), (1, "bob")):
            made = await served.client(worker, user).threads.create(metadata=tag)
            assert made["metadata"]["owner"] == user
        for user in ("alice", "bob"):
            for worker in (0, 1):
                found = await served.client(worker, user).threads.search(metadata=tag)
                assert len(found) == 2 and {t["metadata"]["owner"] for t in found} == {user}
        assert await served.client(0, "carol").threads.search(metadata=tag) == []

    run(go())


def test_another_users_thread_and_runs_answer_404_to_every_action(served: Served) -> None:
    """Bob knows the ids of Alice's thread, run and checkpoints; nothing he does with them
    reads, changes, resumes, forks or deletes them, and each answer is the 404 of a thread
    that does not exist."""
    review = {**CONTEXT, "review_draft": True}

    async def go() -> None:
        alice, bob = served.client(0), served.client(1, "bob")
        tid = (await alice.threads.create())["thread_id"]
        await alice.runs.wait(
            tid, "rat", input={"question": "How do I make Q-510?"}, context=review
        )
        first = (await alice.threads.get_history(tid))[-1]["checkpoint"]["checkpoint_id"]
        run_id = (await alice.runs.list(tid))[0]["run_id"]
        await alice.store.put_item(["notes"], "plan", {"text": "Q-510 secrets"})
        cron: Any = await alice.crons.create_for_thread(  # off: no first run on her thread
            tid, "rat", schedule="0 0 1 1 *", input={"question": "Q-512"}, enabled=False
        )
        attempts: dict[str, Callable[[], Awaitable[Any]]] = {
            "read": lambda: bob.threads.get(tid),
            "state": lambda: bob.threads.get_state(tid),
            "state at a checkpoint": lambda: bob.threads.get_state(tid, checkpoint_id=first),
            "history": lambda: bob.threads.get_history(tid),
            "update": lambda: bob.threads.update(tid, metadata={"owner": "bob"}),
            "fork": lambda: bob.threads.update_state(
                tid, {"question": "mine"}, checkpoint_id=first
            ),
            "resume": lambda: bob.runs.wait(tid, "rat", command={"resume": True}, context=review),
            "run from a checkpoint": lambda: bob.runs.create(
                tid, "rat", input={"question": "Q-511"}, checkpoint_id=first, context=CONTEXT
            ),
            "get run": lambda: bob.runs.get(tid, run_id),
            "join": lambda: bob.runs.join(tid, run_id),
            "stream": lambda: _drain(bob.runs.join_stream(tid, run_id)),
            "cancel": lambda: bob.runs.cancel(tid, run_id),
            "delete run": lambda: bob.runs.delete(tid, run_id),
            "cron on her thread": lambda: bob.crons.create_for_thread(
                tid, "rat", schedule="0 0 1 1 *", input={"question": "Q-513"}
            ),
            "update cron": lambda: bob.crons.update(cron["cron_id"], schedule="0 0 2 1 *"),
            "delete cron": lambda: bob.crons.delete(cron["cron_id"]),
            "delete": lambda: bob.threads.delete(tid),
        }
        for name, attempt in attempts.items():
            with pytest.raises(httpx.HTTPStatusError) as caught:  # some SDK calls raise it bare
                await attempt()
            assert caught.value.response.status_code == 404, (name, caught.value)
        assert await bob.runs.list(tid) == []
        assert cron["cron_id"] not in {c["cron_id"] for c in await bob.crons.search()}
        assert cron["cron_id"] in {c["cron_id"] for c in await alice.crons.search()}
        assert tid not in {t["thread_id"] for t in await bob.threads.search(limit=100)}
        assert len((await alice.store.search_items(["notes"]))["items"]) == 1
        assert (await bob.store.search_items(["notes"]))["items"] == []
        with pytest.raises(NotFoundError):
            await bob.store.get_item(["notes"], "plan")

        # Alice's thread is as she left it, and hers to resume
        thread = await alice.threads.get(tid)
        assert thread["status"] == "interrupted" and thread["metadata"]["owner"] == "alice"
        done = await served.client(1).runs.wait(
            tid, "rat", command={"resume": True}, context=review
        )
        assert isinstance(done, dict)
        assert [s["revised"] for s in done["steps"]] == [
            "FIXED gather what Q-510 needs",
            "FIXED make Q-510",
        ]
        assert (await alice.store.get_item(["notes"], "plan"))["value"]["text"] == "Q-510 secrets"

    run(go())


def test_no_key_a_malformed_key_or_a_revoked_key_gets_401(served: Served) -> None:
    async def refused(url: str, key: str | None, why: str) -> None:
        with pytest.raises(AuthenticationError) as caught:
            await get_client(url=url, api_key=key).threads.search()
        assert why in str(caught.value), caught.value

    async def go() -> None:
        for url in served.urls:
            await refused(url, None, "an API key is required")
            await refused(url, "rat_not-a-key", "malformed API key")
            assert await served.client(served.urls.index(url), "carol").threads.search() == []
        serve_keys("revoke", "carol", env=served.env)  # no restart: the next request sees it
        for url in served.urls:
            await refused(url, served.keys["carol"], "unknown or revoked")
        # the health check stays open, for load balancers
        for url in served.urls:
            async with httpx.AsyncClient() as http:
                assert (await http.get(f"{url}/health")).status_code == 200

    run(go())


def test_no_key_reaches_a_log_a_checkpoint_or_a_thread(served: Served) -> None:
    """Run after every other test on the module's workers: each key has been used by then."""
    secrets = [key.split("_", 2)[2] for key in served.keys.values()]
    # every file the server wrote (logs, Redis, PostgreSQL's files and WAL), then every row
    texts = []
    for path in Path(served.folder).rglob("*"):
        try:
            texts.append(path.read_bytes().decode("latin-1"))
        except OSError:  # folders, sockets, PostgreSQL's files when it runs as another user
            continue
    import psycopg

    with psycopg.connect(Path(served.folder, "database_url").read_text().strip()) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
        assert {"checkpoints", "checkpoint_blobs", "thread", "runs"} & {t for (t,) in tables}
        for (table,) in tables:
            rows = conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
            texts.extend(row for (row,) in rows)
    blob = "\n".join(texts)
    assert "alice" in blob  # owners are stored: the search covered what holds them
    for secret in secrets:
        assert secret not in blob and secret.encode().hex() not in blob


def test_workers_started_open_take_up_auth_when_started_again_after_the_first_key() -> None:
    """`make serve`, then `rat serve-keys add`, then `make serve` again: the running worker
    must not go on serving everyone as one user."""
    folder = tempfile.mkdtemp(prefix="rat-serve-")
    env = {
        **os.environ,
        "RAT_SERVE_DIR": folder,
        "RAT_SERVE_PORT": "0",
        "RAT_SERVE_KEYS": str(Path(folder) / "keys.json"),
        "RAT_KEEP_ALIVE": "0",
    }
    try:
        (url,) = _serve(folder, "start", "1", env=env)
        assert run(get_client(url=url, api_key=None).threads.search()) == []  # open
        key = serve_keys("add", "alice", env=env)
        (again,) = _serve(folder, "start", "1", env=env)
        with pytest.raises(AuthenticationError):
            run(get_client(url=again, api_key=None).threads.search())
        assert run(get_client(url=again, api_key=key).threads.search()) == []
    finally:
        _serve(folder, "stop", env=env)


async def _run_error(client: LangGraphClient, context: dict[str, Any]) -> str:
    """The message a run with `context` fails with."""
    thread = await client.threads.create()
    with pytest.raises(Exception) as caught:  # the SDK raises a run's error bare
        await client.runs.wait(
            thread["thread_id"], "rat", input={"question": "How do I make Q-600?"}, context=context
        )
    return str(caught.value)


def test_a_runs_context_imports_nothing_unlisted_and_stops_no_worker(served: Served) -> None:
    """Finding `this.x` imports `this`; importing `lib2to3.__main__` calls sys.exit; following
    names from a listed module reaches its builtins. None happens: the allow-list and the
    names are checked before any is looked up. Nor is a model read from a path of the server
    or a hub."""
    pids = [served.pid(0), served.pid(1)]

    async def go() -> None:
        alice = served.client(0)
        for model in ("this.x:y", "lib2to3.__main__.x:y"):
            why = await _run_error(alice, {**CONTEXT, "model": model})
            assert "this server loads no module outside RAT_IMPORTS (fakes)" in why, why
        why = await _run_error(alice, {**CONTEXT, "retriever": "this.x:y"})
        assert "RAT_IMPORTS" in why
        # a listed module's objects, not what they reach: clearing builtins stopped a worker
        for retriever in (
            "fakes:make_retriever.__builtins__.clear",
            "fakes:SHARED_RETRIEVER.documents.clear",
        ):
            why = await _run_error(alice, {**CONTEXT, "retriever": retriever})
            assert "private" in why or "module itself" in why, why
        probes = [
            await _run_error(alice, {**CONTEXT, "model": f"huggingface:{path}"})
            for path in ("/etc", "/nonexistent")
        ]
        assert "no 'huggingface' models" in probes[0]
        assert probes[0].replace("/etc", "P") == probes[1].replace("/nonexistent", "P")
        thread = await alice.threads.create()
        done = await alice.runs.wait(
            thread["thread_id"], "rat", input={"question": "How do I make Q-601?"}, context=CONTEXT
        )
        assert isinstance(done, dict) and len(done["steps"]) == 2

    run(go())
    assert [served.pid(0), served.pid(1)] == pids  # both workers still the same processes
    logs = "".join(p.read_text(errors="replace") for p in Path(served.folder).glob("worker-*/log"))
    assert "Beautiful is better than ugly" not in logs  # `this` was never imported
    for pid in pids:  # and no worker may reach a model hub
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert b"HF_HUB_OFFLINE=1" in environ


def test_a_foreign_error_reaches_the_user_as_one_line_with_an_id(served: Served) -> None:
    """An error not of the project's making (here a plug-in's retriever whose metadata is
    wrong) may name the server's paths or code: the user reads a line with an id, through
    either worker; the worker's log keeps the error under that id."""

    async def go() -> list[str]:
        return [
            await _run_error(
                served.client(worker), {**CONTEXT, "retriever": "fakes:misdeclared_retriever"}
            )
            for worker in (0, 1)
        ]

    refs = []
    for why in run(go()):
        found = re.search(r"the run failed on the server \(error ([0-9a-f]{12})\)", why)
        assert found, why
        assert "/srv/rat" not in why and "ValueError" not in why and "int()" not in why, why
        refs.append(found.group(1))
    logs = "".join(p.read_text(errors="replace") for p in Path(served.folder).glob("worker-*/log"))
    for ref in refs:
        assert f"a served run failed (error {ref})" in logs
    assert "/srv/rat/plugin.py" in logs  # the details, for the operator


def test_requests_past_the_bounds_or_that_the_database_cannot_store_get_a_4xx(
    served: Served,
) -> None:
    import time

    async def go() -> None:
        alice = served.client(1)
        thread = (await alice.threads.create())["thread_id"]
        url = f"{served.urls[1]}/threads/{thread}/runs/wait"
        headers = {"x-api-key": served.keys["alice"], "content-type": "application/json"}
        async with httpx.AsyncClient(timeout=60) as http:

            async def post(body: str | bytes) -> httpx.Response:
                return await http.post(url, content=body, headers=headers)

            nan = await post(
                '{"assistant_id": "rat", "input": {"question": "Q-602"}, "context": {"k": NaN}}'
            )
            assert nan.status_code == 422 and "NaN" in nan.json()["message"]
            lone = await post('{"assistant_id": "rat", "input": {"question": "Q-603 \\ud800"}}')
            assert lone.status_code == 422 and "surrogate" in lone.json()["message"]
            deep = await post(
                '{"assistant_id": "rat", "context": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
            )
            assert deep.status_code == 422 and "nested" in deep.json()["message"]
            # what the server could store but not write back: refused, and her list works
            threads = f"{served.urls[1]}/threads"
            nested = '{"metadata": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}"
            for body in (nested, '{"metadata": {"a": 1E400}}'):
                made = await http.post(threads, content=body, headers=headers)
                assert made.status_code == 422, made.text
            listed = await http.post(f"{served.urls[0]}/threads/search", json={}, headers=headers)
            assert listed.status_code == 200 and thread in {t["thread_id"] for t in listed.json()}
            stored = await http.put(
                f"{served.urls[1]}/store/items",
                content='{"namespace": ["notes"], "key": "k", "value": {"a": 1e999}}',
                headers=headers,
            )
            assert stored.status_code == 422, stored.text
            # Aegra's event-streaming commands start runs without the auth handler
            command = {
                "id": 1,
                "method": "run.start",
                "params": {"assistant_id": "rat", "context": {**CONTEXT, "pad": "x" * 20_000}},
            }
            v2 = await http.post(
                f"{served.urls[1]}/threads/{thread}/commands", json=command, headers=headers
            )
            assert v2.status_code == 413, v2.text
            search = await http.post(
                f"{served.urls[1]}/store/items/search",
                json={"namespace_prefix": ["notes"], "filter": {"k": {"$regex": ".*"}}},
                headers=headers,
            )
            assert search.status_code == 422 and "$regex" in search.json()["message"]
            runs = await http.get(
                f"{served.urls[0]}/threads/{thread}/runs?offset={1 << 63}", headers=headers
            )
            assert runs.status_code == 422 and "64 bits" in runs.json()["message"]
            # what Aegra answered with a 500 (benchmarks/fuzz_serve.py found them)
            made = await http.post(
                f"{served.urls[1]}/assistants",
                json={"graph_id": "rat", "config": None},
                headers=headers,
            )
            assert made.status_code == 422 and "config" in made.json()["message"], made.text
            background = await alice.runs.create(
                thread, "rat", input={"question": "How do I make Q-607?"}, context=CONTEXT
            )
            await alice.runs.join(thread, background["run_id"])
            patched = await http.patch(
                f"{served.urls[0]}/threads/{thread}/runs/{background['run_id']}",
                json={"status": "bogus"},
                headers=headers,
            )
            assert patched.status_code == 422 and "bogus" in patched.json()["message"]
            updated = await http.post(
                f"{served.urls[0]}/threads/{thread}/state",
                json={"checkpoint_id": "e3e70682-c209-1cac-a29f-6fbed82c07cd"},
                headers=headers,
            )
            assert updated.status_code < 500, updated.text
            for wrong in ({"as_node": ""}, {"as_node": {}}, {"checkpoint_ns": "nowhere:1"}):
                updated = await http.post(
                    f"{served.urls[1]}/threads/{thread}/state",
                    json={"values": None, **wrong},
                    headers=headers,
                )
                assert updated.status_code == 422, updated.text
            started = time.monotonic()
            huge = await post(
                json.dumps({"assistant_id": "rat", "input": {"question": "x" * 10_000_000}})
            )
            assert huge.status_code == 413 and time.monotonic() - started < 10
        long_question = "How do I make Q-604? " + "x" * 20_000
        for attempt in (
            lambda: alice.runs.wait(
                thread, "rat", input={"question": long_question}, context=CONTEXT
            ),
            lambda: alice.runs.wait(
                thread, "ingest", input={"paths": ["https://example.org/"] * 101, "collection": "c"}
            ),
            lambda: alice.runs.wait(
                thread,
                "rat",
                input={"question": "Q-605"},
                context={**CONTEXT, "model": "m" * 20_000},
            ),
        ):
            with pytest.raises(httpx.HTTPStatusError) as caught:
                await attempt()
            assert caught.value.response.status_code == 413, caught.value
        assert "k must be a whole number" in await _run_error(alice, {**CONTEXT, "k": 3.5})
        # an assistant updated to the context another of hers has: a conflict, not a 500
        tag = f"Q-606-{time.time_ns()}"
        first = await alice.assistants.create("rat", context={**CONTEXT, "tag": tag})
        second = await alice.assistants.create("rat", context={**CONTEXT, "tag": tag + "b"})
        with pytest.raises(httpx.HTTPStatusError) as clash:
            await alice.assistants.update(second["assistant_id"], context=first["context"])
        assert clash.value.response.status_code == 409

    run(go())


def test_a_thread_stored_too_deep_before_the_bound_lists_and_deletes_after_a_restart(
    served: Served,
) -> None:
    """A release before the depth bound stored metadata some 300 levels deep, and every
    list of its owner's threads then failed: a worker started again cuts what lies past the
    bound, and the owner sees the thread and deletes it."""
    import psycopg
    from psycopg.types.json import Jsonb

    from rat_agent.serve.stored import CUT

    thread = run(served.client(1).threads.create(metadata={"tag": "Q-stuck"}))["thread_id"]
    deep: Any = 1
    for _ in range(300):
        deep = {"a": deep}
    url = Path(served.folder, "database_url").read_text().strip()
    with psycopg.connect(url, autocommit=True) as connection:  # as the older release wrote it
        connection.execute(
            "UPDATE thread SET metadata_json = metadata_json || %s WHERE thread_id = %s",
            [Jsonb({"deep": deep}), thread],
        )
    served.restart(0)

    async def go() -> None:
        alice = served.client(1)
        mine = await served.client(0).threads.search(metadata={"tag": "Q-stuck"})
        assert [t["thread_id"] for t in mine] == [thread]
        kept = mine[0]["metadata"]["deep"]
        for _ in range(62):  # the top level is 1, "deep" 2: the dict at 65 is cut
            kept = kept["a"]
        assert kept == {"a": CUT}
        assert await alice.threads.search(limit=100)  # the worker not restarted lists too
        await alice.threads.delete(thread)
        with pytest.raises(NotFoundError):
            await served.client(0).threads.get(thread)

    run(go())


def test_the_page_serves_nothing_to_a_stranger_and_no_page_loads_from_outside(
    served: Served,
) -> None:
    """/ui/options names the server's provider keys, defaults and sources: a key's user only.
    No FastAPI /docs or /redoc (they load a CDN's scripts on the page's origin), and no
    other origin's page may call the API (Aegra's default CORS lets every origin)."""
    url = served.urls[1]
    keyed = {"x-api-key": served.keys["alice"]}
    with httpx.Client(timeout=30) as http:
        assert http.get(f"{url}/ui/options").status_code == 401
        bad = http.get(f"{url}/ui/options", headers={"x-api-key": served.keys["alice"] + "x"})
        assert bad.status_code == 401
        shown = http.get(f"{url}/ui/options", headers=keyed)
        assert shown.status_code == 200 and "models" in shown.json()
        assert http.get(f"{url}/ui/").status_code == 200  # the page itself asks for the key
        for page in ("/docs", "/redoc"):
            assert http.get(f"{url}{page}").status_code == 404
        elsewhere = {**keyed, "origin": "http://127.0.0.9:8000"}
        answered = http.post(f"{url}/threads/search", json={}, headers=elsewhere)
        assert "access-control-allow-origin" not in answered.headers
        preflight = http.options(
            f"{url}/threads/search",
            headers={"origin": "http://127.0.0.9:8000", "access-control-request-method": "POST"},
        )
        assert "access-control-allow-origin" not in preflight.headers


def test_the_stores_take_only_their_passwords_and_the_files_are_private(served: Served) -> None:
    import stat
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    import redis

    folder = Path(served.folder)
    database = (folder / "database_url").read_text().strip()
    parts = urlsplit(database)
    bare = urlunsplit(parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}"))
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(bare, connect_timeout=5).close()
    with psycopg.connect(database) as conn:  # the workers' role: their database, no more
        row = conn.execute(
            "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False, False)
    for other in ("postgres", "template1"):  # and no other database of the cluster
        with pytest.raises(psycopg.OperationalError, match="permission denied"):
            psycopg.connect(database.rsplit("/", 1)[0] + "/" + other, connect_timeout=5).close()
    queue = (folder / "redis" / "url").read_text().strip()
    port = urlsplit(queue).port
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=port).ping()
    assert redis.Redis.from_url(queue).ping()

    assert stat.S_IMODE(folder.stat().st_mode) == 0o711  # PostgreSQL's user passes through
    assert stat.S_IMODE((folder / "pg").stat().st_mode) == 0o700
    exposed = [
        str(path)
        for path in folder.rglob("*")
        if not path.is_relative_to(folder / "pg") and path.stat().st_mode & 0o077
    ]
    assert exposed == []
