"""What the grading command and its workers say to each other, one JSON line each way (pool.py writes a job to a
worker's stdin, worker.py answers with a `Result` on its stdout). Each message is a dataclass with one way to
write it (`line`) and one way to read it (`read_job`, `Result.read`): a field that is misspelt or missing fails
where the message is read, with the field's name, and never becomes a silent default in another process.
The batch keeps one `StudentRecord` per student (results/<student>.json); report.py turns it into grades.csv rows,
whose `status` is a `Status` and whose why is the separate `reason`: no status is ever parsed back from text."""

import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    """The `status` column of grades.csv; why, when there is a why, is the `reason` column."""

    GRADED = "graded"
    NEEDS_MANUAL = "needs manual grading"
    FAILED = "failed to run"
    SUPERSEDED = "superseded"
    EXTRA = "extra file"
    NOT_GRADED = "not graded"
    NOT_THIS_LESSON = "not this lesson"
    NOT_SUBMITTED = "not submitted"


class Message:
    def line(self):
        """The message as one line of JSON (its kind included, for the reader)."""
        return json.dumps({"kind": self.KIND, **asdict(self)}, default=str) + "\n"

    @classmethod
    def from_dict(cls, data):
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - {"kind"})
        if unknown:
            raise ValueError(f"{cls.__name__} has no field {', '.join(unknown)}")
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class GradeJob(Message):
    """Grade one student's repaired notebooks: nbgrader's Autograde in the sandbox, then the feedback page,
    against a private gradebook (a copy of `template`), in the worker's own folder `staging`."""

    KIND = "grade"
    student: str
    lesson: str
    root: str  # the course
    notebooks: list  # the lesson's notebook names
    sanitized: str  # nbgrader's submitted folder for this run: <sanitized>/<student>/<lesson>/*.ipynb
    staging: str  # the worker's folder for this student (autograded/, feedback/, gradebook.db)
    log: str  # nbgrader's log for this student
    template: str  # the lesson's gradebook entries (SQLite)
    release: str  # the released lesson's folder: its data files go into the kernel's home
    limits: dict  # sandbox.Limits as a dict
    sandbox: str  # 'bwrap' or 'none'
    imports: list  # the lesson's imports the tests use (guard.lesson_imports)
    cell_timeout: int | None = None  # overrides Execute.timeout
    manual: dict | None = None  # hand-given points and comments already in the gradebook (gradebook.read_manual)
    canary: bool = False  # the lesson's own answers: scores only, no feedback page
    full: bool = False  # execute every cell (--full), not only those the grade depends on (prune.py)

    @property
    def autograded(self):
        return Path(self.staging) / "autograded"

    @property
    def feedback(self):
        return Path(self.staging) / "feedback"

    @property
    def db(self):
        return Path(self.staging) / "gradebook.db"


@dataclass
class FeedbackJob(Message):
    """Make a student's feedback page again from the real gradebook (after hand grading)."""

    KIND = "feedback"
    student: str
    lesson: str
    root: str
    db_url: str
    feedback: str  # the folder the page is made in


JOBS = {job.KIND: job for job in (GradeJob, FeedbackJob)}


def read_job(line):
    """A GradeJob or a FeedbackJob from its line."""
    data = json.loads(line)
    if data.get("kind") not in JOBS:
        raise ValueError(f"unknown job kind {data.get('kind')!r}")
    return JOBS[data["kind"]].from_dict(data)


@dataclass
class Result(Message):
    """What a worker answers for one job (or what the pool says for a worker that died or ran out of time)."""

    KIND = "result"
    student: str
    ok: bool = False
    reason: str = ""  # why not ok: the status reason in grades.csv
    limit: str = ""  # the limit the notebook ran into ('memory limit 2 GiB'), or ''
    flags: list = field(default_factory=list)  # what the integrity guard saw
    sandbox: dict = field(default_factory=dict)  # the sandbox and limits the kernel ran in
    results: dict | None = None  # the private gradebook's scores (gradebook.read_results)
    autograded: str = ""  # the folder of the graded notebooks
    feedback: list = field(default_factory=list)  # the feedback pages made
    feedback_error: str = ""
    feedback_print: str | None = None  # of the scores the pages show (gradebook.read_scores)
    seconds: float = 0.0
    phases: dict = field(default_factory=dict)  # seconds per step of the worker
    trace: str = ""  # the worker's own traceback, when grading crashed

    @classmethod
    def read(cls, line):
        return cls.from_dict(json.loads(line))


@dataclass
class StudentRecord:
    """One student's record, results/<student>.json: what preparing and grading their submission gave. It is
    written after every step that changes it, read back by the next batch (an unchanged submission is not graded
    again), and turned into the student's row of grades.csv by report.py."""

    student: str
    key: str = ""  # of the submission, the lesson, the configuration and the grader: unchanged, not graded again
    status: Status | None = None  # GRADED or FAILED once a worker answered (or preparing failed); None before
    reason: str = ""  # why it failed: the `reason` column
    notes: list = field(default_factory=list)  # what the repairs changed
    flags: list = field(default_factory=list)  # what the static scan and the integrity guard saw
    seconds: float = 0.0
    sandbox: dict = field(default_factory=dict)  # the sandbox and limits the kernel ran in
    scores: dict | None = None  # {grade cell: [score, max]} of an id kept out of nbgrader's gradebook
    feedback_print: str | None = None  # of the scores its feedback page shows (gradebook.read_scores)
    trace: str = ""  # the worker's traceback, when grading crashed

    @property
    def failed(self):
        return self.status is Status.FAILED

    def write(self, path):
        """The record as results/<student>.json (written whole, then moved into place)."""
        tmp = Path(path).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1, sort_keys=True, default=str))
        tmp.replace(path)

    @classmethod
    def read(cls, path):
        """The record in `path`, or None if there is none or it is not one this grader wrote (then the student is
        graded again: a record is a cache of the grading, never a source of a score by itself)."""
        try:
            data = json.loads(Path(path).read_text())
            known = {f.name for f in fields(cls)}
            if not isinstance(data, dict) or set(data) - known:
                return None
            record = cls(**data)
            record.status = None if record.status is None else Status(record.status)
            return record
        except (OSError, ValueError, TypeError):
            return None
