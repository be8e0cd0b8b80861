"""`rat models`: the warm local model servers (RAT_KEEP_ALIVE): start one ahead of the first
question (loading the weights is most of a first run's wait), list them, stop them."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rat_agent.cli.safe import console, escape


def add_command(sub: Any) -> None:
    models = sub.add_parser(
        "models", help="list the local model servers kept warm between commands, or stop them"
    )
    actions = models.add_subparsers(dest="action")
    actions.add_parser("list", help="model, port, idle time (the default)")
    start = actions.add_parser(
        "start", help="start a bundled model's server now, so the next question finds it warm"
    )
    start.add_argument("--model", default="local", choices=["local", "local-tiny"])
    actions.add_parser("stop", help="stop every warm local model server now")


def models_command(args: argparse.Namespace) -> int:
    from rat_agent.providers import warm

    out = console()
    if args.action == "start":
        return _start(args.model)
    servers = warm.running()
    if args.action == "stop":
        for state, _ in servers:
            warm.stop(state)
            out.print(f"stopped {escape(state.alias)} (port {state.port}, pid {state.pid})")
        if not servers:
            out.print("no local model server is running")
        return 0
    if not servers:
        out.print("no local model server is running (RAT_KEEP_ALIVE keeps one warm)")
        return 0
    for state, idle in servers:
        left = (
            "until `rat models stop`"
            if math.isinf(state.keep_alive)
            else f"stops in {_duration(max(0.0, state.keep_alive - idle))}"
        )
        out.print(
            f"{escape(state.alias):12} port {state.port:<6} pid {state.pid:<8} "
            f"slots {state.slots}  idle {_duration(idle):>7}  {left}  "
            f"[dim]{escape(Path(state.model).name)}[/dim]"
        )
    return 0


def _start(name: str) -> int:
    from rat_agent.errors import ConfigError
    from rat_agent.providers import warm
    from rat_agent.providers.chat import local_model_path

    seconds = warm.keep_alive()
    if seconds == 0:
        raise ConfigError("RAT_KEEP_ALIVE=0 keeps no server warm: unset it, or give a duration")
    # the warm server itself (found or started), not this process's view of it: a server
    # this process already runs in itself (RAT_KEEP_ALIVE=0 earlier) is not one to leave
    state = warm.attach(local_model_path(name), name, seconds)
    until = (
        "until `rat models stop`"
        if math.isinf(state.keep_alive)
        else f"stops after {_duration(state.keep_alive)} idle (RAT_KEEP_ALIVE)"
    )
    console().print(f"{escape(name)} is warm: port {state.port}, pid {state.pid}; {until}")
    return 0


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
