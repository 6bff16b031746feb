# These commands set everything up by themselves on a fresh clone:
#   make demo   -- the main job: the seed post's examples, narrated step by step
#   make test   -- the whole test suite (installs torch 2.13 CPU as the test oracle)
#   make train  -- an MLP and a CNN trained on scikit-learn's digits, with a plot (out/train)
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test train bench lint fuzz

$(VENV)/.core:
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.test: $(VENV)/.core pyproject.toml
	$(PIP) install -q -e '.[test,viz,bench,mpi,examples]'
	-command -v dot >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz \
		>/dev/null) || true)
	touch $@

demo: $(VENV)/.core
	$(PY) -m retrograd explain --out out/explain

$(VENV)/.examples: $(VENV)/.core pyproject.toml
	$(PIP) install -q -e '.[examples]'
	touch $@

train: $(VENV)/.examples
	$(PY) -m retrograd train --out out/train

test: $(VENV)/.test
	$(PY) -m pytest

# The differential fuzzer against PyTorch, longer than `make test` runs it:
#   make fuzz SEED=123 DURATION=1800   (seconds; programs get seeds SEED, SEED+1, ...)
SEED ?= 0
DURATION ?= 600
fuzz: $(VENV)/.test
	$(PY) -m tests.fuzz --seed $(SEED) --duration $(DURATION)

bench: $(VENV)/.test
	$(PY) bench/run.py

lint: $(VENV)/.test
	$(PY) -m ruff check src tests bench examples
