"""Maths in exported HTML pages without the internet: LaTeX becomes MathML when the page is written, and the page
asks no server for anything (no MathJax, no require.js).

nbconvert's HTML pages (a notebook saved as HTML, nbgrader's feedback and formgrader pages) load MathJax
from a CDN, so on a network without internet they show raw `$\\sqrt{d_k}$`. This preprocessor turns
every `$…$` and `$$…$$` of the markdown cells into MathML, which browsers draw themselves: the page
needs no script, renders from a file, inside JupyterLab's HTML viewer and offline. It is configured,
not patched in: `HTMLExporter.preprocessors` (nbgrader_config.py, the Makefile's `lab`, the hub).
"""

import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

# Code is left alone: fenced blocks and inline code spans are copied as they are.
CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.S)
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\\)\$(?!\$)")  # as MathJax reads $…$: not `$ 5`


def mathml(tex, display):
    """MathML for one formula, or None when it cannot be converted (the TeX then stays as written)."""
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - a student's broken formula must not break the page
        return None


def _replace(pattern, text, display):
    def one(match):
        return mathml(match.group(1), display) or match.group(0)

    return pattern.sub(one, text)


def markdown_with_mathml(source):
    """The markdown `source` with its formulas as MathML (outside code)."""
    parts = CODE.split(source)
    for i in range(0, len(parts), 2):  # even parts are text, odd parts are code
        parts[i] = _replace(INLINE, _replace(DISPLAY, parts[i], True), False)
    return "".join(parts)


class MathML(Preprocessor):
    """nbconvert preprocessor: LaTeX in markdown cells -> MathML, so that HTML pages need no MathJax."""

    enabled = Bool(True, help="on wherever it is listed (nbconvert preprocessors are off by default)").tag(config=True)

    def preprocess(self, nb, resources):
        resources["mathjax_url"] = ""  # nothing left for MathJax: don't make the page fetch it
        # nor require.js, which only loads saved widget state's JavaScript (the course's explorers show images);
        # a <script> with an empty src fetches nothing (HTML spec: it fires an error event instead).
        resources["require_js_url"] = ""
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and "$" in cell.source:
            cell.source = markdown_with_mathml(cell.source)
        return cell, resources
