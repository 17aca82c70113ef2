"""Regenerate the student notebooks: solutions/<lesson>/ -> notebooks/<lesson>/ with nbgrader generate_assignment.

    python -m course_dev.release [--root COURSE_ROOT] [LESSON ...]     (all lessons by default)
    python -m course_dev.release --fingerprints        (only notebooks/.release_cells.json, e.g. after a merge)

First builds each solution notebook from its text source (solutions/<lesson>/<lesson>.py, see
course_dev.lesson_text), and refuses, naming the command that keeps them, when a solution notebook holds edits
made in Jupyter that its text source does not. Runs nbgrader in one process for all lessons, records them
in the gradebook, and fails loudly if nbgrader reports an error (its command line exits 0 on some failures).
Last, writes notebooks/.release_cells.json: the fingerprints of every released code cell, which nbgrader's
Validate compares a student's cells with (autograde/prune.py: a cell the student did not write may be left out).
"""

import argparse
import contextlib
import json
import sys
from pathlib import Path

from nbgrader.apps import NbGraderAPI

from autograde import gradebook, prune
from autograde.course import load_config
from course_dev import lesson_text
from course_dev.env import use_this_python
from course_dev.paths import ROOT, lessons, source_path


class ReleaseError(Exception):
    """The release cannot be made; the message says why and what to run."""


def release(root=ROOT, names=None):
    root = Path(root).resolve()
    use_this_python()  # nbgrader starts kernels with the first `python` on PATH
    gradebook.schema_version_in_process()
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
    write_fingerprints(root)


FINGERPRINTS = Path("notebooks") / ".release_cells.json"


def fingerprints(root=ROOT):
    """{lesson: sorted fingerprints of its released code cells} for every released lesson."""
    out = {}
    for path in sorted((Path(root) / "notebooks").glob("*/*.ipynb")):
        if path.parent.name.startswith("."):
            continue
        cells = json.loads(path.read_text(encoding="utf-8"))
        out[path.parent.name] = sorted(prune.release_fingerprints(cells))
    return out


def write_fingerprints(root=ROOT):
    text = json.dumps(fingerprints(root), indent=1, sort_keys=True) + "\n"
    (Path(root) / FINGERPRINTS).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=ROOT, help="course root (default: this repository)")
    parser.add_argument("lessons", nargs="*")
    parser.add_argument("--fingerprints", action="store_true", help="only write notebooks/.release_cells.json")
    args = parser.parse_args()
    if args.fingerprints:
        sys.exit(write_fingerprints(args.root))
    try:
        release(args.root, args.lessons)
    except ReleaseError as problem:
        sys.exit(f"make release: {problem}")
