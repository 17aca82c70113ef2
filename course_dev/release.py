"""Regenerate the student notebooks: solutions/<lesson>/ -> notebooks/<lesson>/ with nbgrader generate_assignment.

    python -m course_dev.release [--root COURSE_ROOT] [LESSON ...]     (all lessons by default)

First builds each solution notebook from its text source (solutions/<lesson>/<lesson>.py, see
course_dev.lesson_text), and refuses, naming the command that keeps them, when a solution notebook holds edits
made in Jupyter that its text source does not. Runs nbgrader in one process for all lessons, records them
in the gradebook, and fails loudly if nbgrader reports an error (its command line exits 0 on some failures).
"""

import argparse
import contextlib
import sys
from pathlib import Path

from nbgrader.apps import NbGraderAPI

from autograde.course import load_config
from course_dev import lesson_text
from course_dev.env import use_this_python
from course_dev.paths import ROOT, lessons, source_path


class ReleaseError(Exception):
    """The release cannot be made; the message says why and what to run."""


def release(root=ROOT, names=None):
    root = Path(root).resolve()
    use_this_python()  # nbgrader calls `alembic` and starts kernels with the first `python` on PATH
    names = names or lessons(root)
    for name in names:
        if source_path(name, root).is_file():
            try:
                lesson_text.build(name, root)
            except lesson_text.EditedNotebook as problem:
                raise ReleaseError(str(problem)) from None
    config = load_config(root)
    (root / "grading").mkdir(exist_ok=True)  # the gradebook's folder (nbgrader_config.py)
    with contextlib.chdir(root):
        api = NbGraderAPI(config=config)
        for name in names:
            result = api.generate_assignment(name, force=True)
            if not result["success"]:
                details = result.get("log", "") + (result.get("error") or "")
                raise ReleaseError(f"nbgrader generate_assignment {name} failed:\n{details}")
            print(f"released {name} -> notebooks/{name}/")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=ROOT, help="course root (default: this repository)")
    parser.add_argument("lessons", nargs="*")
    args = parser.parse_args()
    try:
        release(args.root, args.lessons)
    except ReleaseError as problem:
        sys.exit(f"make release: {problem}")
