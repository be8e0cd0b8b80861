"""Where runs are kept: checkpointers by URL, and the one `langgraph dev` is given."""
