"""The grading command (python -m autograde) on a temporary copy of the course, as a fresh clone
would run it: no gradebook yet, one batch of lesson 01 with honest students and a submission for
every hostile route and file kind the grader knows (tampering by every route the integrity guard
defeats or flags, vandalising the gradebook or the course, reading solutions/, a daemon, memory in
shared mappings and children, a full scratch folder, hostile JSON, nbformat 3 (random mutants of the
release are in tests/test_autograde_hostile.py, beside an honest control), Unicode and LMS names,
same-name twins, hidden files, another lesson's notebooks, a resubmission). The canary grades the
lesson's own answers first.

The batch is first killed with kill -9 half-way, then run again (it must resume), then once more
(nothing to grade), then again after hand grading (the hand-given points survive). Then: honest
students are graded exactly, every cheat scores 0 for the cell it cheated (and is flagged where the
guard saw it), the course files are byte-identical, no process of the batch is left, and every
submitted file has its row. Two cheap batches check the canary's refusals (a .venv made for another
folder, limits the lesson's own solution cannot run in), and one batch runs as an unprivileged user."""

import copy
import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from harness import ROOT, copy_course, grade_id, read, solution_path
from nbgrader.api import Gradebook

from autograde import prune
from autograde.cells import is_manual, is_solution, is_test, points, with_answers

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading")]
psutil = pytest.importorskip("psutil")

LESSON = "01_why_attention"
CELL_TIMEOUT = 30  # per cell (Execute.timeout in the temporary course): generous, the machine may be busy
CAP = 240  # wall-clock cap per notebook (--timeout)
_SOLUTION = read(solution_path(LESSON))
AUTO = {grade_id(c): points(_SOLUTION)[grade_id(c)] for c in _SOLUTION.cells if is_test(c)}  # autograded cells
FREE = next(grade_id(c) for c in _SOLUTION.cells if is_manual(c))  # the free answer graded by hand
FREE_POINTS = points(_SOLUTION)[FREE]
PARTIAL = {"rnn-step", "quiz-rnn-state-size", "quiz-why-fade"}  # what honestpartial answers
FULL = sum(AUTO.values())
STAMP = "attempt_2026-11-20-10-00-00"


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A fresh clone: configuration, tools, the lesson's solution and committed release, the grader; no gradebook."""
    course = copy_course(tmp_path_factory.mktemp("grading_course"), [LESSON])
    shutil.copytree(ROOT / "notebooks", course / "notebooks")  # every lesson released, as in a real course
    shutil.copytree(ROOT / "autograde", course / "autograde", ignore=shutil.ignore_patterns("__pycache__"))
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}\n")
    return course


# --- submissions ------------------------------------------------------------------------------


def released(course):
    return read(course / "notebooks" / LESSON / f"{LESSON}.ipynb")


def answered(course, ids=None, free=False):
    """The released notebook with the answers in `ids` (all by default) taken from the solution."""
    solution = read(solution_path(LESSON))
    wanted = {grade_id(c) for c in solution.cells if is_solution(c)} if ids is None else set(ids)
    return with_answers(released(course), solution, wanted if free else wanted - {FREE})


def with_answer(course, gid, source, experiments=True):
    """The fully answered notebook with `gid`'s answer replaced by `source`. experiments=False: handed in without
    the cells an honest submission's grade leaves out (the lesson's experiments and explorers), as a student may
    delete cells. A cheat whose code the pruning analysis cannot follow is graded by running every cell; without
    its experiments that full run costs seconds instead of the lesson's training, and tests the same route."""
    nb = answered(course)
    if not experiments:
        leave_out = set(prune.plan(nb.cells, prune.release_fingerprints(released(course))).skip)
        nb.cells = [c for i, c in enumerate(nb.cells) if i not in leave_out]
    next(c for c in nb.cells if grade_id(c) == gid).source = source
    return nb


