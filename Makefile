# Set-up is two commands: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Test files run in this many worker processes (pytest-xdist), one file to a worker.
TEST_WORKERS ?= 2

.PHONY: demo test test-slow typecheck docs docs-spaces browser notebooks

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[gymnax,hub,train]"
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/parallax-zoo demo
	@echo "parallax-zoo is installed in $(BIN): run \`source $(BIN)/activate\` to put it on PATH"

# The leaderboard page is tested in Debian's Chromium: installed here when missing and we are root with apt;
# otherwise one line says so and that test skips.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium for the leaderboard page test"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    timeout 900 apt-get install -y -qq chromium >/dev/null 2>&1 || \
	      { timeout 300 apt-get update -qq && timeout 900 apt-get install -y -qq chromium >/dev/null; } || \
	      echo "chromium could not be installed: the leaderboard page's browser test will skip"; \
	  else \
	    echo "no chromium, and no apt-get as root to install it: the leaderboard page's browser test will skip"; \
	  fi; }

test: $(VENV)/.dev-installed browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

test-slow: $(VENV)/.dev-installed browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --run-slow

# PYRIGHT_FLAGS are added to pyright's own: tests/project/test_typing.py reads the report with --outputjson.
PYRIGHT_FLAGS ?=
typecheck: $(VENV)/.dev-installed
	$(BIN)/pyright --pythonpath $(BIN)/python $(PYRIGHT_FLAGS)

# ruff formats and lints with the settings in pyproject.toml; the test suite runs the same check (tests/project/test_lint.py).
lint: $(VENV)/.dev-installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

docs: $(VENV)/.dev-installed
	$(BIN)/mkdocs build --strict

# Build every adapted env (minutes) and record its spaces for the catalogue pages, which the site build reads.
docs-spaces: $(VENV)/.dev-installed
	$(BIN)/python docs/catalogue_pages.py --write-spaces docs/environment_spaces.json

# Execute every notebook in place, so that they are committed with their outputs.
notebooks: $(VENV)/.dev-installed
	$(BIN)/python notebooks/refresh.py
