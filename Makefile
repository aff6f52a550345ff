# The README's commands. Each creates (once) and reuses the local virtual environment .venv.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.xblock-installed

.PHONY: demo test lint bench docs fuzz clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[dev,cuda]'
	touch $(STAMP)

demo: $(STAMP)
	$(VPY) -m xblock demo

test: $(STAMP)
	XBLOCK_CACHE_DIR=$(CURDIR)/.xblock_cache/test $(VPY) -m pytest -q -n 2 tests

lint: $(STAMP)
	$(VPY) -m ruff check xblock tests examples benchmarks tools

docs: $(STAMP)
	$(VPY) tools/language_status.py

bench: $(STAMP)
	$(VPY) benchmarks/sim_vs_triton_interpreter.py

# A differential fuzzing campaign (a few minutes): failures shrunk into tests under out/fuzz/.
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 300
fuzz: $(STAMP)
	XBLOCK_CACHE_DIR=$(CURDIR)/.xblock_cache/fuzz $(VPY) tools/fuzz.py --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) --out out/fuzz

clean:
	rm -rf .xblock_cache build *.egg-info
