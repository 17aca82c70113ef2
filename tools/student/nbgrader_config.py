"""nbgrader settings for a student's Validate: the Validate button and `make validate NB=…`, in the student bundle
(which ships this file as its nbgrader_config.py), on the class hub (each user's nbgrader_config.py loads it) and
in the course (whose nbgrader_config.py loads it first)."""

import importlib.util
import os
import sys

c = get_config()  # noqa: F821  (provided by traitlets)
HERE = os.path.dirname(os.path.abspath(__file__))

# Seconds per cell. nbgrader's default (30 s) is too short for a busy or slow laptop: the first cell imports
# PyTorch, and some experiment cells train for seconds on a quiet machine. A loop that never ends still stops.
c.Validator.Execute.timeout = 300  # during Validate only (grading sets its own Execute.timeout)
# The checks' outputs are in once the last cell has run: the kernel is then killed, not asked to exit (nbclient's
# polite shutdown waits for it, about 0.8 s of every Validate, and of every notebook nbgrader's autograde runs).
c.Execute.shutdown_kernel = "immediate"
# A warning printed to stderr must not fail a correct answer (nbgrader scores a cell with stderr 0).
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"Warning"
# A cell that builds a widget could wait for a reply that had arrived until its timeout (jupyter/nbclient#312):
# Validate, in this process or the Jupyter server's, polls in short slices instead.
__import__("attention_course.nbclient_fix").nbclient_fix.apply()
# Each failing check is reported as its exercise's title and its message first, then the check's calls only (not
# the cell's helper functions): nbgrader's Validate button and `nbgrader validate` use attention_course.validation.
__import__("attention_course.validation").validation.install()


def prune_module():
    """The course's cell pruning (autograde/prune.py): installed with the course, or the bundle's copy."""
    try:
        return importlib.import_module("autograde.prune")
    except ImportError:
        path = os.path.join(HERE, ".validate", "prune.py")
        if not os.path.isfile(path):
            return None
        spec = importlib.util.spec_from_file_location("course_validate_prune", path)
        module = sys.modules.setdefault("course_validate_prune", importlib.util.module_from_spec(spec))
        spec.loader.exec_module(module)
        return module


# Validate runs only the cells the checks depend on, as grading does (autograde/README.md, "What is executed for a
# grade"), against the release's cells: notebooks/ beside this file in the bundle, the course's notebooks/ otherwise.
# AUTOGRADE_FULL=1 runs every cell.
RELEASE_CELLS = [os.path.join(HERE, *up, "notebooks", ".release_cells.json") for up in ((), ("..", ".."))]
found = [path for path in RELEASE_CELLS if os.path.isfile(path)]
prune = prune_module()
if prune and found:
    c.Execute.on_notebook_start = prune.validate_hook(os.path.abspath(found[0]))
