# qnmodel: two commands do all set-up on a fresh machine.
#   make demo   create .venv, install qnmodel, run the main job (writes out/demo/)
#   make test   create .venv, install qnmodel with test extras, lint, layer contract, test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := .make-stamps
# Everything that changes the installed package (sources, C files, build config).
PKG_SRC := $(shell find qnmodel -type f \( -name '*.py' -o -name '*.c' -o -name '*.h' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.json' -o -name '*.toml' \) 2>/dev/null) pyproject.toml

.PHONY: demo test test-fast test-parts lint contracts pytest bench docs clean venv install peers FORCE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: $(BIN)/python

# The system parts the build compiles against (.ci/system-parts.tsv, group build: libnfs for
# qnbench's nfs engine, mpicc for qnbench-mpi): installed when missing (as root with apt-get),
# otherwise named with the command that installs them. The record changes when one appears or
# goes, and the package is then rebuilt from a clean build directory.
SYSPARTS := .ci/system-packages.sh
$(STAMP)/system: FORCE
	@$(SYSPARTS) --record $@ build

# Non-editable install: the suite tests what a user gets from `pip install .`,
# including the compiled qnbench and kernels inside the package.
$(STAMP)/installed: $(BIN)/python $(PKG_SRC) $(STAMP)/system
	@mkdir -p $(STAMP)
	@if [ -f $@ ] && [ $(STAMP)/system -nt $@ ]; then \
	  echo "system parts changed since the last build ($(STAMP)/system): rebuilding"; rm -rf build; fi
	$(BIN)/python -m pip install --quiet ".[test,notebooks,peers,docs,widgets,dask]"
	@touch $@

install: $(STAMP)/installed

demo: $(STAMP)/installed
	$(BIN)/qnmodel demo --out out/demo

lint: $(STAMP)/installed
	$(BIN)/ruff check qnmodel tests examples docs/_build
	$(BIN)/ruff format --check qnmodel tests examples docs/_build

contracts: $(STAMP)/installed
	$(BIN)/lint-imports

# Two passes: the parallel suite, then the tests marked `alone` (timing measurements, the
# testbed, the site build) one at a time, so no measurement shares the 2 cores with the rest.
pytest: $(STAMP)/installed
	$(BIN)/pytest -n 2 --dist loadgroup -m "not alone"
	$(BIN)/pytest -m alone

# The system parts the tests use (the peers, the testbed, the fuzzers): installed when missing
# as root with apt-get; otherwise named, and the tests needing them skip naming them.
test-parts:
	@$(SYSPARTS) fuzz
	@$(SYSPARTS) test

# test-parts first: a fuzz part it installs changes the build record, and the install step of
# lint, contracts and pytest then rebuilds.
test: test-parts
	@$(MAKE) --no-print-directory lint contracts pytest

# The development lane: unit, property and peer tests, without live measurements (`alone`,
# `live`, `testbed`) or executed docs, examples and notebooks (`docs`), in parallel; `make test`
# stays the whole suite and what CI runs.
test-fast: $(STAMP)/installed
	$(BIN)/pytest -n 2 --dist loadgroup -m "not alone and not live and not testbed and not docs" -q

# The site executes every notebook and snippet and draws the gallery at build; the README's
# picture is redrawn from the gallery first.
docs: $(STAMP)/installed
	$(BIN)/python docs/_build/readme_figure.py docs/assets/model-vs-measured.png
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir out/site

bench: $(STAMP)/installed
	$(BIN)/python tests/benchmarks/run.py

clean:
	rm -rf build dist out $(STAMP) .pytest_cache .ruff_cache
