"""The feedback page's question labels (autograde/feedback.py NameQuestions): every graded cell of every lesson is
named after its exercise or quiz question, never after another bold line of the lesson's text."""

import re

import pytest
from conftest import lesson_params
from harness import is_test, nbgrader_meta, read, solution_path

from autograde.feedback import NameQuestions, question_title


def test_question_title_drops_points():
    assert question_title("Exercise 1.1 — one RNN step (2 points)") == "Exercise 1.1 — one RNN step"
    assert question_title("Q3 (1 point).") == "Q3"
    assert question_title("Q5 (optional, section 5; 0 points)") == "Q5"


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_graded_cell_is_named_after_its_exercise_or_question(lesson):
    nb, _ = NameQuestions().preprocess(read(solution_path(lesson)), {})
    titles = {nbgrader_meta(c)["grade_id"]: nbgrader_meta(c)["title"] for c in nb.cells if is_test(c)}
    wrong = {gid: t for gid, t in titles.items() if not re.fullmatch(r"((Optional e|E)xercise \d+\.\d+ — .+|Q\d+)", t)}
    assert titles and not wrong, wrong


def test_submit_does_not_count_checkpoints_as_extra_notebooks(tmp_path):
    from autograde.exchange import submitted_notebooks

    (tmp_path / ".ipynb_checkpoints").mkdir()
    for name in ("01_why_attention.ipynb", ".ipynb_checkpoints/01_why_attention-checkpoint.ipynb"):
        (tmp_path / name).write_text("{}")
    assert submitted_notebooks(tmp_path) == {"01_why_attention.ipynb"}


def test_the_formgraders_rubric_draws_its_maths(tmp_path):
    """The formgrader's page runs the course's HTMLExporter preprocessors in their configured order: the rubric is
    put beside the free answer first, then every formula of the cell, the rubric's included, becomes MathML."""
    import nbformat
    from nbconvert import HTMLExporter
    from nbgrader.apps import NbGrader
    from traitlets import import_item

    from course_dev.paths import ROOT

    app = NbGrader()
    app.config_file_paths.append([str(ROOT)])
    app.load_config_file()
    names = list(app.config.HTMLExporter.preprocessors)
    meta = {"grade": True, "solution": True, "grade_id": "quiz-free", "points": 2, "schema_version": 3}
    free = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE", metadata={"nbgrader": meta})
    solution = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("Scale by $\\sqrt{d_k}$.", metadata=free.metadata)]
    )
    (tmp_path / "lesson").mkdir()
    nbformat.write(solution, str(tmp_path / "lesson" / "lesson.ipynb"))
    nb, resources = nbformat.v4.new_notebook(cells=[free]), {"assignment_id": "lesson", "notebook_id": "lesson"}
    resources["submission_id"] = "s1"
    for name in names:
        step = import_item(name)(parent=HTMLExporter(config=app.config, template_name="formgrade"))
        if hasattr(step, "source"):
            step.source = str(tmp_path)
        nb, resources = step(nb, resources)
    assert "Rubric" in nb.cells[0].source and "<math" in nb.cells[0].source and "$" not in nb.cells[0].source


def _page_notebook(image):
    """A notebook with maths, code and a printed result; with `image`, also a figure as raw HTML whose alt text hides
    in another attribute, and a PNG output without alt text."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    outputs = [new_output("stream", name="stdout", text="scores: [0.1 0.9]\n")]
    if image:
        raw = f'<IMG data-alt="a dot" src="data:image/png;base64,{png}">'
        outputs += [
            new_output("display_data", data={"text/html": raw}),
            new_output("display_data", data={"image/png": png}),
        ]
    cells = [new_markdown_cell("# Title\n\nThe scores $q \\cdot k$ and **bold** text."), new_code_cell("x = 1")]
    cells.append(new_code_cell("show()", outputs=outputs))
    return new_notebook(cells=cells, metadata={"language_info": {"name": "python"}})


@pytest.mark.parametrize("template", ["classic", "lab"])
@pytest.mark.parametrize("image", [True, False])
def test_the_feedback_page_is_nbconverts_page(template, image):
    """The grading workers' exporter skips nbconvert's accessibility pass only where it changes nothing: its page
    is nbconvert's, byte for byte where the pass may have work to do (any image, the lab template), and the same
    document where it has none."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from autograde.feedback import cached_exporter_class

    nb = _page_notebook(image)
    ours, _ = cached_exporter_class()(template_name=template).from_notebook_node(nb)
    plain, _ = HTMLExporter(template_name=template).from_notebook_node(nb)
    if template == "lab" or image:
        assert ours == plain
        assert not image or ours.count("No description has been provided") == 2  # both images got nbconvert's alt
    else:
        assert ours != plain and str(BeautifulSoup(ours, features="html.parser")) == plain


def test_remembered_answers_once_per_key_and_forgets_the_oldest():
    from autograde.feedback import cell_key, remembered

    calls = []
    double = remembered(lambda text, **kw: calls.append(text) or text * 2, cell_key, size=2)
    assert [double("a"), double("a", metadata={"x": 1}), double("a")] == ["aa"] * 3
    assert calls == ["a", "a"], "same source, other metadata: worked on again; the same key: remembered"
    double("b"), double(["not text"]), double(["not text"])
    assert calls == ["a", "a", "b", ["not text"], ["not text"]], "only text is remembered"
    double("a")
    assert calls[-1] == "a", "the oldest of size=2 was forgotten"
