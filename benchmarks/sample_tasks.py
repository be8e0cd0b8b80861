"""`rat eval` on some tasks of a --split sample only: a quick check of a fix on the tasks it
was written for, with settings and result keys exactly as the whole sample's run has them.

    python benchmarks/sample_tasks.py mc-white_terracotta,mc-slime_block eval --split tune ...

Everything after the task ids is `rat eval`'s command line, unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Sequence

import rat_agent.minecraft.tasks as tasks
from rat_agent.cli import main

_sample = tasks.sample


def _only(keep: set[str]) -> Callable[..., list[tasks.Task]]:
    def sample(
        found: Sequence[tasks.Task], n: int, split: str, exclude: Collection[str] = ()
    ) -> list[tasks.Task]:
        return [task for task in _sample(found, n, split, exclude) if task.id in keep]

    return sample


if __name__ == "__main__":
    tasks.sample = _only(set(sys.argv[1].split(",")))  # the CLI imports it when it runs
    sys.exit(main(sys.argv[2:]))
