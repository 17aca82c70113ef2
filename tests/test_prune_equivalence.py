"""Proof that leaving out the cells a grade does not depend on (autograde/prune.py) never changes a grade: the same
notebook executed pruned and full gives every test cell the same outcome (error or not, stderr, the value nbgrader
reads for partial credit), so the same points per question.

* every wrong and every right variant of every lesson's catalog (tests/catalogs/), pruned vs full (slow tier): the
  variants are played in rounds, round k answering each exercise with its k-th variant, so a lesson costs
  (most variants of one exercise) notebook runs each way instead of one per variant; `make test` plays the first
  two rounds (each exercise's first wrong and first right variant), `make test-full` all of them;
* the analysis's edges, on small notebooks (a helper the student defined in an experiment cell and used in an
  answer; an experiment that consumes the global random generator before a test that relies on it; an answer that
  reads what an experiment computed).
"""

import copy
import os
import tempfile

import pytest
from conftest import lesson_params
from harness import exercises, grade_id, is_test, load_catalog, read, solution_path, student_path
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from autograde import prune
from course_dev.kernel import ipc_config


def outcomes(nb):
    """{test cell grade id: (error names, stderr, results)}: what nbgrader's score of each test cell is made of."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and is_test(cell):
            errors = tuple(o.get("ename") for o in cell.outputs if o.output_type == "error")
            stderr = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")
            results = tuple(o["data"].get("text/plain") for o in cell.outputs if o.output_type == "execute_result")
            out[grade_id(cell)] = (errors, stderr, results)
    return out


def execute(nb, release, path, pruned):
    """The notebook run top to bottom, pruned against `release` (fingerprints) or full; returns (outcomes, plan)."""
    nb = copy.deepcopy(nb)
    plan = prune.apply(nb, release) if pruned else None
    with tempfile.TemporaryDirectory(prefix="lk-", dir="/tmp") as sockets:
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(path)}},
            shutdown_kernel="immediate",
            config=ipc_config(sockets),
        ).execute()
    if plan is not None:
        assert all(prune.NOTE in nb.cells[i].outputs[0]["text"] for i in plan.skip), "a left-out cell shows the note"
    return outcomes(nb), plan


def same_both_ways(nb, release, path):
    full, _ = execute(nb, release, path, pruned=False)
    pruned, plan = execute(nb, release, path, pruned=True)
    assert pruned == full, f"pruned {pruned} != full {full}"
    return full, plan


# --- every lesson's catalog (slow) ----------------------------------------------------------------------------


FIRST_ROUNDS = 2  # `make test`: each exercise's first wrong and first right variant; `make test-full`: the rest too


def rounds(lesson, part):
    """Notebooks: the solution with, in round k, every exercise answered with its k-th variant, in the order first
    wrong, first right, then the other wrong and right ones; `part` "first" gives rounds 0 and 1, "rest" the others."""
    solution, catalog = read(solution_path(lesson)), load_catalog(lesson)
    variants = {}
    for answer, _, _ in exercises(solution):
        entry = catalog.get(grade_id(answer), {})
        wrong = [source for source, _ in entry.get("wrong", {}).values()]
        right = list(entry.get("right", {}).values())
        variants[grade_id(answer)] = wrong[:1] + right[:1] + wrong[1:] + right[1:]
    count = max((len(v) for v in variants.values()), default=0)
    for k in range(FIRST_ROUNDS) if part == "first" else range(FIRST_ROUNDS, count):
        nb = copy.deepcopy(solution)
        for cell in nb.cells:
            chosen = variants.get(grade_id(cell)) if cell.cell_type == "code" else None
            if chosen and k < len(chosen):
                cell.source = chosen[k]
        yield k, nb


# Every lesson's catalog takes about an hour on 2 cores (lessons 09, 10 and 11: 14, 6 and 10 minutes): `make test`
# proves it on lesson 01's first two rounds, `make test-full` on all of lesson 01's (the lesson the grading tests
# use); ATTENTION_COURSE_PRUNE_ALL=1 runs all 12 lessons (before a release).
PRUNE_LESSONS = [
    p for p in lesson_params() if os.environ.get("ATTENTION_COURSE_PRUNE_ALL") == "1" or p.id == "01_why_attention"
]


@pytest.mark.slow
@pytest.mark.parametrize("part", ["first", "rest"])
@pytest.mark.parametrize("lesson", PRUNE_LESSONS)
def test_every_catalog_variant_gets_the_same_points_pruned_and_full(lesson, part):
    release = prune.release_fingerprints(read(student_path(lesson)))
    path = student_path(lesson).parent
    for k, nb in rounds(lesson, part):
        full, plan = same_both_ways(nb, release, path)
        assert full, f"{lesson} round {k}: no test cell ran"


# --- the edges, on small notebooks -----------------------------------------------------------------------------


def graded(kind, gid, source, points=1):
    cell = new_code_cell(source)
    solution = kind == "answer"
    cell.metadata["nbgrader"] = {"solution": solution, "grade": not solution, "locked": not solution, "grade_id": gid}
    if not solution:
        cell.metadata["nbgrader"]["points"] = points
    return cell


def small(*cells):
    nb = new_notebook()
    nb.cells = [new_code_cell("import numpy as np"), *cells]
    return nb


def release_of(nb, replaced=None):
    """The fingerprints of the release: the notebook's code cells, with the sources of `replaced` (index: source)."""
    sources = [(replaced or {}).get(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    return {prune.fingerprint(s) for s in sources}


def test_a_helper_defined_in_an_experiment_cell_and_used_in_an_answer(tmp_path):
    nb = small(
        new_code_cell("curve = np.linspace(0, 1, 5)\n\ndef double(x):\n    return 2 * x"),  # the student added double
        graded("answer", "f", "def f(x):\n    return double(x) + 1"),
        graded("tests", "f-tests", "assert f(1) == 3\nprint('ok')"),
        new_code_cell("big = np.ones((300, 300)) @ np.ones((300, 300))"),
    )
    release = release_of(nb, {1: "curve = np.linspace(0, 1, 5)"})
    full, plan = same_both_ways(nb, release, tmp_path)
    assert full["f-tests"] == ((), "", ()), "full marks"
    assert 1 in plan.run and plan.skip == [4], "the edited experiment cell runs; the unused one does not"


def test_an_experiment_consuming_the_global_rng_before_a_test_that_relies_on_it(tmp_path):
    nb = small(
        new_code_cell("np.random.seed(0)"),
        graded("answer", "q", "q = 1"),
        new_code_cell("noise = np.random.rand(1000)"),  # an experiment: draws from the global generator
        graded("tests", "q-tests", "assert np.random.rand() < 0.6, 'the generator is not where the test expects'"),
    )
    full, plan = same_both_ways(nb, release_of(nb), tmp_path)
    assert 3 in plan.run, "the experiment runs: the test draws after it"


def test_an_answer_that_reads_what_an_experiment_computed(tmp_path):
    nb = small(
        new_code_cell("measured = float(np.arange(10).sum())"),
        new_code_cell("unused = np.ones(3)"),
        graded("answer", "q1", "q1_answer = measured / 5"),
        graded("tests", "q1-tests", "assert q1_answer == 9.0"),
    )
    full, plan = same_both_ways(nb, release_of(nb), tmp_path)
    assert full["q1-tests"][0] == () and 1 in plan.run and plan.skip == [2]


def test_a_student_cannot_skip_a_test_cell_with_the_tag(tmp_path):
    nb = small(graded("answer", "q", "q = 0"), graded("tests", "q-tests", "assert q == 1"))
    nb.cells[2].metadata["tags"] = [prune.SKIP_TAG]
    pruned, _ = execute(nb, release_of(nb), tmp_path, pruned=True)
    assert pruned["q-tests"][0] == ("AssertionError",)
