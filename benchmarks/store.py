"""The embedded store as collections grow: qdrant-client's local mode (today's default)
against Qdrant Edge (qdrant-edge-py, the Qdrant engine in-process), in one run.

Points are shaped as `rat ingest` makes them: a 384-d dense vector (MiniLM's size), a
sparse vector of about 30 terms with Qdrant's IDF modifier, and a payload of page text and
metadata. The vectors are synthetic (seeded), as 2 cores cannot embed a million chunks:
each lies near one of 2,000 topics (cosine about 0.7 to it, as related MiniLM texts do),
and each query near a topic too; uniformly random vectors would have no neighbours to find.
A search is the project's hybrid query: two prefetches of 40 (dense, sparse), DBSF fusion,
top 3 with payloads. Each store and size is filled in one process and searched in a fresh
one, so "open" is a cold open and "memory" that process's peak resident size. "top 3 as
exact" is the share of searches whose top 3 (in order) equal an exact search's on the
same points: local mode searches by brute force, so exactly; Edge is compared with its own
exact search (params exact=true), which gave local mode's answers wherever both ran.

    .venv/bin/python benchmarks/store.py [--sizes 10000 100000 1000000] [--local-max 100000]
        [--queries 200] [--out benchmarks/results/store.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
TOPICS = 2_000
NOISE = (
    0.052  # per dimension: a point's cosine to its topic is about 1/sqrt(1 + 384 * NOISE^2) = 0.7
)
VOCAB = 50_000  # sparse term ids
TERMS = 30  # terms a point's sparse vector holds
BATCH = 2_000
PREFETCH = 40
TOP = 3
SEED = 7


def topics() -> np.ndarray:
    centres = np.random.default_rng(SEED).standard_normal((TOPICS, DIM)).astype(np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def near_topics(rng: np.random.Generator, count: int) -> np.ndarray:
    dense = topics()[rng.integers(0, TOPICS, count)]
    dense = dense + NOISE * rng.standard_normal((count, DIM)).astype(np.float32)
    return dense / np.linalg.norm(dense, axis=1, keepdims=True)


def points(start: int, count: int) -> tuple[np.ndarray, list[tuple[list[int], list[float]]]]:
    """Points start..start+count: dense unit vectors and sparse (indices, values)."""
    rng = np.random.default_rng(SEED + start)
    dense = near_topics(rng, count)
    sparse = []
    for _ in range(count):
        # Zipf-like: a few common terms, many rare, as words in pages are
        ids = np.unique(np.minimum(rng.zipf(1.3, TERMS), VOCAB - 1).astype(int))
        sparse.append((ids.tolist(), rng.uniform(0.2, 1.5, len(ids)).round(3).tolist()))
    return dense, sparse


def payload(i: int) -> dict[str, Any]:
    text = f"Chunk {i} of a synthetic page. " * 7
    return {
        "page_content": text[:200],
        "metadata": {"source": f"doc-{i // 8}", "title": f"Page {i // 8}"},
    }


def queries(n: int) -> list[tuple[list[float], tuple[list[int], list[float]]]]:
    rng = np.random.default_rng(SEED - 1)
    dense = near_topics(rng, n)
    out = []
    for row in dense:
        ids = np.unique(np.minimum(rng.zipf(1.3, 5), VOCAB - 1).astype(int)).tolist()
        out.append((row.tolist(), (ids, [1.0] * len(ids))))
    return out


# --- local mode (qdrant-client) -------------------------------------------------------------


def local_fill(folder: str, size: int) -> dict[str, float]:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=folder)
    client.create_collection(
        "c",
        vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.COSINE)},
        sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    began = time.perf_counter()
    for start in range(0, size, BATCH):
        dense, sparse = points(start, min(BATCH, size - start))
        client.upsert(
            "c",
            [
                models.PointStruct(
                    id=start + j,
                    vector={
                        "dense": dense[j].tolist(),
                        "sparse": models.SparseVector(indices=s[0], values=s[1]),
                    },
                    payload=payload(start + j),
                )
                for j, s in enumerate(sparse)
            ],
        )
    filled = time.perf_counter() - began
    client.close()
    return {"fill_s": filled, "index_s": 0.0}


def local_search(folder: str, n: int) -> dict[str, Any]:
    from qdrant_client import QdrantClient, models

    began = time.perf_counter()
    client = QdrantClient(path=folder)
    client.count("c")  # local mode loads the points when the collection is first touched
    opened = time.perf_counter() - began
    times, tops = [], []
    for dense, (ids, values) in queries(n):
        began = time.perf_counter()
        found = client.query_points(
            "c",
            prefetch=[
                models.Prefetch(query=dense, using="dense", limit=PREFETCH),
                models.Prefetch(
                    query=models.SparseVector(indices=ids, values=values),
                    using="sparse",
                    limit=PREFETCH,
                ),
            ],
            query=models.FusionQuery(fusion=models.Fusion.DBSF),
            limit=TOP,
            with_payload=True,
        ).points
        times.append(time.perf_counter() - began)
        tops.append([int(p.id) for p in found])
    client.close()
    return {"open_s": opened, "times": times, "tops": tops}


# --- Qdrant Edge --------------------------------------------------------------------------


def edge_fill(folder: str, size: int) -> dict[str, float]:
    import qdrant_edge as qe

    config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={"sparse": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    shard = qe.EdgeShard.create(folder, config)
    began = time.perf_counter()
    for start in range(0, size, BATCH):
        dense, sparse = points(start, min(BATCH, size - start))
        batch = [
            qe.Point(
                id=start + j,
                vector={
                    "dense": dense[j].tolist(),
                    "sparse": qe.SparseVector(indices=s[0], values=s[1]),
                },
                payload=payload(start + j),
            )
            for j, s in enumerate(sparse)
        ]
        shard.update(qe.UpdateOperation.upsert_points(batch))
    filled = time.perf_counter() - began
    began = time.perf_counter()
    shard.optimize()  # builds the HNSW and sparse indexes
    indexed = time.perf_counter() - began
    shard.close()
    return {"fill_s": filled, "index_s": indexed}


def edge_search(folder: str, n: int) -> dict[str, Any]:
    import qdrant_edge as qe

    began = time.perf_counter()
    shard = qe.EdgeShard.load(folder)
    opened = time.perf_counter() - began
    found = _edge_queries(shard, n, None)
    exact = _edge_queries(shard, n, qe.SearchParams(exact=True))
    shard.close()
    return {
        "open_s": opened,
        "times": found["times"],
        "tops": found["tops"],
        "exact": exact["tops"],
    }


def _edge_queries(shard: Any, n: int, params: Any) -> dict[str, Any]:
    import qdrant_edge as qe

    times, tops = [], []
    for dense, (ids, values) in queries(n):
        request = qe.QueryRequest(
            limit=TOP,
            prefetches=[
                qe.Prefetch(
                    limit=PREFETCH, query=qe.Query.Nearest(dense, using="dense"), params=params
                ),
                qe.Prefetch(
                    limit=PREFETCH,
                    query=qe.Query.Nearest(
                        qe.SparseVector(indices=ids, values=values), using="sparse"
                    ),
                    params=params,
                ),
            ],
            query=qe.Fusion.Dbsf(),
            with_payload=True,
        )
        began = time.perf_counter()
        found = shard.query(request)
        times.append(time.perf_counter() - began)
        tops.append([int(p.id) for p in found])
    return {"times": times, "tops": tops}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(args: argparse.Namespace) -> None:
    """One step in a fresh process; prints its figures as JSON."""
    if args.step == "fill":
        figures: dict[str, Any] = (local_fill if args.store == "local" else edge_fill)(
            args.folder, args.size
        )
    elif args.store == "local":
        figures = local_search(args.folder, args.queries)
    else:
        figures = edge_search(args.folder, args.queries)
    figures["peak_mb"] = peak_mb()
    print(json.dumps(figures))


def step(store: str, what: str, folder: str, size: int, n: int) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", what, "--store", store, "--folder", folder]
    done = subprocess.run(
        [*argv, "--size", str(size), "--queries", str(n)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{store} {what} {size}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def same_top(a: list[list[int]], b: list[list[int]]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument(
        "--local-max", type=int, default=100_000, help="largest size local mode runs"
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", default="")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--store", default="", help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.step = args.child
        child(args)
        return

    rows = []
    for size in args.sizes:
        local_tops: list[list[int]] | None = None
        for store in ("local", "edge"):
            if store == "local" and size > args.local_max:
                rows.append({"size": size, "store": store, "skipped": True})
                continue
            folder = tempfile.mkdtemp(prefix=f"rat-store-{store}-")
            try:
                filled = step(store, "fill", folder, size, args.queries)
                searched = step(store, "search", folder, size, args.queries)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            times = sorted(searched["times"])
            exact = searched.get("exact", searched["tops"])
            if store == "local":
                local_tops = searched["tops"]
            rows.append(
                {
                    "size": size,
                    "store": store,
                    "fill_s": filled["fill_s"],
                    "index_s": filled["index_s"],
                    "open_s": searched["open_s"],
                    "p50_ms": 1000 * statistics.median(times),
                    "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
                    "peak_mb": searched["peak_mb"],
                    "same_top": same_top(searched["tops"], exact),
                    "exact_as_local": same_top(exact, local_tops) if local_tops else None,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    table = render(rows, args)
    print(table)
    if args.out:
        Path(args.out).write_text(table, encoding="utf-8")


def render(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    sizes = " ".join(map(str, args.sizes))
    lines = [
        "# The embedded store as it grows: local mode against Qdrant Edge",
        "",
        f"- command: `.venv/bin/python benchmarks/store.py --sizes {sizes}"
        f" --local-max {args.local_max} --queries {args.queries}`",
        f"- machine: {platform.machine()}, 2 CPU cores, shared with other work (read the"
        f" ratios); date: {date.today()}",
        "- points: 384-d dense + ~30-term sparse (IDF) + a 200-character payload, synthetic;"
        " search: prefetch 40 dense and 40 sparse, DBSF fusion, top 3",
        "",
        "| chunks | store | fill s | index s | open s | search p50 ms | search p95 ms"
        " | memory MB | top 3 as exact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = "local mode" if r["store"] == "local" else "Qdrant Edge"
        if r.get("skipped"):
            lines.append(f"| {r['size']:,} | {name} | not run (past --local-max) | | | | | | |")
            continue
        lines.append(
            f"| {r['size']:,} | {name} | {r['fill_s']:.1f} | {r['index_s']:.1f}"
            f" | {r['open_s']:.2f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['peak_mb']:.0f}"
            f" | {r['same_top']:.0%} |"
        )
    agree = [r["exact_as_local"] for r in rows if r.get("exact_as_local") is not None]
    if agree:
        lines += [
            "",
            f"Edge's exact search gave local mode's top 3 in at least {min(agree):.0%} of the"
            " searches at every size both ran.",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
