"""Benchmarks for the course: notebook run times, grading throughput, widget latency and peak memory.

    python -m course_dev.bench [--only notebooks,grading,prune,widgets,memory] [--repeat 3]
                               [--lesson 01_why_attention,11_attention_at_scale] [--submissions 20] [--workers N]
                               [--changes 20] [--lessons L1,L2] [--json benchmarks/results.json] [--readme]

(`make bench BENCH_ARGS="..."` runs it with the course's environment.) Prints one table, with the
design budgets beside each figure and the ones over budget marked, and writes the same
measurements as JSON (by default benchmarks/results.json, committed as the latest measurement).

  notebooks  every solution notebook executed headless with nbclient (kernel start, every cell,
             kernel shutdown), median of --repeat runs, the total, and the floor: a notebook that
             only starts a kernel and imports numpy, torch, matplotlib.pyplot and attention_course.
             Runs are interleaved (floor, 01, 02, ..., floor, 01, ...) so background load spreads evenly.
  grading    --submissions synthetic submissions of --lesson (answers filled in from the solution for
             a varying number of exercises), graded on fresh temporary copies of the course three times:
             stock sequential `nbgrader autograde`, the course's `python -m autograde --workers N` with
             its sandbox, and the same with --no-sandbox; submissions per minute, the speed-up over
             stock, the cost of the sandbox, the cost of the canary (the lesson's solution and blank
             graded before any student) as a share of the batch, and a per-phase breakdown (in the JSON).
  widgets    each explorer (attention_course.widgets.Explorer) of each solution notebook: after the
             notebook has run, its controls are changed from code in the same kernel; the in-kernel
             time from setting a value to the end of the redraw it triggers (--changes changes per
             explorer after a warm-up), median and 90th percentile.
  prune      for each lesson, its fully answered notebook (release + the solution's answers): nbgrader's Validate
             timed pruned (autograde/prune.py, the default) and full (AUTOGRADE_FULL=1), and the share of its
             code cells and of its cell seconds (one headless run, timed per cell) that grading leaves out.
  memory     the kernel process's peak resident memory (ru_maxrss) of the biggest notebook.
  paint      each explorer in JupyterLab in headless Chromium: from a value typed into it (Enter) to the new
             image painted, measured in the page, next to the explorer's own in-kernel redraw time and the
             image's decode time; the rest is the comm round trip (course_dev/paint.py).

This is a measurement, not a test: it exits 0 even when a figure is over budget.
"""

import argparse
import csv
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from attention_course import nbclient_fix
from autograde.cells import grade_id, is_solution, with_answers
from course_dev import widget_driver
from course_dev.course import copy_course
from course_dev.env import use_this_python
from course_dev.kernel import LiveKernel, stdout
from course_dev.paths import ROOT, lesson_meta, lessons, solution_path

PARTS = ("notebooks", "grading", "prune", "widgets", "memory", "paint")
VALIDATE_BUDGET = 10.0  # seconds for nbgrader's Validate of a fully answered notebook, pruned, on a quiet machine
PAINT_MEDIAN_MS = 150.0  # from a student's action to the new image painted, in Chromium
COURSE_BUDGET = 45.0  # seconds for lessons 00–09 (every lesson whose lesson.toml is not an extension)
FLOOR_RATIO = 2.0  # every notebook but a capstone runs in at most this many times the kernel + imports floor
REDRAW_MEDIAN_MS, REDRAW_P90_MS = 60.0, 100.0
FLOOR_SOURCE = "import numpy\nimport torch\nimport matplotlib.pyplot\nimport attention_course"
MEMORY_SOURCE = "import resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"  # KiB on Linux

use_this_python()  # kernels start with the first `python` on PATH (as nbgrader's do): this interpreter
nbclient_fix.apply()  # jupyter/nbclient#312: widget cells could stall until the cell timeout
os.environ.pop("ATTENTION_COURSE_FIGURES", None)  # benchmarks never write figure files


def notebook_budget(lesson):
    """Seconds the lesson may take on 2 cores (its lesson.toml)."""
    return lesson_meta(lesson)["budget_s"]


