"""The course being graded: its root, its folders and settings, read from nbgrader_config.py, here only.

Code lives in `autograde/`; everything grading produces (the gradebook, submitted/, autograded/,
feedback/, runs/, snapshots/) lives in the state folder named by nbgrader_config.py (`grading/` by
default), which git ignores.
"""

import copy
import hashlib
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
HOME = PACKAGE.parent  # the course this grader belongs to (this repository)
CONFIG = "nbgrader_config.py"
COURSE_ID = "default_course"  # nbgrader's own, when the configuration names none


def default_root():
    """The course the command is typed in (a folder with nbgrader_config.py), else the one this package belongs to."""
    here = Path.cwd()
    return here if (here / CONFIG).is_file() else HOME


def load_config(root):
    """nbgrader's configuration of the course at `root` (its nbgrader_config.py), as nbgrader's apps read it."""
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(CONFIG, path=str(root)).load_config()


class Course:
    """Paths and settings of the nbgrader course rooted at `root` (default: `default_root()`)."""

    def __init__(self, root=None, db_url=None):
        self.root = Path(root or default_root()).resolve()
        self.config = load_config(self.root)
        cd = self.config.CourseDirectory

        def folder(key, default):
            return (self.root / cd.get(key, default)).resolve()

        self.source = folder("source_directory", "source")
        self.release = folder("release_directory", "release")
        self.submitted = folder("submitted_directory", "submitted")
        self.autograded = folder("autograded_directory", "autograded")
        self.feedback = folder("feedback_directory", "feedback")
        # the state folder: where submitted/ lives (grading/ in this course)
        self.state = self.submitted.parent
        self.course_id = cd.get("course_id", COURSE_ID)
        self.db_url = db_url or cd.get("db_url", f"sqlite:///{self.root / 'gradebook.db'}")
        if db_url:
            self.config.CourseDirectory.db_url = db_url

    def with_db(self, db_url):
        """The same course with its gradebook at `db_url` (a worker's private copy)."""
        other = copy.copy(self)
        other.db_url = db_url
        return other

    def runs(self, lesson):
        return self.state / "runs" / lesson

    def notebooks(self, lesson):
        """Names (without .ipynb) of the lesson's released notebooks."""
        return sorted(p.stem for p in (self.release / lesson).glob("*.ipynb"))

    def lessons(self):
        """Every released lesson (a folder of the release with a notebook)."""
        if not self.release.is_dir():
            return []
        return sorted(d.name for d in self.release.iterdir() if d.is_dir() and any(d.glob("*.ipynb")))

    def grade_ids(self, lesson):
        """The grade ids of the lesson's answer and test cells, from its released notebooks."""
        import json

        from .cells import grade_id, is_grade, is_solution

        ids = set()
        for path in (self.release / lesson).glob("*.ipynb"):
            for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
                if is_grade(cell) or is_solution(cell):
                    ids.add(grade_id(cell))
        return ids - {None}

    def fingerprint(self, lesson, settings=""):
        """Changes when the lesson's source, the configuration, the grader's code or its settings change."""
        h = hashlib.sha256(settings.encode())
        paths = sorted((self.source / lesson).glob("*.ipynb")) + [self.root / CONFIG]
        paths += sorted(PACKAGE.glob("*.py"))
        for path in paths:
            h.update(path.name.encode())
            h.update(path.read_bytes())
        return h.hexdigest()


def nbgrader_env():
    """nbgrader starts kernels (and alembic) with the first `python` on PATH: make it this interpreter."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.setdefault("PYTHONHASHSEED", "0")
    return env
