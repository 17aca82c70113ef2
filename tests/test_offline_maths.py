"""attention_course/offline_maths.py: formulas become MathML, code stays as written, and a page made with it
asks no CDN for MathJax; every formula of every lesson converts."""

import re

import pytest
from harness import LESSONS, read, student_path

from attention_course.offline_maths import MathML, markdown_with_mathml


def test_formulas_become_mathml_and_code_stays():
    text = markdown_with_mathml(
        "Scale by $\\sqrt{d_k}$:\n\n$$s = \\frac{q \\cdot k}{\\sqrt{d_k}}$$\n\n`cost = $5` and\n```\nx = '$a$'\n```"
    )
    assert text.count("<math") == 2 and 'display="block"' in text
    assert "`cost = $5`" in text and "x = '$a$'" in text, "code is left alone"
    assert markdown_with_mathml("a price of 5$ and 6$") == "a price of 5$ and 6$", "no formula, no change"


def test_a_broken_formula_stays_as_written():
    assert markdown_with_mathml("$\\frac{1}{$ x") == "$\\frac{1}{$ x"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_formula_of_a_lesson_converts(lesson):
    left = []
    for cell in read(student_path(lesson)).cells:
        if cell.cell_type == "markdown":
            text = re.sub(r"```.*?```|`[^`\n]*`", "", markdown_with_mathml(cell.source), flags=re.S)
            left += re.findall(r"\$[^$\n]+\$", text)
    assert not left, f"{lesson}: formulas left as TeX: {left[:5]}"


def test_an_exported_page_loads_no_mathjax():
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.register_preprocessor(MathML, enabled=True)
    page, _ = exporter.from_notebook_node(read(student_path(LESSONS[0])))
    assert "<math" in page and "mathjax" not in " ".join(re.findall(r'<script src="([^"]*)"', page)).lower()


def test_an_exported_page_draws_its_maths_offline(chromium, tmp_path):
    """A lesson saved as HTML the way `make lab` and the student bundle save it, opened from a file in
    Chromium with every request outside the page blocked: the formulas are drawn, nothing is fetched for them."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.register_preprocessor(MathML, enabled=True)
    page_text, _ = exporter.from_notebook_node(read(student_path("03_scaling")))
    path = tmp_path / "03_scaling.html"
    path.write_text(page_text)
    context = chromium.new_context()
    asked = []

    def offline(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    context.route("**/*", offline)
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        heights = page.evaluate("[...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
    finally:
        context.close()
    assert heights and all(h > 0 for h in heights), f"{sum(h > 0 for h in heights)} of {len(heights)} formulas drawn"
    assert not asked, f"the page asked the network for {asked}"


def test_nbconvert_from_the_command_line_exports_offline(tmp_path):
    """`jupyter nbconvert --to html` typed in a terminal of `make lab` (JUPYTER_CONFIG_PATH=tools/student, as in the
    bundle and ~/.jupyter on the hub) uses the course's settings: maths as MathML, no script from any host."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from harness import ROOT

    shutil.copy(student_path("03_scaling"), tmp_path / "lesson.ipynb")
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), "nbconvert", "--to", "html", str(tmp_path / "lesson.ipynb")]
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(ROOT / "tools" / "student")}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "lesson.html").read_text()
    sources = re.findall(r'<script[^>]*\bsrc="([^"]+)"', page)
    assert "<math" in page and not sources, sources