def percentile(values, q):
    """Linear-interpolated percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _errors(nb):
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "error":
                found.append(f"cell {index}: {output.ename}: {output.evalue}"[:200])
    return found


def run_notebook(path, timeout=300, after=None, before=None):
    """Execute a notebook headless. Returns {seconds, phases, peak_rss_mib, errors, after}: `seconds`
    covers kernel start, every cell and kernel shutdown (each in `phases`); the peak-memory probe,
    `before(kernel)` (run in the new kernel before the first cell) and `after(kernel)` (run once every
    cell has run) are not counted."""
    after_result = None
    start = time.perf_counter()
    with LiveKernel(path, timeout, quiet=True) as kernel:  # the kernel's own warnings are not the benchmark's
        started = time.perf_counter()
        if before is not None:
            before(kernel)
            start += time.perf_counter() - started
            started = time.perf_counter()
        kernel.run_all()
        cells_done = time.perf_counter()
        errors = _errors(kernel.nb)
        text = stdout(kernel.run(MEMORY_SOURCE)).strip()
        peak = int(text) / 1024 if text.isdigit() else None
        if after is not None:
            after_result = after(kernel)
        shutdown_start = time.perf_counter()
    end = time.perf_counter()
    phases = {"start_s": started - start, "cells_s": cells_done - started, "shutdown_s": end - shutdown_start}
    return {
        "seconds": sum(phases.values()),
        "phases": phases,
        "peak_rss_mib": peak,
        "errors": errors,
        "after": after_result,
    }


def floor_notebook(folder):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(FLOOR_SOURCE)]
    path = Path(folder) / "floor.ipynb"
    nbformat.write(nb, str(path))
    return path


# ----------------------------------------------------------------------------------------- notebooks
def bench_notebooks(names, repeat, timeout, log):
    """Median wall time of the floor and of every solution notebook, interleaved over `repeat` rounds."""
    with tempfile.TemporaryDirectory(prefix="bench_floor_") as folder:
        paths = {"floor": floor_notebook(folder), **{name: solution_path(name) for name in names}}
        runs = {name: [] for name in paths}
        for round_ in range(repeat):
            for name, path in paths.items():
                result = run_notebook(path, timeout)
                runs[name].append(result)
                log(
                    f"  notebooks round {round_ + 1}/{repeat}: {name} {result['seconds']:.1f} s"
                    + (f" ({len(result['errors'])} errors)" if result["errors"] else "")
                )
    summary = {}
    for name, results in runs.items():
        seconds = [r["seconds"] for r in results]
        peaks = [r["peak_rss_mib"] for r in results if r["peak_rss_mib"] is not None]
        summary[name] = {
            "median_s": statistics.median(seconds),
            "runs_s": seconds,
            "runs_phases_s": [r["phases"] for r in results],
            "peak_rss_mib": max(peaks) if peaks else None,
            "errors": sorted({e for r in results for e in r["errors"]}),
        }
    floor = summary.pop("floor")
    known = set(lessons())
    for name, entry in summary.items():
        meta = lesson_meta(name) if name in known else {"capstone": False, "extension": False}
        entry["ratio_to_floor"] = entry["median_s"] / floor["median_s"]
        entry["budget_s"] = notebook_budget(name)
        entry["floor_ratio_budget"] = None if meta["capstone"] else FLOOR_RATIO
        entry["extension"] = meta["extension"]
    core = [name for name, entry in summary.items() if not entry["extension"]]
    return {
        "repeat": repeat,
        "floor": floor,
        "lessons": summary,
        "core_lessons": core,
        "total_s": sum(summary[name]["median_s"] for name in core),
        "total_budget_s": COURSE_BUDGET,
        "all_lessons_s": sum(entry["median_s"] for entry in summary.values()),
    }


# ----------------------------------------------------------------------------------------- memory
def bench_memory(names, notebooks, timeout, log):
    """Peak RSS of every notebook's kernel (reused from the notebook runs when they happened)."""
    if notebooks is not None:
        peaks = {name: entry["peak_rss_mib"] for name, entry in notebooks["lessons"].items()}
    else:
        peaks = {}
        for name in names:
            peaks[name] = run_notebook(solution_path(name), timeout)["peak_rss_mib"]
            log(f"  memory: {name} {peaks[name]:.0f} MiB" if peaks[name] else f"  memory: {name} unknown")
    known = {name: peak for name, peak in peaks.items() if peak is not None}
    biggest = max(known, key=known.get) if known else None
    return {"per_lesson_mib": peaks, "biggest": biggest, "peak_rss_mib": known.get(biggest)}


