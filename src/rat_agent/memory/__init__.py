"""Thought memory (the Thought-Retriever paper): a Qdrant collection of checked thoughts."""
