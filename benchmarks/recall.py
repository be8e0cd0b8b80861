"""Recall of the Minecraft retriever: does "how do I obtain <item>" find the item's own page?

Run from the repository root: `python benchmarks/recall.py` (options: `--sample N`,
`--modes hybrid,dense,sparse`). Prints recall@1/@3 per search mode for every obtainable item
and for a fixed random sample, the seconds per query, and checks a few plan-step queries;
writes the figures to benchmarks/results/recall.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rat_minecraft.corpus import Page, build_pages
from rat_minecraft.retriever import SearchMode, get_index

RESULTS = Path(__file__).parent / "results" / "recall.md"
MODES: tuple[SearchMode, ...] = ("hybrid", "hybrid_rrf", "dense", "sparse")
Template = Callable[[Page], str]

# Plan steps the agent will really send: any of the expected pages in the top 3 is fine.
STEP_QUERIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Craft a diamond pickaxe using 3 diamonds and 2 sticks at a crafting table",
        ("diamond_pickaxe",),
    ),
    ("Mine iron ore with a stone pickaxe", ("iron_ore", "raw_iron")),
    ("STEP 1: Punch a tree to collect 3 oak logs", ("oak_log",)),
    ("Turn the oak logs into 12 oak planks", ("oak_planks",)),
    ("Make a crafting table from 4 planks", ("crafting_table",)),
    ("Craft sticks from two planks", ("stick",)),
    ("Smelt the raw iron in a furnace to get iron ingots", ("iron_ingot", "raw_iron")),
    ("Build a furnace out of 8 cobblestone", ("furnace",)),
    ("Mine diamonds deep underground with an iron pickaxe", ("diamond", "diamond_ore")),
    ("Kill a cow to get leather", ("leather",)),
    ("Craft a bucket from 3 iron ingots", ("bucket",)),
    ("Place torches made from coal and sticks", ("torch",)),
    ("Smelt sand into glass", ("glass",)),
    ("Combine wheat to bake bread", ("bread",)),
    ("Craft a bow with sticks and string", ("bow",)),
)


@dataclass
class Recall:
    items: int
    at1: float
    at3: float
    median_ms: float
    misses: list[tuple[str, list[str]]]


def obtain(page: Page) -> str:
    return f"how do I obtain {page.title}"


def recipe(page: Page) -> str:
    return f"{page.title.lower()} recipe"


def measure(pages: Sequence[Page], mode: SearchMode, template: Template = obtain) -> Recall:
    index = get_index()
    hits1 = hits3 = 0
    misses: list[tuple[str, list[str]]] = []
    times = []
    for page in pages:
        started = time.perf_counter()
        docs = index.search(template(page), 3, mode)
        times.append(time.perf_counter() - started)
        found = [d.metadata["id"] for d in docs]
        hits1 += found[:1] == [page.id]
        if page.id in found:
            hits3 += 1
        else:
            misses.append((page.title, found))
    n = len(pages)
    # The median, not the mean: the machine is shared and bursts of other work skew a mean.
    return Recall(n, hits1 / n, hits3 / n, statistics.median(times) * 1000, misses)


def steps(mode: SearchMode) -> tuple[int, list[str]]:
    index = get_index()
    hits, lines = 0, []
    for query, expected in STEP_QUERIES:
        found = [d.metadata["id"] for d in index.search(query, 3, mode)]
        ok = any(e in found for e in expected)
        hits += ok
        lines.append(f"| {mode} | {query} | {', '.join(found)} | {'yes' if ok else 'NO'} |")
    return hits, lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=100, help="size of the random sample")
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args(argv)
    modes = [m for m in MODES if m in args.modes.split(",")]

    started = time.perf_counter()
    pages = build_pages()
    index = get_index()
    opened = time.perf_counter() - started
    how = f"built in {index.build_seconds:.1f} s" if index.built else "loaded from cache"
    print(f"corpus: {len(pages)} pages; index {how}; open took {opened:.1f} s")
    index.search("warm up", 1)

    sample = random.Random(0).sample(list(pages), min(args.sample, len(pages)))
    rows = []
    all_misses: dict[str, list[tuple[str, list[str]]]] = {}
    for mode in modes:
        runs: tuple[tuple[str, Sequence[Page], Template], ...] = (
            ("random sample (seed 0)", sample, obtain),
            ("all obtainable items", pages, obtain),
            ("all, `<title> recipe`", pages, recipe),
        )
        for label, subset, template in runs:
            r = measure(subset, mode, template)
            rows.append((mode, label, r))
            if subset is pages and template is obtain:
                all_misses[mode] = r.misses
            print(
                f"{mode:10} {label:24} n={r.items:5} recall@1={r.at1:.3f} "
                f"recall@3={r.at3:.3f} median {r.median_ms:.0f} ms/query"
            )

    step_lines: list[str] = []
    step_hits: dict[str, int] = {}
    for mode in modes:
        step_hits[mode], lines = steps(mode)
        step_lines += lines
        print(
            f"{mode:10} plan-step queries with an expected page in the top 3: "
            f"{step_hits[mode]}/{len(STEP_QUERIES)}"
        )

    command = "python benchmarks/recall.py" + (f" {' '.join(argv or sys.argv[1:])}".rstrip())
    lines = [
        "# Minecraft retriever recall",
        "",
        f"- date: {dt.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- command (from the repository root, venv active): `{command}`",
        f"- machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, CPU only",
        f"- corpus: {len(pages)} pages (one per obtainable item, minecraft-data Java 1.20)",
        f"- code: {_code()}",
        f"- index: Qdrant Edge (the embedded store), {how}",
        "- query: `how do I obtain <item title>` (and, as a check, `<item title, lower case>"
        " recipe`); a hit is the item's own page",
        "- modes: `hybrid` = dense + sparse fused by Qdrant DBSF (the retriever's default);"
        " `hybrid_rrf` = the same fused by RRF; `dense` = MiniLM only; `sparse` = lexical only",
        "",
        "| mode | items | n | recall@1 | recall@3 | median ms/query |",
        "|---|---|---|---|---|---|",
        *(
            f"| {m} | {label} | {r.items} | {r.at1:.3f} | {r.at3:.3f} | {r.median_ms:.0f} |"
            for m, label, r in rows
        ),
        "",
        "ms/query is end to end (query embedding, the Qdrant Edge search, payloads),",
        "the median over the queries, measured on a 2-core machine shared with other work.",
        "",
        "## Plan-step queries: an expected page in the top 3",
        "",
        *(f"- {m}: {hits}/{len(STEP_QUERIES)}" for m, hits in step_hits.items()),
        "",
        "| mode | query | top 3 | expected page found |",
        "|---|---|---|---|",
        *step_lines,
    ]
    for name, misses in all_misses.items():
        lines += ["", f"## {name}: items whose page is not in the top 3 ({len(misses)})", ""]
        lines += [f"- {title}: got {', '.join(found)}" for title, found in misses[:40]]
        if len(misses) > 40:
            lines.append(f"- ... and {len(misses) - 40} more")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")


def _code() -> str:
    """The commit measured, and whether the work tree had changes on top of it."""
    git = ["git", "-C", str(Path(__file__).parent)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain", "src"], capture_output=True, text=True)
    return head.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
