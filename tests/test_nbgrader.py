"""nbgrader end to end on a temporary copy of the course: release, then autograde a full, a blank
and a partial submission of each lesson."""

import subprocess
import sys

import nbformat
import pytest
from conftest import lesson_params
from harness import ROOT, copy_course, exercises, grade_id, nbgrader_meta, read, solution_path, student_path
from nbgrader.api import Gradebook


def release(course, lesson):
    subprocess.run(
        [sys.executable, "-m", "course_dev.release", "--root", str(course), lesson],
        cwd=course,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="session")
def released_courses(tmp_path_factory):
    """lesson -> a temporary course where that lesson was just released (made once per test session)."""
    cache = {}

    def get(lesson):
        if lesson not in cache:
            cache[lesson] = copy_course(tmp_path_factory.mktemp(lesson), [lesson])
            release(cache[lesson], lesson)
        return cache[lesson]

    return get


@pytest.fixture
def released(lesson, released_courses):
    return released_courses(lesson), lesson


def cell_summary(nb):
    return [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in nb.cells]


@pytest.mark.parametrize("lesson", lesson_params())
def test_committed_notebooks_are_the_release(released):
    course, lesson = released
    fresh, committed = read(course / "notebooks" / lesson / f"{lesson}.ipynb"), read(student_path(lesson))
    assert len(fresh.cells) == len(committed.cells), "notebooks/ is stale: run `make release`"
    for i, (a, b) in enumerate(zip(cell_summary(fresh), cell_summary(committed))):
        assert a == b, f"cell {i} of notebooks/{lesson} differs from a fresh release: run `make release`"
    extra = {p.name for p in (ROOT / "notebooks" / lesson).iterdir()} - {
        p.name for p in (course / "notebooks" / lesson).iterdir()
    }
    assert not extra, f"files in notebooks/{lesson} that the release does not produce: {extra}"


def submission(lesson, answered):
    """The released notebook with the answer cells in `answered` filled in from the solution."""
    solution = {grade_id(c): c.source for c in read(solution_path(lesson)).cells if grade_id(c)}
    nb = read(student_path(lesson))
    for cell in nb.cells:
        if grade_id(cell) in answered:
            cell.source = solution[grade_id(cell)]
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("lesson", lesson_params())
def test_autograde_full_blank_partial(released):
    course, lesson = released
    graded = exercises(read(solution_path(lesson)))
    all_ids = [grade_id(a) for a, _, _ in graded]
    half = all_ids[: max(1, len(all_ids) // 2)]  # earlier answers only: later ones may build on them
    manual = [
        grade_id(c)
        for c in read(solution_path(lesson)).cells
        if nbgrader_meta(c).get("solution") and c.cell_type == "markdown"
    ]
    students = {"full": set(all_ids + manual), "blank": set(), "partial": set(half)}
    for student, answered in students.items():
        folder = course / "grading" / "submitted" / student / lesson
        folder.mkdir(parents=True)
        nbformat.write(submission(lesson, answered), folder / f"{lesson}.ipynb")
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", lesson], cwd=course, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]

    points = {grade_id(t): p for _, t, p in graded}
    with Gradebook(f"sqlite:///{course}/grading/gradebook.db") as gb:  # STATE in nbgrader_config.py

        def auto(student):
            return {
                g.name: g.auto_score
                for nb in gb.find_submission(lesson, student).notebooks
                for g in nb.grades
                if g.name in points
            }

        full, blank, partial = auto("full"), auto("blank"), auto("partial")
    assert full == points, f"the solution must get full marks: {full} != {points}"
    assert sum(blank.values()) == 0, f"the blank notebook must get 0: {blank}"
    expected_partial = {gid + "-tests" for gid in half}
    assert {k for k, v in partial.items() if v} == expected_partial, partial
    assert all(partial[k] == points[k] for k in expected_partial)
