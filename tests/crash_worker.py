"""Runs the RAT graph on SQLite and SIGKILLs itself inside the Nth model call.

Usage: python crash_worker.py DB THREAD KILL_AT
"""

from __future__ import annotations

import os
import signal
import sys

from fakes import ListRetriever, plan_model, wiki_docs
from langchain_core.messages import BaseMessage

from rat_agent.checkpoints import sqlite_saver
from rat_agent.graph import build_graph

DRAFT = "\n".join(f"STEP {n}: task part {n}" for n in range(1, 6))


def main() -> None:
    db, thread, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = plan_model(DRAFT)
    respond = model.respond

    def dying(kind: str, messages: list[BaseMessage]) -> str:
        if len(model.calls) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return respond(kind, messages)

    model.respond = dying
    graph = build_graph(checkpointer=sqlite_saver(db), llm=model,
                        retriever=ListRetriever(documents=wiki_docs()))
    # "sync": each checkpoint is on disk before the next node starts, as the CLI does
    graph.invoke({"question": "How?"}, {"configurable": {"thread_id": thread}}, durability="sync")


if __name__ == "__main__":
    main()
