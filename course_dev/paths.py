"""Where things are: the course root, the lessons and their per-lesson facts."""

import tomllib
from functools import cache
from pathlib import Path

from autograde.course import HOME as ROOT  # the course root, decided in one place

LESSON_FILE = "lesson.toml"  # per-lesson facts beside the solution notebook (never released to students)
DEFAULTS = {"budget_s": 15.0, "capstone": False, "extension": False}


def lessons(root=ROOT):
    """Every lesson, in course order: a folder solutions/<lesson>/ with its text source <lesson>.py (a lesson
    whose notebook is not built yet is still found, so its tests fail rather than leave it out)."""
    return sorted(p.name for p in (Path(root) / "solutions").iterdir() if (p / f"{p.name}.py").is_file())


def solution_path(lesson, root=ROOT):
    return Path(root) / "solutions" / lesson / f"{lesson}.ipynb"


def source_path(lesson, root=ROOT):
    """The lesson's text source (jupytext percent format) from which the solution notebook is built."""
    return Path(root) / "solutions" / lesson / f"{lesson}.py"


def student_path(lesson, root=ROOT):
    return Path(root) / "notebooks" / lesson / f"{lesson}.ipynb"


@cache
def lesson_meta(lesson, root=ROOT):
    """The lesson's facts: title, budget_s (seconds to run on 2 cores), capstone; defaults where absent."""
    path = Path(root) / "solutions" / lesson / LESSON_FILE
    facts = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {**DEFAULTS, "title": lesson, **facts}
