"""The batch: collect -> repair -> tamper scan -> sandboxed run on the pool -> gradebook (one
transaction per student) -> feedback -> report. `run(args)` is what the command does."""

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from . import canary, cells, containment, gradebook, guard, report, sandbox, tamper
from . import collect as collect_step
from .course import Course, nbgrader_env
from .feedback import failure_page
from .pool import Pool, run_jobs
from .repairs import Broken, repair


def limits_from(args):
    return sandbox.Limits(
        memory=sandbox.parse_size(args.memory),
        cpu=args.cpu,
        processes=args.processes,
        file_size=sandbox.parse_size(args.file_size),
        disk=sandbox.parse_size(getattr(args, "disk", "1G")),
        output=sandbox.parse_size(args.output),
    )


def isolation_of(args, limits):
    if args.no_sandbox:
        return "none: --no-sandbox was given, student code ran with the grader's permissions", "none"
    why = sandbox.probe()
    if why:
        raise SystemExit(
            f"Refusing to grade: no sandbox for student code ({why}).\n"
            "Install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap), or, knowing that "
            "student code will then run with your permissions, pass --no-sandbox."
        )
    who = "a throw-away uid per worker" if os.geteuid() == 0 else "your uid in a user namespace"
    lim = ", ".join(f"{k} {v}" for k, v in limits.describe().items())
    home = "an in-memory home" if sandbox.sized_tmpfs() else "a private scratch folder (its size measured)"
    return (
        f"bubblewrap sandbox per notebook (no network, own pid namespace, read-only Python, {home}, {who}); "
        f"limits: {lim}; memory and processes per notebook: {containment.detect().name}"
    ), "bwrap"


# --------------------------------------------------------------------------------------------
# the canary, and each submission made gradable


def canary_jobs(course, lesson, notebooks, released, protected, job_for, work, out, isolation):
    """The canary's two jobs: the lesson's solution and its unanswered release, repaired and scanned as
    students' submissions are (a flag or a failure here refuses the batch at once)."""
    folder = work / "canary"
    shutil.rmtree(folder, ignore_errors=True)
    jobs = []
    for student, files in canary.submissions(course, lesson, notebooks).items():
        src = folder / "submitted" / student
        src.mkdir(parents=True)
        for nb_name, data in files.items():
            (src / f"{nb_name}.ipynb").write_bytes(data)
        dest = folder / "sanitized" / student / lesson
        _, flags, failure = prepare(src, dest, notebooks, released, protected, hashlib.sha256())
        if failure or flags:
            raise SystemExit(canary.refusal(lesson, [f"{student}: {failure or '; '.join(flags)}"], isolation))
        job = job_for(student, folder / "sanitized", folder / student, out / "logs" / f"{student}.log")
        jobs.append(dict(job, canary=True))
    return jobs


class CanaryGate:
    """Students' results wait until the canary's two have come and passed: then they are recorded (in
    the order they came); if the canary failed, nothing is recorded and no new notebook starts."""

    def __init__(self, expected, columns, manual, record):
        self.expected, self.columns, self.manual, self.record = expected, columns, manual, record
        self.results, self.held, self.problems, self.stop = {}, [], None, threading.Event()
        self.worker_seconds = 0.0

    def __call__(self, job, result):
        if job.get("canary"):
            self.results[job["student"]] = result
            self.worker_seconds += result.get("seconds") or 0.0
            if len(self.results) == self.expected:
                self.problems = canary.verdict(self.results, self.columns, self.manual)
                if self.problems:
                    self.stop.set()
                for held in self.held if not self.problems else []:
                    self.record(*held)
                self.held = []
        elif self.problems is None:
            self.held.append((job, result))
        elif not self.problems:
            self.record(job, result)


