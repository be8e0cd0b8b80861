"""Offline evaluations: checks a model's answers against ground truth it cannot retrieve."""
