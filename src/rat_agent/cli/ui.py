"""`rat ui`: the web page, on a local LangGraph server (`langgraph dev`) that serves it.

The page talks to the server's LangGraph API, as Studio and the SDKs do, so what it shows is
what any client of the server gets: runs streamed as they go, threads read from their
checkpoints. The server keeps its threads in the data folder, so past runs outlive it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, NoReturn

from rat_agent.cli.safe import console, escape
from rat_agent.errors import ConfigError
from rat_agent.paths import data_dir

# What `langgraph dev` serves: the repository's langgraph.json, by module path, with the page.
SERVER_CONFIG: dict[str, Any] = {
    "python_version": "3.11",
    "dependencies": ["."],
    "graphs": {"rat": "rat_agent.agent.graph:graph", "ingest": "rat_agent.ingest.graph:graph"},
    "checkpointer": {"path": "rat_agent.persistence.server.checkpointer"},
    "http": {"app": "rat_agent.ui.app:app"},
}


def add_command(sub: Any) -> None:
    ui = sub.add_parser(
        "ui", help="the web page: ask, watch each step being checked, open past runs"
    )
    ui.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    ui.add_argument("--port", type=int, default=2024, help="port (default: 2024)")


def ui_command(args: argparse.Namespace) -> NoReturn:
    server = Path(sys.executable).with_name("langgraph")
    command = str(server) if server.exists() else shutil.which("langgraph")
    if command is None:
        raise ConfigError("the page runs on the local server: pip install 'rat-agent[server]'")
    folder = data_dir() / "ui"
    folder.mkdir(exist_ok=True)
    config = folder / "langgraph.json"
    config.write_text(json.dumps(SERVER_CONFIG, indent=2) + "\n", encoding="utf-8")
    console().print(escape(f"rat ui: http://{args.host}:{args.port}/ui/ (Ctrl-C stops it)"))
    # the page is for asking now: the embedder loads while the server starts, not at the
    # first question (7-13 s); RAT_PRELOAD_EMBEDDER=0 keeps it for the first search
    env = {"RAT_PRELOAD_EMBEDDER": "1", **os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    argv = [command, "dev", "--config", str(config), "--host", args.host, "--port", str(args.port)]
    argv += ["--no-browser", "--no-reload", "--server-log-level", "WARNING"]
    sys.stdout.flush()
    os.chdir(folder)  # the server keeps its threads in the folder it starts in
    os.execve(command, argv, env)  # the server in this process: Ctrl-C and signals reach it
