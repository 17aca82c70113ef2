"""The grading command, kept at its old path: python autograde/grade.py LESSON SUBMISSIONS [options].

Same as `python -m autograde ...`; see autograde/README.md.
"""

import sys

from autograde.cli import console, main  # the package is installed with the course (pyproject.toml)

if __name__ == "__main__":
    sys.exit(console(main))
