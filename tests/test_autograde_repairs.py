"""Unit tests of the grader's repair steps (autograde/repairs.py) on notebooks built in memory: fast,
no kernel. Each repair in REPAIRS has its own test; `repair` runs them all."""

import copy
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograde import repairs
from autograde.repairs import REPAIRS, Broken, Work, repair


def graded(cell, gid, kind, points=None):
    m = {
        "grade_id": gid,
        "schema_version": 3,
        "locked": kind in ("tests", "readonly"),
        "solution": kind in ("answer", "manual"),
        "grade": kind in ("tests", "manual"),
    }
    if points is not None:
        m["points"] = points
    cell.metadata["nbgrader"] = m
    return cell


def released():
    """A small release: intro, answer, tests (2 pt), read-only, answer, tests (1 pt), free answer (3 pt)."""
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        new_markdown_cell("# Lesson"),
        graded(new_code_cell("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"), "f", "answer"),
        graded(new_code_cell("assert f(1) == 2"), "f-tests", "tests", 2),
        graded(new_code_cell("import numpy as np"), "setup", "readonly"),
        graded(new_code_cell("q1 = None"), "q1", "answer"),
        graded(new_code_cell("assert q1 == 3"), "q1-tests", "tests", 1),
        graded(new_markdown_cell("YOUR ANSWER HERE"), "free", "manual", 3),
    ]
    for i, c in enumerate(nb.cells):
        c.id = f"r{i}"
    return nb


def submission(edit=None):
    nb = copy.deepcopy(released())
    nb.cells[1].source = "def f(x):\n    return 2 * x"
    nb.cells[4].source = "q1 = 3"
    if edit:
        edit(nb)
    return nb


def raw(nb):
    return nbformat.writes(nb).encode()


def run(nb, steps):
    work = Work(json.loads(nbformat.writes(nb)), released())
    for step in steps:
        step()(work)
    return work


def ids(cells):
    return [(c.get("metadata", {}).get("nbgrader") or {}).get("grade_id") for c in cells]


def test_the_declared_list_runs_in_order():
    assert REPAIRS[0] is repairs.DropMalformedCells and REPAIRS[-1] is repairs.ReleasedMetadata
    nb, notes = repair(raw(submission()), released())
    assert notes == [] and ids(nb.cells) == ids(released().cells)
    assert nb.cells[1].source == "def f(x):\n    return 2 * x"


def test_load_refuses_what_is_not_a_notebook():
    with pytest.raises(Broken, match="invalid JSON"):
        repair(b'{"cells": [', released())
    with pytest.raises(Broken, match="not a notebook"):
        repair(b"[1, 2]", released())


def test_drop_malformed_cells():
    data = json.loads(nbformat.writes(submission()))
    data["cells"].insert(2, "not a cell")
    data["cells"].insert(3, {"cell_type": "widget"})
    work = Work(data, released())
    repairs.DropMalformedCells()(work)
    assert len(work.cells) == 7 and work.notes == ["dropped a malformed cell"]


def test_match_by_grade_id_skips_a_pasted_copy_above_the_original():
    def paste(nb):
        nb.cells.insert(1, copy.deepcopy(nb.cells[2]))  # a copy of f-tests above the answer

    work = run(submission(paste), [repairs.DropMalformedCells, repairs.MatchByGradeId])
    assert work.index(work.match[1]) == 3  # f-tests matched to the original, after the answer


def test_match_renamed_cells_by_kind_and_by_source():
    def rename(nb):
        nb.cells[4].metadata.nbgrader.grade_id = "my-q1"  # answer renamed
        del nb.cells[5].metadata["nbgrader"]  # tests metadata removed, source unchanged

    work = run(submission(rename), REPAIRS[: REPAIRS.index(repairs.MatchRenamedCells) + 1])
    assert work.match[3] is work.cells[4] and work.match[4] is work.cells[5]
    assert "restored the metadata of q1 (was renamed my-q1)" in work.notes
    assert "restored the metadata of q1-tests" in work.notes


def test_restore_graded_cells_puts_back_locked_source_and_points():
    def cheat(nb):
        nb.cells[2].source = "pass"
        nb.cells[2].metadata.nbgrader["points"] = 20

    nb, notes = repair(raw(submission(cheat)), released())
    assert nb.cells[2].source == "assert f(1) == 2" and nb.cells[2].metadata.nbgrader["points"] == 2
    assert "restored the locked cell f-tests" in notes


def test_drop_extra_graded_cells():
    def extra(nb):
        nb.cells.append(copy.deepcopy(nb.cells[2]))  # pasted tests: dropped
        nb.cells.append(copy.deepcopy(nb.cells[1]))  # pasted answer: kept as a plain cell

    nb, notes = repair(raw(submission(extra)), released())
    assert ids(nb.cells) == ids(released().cells) + [None]
    assert "dropped an extra copy of locked cell f-tests" in notes
    assert "kept an extra graded-looking cell (f) as a plain cell" in notes


def test_put_back_missing_cells_in_place():
    def delete(nb):
        del nb.cells[5]  # q1-tests
        del nb.cells[1]  # answer f: comes back as the stub

    nb, notes = repair(raw(submission(delete)), released())
    assert ids(nb.cells) == ids(released().cells)
    assert "raise NotImplementedError" in nb.cells[1].source
    assert {"put back missing cell f", "put back missing cell q1-tests"} <= set(notes)


def test_clean_cells_clears_outputs_and_makes_ids_unique():
    def dirty(nb):
        nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi")]
        nb.cells[1].execution_count = 3
        for c in nb.cells:
            c.id = "same"

    nb, _ = repair(raw(submission(dirty)), released())
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert len({c.id for c in nb.cells}) == len(nb.cells)


def test_released_metadata_and_validation():
    def kernel(nb):
        nb.metadata["kernelspec"] = {"name": "evil", "display_name": "x", "language": "python"}

    nb, _ = repair(raw(submission(kernel)), released())
    assert nb.metadata.kernelspec.name == "python3"
    work = run(submission(), REPAIRS[:-1])
    work.cells[0]["cell_type"] = "code"  # a code cell without outputs: invalid
    work.cells[0].pop("outputs", None)
    with pytest.raises(Broken, match="not a valid notebook"):
        repairs.ReleasedMetadata()(work)
