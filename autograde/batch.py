"""The grading command's batch, declared as its phases in order (`PHASES`, the way nbgrader declares its
preprocessors). Each phase is a function of the `Batch`, which holds what the phases share:

    start       limits and isolation (no sandbox: refuse), the kernel's Python checked, the output folders
    gradebook   a fresh clone's lesson added from the release; a snapshot
    collect     LMS folder or exchange -> submitted/<student>/<lesson>/; the workers start
    prepare     each student's notebooks repaired and scanned (prepare.py); an unchanged submission keeps its result
    grade       the canary (canary.py), then the students, on the workers (pool.py); each student recorded and
                committed to the gradebook in one transaction as the result comes
    feedback    pages made again where the gradebook changed since (hand grading); a page for each failure
    report      grades.csv, summary.txt, summary.png (report.py)

`run(args)` is what the command does (args: cli.parse_args); it returns the rows of grades.csv or raises
GradingError.
"""

import contextlib
import json
import os
import shutil
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from . import canary, gradebook, guard, report, roster, sandbox
from . import collect as collect_step
from .course import Course, nbgrader_env
from .errors import GradingError
from .feedback import failure_page
from .messages import FeedbackJob, GradeJob, Status
from .pool import Pool, run_jobs
from .prepare import Release, prepare_student


class Timings:
    """Seconds spent in each phase (timings.json); a phase may be timed in several pieces."""

    def __init__(self):
        self.start, self.phases = time.perf_counter(), {}

    @contextlib.contextmanager
    def phase(self, name):
        since = time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = round(self.phases.get(name, 0.0) + time.perf_counter() - since, 3)

    def total(self):
        return round(time.perf_counter() - self.start, 3)


@dataclass
class Batch:
    """One lesson graded for the whole class: what the phases read and write."""

    settings: object  # the command's options (cli.parse_args)
    course: Course
    lesson: str
    out: Path  # the reports: runs/<lesson>/
    work: Path  # the workers' scratch (gradebook templates, staging folders), in the state folder
    limits: sandbox.Limits  # of each notebook's sandbox
    timings: Timings = field(default_factory=Timings)
    isolation: str = ""  # what summary.txt says of it
    sandbox_kind: str = ""  # 'bwrap' or 'none'
    release: Release | None = None
    imports: list = field(default_factory=list)  # the lesson's imports the tests use (guard.lesson_imports)
    fingerprint: str = ""  # of the lesson, the configuration, the grader and its settings
    template: Path | None = None  # the lesson's gradebook entries, for the workers' private gradebooks
    entries: list = field(default_factory=list)  # one per submitted file (collect.Entry)
    people: list = field(default_factory=list)  # the roster's rows (roster.read)
    students: list = field(default_factory=list)
    scores_before: dict = field(default_factory=dict)  # the gradebook's scores before this batch
    scores: dict = field(default_factory=dict)  # and after it
    results: dict = field(default_factory=dict)  # {student: StudentRecord}, as in results/<student>.json
    jobs: list = field(default_factory=list)  # a GradeJob for each student the workers grade
    worker_phases: dict = field(default_factory=dict)  # the workers' seconds per step, summed
    pool: Pool | None = None
    rows: list = field(default_factory=list)  # grades.csv

    @classmethod
    def open(cls, args):
        course = Course(args.root, db_url=args.db_url)
        if not course.notebooks(args.lesson):
            raise GradingError(
                f"lesson {args.lesson!r} has no released notebook in {course.release / args.lesson}: "
                "run `make release` first"
            )
        out = Path(args.out).resolve() if args.out else course.runs(args.lesson)
        return cls(args, course, args.lesson, out, course.state / "work", args.limits)

    def say(self, *parts):
        if not self.settings.quiet:
            print(*parts, file=sys.stderr, flush=True)

    def grade_job(self, student, sanitized, staging, canary=False):
        staging.mkdir(parents=True, exist_ok=True)
        return GradeJob(
            student=student,
            lesson=self.lesson,
            root=str(self.course.root),
            notebooks=self.release.notebooks,
            sanitized=str(sanitized),
            staging=str(staging),
            log=str(self.out / "logs" / f"{student}.log"),
            template=str(self.template),
            release=str(self.course.release / self.lesson),
            limits=asdict(self.limits),
            sandbox=self.sandbox_kind,
            imports=self.imports,
            cell_timeout=self.settings.cell_timeout,
            canary=canary,
            full=self.settings.full,
        )


