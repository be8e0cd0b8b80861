"""Damaged stores (issue 16): the error names the file and the way out; nothing else breaks.
And the store of earlier releases opens with its collections intact (issue 66).

The damage is real: segment files and SQLite pages overwritten in the middle, as a disk
that filled up or a copy cut short leaves them, and a Qdrant `meta.json` that is garbage
or empty.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from rat_agent import cli
from rat_agent.errors import RetrievalError
from rat_agent.memory.store import Memory
from rat_agent.paths import data_dir
from rat_agent.providers.embeddings import get_embeddings
from rat_agent.retrieval.qdrant import client as qdrant
from rat_agent.retrieval.qdrant import hybrid
from rat_agent.retrieval.qdrant.edge import Store


def _damage(path: Path, start: int = 4096) -> None:
    data = bytearray(path.read_bytes())
    data[start:] = b"\xab" * (len(data) - start)
    path.write_bytes(data)


def _damage_shard(folder: Path) -> None:
    """Every segment file of an Edge shard overwritten past its first quarter."""
    for path in (folder / "segments").rglob("*"):
        if path.is_file() and path.stat().st_size:
            _damage(path, path.stat().st_size // 4)


TEXTS = [
    "Set maxmemory-policy to allkeys-lru to evict any key when memory is full.",
    "The appendfsync option sets how often the append only file is written to disk.",
    "Sticks are crafted from two planks placed vertically.",
]


def _fill(client: Store, names: list[str], memory: str = "") -> None:
    """Collections as `rat ingest` and the memory make them: real embeddings and sparse
    vectors, langchain-qdrant's payload layout, our metadata."""
    dense = get_embeddings().embed_documents(TEXTS)
    sparse = hybrid.sparse_documents(TEXTS, [[f"t{i}"] for i in range(len(TEXTS))])
    for name in [*names, memory] if memory else names:
        extra = {"kind": "thoughts"} if name == memory else {}
        hybrid.create_collection(client, name, metadata={**qdrant.collection_metadata(), **extra})
        client.upsert(
            name,
            [
                hybrid.point(
                    str(uuid.uuid5(uuid.NAMESPACE_URL, f"{name}{i}")),
                    text,
                    {"source": f"{name}.md", "title": f"t{i}"},
                    d,
                    s,
                )
                for i, (text, d, s) in enumerate(zip(TEXTS, dense, sparse, strict=True))
            ],
        )


@pytest.fixture
def folder(fresh_data: None) -> Path:
    with qdrant.locked_client() as client:
        _fill(client, ["a", "b"], memory="thoughts")
    return Path(qdrant.location())


def test_a_damaged_collection_is_named_and_the_others_work(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qdrant.close_clients()
    _damage_shard(folder / "b")

    infos = {info.name: info for info in qdrant.list_collections()}
    assert infos["a"].points == 3 and not infos["a"].damaged
    assert "'b' is damaged" in infos["b"].damaged and "IO Error" in infos["b"].damaged
    with qdrant.locked_client() as client, pytest.raises(RetrievalError) as info:
        qdrant.check_collection(client, "b")
    assert "rat collections delete b" in str(info.value)
    with qdrant.locked_client() as client:
        qdrant.check_collection(client, "a")  # still searchable
        assert hybrid.search(client, "a", "evict keys when memory is full", 1)

    assert cli.main(["collections", "delete", "b", "--yes"]) == 0
    assert not (folder / "b").exists()
    assert [i.name for i in qdrant.list_collections()] == ["a", "thoughts"]
    capsys.readouterr()


def test_a_damaged_memory_is_named_and_can_be_cleared(folder: Path) -> None:
    qdrant.close_clients()
    _damage_shard(folder / "thoughts")
    memory = Memory("thoughts")
    with pytest.raises(RetrievalError, match="'thoughts' is damaged"):
        memory.exists()
    assert memory.clear() == 0
    assert not memory.exists()
    assert not (folder / "thoughts").exists()


def test_a_collection_in_use_by_another_process_is_named(folder: Path) -> None:
    qdrant.close_clients()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder / "a")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(RetrievalError, match=r"'a' .* in use by another rat process"),
            qdrant.locked_client() as client,
        ):
            qdrant.check_collection(client, "a")
    finally:
        holder.kill()
        holder.wait()
    qdrant.close_clients()
    with qdrant.locked_client() as client:
        qdrant.check_collection(client, "a")  # free again


