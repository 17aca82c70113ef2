"""The class-grading command (autograde/grade.py) on a temporary copy of the course: one batch with two
honest students and one submission of every hostile kind must finish, grade the honest ones right,
give every hostile one the expected status and score, and give the same result when run again."""
import copy
import csv
import importlib.util
import json
import shutil
import subprocess
import sys
import time

import nbformat
import pytest
from nbgrader.api import Gradebook

from harness import ROOT, copy_course, grade_id, nbgrader_meta, read, solution_path

pytestmark = pytest.mark.xdist_group("grading")

LESSON = "01_why_attention"
CELL_TIMEOUT = 20        # nbgrader's per-cell limit in the temp course (Execute.timeout)
CAP = 150                # wall-clock cap per notebook (--timeout): generous, the machine may be busy
AUTO = {"rnn-step-tests": 2, "rnn-run-tests": 2, "quiz-rnn-state-size-tests": 1, "quiz-sequential-steps-tests": 1,
        "quiz-why-fade-tests": 1, "quiz-path-length-tests": 1, "quiz-large-scale-tests": 1}
FREE = "quiz-free-bigger-state"
FULL = sum(AUTO.values())


@pytest.fixture(scope="session")   # session, not module: xdist may interleave modules, and this batch is costly
def course(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp("grading_course"), [LESSON])
    (course / "autograde").mkdir()
    shutil.copy(ROOT / "autograde" / "grade.py", course / "autograde" / "grade.py")
    with open(course / "nbgrader_config.py", "a") as fh:
        fh.write(f"\nc.Execute.timeout = {CELL_TIMEOUT}\n")
    subprocess.run([sys.executable, "tools/release.py", LESSON], cwd=course, check=True, capture_output=True)
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


def cell(nb, gid):
    return next(c for c in nb.cells if grade_id(c) == gid)


def index(nb, gid):
    return next(i for i, c in enumerate(nb.cells) if grade_id(c) == gid)


def set_source(nb, gid, source):
    cell(nb, gid).source = source
    return nb


WRONG_STEP = "import numpy as np\ndef rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T)\n"
NO_CARRY_RUN = ("def rnn_run(xs, h0, W_h, W_x, b):\n"
                "    return np.stack([rnn_step(h0, x, W_h, W_x, b) for x in xs])\n")