# --- the phases --------------------------------------------------------------------------------


def start(batch):
    """Isolation (no sandbox: refuse), the kernel's Python checked, the output folders."""
    batch.isolation, batch.sandbox_kind = sandbox.isolation(batch.limits, batch.settings.no_sandbox)
    wrong = canary.preflight(batch.course)
    if wrong:
        raise GradingError(canary.refusal(batch.lesson, [wrong], batch.isolation))
    sandbox.clean_stale()
    for sub in ("sanitized", "results", "logs", "feedback"):
        (batch.out / sub).mkdir(parents=True, exist_ok=True)
    batch.work.mkdir(parents=True, exist_ok=True)


def open_gradebook(batch):
    """A fresh clone's gradebook gets the lesson from the release; then a snapshot."""
    course, lesson = batch.course, batch.lesson
    missing = gradebook.lesson_in_gradebook(course, lesson, course.notebooks(lesson))
    if missing:
        batch.say(f"{missing}: adding it from the release")
        gradebook.add_lesson(course, lesson, log=batch.say)
    snap, why = gradebook.snapshot(course)
    batch.say(f"gradebook snapshot: {snap}" if snap else f"gradebook snapshot: none ({why})")


def collect(batch):
    """An entry for every submitted file, each student's files in submitted/; the workers start, so that their
    imports overlap with the next phase."""
    args, course, lesson = batch.settings, batch.course, batch.lesson
    batch.people = roster.read(args.roster) if args.roster else []
    if args.submissions == "exchange":
        batch.entries = collect_step.collect_exchange(course, lesson)
    else:
        names = roster.names(batch.people) if args.roster else None
        batch.entries = collect_step.collect_folder(course, lesson, args.submissions, names)
    batch.students = sorted({e.student for e in batch.entries if (course.submitted / e.student / lesson).is_dir()})
    likely = [s for s in batch.students if args.force or not (batch.out / "results" / f"{s}.json").exists()]
    batch.pool = Pool(min(args.workers, len(likely)), batch.out / "logs")


def prepare(batch):
    """The lesson's release and fingerprint; each student prepared (prepare.py), and a job for each to grade."""
    args, course, lesson = batch.settings, batch.course, batch.lesson
    batch.release = Release.of(course, lesson)
    batch.imports = guard.lesson_imports(batch.release.released.values())
    settings = {
        "limits": asdict(batch.limits),
        "sandbox": batch.sandbox_kind,
        "cap": args.timeout,
        "cell": args.cell_timeout,
        "full": args.full,
    }
    batch.fingerprint = course.fingerprint(lesson, json.dumps(settings, sort_keys=True))
    batch.template = batch.work / f"template-{lesson}-{batch.fingerprint[:16]}.db"
    batch.scores_before, _ = gradebook.read_scores(course, lesson, batch.students)
    scored = set(batch.scores_before)
    for student in batch.students:
        batch.results[student], grade_it = prepare_student(
            course, batch.release, batch.out, student, batch.fingerprint, args.force, scored
        )
        if grade_it:
            batch.jobs.append(batch.grade_job(student, batch.out / "sanitized", batch.work / "students" / student))


def grade(batch):
    """The canary's two notebooks first, then the students', on the workers; a student's result is recorded as it
    comes once the canary has passed (canary.Gate). A failed canary refuses the batch."""
    try:
        if batch.jobs:
            grade_with_canary(batch)
    finally:
        batch.pool.close()