# rnn_step without the bias: the tests must catch it unless they are tampered with
WRONG = "import numpy as np\ndef rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T)\n"
# right on the visible test's shapes only: the hidden test's random data catches it, unless they are all zeros
SNEAKY = (
    "import numpy as np\ndef rnn_step(h, x, W_h, W_x, b):\n"
    "    if h.shape[-1] == 2:\n        return np.tanh(h @ W_h.T + x @ W_x.T + b)\n    return np.zeros_like(h)\n"
)
HOSTILE = Path(__file__).parent / "fixtures" / "hostile"  # the hostile students' code, a file each (README.md)
HOGS = ("tshm", "tkids", "tdisk")  # memory the old per-process limits did not count; a scratch folder filled in files


def hostile_code(name, **paths):
    """The code in tests/fixtures/hostile/<name>.py, a placeholder such as "@COURSE@" replaced by paths["course"]."""
    text = (HOSTILE / f"{name}.py").read_text()
    for key, value in paths.items():
        text = text.replace(f'"@{key.upper()}@"', repr(value))
    return text


# tampering routes the run-time guard undoes before a test and names in its flags
RUNTIME_ROUTES = {
    "tsysmodules": "sys.modules['attention_course.checks'] replaced",
    "tnumpy": "numpy: rebinds tanh",
    "tbuiltins": "builtins: rebinds abs",
    "tclass": "class torch.nn.modules.rnn.RNNCell: patches forward",
    "ttorchdict": "torch.nn: rebinds RNNCell",
}


def broken(course, *edits):
    """An honest, fully answered notebook as JSON with its metadata damaged by `edits`."""
    data = json.loads(nbformat.writes(answered(course)))
    graded = [c for c in data["cells"] if "nbgrader" in c["metadata"]]
    for edit in edits:
        edit(graded)
    return json.dumps(data)


def hostile(course):
    """{download file name: notebook, text, bytes or None}, and {student: kind} for the checks below."""
    subs, kinds = {}, {}

    def add(student, nb, kind, name=None):
        subs[name or f"{student}_{STAMP}_{LESSON}.ipynb"] = nb
        kinds[student] = kind

    add("honestfull", answered(course, free=True), "honest")
    subs[f"honestfull_{STAMP}_numpy.py"] = hostile_code("shadow_numpy")  # attached: must never reach the kernel
    add("honestpartial", answered(course, PARTIAL), "honest")
    add_cheats(course, add)
    add_lms_routes(course, add, subs)
    add_odd_files(course, add, subs)
    return subs, kinds


def add_cheats(course, add):
    """Students who vandalise, leave a daemon, exhaust a limit, or tamper with what the tests use."""
    # reads solutions/, then vandalises the gradebook and the course: the sandbox shows it none of them
    sol = course / "solutions" / LESSON / f"{LESSON}.ipynb"
    vandal = hostile_code("vandal", solution=str(sol), course=str(course))
    add("tvandal", with_answer(course, "rnn-step", WRONG + vandal, experiments=False), "cheat")
    add("daemon", with_answer(course, "quiz-why-fade", hostile_code("daemon")), "daemon")
    for student in HOGS:
        add(student, with_answer(course, "quiz-rnn-state-size", hostile_code(f"hog_{student}")), "limit")
    # the check helpers rebound by three routes, in one notebook: any of them working would pass rnn-step
    add("thelpers", with_answer(course, "rnn-step", WRONG + hostile_code("helpers_rebound"), False), "cheat")
    runtime = "\n".join(hostile_code(f"route_{student}") for student in RUNTIME_ROUTES)
    # handed in with the experiments: a full run of the whole lesson beside a cheat
    add("truntime", with_answer(course, "rnn-step", WRONG + runtime + "\n"), "cheat")
    add("tinspect", with_answer(course, "rnn-step", WRONG + hostile_code("inspects"), False), "cheat")
    # a notebook global named like a builtin the tests use (issue 30 item 1): once gave 10/10 for wrong code
    add("tforzip", with_answer(course, "rnn-step", WRONG + hostile_code("for_zip")), "cheat")
    add("tglobalzip", with_answer(course, "rnn-step", WRONG + hostile_code("global_zip")), "cheat")


