# Two commands for a fresh machine (see README):
#   make demo   sets everything up and runs the node on the bundled example robot
#   make test   sets everything up and runs every test
SHELL := /bin/bash
DURATION ?= 0
ARGS ?=

.PHONY: env demo test bench clean

env:
	@bash scripts/setup_env.sh

demo: env
	@bash scripts/run_demo.sh $(DURATION) $(ARGS)

test: env
	@bash scripts/run_tests.sh $(ARGS)

bench: env
	@bash scripts/run_bench.sh $(ARGS)

clean:
	rm -rf .ws .venv .venv-numpy1 demo_output
