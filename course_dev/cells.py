"""The roles of nbgrader cells (metadata schema 3) and a lesson's exercises."""


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def is_answer(cell):
    """A code cell the student writes (solution: true)."""
    return bool(nbgrader_meta(cell).get("solution")) and cell["cell_type"] == "code"


def is_manual(cell):
    """A markdown answer graded by hand."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("solution") and meta.get("grade")) and cell["cell_type"] == "markdown"


def is_test(cell):
    """A locked, autograded test cell."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def role(cell):
    """'answer', 'manual', 'tests', 'readonly' or None (an ordinary cell)."""
    if is_answer(cell):
        return "answer"
    if is_manual(cell):
        return "manual"
    if is_test(cell):
        return "tests"
    return "readonly" if nbgrader_meta(cell).get("locked") else None


def cells_by_id(nb):
    return {grade_id(c): c for c in nb["cells"] if grade_id(c)}


def exercises(nb):
    """(answer cell, tests cell, points) for every graded code exercise and quiz question, in order.
    The tests of answer `x` are the cell `x-tests`."""
    by_id = cells_by_id(nb)
    return [
        (c, by_id[grade_id(c) + "-tests"], nbgrader_meta(by_id[grade_id(c) + "-tests"])["points"])
        for c in nb["cells"]
        if is_answer(c) and grade_id(c) + "-tests" in by_id
    ]


def points(nb):
    """{grade_id: points} of every graded cell (autograded tests and hand-graded answers)."""
    return {grade_id(c): nbgrader_meta(c)["points"] for c in nb["cells"] if nbgrader_meta(c).get("grade")}