# ----------------------------------------------------------------------------------------- widgets
def drive_explorers(kernel, changes, warmup):
    """In the kernel that ran the notebook: change every explorer's controls `warmup + changes` times."""
    outputs = kernel.run(
        f"import json\nfrom course_dev.widget_driver import drive\nprint(json.dumps(drive({changes}, {warmup})))",
    )
    text = stdout(outputs).strip().splitlines()
    errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.output_type == "error"]
    if errors or not text:
        raise RuntimeError(f"driving the explorers failed: {'; '.join(errors) or 'no output'}")
    return json.loads(text[-1])


def widget_rows(lesson, report):
    rows = []
    for entry in report:
        seconds = entry["seconds"]
        row = {
            "lesson": lesson,
            "explorer": entry["explorer"],
            "controls": entry["controls"],
            "changes": len(seconds),
            "missed": entry["missed"],
            "statuses": entry["statuses"],
            "budget_median_ms": REDRAW_MEDIAN_MS,
            "budget_p90_ms": REDRAW_P90_MS,
        }
        if seconds:
            row.update(
                median_ms=1000 * statistics.median(seconds),
                p90_ms=1000 * percentile(seconds, 90),
                redraw_median_ms=1000 * statistics.median(entry["redraw_seconds"]),
            )
        rows.append(row)
    return rows


def _has_explorer(lesson):
    return "widgets.explore(" in solution_path(lesson).read_text(encoding="utf-8")


def bench_widgets(names, changes, warmup, timeout, log, paths=None):
    rows = []
    for name in names:
        path = paths[name] if paths else solution_path(name)
        result = run_notebook(
            path,
            timeout,
            before=lambda kernel: kernel.run(widget_driver.RECORD_SOURCE),
            after=lambda kernel: drive_explorers(kernel, changes, warmup),
        )
        found = widget_rows(name, result["after"])
        log(f"  widgets: {name}: {len(found)} explorer(s)")
        rows.extend(found)
    return {"changes": changes, "warmup": warmup, "explorers": rows}


# ----------------------------------------------------------------------------------------- grading
def synthetic_submissions(course, lesson, count):
    """`count` submissions built from the freshly released notebook: student k answers the first
    k mod (n + 1) of the n answer cells from the solution (all answers, free text included, when k = n),
    so the batch mixes blank, partial and full notebooks. Returns {student: notebook}."""
    solution = nbformat.read(str(solution_path(lesson, course)), as_version=4)
    released = nbformat.read(str(course / "notebooks" / lesson / f"{lesson}.ipynb"), as_version=4)
    code_ids = [grade_id(c) for c in solution.cells if is_solution(c) and c.cell_type == "code"]
    all_ids = [grade_id(c) for c in solution.cells if is_solution(c)]
    made = {}
    for k in range(count):
        answered = set(code_ids[: k % (len(code_ids) + 1)])
        made[f"s{k + 1:03d}"] = with_answers(
            released, solution, set(all_ids) if answered == set(code_ids) else answered
        )
    return made


def compare_scores(stock_course, lesson, grades_csv):
    """Autograded cells where the course's grades.csv and stock nbgrader's gradebook disagree, as
    "student/cell: stock vs course" strings (None if either side cannot be read)."""
    try:
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{stock_course / 'grading' / 'gradebook.db'}") as gb:
            stock = {
                (sub.student.id, g.name): g.auto_score
                for sub in gb.assignment_submissions(lesson)
                for nb_ in sub.notebooks
                for g in nb_.grades
                if g.auto_score is not None
            }
        with open(grades_csv, newline="") as handle:
            course = {
                (row["student"], cell): float(value)
                for row in csv.DictReader(handle)
                for cell, value in row.items()
                if (row["student"], cell) in stock and value not in ("", None)
            }
    except Exception:  # noqa: BLE001 - a comparison we cannot make is reported as unknown, not a crash
        return None
    if not course or len(course) < len(stock):
        return None if not course else [f"{len(stock) - len(course)} stock scores missing from grades.csv"]
    return [
        f"{student}/{cell}: {stock[student, cell]:g} vs {value:g}"
        for (student, cell), value in sorted(course.items())
        if abs(stock[student, cell] - value) > 1e-9
    ]


def _grade_command(lesson, submissions, workers, out, sandbox=True, full=False):
    command = [sys.executable, "-m", "autograde", lesson, str(submissions), "--quiet", "--out", str(out)]
    if workers:
        command += ["--workers", str(workers)]
    return command + ([] if sandbox else ["--no-sandbox"]) + (["--full"] if full else [])


