# The two commands of the quick start:
#   make reproduce   set up, then recompute every documented number (embedded model, offline)
#   make test        set up, then run every test: unit tests and every notebook under nbval
VENV ?= .venv
# The main job runs on the embedded model unless told otherwise (make reproduce BACKEND=ollama).
BACKEND ?= embedded
PY := $(VENV)/bin/python
NBVAL_FLAGS := --nbval --nbval-sanitize-with notebooks/sanitize.cfg --nbval-current-env

# Extras of ragworkbook: the set-up installs EXTRAS; the full test runs (test, unit) install TEST_EXTRAS,
# which add the cross-check against the ragas library (the `ragas` extra: ~800 MB, not needed to run
# the workbook or reproduce its numbers). Each set is installed once; a set-up for the tests also
# satisfies the plain one.
EXTRAS ?= dev
TEST_EXTRAS ?= $(EXTRAS),ragas
SETUP_STAMP := $(VENV)/.ragworkbook-installed
TEST_STAMP := $(VENV)/.ragworkbook-installed-test

.PHONY: setup setup-test reproduce test unit fast notebooks lab lint bench

setup: $(SETUP_STAMP)
setup-test: $(TEST_STAMP)

$(SETUP_STAMP): pyproject.toml scripts/setup.sh
	EXTRAS="$(EXTRAS)" bash scripts/setup.sh
	touch $@

$(TEST_STAMP): pyproject.toml scripts/setup.sh
	EXTRAS="$(TEST_EXTRAS)" bash scripts/setup.sh
	touch $@ $(SETUP_STAMP)

reproduce: setup
	$(VENV)/bin/ragworkbook reproduce --backend $(BACKEND)

test: setup-test
	$(PY) -m pytest tests notebooks $(NBVAL_FLAGS)

unit: setup-test
	$(PY) -m pytest tests

# the unit tests that load no model (MiniLM, BERTScore, llama.cpp): seconds
fast: setup
	$(PY) -m pytest -m fast tests

notebooks: setup
	$(PY) -m pytest notebooks $(NBVAL_FLAGS)

# JupyterLab on notebooks/: make lab [LAB_PORT=8888] [LAB_IP=127.0.0.1] [LAB_ARGS="--IdentityProvider.token=..."]
# No browser is opened (open the URL it prints); --allow-root is added when run as root.
LAB_IP ?= 127.0.0.1
LAB_PORT ?= 8888
LAB_ARGS ?=
lab: setup
	$(VENV)/bin/jupyter lab notebooks --ip=$(LAB_IP) --port=$(LAB_PORT) --no-browser \
		$(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

lint: setup
	$(VENV)/bin/ruff check ragworkbook tests benchmarks

# make bench TREC_EVAL=path/to/trec_eval adds the C trec_eval's row to bench_trec_eval.py (your own build of
# usnistgov/trec_eval: the project neither ships nor builds it; without it that row is skipped)
bench: setup
	$(PY) benchmarks/bench_retrieval_metrics.py
	$(PY) benchmarks/bench_embedded.py
	$(PY) benchmarks/bench_trec_eval.py $(if $(TREC_EVAL),--trec-eval $(TREC_EVAL))
