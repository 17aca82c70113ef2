"""The grading worker: a long-lived process that imports nbgrader once and grades one student after another
(nbgrader's Autograde with SandboxExecute, then the feedback page), against a private copy of the lesson's
gradebook entries. It reads jobs (messages.GradeJob, FeedbackJob) as JSON lines on stdin and answers each with a
messages.Result line on stdout; it never writes the real gradebook.

    python -m autograde.worker        (started by the grading command, never by hand)
"""

import contextlib
import copy
import json
import logging
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

from .messages import FeedbackJob, Result, read_job

REASONS = [  # (pattern in nbgrader's log, reason shown to the instructor)
    ("DeadKernelError", "the kernel died: os._exit, a crash, or a limit"),
    ("Kernel died", "the kernel died: os._exit, a crash, or a limit"),
    ("Timeout waiting for IOPub output", "a cell ran past the per-cell limit and did not stop when interrupted"),
    ("CellTimeoutError", "a cell ran past the per-cell limit"),
    ("SchemaTooOldError", "nbgrader metadata could not be repaired"),
    ("MissingEntry", "a graded cell could not be matched to the gradebook"),
]
AUTOGRADE_PHASE = "autograde (sanitize, kernel, cells, save)"


def _config(job):
    """The course and nbgrader's configuration for the job: the course's own, with this job's folders, the
    private gradebook and the sandboxed Execute in nbgrader's autograde preprocessors."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )
    from traitlets.config import Config

    from .course import Course
    from .execute import SandboxExecute
    from .pruning import PruneCells

    course = Course(job.root)
    config = copy.deepcopy(course.config)
    preprocessors = [PruneCells, SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades]
    preprocessors += [AssignLatePenalties, CheckCellMetadata]
    extra = {
        "CourseDirectory": {
            "root": str(course.root),
            "submitted_directory": job.sanitized,
            "autograded_directory": str(job.autograded),
            "feedback_directory": str(job.feedback),
            "db_url": f"sqlite:///{job.db}",
        },
        "Autograde": {"autograde_preprocessors": preprocessors, "create_student": True},
        # only the cells the grade depends on run (prune.py), unless the command was given --full
        "PruneCells": {"enabled": not job.full, "release_directory": job.release},
        "SandboxExecute": {
            "limits": job.limits,
            "sandbox": job.sandbox,
            "imports": job.imports,
            "data_from": job.release,
            "output_limit": job.limits["output"],
        },
    }
    if "iopub_timeout" not in config.Execute:  # nbclient's 4 s default fails slow-but-honest cells on a busy machine
        extra["Execute"] = {"iopub_timeout": 15}
    if job.cell_timeout:
        extra.setdefault("Execute", {})["timeout"] = job.cell_timeout
    config.merge(Config(extra))
    return course, config


def _log_to(path):
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("[%(name)s | %(levelname)s] %(message)s"))
    return handler


def autograde(job, course, config):
    """nbgrader's Autograde for the job's student, logging to the job's log: (error or '', the sandbox's report
    of each notebook, seconds)."""
    from nbgrader.coursedir import CourseDirectory

    from .execute import SandboxAutograde

    for folder in (job.autograded, job.feedback):
        shutil.rmtree(folder / job.student, ignore_errors=True)
    shutil.copy(job.template, job.db)
    handler, error = _log_to(job.log), ""
    with contextlib.chdir(course.root), contextlib.closing(handler):
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = job.lesson, job.student
        converter = SandboxAutograde(coursedir=coursedir, config=config)
        converter.force = True
        converter.log.addHandler(handler)
        converter.log.setLevel("INFO")
        start = time.monotonic()
        try:
            converter.start()
        except BaseException as err:  # nbgrader raises after logging what went wrong
            error = f"{type(err).__name__}: {err}"
        finally:
            converter.log.removeHandler(handler)
    return error, converter.reports, time.monotonic() - start


def judge(job, result, error, reports):
    """Whether the notebooks were graded (result.ok), and if not why: the limit the notebook hit, a reason read
    from nbgrader's log, or nbgrader's last error."""
    for report in reports:
        result.flags += report.flags
        result.limit = result.limit or report.limit
    result.sandbox = reports[0].sandbox if reports else {}
    done = all((Path(result.autograded) / f"{nb}.ipynb").is_file() for nb in job.notebooks)
    if result.limit:  # the kernel's own accounting, or the limit's error: what stopped the notebook
        result.reason = result.limit
    elif error or not done or any(r.died or r.error for r in reports):
        log = Path(job.log).read_text(errors="replace")
        texts = [log, error, *(r.error for r in reports)]
        reason = next((text for pattern, text in REASONS if any(pattern in t for t in texts)), "")
        if not reason:
            errors = [line.split("ERROR]", 1)[1].strip() for line in log.splitlines() if "ERROR]" in line]
            reason = errors[-1][:100] if errors else (error[:100] or "nbgrader did not produce the graded notebook")
        result.reason = reason
    else:
        result.ok = True


def with_feedback(job, course, config, result):
    """The feedback page, with the hand-given points already in the gradebook, and the print of its scores."""
    from . import feedback, gradebook

    if job.manual:
        gradebook.apply_manual(job.db, job.lesson, job.student, job.manual)
    start = time.monotonic()
    db_url = f"sqlite:///{job.db}"
    try:
        result.feedback = feedback.generate(
            config, course.root, job.lesson, job.student, job.autograded, job.feedback, db_url
        )
    except Exception as err:  # noqa: BLE001 - a feedback page is not worth a grade
        result.feedback, result.feedback_error = [], f"{type(err).__name__}: {err}"
    result.phases["feedback"] = time.monotonic() - start
    _, prints = gradebook.read_scores(course.with_db(db_url), job.lesson, [job.student])
    result.feedback_print = prints.get(job.student)


def grade(job):
    """Autograde one student and (not for the canary: scores only) make the feedback page. Returns a Result."""
    from . import gradebook

    start = time.monotonic()
    course, config = _config(job)
    error, reports, seconds = autograde(job, course, config)
    result = Result(job.student, autograded=str(job.autograded / job.student / job.lesson))
    result.phases[AUTOGRADE_PHASE] = seconds
    judge(job, result, error, reports)
    if result.ok:
        result.results = gradebook.read_results(job.db, job.lesson, job.student)
        if not job.canary:
            with_feedback(job, course, config, result)
    result.seconds = round(time.monotonic() - start, 2)
    result.phases["other (db copy, results)"] = result.seconds - sum(result.phases.values())
    result.phases = {k: round(v, 3) for k, v in result.phases.items()}
    return result


def refresh_feedback(job):
    """Make a student's feedback page again from the real gradebook (after hand grading)."""
    from . import feedback
    from .course import Course

    course = Course(job.root, db_url=job.db_url)
    shutil.rmtree(Path(job.feedback) / job.student, ignore_errors=True)
    config = copy.deepcopy(course.config)
    pages = feedback.generate(
        config, course.root, job.lesson, job.student, course.autograded, Path(job.feedback), course.db_url
    )
    return Result(job.student, ok=True, feedback=pages)


