"""A temporary copy of the course, and submissions built from a solution's answers."""

import shutil
from pathlib import Path

import nbformat

from autograde.cells import with_answers
from course_dev.paths import ROOT, solution_path, student_path

# what a temporary course needs besides the lessons (course_dev itself is installed): nbgrader's configuration
COURSE_FILES = ("nbgrader_config.py",)
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")


def copy_course(dest, lessons, extra=()):
    """A temporary nbgrader course in `dest`: the configuration, the tools, anything in `extra`
    (paths relative to the course root) and the given lessons' solutions."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in (*COURSE_FILES, *extra):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=IGNORE)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / name)
    for lesson in lessons:
        shutil.copytree(ROOT / "solutions" / lesson, dest / "solutions" / lesson, ignore=IGNORE)
    return dest


def submission(lesson, answered, released=None, solution=None):
    """The released notebook with the answer cells whose grade ids are in `answered` (code or free
    text) filled in from the solution; every other answer cell stays as released."""
    return with_answers(
        nbformat.read(str(released or student_path(lesson)), as_version=4),
        nbformat.read(str(solution or solution_path(lesson)), as_version=4),
        set(answered),
    )
