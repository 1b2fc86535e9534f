# Quick start on a fresh machine: `make demo`, then `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install -q -c constraints.txt

.PHONY: demo test install install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) -e ".[train,dev]"
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The shipped learned agent (ppo) against three RuleAgents on 300 duplicate deals (every deal in every seat rotation).
demo: install
	$(BIN)/wizard eval --players 4 --agents ppo,rule,rule,rule --games 300 --seed 0 --out runs/demo

test: install-dev
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
