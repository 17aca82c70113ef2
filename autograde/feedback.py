"""Step 5, feedback: the course's feedback page, made by nbgrader's own GenerateFeedback.

Every way to make feedback gives the same page: the grading command, `nbgrader generate_feedback` and
the formgrader's Generate Feedback button all run nbgrader's GenerateFeedback with the preprocessors
that nbgrader_config.py lists and the course's template (autograde/templates/feedback/):

* `GradesOrPending` (nbgrader's GetGrades) also marks free answers that wait for a human: "pending";
* `HideHiddenTests` (nbgrader's ClearHiddenTests) removes the hidden tests and the tracebacks that quote them;
* `NameQuestions` names every graded cell after the lesson's heading or question (`Q3`, `Exercise 1.2 — …`);
* `attention_course.offline_maths.MathML` draws the maths without the internet.

The formgrader also shows each free answer's rubric, from the solution notebook (`RubricBeside`); that one
runs in the formgrader only, never in a page a student gets. Students who could not be graded get a
short page saying so (`failure_page`).
"""

import contextlib
import html
import json
import re
from pathlib import Path

from nbgrader.preprocessors import ClearHiddenTests, GetGrades, NbGraderPreprocessor
from traitlets import Unicode

from attention_course.validation import cell_titles, question_title  # noqa: F401  (the titles Validate shows too)

from .cells import grade_id, is_grade, is_manual, is_task, is_test, nbgrader_meta
from .gradebook import waits_for_hand_grade

HIDDEN_NOTE = "# (hidden tests ran here when your work was graded)"


class GradesOrPending(GetGrades):
    """nbgrader's GetGrades, and for each graded cell whether its score still waits for a human."""

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        ids = (grade_id(cell), self.notebook_id, self.assignment_id, self.student_id)
        grade = self.gradebook.find_grade(*ids)
        pending = waits_for_hand_grade(grade)
        cell.metadata.nbgrader["pending"] = pending
        if pending:
            resources["nbgrader"]["pending"] = resources["nbgrader"].get("pending", 0) + grade.max_score


