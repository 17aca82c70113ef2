"""nbgrader settings for a student's Validate: the Validate button and `make validate NB=…`, in the student bundle
(which ships this file as its nbgrader_config.py) and in the course (whose nbgrader_config.py loads it first)."""

c = get_config()  # noqa: F821  (provided by traitlets)

# Seconds per cell. nbgrader's default (30 s) is too short for a busy or slow laptop: the first cell imports
# PyTorch, and some experiment cells train for seconds on a quiet machine. A loop that never ends still stops.
c.Validator.Execute.timeout = 300  # during Validate only (grading sets its own Execute.timeout)
# A warning printed to stderr must not fail a correct answer (nbgrader scores a cell with stderr 0).
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"Warning"
# A cell that builds a widget could wait for a reply that had arrived until its timeout (jupyter/nbclient#312):
# Validate, in this process or the Jupyter server's, polls in short slices instead.
__import__("attention_course.nbclient_fix").nbclient_fix.apply()
