# Attention, from the dot product up.
#   make lab   set up .venv on first use, then open JupyterLab on the student notebooks
#   make test  the same set-up, then the whole test suite
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# nbgrader and nbclient start kernels with the first `python` on PATH: make it the venv's.
export PATH := $(BIN):$(PATH)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test release student-bundle grade bench venv clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks $(ROOT_FLAG)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Regenerate notebooks/ from solutions/ with nbgrader generate_assignment.
release: $(STAMP)
	$(BIN)/python tools/release.py

student-bundle: $(STAMP)
	$(BIN)/python tools/student_bundle.py dist/student-bundle

# Grade a class: make grade LESSON=01_why_attention SUBMISSIONS=<LMS download folder>|exchange [GRADE_ARGS="--workers 4"]
grade: $(STAMP)
	$(BIN)/python -m autograde $(LESSON) $(SUBMISSIONS) $(GRADE_ARGS)

# Notebook run times, grading throughput, widget latency, peak memory -> benchmarks/results.json
# (e.g. make bench BENCH_ARGS="--only notebooks,memory --repeat 1"; see README "Performance").
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py $(BENCH_ARGS)

clean:
	rm -rf dist artifacts .pytest_cache