def _run_course(label, course, lesson, flat, workers, out, timeout, log, sandbox, full=False):
    command = _grade_command(lesson, flat, workers, out, sandbox, full)
    log(f"  grading: {label}: python {' '.join(command[1:])}")
    start = time.perf_counter()
    ours = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    entry = {
        "command": " ".join(["python"] + command[1:]).replace(str(flat), "SUBMISSIONS").replace(str(out), "OUT"),
        "workers": workers,
        "sandbox": sandbox,
        "seconds": seconds,
        "returncode": ours.returncode,
        "load_before": os.getloadavg()[0],
    }
    if ours.returncode != 0:
        entry["failure"] = (ours.stderr or ours.stdout)[-1500:]
        return entry
    timings = Path(out) / "timings.json"
    if timings.exists():
        entry["phases"] = json.loads(timings.read_text())
    return entry


def bench_grading(lesson, count, workers, timeout, log):
    """Stock sequential `nbgrader autograde` against `python -m autograde --workers N`, with and
    without the sandbox, on the same synthetic submissions, each in its own fresh copy of the course."""
    entry = {"lesson": lesson, "submissions": count}
    with tempfile.TemporaryDirectory(prefix="bench_grading_") as folder:
        stock_course, copies, flat = _grading_courses(Path(folder), lesson, count)
        entry["stock"] = _run_stock(stock_course, lesson, count, timeout, log)
        for key, sandbox, full in (("course", True, False), ("full", True, True), ("nosandbox", False, False)):
            out = Path(folder) / f"{key}_out"
            label = ("sandbox on" if sandbox else "no sandbox") + (", every cell (--full)" if full else "")
            run = _run_course(label, copies[key], lesson, flat, workers, out, timeout, log, sandbox, full)
            if "failure" not in run:
                run["per_minute"] = 60 * count / run["seconds"]
                run["speed_up"] = run["per_minute"] / entry["stock"]["per_minute"]
                run["disagreements"] = compare_scores(stock_course, lesson, out / "grades.csv")
            entry[key] = run
    _grading_costs(entry)
    return entry


def _grading_courses(folder, lesson, count):
    """(the stock course with the submissions in its submitted/, {key: a copy of it released the same way}, the
    submissions as one flat folder of zip_collect names) for the grading benchmark, in `folder`."""
    stock_course = copy_course(folder / "stock", [lesson])
    subprocess.run(
        [sys.executable, "-m", "course_dev.release", "--root", str(stock_course), lesson],
        cwd=stock_course,
        check=True,
        capture_output=True,
        text=True,
    )
    submissions = synthetic_submissions(stock_course, lesson, count)
    copies = {}
    for name in ("course", "full", "nosandbox"):  # released like the stock course (gradebook included)
        copies[name] = folder / name
        shutil.copytree(stock_course, copies[name])
    for student, nb in submissions.items():
        target = (stock_course / "grading") / "submitted" / student / lesson
        target.mkdir(parents=True)
        nbformat.write(nb, str(target / f"{lesson}.ipynb"))
    flat = folder / "submissions"
    flat.mkdir()
    for student, nb in submissions.items():  # nbgrader zip_collect naming
        nbformat.write(nb, str(flat / f"{student}_{lesson}.ipynb"))
    return stock_course, copies, flat


def _run_stock(stock_course, lesson, count, timeout, log):
    """Stock `nbgrader autograde` of the submitted folder, every cell: its seconds, and how many it graded."""
    log(f"  grading: stock nbgrader autograde, {count} submissions of {lesson}")
    start = time.perf_counter()
    stock = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", lesson],
        cwd=stock_course,
        env={**os.environ, "AUTOGRADE_FULL": "1"},  # stock: every cell (the course's config would prune)
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.perf_counter() - start
    graded = len(list(((stock_course / "grading") / "autograded").glob(f"*/{lesson}/{lesson}.ipynb")))
    run = {
        "command": f"nbgrader autograde {lesson}",
        "seconds": seconds,
        "graded": graded,
        "returncode": stock.returncode,
        "per_minute": 60 * count / seconds,
    }
    if stock.returncode != 0 or graded != count:
        run["failure"] = (stock.stderr or stock.stdout)[-1500:]
    return run


