"""Each submission made gradable, one student at a time (the batch's `prepare` phase, and the canary's): the
student's notebooks repaired against the release (repairs.REPAIRS) and scanned (tamper.RULES) into the folder
nbgrader grades, the files the student attached kept beside them (never next to the kernel), and all of it
hashed into the key that says whether the submission changed since it was last graded. Whatever the files
hold, this returns: a file no repair foresaw fails that student, never the batch."""

import hashlib
import json
import shutil
from dataclasses import dataclass, field

import nbformat

from . import tamper
from .cells import grade_id, graded_cells, is_manual
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


def prepare_student(batch, student):
    """(record, grade it?) for one student of the batch. The record is what results/<student>.json will hold;
    the student is not graded again when preparing failed, or when the submission, the lesson, the configuration
    and the grader are all unchanged since it was graded (its last record is kept then)."""
    course, lesson = batch.course, batch.lesson
    key = hashlib.sha256(batch.fingerprint.encode())
    done = prepare(course.submitted / student / lesson, batch.out / "sanitized" / student / lesson, batch.release, key)
    record = {"student": student, "key": key.hexdigest(), "notes": done.notes, "flags": done.flags}
    if done.failure:
        return dict(record, status="failed", reason=done.failure, seconds=0.0), False
    previous = batch.out / "results" / f"{student}.json"
    old = json.loads(previous.read_text()) if previous.exists() else None
    unchanged = old and old.get("key") == record["key"] and not batch.settings.force
    kept_out = old and old.get("status") == "graded" and "scores" in old  # a made-up id: scores in its record
    if unchanged and (old["status"] == "failed" or kept_out or _graded(batch, student)):
        return old, False
    return record, True


def _graded(batch, student):
    """True if the student's graded notebooks and scores are in place (a run stopped half-way may lack them)."""
    folder = batch.course.autograded / student / batch.lesson
    return all((folder / f"{nb}.ipynb").is_file() for nb in batch.release.notebooks) and student in batch.scores_before
