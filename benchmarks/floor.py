"""The bundled model's floor on this machine: how many prompt tokens a second it reads and
how many it writes, measured on the warm server with nothing else running; and, for the
runs of a results file, how far each method's seconds are from what its tokens alone cost
at those rates (processed / read rate + decoded / write rate).

    python benchmarks/floor.py --results benchmarks/results/php-local-test-6df68e6.jsonl \\
        --out benchmarks/results/floor-local.md
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path

from rat_agent.cli.eval import header
from rat_agent.providers.chat import get_chat_model

WORDS = [
    "river",
    "stone",
    "ladder",
    "copper",
    "window",
    "garden",
    "signal",
    "harbor",
    "meadow",
    "lantern",
]
PROMPT_WORDS = 700  # about 1,000 tokens: a revision's prompt, and rat's longest
TRIES = 3


def _timed(model: object, text: str) -> tuple[float, int, int]:
    """Seconds, prompt tokens read (not cached) and tokens written, for one call."""
    started = time.perf_counter()
    reply = model.invoke(text)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - started
    usage = reply.usage_metadata or {}
    cached = (usage.get("input_token_details") or {}).get("cache_read", 0)
    return seconds, usage.get("input_tokens", 0) - cached, usage.get("output_tokens", 0)


def rates(name: str) -> tuple[float, float]:
    """Prompt tokens read a second (a long prompt, one token written), then tokens written a
    second (a short prompt, a long reply, its prompt's share taken off); medians of TRIES."""
    reading = get_chat_model(name, max_tokens=1)
    writing = get_chat_model(name, max_tokens=256)
    _timed(reading, "Say yes.")  # the server up and its weights in memory
    read, write = [], []
    for n in range(TRIES):
        rng = random.Random(n)  # a new prompt each try: nothing of it is cached
        text = " ".join(rng.choice(WORDS) for _ in range(PROMPT_WORDS)) + "\nSay yes."
        seconds, tokens, _ = _timed(reading, f"Try {n}. {text}")
        read.append(tokens / seconds)
    for n in range(TRIES):
        ask = f"Try {n}. Write the numbers from 1 to 300 in words, separated by commas."
        seconds, tokens, written = _timed(writing, ask)
        write.append(written / (seconds - tokens / statistics.median(read)))
    return statistics.median(read), statistics.median(write)


def distance(path: Path, read: float, write: float) -> list[str]:
    """Per method of a results file: its mean tokens and seconds, and the floor's."""
    by_method: dict[str, list[dict[str, float]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            by_method[row["method"]].append(row["stats"])
    lines = [
        "| method | runs | prompt tokens processed | tokens decoded | wall s | floor s | "
        "wall / floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, stats in sorted(by_method.items()):
        processed = statistics.mean(s["processed_prompt_tokens"] for s in stats)
        decoded = statistics.mean(s["completion_tokens"] for s in stats)
        wall = statistics.mean(s["wall_seconds"] for s in stats)
        floor = processed / read + decoded / write
        lines.append(
            f"| {method} | {len(stats)} | {processed:.0f} | {decoded:.0f} | {wall:.1f} | "
            f"{floor:.1f} | {wall / floor:.1f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--results", type=Path, action="append", default=[])
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    read, write = rates(args.model)
    command = "python benchmarks/floor.py" + "".join(f" --results {p}" for p in args.results)
    report = header(f"The bundled model's floor, model {args.model}", command) + (
        f"- read: {read:.0f} prompt tokens a second (a {PROMPT_WORDS}-word prompt, none of it "
        f"cached); write: {write:.1f} tokens a second (a reply of up to 256 tokens); medians "
        f"of {TRIES}, the warm server alone on the machine\n"
        "- floor s: what a run's tokens alone cost at those rates; wall / floor: how far the "
        "method is from it (waits, the embedder, search, the process)\n"
    )
    for path in args.results:
        report += f"\n{path.name}:\n\n" + "\n".join(distance(path, read, write)) + "\n"
    print(report)
    if args.out:
        Path(args.out).write_text(report)


if __name__ == "__main__":
    main()