def answer(line):
    """The Result for one job's line: a job that crashes fails its student, never the worker."""
    student = None
    try:
        job = read_job(line)
        student = job.student
        return refresh_feedback(job) if isinstance(job, FeedbackJob) else grade(job)
    except Exception as err:  # noqa: BLE001 - never let one student stop the worker
        return Result(student, reason=f"grading crashed: {err}", trace=traceback.format_exc()[-2000:])


def main():
    from .sandbox import die_with_parent

    die_with_parent()  # the kernel kills this worker (and so its sandboxes) when the grading command dies
    if os.getppid() == 1:  # it died before that could be set
        sys.exit(1)
    os.umask(0o022)
    import nbgrader.converters  # noqa: F401  (import once, before the first job)

    from attention_course import nbclient_fix

    from . import execute  # noqa: F401

    nbclient_fix.apply()  # jupyter/nbclient#312: widget cells could stall until the cell timeout
    out = os.fdopen(os.dup(1), "w")  # the protocol: only this process writes it
    os.dup2(2, 1)  # kernels and libraries that print go to the log instead
    sys.stdout = sys.stderr
    out.write(json.dumps({"ready": os.getpid()}) + "\n")
    out.flush()
    for line in sys.stdin:
        out.write(answer(line).line())
        out.flush()


if __name__ == "__main__":
    main()
