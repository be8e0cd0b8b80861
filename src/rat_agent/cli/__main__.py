"""`python -m rat_agent.cli`."""

from rat_agent.cli import run

run()
