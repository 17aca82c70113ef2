"""The grading command (python -m autograde) on a temporary copy of the course, as a fresh clone
would run it: no gradebook yet, one batch of lesson 01 with honest students and a submission of
every hostile kind (vandalising the gradebook or the course, reading solutions/, a daemon, a memory
hog, tampering with the checks by every route, an unreadable name, a resubmission).

The batch is first killed with kill -9 half-way, then run again (it must resume), then once more
(nothing to grade), then again after hand grading (the hand-given points survive). Then: honest
students are graded exactly, every cheat gets no points or is flagged, the course files are
byte-identical, no process of the batch is left, and every submitted file has its row."""

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

import nbformat
import pytest
from harness import ROOT, copy_course, grade_id, nbgrader_meta, read, solution_path
from nbgrader.api import Gradebook

from course_dev.cells import is_manual, is_test, points

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
    shutil.copytree(ROOT / "notebooks" / LESSON, course / "notebooks" / LESSON)
    shutil.copytree(ROOT / "autograde", course / "autograde", ignore=shutil.ignore_patterns("__pycache__"))
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}\n")
    return course


# --- submissions ------------------------------------------------------------------------------


def released(course):
    return read(course / "notebooks" / LESSON / f"{LESSON}.ipynb")


def answered(course, ids=None, free=False):
    """The released notebook with the answers in `ids` (all by default) taken from the solution."""
    solution = {grade_id(c): c.source for c in read(solution_path(LESSON)).cells if grade_id(c)}
    nb = released(course)
    for cell in nb.cells:
        gid = grade_id(cell)
        if nbgrader_meta(cell).get("solution") and (ids is None or gid in ids) and (gid != FREE or free):
            cell.source = solution[gid]
    return nb


def with_answer(course, gid, source):
    nb = answered(course)
    next(c for c in nb.cells if grade_id(c) == gid).source = source
    return nb


# rnn_step without the bias: the tests must catch it unless they are tampered with
WRONG = "import numpy as np\ndef rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T)\n"
NOOP = "lambda *a, **k: None"
# tampering routes the run-time guard must see (a static rule may see them too), and what its flag says of each
RUNTIME_ROUTES = {
    "tsysmodules": "sys.modules['attention_course.checks'] replaced",
    "tnumpy": "numpy: rebinds tanh",
    "tbuiltins": "builtins: rebinds abs",
    "tclass": "class torch.nn.modules.rnn.RNNCell: patches forward",
    "ttorchdict": "torch.nn: rebinds RNNCell",
}


def hostile(course):
    """{download file name: notebook, text or None}, and {student: kind} for the checks below."""
    root = str(course)
    sol = str(course / "solutions" / LESSON / f"{LESSON}.ipynb")
    subs, kinds = {}, {}

    def add(student, nb, kind, name=None):
        subs[name or f"{student}_{STAMP}_{LESSON}.ipynb"] = nb
        kinds[student] = kind

    add("honestfull", answered(course, free=True), "honest")
    add("honestpartial", answered(course, PARTIAL), "honest")
    add(
        "vandaldb",
        with_answer(
            course,
            "rnn-step",
            WRONG
            + f"""
import os, sqlite3
hits = []
for top in [os.getcwd(), {root!r}, '/']:
    d = top
    while True:
        for dirpath, _, files in os.walk(d):
            for f in files:
                if f.endswith('.db'):
                    hits.append(os.path.join(dirpath, f))
            break
        if d == os.path.dirname(d):
            break
        d = os.path.dirname(d)
for path in hits:
    try:
        con = sqlite3.connect(path); con.execute('DELETE FROM grade'); con.commit()
    except Exception as err:
        print('could not vandalise', path, err)
""",
        ),
        "cheat",
    )
    add(
        "vandalfiles",
        with_answer(
            course,
            "rnn-step",
            WRONG
            + f"""
import shutil
for sub in ['notebooks/{LESSON}', 'solutions/{LESSON}', 'autograde', 'grading']:
    shutil.rmtree({root!r} + '/' + sub, ignore_errors=True)
""",
        ),
        "cheat",
    )
    add(
        "readsolution",
        with_answer(
            course,
            "rnn-step",
            f"""
import json
nb = json.load(open({sol!r}))
for cell in nb['cells']:
    if cell.get('metadata', {{}}).get('nbgrader', {{}}).get('grade_id') == 'rnn-step':
        exec(''.join(cell['source']))
""",
        ),
        "cheat",
    )
    add(
        "daemon",
        with_answer(
            course,
            "quiz-why-fade",
            "import subprocess\nsubprocess.Popen(['sleep', '777'], start_new_session=True)\nq3_answer = 'b'",
        ),
        "daemon",
    )
    add(
        "memhog",
        with_answer(course, "quiz-rnn-state-size", "import numpy as np\nhog = np.ones(3 * 10**9 // 8)\nq1_answer = 64"),
        "limit",
    )
    # tampering by every route: a wrong rnn_step that the tampering would let pass
    routes = {
        "talias": f"import attention_course.checks as zz\nzz.expect_close = {NOOP}",
        "timportlib": "import importlib\n"
        f"importlib.import_module('attention_course.checks').__dict__['expect_close'] = {NOOP}",
        "tsetattr": f"setattr(checks, 'expect_close', {NOOP})",
        "tsysmodules": "import sys, types\nfake = types.ModuleType('attention_course.checks')\n"
        "fake.__dict__.update(vars(sys.modules['attention_course.checks']))\n"
        f"fake.expect_close = {NOOP}\nsys.modules['attention_course.checks'] = fake\n"
        "from attention_course import checks",
        "tnumpy": "import numpy as xx\nxx.tanh = lambda v: v",
        "tbuiltins": "import builtins\nbuiltins.abs = lambda v: 0",
        "tclass": "import torch\ntorch.nn.RNNCell.forward = lambda self, x, h=None: h",
        "ttorchdict": "import torch\ntorch.nn.__dict__['RNNCell'] = type('RNNCell', (), {})",
    }
    for student, code in routes.items():
        if student not in RUNTIME_ROUTES:
            add(student, with_answer(course, "rnn-step", WRONG + code + "\n"), "cheat")
    # the routes only the run-time guard sees, in one notebook: it names each thing changed (one run, not five)
    runtime = "\n".join(routes[student] for student in RUNTIME_ROUTES)
    add("truntime", with_answer(course, "rnn-step", WRONG + runtime + "\n"), "cheat")
    add("Jose-Garcia", answered(course), "honest", name=f"José García_{STAMP}_{LESSON}.ipynb")
    add("resub", answered(course, set()), "resubmitted", name=f"resub_attempt_2026-11-20-09-00-00_{LESSON}.ipynb")
    subs[f"resub_attempt_2026-11-20-11-00-00_{LESSON}.ipynb"] = answered(course)
    add("osexit", with_answer(course, "quiz-why-fade", "import os\nos._exit(0)"), "failed")
    add("invalidjson", nbformat.writes(answered(course))[:5000], "failed")
    add("missingnb", None, "failed", name=f"missingnb_{STAMP}_notes.txt")
    return subs, kinds


