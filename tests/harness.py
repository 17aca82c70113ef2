"""Shared machinery for the tests: where things are, and a live kernel that runs notebook cells."""

import runpy
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course_dev import nbclient_fix, widget_driver
from course_dev.cells import cells_by_id, exercises, grade_id, is_answer, is_test, nbgrader_meta  # noqa: F401
from course_dev.course import copy_course  # noqa: F401
from course_dev.env import use_this_python
from course_dev.paths import ROOT, lesson_meta, lessons, solution_path, student_path  # noqa: F401

CATALOGS = ROOT / "tests" / "catalogs"
LESSONS = lessons()
# The browser suite drives the explorers of a few lessons that, together, have every kind of control (as
# course_dev.widget_driver.kind names it); every explorer of every lesson is driven inside its kernel by
# test_lessons.py. A lesson with a new kind of control fails test_lessons until a lesson here has it.
BROWSER_LESSON_FOR_KIND = {
    "IntSlider": "10_causal_decoder",
    "FloatSlider": "04_softmax",
    "Text": "10_causal_decoder",
    "TypeableChoice(Dropdown)": "04_softmax",
    "TypeableChoice(SelectionSlider)": "04_softmax",
}

use_this_python()  # kernels start with the first `python` on PATH (as nbgrader's do): this interpreter
nbclient_fix.apply()  # jupyter/nbclient#312: widget cells could stall until the cell timeout


def read(path):
    return nbformat.read(str(path), as_version=4)


def load_catalog(lesson):
    path = CATALOGS / f"{lesson}.py"
    return runpy.run_path(str(path))["EXERCISES"] if path.exists() else {}


def errors(outputs):
    return [o for o in outputs if o.output_type == "error"]


def stderr(outputs):
    return "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")


def describe(outputs):
    """One line per error or stderr output, for assertion messages."""
    lines = [f"{o.ename}: {o.evalue}" for o in errors(outputs)]
    return "; ".join(lines + ([f"stderr: {stderr(outputs)[:300]}"] if stderr(outputs) else []))


class LiveKernel:
    """Run a notebook's cells in one kernel and keep the kernel for more code afterwards."""

    def __init__(self, path, timeout=120):
        self.path = Path(path)
        self.nb = read(self.path)
        self.client = NotebookClient(
            self.nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(self.path.parent)}},
        )
        self.cell_seconds = []

    def __enter__(self):
        self._setup = self.client.setup_kernel()
        self._setup.__enter__()
        self.run(widget_driver.RECORD_SOURCE)  # the tests list the explorers
        return self

    def __exit__(self, *exc):
        return self._setup.__exit__(*exc)

    def run_all(self):
        """Run every cell in order; return the wall time in seconds."""
        start = time.perf_counter()
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                t0 = time.perf_counter()
                self.client.execute_cell(cell, index)
                self.cell_seconds.append((index, time.perf_counter() - t0))
        return time.perf_counter() - start

    def run(self, source):
        """Run extra code in the kernel; return its outputs."""
        self.nb.cells.append(nbformat.v4.new_code_cell(source))  # nbclient writes results back by index
        try:
            return self.client.execute_cell(self.nb.cells[-1], len(self.nb.cells) - 1).outputs
        finally:
            self.nb.cells.pop()

    def value(self, expression):
        """Evaluate an expression in the kernel and return its repr()'d value as a Python object."""
        outputs = self.run(f"print(repr({expression}))")
        text = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")
        if errors(outputs) or not text:
            raise RuntimeError(f"could not evaluate {expression!r}: {describe(outputs)}")
        return eval(text)  # noqa: S307 - our own repr of plain data