def _grading_costs(entry):
    """The canary's and the sandbox's share of the course's grading run, and its speed-up, into `entry`."""
    timings = entry["course"].get("phases") or {}
    if timings.get("canary_worker_seconds") and "failure" not in entry["course"]:
        # the lesson's own answers, graded alongside the first students (nothing recorded before they pass):
        # their share of the workers' time, and that share of the batch's wall-clock time
        canary = timings["canary_worker_seconds"]
        share = canary / (canary + sum(timings.get("worker_phases_summed", {}).values()))
        entry["canary_cost"] = share
        entry["canary_seconds"] = share * entry["course"]["seconds"]
    if "speed_up" in entry["course"]:
        entry["speed_up"] = entry["course"]["speed_up"]
        if "speed_up" in entry["nosandbox"]:
            entry["sandbox_cost"] = entry["course"]["seconds"] / entry["nosandbox"]["seconds"] - 1


def answered_notebook(lesson, folder):
    """The lesson's release with every answer filled in from the solution, written to folder/<lesson>/."""
    released = nbformat.read(str(ROOT / "notebooks" / lesson / f"{lesson}.ipynb"), as_version=4)
    nb = with_answers(released, nbformat.read(str(solution_path(lesson)), as_version=4))
    target = Path(folder) / lesson
    shutil.copytree(ROOT / "notebooks" / lesson, target)  # its data files too
    nbformat.write(nb, str(target / f"{lesson}.ipynb"))
    return target / f"{lesson}.ipynb"


