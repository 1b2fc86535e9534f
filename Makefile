# Quick start on a fresh machine: `make demo`, then `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# A download cut off part way (it happened to CI: a 55 MB wheel stuck at 48.5 MB through pip's own retries) is
# resumed more times than pip's default, and a failed install is run again after a pause, twice at most.
export PIP_RETRIES ?= 10
export PIP_RESUME_RETRIES ?= 20
RETRY := sh -c 'for try in 1 2 3; do "$$@" && exit 0; [ $$try = 3 ] || { echo "pip failed (try $$try of 3); again in 30 s"; sleep 30; }; done; exit 1' retry
PIP := $(RETRY) $(BIN)/python -m pip install -q -c constraints.txt

.PHONY: demo test test-core test-pythons chromium typecheck install install-dev install-rllib clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(RETRY) $(BIN)/python -m pip install -q --upgrade pip

# The env and the agents, with the eval extra (ratings and plot) that `wizard eval`, and so the demo, needs.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e ".[eval]"
	touch $@

# Everything the tests exercise: training, the dev tools, OpenSpiel (the python_wizard game's tests) and the
# libraries of examples/ (tests/test_adapters.py), the web table (wizard serve), the rgb_array render mode and the
# docs site (its strict build is a test).
$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) -e ".[train,dev,openspiel,adapters,web,render,docs]"
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Ray RLlib pins its own gymnasium (ray 2.60: 1.2.2) while .venv keeps the newest, so the rllib extra gets a
# venv of its own; it runs tests/rllib, which a venv without ray does not collect (tests/rllib/conftest.py).
RLLIB_VENV := .venv-rllib
$(RLLIB_VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RETRY) $(RLLIB_VENV)/bin/python -m pip install -q --upgrade pip
	$(RETRY) $(RLLIB_VENV)/bin/python -m pip install -q -c constraints.txt -e ".[rllib,eval,dev]"
	touch $@

install-rllib: $(RLLIB_VENV)/.installed

# The shipped network (net) against three RuleAgents on 300 duplicate deals (every deal in every seat rotation).
demo: install
	$(BIN)/wizard eval --players 4 --agents net,rule,rule,rule --games 300 --seed 0 --out runs/demo

# mypy checks the package as it is installed (agents/ and training/ inside wizard_env) through a tree of links.
typecheck: install-dev
	rm -rf build/typecheck && mkdir -p build/typecheck/wizard_env
	ln -s $(CURDIR)/wizard_env/* $(CURDIR)/agents $(CURDIR)/training build/typecheck/wizard_env/
	cd build/typecheck && $(CURDIR)/$(BIN)/python -m mypy --config-file $(CURDIR)/pyproject.toml -p wizard_env

# The web table's browser tests drive Debian's Chromium (Playwright cannot download its own browser here):
# installed when it is missing and we are root (CI, a container), else a note says how, and those tests skip.
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
		else \
			echo "make test: no Chromium at $(CHROMIUM), so the browser tests will skip; to run them: sudo apt-get install chromium"; \
		fi; \
	fi

# The core suite on each supported Python, in venvs of nox's under .nox/ (noxfile.py: torch on 3.11 only, so
# elsewhere the tests that need it skip, naming it); make test runs it on the oldest and the newest.
NOX := $(BIN)/python -m nox --reuse-venv yes
OLDEST_NEWEST := core-3.10 core-3.13

test-pythons: install-dev
	$(NOX) -s core

# The suite writes only into temporary folders: a file it writes anywhere in the tree (ignored ones such as runs/
# included; the venvs, build/ and Python's and numba's caches aside) or a change git sees fails `make test`.
WRITTEN = find . \( -path ./.git -o -path ./.venv -o -path ./.venv-rllib -o -path ./.nox -o -path ./build -o -name __pycache__ \
	-o -name .pytest_cache -o -name .hypothesis -o -name '*.egg-info' \) -prune -o -type f -newer build/suite-start -print

# The whole suite on .venv's Python, the RLlib tests in .venv-rllib, then the core suite on Python 3.10 and 3.13.
test: install-dev typecheck install-rllib chromium
	@mkdir -p build; git status --porcelain > build/status-before; touch build/suite-start
	$(BIN)/python -m pytest -q
	$(RLLIB_VENV)/bin/python -m pytest -q tests/rllib
	$(NOX) -s $(OLDEST_NEWEST)
	@git status --porcelain | diff build/status-before - || { echo "make test: the test suite changed the working tree (above)"; exit 1; }
	@written="$$($(WRITTEN))"; if [ -n "$$written" ]; then \
		echo "make test: the test suite wrote into the working tree (tests write only into temporary folders):"; \
		echo "$$written"; exit 1; fi

# The core suite, quicker: no Ray venv (tests/rllib), no browser tests, no type check (about 10 minutes here).
test-core: install-dev
	$(BIN)/python -m pytest -q --ignore=tests/test_web_browser.py

# The documentation site (mkdocs.yml) into build/site; --strict stops on a broken link or anchor. Open
# build/site/index.html, or serve it with `.venv/bin/mkdocs serve`.
$(VENV)/.installed-docs: $(VENV)/.installed
	$(PIP) -e ".[docs]"
	touch $@

.PHONY: docs
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

clean:
	rm -rf $(VENV) $(RLLIB_VENV) .nox build *.egg-info
