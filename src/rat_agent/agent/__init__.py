"""The RAT graph and its baselines: settings, state, prompts, nodes and the repair of steps."""