def _validate_seconds(path, full, timeout):
    env = {**os.environ, "AUTOGRADE_FULL": "1" if full else "0"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return time.perf_counter() - start, "Success!" in done.stdout


def bench_prune(names, timeout, log):
    """Per lesson: Validate pruned and full (seconds, passed), the share of code cells and of cell seconds pruned."""
    from autograde import prune

    fingerprints = prune.read_fingerprints(ROOT / "notebooks" / ".release_cells.json")
    entries = []
    with tempfile.TemporaryDirectory(prefix="bench_prune_") as folder:
        for lesson in names:
            path = answered_notebook(lesson, folder)
            plan = prune.plan(nbformat.read(str(path), as_version=4).cells, fingerprints)
            with LiveKernel(path, timeout=timeout, quiet=True) as kernel:
                kernel.run_all()
            seconds = dict(kernel.cell_seconds)
            entry = {"lesson": lesson, "cells": len(plan.run) + len(plan.skip), "pruned_cells": len(plan.skip)}
            entry["cell_seconds"] = sum(seconds.values())
            entry["pruned_seconds"] = sum(seconds.get(i, 0.0) for i in plan.skip)
            for key, full in (("validate_pruned", False), ("validate_full", True)):
                entry[key], entry[key + "_passed"] = _validate_seconds(path, full, timeout)
            log(f"  prune: {lesson}: {entry['pruned_cells']}/{entry['cells']} cells, validate "
                f"{entry['validate_pruned']:.1f} s pruned, {entry['validate_full']:.1f} s full")  # fmt: skip
            entries.append(entry)
    return {"lessons": entries, "validate_budget_s": VALIDATE_BUDGET}


def _prune_rows(entry):
    lesson, share = entry["lesson"], entry["pruned_seconds"] / max(entry["cell_seconds"], 1e-9)
    passed = entry["validate_pruned_passed"] == entry["validate_full_passed"]
    status = "" if not passed else "ok" if entry["validate_pruned"] <= VALIDATE_BUDGET else "OVER ✗"
    return [
        (
            "prune",
            f"{lesson}: Validate, pruned vs every cell",
            f"{entry['validate_pruned']:.1f} s vs {entry['validate_full']:.1f} s"
            + ("" if passed else " (verdicts differ)"),
            f"≤ {VALIDATE_BUDGET:.0f} s pruned",
            status if passed else "CHECK ✗",
        ),
        (
            "prune",
            f"{lesson}: left out of a grading run",
            f"{entry['pruned_cells']} of {entry['cells']} code cells, {100 * share:.0f} % of the cell seconds",
            "—",
            "",
        ),
    ]


# ----------------------------------------------------------------------------------------- table
def _mark(value, budget):
    return "ok" if value <= budget else "OVER ✗"


def _grading_rows(grading):
    """The table's rows for one lesson's grading entry (bench_grading)."""
    rows = [_stock_row(grading)]
    for key, label in (("course", "python -m autograde"), ("nosandbox", "python -m autograde --no-sandbox")):
        course = grading.get(key)
        if course is not None:
            label += f" --workers {course['workers']}" if course.get("workers") else ""
            rows.append(_course_row(grading, key, course, label))
    return rows + _cost_rows(grading)


def _stock_row(grading):
    """Stock `nbgrader autograde` on the submissions."""
    what = f"{grading['submissions']} submissions of {grading['lesson']}"
    stock = grading["stock"]
    if "failure" in stock:
        measured, status = f"failed (exit {stock['returncode']}, {stock['graded']} graded)", "ERROR ✗"
    else:
        measured, status = f"{stock['per_minute']:.1f} /min ({stock['seconds']:.0f} s)", ""
    return ("grading", f"nbgrader autograde (stock), {what}", measured, "—", status)


def _course_row(grading, key, course, label):
    """The course's grader on the same submissions (`key`: course, nosandbox), against stock."""
    item = f"{label}, same submissions of {grading['lesson'][:2]}"
    if "missing" in course:
        return ("grading", item, f"n/a ({course['missing']})", "—", "n/a")
    if "failure" in course:
        return ("grading", item, f"failed (exit {course['returncode']})", "—", "ERROR ✗")
    differ = course.get("disagreements")
    agreement = (
        "scores not compared"
        if differ is None
        else "same scores as stock"
        if not differ
        else f"{len(differ)} cell scores differ from stock"
    )
    speed = course.get("speed_up", float("nan"))
    budget, status = "≥ 3× stock", ("CHECK ✗" if differ else "" if speed >= 3 else "UNDER ✗")
    if key == "full":  # every cell executed: what pruning saves (autograde/prune.py)
        budget, status = "—", "CHECK ✗" if differ else ""
    if key == "nosandbox":
        budget = "sandbox costs ≤ 10 %"
        cost = grading.get("sandbox_cost")
        status = "CHECK ✗" if differ else ("" if cost is None or cost <= 0.10 else "OVER ✗")
    measured = f"{course['per_minute']:.1f} /min ({course['seconds']:.0f} s; {speed:.2f}× stock; {agreement})"
    return ("grading", item, measured, budget, status)


def _cost_rows(grading):
    """What the sandbox and the canary cost, when measured."""
    rows = []
    if grading.get("sandbox_cost") is not None:
        cost = grading["sandbox_cost"]
        rows.append(
            ("grading", "cost of the sandbox", f"{100 * cost:+.0f} %", "≤ 10 %", "" if cost <= 0.10 else "OVER ✗")
        )
    if grading.get("canary_cost") is not None:
        cost = grading["canary_cost"]
        rows.append(
            (
                "grading",
                f"cost of the canary (solution and blank graded first), share of the {grading['submissions']}"
                "-submission batch",
                f"{100 * cost:.0f} % ({grading['canary_seconds']:.1f} s)",
                "≤ 10 %",
                "" if cost <= 0.10 else "OVER ✗",
            )
        )
    return rows


def table_rows(results):
    """(part, item, measured, budget, status) rows for every measurement in `results`."""
    rows = _notebook_rows(results.get("notebooks"))
    for grading in [results.get("grading"), *results.get("grading_more", [])]:
        if grading:
            rows += _grading_rows(grading)
    for entry in results.get("prune", {}).get("lessons", []):
        rows += _prune_rows(entry)
    rows += _widget_rows(results.get("widgets"))
    rows += [_paint_row(entry) for entry in (results.get("paint") or {}).get("explorers", [])]
    return rows + _memory_rows(results.get("memory"))


def _notebook_rows(nbs):
    """Each lesson's run time against its budget, the floor, and the lessons together."""
    if not nbs:
        return []
    floor = nbs["floor"]["median_s"]
    rows = [("notebooks", "floor: kernel + imports", f"{floor:.1f} s", "—", "")]
    for name, entry in nbs["lessons"].items():
        ratio_budget = entry.get("floor_ratio_budget")
        within = entry["median_s"] <= entry["budget_s"] and (
            ratio_budget is None or entry["ratio_to_floor"] <= ratio_budget
        )
        status = "ERROR ✗" if entry["errors"] else "ok" if within else "OVER ✗"
        budget = f"≤ {entry['budget_s']:.0f} s" + (f", ≤ {ratio_budget:.0f}× floor" if ratio_budget else " (capstone)")
        rows.append(
            ("notebooks", name, f"{entry['median_s']:.1f} s ({entry['ratio_to_floor']:.1f}× floor)", budget, status)
        )
    core = nbs.get("core_lessons", list(nbs["lessons"]))
    if core:
        rows.append(
            (
                "notebooks",
                f"lessons {core[0][:2]}–{core[-1][:2]} together ({len(core)} notebooks)",
                f"{nbs['total_s']:.1f} s",
                f"≤ {nbs['total_budget_s']:.0f} s",
                _mark(nbs["total_s"], nbs["total_budget_s"]),
            )
        )
    if len(core) < len(nbs["lessons"]):
        rows.append(("notebooks", f"all {len(nbs['lessons'])} lessons", f"{nbs['all_lessons_s']:.1f} s", "—", ""))
    return rows


def _widget_rows(widgets):
    """Each explorer's redraw time (kernel side) against its budget."""
    if not widgets:
        return []
    budget = f"median ≤ {REDRAW_MEDIAN_MS:.0f} ms, p90 ≤ {REDRAW_P90_MS:.0f} ms"
    rows = [] if widgets["explorers"] else [("widgets", "no explorers found", "—", budget, "")]
    for entry in widgets["explorers"]:
        item = f"{entry['lesson']} #{entry['explorer']} ({', '.join(entry['controls']) or 'no controls'})"
        if "median_ms" not in entry:
            rows.append(("widgets", item, "no redraws measured", budget, "n/a"))
            continue
        problems = entry["missed"] or any(s != "figure" for s in entry["statuses"])
        within = entry["median_ms"] <= REDRAW_MEDIAN_MS and entry["p90_ms"] <= REDRAW_P90_MS
        status = "ERROR ✗" if problems else "ok" if within else "OVER ✗"
        measured = f"median {entry['median_ms']:.0f} ms, p90 {entry['p90_ms']:.0f} ms"
        rows.append(("widgets", item, measured, budget, status))
    return rows


def _paint_row(entry):
    """One explorer's typed change to painted image, in Chromium."""
    item = f"{entry['lesson']} #{entry['explorer']}, typed change → image painted (Chromium)"
    budget = f"median ≤ {PAINT_MEDIAN_MS:.0f} ms"
    if "failed" in entry:
        return ("paint", item, f"no new image: {entry['failed'][:60]}", budget, "ERROR ✗")
    measured = (
        f"median {entry['median_ms']:.0f} ms, p90 {entry['p90_ms']:.0f} ms (kernel "
        f"{entry['kernel_median_ms'] or 0:.0f}, decode {entry['decode_median_ms']:.0f}, round trip "
        f"{entry['round_trip_median_ms']:.0f})"
    )
    return ("paint", item, measured, budget, "ok" if entry["median_ms"] <= PAINT_MEDIAN_MS else "OVER ✗")


def _memory_rows(memory):
    """The biggest notebook's peak memory."""
    if not memory:
        return []
    if memory["biggest"]:
        return [
            (
                "memory",
                f"peak RSS, biggest notebook ({memory['biggest']})",
                f"{memory['peak_rss_mib']:.0f} MiB",
                "—",
                "",
            )
        ]
    return [("memory", "peak RSS", "unknown", "—", "n/a")]


def format_table(rows):
    """A Markdown table, aligned so that it reads as well in a terminal."""
    header = ("part", "measurement", "measured", "budget", "")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(5)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


README_START, README_END = "<!-- bench:start -->", "<!-- bench:end -->"


def update_readme(path, text):
    """Replace what lies between the bench markers in README's Performance section by `text`."""
    readme = Path(path).read_text()
    if README_START not in readme or README_END not in readme:
        raise SystemExit(f"{path} has no {README_START} ... {README_END} markers")
    head, rest = readme.split(README_START, 1)
    tail = rest.split(README_END, 1)[1]
    Path(path).write_text(f"{head}{README_START}\n{text.strip()}\n{README_END}{tail}")


def describe_run(results):
    meta = results["meta"]
    return (
        f"{meta['measured_at']} · {meta['cpus']} cores · load average {meta['load_start']:.2f} → "
        f"{meta['load_end']:.2f} · Python {meta['python']}"
    )


# ----------------------------------------------------------------------------------------- main
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--only", default=",".join(PARTS), help="comma-separated parts to run (default: all): " + ",".join(PARTS)
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per notebook, median reported (default 3)")
    parser.add_argument(
        "--lesson",
        default="01_why_attention,11_attention_at_scale",
        help="comma-separated lessons to grade (default 01_why_attention,11_attention_at_scale)",
    )
    parser.add_argument("--submissions", type=int, default=20, help="synthetic submissions to grade (default 20)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count(),
        help="--workers for python -m autograde (default: the number of cores)",
    )
    parser.add_argument("--changes", type=int, default=20, help="measured value changes per explorer (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured changes per explorer first (default 2)")
    parser.add_argument(
        "--lessons",
        default=None,
        help="comma-separated lessons for the notebooks/widgets/memory parts (default: every "
        "lesson in solutions/; an empty string measures only the floor)",
    )
    parser.add_argument("--timeout", type=int, default=300, help="seconds per notebook cell (default 300)")
    parser.add_argument("--grading-timeout", type=int, default=3600, help="seconds per grading command")
    parser.add_argument(
        "--readme",
        action="store_true",
        help="also put the table into README.md's Performance section (between its bench markers)",
    )
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results.json"), help="where to write JSON")
    args = parser.parse_args(argv)
    args.parts = [p.strip() for p in args.only.split(",") if p.strip()]
    args.graded = [n.strip() for n in args.lesson.split(",") if n.strip()]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {sorted(unknown)}; choose from {','.join(PARTS)}")
    available = lessons()
    args.names = available if args.lessons is None else [n.strip() for n in args.lessons.split(",") if n.strip()]
    missing = [n for n in args.names if n not in available] + (
        [n for n in args.graded if n not in available] if "grading" in args.parts else []
    )
    if missing:
        parser.error(f"no solution notebook for {missing}; lessons: {', '.join(available)}")
    return args


def main(argv=None):
    args = parse_args(argv)

    def log(message):
        print(message, file=sys.stderr, flush=True)

    results = {
        "meta": {
            "measured_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "cpus": os.cpu_count(),
            "load_start": os.getloadavg()[0],
            "python": platform.python_version(),
            "platform": platform.platform(),
            "parts": args.parts,
            "lessons": args.names,
            "command": shlex.join(
                ["python", "-m", "course_dev.bench"]
                + [a for a in (sys.argv[1:] if argv is None else argv) if a != "--readme"]
            ),
        }
    }
    if "notebooks" in args.parts:
        log(f"notebooks: floor + {len(args.names)} solution notebook(s), {args.repeat} round(s)")
        results["notebooks"] = bench_notebooks(args.names, args.repeat, args.timeout, log)
    if "grading" in args.parts:
        entries = []
        for lesson in args.graded:
            log(f"grading: {args.submissions} synthetic submissions of {lesson}")
            entries.append(bench_grading(lesson, args.submissions, args.workers, args.grading_timeout, log))
        results["grading"], results["grading_more"] = entries[0], entries[1:]
    if "prune" in args.parts:
        log(
            f"prune: Validate pruned and full, and the share of cells and seconds left out, {len(args.names)} lesson(s)"
        )
        results["prune"] = bench_prune(args.names, args.timeout, log)
    if "widgets" in args.parts:
        log(f"widgets: {args.changes} changes per explorer after {args.warmup} warm-up change(s)")
        results["widgets"] = bench_widgets(args.names, args.changes, args.warmup, args.timeout, log)
    if "paint" in args.parts:
        from course_dev.paint import bench_paint

        log(f"paint: {args.changes} typed changes per explorer, in Chromium")
        results["paint"] = bench_paint([n for n in args.names if _has_explorer(n)], args.changes, log)
    if "memory" in args.parts:
        log("memory: peak RSS of each notebook's kernel")
        results["memory"] = bench_memory(args.names, results.get("notebooks"), args.timeout, log)
    results["meta"]["load_end"] = os.getloadavg()[0]
    rows = table_rows(results)
    results["table"] = [dict(zip(("part", "measurement", "measured", "budget", "status"), r)) for r in rows]
    table = format_table(rows)
    print(f"Benchmarks, {describe_run(results)}\n")
    print(table, flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        print(f"\nwritten to {args.json}", flush=True)
    if args.readme:
        update_readme(ROOT / "README.md", f"`{results['meta']['command']}`, {describe_run(results)}:\n\n{table}")
        print("table written to README.md (Performance)", flush=True)
    return results


if __name__ == "__main__":
    main()