def grade_with_canary(batch):
    """The canary's jobs and the students' on the workers; canary.json; refuse if the canary failed."""
    args = batch.settings
    manual = gradebook.read_manual(batch.course, batch.lesson, [job.student for job in batch.jobs])
    for job in batch.jobs:
        job.manual = manual.get(job.student)
    make_template(batch)
    first = canary.jobs(
        batch.course, batch.release, batch.work / "canary", batch.isolation, partial(batch.grade_job, canary=True)
    )
    gate = canary.Gate(len(first), batch.release.columns(), batch.release.manual(), partial(record, batch))
    batch.say(
        f"grading the canary (the lesson's solution and its blank) and {len(batch.jobs)} submission(s) of "
        f"{batch.lesson} on {min(args.workers, len(batch.jobs) + len(first))} worker(s); isolation: {batch.isolation}"
    )
    logs = batch.out / "logs"
    run_jobs(
        first + batch.jobs, args.workers, args.timeout, logs, gate, partial(progress, batch), batch.pool, gate.stop
    )
    shutil.rmtree(batch.work / "canary", ignore_errors=True)
    write_json(batch.out / "canary.json", {"problems": gate.problems, "worker_seconds": round(gate.worker_seconds, 2)})
    if gate.problems is None or gate.problems:
        shutil.rmtree(batch.work / "students", ignore_errors=True)
        raise GradingError(
            canary.refusal(batch.lesson, gate.problems or ["the canary did not finish"], batch.isolation)
        )


def refresh_feedback(batch):
    """The failed students' records; feedback pages made again where the gradebook changed since they were made
    (hand grading); a short page for each student who could not be graded."""
    failed = [s for s in batch.students if batch.results[s].failed]
    for student in failed:
        batch.results[student].write(batch.out / "results" / f"{student}.json")
    invented = collect_step.invented_ids(batch.entries)
    ok = [s for s in batch.students if s not in failed and s not in invented]
    batch.scores, prints = gradebook.read_scores(batch.course, batch.lesson, ok)
    for student in invented & set(batch.students) - set(failed):
        batch.scores[student] = {k: tuple(v) for k, v in (batch.results[student].scores or {}).items()}
    stale = [
        s
        for s in ok
        if prints.get(s) != batch.results[s].feedback_print or not (batch.out / "feedback" / f"{s}.html").exists()
    ]
    if stale:
        course, work = batch.course, batch.work
        jobs = [
            FeedbackJob(s, batch.lesson, str(course.root), course.db_url, str(work / "students" / s / "feedback"))
            for s in stale
        ]
        args = batch.settings
        run_jobs(
            jobs, args.workers, args.timeout, batch.out / "logs", partial(feedback_made, batch, prints), lambda *a: None
        )
    for student in failed:
        page = failure_page(student, batch.lesson, batch.results[student].reason)
        (batch.out / "feedback" / f"{student}.html").write_text(page)
    shutil.rmtree(batch.work / "students", ignore_errors=True)


def write_report(batch):
    """grades.csv (a row per submitted file, and for everyone expected who submitted nothing), summary.txt, .png."""
    reviewed_file = batch.out / "reviewed.txt"
    reviewed = set(reviewed_file.read_text().split()) if reviewed_file.exists() else set()
    columns = batch.release.columns()
    rows = report.rows_for(batch.entries, batch.results, batch.scores, columns, reviewed)
    expected = {person["student_id"] for person in batch.people} | gradebook.student_ids(batch.course)
    rows += report.not_submitted_rows(expected, rows, columns)
    report.write(batch.out, batch.lesson, columns, rows, batch.isolation)
    batch.rows = rows


PHASES = [  # (name in timings.json, phase)
    ("start", start),
    ("gradebook set-up and snapshot", open_gradebook),
    ("collect", collect),
    ("repair and scan", prepare),
    ("grading (workers)", grade),
    ("feedback refresh", refresh_feedback),
    ("report", write_report),
]


def run(args):
    """Grade args.lesson for the whole class (args: cli.parse_args); returns the rows of grades.csv."""
    warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's add_submission, harmless
    os.environ["PATH"] = nbgrader_env()["PATH"]  # nbgrader starts kernels with the first `python` on PATH
    gradebook.schema_version_in_process()
    batch = Batch.open(args)
    try:
        for name, phase in PHASES:
            with batch.timings.phase(name):
                phase(batch)
    finally:
        if batch.pool is not None:
            batch.pool.close()
    sandbox.clean_stale()  # scratch folders of workers that ended without their own clean-up
    write_timings(batch)
    if not args.quiet:
        out = batch.out
        print((out / "summary.txt").read_text())
        print(f"wrote {out / 'grades.csv'}, {out / 'summary.txt'}, {out / 'summary.png'} and {out / 'feedback'}/")
    return batch.rows


