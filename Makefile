# The README's commands. Each creates (once) and reuses the local virtual environment .venv, with
# only what `make demo` and `make test` need: xblock, its cuda extra (Triton) and the test tools.
# `make dev` adds the rest (ruff for `make lint`, lit).
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.xblock-installed
DEV_STAMP := $(VENV)/.xblock-dev-installed

.PHONY: demo test test-slow dev lint bench docs fuzz clean

$(STAMP): pyproject.toml
	@echo "make: installing xblock[cuda,test] into $(VENV) (once; about a minute, most of it Triton)"
	$(PY) -m venv $(VENV)
	bash tools/pip_install.sh $(VPY) -q --upgrade pip
	bash tools/pip_install.sh $(VPY) --progress-bar on -e '.[cuda,test]'
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	bash tools/pip_install.sh $(VPY) --progress-bar on -e '.[dev]'
	touch $(DEV_STAMP)

dev: $(DEV_STAMP)

demo: $(STAMP)
	$(VPY) -m xblock demo

# the tests' compile cache: outside the clone (it grows to about a GB), one per clone, kept between runs
TEST_CACHE ?= $(shell echo "$${TMPDIR:-/tmp}/xblock-test-cache-$$(echo '$(CURDIR)' | cksum | cut -d' ' -f1)")

test: $(STAMP)
	XBLOCK_CACHE_DIR=$(TEST_CACHE) $(VPY) -m pytest -q -n 2 -m "not slow" --durations=15 tests

# the long tests `make test` leaves out (tests/conftest.py SLOW); CI runs them after `make test`
test-slow: $(STAMP)
	XBLOCK_CACHE_DIR=$(TEST_CACHE) $(VPY) -m pytest -q -n 2 -m slow tests

lint: $(DEV_STAMP)
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
	rm -rf .xblock_cache build *.egg-info $(TEST_CACHE)
