# citecal — every target does its own set-up from a fresh clone.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean groundtruth cascade docs screenshots

install: $(STAMP)

# pip's own lines (Collecting …, Downloading … with a bar, Installing …) show what the
# minute of a first install is spent on; --progress-bar on draws the bar in logs too.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "==> creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "==> upgrading pip in $(VENV)"
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "==> installing citecal and its dev extras into $(VENV) (about a minute the first time)"
	@$(BIN)/python -m pip install --progress-bar on -e '.[dev]'
	@touch $(STAMP)
	@echo "==> $(VENV) ready"

demo: install
	$(BIN)/citecal eval datasets/examples/report.md --repo datasets/examples/shopcart --no-llm

test: install groundtruth
	@echo "==> running the tests: the Argilla integration tests reuse a server on 127.0.0.1:$${CITECAL_ARGILLA_PORT:-6900}"
	@echo "    or start the local stack (services/argilla/up.sh; the first start installs it, a few minutes)"
	$(BIN)/python -m pytest

groundtruth:  ## fetch the pinned package sources of datasets/groundtruth (sha256-checked)
	$(PYTHON) datasets/groundtruth/fetch.py

cascade: install groundtruth  ## retrain the shipped default cascade (README "The cascade")
	$(BIN)/citecal bench groundtruth --no-llm --write-cascade citecal/cascade/default_cascade.json --force

# The documentation site (mkdocs.yml, docs/); --strict turns every warning (a broken link, a
# page missing from the nav) into a failure. Output in site/ (ignored by git).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# docs/images/: the Argilla annotation page and the HTML calibration report, taken with
# Debian's headless Chromium from the local stack (reused when one runs on :6900).
screenshots: install
	$(BIN)/python scripts/screenshots.py

lint: install
	$(BIN)/ruff check citecal tests benchmarks
	$(BIN)/ruff format --check citecal tests benchmarks
	$(BIN)/mypy

bench: install
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site

# Local Argilla stack (services/argilla/): Redis, OpenSearch, argilla-server, rq worker.
.PHONY: argilla-up argilla-down argilla-status
argilla-up:
	services/argilla/up.sh --with-browser
argilla-down:
	services/argilla/down.sh
# status.sh exits 3 when a component is stopped (for scripts); here that is an answer, not an
# error: after argilla-down, "stopped" is the expected state and make must not fail on it.
argilla-status:
	@services/argilla/status.sh || { rc=$$?; [ $$rc -eq 3 ] || exit $$rc; \
		echo "not every component runs: make argilla-up starts the stack"; }

.PHONY: demo-judge
demo-judge: install  ## the bundled example with the LLM judge on the local heuristic server
	CITECAL_CACHE_PATH=$$(mktemp -d)/judge-cache.sqlite3 $(BIN)/python -m citecal.testing -- \
		$(BIN)/citecal eval datasets/examples/report.md --repo datasets/examples/shopcart
