"""The web page that shows a run's draft being checked step by step (`rat ui`)."""
