"""Step 4c, the grading worker: a long-lived process that imports nbgrader once and grades one
student after another (nbgrader's Autograde with SandboxExecute, then the feedback page), against a
private copy of the lesson's gradebook entries. It reads jobs as JSON lines on stdin and answers
with one JSON line each on stdout; it never writes the real gradebook.

    python -m autograde.worker        (started by the grading command, never by hand)
"""

import copy
import json
import logging
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

REASONS = [  # (pattern in nbgrader's log, reason shown to the instructor)
    ("DeadKernelError", "the kernel died: os._exit, a crash, or a limit"),
    ("Kernel died", "the kernel died: os._exit, a crash, or a limit"),
    ("Timeout waiting for IOPub output", "a cell ran past the per-cell limit and did not stop when interrupted"),
    ("CellTimeoutError", "a cell ran past the per-cell limit"),
    ("SchemaTooOldError", "nbgrader metadata could not be repaired"),
    ("MissingEntry", "a graded cell could not be matched to the gradebook"),
]


def _config(job):
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

    course = Course(job["root"])
    config = copy.deepcopy(course.config)
    extra = {
        "CourseDirectory": {
            "root": str(course.root),
            "submitted_directory": job["sanitized"],
            "autograded_directory": job["autograded"],
            "feedback_directory": job["feedback"],
            "db_url": f"sqlite:///{job['db']}",
        },
        "Autograde": {
            "autograde_preprocessors": [
                SandboxExecute,
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
            ],
            "create_student": True,
        },
        "SandboxExecute": {
            "limits": job["limits"],
            "sandbox": job["sandbox"],
            "imports": job["imports"],
            "data_from": job.get("release", ""),
            "output_limit": job["limits"]["output"],
            "guard": job.get("guard", True),
        },
    }
    if "iopub_timeout" not in config.Execute:  # nbclient's 4 s default fails slow-but-honest cells on a busy machine
        extra["Execute"] = {"iopub_timeout": 15}
    if job.get("cell_timeout"):
        extra.setdefault("Execute", {})["timeout"] = job["cell_timeout"]
    config.merge(Config(extra))
    return course, config


def _log_to(path):
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("[%(name)s | %(levelname)s] %(message)s"))
    return handler


