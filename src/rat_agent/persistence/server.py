"""What `langgraph dev` takes from the package: the checkpointer named in langgraph.json."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from rat_agent.persistence.checkpoints import URL_ENV, async_checkpointer

log = logging.getLogger(__name__)

# `langgraph dev` keeps its threads and runs in this folder of the directory it was started
# in; the checkpoints belong beside them, so deleting the folder resets both.
SERVER_DIR = Path(".langgraph_api")
SERVER_DB = SERVER_DIR / "rat_checkpoints.sqlite"


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The store RAT_CHECKPOINT_URL names (PostgreSQL to share it), else SQLite beside the
    server's own files, each checkpoint committed as it is written.

    The in-memory runtime of `langgraph dev` would otherwise hold every checkpoint of every
    thread in memory and re-pickle them all every 10 s. A deployment (`langgraph up`,
    LangGraph Platform) brings its own PostgreSQL checkpointer: drop the key there.
    """
    url = os.environ.get(URL_ENV)
    if url is None and os.environ.get("LANGGRAPH_RUNTIME_EDITION", "inmem") != "inmem":
        log.warning(
            "rat_agent.persistence.server.checkpointer is for `langgraph dev`: this "
            "server keeps its checkpoints in a local SQLite file, not in its database"
        )
    async with async_checkpointer(url or str(SERVER_DB)) as saver:
        yield saver
