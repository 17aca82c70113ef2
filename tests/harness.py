"""Shared machinery for the tests: where things are, and a live kernel that runs notebook cells."""
import os
import runpy
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS, NOTEBOOKS, CATALOGS = ROOT / "solutions", ROOT / "notebooks", ROOT / "tests" / "catalogs"
LESSONS = sorted(p.name for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").is_file())

# Kernels are started with the first `python` on PATH (as nbgrader does): make it this interpreter.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
sys.path.insert(0, str(ROOT / "tools"))
import nbclient_fix  # noqa: E402,F401  (jupyter/nbclient#312: widget cells could stall until the cell timeout)


def solution_path(lesson):
    return SOLUTIONS / lesson / f"{lesson}.ipynb"


def student_path(lesson):
    return NOTEBOOKS / lesson / f"{lesson}.ipynb"


def read(path):
    return nbformat.read(str(path), as_version=4)


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def grade_id(cell):
    return nbgrader_meta(cell).get("grade_id")


def is_answer(cell):
    return nbgrader_meta(cell).get("solution", False) and cell.cell_type == "code"


def is_test(cell):
    return nbgrader_meta(cell).get("grade", False) and not nbgrader_meta(cell).get("solution", False)


def cells_by_id(nb):
    return {grade_id(c): c for c in nb.cells if grade_id(c)}


def exercises(nb):
    """(answer cell, tests cell, points) for every graded code exercise and quiz question, in order."""
    cells = cells_by_id(nb)
    return [(c, cells[grade_id(c) + "-tests"], nbgrader_meta(cells[grade_id(c) + "-tests"])["points"])
            for c in nb.cells if is_answer(c) and grade_id(c) + "-tests" in cells]


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
        self.client = NotebookClient(self.nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(self.path.parent)}})
        self.cell_seconds = []

    def __enter__(self):
        self._setup = self.client.setup_kernel()
        self._setup.__enter__()
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
        self.nb.cells.append(nbformat.v4.new_code_cell(source))    # nbclient writes results back by index
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


def copy_course(dest, lessons, extra=()):
    """A temporary nbgrader course: the configuration, the tools and the given lessons' solutions."""
    dest = Path(dest)
    for name in ("nbgrader_config.py", "tools", *extra):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    for lesson in lessons:
        shutil.copytree(SOLUTIONS / lesson, dest / "solutions" / lesson)
    return dest