def grade(job):
    """Autograde one student and make the feedback page. Returns the result dict."""
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory

    from . import feedback, gradebook
    from .execute import SandboxExecute

    start = time.monotonic()
    student, lesson = job["student"], job["lesson"]
    for key in ("autograded", "feedback"):
        shutil.rmtree(Path(job[key]) / student, ignore_errors=True)
    shutil.copy(job["template"], job["db"])
    course, config = _config(job)
    handler = _log_to(job["log"])
    SandboxExecute.reports = []
    error = ""
    cwd = os.getcwd()
    os.chdir(course.root)
    try:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = lesson, student
        converter = Autograde(coursedir=coursedir, config=config)
        converter.force = True
        converter.log.addHandler(handler)
        converter.log.setLevel("INFO")
        t_conv = time.monotonic()
        try:
            converter.start()
        except BaseException as err:  # nbgrader raises after logging what went wrong
            error = f"{type(err).__name__}: {err}"
        finally:
            converter.log.removeHandler(handler)
    finally:
        os.chdir(cwd)
        handler.close()
    phases = {"autograde (sanitize, kernel, cells, save)": time.monotonic() - t_conv}
    reports = list(SandboxExecute.reports)
    log = Path(job["log"]).read_text(errors="replace")
    result = {"student": student, "ok": False, "reason": "", "limit": "", "flags": [], "reports": reports}
    for r in reports:
        result["flags"] += r.get("flags", [])
        result["limit"] = result["limit"] or r.get("limit", "")
    result["sandbox"] = reports[0]["sandbox"] if reports else {}
    autograded = Path(job["autograded"]) / student / lesson
    done = all((autograded / f"{nb}.ipynb").is_file() for nb in job["notebooks"])
    if result["limit"]:  # the kernel's own accounting, or the limit's error: what stopped the notebook
        result["reason"] = result["limit"]
    elif error or not done or any(r.get("died") or r.get("error") for r in reports):
        reason = next(
            (
                text
                for pattern, text in REASONS
                if pattern in log or pattern in error or any(pattern in r.get("error", "") for r in reports)
            ),
            "",
        )
        if not reason:
            errors = [line.split("ERROR]", 1)[1].strip() for line in log.splitlines() if "ERROR]" in line]
            reason = errors[-1][:100] if errors else (error[:100] or "nbgrader did not produce the graded notebook")
        result["reason"] = reason
    else:
        result["ok"] = True
        result["results"] = gradebook.read_results(job["db"], lesson, student)
        if job.get("canary"):  # the lesson's own answers: scores only, no feedback page
            result["seconds"] = round(time.monotonic() - start, 2)
            result["phases"] = {k: round(v, 3) for k, v in phases.items()}
            return result
        if job.get("manual"):
            gradebook.apply_manual(job["db"], lesson, student, job["manual"])
        t_fb = time.monotonic()
        try:
            result["feedback"] = feedback.generate(
                config,
                course.root,
                lesson,
                student,
                Path(job["autograded"]),
                Path(job["feedback"]),
                f"sqlite:///{job['db']}",
            )
        except Exception as err:  # noqa: BLE001 - a feedback page is not worth a grade
            result["feedback"], result["feedback_error"] = [], f"{type(err).__name__}: {err}"
        phases["feedback"] = time.monotonic() - t_fb
        _, prints = gradebook.read_scores(
            SimpleNamespace(db_url=f"sqlite:///{job['db']}", course_id=course.course_id), lesson, [student]
        )
        result["feedback_print"] = prints.get(student)
    if result["limit"] and not result["reason"]:
        result["reason"] = result["limit"]
    result["seconds"] = round(time.monotonic() - start, 2)
    phases["other (db copy, results)"] = result["seconds"] - sum(phases.values())
    result["phases"] = {k: round(v, 3) for k, v in phases.items()}
    result["autograded"] = str(autograded)
    return result


def refresh_feedback(job):
    """Make a student's feedback page again from the real gradebook (after hand grading)."""
    from . import feedback
    from .course import Course

    course = Course(job["root"], db_url=job.get("db_url"))
    shutil.rmtree(Path(job["feedback"]) / job["student"], ignore_errors=True)
    pages = feedback.generate(
        copy.deepcopy(course.config),
        course.root,
        job["lesson"],
        job["student"],
        course.autograded,
        Path(job["feedback"]),
        course.db_url,
    )
    return {"student": job["student"], "ok": True, "feedback": pages}


def die_with_parent():
    """Linux: the kernel kills this worker (and so its sandboxes) when the grading command dies, even by kill -9."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        sys.exit(1)


def main():
    die_with_parent()
    os.umask(0o022)
    import nbgrader.converters  # noqa: F401  (import once, before the first job)

    from course_dev import nbclient_fix

    from . import execute  # noqa: F401

    nbclient_fix.apply()  # jupyter/nbclient#312: widget cells could stall until the cell timeout
    out = os.fdopen(os.dup(1), "w")  # the protocol: only this process writes it
    os.dup2(2, 1)  # kernels and libraries that print go to the log instead
    sys.stdout = sys.stderr
    out.write(json.dumps({"ready": os.getpid()}) + "\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        try:
            result = refresh_feedback(job) if job.get("kind") == "feedback" else grade(job)
        except Exception as err:  # noqa: BLE001 - never let one student stop the worker
            result = {
                "student": job.get("student"),
                "ok": False,
                "reason": f"grading crashed: {err}",
                "trace": traceback.format_exc()[-2000:],
            }
        out.write(json.dumps(result, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
