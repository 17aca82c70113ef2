"""The grading command: collect -> repair -> tamper scan -> sandboxed run (parallel workers) ->
gradebook (one transaction per student) -> feedback -> report.

    python -m autograde LESSON SUBMISSIONS [options]      (or python autograde/grade.py ..., make grade)
"""

import argparse
import os
import sys
from pathlib import Path

from .batch import isolation_of, limits_from, run  # noqa: F401  (the steps live in batch.py)
from .course import PACKAGE


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m autograde", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("lesson")
    parser.add_argument("submissions", help="folder of LMS downloads, or the word `exchange`")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="notebooks graded at once (default: number of cores)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="wall-clock cap per notebook in seconds (default 600); the per-cell limit is "
        "Execute.timeout in nbgrader_config.py",
    )
    parser.add_argument("--cell-timeout", type=int, default=None, help="override Execute.timeout (seconds per cell)")
    parser.add_argument("--memory", default="2G", help="memory of a notebook, all its processes (default 2G)")
    parser.add_argument("--cpu", type=int, default=600, help="CPU seconds per kernel process (default 600)")
    parser.add_argument("--processes", type=int, default=64, help="processes/threads a notebook may add (default 64)")
    parser.add_argument("--disk", default="1G", help="what a notebook may keep in its home folder (default 1G)")
    parser.add_argument("--file-size", default="100M", help="largest file a notebook may write (default 100M)")
    parser.add_argument("--output", default="10M", help="output of one notebook, all cells (default 10M)")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run student code without the sandbox (only where bubblewrap cannot run)",
    )
    parser.add_argument(
        "--roster", help="the course roster: student_id,name,... (autograde/roster-example.csv); maps LMS names to ids"
    )
    parser.add_argument("--db-url", help="gradebook URL (default: db_url of nbgrader_config.py)")
    parser.add_argument("--out", help="report folder (default STATE/runs/LESSON)")
    parser.add_argument("--force", action="store_true", help="grade every submission again, even unchanged ones")
    parser.add_argument(
        "--root",
        default=str(default_root()),
        help="course root (default: the current folder if it is a course, else this repository)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser.parse_args(argv)


def default_root():
    """The course the command is typed in (a folder with nbgrader_config.py), else the one this package belongs to."""
    here = Path.cwd()
    return here if (here / "nbgrader_config.py").is_file() else PACKAGE.parent


def main(argv=None):
    """Grade a lesson; returns the rows of grades.csv as dictionaries."""
    return run(parse_args(sys.argv[1:] if argv is None else argv))