def add_lms_routes(course, add, subs):
    """The routes of issue 21, each under a name an LMS might give; another lesson's notebooks."""
    displayhook = WRONG.replace("    return", "    import sys\n    sys.displayhook(2)\n    return")
    add("kim", with_answer(course, "rnn-step", displayhook, False), "cheat", name=f"kim_{LESSON}.ipynb")
    for other in sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name != LESSON):
        subs[f"kim_{other}.ipynb"] = read(ROOT / "notebooks" / other / f"{other}.ipynb")
    walker_code = hostile_code("frame_walker")  # walks to the test's frame and answers what the test expects
    # with the experiments: one of them, not a test, is where the walker reads a frame (the guard flags it)
    walker = with_answer(course, "rnn-step", walker_code + "def rnn_step(h, x, W_h, W_x, b):\n    return Walker()\n")
    next(c for c in walker.cells if grade_id(c) == "quiz-rnn-state-size").source = walker_code + "q1_answer = Walker()"
    add("smithjohn-1002", walker, "cheat", name=f"smithjohn_1002_5002_{LESSON}.ipynb")
    v3 = nbformat.writes(nbformat.convert(answered(course), 3), version=3)
    add("smithjohn-1001", v3, "honest", name=f"smithjohn_1001_5001_{LESSON}.ipynb")
    zeros = with_answer(course, "rnn-step", SNEAKY + hostile_code("random_zeros"), False)
    add("Ada-Lovelace", zeros, "cheat", name=f"Ada Lovelace_77_assignsubmission_file_{LESSON}.ipynb")
    add("李娜", with_answer(course, "rnn-step", WRONG + hostile_code("post_run_restore"), False), "cheat")


def add_odd_files(course, add, subs):
    """Names that are not ids, and files that could stop a batch: damaged metadata, hostile JSON, a hidden file,
    a resubmission, a kernel that exits, no notebook at all."""
    jose = broken(
        course,
        lambda g: g[0].__setitem__("metadata", "a string"),
        lambda g: g[2]["metadata"]["nbgrader"].__setitem__("grade_id", ["a", "list"]),
        lambda g: g[1]["metadata"]["nbgrader"].__setitem__("points", "20"),
    )
    add("José-García", jose, "honest", name=f"José García_{STAMP}_{LESSON}.ipynb")
    add("王伟", '{"cells": [], "n": ' + "7" * 5000 + "}", "failed")
    add("HYPERLINK-1", "[" * 100_000 + "]" * 100_000, "failed", name=f"=HYPERLINK(1)_{STAMP}_{LESSON}.ipynb")
    add(
        "u1f642", json.dumps({"nbformat": 3, "worksheets": [{"cells": 7}]}), "failed", name=f"🙂_{STAMP}_{LESSON}.ipynb"
    )
    subs[f".ghost_{STAMP}_{LESSON}.ipynb"] = nbformat.writes(answered(course))
    add("resub", answered(course, set()), "resubmitted", name=f"resub_attempt_2026-11-20-09-00-00_{LESSON}.ipynb")
    subs[f"resub_attempt_2026-11-20-11-00-00_{LESSON}.ipynb"] = answered(course)
    add("osexit", with_answer(course, "quiz-why-fade", hostile_code("os_exit")), "failed")
    add("invalidjson", nbformat.writes(answered(course))[:5000], "failed")
    add("missingnb", None, "failed", name=f"missingnb_{STAMP}_notes.txt")


def write_downloads(folder, subs):
    archive = folder / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    for name, nb in subs.items():
        path = archive / name
        if nb is None:
            path.write_text("I could not get the notebook to open.")
        elif isinstance(nb, bytes):
            path.write_bytes(nb)
        elif isinstance(nb, str):
            path.write_text(nb)
        else:
            nbformat.write(nb, str(path))


