"""Runs an ingest in its own process and SIGKILLs it right after the Nth stored batch.

Usage: python ingest_worker.py DATA_DIR COLLECTION KILL_AFTER PATH...
"""

from __future__ import annotations

import os
import signal
import sys

from rat_agent.ingest import pipeline


def main() -> None:
    data_dir, collection, kill_after, *paths = sys.argv[1:]
    os.environ["RAT_DATA_DIR"] = data_dir
    real_store = pipeline._store
    stored = 0

    def store(*args: object, **kwargs: object) -> None:
        nonlocal stored
        real_store(*args, **kwargs)  # type: ignore[arg-type]
        stored += 1
        if stored == int(kill_after):
            os.kill(os.getpid(), signal.SIGKILL)

    pipeline._store = store  # type: ignore[assignment]
    pipeline.ingest(paths, collection=collection, batch=4)


if __name__ == "__main__":
    main()
