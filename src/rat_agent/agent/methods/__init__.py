"""The paper's baselines and the agent a user would build instead, as methods of the same
graph (context field `method`): direct and rag (baselines.py), react (react.py). The loop
they are compared with is the rest of agent/."""
