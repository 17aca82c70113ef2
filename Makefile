# Attention, from the dot product up.
#   make lab   set up .venv on first use, then open JupyterLab on the student notebooks (notebooks/)
#   make test  the same set-up, then the test suite CI runs (make test-fast: the everyday tier; make test-full: all cases)
#   make validate NB=<notebook> / make run NB=<notebook>   a lesson's checks, or the whole notebook, headless
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# JupyterLab's defaults for every server this .venv runs (make lab, make formgrader, the hub's users): no pop-up asking
# to fetch Jupyter's news (the setting fetchNews; --LabApp.news_url=None alone does not stop the question).
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
# "(view feedback)" in nbgrader's Assignment List opens the feedback page (tools/student/labextension, a JupyterLab
# extension of one plain JavaScript file), not only its folder.
LAB_FEEDBACK := $(VENV)/share/jupyter/labextensions/attention-course-feedback
LAB_FILES := $(LAB_OVERRIDES) $(LAB_FEEDBACK)/static/remoteEntry.js
# nbgrader and nbclient start kernels with the first `python` on PATH: make it the venv's.
export PATH := $(BIN):$(PATH)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test test-full test-fast release student-bundle grade bench hub hub-proxy browser-deps venv clean

venv: $(STAMP) $(LAB_FILES)

# uv installs the pins in seconds where pip takes minutes; it is told where pip finds its local wheels
# (this machine's CPU build of torch), and pip does the work if uv cannot be had.
PIP_LINKS = $(sort $(PIP_FIND_LINKS) $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
UV := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python $(addprefix --find-links ,$(PIP_LINKS))
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check

# jsonschema (under nbformat, nbgrader and JupyterLab) imports rfc3987-syntax whenever it is installed, and that builds
# a parser from its grammar at every import: about 1 s of CPU in every nbgrader, nbconvert, Validate or grading
# process. Only jsonschema's optional check of the "iri" format uses it (without it that check accepts any string),
# and nothing the course runs checks IRIs: it is uninstalled.
NOT_WANTED := rfc3987-syntax lark
$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	($(PIP) uv==0.13.9 && $(UV) -r requirements.txt && $(UV) --no-deps -e .) || ($(PIP) -r requirements.txt && $(PIP) --no-deps -e .)
	$(BIN)/python -m pip uninstall --yes --quiet --disable-pip-version-check $(NOT_WANTED)
	@touch $@

$(LAB_OVERRIDES): tools/student/labsettings/overrides.json | $(STAMP)
	mkdir -p $(dir $@) && cp $< $@

$(LAB_FEEDBACK)/static/remoteEntry.js: tools/student/labextension/attention-course-feedback/static/remoteEntry.js \
		tools/student/labextension/attention-course-feedback/package.json | $(STAMP)
	mkdir -p $(dir $@) && cp tools/student/labextension/attention-course-feedback/package.json $(LAB_FEEDBACK)/package.json
	cp $< $@

# A notebook saved as HTML (File > Save and Export Notebook As > HTML) carries its maths as MathML: it renders offline.
LAB_FLAGS := --HTMLExporter.preprocessors=attention_course.offline_maths.MathML $(ROOT_FLAG)

# Students: JupyterLab on the lessons (notebooks/), nothing else of the repository in view; the Assignment List and
# Validate but not the instructor's nbgrader tools (tools/student/labconfig), no news pop-up.
lab: $(STAMP) $(LAB_FILES)
	JUPYTER_CONFIG_PATH=$(CURDIR)/tools/student $(BIN)/jupyter lab --ServerApp.root_dir=notebooks --LabApp.news_url=None $(LAB_FLAGS)

# Instructors: JupyterLab on the whole course, opening nbgrader's formgrader (it needs the course root in view).
.PHONY: formgrader lms
formgrader: $(STAMP) $(LAB_FILES)
	$(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/formgrader $(LAB_FLAGS)

# The suite CI runs (6–8 minutes on 2 cores, up to 17 on a slow one; the goal is 10): everything but the repeated cases
# of the slowest proofs, which `make test-full` adds (every lesson on other CPU code paths and through `make grade`,
# every lesson read in JupyterLab, the rest of lesson 01's pruned-vs-full proof, the hub on PostgreSQL: tests/harness.py
# MAKE_TEST_KEEPS).
test: $(STAMP) $(LAB_FILES) browser-deps
	$(BIN)/python -m pytest -m "not full" $(PYTEST_ARGS)

test-full: $(STAMP) $(LAB_FILES) browser-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The everyday tier (2–3 minutes): everything but the tests marked slow (README.md, "What make test checks",
# lists them).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

# Students working from this folder, as in the student bundle: run a notebook headless and save its outputs into it,
# or run its checks like the Validate button (make run NB=notebooks/02_dot_product/02_dot_product.ipynb).
.PHONY: run validate
run: $(STAMP)
	$(BIN)/python -m attention_course.run $(NB)

validate: $(STAMP)
	$(BIN)/nbgrader validate $(NB)

# Build each solution notebook from its text source, then regenerate notebooks/ with nbgrader generate_assignment.
release: $(STAMP)
	$(BIN)/python -m course_dev.release --root $(CURDIR)

student-bundle: $(STAMP)
	$(BIN)/python -m course_dev.bundle dist/student-bundle

# Grade a class: make grade LESSON=01_why_attention SUBMISSIONS=<LMS download folder>|exchange [GRADE_ARGS="--workers 4"]
grade: $(STAMP)
	$(BIN)/python -m autograde $(LESSON) $(SUBMISSIONS) --root $(CURDIR) $(GRADE_ARGS)

# Final grades for an LMS: make lms LMS=canvas|moodle ROSTER=roster.csv [OUT=grading/canvas.csv]
# (nbgrader export with the course's export plugins, autograde/lms.py)
LMS_PLUGIN = $(if $(filter canvas,$(LMS)),CanvasExportPlugin,$(if $(filter moodle,$(LMS)),MoodleExportPlugin))
lms: $(STAMP)
	@test -n "$(LMS_PLUGIN)" || { echo "make lms: LMS=canvas or LMS=moodle (got '$(LMS)')" >&2; exit 2; }
	$(BIN)/nbgrader export --exporter=autograde.lms.$(LMS_PLUGIN) \
		--LmsExportPlugin.roster=$(ROSTER) --to=$(or $(OUT),grading/$(LMS).csv)

# Notebook run times, grading throughput, widget latency, peak memory -> benchmarks/results.json
# (e.g. make bench BENCH_ARGS="--only notebooks,memory --repeat 1"; see README "Performance").
bench: $(STAMP)
	$(BIN)/python -m course_dev.bench $(BENCH_ARGS)

# A JupyterHub for the class on this machine (hub/class.toml; see README "A class on JupyterHub").
hub: $(STAMP) $(LAB_FILES) hub-proxy
	$(BIN)/python hub/start.py

# JupyterHub's proxy (configurable-http-proxy, pinned in hub/package.json) from npm, into hub/node_modules.
hub-proxy: hub/node_modules/.installed

hub/node_modules/.installed: hub/package.json hub/package-lock.json
	cd hub && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# axe-core, the accessibility engine the browser tests inject into JupyterLab (pinned in tests/browser_deps/), from npm.
browser-deps: tests/browser_deps/node_modules/.installed

tests/browser_deps/node_modules/.installed: tests/browser_deps/package.json tests/browser_deps/package-lock.json
	cd tests/browser_deps && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

clean:
	rm -rf dist artifacts .pytest_cache
