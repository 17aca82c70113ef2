"""The roles of nbgrader cells, decided in one place on nbgrader's own tests (`nbgrader.utils`: is_grade,
is_solution, is_locked, is_task), for every site: the grader's steps, the feedback page, the tools and the tests.

    role       the cell is                                           nbgrader metadata
    answer     code (or text) the student writes, scored by tests     solution, no grade
    manual     a free answer graded by hand                           solution and grade
    tests      locked, autograded tests                               grade, no solution
    task       a task graded by hand                                  task
    readonly   locked instructions or set-up                          locked
    None       an ordinary cell

Every function takes a notebook's cell as nbformat reads it or as a plain dict (a submission being repaired):
metadata of the wrong type, which a damaged file may hold, counts as none.
"""

import copy

from nbformat import NotebookNode
from nbgrader import utils


def nbgrader_meta(cell):
    """The cell's nbgrader metadata, or {} (none, or not a dict)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return meta if isinstance(meta, dict) else {}


def _view(cell):
    """The cell as nbgrader.utils reads it (cell.metadata['nbgrader']), whatever its shape."""
    return NotebookNode(metadata={"nbgrader": nbgrader_meta(cell)})


def is_grade(cell):
    return bool(utils.is_grade(_view(cell)))


def is_solution(cell):
    return bool(utils.is_solution(_view(cell)))


def is_locked(cell):
    return bool(utils.is_locked(_view(cell)))


def is_task(cell):
    return bool(utils.is_task(_view(cell)))


def is_answer(cell):
    """A cell the student writes that its tests score (solution: true, no points of its own)."""
    return is_solution(cell) and not is_grade(cell)


def is_manual(cell):
    """A free answer graded by hand (solution and grade)."""
    return is_solution(cell) and is_grade(cell)


def is_test(cell):
    """A locked, autograded test cell (grade, not a solution)."""
    return is_grade(cell) and not is_solution(cell)


def role(cell):
    """'answer', 'manual', 'tests', 'task', 'readonly' or None (an ordinary cell)."""
    if is_solution(cell):
        return "manual" if is_grade(cell) else "answer"
    if is_grade(cell):
        return "tests"
    if is_task(cell):
        return "task"
    return "readonly" if is_locked(cell) else None


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


# --- a lesson's notebook ------------------------------------------------------------------------


def cells_by_id(nb):
    return {grade_id(c): c for c in nb["cells"] if grade_id(c)}


def points(nb):
    """{grade_id: points} of every graded cell (autograded tests and hand-graded answers)."""
    return {grade_id(c): nbgrader_meta(c)["points"] for c in nb["cells"] if is_grade(c)}


def graded_cells(nbs):
    """[(grade cell id, points)] of the notebooks' graded cells, in order (the columns of grades.csv)."""
    return [(grade_id(c), float(nbgrader_meta(c).get("points", 0))) for nb in nbs for c in nb.cells if is_grade(c)]


def exercises(nb):
    """(answer cell, tests cell, points) for every graded code exercise and quiz question, in order.
    The tests of answer `x` are the cell `x-tests`."""
    by_id = cells_by_id(nb)
    return [
        (c, by_id[grade_id(c) + "-tests"], nbgrader_meta(by_id[grade_id(c) + "-tests"])["points"])
        for c in nb["cells"]
        if is_answer(c) and c["cell_type"] == "code" and grade_id(c) + "-tests" in by_id
    ]


def with_answers(released, solution, ids=None):
    """A copy of the released notebook with its answer cells (free answers included) filled in from the
    solution's: every one, or those whose grade ids are in `ids`. The lesson's own answers as a student would
    hand them in (the canary, the benchmark's and the tests' submissions)."""
    answers = {grade_id(c): c.source for c in solution.cells if is_solution(c)}
    nb = copy.deepcopy(released)
    for cell in nb.cells:
        gid = grade_id(cell)
        if is_solution(cell) and gid in answers and (ids is None or gid in ids):
            cell.source = answers[gid]
    return nb
