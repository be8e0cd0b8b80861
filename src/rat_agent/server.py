"""What `langgraph dev` takes from the package: the checkpointer named in langgraph.json."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

log = logging.getLogger(__name__)

# `langgraph dev` keeps its threads and runs in this folder of the directory it was started
# in; the checkpoints belong beside them, so deleting the folder resets both.
SERVER_DIR = Path(".langgraph_api")
SERVER_DB = SERVER_DIR / "rat_checkpoints.sqlite"


def _prepare() -> Path:
    SERVER_DIR.mkdir(exist_ok=True)
    return SERVER_DB


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncSqliteSaver]:
    """Checkpoints in SQLite, each committed as it is written.

    The in-memory runtime of `langgraph dev` would otherwise hold every checkpoint of every
    thread in memory and re-pickle them all every 10 s. A deployment (`langgraph up`,
    LangGraph Platform) brings a Postgres checkpointer: drop the "checkpointer" key there.
    """
    if os.environ.get("LANGGRAPH_RUNTIME_EDITION", "inmem") != "inmem":
        log.warning("rat_agent.server.checkpointer is for `langgraph dev`: this server keeps "
                    "its checkpoints in a local SQLite file, not in its database")
    path = await asyncio.to_thread(_prepare)  # no blocking call on the server's event loop
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        yield saver
