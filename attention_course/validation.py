"""Validate in one line: each failing check says first which exercise it is and what is wrong.

nbgrader's Validator reports a failing test cell as its whole source, then its traceback, with the check's
message on the last line. `CourseValidator` reports, for each failing graded cell, the exercise's title and the
message first (`Exercise 1.1 — one step of an RNN: rnn_step on the worked example: tanh is missing: …`), then only
the check's calls (the top-level lines of the cell, not the helper functions it defines). Same results, same
pass/fail decisions: only the words of a failure change. Used by the Validate button (nbgrader's lab extension
shows the first part, then the second) and by `nbgrader validate` / `make validate`.

nbgrader 0.9.6 has no setting for the Validator's class (the Validate handler and `nbgrader validate` both call
`Validator(...)` by name), so `install()`, run by the student nbgrader configuration (tools/student/
nbgrader_config.py, which the course, the student bundle and every hub user load), points both at this class.
The titles are the ones the feedback pages use (autograde/feedback.py imports `cell_titles`).
"""

import ast
import html
import re
import sys
import textwrap

from nbgrader.validator import Validator

HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*$")
QUESTION = re.compile(
    r"^\s*\*\*((?:Q\d+|(?:Optional )?[Ee]xercise\s+\d+\.\d+)\b.*?)\*\*"
)  # a quiz or exercise label, not any bold line
POINTS = re.compile(r"\s*\([^)]*\b(points?|graded by hand)\b[^)]*\)\s*|[.:]\s*$")
FMT_SKIP = re.compile(r"\s*# fmt: (skip|off|on)\s*$")  # the formatter's marks say nothing to a student
CALL_LINES = 6  # at most this many lines of a check's calls are shown under its message
WIDTH = 100  # characters a line of the Validate dialog shows at 1280 px (it does not wrap lines itself)


def question_title(text):
    """'Q3 (1 point).' -> 'Q3'; 'Exercise 1.1 — one RNN step (2 points)' -> 'Exercise 1.1 — one RNN step'."""
    return POINTS.sub("", text).strip(" .:*") or text.strip()


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def cell_titles(cells):
    """For each cell, the last heading or bold question label of a markdown cell above it (or in it), or ''."""
    title, titles = "", []
    for cell in cells:
        if cell.get("cell_type") == "markdown" and not _nbgrader(cell).get("solution"):
            for line in cell.get("source", "").splitlines():
                found = HEADING.match(line) or QUESTION.match(line)
                if found:
                    title = question_title(found.group(1))
        titles.append(title)
    return titles


def failure_message(cell, fallback):
    """What a failing cell says: the check's message (an AssertionError's text), another error as `Name: text`,
    what it printed to stderr, or nbgrader's own words (`fallback`: no response, partial credit)."""
    for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
        if output.get("output_type") == "error":
            name, text = output.get("ename", "Error"), str(output.get("evalue", "")).strip()
            return text if name == "AssertionError" and text else f"{name}: {text}".rstrip(": ")
    for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            return "it printed an error: " + textwrap.shorten(str(output.get("text", "")), 300)
    return fallback.strip()


def check_calls(source):
    """The lines of a check cell that run the checks: its top-level statements, without the helper functions and
    classes it defines, without comments; at most CALL_LINES lines."""
    lines = source.strip().splitlines()
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return "\n".join(lines[-CALL_LINES:])
    kept = []
    for node in body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kept.extend(source.splitlines()[node.lineno - 1 : node.end_lineno])
    kept = [FMT_SKIP.sub("", line) for line in kept if line.strip() and not line.lstrip().startswith("#")] or lines
    kept = [line if len(line) <= WIDTH else line[: WIDTH - 1] + "…" for line in kept[:CALL_LINES]] + (
        ["…"] if len(kept) > CALL_LINES else []
    )
    return "\n".join(kept)


def headline(title, message):
    """`title: message`, without saying the title twice (`Q3: Q3: …`)."""
    label = title.split(" — ")[0].strip()
    return message if not title or (label and message.startswith(label)) else f"{title}: {message}"


class CourseValidator(Validator):
    """nbgrader's Validator; a failing graded cell is reported as `title: message`, then the check's calls."""

    def _get_failed_cells(self, nb):
        failed = super()._get_failed_cells(nb)
        titles = dict(zip(map(id, nb.cells), cell_titles(nb.cells)))
        self._failures = [(titles.get(id(cell), ""), cell) for cell in failed]
        return failed

    def validate(self, filename):
        self._failures = []
        results = super().validate(filename)
        for entry, (title, cell) in zip(results.get("failed", []), self._failures):
            message = failure_message(cell, entry["raw_error"])
            calls = check_calls(cell.source) if cell.cell_type == "code" else ""
            entry["source"] = textwrap.fill(headline(title, message), WIDTH)  # shown first
            entry["raw_error"] = f"The check:\n{calls}" if calls else ""
            entry["error"] = html.escape(entry["raw_error"])  # the lab extension shows it as HTML
        return results

    def _print_error(self, source, error):
        self.stream.write("\n" + "=" * self.width + "\n")
        self.stream.write(textwrap.fill(source, width=self.width, subsequent_indent=self.indent) + "\n")
        if error:
            self.stream.write("\n" + self._indent(error) + "\n")


def install():
    """Make nbgrader's Validate button and `nbgrader validate` use CourseValidator. Both look `Validator` up in
    their own module when they run; only modules already imported are touched (the server imports the handler
    when it loads nbgrader's extension, every nbgrader command imports nbgrader.apps), so nothing is imported."""
    for name in ("nbgrader.server_extensions.validate_assignment.handlers", "nbgrader.apps.validateapp"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "Validator", None) is Validator:
            module.Validator = CourseValidator
