# Every target sets up .venv first, so the first command on a fresh machine does all set-up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
SAMPLE := sample_data/clean_2x2_stschedule.json

.PHONY: setup lock run test bench fuzz lint samples schemas docs clean browser

setup: $(STAMP)

# The exact versions the suite passed with (every package, its dependencies' and the build backend's too) are in
# LOCK: set-up installs those and nothing newer, then the explorer itself with the locked backend and without
# resolving again; `pip check` refuses a lock that lacks a dependency. `make lock` moves the versions forward.
LOCK := requirements.lock

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $$(grep '^pip==' $(LOCK))
	$(PY) -m pip install --quiet --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $(STAMP)

# Re-resolves every dependency to the newest release pyproject allows, in a scratch venv, and writes LOCK. Run
# `make test` on it before committing it (a commit of its own).
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet '.[test,bench]' hatchling editables  # the build backend: locked too
	{ echo "# The versions make setup installs: written by make lock (README, Development); edit pyproject, not this."; \
	  .lock-venv/bin/python -m pip freeze --all --exclude-editable | grep -v -i -e '^ir-explorer' -e '^ir_explorer' \
	  | LC_ALL=C sort -f; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .lock-venv build

# Byte-compiled first, as a non-editable install is: each run's worker processes (and each of the suite's
# `python -m explorer` children) would otherwise compile every module again wherever PYTHONDONTWRITEBYTECODE is
# set (measured: 0.2-0.3 s of a big schedule's `info`).
COMPILE := $(PY) -m compileall -q explorer widgets >/dev/null

run: $(STAMP)
	$(COMPILE)
	$(VENV)/bin/ir-explorer $(if $(FILE),$(FILE),$(SAMPLE))

# One worker more than the machine has cores, at most 4: the app tests wait on Textual's timers and the CLI tests on
# their child processes, so a third worker fills two cores (measured on 2 cores: 10:30 with two workers, 9:23 with
# three); loadgroup keeps a file's tests together where it asks (the fuzz round counts what it ran)
WORKERS := $(shell $(PYTHON) -c 'import os; print(min(4, (os.cpu_count() or 1) + 1))')
test: $(STAMP) browser
	$(COMPILE)
	$(PY) -m pytest -q -n $(WORKERS) --dist loadgroup

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
	$(VENV)/bin/mypy

samples: $(STAMP)
	$(PY) -m explorer.samples sample_data

# The JSON Schemas of the --json outputs and the bookmarks file (explorer/contracts.py), committed for consumers.
schemas: $(STAMP)
	$(PY) -c 'from explorer.contracts import write_schemas; write_schemas("schemas")'

# The README's screenshots: the review views on the bundled planted file (core 1, workload 3: the overlap), and the
# graph view's first screens.
docs: $(STAMP)
	$(VENV)/bin/ir-explorer screenshot sample_data/planted_problems_2x2_stschedule.json --view memory --core 1 \
		--workload 3 --size 160x40 -o docs/memory_map.svg
	$(VENV)/bin/ir-explorer screenshot sample_data/planted_problems_2x2_stschedule.json --view timeline --core 1 \
		--workload 3 --size 160x30 -o docs/labelled_timeline.svg
	$(VENV)/bin/ir-explorer screenshot tests/app/data/mesh16_stschedule.json --view mesh --core 5 --workload 1 \
		--size 160x40 -o docs/mesh.svg
	# the graph view's first screens on the real torch exports and a scripted Loop/If model (needs ../shared)
	$(VENV)/bin/ir-explorer screenshot ../shared/samples/onnx/resnet18_narrow_torchscript_opset17.onnx --view graph \
		--size 160x48 -o docs/graph_resnet_first_screen.svg
	$(VENV)/bin/ir-explorer screenshot ../shared/samples/onnx/minigpt6_torchscript_opset17_noconstfold.onnx --view graph \
		--size 160x48 -o docs/graph_gpt_first_screen.svg
	$(VENV)/bin/ir-explorer screenshot ../shared/samples/onnx/loop_if_scripted_opset16.onnx --view graph -o docs/graph_view.svg
	$(VENV)/bin/ir-explorer graph ../shared/samples/onnx/loop_if_scripted_opset16.onnx --expand all --svg docs/graph_loop_if.svg
	# two graphs side by side: the renamed demo model on its one change
	$(VENV)/bin/ir-explorer screenshot sample_data/residual_blocks.onnx --compare sample_data/residual_blocks_renamed.onnx \
		--size 160x40 -o docs/graph_compare.svg
	# per-node data: the bundled schedule coloured by its demo layer profile
	$(VENV)/bin/ir-explorer screenshot sample_data/clean_2x2_stschedule.json --view graph \
		--node-data sample_data/clean_2x2_layer_profile.csv --size 160x40 -o docs/graph_node_data.svg

bench: $(STAMP)
	# held to the lock where they share a dependency with the explorer, so the bench measures the versions tested
	$(PY) -m pip install --quiet -c $(LOCK) 'torch==2.13.0' 'grandalf==0.8' 'igraph>=0.11'  # torch: the ONNX export; the others: the layout comparison
	$(PY) -m pip install --quiet -c $(LOCK) 'onnxscript==0.7.2' 'transformers==5.24.0' 'diffusers==0.42.1'  # the architectures torch exports (benchmarks/hf_exports.py)
	-cd benchmarks/dagre && npm install --silent --no-audit --no-fund  # dagre, the layout quality anchor (needs node; skipped without)
	$(COMPILE)
	$(PY) benchmarks/run.py

# The long campaign (about 20 minutes on 2 cores): writes RELIABILITY.md, keeps what broke under tests/data/fuzz/.
fuzz: $(STAMP)
	$(PY) -m tests.fuzz_campaign --per-format $(if $(N),$(N),100000)

clean:
	rm -rf $(VENV) .pytest_cache benchmarks/out .lock-venv
