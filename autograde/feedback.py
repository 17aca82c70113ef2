"""Step 5, feedback: nbgrader's feedback page without the hidden tests.

nbgrader's own GenerateFeedback shows the source of the hidden tests (and their tracebacks quote
it); `HideHiddenTests` removes both. Students who could not be graded get a short page saying so.
"""

import html
import os
import re

HIDDEN = re.compile(r"[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S)


def hide_hidden_tests_class():
    from nbgrader.preprocessors import NbGraderPreprocessor

    class HideHiddenTests(NbGraderPreprocessor):
        """Remove the hidden tests' source from test cells, and their tracebacks (which quote it)."""

        def preprocess_cell(self, cell, resources, index):
            m = cell.metadata.get("nbgrader", {})
            if m.get("grade") and not m.get("solution"):
                if "### BEGIN HIDDEN TESTS" in cell.source:
                    cell.source = HIDDEN.sub("# (hidden tests were run here)\n", cell.source)
                for output in cell.get("outputs", []):
                    if output.get("output_type") == "error":
                        output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
            return cell, resources

    return HideHiddenTests


_CLASS = None
_EXPORTER = None


def cached_exporter_class():
    """nbconvert's HTML exporter, with one Jinja environment for the whole worker: the templates are
    loaded and compiled once, not once per student (the configuration is the same for all)."""
    from nbconvert.exporters import HTMLExporter

    class CachedHTMLExporter(HTMLExporter):
        shared = {}

        def _create_environment(self):
            key = (tuple(self.template_paths), self.template_name, repr(sorted(self.filters)))
            if key not in CachedHTMLExporter.shared:
                CachedHTMLExporter.shared[key] = super()._create_environment()
            return CachedHTMLExporter.shared[key]

    return CachedHTMLExporter


def generate(config, root, lesson, student, autograded, feedback, db_url):
    """nbgrader GenerateFeedback for one student: autograded/<student>/<lesson>/ -> feedback/..."""
    global _CLASS, _EXPORTER
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    _CLASS = _CLASS or hide_hidden_tests_class()
    _EXPORTER = _EXPORTER or cached_exporter_class()
    config = Config(config)
    config.merge(
        Config(
            {
                "GenerateFeedback": {"preprocessors": [GetGrades, CSSHTMLHeaderPreprocessor, _CLASS]},
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
    cwd = os.getcwd()
    os.chdir(root)
    try:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = lesson, student
        converter = GenerateFeedback(coursedir=coursedir, config=config)
        converter.exporter_class = _EXPORTER
        converter.force = True
        converter.log.setLevel("ERROR")
        converter.start()
    finally:
        os.chdir(cwd)
    return sorted(str(p) for p in (feedback / student / lesson).glob("*.html"))


def failure_page(student, lesson, reason):
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(lesson)}: {html.escape(student)}"
        f"</title></head><body><h1>{html.escape(lesson)}</h1><p>Your submission could not be graded automatically: "
        f"<b>{html.escape(reason)}</b>.</p><p>Your instructor will look at it; nothing you submitted was lost."
        "</p></body></html>"
    )
