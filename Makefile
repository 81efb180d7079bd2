# Two commands on a fresh machine (see README.md):
#   make demo   installs, checks the course, builds it, grades the bundled sample class (SQLite)
#   make test   installs, then runs the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: install system-deps demo test benchmarks clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Pinned versions for reproducible runs (regenerate with: make pin).
install: $(BIN)/python
	$(BIN)/python -m pip install -q --disable-pip-version-check -c requirements/ci.txt -e ".[dev]"

system-deps:
	scripts/install-system-deps.sh

demo: system-deps install
	$(BIN)/trous doctor
	$(BIN)/trous edition _build/attention-eleves
	$(BIN)/trous grade examples/classe --resultats _build/resultats

test: system-deps install
	$(BIN)/python -m pytest tests/ -q -ra

benchmarks: install
	$(BIN)/python benchmarks/pytest_exercises.py
	$(BIN)/python benchmarks/grade_class.py
	$(BIN)/python benchmarks/nbgrader_vs_trous.py
	$(BIN)/python benchmarks/dask_overhead.py

pin: install
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^trous' > requirements/ci.txt

clean:
	rm -rf _build .pytest_cache
