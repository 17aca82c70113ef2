"""nbgrader end to end on a temporary copy of the course: release every lesson (once per test worker), check
the committed student notebooks are that release, then autograde a fully answered submission of each lesson.

What the other submissions would show is checked more cheaply elsewhere: a blank notebook scores 0 because
every test cell of the unanswered student notebook fails (tests/test_lessons.py); partial and hostile
submissions, through the course's grader, in tests/test_grading.py and tests/test_hub.py."""

import subprocess
import sys

import nbformat
import pytest
from conftest import lesson_params
from harness import LESSONS, ROOT, copy_course, exercises, grade_id, nbgrader_meta, read, solution_path, student_path
from nbgrader.api import Gradebook

from course_dev.course import submission


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A temporary course with every lesson released by one `course_dev.release` run (nbgrader imported once)."""
    course = copy_course(tmp_path_factory.mktemp("course"), LESSONS)
    subprocess.run(
        [sys.executable, "-m", "course_dev.release", "--root", str(course), *LESSONS],
        cwd=course,
        check=True,
        capture_output=True,
    )
    return course


@pytest.fixture
def released(lesson, course):
    return course, lesson


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


@pytest.mark.slow
@pytest.mark.parametrize("lesson", lesson_params())
def test_autograde_gives_the_solution_full_marks(released):
    """The released notebook with every answer (code and free text) filled in from the solution, graded by
    stock `nbgrader autograde` (hidden tests restored, nbgrader's timeouts): every test cell scores in full."""
    course, lesson = released
    nb = read(solution_path(lesson))
    answers = {grade_id(c) for c in nb.cells if nbgrader_meta(c).get("solution")}
    folder = course / "grading" / "submitted" / "full" / lesson
    folder.mkdir(parents=True)
    nbformat.write(submission(lesson, answers), folder / f"{lesson}.ipynb")
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "autograde", lesson], cwd=course, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]

    points = {grade_id(t): p for _, t, p in exercises(nb)}
    with Gradebook(f"sqlite:///{course}/grading/gradebook.db") as gb:  # STATE in nbgrader_config.py
        scores = {
            g.name: g.auto_score
            for n in gb.find_submission(lesson, "full").notebooks
            for g in n.grades
            if g.name in points
        }
    assert scores == points, f"the solution must get full marks: {scores} != {points}"
