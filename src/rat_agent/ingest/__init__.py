"""Filling a Qdrant collection from files and URLs, as a function and as a LangGraph graph."""
