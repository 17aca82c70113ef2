"""The grading command, kept at its old path: python autograde/grade.py LESSON SUBMISSIONS [options].

Same as `python -m autograde ...`; see autograde/README.md.
"""

import sys

from autograde.cli import main  # the package is installed with the course (pyproject.toml)

if __name__ == "__main__":
    main()
    sys.exit(0)
