"""Validate in one line (attention_course/validation.py): a failing check is reported as its exercise's title and its
message first, then the check's calls only; the Validate button and `nbgrader validate` both use it."""

import io
import os
import subprocess
import sys

import nbformat
from harness import ROOT

from attention_course import validation

HELPER = "\n".join(["def _check_weights(w, what):", '    """A long helper, as in the lessons."""'] + [
    f"    x{i} = {i}  # line {i} of the helper" for i in range(30)
] + ['    assert w == 1, f"{what}: the weights contain 2, not 1."'])  # fmt: skip


def notebook():
    md = nbformat.v4.new_markdown_cell("### Exercise 9.1 — weights that sum to one (2 points)\n\nText.")
    answer = nbformat.v4.new_code_cell("w = 2")
    answer.metadata.nbgrader = {"grade": False, "solution": True, "locked": False, "grade_id": "w",
                                "schema_version": 3}  # fmt: skip
    check = nbformat.v4.new_code_cell(HELPER + "\n\n\n# Visible check\n_check_weights(w, 'the weights')\nprint('ok')")
    check.metadata.nbgrader = {"grade": True, "solution": False, "locked": True, "grade_id": "w-tests",
                               "points": 2, "schema_version": 3}  # fmt: skip
    quiz_md = nbformat.v4.new_markdown_cell("**Q3 (1 point).** Which one?")
    quiz = nbformat.v4.new_code_cell("assert False, 'Q3: replace None with your answer.'")
    quiz.metadata.nbgrader = {"grade": True, "solution": False, "locked": True, "grade_id": "q3",
                              "points": 1, "schema_version": 3}  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[md, answer, check, quiz_md, quiz])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def test_check_calls_drop_the_helpers_and_comments():
    source = HELPER + "\n\n# Visible check\n_check_weights(w, 'w')  # fmt: skip\nchecks.passed('w')"
    calls = validation.check_calls(source)
    assert calls == "_check_weights(w, 'w')\nchecks.passed('w')"
    assert validation.check_calls("f(" + "1, " * 60 + ")") == "f(" + "1, " * 32 + "1…"
    long = "\n".join(f"f({i})" for i in range(10))
    assert validation.check_calls(long).splitlines()[-1] == "…" and len(validation.check_calls(long).splitlines()) == 7


def test_headline_names_the_exercise_once():
    assert validation.headline("Exercise 9.1 — sums", "w: wrong.") == "Exercise 9.1 — sums: w: wrong."
    assert validation.headline("Q3", "Q3: replace None.") == "Q3: replace None."
    assert validation.headline("", "no title") == "no title"


def test_a_failing_check_says_title_and_message_first(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), str(path))
    validator = validation.CourseValidator()
    validator.stream = io.StringIO()
    results = validator.validate(str(path))
    first, quiz = results["failed"]
    assert first["source"] == "Exercise 9.1 — weights that sum to one: the weights: the weights contain 2, not 1."
    assert first["raw_error"] == "The check:\n_check_weights(w, 'the weights')\nprint('ok')"
    assert "def _check_weights" not in first["error"] and "line 3" not in first["error"]
    assert quiz["source"] == "Q3: replace None with your answer."
    validator.validate_and_print(str(path))
    printed = validator.stream.getvalue()
    assert "=\nExercise 9.1 — weights that sum to one: the weights: the weights contain 2, not 1.\n" in printed
    assert "Traceback" not in printed and "def _check_weights" not in printed


def test_the_student_config_makes_validate_use_it(tmp_path):
    """The Validate handler and `nbgrader validate` use CourseValidator once the student configuration ran (in
    the server, at every Validate; in `nbgrader validate`, when it starts)."""
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(), str(path))
    script = (
        "from nbgrader.server_extensions.validate_assignment import handlers\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        f"PyFileConfigLoader('nbgrader_config.py', path={str(ROOT / 'tools' / 'student')!r}).load_config()\n"
        "from attention_course.validation import CourseValidator\n"
        "assert handlers.Validator is CourseValidator, handlers.Validator\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, timeout=120)
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    out = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert "\nExercise 9.1 — weights that sum to one: the weights: the weights contain 2, not 1.\n" in out.stdout, (
        out.stdout + out.stderr
    )
