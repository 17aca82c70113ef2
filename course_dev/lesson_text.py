"""Lesson sources as text: solutions/<lesson>/<lesson>.py is the source, the solution notebook is built from it.

    python -m course_dev.lesson_text build   [LESSON ...]   # .py -> .ipynb (all lessons by default)
    python -m course_dev.lesson_text check   [LESSON ...]   # exit 1 if a notebook differs from its .py
    python -m course_dev.lesson_text extract [LESSON ...]   # .ipynb -> .py, after editing the notebook in Jupyter

Why the text is the source (as in the Annotated Transformer): reviewers diff it, ruff lints and formats
it, and the duplicate finder reads it. The notebook stays beside it, built and committed, because nbgrader
(generate_assignment, formgrader) works on notebooks.

The format is jupytext's percent format with short nbgrader annotations on the cell markers:
    # %% answer="softmax"                        an answer cell (solution: true)
    # %% tests="softmax-tests" points=2          a locked, autograded test cell
    # %% [markdown] manual="quiz-free" points=3  an answer graded by hand
    # %% readonly="intro"                        a locked cell
Cell ids are stable: a graded cell's id is its grade id; any other cell's id is a hash of its content.
nbgrader never copies the .py into the student release (CourseDirectory.ignore in nbgrader_config.py).
"""

import hashlib
import sys

import jupytext
import nbformat

from course_dev.paths import lessons, solution_path, source_path

KINDS = {  # annotation -> nbgrader metadata (schema 3)
    "answer": dict(grade=False, solution=True, locked=False),
    "tests": dict(grade=True, solution=False, locked=True),
    "manual": dict(grade=True, solution=True, locked=False),
    "readonly": dict(grade=False, solution=False, locked=True),
}
METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def _content_id(cell, seen):
    digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:10]
    base, n = f"c{digest}", 2
    while (candidate := base if n == 2 else f"{base}-{n - 1}") in seen:
        n += 1
    return candidate


def notebook_from_text(text):
    """The solution notebook (nbformat node) that a lesson's percent-format source describes."""
    nb = jupytext.reads(text, fmt="py:percent")
    seen = set()
    for cell in nb.cells:
        meta = cell.metadata
        meta.pop("lines_to_next_cell", None)
        for kind, fields in KINDS.items():
            if kind in meta:
                nbg = dict(fields, grade_id=meta.pop(kind), schema_version=3)
                if fields["grade"]:
                    nbg["points"] = meta.pop("points")
                meta["nbgrader"] = nbg
        cell.id = cell.metadata.get("nbgrader", {}).get("grade_id") or _content_id(cell, seen)
        seen.add(cell.id)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata = dict(METADATA)
    nbformat.validate(nb)
    return nb


def text_from_notebook(nb):
    """The percent-format source of a solution notebook (outputs dropped)."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        nbg = cell.metadata.pop("nbgrader", None)
        if nbg:
            kind = next(k for k, f in KINDS.items() if all(nbg.get(key) == v for key, v in f.items()))
            cell.metadata[kind] = nbg["grade_id"]
            if nbg.get("grade"):
                cell.metadata["points"] = nbg["points"]
    nb.metadata = {"jupytext": {"formats": "py:percent"}, **METADATA}
    return jupytext.writes(nb, fmt="py:percent")


def _as_text(nb):
    return nbformat.writes(nb) + "\n"


def build(lesson):
    """Write solutions/<lesson>/<lesson>.ipynb from its .py; True if the notebook changed."""
    text = _as_text(notebook_from_text(source_path(lesson).read_text(encoding="utf-8")))
    target = solution_path(lesson)
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    target.write_text(text, encoding="utf-8")
    return True


def differs(lesson):
    """A one-line reason if the committed notebook is not what its .py builds, else None."""
    if not source_path(lesson).is_file():
        return f"{source_path(lesson).name} is missing: run `python -m course_dev.lesson_text extract {lesson}`"
    built = _as_text(notebook_from_text(source_path(lesson).read_text(encoding="utf-8")))
    if solution_path(lesson).read_text(encoding="utf-8") != built:
        return (
            f"{solution_path(lesson).name} differs from {source_path(lesson).name}: run "
            f"`python -m course_dev.lesson_text build {lesson}` (or `extract` if you edited the notebook)"
        )
    return None


def extract(lesson):
    """Write solutions/<lesson>/<lesson>.py from the notebook, then rebuild the notebook from it."""
    nb = nbformat.read(str(solution_path(lesson)), as_version=4)
    source_path(lesson).write_text(text_from_notebook(nb), encoding="utf-8")
    build(lesson)


def main(argv):
    command, names = argv[0], argv[1:] or lessons()
    if command == "check":
        problems = [p for p in map(differs, names) if p]
        print("\n".join(problems) or f"{len(names)} lesson notebooks match their sources")
        return 1 if problems else 0
    for name in names:
        if command == "build":
            print(f"{name}: {'rebuilt' if build(name) else 'up to date'}")
        elif command == "extract":
            extract(name)
            print(f"{name}: wrote {source_path(name).name}")
        else:
            raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["check"]))
