# Two commands for a fresh machine (see README):
#   make demo   sets everything up and runs the node on the bundled example robot
#   make test   sets everything up and runs every test
# make test-quick: the edit loop (under a minute warm): every test not marked slow, dds or launch
#   (setup.cfg), with hypothesis's dev profile (test/conftest.py); it rebuilds the workspace only
#   when an edit needs it (a new module or message; scripts/run_tests.sh). `make test` before a push.
# ROS_WHEELS=jazzy make test: the same on the ROS 2 Jazzy wheels (Python 3.12; default Kilted).
# make colcon-test: the tests as `colcon test` runs them (pytest suite + ruff), counted by
# `colcon test-result`.
SHELL := /bin/bash
DURATION ?= 0
ARGS ?=

.PHONY: env demo test test-quick colcon-test bench clean clean-cache

env:
	@bash scripts/setup_env.sh

demo: env
	@bash scripts/run_demo.sh $(DURATION) $(ARGS)

test: env
	@bash scripts/run_tests.sh $(ARGS)

test-quick:
	@bash scripts/run_tests.sh --quick $(ARGS)

colcon-test: env
	@bash scripts/run_colcon_test.sh

bench: env
	@bash scripts/run_bench.sh $(ARGS)

clean:
	rm -rf .ws .venv .ws-jazzy .venv-jazzy .venv-numpy1 demo_output

# numba's compiled kernels (next to the sources, in the workspaces and in the user cache). Never
# needed after an edit (the cache is keyed by each kernel's sources: geometry/kernel_cache.py);
# for a cold start on purpose or the disk. `make env` (its colcon build) compiles them again.
clean-cache:
	find ambf_collision .ws .ws-jazzy \( -name '*.nbi' -o -name '*.nbc' \) -delete 2>/dev/null || true
	rm -rf "$${XDG_CACHE_HOME:-$$HOME/.cache}/ambf_collision/numba"
