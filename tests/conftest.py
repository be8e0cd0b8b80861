import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# tests/postgres.py: a throwaway PostgreSQL server (postgres_url) and a fresh database per
# test (postgres_db), started by scripts/postgres.sh.
pytest_plugins = ["postgres"]