class HideHiddenTests(ClearHiddenTests):
    """nbgrader's ClearHiddenTests for pages students read: the hidden tests go, a note says where they ran,
    and a failing test cell shows its message alone (its traceback would quote the hidden code)."""

    def preprocess_cell(self, cell, resources, index):
        before = cell.source
        cell, resources = super().preprocess_cell(cell, resources, index)
        if cell.source != before:
            cell.source = cell.source.rstrip("\n") + "\n" + HIDDEN_NOTE
        if is_test(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources


class NameQuestions(NbGraderPreprocessor):
    """Each graded cell gets `nbgrader.title`: the last heading or bold question label above it."""

    def preprocess(self, nb, resources):
        for cell, title in zip(nb.cells, cell_titles(nb.cells)):
            if is_grade(cell) or is_task(cell):
                nbgrader_meta(cell)["title"] = title or grade_id(cell) or ""
        return nb, resources


class RubricBeside(NbGraderPreprocessor):
    """Formgrader only: under each free answer, the model answer and rubric of the solution notebook."""

    source = Unicode("", help="the course's source folder (solutions/)").tag(config=True)

    def preprocess(self, nb, resources):
        in_formgrader = getattr(self.parent, "template_name", "") == "formgrade" and "submission_id" in resources
        path = Path(self.source) / resources.get("assignment_id", "") / f"{resources.get('notebook_id', '')}.ipynb"
        if not in_formgrader or not path.is_file():
            return nb, resources
        import nbformat

        rubrics = {
            grade_id(c): c.source
            for c in nbformat.read(str(path), as_version=4).cells
            if is_manual(c) and c.cell_type == "markdown"
        }
        for cell in nb.cells:
            rubric = rubrics.get(grade_id(cell))
            if cell.cell_type == "markdown" and rubric:
                quoted = "\n".join("> " + line for line in rubric.replace("### BEGIN SOLUTION", "").splitlines())
                quoted = quoted.replace("> ### END SOLUTION", ">")
                cell.source += f"\n\n---\n\n**Rubric** (from the solution; students never see it):\n\n{quoted}\n"
        return nb, resources


_EXPORTER = None


def remembered(func, key, size=4096):
    """`func`, a pure function, remembering its last `size` answers by key(*args, **kw) (None: not remembered). Most
    of a page is the lesson's own text and code, the same for every student: sanitising and highlighting them were
    most of a page's time. A student's own text is still worked on (whatever is not remembered is)."""
    answers = {}

    def once(*args, **kw):
        name = key(*args, **kw)
        if name is not None and name in answers:
            return answers[name]
        answer = func(*args, **kw)
        if name is not None:
            if len(answers) >= size:
                answers.pop(next(iter(answers)))
            answers[name] = answer
        return answer

    return once


def text_key(element):
    """What clean_html's answer depends on: its text."""
    return element if isinstance(element, (str, bytes)) else None


def cell_key(source, language=None, metadata=None):
    """What highlight_code's answer depends on: the cell's source, language and metadata (a magic's language)."""
    return (source, language, json.dumps(metadata, sort_keys=True, default=str)) if isinstance(source, str) else None


# What nbconvert's accessibility pass can change in a page (HTMLExporter.from_notebook_node, through BeautifulSoup): an
# image without alt text gets a stock one, the lab template's cells get a tabindex. A page with any image runs it
# (a student's raw HTML can hide a missing alt in many spellings); a page with none gives it nothing to do.
NEEDS_ACCESSIBILITY_PASS = re.compile(r"<img\b|jp-Notebook", re.IGNORECASE)


def cached_exporter_class():
    """nbconvert's HTML exporter, with one Jinja environment for the whole worker: the templates are loaded and
    compiled once, not once per student (the configuration is the same for all), and the sanitiser and the code
    highlighter remember the lesson's text and code (`remembered`). nbconvert then re-parses the whole page with
    BeautifulSoup for its accessibility pass, most of a page's time; a page of the course's (classic template) without
    images gives that pass nothing to do, so it runs only when there is an image or a lab cell."""
    from nbconvert.exporters import HTMLExporter, TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class CachedHTMLExporter(HTMLExporter):
        shared, highlighters = {}, {}

        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter.from_notebook_node up to its accessibility pass: the same filters, the same template
            language = nb.metadata.get("language_info", {})
            lexer = language.get("pygments_lexer", language.get("name", None))
            highlight = self.filters.get("highlight_code") or self.highlighter(lexer)
            given = resources  # the exporter's preprocessors work on copies of the notebook and its resources
            resources = self._init_resources(resources)
            data_types = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
            self.register_filter("highlight_code", highlight)
            self.register_filter("filter_data_type", data_types)
            page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            if NEEDS_ACCESSIBILITY_PASS.search(page):
                return super().from_notebook_node(nb, given, **kw)
            return page, resources

        def highlighter(self, lexer):
            if lexer not in CachedHTMLExporter.highlighters:
                highlight = Highlight2HTML(pygments_lexer=lexer, parent=self)
                CachedHTMLExporter.highlighters[lexer] = remembered(highlight, cell_key)
            return CachedHTMLExporter.highlighters[lexer]

        def _create_environment(self):
            key = (tuple(self.template_paths), self.template_name, repr(sorted(self.filters)))
            if key not in CachedHTMLExporter.shared:
                environment = super()._create_environment()
                if "clean_html" in environment.filters:
                    environment.filters["clean_html"] = remembered(environment.filters["clean_html"], text_key)
                CachedHTMLExporter.shared[key] = environment
            return CachedHTMLExporter.shared[key]

    return CachedHTMLExporter


def generate(config, root, lesson, student, autograded, feedback, db_url):
    """nbgrader GenerateFeedback for one student: autograded/<student>/<lesson>/ -> feedback/...
    With the course's configuration (nbgrader_config.py), so the page is the one the formgrader's button makes."""
    global _EXPORTER
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    _EXPORTER = _EXPORTER or cached_exporter_class()
    config = Config(config)
    config.merge(
        Config(
            {
                "CourseDirectory": {
                    "root": str(root),
                    "autograded_directory": str(autograded),
                    "feedback_directory": str(feedback),
                    "db_url": db_url,
                },
                "Application": {"log_level": "ERROR"},
            }
        )
    )
    with contextlib.chdir(root):
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = lesson, student
        converter = GenerateFeedback(coursedir=coursedir, config=config)
        converter.exporter_class = _EXPORTER
        converter.force = True
        converter.log.setLevel("ERROR")
        converter.start()
    return sorted(str(p) for p in (feedback / student / lesson).glob("*.html"))


def failure_page(student, lesson, reason):
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(lesson)}: "
        f"{html.escape(student)}</title></head><body><h1>{html.escape(lesson)}</h1><p>Your submission could not be "
        f"graded automatically: <b>{html.escape(reason)}</b>.</p><p>Your instructor will look at it; nothing you "
        "submitted was lost.</p></body></html>"
    )
