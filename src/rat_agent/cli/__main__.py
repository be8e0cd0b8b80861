"""`python -m rat_agent.cli`."""

from rat_agent.cli.app import main

raise SystemExit(main())
