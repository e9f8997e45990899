# Every target sets up .venv first, so the first command on a fresh machine does all set-up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
SAMPLE := sample_data/clean_2x2_stschedule.json

.PHONY: setup run test bench fuzz lint samples clean browser

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/ir-explorer $(if $(FILE),$(FILE),$(SAMPLE))

test: $(STAMP) browser
	$(PY) -m pytest -q

# The HTML report test opens the page in headless Chromium. Debian's package is installed when it is missing
# and this runs as root with apt (CI); otherwise that one test skips with a reason. IR_EXPLORER_NO_BROWSER=1 skips it.
browser:
	@command -v chromium >/dev/null 2>&1 || [ -n "$$IR_EXPLORER_NO_BROWSER" ] || [ "$$(id -u)" != 0 ] || \
		! command -v apt-get >/dev/null 2>&1 || \
		(apt-get install -y -qq chromium >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && \
		apt-get install -y -qq chromium >/dev/null 2>&1)) || echo "chromium could not be installed: the browser test will skip"

lint: $(STAMP)
	$(VENV)/bin/ruff check explorer widgets tests benchmarks examples
	$(VENV)/bin/lint-imports

samples: $(STAMP)
	$(PY) -m explorer.samples sample_data

bench: $(STAMP)
	$(PY) -m pip install --quiet 'torch==2.13.0' 'grandalf==0.8' 'igraph>=0.11'  # torch: the ONNX export; the others: the layout comparison
	$(PY) benchmarks/run.py

fuzz: $(STAMP)
	IR_EXPLORER_FUZZ_EXAMPLES=10000 $(PY) -m pytest -q tests/unit/test_fuzz_loaders.py -p no:randomly -s

clean:
	rm -rf $(VENV) .pytest_cache benchmarks/out
