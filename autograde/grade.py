"""The grading command, kept at its old path: python autograde/grade.py LESSON SUBMISSIONS [options].

Same as `python -m autograde ...`; see autograde/README.md.
"""
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograde.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
    sys.exit(0)