def hostile(course):
    """{student: notebook or raw text} and the expected outcome of each: (status prefix, total or None)."""
    subs, expect = {}, {}

    def add(student, nb, status, total):
        subs[student], expect[student] = nb, (status, total)

    add("honestfull", answered(course, free=True), "needs manual grading", FULL)
    add("honestpartial", answered(course, {"rnn-step", "quiz-rnn-state-size", "quiz-why-fade"}), "graded", 4)

    nb = set_source(answered(course), "rnn-step", WRONG_STEP)
    cell(nb, "rnn-step-tests").source = "pass"
    nbgrader_meta(cell(nb, "rnn-step-tests"))["points"] = 20
    add("editedtest", nb, "graded", FULL - 4)        # rnn_run calls the wrong rnn_step

    nb = answered(course)
    del nb.cells[index(nb, "rnn-run-tests")]
    add("deletedtest", nb, "graded", FULL)

    nb = answered(course)
    pasted = copy.deepcopy(cell(nb, "rnn-step-tests"))
    nb.cells.insert(index(nb, "rnn-step"), copy.deepcopy(pasted))       # above its answer
    nb.cells.insert(index(nb, "quiz-why-fade"), pasted)                   # and further down
    for i, c in enumerate(nb.cells):
        c.id = f"cell-{i}"
    add("pastedtest", nb, "graded", FULL)

    nb = answered(course)
    nbgrader_meta(cell(nb, "rnn-run"))["grade_id"] = "my-rnn-run"
    nbgrader_meta(cell(nb, "quiz-why-fade-tests"))["grade_id"] = "quiz-why-fade-tests-v2"
    add("renamedid", nb, "graded", FULL)

    nb = answered(course)
    del nbgrader_meta(cell(nb, "rnn-step-tests"))["schema_version"]
    del cell(nb, "quiz-path-length").metadata["nbgrader"]
    del cell(nb, "quiz-large-scale-tests").metadata["nbgrader"]
    add("nometadata", nb, "graded", FULL)

    nb = answered(course)
    del nb.cells[index(nb, "rnn-run")]
    add("deletedanswer", nb, "graded", FULL - 2)

    nb = answered(course)
    for i, c in enumerate(nb.cells):
        c.id = f"mine-{i}"
    nb.cells.insert(index(nb, "rnn-step") + 1, nbformat.v4.new_markdown_cell("My notes: tanh squashes."))
    nb.cells.insert(index(nb, "rnn-run") + 1, nbformat.v4.new_code_cell("print(rnn_step(np.zeros(2), np.ones(3), "
                                                                       "np.eye(2), np.ones((2, 3)), np.zeros(2)))"))
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    add("extracells", nb, "graded", FULL)

    add("infiniteloop", set_source(answered(course), "quiz-sequential-steps",
                                   "q2_answer = None\nimport time\nwhile True:\n    time.sleep(0.01)"), "graded", FULL - 1)
    add("sigintloop", set_source(answered(course), "quiz-rnn-state-size",
                                 "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                 "q1_answer = 64\nwhile True:\n    time.sleep(0.01)"), "failed to run", None)
    add("sysexit", set_source(answered(course), "quiz-sequential-steps", "q2_answer = 1000\nimport sys\nsys.exit()"),
        "graded", FULL)
    add("osexit", set_source(answered(course), "quiz-why-fade", "import os\nos._exit(0)"),
        "failed to run (the kernel died", None)
    add("invalidjson", nbformat.writes(answered(course))[:5000], "failed to run (invalid JSON)", None)
    add("renamednb", answered(course), "graded", FULL)
    add("missingnb", None, "failed to run (no notebook submitted)", None)
    add("bigoutput", set_source(answered(course), "quiz-rnn-state-size",
                                "q1_answer = 64\nfor i in range(100_000):\n    print(i, 'spam ' * 10)"),
        "graded", FULL)
    add("warnings", set_source(answered(course), "rnn-step",
                               "import warnings, sys\nprint('Warning: this is my first RNN', file=sys.stderr)\n"
                               "def rnn_step(h, x, W_h, W_x, b):\n"
                               "    warnings.warn('rnn_step: slow but correct', UserWarning)\n"
                               "    return np.tanh(h @ W_h.T + x @ W_x.T + b)\n"), "graded", FULL)
    nb = set_source(answered(course), "rnn-step", WRONG_STEP + "np.allclose = lambda *a, **k: True\n")
    set_source(nb, "rnn-run", NO_CARRY_RUN + "checks.expect_close = lambda *a, **k: None\n")
    add("monkeypatch", nb, "needs manual grading", None)
    return subs, expect


def write_downloads(folder, subs):
    """LMS download naming (zip_collect): <student>_attempt_<date>_<file>."""
    archive = folder / "archive"
    archive.mkdir(parents=True)
    for student, nb in subs.items():
        name = {"renamednb": "Untitled.ipynb", "missingnb": "notes.txt"}.get(student, f"{LESSON}.ipynb")
        path = archive / f"{student}_attempt_2026-11-20-10-00-00_{name}"
        if nb is None:
            path.write_text("I could not get the notebook to open.")
        elif isinstance(nb, str):
            path.write_text(nb)
        else:
            nbformat.write(nb, str(path))


def run_grade(course, *args):
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "autograde/grade.py", LESSON, *args, "--timeout", str(CAP)],
                            cwd=course, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return time.perf_counter() - start, result


def read_grades(course):
    with open(course / "autograde" / "runs" / LESSON / "grades.csv") as fh:
        return {row["student"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="session")
def batch(course, tmp_path_factory):
    subs, expect = hostile(course)
    downloads = tmp_path_factory.mktemp("downloads")
    write_downloads(downloads, subs)
    seconds, result = run_grade(course, str(downloads), "--workers", "2")
    print(f"\nbatch of {len(subs)} submissions graded in {seconds:.1f} s")
    return course, downloads, expect, read_grades(course), result


# --- tests --------------------------------------------------------------------------------------

def test_batch_finishes_with_expected_status_and_score(batch):
    course, _, expect, rows, _ = batch
    assert set(rows) == set(expect), "every submission must have exactly one row"
    problems = []
    for student, (status, total) in expect.items():
        row = rows[student]
        if not row["status"].startswith(status):
            problems.append(f"{student}: status {row['status']!r}, expected {status!r} ({row['notes']})")
        elif total is not None and float(row["total"]) != total:
            cells = {k: row[k] for k in AUTO}
            problems.append(f"{student}: total {row['total']}, expected {total}: {cells} ({row['notes']})")
        if status.startswith("failed") and (row["total"] or any(row[k] for k in AUTO)):
            problems.append(f"{student}: a submission that could not be graded must not show a score")
    assert not problems, "\n".join(problems)


def test_honest_students_get_the_right_scores(batch):
    _, _, _, rows, _ = batch
    full, partial = rows["honestfull"], rows["honestpartial"]
    assert {k: float(full[k]) for k in AUTO} == {k: float(v) for k, v in AUTO.items()}
    assert full[FREE] == "" and full["status"] == "needs manual grading"
    assert float(partial["total"]) == 4 and partial[FREE] == "0" and partial["status"] == "graded"
    assert not full["flags"] and not partial["flags"], "honest code must not be flagged"
    assert float(full["max"]) == FULL + 3


def test_hostile_details(batch):
    course, _, _, rows, _ = batch
    assert float(rows["editedtest"]["rnn-step-tests"]) == 0, "an edited test cell must be restored"
    assert float(rows["editedtest"]["max"]) == FULL + 3, "points raised by the student must not count"
    assert rows["infiniteloop"]["quiz-sequential-steps-tests"] == "0"
    assert "did not stop" in rows["sigintloop"]["status"] or "timed out" in rows["sigintloop"]["status"]
    assert "renamed" in rows["renamednb"]["notes"]
    assert "restored the metadata of rnn-run" in rows["renamedid"]["notes"]
    # a monkeypatched np.allclose is defeated (checks never use it); a patched checks helper is flagged
    patched = rows["monkeypatch"]
    assert patched["rnn-step-tests"] == "0"
    assert "np.allclose" in patched["flags"] and "checks.expect_close" in patched["flags"]
    summary = (course / "autograde" / "runs" / LESSON / "summary.txt").read_text()
    assert "monkeypatch" in summary.split("Flagged for review")[1]
    assert (course / "autograde" / "runs" / LESSON / "summary.png").stat().st_size > 10_000


def test_feedback_hides_hidden_tests(batch):
    course, _, expect, _, _ = batch
    folder = course / "autograde" / "runs" / LESSON / "feedback"
    assert {p.stem for p in folder.glob("*.html")} == set(expect)
    hidden_source = read(solution_path(LESSON))
    secret = "_rnn_step_hidden"
    assert any(secret in c.source for c in hidden_source.cells)
    for page in folder.glob("*.html"):
        text = page.read_text()
        assert secret not in text and "BEGIN HIDDEN TESTS" not in text, page.name
    assert (folder / "bigoutput.html").stat().st_size < 2_000_000, "megabytes of output must be truncated"
    assert "invalid JSON" in (folder / "invalidjson.html").read_text()


def test_rerun_is_idempotent_and_keeps_the_originals(batch):
    course, downloads, _, rows, _ = batch
    logs = course / "autograde" / "runs" / LESSON / "logs"
    before = {p.name: p.stat().st_mtime for p in logs.iterdir()}
    run_grade(course, str(downloads))
    assert read_grades(course) == rows
    assert {p.name: p.stat().st_mtime for p in logs.iterdir()} == before, "unchanged submissions are not run again"
    original = course / "autograde" / "submitted" / "invalidjson" / LESSON / f"{LESSON}.ipynb"
    assert original.read_text() == next((downloads / "archive").glob("invalidjson_*")).read_text()
    results = json.loads((course / "autograde" / "runs" / LESSON / "results" / "honestfull.json").read_text())
    assert results["status"] == "graded"


def load_grade_module(course):
    spec = importlib.util.spec_from_file_location("grade", course / "autograde" / "grade.py")
    grade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grade)
    return grade


def test_wall_clock_cap_kills_the_kernel_too(batch, tmp_path):
    """A notebook past the per-notebook cap is stopped with its kernel, which runs in its own session."""
    psutil = pytest.importorskip("psutil")
    course = batch[0]
    grade = load_grade_module(course)
    for sub in ("logs", "feedback"):
        (tmp_path / sub).mkdir()
    sanitized = course / "autograde" / "runs" / LESSON / "sanitized"
    ok, reason, seconds = grade.autograde(grade.Course(course), LESSON, "sigintloop", sanitized, tmp_path, 12)
    assert not ok and reason == "timed out after 12 s" and seconds < 30
    time.sleep(1)
    left = [p for p in psutil.process_iter(["cmdline"]) if "ipykernel" in " ".join(p.info["cmdline"] or [])
            and any("sigintloop" in (f.path or "") for f in _open_files(p))]
    assert not left, f"kernel still running after the cap: {left}"


def _open_files(process):
    try:
        return process.open_files() + [type("cwd", (), {"path": process.cwd()})()]
    except Exception:
        return []


def test_manual_points_reach_grades_csv(batch):
    course, downloads, _, _, _ = batch
    with Gradebook(f"sqlite:///{course}/autograde/gradebook.db") as gb:
        grade = gb.find_grade(FREE, LESSON, LESSON, "honestfull")
        grade.manual_score = 2              # what the formgrader does when a grader saves a score
        grade.needs_manual_grade = False
        gb.db.commit()
    grade = load_grade_module(course)
    rows = grade.main([LESSON, str(downloads), "--timeout", str(CAP), "--quiet"])    # the Python entry point
    row = next(r for r in rows if r["student"] == "honestfull")
    assert row[FREE] == "2" and float(row["total"]) == FULL + 2 and row["status"] == "graded"
    assert read_grades(course)["honestfull"] == row
