PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

run: $(VENV)/.installed
	QT_QPA_PLATFORM= $(PY) -m narrative_debugger.app

test: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) tests/benchmarks/bench_models.py

clean:
	rm -rf $(VENV)