def prepare(src, dest, notebooks, released, protected, key):
    """Repair and scan one student's notebooks into `dest`: (notes, flags, failure or None). Whatever
    the files hold, this returns: a file no repair foresaw fails that student, never the batch."""
    import nbformat

    notes, flags, failure = [], [], None
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    submitted = sorted(p for p in src.glob("*.ipynb") if not p.name.startswith("."))
    for nb_name in notebooks:
        path = src / f"{nb_name}.ipynb"
        if not path.exists():
            others = [p for p in submitted if p.stem not in notebooks]
            if len(notebooks) == 1 and len(others) == 1:
                path = others[0]
                notes.append(f"notebook renamed to {path.name}: graded as {nb_name}.ipynb")
            else:
                failure = failure or ("no notebook submitted" if not submitted else f"notebook {nb_name}.ipynb missing")
                continue
        raw = path.read_bytes()
        key.update(raw)
        try:
            nb, repaired = repair(raw, released[nb_name])
            flags += tamper.scan(nb, protected)
            nbformat.write(nb, str(dest / f"{nb_name}.ipynb"))
        except Broken as err:
            failure = failure or str(err)
            continue
        except Exception as err:  # noqa: BLE001 - the safety net: this file fails, with a reason
            failure = failure or f"could not be read ({type(err).__name__})"
            continue
        notes += repaired
    for extra in src.iterdir():  # files the student attached: kept with the submission, never run
        if extra.is_file() and extra.suffix != ".ipynb":
            shutil.copy(extra, dest / extra.name)
            if extra.name != "timestamp.txt":
                key.update(extra.read_bytes())
    return notes, flags, failure


def canary_seconds(out):
    """Worker seconds the canary took in this batch (0 if it did not run)."""
    path = out / "canary.json"
    return json.loads(path.read_text()).get("worker_seconds", 0.0) if path.exists() else 0.0


def write_json(path, data):
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    tmp.replace(path)


def replace_dir(src, dest):
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), str(dest))


