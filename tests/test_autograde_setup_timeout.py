"""The grader's own cells are the grader's (issue 30 item 4): the guard's setup and the final check run under
their own bound, not the student's per-cell limit, and a setup that runs past it is named as what it is, in the
notebook's flags and in the canary's refusal. One real kernel (sandboxed as for students), no gradebook."""

import dataclasses

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograde import canary, execute, guard
from autograde.messages import Result
from autograde.sandbox import Limits


def sandboxed_execute(**traits):
    return execute.SandboxExecute(limits=dataclasses.asdict(Limits()), imports=[], **traits)


def test_the_graders_cells_get_their_own_bound():
    ex = sandboxed_execute(timeout=30, setup_timeout=300)
    setup, student = execute._injected("pass", "setup"), new_code_cell("pass")
    assert ex.cell_limit(setup) == 300 and ex.cell_limit(student) == 30
    assert sandboxed_execute(timeout=900, setup_timeout=300).cell_limit(setup) == 900  # never below the cell limit


def test_a_canary_whose_setup_timed_out_names_the_real_cause():
    problem = sandboxed_execute(timeout=30, setup_timeout=30).setup_problem(41.2)
    assert problem == (
        "the grader's setup took 41 s (limit 30 s); the machine is loaded: raise --cell-timeout or use fewer workers"
    )
    results = {
        name: Result(student=name, ok=True, flags=[problem, "3 of 3 tests did not report"], results={"notebooks": {}})
        for name in (canary.SOLUTION, canary.BLANK)
    }
    assert canary.verdict(results, [("a-tests", 1)]) == [problem, problem]


@pytest.mark.slow
def test_a_forced_setup_timeout_is_reported_as_the_graders(monkeypatch, tmp_path):
    real = guard.setup_source()
    monkeypatch.setattr(guard, "setup_source", lambda: "import time\ntime.sleep(20)\n" + real)
    monkeypatch.chdir(tmp_path)
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    report = execute.RunReport()
    ex = sandboxed_execute(timeout=1, setup_timeout=3)  # a setup of 1 s would pass: it is not the cell limit
    ex.preprocess(nb, {"nbgrader": {execute.REPORT_KEY: report}, "metadata": {"path": str(tmp_path)}})
    assert report.flags[0].startswith("the grader's setup took ") and "(limit 3 s)" in report.flags[0], report
    assert report.setup_seconds >= 3
    nbformat.validate(nb)
