"""Step 3c, the canary: before any student, the lesson's own answers are graded exactly as a student's
submission is (same repairs, same workers, sandbox, Python environment and limits). The solution must
get every autograded point and raise no flag; the unanswered release must get 0 in every autograded
cell. Otherwise the batch is refused, with what differs: a grader that cannot grade the lesson's own
solution would give honest students silent zeros.

`preflight` first checks, in a second, the commonest cause: a `.venv` made in another folder, whose
editable install makes the kernel import another copy of the helper package.
"""

import hashlib
import json
import shutil
import threading
from pathlib import Path

import nbformat

from . import sandbox
from .cells import grade_id, with_answers
from .errors import GradingError
from .prepare import prepare

SETUP_PROBLEM = "the grader's setup took "  # execute.SandboxExecute.setup_problem
SOLUTION, BLANK = "canary-solution", "canary-blank"  # ids in the workers' private gradebooks only


def preflight(course, python=None):
    """'' if the kernel's Python imports this course's helper package, else why not (and what to do)."""
    try:
        env = sandbox.kernel_environment(python)
    except (RuntimeError, OSError, ValueError) as err:
        return f"the kernel's Python does not start: {err}"
    helpers = [Path(p).resolve() for p in env["helpers"]]
    own = (course.root / "attention_course").resolve()
    if not helpers:
        return (
            f"the kernel's Python ({env['executable']}) cannot import attention_course: "
            f"run `make venv` in {course.root}"
        )
    if own.is_dir() and own not in helpers:
        return (
            f"the kernel imports attention_course from {helpers[0]}, but this course's is {own}: its .venv was "
            f"made for another folder (or the course was moved). Run `make venv` in {course.root}"
        )
    return ""


def submissions(course, lesson, notebooks):
    """{SOLUTION: {nb: bytes}, BLANK: {nb: bytes}}: the release with the solution's answers filled in,
    and the release as handed out."""
    made = {SOLUTION: {}, BLANK: {}}
    for nb_name in notebooks:
        released = nbformat.read(str(course.release / lesson / f"{nb_name}.ipynb"), as_version=4)
        solution = nbformat.read(str(course.source / lesson / f"{nb_name}.ipynb"), as_version=4)
        made[BLANK][nb_name] = nbformat.writes(released).encode()
        made[SOLUTION][nb_name] = nbformat.writes(with_answers(released, solution)).encode()
    return made


def jobs(course, release, folder, isolation, make_job):
    """The canary's two jobs (messages.GradeJob): the lesson's solution and its unanswered release, prepared in
    `folder` as students' submissions are (a flag or a failure here refuses the batch at once).
    make_job(student, sanitized folder, staging folder) makes a job (the batch's, with canary=True)."""
    lesson = release.lesson
    shutil.rmtree(folder, ignore_errors=True)
    made = []
    for student, files in submissions(course, lesson, release.notebooks).items():
        src = folder / "submitted" / student
        src.mkdir(parents=True)
        for nb_name, data in files.items():
            (src / f"{nb_name}.ipynb").write_bytes(data)
        done = prepare(src, folder / "sanitized" / student / lesson, release, hashlib.sha256())
        if done.failure or done.flags:
            problem = f"{student}: {done.failure or '; '.join(done.flags)}"
            raise GradingError(refusal(lesson, [problem], isolation))
        made.append(make_job(student, folder / "sanitized", folder / student))
    return made


class Gate:
    """Students' results wait until the canary's two have come and passed: then they are recorded (in the order
    they came); if the canary failed, nothing is recorded and no new notebook starts (`stop`)."""

    def __init__(self, expected, columns, manual, record):
        self.expected, self.columns, self.manual, self.record = expected, columns, manual, record
        self.results, self.held, self.problems, self.stop = {}, [], None, threading.Event()
        self.worker_seconds = 0.0

    def __call__(self, job, result):
        if job.canary:
            self.results[job.student] = result
            self.worker_seconds += result.seconds
            if len(self.results) == self.expected:
                self.problems = verdict(self.results, self.columns, self.manual)
                if self.problems:
                    self.stop.set()
                for held in self.held if not self.problems else []:
                    self.record(*held)
                self.held = []
        elif self.problems is None:
            self.held.append((job, result))
        elif not self.problems:
            self.record(job, result)


def failures_in(autograded_folder, cells):
    """{grade cell: 'AssertionError: ...'} of the failed test cells of graded notebooks in a folder."""
    found = {}
    for path in sorted(Path(autograded_folder).glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb.get("cells", []):
            gid = grade_id(cell)
            for out in cell.get("outputs", []):
                if gid in cells and out.get("output_type") == "error":
                    found[gid] = f"{out.get('ename', '')}: {out.get('evalue', '')}"[:200]
    return found


def verdict(results, columns, manual=()):
    """What differs from a correct grader, as lines (empty: the canary passed).

    results: {SOLUTION: messages.Result, BLANK: messages.Result}; columns: [(grade cell, points)];
    manual: the grade cells graded by hand (not checked here)."""
    problems = []
    auto = [(cid, points) for cid, points in columns if cid not in manual]
    for student, want in ((SOLUTION, "full"), (BLANK, "zero")):
        res = results.get(student)
        label = "the lesson's solution" if student == SOLUTION else "the unanswered release"
        setup = [f for f in (res.flags if res is not None else []) if f.startswith(SETUP_PROBLEM)]
        if setup:  # the grader's own cell, not the lesson: say so, and nothing that follows from it
            problems.append(setup[0])
            continue
        if res is None or not res.ok:
            problems.append(f"{label} failed to run ({(res and res.reason) or 'the worker did not answer'})")
            continue
        if student == SOLUTION and res.flags:
            problems.append(f"{label} was flagged: {'; '.join(res.flags[:3])}")
        scores = {}
        for nb in res.results["notebooks"].values():
            scores.update({name: g["auto"] for name, g in nb["grades"].items()})
        messages = failures_in(res.autograded, {cid for cid, _ in auto}) if res.autograded else {}
        for cid, points in auto:
            got = scores.get(cid)
            if want == "full" and got != points:
                detail = f" ({messages[cid]})" if cid in messages else ""
                problems.append(f"{label} scores {got} of {points:g} on {cid}{detail}")
            elif want == "zero" and got not in (0, 0.0):
                problems.append(f"{label} scores {got} of {points:g} on {cid} (a test that passes unanswered)")
    return problems


def refusal(lesson, problems, isolation):
    return (
        f"Refusing to grade {lesson}: the grader cannot grade the lesson's own answers correctly here, so it "
        "would not grade students correctly either. Nothing was graded.\n"
        + "".join(f"  - {p}\n" for p in problems)
        + f"Isolation: {isolation}\n"
        "Fix what is listed (a .venv from another folder: `make venv`; a limit too low: raise it; a changed "
        "lesson: `make release`), then run the command again."
    )