def run(args):
    """Grade args.lesson for the whole class (args: see cli.parse_args); returns the rows of grades.csv."""
    import warnings

    import nbformat

    warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's add_submission, harmless
    os.environ["PATH"] = nbgrader_env()["PATH"]  # nbgrader runs `alembic` from PATH
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    course = Course(args.root, db_url=args.db_url)
    lesson = args.lesson
    notebooks = course.notebooks(lesson)
    if not notebooks:
        raise SystemExit(
            f"lesson {lesson!r} has no released notebook in {course.release / lesson}: run `make release` first"
        )
    phases, t0 = {}, time.perf_counter()

    def phase(name, since):
        phases[name] = round(phases.get(name, 0.0) + time.perf_counter() - since, 3)
        return time.perf_counter()

    limits = limits_from(args)
    isolation, kind = isolation_of(args, limits)
    wrong = canary.preflight(course)
    if wrong:
        raise SystemExit(canary.refusal(lesson, [wrong], isolation))
    sandbox.clean_stale()
    out = Path(args.out).resolve() if args.out else course.runs(lesson)
    for sub in ("sanitized", "results", "logs", "feedback"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    work = course.state / "work"
    work.mkdir(parents=True, exist_ok=True)

    t = phase("start", t0)
    # the gradebook: a fresh clone gets the lesson from the release; then a snapshot
    missing = gradebook.lesson_in_gradebook(course, lesson, notebooks)
    if missing:
        say(f"{missing}: adding it from the release")
        gradebook.add_lesson(course, lesson, log=say)
    snap, why = gradebook.snapshot(course)
    say(f"gradebook snapshot: {snap}" if snap else f"gradebook snapshot: none ({why})")

    t = phase("gradebook set-up and snapshot", t)
    # collect
    roster = collect_step.read_roster(args.roster) if args.roster else None
    if args.submissions == "exchange":
        entries = collect_step.collect_exchange(course, lesson)
    else:
        entries = collect_step.collect_folder(course, lesson, args.submissions, roster)
    students = sorted({e.student for e in entries if (course.submitted / e.student / lesson).is_dir()})
    likely = [s for s in students if args.force or not (out / "results" / f"{s}.json").exists()]
    pool = Pool(min(args.workers, len(likely)), out / "logs")  # their imports overlap with the repairs

    t = phase("collect", t)
    released = {nb: nbformat.read(str(course.release / lesson / f"{nb}.ipynb"), as_version=4) for nb in notebooks}
    solutions = [nbformat.read(str(p), as_version=4) for p in sorted((course.source / lesson).glob("*.ipynb"))]
    protected = set()
    for nb in solutions:
        protected |= tamper.test_names(nb)
    imports = guard.lesson_imports(released.values())
    settings = json.dumps(
        {"limits": asdict(limits), "sandbox": kind, "cap": args.timeout, "cell": args.cell_timeout}, sort_keys=True
    )
    fingerprint = course.fingerprint(lesson, settings)
    reviewed_file = out / "reviewed.txt"
    reviewed = set(reviewed_file.read_text().split()) if reviewed_file.exists() else set()

    # repair and scan (fast, here)
    results, jobs = {}, []
    scores_now, _ = gradebook.read_scores(course, lesson, students)

    def job_for(student, sanitized, staging, log):
        staging.mkdir(parents=True, exist_ok=True)
        return {
            "kind": "grade",
            "root": str(course.root),
            "lesson": lesson,
            "student": student,
            "notebooks": notebooks,
            "sanitized": str(sanitized),
            "autograded": str(staging / "autograded"),
            "feedback": str(staging / "feedback"),
            "db": str(staging / "gradebook.db"),
            "template": str(work / f"template-{lesson}.db"),
            "log": str(log),
            "limits": asdict(limits),
            "sandbox": kind,
            "imports": imports,
            "release": str(course.release / lesson),
            "cell_timeout": args.cell_timeout,
        }

    for student in students:
        src = course.submitted / student / lesson
        dest = out / "sanitized" / student / lesson
        key = hashlib.sha256(fingerprint.encode())
        notes, flags, failure = prepare(src, dest, notebooks, released, protected, key)
        record = {"student": student, "key": key.hexdigest(), "notes": notes, "flags": flags}
        if failure:
            results[student] = dict(record, status="failed", reason=failure, seconds=0.0)
            continue
        previous = out / "results" / f"{student}.json"
        old = json.loads(previous.read_text()) if previous.exists() else None
        have = (
            all((course.autograded / student / lesson / f"{nb}.ipynb").is_file() for nb in notebooks)
            and student in scores_now
        )
        if old and old.get("key") == record["key"] and not args.force and (old["status"] == "failed" or have):
            results[student] = old
            continue
        results[student] = record
        jobs.append(job_for(student, out / "sanitized", work / "students" / student, out / "logs" / f"{student}.log"))

    t = phase("repair and scan", t)
    worker_phases = {}

    # grade the new or changed submissions on long-lived workers; commit each student at once
    def on_result(job, res):
        student = job["student"]
        for key, value in (res.get("phases") or {}).items():
            worker_phases[key] = round(worker_phases.get(key, 0.0) + value, 3)
        rec = results[student]
        rec["flags"] = list(dict.fromkeys(rec["flags"] + res.get("flags", [])))
        rec["seconds"] = res.get("seconds", 0.0)
        rec["sandbox"] = res.get("sandbox", {})
        if job["kind"] == "feedback":
            return
        if res.get("ok"):
            c0 = time.perf_counter()
            gradebook.commit(course, lesson, student, res["results"])  # one transaction
            replace_dir(Path(res["autograded"]), course.autograded / student / lesson)
            pages = res.get("feedback") or []
            fb_dest = course.feedback / student / lesson
            if pages:
                replace_dir(Path(pages[0]).parent, fb_dest)
                shutil.copy(fb_dest / Path(pages[0]).name, out / "feedback" / f"{student}.html")
            rec.update(status="graded", reason="", feedback_print=res.get("feedback_print"))
            phase("commit (in the grading phase)", c0)
        else:
            rec.update(status="failed", reason=res.get("reason") or "unknown", trace=res.get("trace", ""))
        write_json(out / "results" / f"{student}.json", rec)

    def progress(n, total, job, res):
        what = "ok" if res.get("ok") else res.get("reason", "")[:40]
        say(f"[{n}/{total}] {job['student']}: {what} ({res.get('seconds', 0):.1f} s)")

    if jobs:
        manual = gradebook.read_manual(course, lesson, [j["student"] for j in jobs])
        for job in jobs:
            job["manual"] = manual.get(job["student"])
        template = work / f"template-{lesson}-{fingerprint[:16]}.db"
        if not template.exists():  # the lesson's definition only: reused while unchanged
            for old in work.glob(f"template-{lesson}-*.db"):
                old.unlink()
            gradebook.make_template(course, lesson, work / "template.tmp")
            (work / "template.tmp").replace(template)
        first = canary_jobs(course, lesson, notebooks, released, protected, job_for, work, out, isolation)
        for job in first + jobs:
            job["template"] = str(template)
        manual = {
            c.metadata.nbgrader.grade_id
            for nb in released.values()
            for c in nb.cells
            if (c.metadata.get("nbgrader") or {}).get("solution") and c.metadata.nbgrader.get("grade")
        }
        gate = CanaryGate(len(first), cells.graded_cells([released[nb] for nb in notebooks]), manual, on_result)
        say(
            f"grading the canary (the lesson's solution and its blank) and {len(jobs)} submission(s) of {lesson} "
            f"on {min(args.workers, len(jobs) + len(first))} worker(s); isolation: {isolation}"
        )
        run_jobs(first + jobs, args.workers, args.timeout, out / "logs", gate, progress, pool, gate.stop)
        shutil.rmtree(work / "canary", ignore_errors=True)
        canary_record = {"problems": gate.problems, "worker_seconds": round(gate.worker_seconds, 2)}
        write_json(out / "canary.json", canary_record)
        if gate.problems is None or gate.problems:
            pool.close()
            shutil.rmtree(work / "students", ignore_errors=True)
            raise SystemExit(canary.refusal(lesson, gate.problems or ["the canary did not finish"], isolation))
    pool.close()
    t = phase("grading (workers)", t)
    for student, res in results.items():
        if res["status"] == "failed":
            write_json(out / "results" / f"{student}.json", res)

    # feedback: pages made with other scores than the gradebook's now (hand grading) are made again
    ok = [s for s in students if results[s]["status"] != "failed"]
    scores, prints = gradebook.read_scores(course, lesson, ok)
    stale = [
        s
        for s in ok
        if prints.get(s) != results[s].get("feedback_print") or not (out / "feedback" / f"{s}.html").exists()
    ]
    if stale:
        refresh = [
            {
                "kind": "feedback",
                "root": str(course.root),
                "lesson": lesson,
                "student": s,
                "db_url": course.db_url,
                "feedback": str(work / "students" / s / "feedback"),
            }
            for s in stale
        ]

        def on_feedback(job, res):
            pages = res.get("feedback") or []
            s = job["student"]
            if pages:
                replace_dir(Path(pages[0]).parent, course.feedback / s / lesson)
                shutil.copy(course.feedback / s / lesson / Path(pages[0]).name, out / "feedback" / f"{s}.html")
                results[s]["feedback_print"] = prints.get(s)
                write_json(out / "results" / f"{s}.json", results[s])

        run_jobs(refresh, args.workers, args.timeout, out / "logs", on_feedback, lambda *a: None)
    for s in students:
        if results[s]["status"] == "failed":
            (out / "feedback" / f"{s}.html").write_text(failure_page(s, lesson, results[s]["reason"]))
    shutil.rmtree(work / "students", ignore_errors=True)
    t = phase("feedback refresh", t)

    # report
    columns = cells.graded_cells([released[nb] for nb in notebooks])
    rows = report.rows_for(entries, results, scores, columns, reviewed)
    rows += report.not_submitted_rows(set((roster or {}).values()) | gradebook.student_ids(course), rows, columns)
    report.write(out, lesson, columns, rows, isolation)
    phase("report", t)
    sandbox.clean_stale()  # scratch folders of workers that ended without their own clean-up
    phases["total"] = round(time.perf_counter() - t0, 3)
    write_json(
        out / "timings.json",
        {
            "phases": phases,
            "worker_phases_summed": worker_phases,
            "graded": len(jobs),
            "canary_worker_seconds": canary_seconds(out) if jobs else 0.0,
            "workers": args.workers,
            "isolation": kind,
        },
    )
    if not args.quiet:
        print((out / "summary.txt").read_text())
        print(f"wrote {out / 'grades.csv'}, {out / 'summary.txt'}, {out / 'summary.png'} and {out / 'feedback'}/")
    return rows
