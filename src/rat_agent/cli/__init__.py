"""The `rat` command: one module per subcommand group, wired in `app`."""

from rat_agent.cli.app import main

__all__ = ["main"]
