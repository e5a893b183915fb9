# Two entry points (see README): `make demo` runs the main job, `make test` runs the tests.
# Both create .venv and install what they need into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned: the CPU wheel (an unpinned torch pulls a multi-GB CUDA build)
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[test,rl]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/webrl eval --agent oracle --split test --out runs/demo/oracle
	$(BIN)/webrl eval --agent random --split test --out runs/demo/random

test: $(STAMP)
	$(BIN)/ruff check webrl tests
	$(BIN)/python -m pytest -n 2 tests

.PHONY: install demo test