HOLD = """
import sys, time, qdrant_edge
shard = qdrant_edge.EdgeShard.load(sys.argv[1])
print("held", flush=True)
time.sleep(60)
"""


# --- the store of earlier releases (qdrant-client's local mode) ---------------------------


@pytest.fixture
def old_folder(fresh_data: None) -> Path:
    """A data folder as the release before Qdrant Edge left it."""
    where = data_dir() / "qdrant"
    client = QdrantClient(path=str(where))
    _fill(client, ["a", "b"], memory="thoughts")
    client.close()
    return where


def test_an_old_store_opens_with_its_collections_intact(
    old_folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = QdrantClient(path=str(old_folder))
    expected = [
        d.page_content for d in hybrid.search(before, "a", "how often is the file synced", 3)
    ]
    before.close()

    infos = {info.name: info.points for info in qdrant.list_collections()}
    assert infos == {"a": 3, "b": 3, "thoughts": 3}
    assert "copied 3 collection(s) from the old store" in caplog.text
    with qdrant.locked_client() as client:
        qdrant.check_collection(client, "a")
        found = hybrid.search(client, "a", "how often is the file synced", 3)
    assert [d.page_content for d in found] == expected
    assert found[0].metadata == {"source": "a.md", "title": "t1"}
    assert Memory("thoughts").exists()
    assert (old_folder / "meta.json").exists()  # the old folder is kept as it was

    qdrant.close_clients()
    cli.main(["collections", "delete", "b", "--yes"])
    qdrant.close_clients()
    assert [i.name for i in qdrant.list_collections()] == ["a", "thoughts"]  # copied once


def test_an_old_store_with_a_damaged_collection_copies_the_others(
    old_folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _damage(old_folder / "collection" / "b" / "storage.sqlite", 2048)
    assert [i.name for i in qdrant.list_collections()] == ["a", "thoughts"]
    assert "'b' is damaged" in caplog.text and str(old_folder) in caplog.text
    assert (old_folder / "collection" / "b" / "storage.sqlite").exists()  # left there


@pytest.mark.parametrize("meta", ["{}", "xx{", ""])
def test_an_old_store_with_a_damaged_list_names_the_file_and_the_way_out(
    old_folder: Path, meta: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (old_folder / "meta.json").write_text(meta)
    assert cli.main(["collections"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(old_folder / "meta.json") in err and f"mv {old_folder} {old_folder}.damaged" in err


@pytest.mark.parametrize("damage", ["header", "middle"])
def test_a_damaged_checkpoint_file_says_how_to_recover(
    fresh_data: None, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from rat_agent.persistence.checkpoints import default_db

    db = default_db()
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE checkpoints (thread_id TEXT, blob BLOB)")
    conn.executemany(
        "INSERT INTO checkpoints VALUES (?, ?)", [(f"t{i}", b"x" * 500) for i in range(3000)]
    )
    conn.commit()
    conn.close()
    _damage(db, 0 if damage == "header" else 8192)

    assert cli.main(["threads"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"the checkpoint file {db} is damaged" in err and f"mv {db} {db}.damaged" in err


def test_no_insecure_key_warning_for_a_server_on_loopback(
    monkeypatch: pytest.MonkeyPatch, recwarn: pytest.WarningsRecorder
) -> None:
    """Plain HTTP to 127.0.0.1 never leaves the machine (nothing listens on port 9)."""
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("QDRANT_API_KEY", "k")
    qdrant._open("http://127.0.0.1:9").close()
    assert not [w for w in recwarn if "insecure" in str(w.message)]
    assert qdrant._loopback("http://localhost:6333") and qdrant._loopback("http://[::1]:6333")
    assert not qdrant._loopback("http://qdrant.example:6333")


@pytest.mark.parametrize(
    "argv",
    [
        ["collections"],
        ["collections", "delete", "kb"],
        ["memory", "list"],
        ["ask", "q", "--retriever", "qdrant", "--collection", "kb", "--method", "rag"],
    ],
)
def test_an_unreachable_qdrant_server_is_one_line_exit_4(
    fresh_data: None,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")  # nothing listens on port 9
    qdrant.close_clients()
    assert cli.main(argv) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "at http://127.0.0.1:9 did not answer" in err and "Connection refused" in err
