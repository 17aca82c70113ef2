"""nbgrader end to end on a temporary copy of the course: release every lesson (once per test run), check
the committed student notebooks are that release, check that what `nbgrader autograde` would run for a fully
answered submission is the solution notebook, cell for cell, and autograde one for real where it matters.

What the other submissions would show is checked more cheaply elsewhere: a blank notebook scores 0 because
every test cell of the unanswered student notebook fails (tests/test_lessons.py); partial and hostile
submissions, through the course's grader, in tests/test_grading.py and tests/test_hub.py."""

import fcntl
import shutil
import subprocess
import sys

import nbformat
import pytest
from conftest import lesson_params
from harness import (
    LESSONS,
    ROOT,
    copy_course,
    exercises,
    grade_id,
    is_answer,
    nbgrader_meta,
    read,
    solution_path,
    student_path,
)
from nbgrader.api import Gradebook

from course_dev.course import submission


@pytest.fixture(scope="session")
def course(tmp_path_factory, worker_id):
    """A temporary course with every lesson released by one `course_dev.release` run (nbgrader imported once),
    shared by the test workers (the first to need it makes it; about 20 CPU-seconds each): read it, do not change it."""
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    course, done = shared / "released_course", shared / "released_course.done"
    with open(shared / "released_course.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released with the file
        if not done.exists():
            shutil.rmtree(course, ignore_errors=True)
            copy_course(course, LESSONS)
            subprocess.run(
                [sys.executable, "-m", "course_dev.release", "--root", str(course), *LESSONS],
                cwd=course,
                check=True,
                capture_output=True,
            )
            done.touch()
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


# Graded by stock nbgrader for real (the formgrader's route): the lesson the grading tests use. Every lesson, those
# that read a data file from the notebook's folder included, is graded through `make grade` by
# tests/test_grade_every_lesson.py; and the test above shows that autograde would run the solution notebook itself.
GRADED_END_TO_END = ["01_why_attention"]


def gradebook(course):
    return Gradebook(f"sqlite:///{course}/grading/gradebook.db")  # STATE in nbgrader_config.py


@pytest.mark.parametrize("lesson", lesson_params())
def test_autograde_would_run_the_solution_cell_for_cell(released):
    """The released notebook with every answer filled in from the solution, its locked and test cells put back
    from the gradebook as nbgrader's autograde does (hidden tests included), has the solution's code cells, in
    order and to the letter. The solution runs clean with no number shown by a test cell (tests/test_lessons.py),
    so every test cell would score in full."""
    course, lesson = released
    solution = read(solution_path(lesson))
    nb = submission(lesson, {grade_id(c) for c in solution.cells if nbgrader_meta(c).get("solution")})
    with gradebook(course) as gb:
        for cell in nb.cells:
            meta = nbgrader_meta(cell)
            if (meta.get("locked") or meta.get("grade")) and not is_answer(cell):
                cell.source = gb.find_source_cell(grade_id(cell), lesson, lesson).source
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert code == [c.source for c in solution.cells if c.cell_type == "code"]


@pytest.mark.slow
@pytest.mark.parametrize("lesson", [p for p in lesson_params() if p.values[0] in GRADED_END_TO_END])
def test_autograde_gives_the_solution_full_marks(released, tmp_path):
    """The released notebook with every answer (code and free text) filled in from the solution, graded by
    stock `nbgrader autograde` (hidden tests restored, nbgrader's timeouts): every test cell scores in full."""
    shared, lesson = released
    course = tmp_path / "course"  # its own copy: this test writes to the gradebook and submitted/
    shutil.copytree(shared, course)
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
    with gradebook(course) as gb:
        scores = {
            g.name: g.auto_score
            for n in gb.find_submission(lesson, "full").notebooks
            for g in n.grades
            if g.name in points
        }
    assert scores == points, f"the solution must get full marks: {scores} != {points}"
