PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run test fuzz lint lint-imports golden bench bench-ci clean

CONSTRAINTS := .ci/constraints.txt

# The exact versions CI uses (CONSTRAINTS); pyproject.toml holds the supported ranges.
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) --upgrade pip
	$(PY) -m pip install --quiet -c $(CONSTRAINTS) -e '.[test]'
	touch $@

run: $(VENV)/.installed
	QT_QPA_PLATFORM= $(PY) -m narrative_debugger.app

# One pytest-xdist worker per CPU this process may use; with one CPU the suite runs serially
# (tests/conftest.py, pytest_xdist_auto_num_workers). TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= auto
test: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n $(TEST_WORKERS)

# Fresh random inputs through every command for FUZZ_SECONDS (default 600; tests/test_fuzz.py).
FUZZ_SECONDS ?= 600
fuzz: $(VENV)/.installed
	FUZZ_SECONDS=$(FUZZ_SECONDS) QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py -k for_a_while

# pyflakes (pinned in CONSTRAINTS) over the code and the tests: unused imports and names,
# undefined names, f-strings with no placeholder. A few seconds; .ci/run runs it.
lint: $(VENV)/.installed
	$(PY) -m pyflakes app models widgets tests

# The import contracts of pyproject.toml ([tool.importlinter]): layers, no Qt in models, independent views.
lint-imports: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider tests/test_import_contracts.py

# Writes the golden files again from the code as it is (tests/support/golden.py), then shows what changed.
GOLDEN_FILES := tests/data/prompt_tokens_golden.json tests/data/golden
golden: $(VENV)/.installed
	$(PY) -m tests.support.golden
	@git --no-pager diff --stat -- $(GOLDEN_FILES)
	@git --no-pager diff -- $(GOLDEN_FILES)
	@git status --short --untracked-files=all -- $(GOLDEN_FILES)

bench: $(VENV)/.installed
	$(PY) tests/benchmarks/bench_models.py

# Issue 37's goals at 100 000 events (3 NPCs), printed; fails only on a GUI stall over 500 ms.
bench-ci: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(PY) tests/benchmarks/bench_core.py --ci

clean:
	rm -rf $(VENV)
