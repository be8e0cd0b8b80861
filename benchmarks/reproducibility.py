"""Is a run's plan the same whatever the local server ran before it?

Run: `.venv/bin/python benchmarks/reproducibility.py` (defaults: the bundled local model;
wooden shovel, stick, coal block, wooden shovel again; then coal block, stick, wooden
shovel). Writes benchmarks/results/reproducibility.md.

llama.cpp's logits are not bit-for-bit the same for a prompt prefilled whole and for one
whose prefix comes from a KV cache (its server README, `cache_prompt`), and the 1.5B model
is often near a tie at temperature 0. So a plan could change with what ran before it. Each
arm runs the tasks in two orders, each order in a process with a server of its own, with
the same settings: a task should get the same plan in every run, whatever ran before it.

Arms: `fresh_first_call` is the code as it is (a run's first call on a slot prefills its
whole prompt; the server keeps no host-RAM prompt cache); `reuse_any_prefix` is how it was
before (every call reuses whatever prefix its slot or the RAM cache holds).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "results" / "reproducibility.md"
ARMS = ("fresh_first_call", "reuse_any_prefix")
SETTINGS: dict[str, Any] = {"k": 3, "max_steps": 3, "max_tokens": 256, "repair_steps": 3}
ORDERS = ("wooden_shovel,stick,coal_block,wooden_shovel", "coal_block,stick,wooden_shovel")
OLD_CACHE_RAM_MIB = 2048  # the server's host-RAM prompt cache before this benchmark


def arm(name: str, goals: list[str], model: str) -> list[dict[str, Any]]:
    """The runs of one arm, in this process (the parent starts one process per arm)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from rat_agent import build_graph
    from rat_agent.minecraft.tasks import load_tasks
    from rat_agent.providers import local_server
    from rat_agent.providers.local_chat import LocalChat
    from rat_agent.providers.stats import RunStats

    if name == "reuse_any_prefix":
        local_server.CACHE_RAM_MIB = OLD_CACHE_RAM_MIB
        LocalChat._reuses = lambda self, slot, run: True  # type: ignore[method-assign]
    questions = {t.goal: t.question for t in load_tasks()}
    graph = build_graph(checkpointer=InMemorySaver())
    rows = []
    for i, goal in enumerate(goals):
        stats = RunStats()
        config: Any = {"callbacks": [stats], "configurable": {"thread_id": f"{goal}-{i}"}}
        context = {"model": model, "retriever": "minecraft", **SETTINGS}
        answer = graph.invoke({"question": questions[goal]}, config, context=context)["answer"]
        rows.append({"goal": goal, "answer": answer, **stats.summary()})
        print(name, i, goal, rows[-1]["model_calls"], flush=True, file=sys.stderr)
    return rows


def table(name: str, rows: list[dict[str, Any]]) -> tuple[str, int, int]:
    """The arm's runs as Markdown, and how many tasks got one plan in all their runs."""
    plans: dict[str, set[str]] = {}
    for row in rows:
        plans.setdefault(row["goal"], set()).add(row["answer"])
    lines = [
        "| order | run | task | calls | prompt processed | prompt cached | plan (sha256) |",
        "|" + "---|" * 7,
    ]
    for row in rows:
        digest = hashlib.sha256(row["answer"].encode()).hexdigest()[:10]
        lines.append(
            f"| {row['order']} | {row['run']} | {row['goal']} | {row['model_calls']} | "
            f"{row['processed_prompt_tokens']} | {row['cached_prompt_tokens']} | `{digest}` |"
        )
    same = sum(len(p) == 1 for p in plans.values())
    return f"### {name}\n\n" + "\n".join(lines), same, len(plans)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="local")
    parser.add_argument(
        "--orders", default=";".join(ORDERS), help="task orders, ';' between, ',' within"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--arm", choices=ARMS, help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--goals", help=argparse.SUPPRESS)  # the child's order
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(arm(args.arm, args.goals.split(","), args.model)))
        return

    env = {**os.environ, "RAT_KEEP_ALIVE": "0"}  # a server of its own in each process
    sections, summary = [], []
    for name in ARMS:
        rows = []
        for order, goals in enumerate(args.orders.split(";"), 1):
            child = [sys.executable, __file__, "--arm", name, "--goals", goals]
            done = subprocess.run(
                [*child, "--model", args.model], env=env, capture_output=True, text=True
            )
            if done.returncode:
                sys.exit(f"{name}, order {order} failed:\n{done.stderr[-2000:]}")
            runs = json.loads(done.stdout.strip().splitlines()[-1])
            rows += [{**r, "order": order, "run": i} for i, r in enumerate(runs, 1)]
        section, same, tasks = table(name, rows)
        sections.append(section)
        summary.append(
            f"| {name} | {same} of {tasks} | "
            f"{sum(r['processed_prompt_tokens'] for r in rows)} | "
            f"{sum(r['cached_prompt_tokens'] for r in rows)} | "
            f"{sum(r['wall_seconds'] for r in rows):.0f} |"
        )
        print(section, flush=True)

    given = {k: v for k, v in vars(args).items() if v != parser.get_default(k)}
    command = ".venv/bin/python benchmarks/reproducibility.py" + "".join(
        f" --{k} '{v}'" for k, v in given.items()
    )
    text = (
        "# Reproducibility: a task's plan after other tasks, on one local server\n\n"
        f"Command: `{command}`  \n"
        f"Date: {datetime.date.today()} · model `{args.model}` · retriever `minecraft` · "
        f"method rat, {', '.join(f'{k} {v}' for k, v in SETTINGS.items())} · "
        f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores\n\n"
        "Each order runs in one process with a server of its own; the plan of a task should "
        "not depend on the order.\n\n"
        "| arm | tasks with one plan in all their runs | prompt tokens processed | "
        "cached | wall s |\n|---|---|---|---|---|\n"
        + "\n".join(summary)
        + "\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
