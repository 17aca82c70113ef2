"""Each submission made gradable, one student at a time (the batch's `prepare` phase, and the canary's): the
student's notebooks repaired against the release (repairs.REPAIRS) and scanned (tamper.RULES) into the folder
nbgrader grades, the files the student attached kept beside them (never next to the kernel), and all of it
hashed into the key that says whether the submission changed since it was last graded. Whatever the files
hold, this returns: a file no repair foresaw fails that student, never the batch."""

import hashlib
import shutil
from dataclasses import dataclass, field

import nbformat

from . import tamper
from .cells import grade_id, graded_cells, is_manual
from .messages import Status, StudentRecord
from .repairs import Broken, repair


@dataclass
class Release:
    """The lesson as every submission is prepared against it."""

    lesson: str
    notebooks: list  # the released notebooks' names (without .ipynb)
    released: dict  # {name: the released notebook}
    protected: set  # names the lesson's tests use, hidden ones included: a notebook that rebinds one is flagged

    @classmethod
    def of(cls, course, lesson):
        notebooks = course.notebooks(lesson)
        released = {nb: nbformat.read(str(course.release / lesson / f"{nb}.ipynb"), as_version=4) for nb in notebooks}
        protected = set()
        for path in sorted((course.source / lesson).glob("*.ipynb")):
            protected |= tamper.test_names(nbformat.read(str(path), as_version=4))
        return cls(lesson, notebooks, released, protected)

    def columns(self):
        """[(grade cell, points)] of the released notebooks, in order: the scores grades.csv has."""
        return graded_cells(self.released[nb] for nb in self.notebooks)

    def manual(self):
        """The grade ids of the answers graded by hand."""
        return {grade_id(c) for nb in self.released.values() for c in nb.cells if is_manual(c)}


@dataclass
class Prepared:
    """What preparing one student's files gave: notes (what the repairs changed), flags, and the first failure."""

    notes: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    failure: str | None = None

    def fail(self, reason):
        self.failure = self.failure or reason


def prepare(src, dest, release, key):
    """Repair and scan the notebooks in `src` (submitted/<student>/<lesson>/) into `dest`, attached files beside
    them; `key` (a hashlib object) takes in every byte that was submitted."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    done = Prepared()
    submitted = sorted(p for p in src.glob("*.ipynb") if not p.name.startswith("."))
    for nb_name in release.notebooks:
        path = _notebook(src, nb_name, submitted, release.notebooks, done)
        if path is not None:
            _repair(path, dest / f"{nb_name}.ipynb", release.released[nb_name], release.protected, key, done)
    for extra in src.iterdir():  # files the student attached: kept with the submission, never run
        if extra.is_file() and extra.suffix != ".ipynb":
            shutil.copy(extra, dest / extra.name)
            if extra.name != "timestamp.txt":
                key.update(extra.read_bytes())
    return done


def _notebook(src, nb_name, submitted, notebooks, done):
    """The submitted file for the released notebook `nb_name`: its own name, or the only other notebook of a
    one-notebook lesson (renamed), or None (the failure says which is missing)."""
    path = src / f"{nb_name}.ipynb"
    if path.exists():
        return path
    others = [p for p in submitted if p.stem not in notebooks]
    if len(notebooks) == 1 and len(others) == 1:
        done.notes.append(f"notebook renamed to {others[0].name}: graded as {nb_name}.ipynb")
        return others[0]
    done.fail("no notebook submitted" if not submitted else f"notebook {nb_name}.ipynb missing")
    return None


def _repair(path, dest, released, protected, key, done):
    raw = path.read_bytes()
    key.update(raw)
    try:
        nb, repaired = repair(raw, released)
        done.flags += tamper.scan(nb, protected)
        nbformat.write(nb, str(dest))
    except Broken as err:
        return done.fail(str(err))
    except Exception as err:  # noqa: BLE001 - the safety net: this file fails, with a reason
        return done.fail(f"could not be read ({type(err).__name__})")
    done.notes += repaired


def prepare_student(course, release, out, student, fingerprint, force=False, scored=frozenset()):
    """(record, grade it?) for one student: a messages.StudentRecord, what results/<student>.json will hold. `out` is
    the lesson's runs/ folder (its sanitized/ and results/), `fingerprint` that of the lesson, the configuration and
    the grader, `scored` the students the gradebook has scores for. The student is not graded again when preparing
    failed, or when the submission and the fingerprint are unchanged since it was graded (its last record is kept
    then), unless `force`."""
    key = hashlib.sha256(fingerprint.encode())
    lesson = release.lesson
    done = prepare(course.submitted / student / lesson, out / "sanitized" / student / lesson, release, key)
    record = StudentRecord(student, key=key.hexdigest(), notes=done.notes, flags=done.flags)
    if done.failure:
        record.status, record.reason = Status.FAILED, done.failure
        return record, False
    old = StudentRecord.read(out / "results" / f"{student}.json")
    if old is None or old.key != record.key or force:
        return record, True
    kept_out = old.status is Status.GRADED and old.scores is not None  # a made-up id: scores in its record
    if old.failed or kept_out or (_in_place(course, release, student) and student in scored):
        return old, False
    return record, True


def _in_place(course, release, student):
    """True if the student's graded notebooks are in place (a run stopped half-way may lack them)."""
    folder = course.autograded / student / release.lesson
    return all((folder / f"{nb}.ipynb").is_file() for nb in release.notebooks)
