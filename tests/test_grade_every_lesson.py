"""Every lesson is gradable by the course's grader (issue 30): `python -m autograde` (what `make grade` runs), with the
sandbox, the integrity guard, pruning and the canary, on a fresh copy of the course with that one lesson.

Per lesson, one batch of two students: `right` answers every exercise with the solution except the first code
exercise, which gets its catalog's first correct variant; `wrong` gets its first wrong implementation there. The
canary (the lesson's own answers, full marks; the blank release, 0) must pass, `right` gets every automatic point,
`wrong` loses points in that exercise and nowhere else (tests/test_lessons.py proves every variant in the kernel;
this proves the grader grades them the same)."""

import csv
import subprocess
import sys

import nbformat
import pytest
from conftest import lesson_params
from harness import copy_course, grade_id, load_catalog, read, solution_path

from autograde.cells import is_manual, is_solution, is_test, points
from course_dev.course import submission

pytestmark = pytest.mark.slow
CAP = 300  # wall-clock seconds per notebook: the later lessons run longer, and the machine may be busy


def _first_code_exercise(lesson):
    catalog = load_catalog(lesson)
    solution = read(solution_path(lesson))
    for cell in solution.cells:
        gid = grade_id(cell)
        if is_solution(cell) and not is_manual(cell) and not gid.startswith("quiz-") and gid in catalog:
            entry = catalog[gid]
            if entry.get("wrong") and entry.get("right"):
                (right, *_), ((wrong, _), *_) = entry["right"].values(), entry["wrong"].values()
                return gid, right, wrong
    raise AssertionError(f"{lesson}: no code exercise with a right and a wrong catalog variant")


def _submission(lesson, released, gid, source):
    """The release with every automatically graded answer of the solution, and `source` as exercise `gid`'s."""
    answered = {grade_id(c) for c in read(solution_path(lesson)).cells if is_solution(c) and not is_manual(c)}
    nb = submission(lesson, answered, released=released)
    next(c for c in nb.cells if grade_id(c) == gid).source = source
    return nb


@pytest.mark.parametrize("lesson", lesson_params())  # beside the lesson's other tests: the workers stay balanced
def test_the_grader_grades_the_lesson(lesson, tmp_path):
    extra = ("autograde", f"notebooks/{lesson}", "notebooks/.release_cells.json")  # a fresh clone's, no gradebook
    course = copy_course(tmp_path / "course", [lesson], extra=extra)
    solution, released = read(solution_path(lesson)), course / "notebooks" / lesson / f"{lesson}.ipynb"
    gid, right, wrong = _first_code_exercise(lesson)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    for student, source in (("right", right), ("wrong", wrong)):
        nbformat.write(_submission(lesson, released, gid, source), str(downloads / f"{student}_{lesson}.ipynb"))

    command = [sys.executable, "-m", "autograde", lesson, str(downloads), "--workers", "1", "--timeout", str(CAP)]
    result = subprocess.run([*command, "--quiet"], cwd=course, capture_output=True, text=True)
    assert result.returncode == 0, f"make grade refused {lesson}:\n{(result.stdout + result.stderr)[-3000:]}"
    with open(course / "grading" / "runs" / lesson / "grades.csv") as fh:
        rows = {row["student"]: row for row in csv.DictReader(fh)}
    tests_of = {grade_id(c): float(points(solution)[grade_id(c)]) for c in solution.cells if is_test(c)}
    for student in ("right", "wrong"):
        assert rows[student]["status"] == "graded", f"{lesson}/{student}: {rows[student]}"
    assert {t: float(rows["right"][t]) for t in tests_of} == tests_of, f"{lesson}: a correct variant lost points"
    lost = {t for t in tests_of if float(rows["wrong"][t]) < tests_of[t]}
    assert lost == {f"{gid}-tests"}, f"{lesson}: the wrong {gid} should lose points there only; lost in {lost}"