def write_downloads(folder, subs):
    archive = folder / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    for name, nb in subs.items():
        path = archive / name
        if nb is None:
            path.write_text("I could not get the notebook to open.")
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
    with open(out_dir(course) / "grades.csv") as fh:
        return list(csv.DictReader(fh))


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
    graded = {}
    for row in rows:
        if not row["status"].startswith("superseded"):
            graded.setdefault(row["student"], row)
    return graded


# --- tests --------------------------------------------------------------------------------------


def test_every_file_has_exactly_one_row(batch):
    rows = batch["rows"]
    files = [r["file"].split("/")[-1] for r in rows]
    assert sorted(files) == sorted(batch["subs"]), "one row per submitted file"
    assert all(r["status"] for r in rows)
    jose = next(r for r in rows if r["file"].startswith("José García"))
    assert jose["student"] == "Jose-Garcia" and "José García" in jose["flags"]


def test_honest_students_are_graded_exactly(batch):
    rows = by_student(batch["rows"])
    full, partial = rows["honestfull"], rows["honestpartial"]
    assert {k: float(full[k]) for k in AUTO} == {k: float(v) for k, v in AUTO.items()}
    assert full[FREE] == "" and full["status"] == "needs manual grading" and not full["flags"]
    assert (
        float(partial["total"]) == sum(AUTO[f"{g}-tests"] for g in PARTIAL)
        and partial[FREE] == "0"
        and partial["status"] == "graded"
    )
    assert not partial["flags"]
    assert float(rows["Jose-Garcia"]["total"]) == FULL
    assert float(full["max"]) == FULL + FREE_POINTS


def test_every_cheat_gets_no_points_or_is_flagged(batch):
    rows = by_student(batch["rows"])
    problems = []
    for student, kind in batch["kinds"].items():
        row = rows[student]
        if kind in ("cheat", "daemon") and not (row["flags"] or row["rnn-step-tests"] in ("0", "")):
            problems.append(f"{student}: {row['rnn-step-tests']} points for rnn_step, no flag ({row['status']})")
    assert not problems, "\n".join(problems)
    for student in ("talias", "timportlib", "tsetattr"):  # the helper package returns its own functions
        assert rows[student]["rnn-step-tests"] == "0" and "expect_close" in rows[student]["flags"], rows[student]
    runtime_flags = rows["truntime"]["flags"]
    for student, what in RUNTIME_ROUTES.items():
        assert f"at run time: {what}" in runtime_flags, (student, runtime_flags)
    assert rows["readsolution"]["rnn-step-tests"] == "0"


def test_limits_and_failures_have_statuses(batch):
    rows = by_student(batch["rows"])
    assert rows["memhog"]["status"] == "failed to run (memory limit 2 GiB)" and rows["memhog"]["total"] == ""
    assert rows["osexit"]["status"].startswith("failed to run (the kernel died")
    assert rows["invalidjson"]["status"] == "failed to run (invalid JSON)"
    assert rows["missingnb"]["status"] == "failed to run (no notebook submitted)"
    summary = (out_dir(batch["course"]) / "summary.txt").read_text()
    assert "Isolation: bubblewrap sandbox per notebook" in summary


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
    assert {p.stem for p in pages} >= {"honestfull", "memhog", "invalidjson"}
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
