"""The offline Minecraft knowledge source, on real embeddings and a real embedded Qdrant.

The full index is built once per session (~30 s on 2 cores, most of it embedding ~1,000
pages); index life-cycle tests use a 12-page corpus so each rebuild costs well under a second.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document

from rat_agent.errors import RetrievalError
from rat_minecraft import retriever as minecraft
from rat_minecraft.corpus import Page, build_pages
from rat_minecraft.retriever import (
    MinecraftIndex,
    close_indexes,
    get_index,
    index_root,
    minecraft_retriever,
)

SMALL_IDS = (
    "crafting_table",
    "stick",
    "oak_planks",
    "oak_log",
    "diamond_pickaxe",
    "diamond",
    "diamond_ore",
    "iron_ingot",
    "raw_iron",
    "furnace",
    "cobblestone",
    "torch",
)


def page(item_id: str) -> Page:
    return next(p for p in build_pages() if p.id == item_id)


def ids(documents: list[Document]) -> list[str]:
    return [d.metadata["id"] for d in documents]


# --- the corpus ------------------------------------------------------------------------------


def test_corpus_covers_obtainable_items_once() -> None:
    pages = build_pages()
    assert len(pages) > 1000
    assert len({p.id for p in pages}) == len(pages)
    assert all(60 <= len(p.text) <= 1600 for p in pages)
    # no boilerplate lines ("X (id: x) is a block in ... 1.20") to crowd out the facts
    assert not any("Java Edition" in p.text for p in pages)
    assert not {"air", "bedrock", "command_block", "zombie_spawn_egg"} & {p.id for p in pages}


def test_crafting_table_is_four_planks_without_a_table() -> None:
    text = page("crafting_table").text
    assert "Crafting: 4 Oak Planks (or Planks of any other kind)" in text
    assert "gives 1 Crafting Table (2x2 shape)" in text
    assert "no Crafting Table needed" in text
    assert "Needs a Crafting Table" not in text


def test_diamond_pickaxe_needs_a_crafting_table() -> None:
    text = page("diamond_pickaxe").text
    assert "Crafting: 3 Diamond + 2 Stick gives 1 Diamond Pickaxe (3x3 shape)" in text
    assert "Needs a Crafting Table" in text


def test_iron_ingot_is_smelted_from_raw_iron_with_fuel() -> None:
    text = page("iron_ingot").text
    assert (
        "Smelting: 1 Raw Iron (or Iron Ore or Deepslate Iron Ore) + 1 Oak Planks (or Planks "
        "of any other kind) as fuel gives 1 Iron Ingot in a Furnace"
    ) in text
    assert "Fuel: a Furnace burns Planks or Logs" in text and "Coal" in text
    # The hand-written furnace table also reaches the other side of the recipe.
    assert "Smelts into Iron Ingot in a Furnace" in page("raw_iron").text


def test_diamond_ore_needs_an_iron_pickaxe() -> None:
    assert "needs an Iron Pickaxe (or better)" in page("diamond_ore").text
    diamond = page("diamond").text
    assert "mine Diamond Ore or Deepslate Diamond Ore with an Iron Pickaxe (or better)" in diamond
    assert "drops 1 Diamond" in diamond
    assert "Stone Pickaxe (or better)" in page("raw_iron").text
    assert "lowest pickaxe tier that can mine" in page("iron_pickaxe").text


def test_an_ore_page_says_what_mining_it_drops_before_silk_touch() -> None:
    # The ore's own page is what a step "mine iron ore" retrieves: it must say how that
    # gets Raw Iron, not only how Silk Touch keeps the block.
    line = next(x for x in page("iron_ore").text.splitlines() if "Mining:" in x)
    assert line.startswith(
        "- Mining: mine Iron Ore with a Stone Pickaxe (or better); it drops Raw Iron, not itself"
    )
    assert line.endswith("only a Silk Touch pickaxe (stone or better) makes Iron Ore drop itself.")
    # another block that drops the item only with Silk Touch keeps the plain line
    assert "Mining: only a Silk Touch tool makes Infested Stone drop itself." in page("stone").text


def test_everyday_recipes_and_sources() -> None:
    assert "2 Oak Planks (or Planks of any other kind) gives 4 Stick" in page("stick").text
    assert "1 Coal (or Charcoal) + 1 Stick gives 4 Torch" in page("torch").text
    furnace = page("furnace").text
    assert "8 Cobblestone (or Blackstone or Cobbled Deepslate) gives 1 Furnace" in furnace
    assert "Needs a Crafting Table" in furnace
    assert "4 Oak Planks" in page("oak_planks").text
    assert "Smelting: 1 Sand (or Red Sand) + 1 Oak Planks" in page("glass").text
    assert "Smelting: 1 Cobblestone + 1 Oak Planks" in page("stone").text
    assert "Smelting: 1 Oak Log" in page("charcoal").text
    assert "1 Clay Ball + 1 Oak Planks (or Planks of any other kind) as fuel" in page("brick").text
    assert "1 Raw Beef + 1 Oak Planks" in page("cooked_beef").text
    assert "Mob drop: dropped by Cow" in page("leather").text
    assert "mine Cobblestone or Stone with a Wooden Pickaxe (or better)" in page("cobblestone").text


def test_made_blocks_are_not_offered_for_mining() -> None:
    """A chest or planks exist only once made: their pages say how to make them."""
    for name in ("chest", "crafting_table", "oak_planks", "torch", "furnace"):
        text = page(name).text
        assert "Crafting:" in text and "Mining:" not in text, name
    assert "Mining: mine Campfire" not in page("charcoal").text
    assert "Mining: mine a placed or natural Sandstone" in page("sandstone").text


# --- the retriever on the full index ---------------------------------------------------------


@pytest.fixture(scope="session")
def full_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("rat-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAT_CACHE_DIR", str(cache))
        started = time.perf_counter()
        index = get_index()
        seconds = time.perf_counter() - started
        print(f"\nfull Minecraft index: built={index.built} in {seconds:.1f} s")
        assert index.built
    yield cache
    close_indexes()


@pytest.fixture
def full_index(full_index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> MinecraftIndex:
    monkeypatch.setenv("RAT_CACHE_DIR", str(full_index_dir))
    return get_index()


@pytest.mark.parametrize(
    ("query", "expected", "top"),
    [
        ("how do I obtain Diamond Pickaxe", "diamond_pickaxe", 1),
        ("how do I obtain Crafting Table", "crafting_table", 1),
        ("how do I obtain Iron Ingot", "iron_ingot", 1),
        ("how do I obtain Light Blue Glazed Terracotta", "light_blue_glazed_terracotta", 1),
        (
            "Craft a diamond pickaxe using 3 diamonds and 2 sticks at a crafting table",
            "diamond_pickaxe",
            1,
        ),
        ("Mine iron ore with a stone pickaxe", "iron_ore", 3),
        ("Smelt the raw iron in a furnace to get iron ingots", "iron_ingot", 3),
        ("STEP 1: Punch a tree to collect 3 oak logs", "oak_log", 3),
    ],
)
def test_retriever_finds_the_page(
    full_index: MinecraftIndex, query: str, expected: str, top: int
) -> None:
    documents = minecraft_retriever(k=3).invoke(query)
    assert expected in ids(documents)[:top]


def test_documents_carry_title_and_source(full_index: MinecraftIndex) -> None:
    (document,) = minecraft_retriever(k=1).invoke("how do I obtain Diamond Pickaxe")
    assert document.metadata == {
        "title": "Diamond Pickaxe",
        "source": "minecraft-corpus:diamond_pickaxe",
        "id": "diamond_pickaxe",
    }
    assert document.page_content == page("diamond_pickaxe").text


@pytest.mark.parametrize("k", [1, 2, 5])
def test_k_is_respected(full_index: MinecraftIndex, k: int) -> None:
    assert len(minecraft_retriever(k=k).invoke("iron")) == k


def test_async_retrieval(full_index: MinecraftIndex) -> None:
    documents = asyncio.run(minecraft_retriever(k=2).ainvoke("how do I obtain Torch"))
    assert ids(documents)[0] == "torch"
    assert len(documents) == 2


def test_async_retrieval_does_not_block_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    class SlowIndex:
        def search(self, query: str, k: int, mode: str) -> list[Document]:
            time.sleep(0.3)  # stands in for opening the index or embedding the query
            return [Document(page_content=query)]

    monkeypatch.setattr(minecraft, "get_index", SlowIndex)

    async def main() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        await minecraft_retriever().ainvoke("anything")
        task.cancel()
        return ticks

    assert asyncio.run(main()) >= 10


def test_every_search_mode_works(full_index: MinecraftIndex) -> None:
    for mode in ("dense", "sparse", "hybrid", "hybrid_rrf"):
        found = ids(full_index.search("how do I obtain Stick", 3, mode))
        assert found[0] == "stick", mode
    assert full_index.search("   ", 3) == []


# --- index life cycle on a small corpus ------------------------------------------------------


@pytest.fixture
def small_pages() -> list[Page]:
    return [page(i) for i in SMALL_IDS]


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("RAT_CACHE_DIR", str(tmp_path))
    yield tmp_path
    close_indexes()


def _reopen(pages: list[Page]) -> MinecraftIndex:
    close_indexes()  # forget the process-wide client, as a new process would
    return get_index(pages)


def test_index_is_reused_until_its_fingerprint_changes(
    fresh_cache: Path, small_pages: list[Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = get_index(small_pages)
    assert first.built and first.path is not None
    assert get_index(small_pages) is first  # one client per folder per process

    second = _reopen(small_pages)
    assert not second.built
    assert second.path == first.path
    assert second.fingerprint == first.fingerprint
    assert ids(second.search("how do I obtain Torch", 1)) == ["torch"]

    changed = [*small_pages[:-1], Page("torch", "Torch", small_pages[-1].text + " Edited.")]
    third = _reopen(changed)
    assert third.built and third.fingerprint != first.fingerprint
    assert first.path is not None and not first.path.exists()  # the stale index is gone

    monkeypatch.setattr(minecraft, "embedding_model_id", lambda: "another-model")
    fourth = _reopen(changed)
    assert fourth.built and fourth.fingerprint != third.fingerprint
    assert [p.name for p in index_root().iterdir()] == [fourth.path.name if fourth.path else ""]


def test_an_incomplete_index_is_rebuilt(fresh_cache: Path, small_pages: list[Page]) -> None:
    first = get_index(small_pages)
    assert first.path is not None
    (first.path / "fingerprint.json").unlink()  # as if the build had died before its end
    assert _reopen(small_pages).built


def test_a_damaged_index_is_rebuilt(fresh_cache: Path, small_pages: list[Page]) -> None:
    """A storage file overwritten in the middle (a disk that filled up): derived data, so
    the next open builds it again instead of failing every search."""
    first = get_index(small_pages)
    assert first.path is not None
    close_indexes()
    for path in (first.path / minecraft.COLLECTION / "segments").rglob("*"):
        if path.is_file() and path.stat().st_size > 64:
            _damage(path, path.stat().st_size // 4)
    again = get_index(small_pages)
    assert again.built
    assert ids(again.search("how do I obtain Torch", 1)) == ["torch"]


def _damage(path: Path, start: int = 4096) -> None:
    data = bytearray(path.read_bytes())
    data[start:] = b"\xab" * (len(data) - start)
    path.write_bytes(data)


def test_a_failed_build_leaves_nothing_behind(
    fresh_cache: Path, small_pages: list[Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(minecraft, "_fill", broken)
    with pytest.raises(RetrievalError, match="disk full"):
        get_index(small_pages)
    assert list(index_root().iterdir()) == []


def test_an_index_held_by_another_process_falls_back_to_a_private_copy(
    fresh_cache: Path, small_pages: list[Page]
) -> None:
    folder = get_index(small_pages).path
    assert folder is not None
    close_indexes()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nimport qdrant_edge\n"
            "s = qdrant_edge.EdgeShard.load(sys.argv[1])\nprint('ready', flush=True)\n"
            "sys.stdin.read()",
            str(folder / minecraft.COLLECTION),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        index = get_index(small_pages)
        assert index.path is None and not index.built
        assert ids(index.search("how do I obtain Diamond Pickaxe", 1)) == ["diamond_pickaxe"]
        private = index.private
        assert private is not None and private.exists()
        close_indexes()
        assert not private.exists()  # the copy goes with its index
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
