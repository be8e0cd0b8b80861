"""The Minecraft domain shared by the retriever and the evaluation: game data, the corpus,
the plan simulator, reference plans and the task suite."""