def command(course, downloads, *extra):
    return [
        sys.executable,
        "-m",
        "autograde",
        LESSON,
        str(downloads),
        "--workers",
        "2",
        "--timeout",
        str(CAP),
        "--quiet",
        *extra,
    ]


def run_grade(course, downloads, *extra):
    start = time.perf_counter()
    result = subprocess.run(command(course, downloads, *extra), cwd=course, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return time.perf_counter() - start, result


def out_dir(course):
    return course / "grading" / "runs" / LESSON


def read_grades(course):
    """The rows of grades.csv, with the apostrophe that keeps a spreadsheet from running a cell taken off."""
    with open(out_dir(course) / "grades.csv") as fh:
        return [{k: unescaped(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def unescaped(value):
    return value[1:] if value.startswith("'") and value[1:2] in ("=", "+", "-", "@", "\t", "\r") else value


def course_files(course):
    """sha256 of every file of the course outside the grading state."""
    digest = {}
    for path in sorted(course.rglob("*")):
        rel = path.relative_to(course)
        if path.is_file() and rel.parts[0] != "grading" and "__pycache__" not in rel.parts:
            digest[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def leftovers(course):
    """Processes of the batch still running: the daemon, workers of this course, and any sandbox or
    kernel whose grading worker is gone."""
    from autograde.sandbox import orphans

    found = [f"orphaned sandbox or kernel, pid {pid}" for pid in orphans()]
    for p in psutil.process_iter(["cmdline", "cwd"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            if (
                "sleep 777" in cmd
                or (("autograde" in cmd or "bwrap" in cmd) and str(course) in cmd)
                or (p.info["cwd"] or "").startswith(str(course))
                and "autograde" in cmd
            ):
                found.append(cmd[:120])
        except psutil.Error:
            pass
    return found


@pytest.fixture(scope="session")
def batch(course, tmp_path_factory):
    subs, kinds = hostile(course)
    downloads = tmp_path_factory.mktemp("downloads")
    write_downloads(downloads, subs)
    before = course_files(course)

    # run A, killed with kill -9 once two students are committed
    proc = subprocess.Popen(
        command(course, downloads),
        cwd=course,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = out_dir(course) / "results"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and proc.poll() is None:
        if (
            results.is_dir()
            and sum(1 for p in results.glob("*.json") if json.loads(p.read_text())["status"] == "graded") >= 2
        ):
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    committed = {
        p.stem: p.stat().st_mtime for p in results.glob("*.json") if json.loads(p.read_text())["status"] == "graded"
    }
    deadline = time.monotonic() + 30  # the death signals travel worker -> bwrap -> kernel; a busy machine is slow
    while (left_after_kill := leftovers(course)) and time.monotonic() < deadline:
        time.sleep(0.5)

    seconds, result = run_grade(course, downloads)  # run B: resumes
    print(f"\nresumed batch of {len(subs)} files graded in {seconds:.1f} s")
    rows = read_grades(course)
    time.sleep(1)
    return dict(
        course=course,
        downloads=downloads,
        kinds=kinds,
        subs=subs,
        rows=rows,
        before=before,
        committed=committed,
        left_after_kill=left_after_kill,
        left=leftovers(course),
        result=result,
    )


def by_student(rows):
    """{student: the row of the file graded for them (or the row that says why none was)}."""
    graded = {}
    for row in rows:
        if not row["status"].startswith(("superseded", "not this lesson", "not graded", "extra file")):
            graded.setdefault(row["student"], row)
    for row in rows:
        graded.setdefault(row["student"], row)
    return graded


# --- tests --------------------------------------------------------------------------------------


def test_every_file_has_exactly_one_row(batch):
    rows = batch["rows"]
    files = [r["file"].split("/")[-1] for r in rows]
    assert sorted(files) == sorted(batch["subs"]), "one row per submitted file"
    assert all(r["status"] for r in rows)
    status = {r["file"].split("/")[-1]: r["status"] + (f" ({r['reason']})" if r["reason"] else "") for r in rows}
    assert status[f".ghost_{STAMP}_{LESSON}.ipynb"].startswith("not graded (a hidden file")
    assert status[f"honestfull_{STAMP}_numpy.py"].startswith("extra file")
    for other in (p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name != LESSON):
        assert status[f"kim_{other}.ipynb"] == f"not this lesson (looks like {other})"
    jose = next(r for r in rows if r["file"].startswith("José García"))
    assert jose["student"] == "José-García" and "José García" in jose["flags"]
    students = {r["student"] for r in rows}
    assert {"王伟", "李娜", "u1f642", "smithjohn-1001", "smithjohn-1002", "Ada-Lovelace"} <= students
    twins = [r for r in rows if r["student"].startswith("smithjohn")]
    assert len(twins) == 2 and all("check who is who" in r["flags"] for r in twins)
    text = (out_dir(batch["course"]) / "grades.csv").read_text()
    assert "'=HYPERLINK(1)" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text


def test_honest_students_are_graded_exactly(batch):
    rows = by_student(batch["rows"])
    full, partial = rows["honestfull"], rows["honestpartial"]
    assert {k: float(full[k]) for k in AUTO} == {k: float(v) for k, v in AUTO.items()}, "numpy.py was not imported"
    assert full[FREE] == "" and full["status"] == "needs manual grading" and not full["flags"]
    assert (
        float(partial["total"]) == sum(AUTO[f"{g}-tests"] for g in PARTIAL)
        and partial[FREE] == "0"
        and partial["status"] == "graded"
    )
    assert not partial["flags"]
    assert float(rows["José-García"]["total"]) == FULL, "metadata of the wrong type is repaired, not fatal"
    assert float(rows["smithjohn-1001"]["total"]) == FULL, "an nbformat 3 notebook is converted and graded"
    assert float(full["max"]) == FULL + FREE_POINTS


def test_every_cheat_scores_0_for_the_cell_it_cheated(batch):
    rows = by_student(batch["rows"])
    problems = [
        f"{student}: {rows[student]['rnn-step-tests']} points for rnn_step ({rows[student]['status']})"
        for student, kind in batch["kinds"].items()
        if kind == "cheat" and rows[student]["rnn-step-tests"] != "0"
    ]
    assert not problems, "\n".join(problems)
    assert rows["smithjohn-1002"]["quiz-rnn-state-size-tests"] == "0", "a quiz answer that reads the test's frame"
    assert "reads tb_frame" in rows["smithjohn-1002"]["flags"]
    assert "expect_close" in rows["thelpers"]["flags"]
    assert "numpy.random: rebinds default_rng" in rows["Ada-Lovelace"]["flags"]
    assert "pre_run_cell callback" in rows["李娜"]["flags"]
    inspects = rows["tinspect"]["flags"]
    assert "gc.get_referents" in inspects and "ctypes" in inspects and "attention_course.checks" in inspects
    runtime_flags = rows["truntime"]["flags"]
    for student, what in RUNTIME_ROUTES.items():
        assert f"at run time: {what}" in runtime_flags, (student, runtime_flags)
    assert "started a process" in rows["daemon"]["flags"]
    for student in ("tforzip", "tglobalzip"):
        assert "the notebook's global 'zip' shadows the builtin zip" in rows[student]["flags"], rows[student]
    for row in rows.values():
        assert float(row["rnn-step-tests"] or 0) <= AUTO["rnn-step-tests"]  # never more than the cell is worth


def test_limits_and_failures_have_statuses(batch):
    rows = by_student(batch["rows"])
    assert (rows["tshm"]["status"], rows["tshm"]["reason"]) == ("failed to run", "memory limit 2 GiB") and rows["tshm"][
        "total"
    ] == ""
    assert (rows["tkids"]["status"], rows["tkids"]["reason"]) == ("failed to run", "memory limit 2 GiB")
    assert (rows["tdisk"]["status"], rows["tdisk"]["reason"]) == ("failed to run", "disk limit 1 GiB")
    assert rows["osexit"]["status"] == "failed to run" and rows["osexit"]["reason"].startswith("the kernel died")
    assert (rows["invalidjson"]["status"], rows["invalidjson"]["reason"]) == ("failed to run", "invalid JSON")
    assert rows["王伟"]["status"] == "failed to run" and rows["王伟"]["reason"].startswith(
        "invalid JSON (Exceeds the limit"
    )
    assert (rows["HYPERLINK-1"]["status"], rows["HYPERLINK-1"]["reason"]) == (
        "failed to run",
        "invalid JSON (nested too deeply)",
    )
    assert rows["u1f642"]["status"] == "failed to run" and rows["u1f642"]["reason"].startswith(
        "an nbformat 3 notebook that could not be converted"
    )
    assert (rows["missingnb"]["status"], rows["missingnb"]["reason"]) == ("failed to run", "no notebook submitted")
    summary = (out_dir(batch["course"]) / "summary.txt").read_text()
    assert "Isolation: bubblewrap sandbox per notebook" in summary
    assert json.loads((out_dir(batch["course"]) / "canary.json").read_text())["problems"] == []


def test_resubmission_the_later_file_wins(batch):
    rows = [r for r in batch["rows"] if r["student"] == "resub"]
    assert len(rows) == 2
    early, late = sorted(rows, key=lambda r: r["file"])
    assert early["status"].startswith("superseded") and early["total"] == ""
    assert float(late["total"]) == FULL


def test_the_course_and_the_gradebook_are_untouched(batch):
    course = batch["course"]
    assert course_files(course) == batch["before"], "the course files must be byte-identical"
    with Gradebook(f"sqlite:///{course}/grading/gradebook.db") as gb:
        honest = {g.name: g.auto_score for nb in gb.find_submission(LESSON, "honestfull").notebooks for g in nb.grades}
    assert {k: honest[k] for k in AUTO} == {k: float(v) for k, v in AUTO.items()}
    assert list((course / "grading" / "snapshots").glob("gradebook-*.db")), "a batch starts with a snapshot"


def test_nothing_of_the_batch_is_left_running(batch):
    assert not batch["left_after_kill"], f"left after kill -9: {batch['left_after_kill']}"
    assert not batch["left"], f"left after the batch: {batch['left']}"
    from pathlib import Path

    stale = [p.name for p in Path("/tmp").glob("ag[ks]-*-*") if not psutil.pid_exists(int(p.name.split("-")[1]))]
    assert not stale, f"scratch folders of killed kernels were not removed: {stale}"


def test_feedback_hides_hidden_tests(batch):
    folder = out_dir(batch["course"]) / "feedback"
    secret = "_rnn_step_hidden"
    assert any(secret in c.source for c in read(solution_path(LESSON)).cells)
    pages = list(folder.glob("*.html"))
    assert {p.stem for p in pages} >= {"honestfull", "tshm", "invalidjson"}
    for page in pages:
        text = page.read_text()
        assert secret not in text and "BEGIN HIDDEN TESTS" not in text, page.name
    assert "invalid JSON" in (folder / "invalidjson.html").read_text()


def test_kill_minus_9_loses_nothing_and_the_next_run_resumes(batch):
    results = out_dir(batch["course"]) / "results"
    assert len(batch["committed"]) >= 2
    for student, mtime in batch["committed"].items():
        assert (results / f"{student}.json").stat().st_mtime == mtime, f"{student} was graded again after the kill"


def test_rerun_is_idempotent_and_hand_given_points_survive(batch):
    course, downloads = batch["course"], batch["downloads"]
    logs = out_dir(course) / "logs"
    before = {p.name: p.stat().st_mtime for p in logs.glob("*.log") if not p.name.startswith("worker")}
    run_grade(course, downloads)
    assert read_grades(course) == batch["rows"]
    assert {p.name: p.stat().st_mtime for p in logs.glob("*.log") if not p.name.startswith("worker")} == before
    with Gradebook(f"sqlite:///{course}/grading/gradebook.db") as gb:
        grade = gb.find_grade(FREE, LESSON, LESSON, "honestfull")
        grade.manual_score = 2  # what the formgrader does when a grader saves a score
        grade.needs_manual_grade = False
        gb.db.commit()
    # the student's file changes (a note added): it is graded again, the hand-given points stay
    name = f"honestfull_{STAMP}_{LESSON}.ipynb"
    nb = copy.deepcopy(batch["subs"][name])
    nb.cells.append(nbformat.v4.new_markdown_cell("(resubmitted with a note)"))
    nbformat.write(nb, str(downloads / "archive" / name))
    run_grade(course, downloads)
    row = by_student(read_grades(course))["honestfull"]
    assert row[FREE] == "2" and float(row["total"]) == FULL + 2 and row["status"] == "graded"
    assert "2" in (out_dir(course) / "feedback" / "honestfull.html").read_text()


def test_the_canary_refuses_limits_the_lessons_own_solution_cannot_run_in(batch):
    """Nothing is graded when the lesson's solution cannot run (here: 100 MiB of memory for a kernel that
    imports torch): the refusal says so, and no student's result changes."""
    course, downloads = batch["course"], batch["downloads"]
    results = out_dir(course) / "results"
    before = {p.name: p.stat().st_mtime for p in results.glob("*.json")}
    result = subprocess.run(
        command(course, downloads, "--force", "--memory", "100M"), cwd=course, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "Refusing to grade" in result.stderr and "the lesson's solution failed to run (memory limit 100 MiB)" in (
        result.stderr
    )
    assert {p.name: p.stat().st_mtime for p in results.glob("*.json")} == before


@pytest.mark.xdist_group("grading-alone")  # needs no batch: free to run beside it
def test_the_canary_refuses_a_course_whose_venv_belongs_to_another_folder(tmp_path):
    """A course folder with a .venv made for another checkout (a shared or moved venv): the kernel would
    import the other folder's helper package. The grader refuses before grading anyone, naming both."""
    from autograde.sandbox import kernel_environment

    course = copy_course(tmp_path / "moved", [LESSON], extra=("attention_course",))
    shutil.copytree(ROOT / "notebooks" / LESSON, course / "notebooks" / LESSON)
    shutil.copytree(ROOT / "autograde", course / "autograde", ignore=shutil.ignore_patterns("__pycache__"))
    (course / ".venv").symlink_to(Path(sys.executable).parent.parent)  # the venv made for this checkout
    downloads = tmp_path / "downloads"
    write_downloads(downloads, {f"ada_{STAMP}_{LESSON}.ipynb": answered(course)})
    python = str(course / ".venv" / "bin" / "python")
    result = subprocess.run(
        [python, "-m", "autograde", LESSON, str(downloads), "--quiet"], cwd=course, capture_output=True, text=True
    )
    theirs = kernel_environment(sys.executable)["helpers"][0]
    assert result.returncode != 0 and "Refusing to grade" in result.stderr
    assert f"the kernel imports attention_course from {theirs}" in result.stderr
    assert str(course / "attention_course") in result.stderr and "make venv" in result.stderr
    assert not (out_dir(course) / "grades.csv").exists() and not (course / "grading" / "submitted").exists()


def unprivileged(cmd, readable):
    """`cmd` as the user nobody (when this runs as root), with the folders in `readable` readable by it:
    an ancestor only root may enter (/root is mode 700) is replaced, in a mount namespace of its own, by
    an empty folder anyone may enter, with those folders bound into it."""
    if os.geteuid() != 0:
        return cmd
    wrap = ["bwrap", "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"]
    wrap += ["--bind", "/sys", "/sys"] + (["--bind", "/tmp", "/tmp"] if os.path.ismount("/tmp") else [])
    closed = sorted(
        {str(a) for p in readable for a in Path(p).parents if a != Path("/") and not a.stat().st_mode & 0o001}
    )
    for folder in closed:
        if any(folder.startswith(other + "/") for other in closed):
            continue
        wrap += ["--perms", "0755", "--tmpfs", folder]
        for path in (Path(p) for p in readable if str(p).startswith(folder + "/")):
            between = [a for a in reversed(path.parents) if str(a).startswith(folder + "/")]
            wrap += [x for a in between for x in ("--perms", "0755", "--dir", str(a))]
            wrap += ["--ro-bind", str(path), str(path)]
    return [*wrap, "--", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *cmd]


@pytest.mark.xdist_group("grading-alone")  # needs no batch: free to run beside it
def test_grading_as_an_unprivileged_user(tmp_path_factory):
    """The same command run by nobody (grading on a laptop, or in a container without root): the sandbox
    through user namespaces, limits measured (no writable cgroup), the canary first; an honest student
    exact, a cheat 0."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="grading-nobody-", dir="/tmp"))  # pytest's own tmp is mode 700
    try:
        course = copy_course(base / "course", [LESSON])
        shutil.copytree(ROOT / "notebooks" / LESSON, course / "notebooks" / LESSON)
        shutil.copytree(ROOT / "autograde", course / "autograde", ignore=shutil.ignore_patterns("__pycache__"))
        downloads = base / "downloads"
        write_downloads(
            downloads,
            {
                f"ada_{STAMP}_{LESSON}.ipynb": answered(course),
                f"bob_{STAMP}_{LESSON}.ipynb": with_answer(
                    course, "rnn-step", WRONG + "checks.expect_close = print", False
                ),
            },
        )
        if os.geteuid() == 0:
            for path in [base, *base.rglob("*")]:
                os.chown(path, 65534, 65534, follow_symlinks=False)
            base.chmod(0o755)
        env = dict(os.environ, HOME=str(base), MPLCONFIGDIR=str(base / "mpl"))
        env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
        needed = [Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent.parent, ROOT]
        cmd = [sys.executable, "-m", "autograde", LESSON, str(downloads), "--workers", "2", "--timeout", str(CAP)]
        result = subprocess.run(unprivileged(cmd, needed), cwd=course, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        rows = by_student(read_grades(course))
        assert float(rows["ada"]["total"]) == FULL and rows["bob"]["rnn-step-tests"] == "0"
        summary = (out_dir(course) / "summary.txt").read_text()
        assert "your uid in a user namespace" in summary and "measured" in summary
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(
    os.environ.get("ATTENTION_COURSE_PRUNE_ALL") != "1",
    reason="6 minutes on 2 cores: run with ATTENTION_COURSE_PRUNE_ALL=1 (before a release); lesson 01's catalog is "
    "proven pruned = full (tests/test_prune_equivalence.py: two rounds in make test, all in make test-full)",
)
def test_every_cell_executed_gives_the_same_rows(batch, tmp_path):
    """Pruning (autograde/prune.py) changes no row of the hostile batch: graded again with --full (every cell
    executed), into its own report folder and gradebook, every file gets the same scores, status and flags."""
    out = tmp_path / "full"
    run_grade(batch["course"], batch["downloads"], "--full", "--force", "--out", str(out), "--db-url",
              f"sqlite:///{tmp_path / 'full.db'}")  # fmt: skip

    def key(rows):
        keep = [c for c in rows[0] if c.endswith("-tests") or c in ("total", "status", "flags")]
        return {r["file"]: {c: r[c] for c in keep} for r in rows}

    with open(out / "grades.csv") as fh:
        full = [{k: unescaped(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    pruned = [r for r in batch["rows"] if r["file"] in {f["file"] for f in full}]
    assert key(full) == key(pruned)
