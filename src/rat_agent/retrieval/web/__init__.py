"""The open web: a guarded fetch, and pages cut into passages."""