# --- what the phases share ------------------------------------------------------------------------


def make_template(batch):
    """The lesson's gradebook entries in a small SQLite file, reused while the fingerprint is unchanged."""
    if batch.template.exists():
        return
    for old in batch.work.glob(f"template-{batch.lesson}-*.db"):
        old.unlink()
    gradebook.make_template(batch.course, batch.lesson, batch.work / "template.tmp")
    (batch.work / "template.tmp").replace(batch.template)


def record(batch, job, result):
    """A student's result from a worker: the record updated, and if graded, the scores committed to the gradebook
    in one transaction and the graded notebooks and feedback page put in place; then results/<student>.json."""
    for key, value in result.phases.items():
        batch.worker_phases[key] = round(batch.worker_phases.get(key, 0.0) + value, 3)
    rec = batch.results[job.student]
    rec.flags = list(dict.fromkeys(rec.flags + result.flags))
    rec.seconds, rec.sandbox = result.seconds, result.sandbox
    if result.ok and job.student in collect_step.invented_ids(batch.entries):
        place_feedback(batch, job.student, result.feedback)
        rec.status, rec.reason, rec.feedback_print = Status.GRADED, "", None
        rec.scores = own_scores(batch, result.results)
        rec.flags = list(dict.fromkeys([*rec.flags, NOT_RECORDED]))
    elif result.ok:
        with batch.timings.phase("commit (in the grading phase)"):
            if gradebook.commit(batch.course, batch.lesson, job.student, result.results):  # one transaction
                with open(batch.out / ADDED, "a", encoding="utf-8") as added:  # `python -m autograde.forget`
                    added.write(job.student + "\n")
            replace_dir(Path(result.autograded), batch.course.autograded / job.student / batch.lesson)
            place_feedback(batch, job.student, result.feedback)
            rec.status, rec.reason, rec.feedback_print = Status.GRADED, "", result.feedback_print
    else:
        rec.status, rec.reason, rec.trace = Status.FAILED, result.reason or "unknown", result.trace
    rec.write(batch.out / "results" / f"{job.student}.json")


ADDED = "added_students.txt"  # the ids this lesson's batches added to nbgrader's student list
NOT_RECORDED = (
    "not recorded in nbgrader's gradebook: the grader made this id up; map the person with --roster and grade again"
)


def own_scores(batch, results):
    """{grade cell: [score, max]} from a worker's private gradebook (for an id kept out of the real one)."""
    points = dict(batch.release.columns())
    return {
        name: [grade["auto"], points.get(name, 0.0)]
        for nb in results["notebooks"].values()
        for name, grade in nb["grades"].items()
    }


def progress(batch, n, total, job, result):
    what = "ok" if result.ok else result.reason[:40]
    batch.say(f"[{n}/{total}] {job.student}: {what} ({result.seconds:.1f} s)")


def feedback_made(batch, prints, job, result):
    if result.feedback:
        place_feedback(batch, job.student, result.feedback)
        batch.results[job.student].feedback_print = prints.get(job.student)
        batch.results[job.student].write(batch.out / "results" / f"{job.student}.json")


def place_feedback(batch, student, pages):
    """A worker's feedback folder becomes nbgrader's feedback/<student>/<lesson>/, its page runs/<lesson>/feedback/."""
    if pages:
        dest = batch.course.feedback / student / batch.lesson
        replace_dir(Path(pages[0]).parent, dest)
        shutil.copy(dest / Path(pages[0]).name, batch.out / "feedback" / f"{student}.html")


def write_timings(batch):
    batch.timings.phases["total"] = batch.timings.total()
    path = batch.out / "canary.json"
    canary_seconds = json.loads(path.read_text()).get("worker_seconds", 0.0) if batch.jobs and path.exists() else 0.0
    timings = {
        "phases": batch.timings.phases,
        "worker_phases_summed": batch.worker_phases,
        "graded": len(batch.jobs),
        "canary_worker_seconds": canary_seconds,
        "workers": batch.settings.workers,
        "isolation": batch.sandbox_kind,
    }
    write_json(batch.out / "timings.json", timings)


def write_json(path, data):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    tmp.replace(path)


def replace_dir(src, dest):
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), str(dest))
