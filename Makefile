# Every target sets up .venv first, so the first command on a fresh machine does all set-up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
SAMPLE := sample_data/clean_2x2_stschedule.json

.PHONY: setup run test bench fuzz lint samples clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/ir-explorer $(if $(FILE),$(FILE),$(SAMPLE))

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check explorer widgets tests benchmarks
	$(VENV)/bin/lint-imports

samples: $(STAMP)
	$(PY) -m explorer.samples sample_data

bench: $(STAMP)
	$(PY) -m pip install --quiet 'torch==2.13.0'  # CPU build from the local wheel: only the benchmark exports with it
	$(PY) benchmarks/run.py

fuzz: $(STAMP)
	IR_EXPLORER_FUZZ_EXAMPLES=10000 $(PY) -m pytest -q tests/unit/test_fuzz_loaders.py -p no:randomly -s

clean:
	rm -rf $(VENV) .pytest_cache benchmarks/out
