"""Damaged stores (issue 16): the error names the file and the way out; nothing else breaks.

The damage is real: SQLite pages overwritten in the middle, as a disk that filled up or a
copy cut short leaves them, and a Qdrant `meta.json` that is garbage or empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from rat_agent import cli
from rat_agent.errors import RetrievalError
from rat_agent.memory.store import Memory
from rat_agent.retrieval.qdrant import client as qdrant
from rat_agent.retrieval.qdrant import hybrid


def _damage(path: Path, start: int = 4096) -> None:
    data = bytearray(path.read_bytes())
    data[start:] = b"\xab" * (len(data) - start)
    path.write_bytes(data)


def _store(folder: Path, names: list[str], memory: str = "") -> None:
    """Collections as `rat ingest` and the memory make them, with 300 points each (enough
    pages that damage past the first one is found only when the points are read)."""
    client = QdrantClient(path=str(folder))
    for name in [*names, memory] if memory else names:
        extra = {"kind": "thoughts"} if name == memory else {}
        hybrid.create_collection(client, name, metadata={**qdrant.collection_metadata(), **extra})
        client.upsert(
            name,
            [
                models.PointStruct(
                    id=i,
                    vector={hybrid.DENSE: [1.0] * hybrid.DIMENSIONS},
                    payload={"page_content": "x" * 300},
                )
                for i in range(300)
            ],
        )
    client.close()


@pytest.fixture
def folder(fresh_data: None) -> Path:
    where = Path(qdrant.location())
    _store(where, ["a", "b"], memory="thoughts")
    return where


def test_a_damaged_collection_is_set_aside_and_the_others_work(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _damage(folder / "collection" / "b" / "storage.sqlite")

    infos = {info.name: info for info in qdrant.list_collections()}
    assert infos["a"].points == 300 and not infos["a"].damaged
    assert "database disk image is malformed" in infos["b"].damaged
    assert str(folder / "collection" / "b" / "storage.sqlite") in infos["b"].damaged
    with qdrant.locked_client() as client, pytest.raises(RetrievalError) as info:
        qdrant.check_collection(client, "b")
    assert "rat collections delete b" in str(info.value)
    with qdrant.locked_client() as client:
        qdrant.check_collection(client, "a")  # still searchable

    assert cli.main(["collections", "delete", "b"]) == 0
    assert not (folder / "collection" / "b").exists()
    assert [i.name for i in qdrant.list_collections()] == ["a", "thoughts"]
    capsys.readouterr()


def test_a_damaged_memory_is_named_and_can_be_cleared(folder: Path) -> None:
    _damage(folder / "collection" / "thoughts" / "storage.sqlite")
    memory = Memory("thoughts")
    with pytest.raises(RetrievalError, match="'thoughts' is damaged"):
        memory.exists()
    assert memory.clear() == 0
    assert not memory.exists()
    assert not (folder / "collection" / "thoughts").exists()


@pytest.mark.parametrize("meta", ["{}", "xx{", ""])
def test_a_damaged_collection_list_names_the_file_and_the_way_out(
    folder: Path, meta: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "meta.json").write_text(meta)
    assert cli.main(["collections"]) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(folder / "meta.json") in err and f"mv {folder} {folder}.damaged" in err


def test_set_aside_is_recorded_and_survives_a_reopen(folder: Path) -> None:
    _damage(folder / "collection" / "b" / "storage.sqlite")
    qdrant.list_collections()
    qdrant.close_clients()
    record = json.loads((folder / "damaged.json").read_text())
    assert list(record) == ["b"] and record["b"]["config"]  # kept to restore by hand
    assert "b" not in json.loads((folder / "meta.json").read_text())["collections"]
    assert {i.name: bool(i.damaged) for i in qdrant.list_collections()} == {
        "a": False,
        "b": True,
        "thoughts": False,
    }


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
