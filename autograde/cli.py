"""The grading command: collect -> repair -> tamper scan -> sandboxed run (parallel workers) ->
gradebook (one transaction per student) -> feedback -> report.

    python -m autograde LESSON SUBMISSIONS [options]      (or python autograde/grade.py ..., make grade)

From Python, `main([...])` returns the rows of grades.csv, or raises GradingError; only `console` (what the
commands run) turns a GradingError into its message on stderr and exit status 1.
"""

import argparse
import os
import sys

from .batch import run
from .course import default_root
from .errors import GradingError
from .sandbox import Limits, parse_size

DEFAULT = Limits()  # the sandbox's limits when no option says otherwise: their one home is sandbox.Limits
LIMIT_OPTIONS = [  # (option, Limits field, help; the default is added from DEFAULT)
    ("--memory", "memory", "memory of a notebook, all its processes"),
    ("--cpu", "cpu", "CPU seconds per kernel process"),
    ("--processes", "processes", "processes/threads a notebook may add"),
    ("--disk", "disk", "what a notebook may keep in its home folder"),
    ("--file-size", "file_size", "largest file a notebook may write"),
    ("--output", "output", "output of one notebook, all cells"),
]
COUNTS = ("cpu", "processes")  # the others are sizes: 2G, 512M, 2 GiB


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
    shown = DEFAULT.describe()
    for option, name, text in LIMIT_OPTIONS:
        kind = int if name in COUNTS else str
        parser.add_argument(option, type=kind, default=None, help=f"{text} (default {shown[name.replace('_', ' ')]})")
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
        "--full",
        action="store_true",
        help="execute every cell; by default only the cells the grade depends on run (autograde/prune.py)",
    )
    parser.add_argument(
        "--root",
        default=str(default_root()),
        help="course root (default: the current folder if it is a course, else this repository)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    args.limits = limits_from(args)
    return args


def limits_from(args):
    """sandbox.Limits from the options given; the others keep the dataclass's defaults."""
    given = {name: getattr(args, name) for _, name, _ in LIMIT_OPTIONS if getattr(args, name) is not None}
    return Limits(**{name: value if name in COUNTS else parse_size(value) for name, value in given.items()})


def main(argv=None):
    """Grade a lesson; returns the rows of grades.csv as dictionaries, or raises GradingError."""
    return run(parse_args(sys.argv[1:] if argv is None else argv))


def console(entry, argv=None):
    """Run a command's `entry(argv)`: its exit status, 1 with the message on stderr if it raised GradingError."""
    try:
        entry(argv)
    except GradingError as err:
        print(err, file=sys.stderr)
        return 1
    return 0
