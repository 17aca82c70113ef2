"""Edit a lesson as a plain-text script, then turn it back into the notebook.

    python tools/lesson_text.py to-py    solutions/02_dot_product/02_dot_product.ipynb   # -> .py next to it
    python tools/lesson_text.py to-ipynb solutions/02_dot_product/02_dot_product.py     # -> .ipynb next to it

The script is jupytext's percent format with short nbgrader annotations on the cell markers:
    # %% answer="softmax"                      an answer cell (solution: true)
    # %% tests="softmax-tests" points=2        a locked, autograded test cell
    # %% [markdown] manual="quiz-free" points=3  an answer graded by hand
The notebook in solutions/ stays the single source of truth: delete the .py when you are done.
"""
import sys
from pathlib import Path

import jupytext
import nbformat

KINDS = {  # annotation -> nbgrader metadata (schema 3)
    "answer": dict(grade=False, solution=True, locked=False),
    "tests": dict(grade=True, solution=False, locked=True),
    "manual": dict(grade=True, solution=True, locked=False),
    "readonly": dict(grade=False, solution=False, locked=True),
}


def to_ipynb(py_path):
    nb = jupytext.read(py_path, fmt="py:percent")
    stem = Path(py_path).stem
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata
        meta.pop("lines_to_next_cell", None)
        cell.id = f"{stem[:2]}-{i:03d}"
        for kind, fields in KINDS.items():
            if kind in meta:
                grade_id = meta.pop(kind)
                nbg = dict(fields, grade_id=grade_id, schema_version=3)
                if fields["grade"]:
                    nbg["points"] = meta.pop("points")
                meta["nbgrader"] = nbg
                cell.id = grade_id
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    out = Path(py_path).with_suffix(".ipynb")
    nbformat.validate(nb)
    nbformat.write(nb, out)
    return out


def to_py(ipynb_path):
    nb = nbformat.read(ipynb_path, as_version=4)
    for cell in nb.cells:
        nbg = cell.metadata.pop("nbgrader", None)
        if nbg:
            kind = next(k for k, f in KINDS.items() if all(nbg.get(key) == v for key, v in f.items()))
            cell.metadata[kind] = nbg["grade_id"]
            if nbg.get("grade"):
                cell.metadata["points"] = nbg["points"]
    out = Path(ipynb_path).with_suffix(".py")
    jupytext.write(nb, out, fmt="py:percent")
    return out


if __name__ == "__main__":
    command, path = sys.argv[1:3]
    print({"to-py": to_py, "to-ipynb": to_ipynb}[command](path))
