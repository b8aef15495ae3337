PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run test bench clean

CONSTRAINTS := .ci/constraints.txt

# The exact versions CI uses (CONSTRAINTS); pyproject.toml holds the supported ranges.
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) --upgrade pip
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[test]'
	touch $@

run: $(VENV)/.installed
	QT_QPA_PLATFORM= $(PY) -m narrative_debugger.app

test: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) tests/benchmarks/bench_models.py

clean:
	rm -rf $(VENV)
