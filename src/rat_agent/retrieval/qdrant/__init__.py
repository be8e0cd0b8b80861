"""Qdrant: one client per location, the hybrid (dense + sparse) collection, the retriever."""
