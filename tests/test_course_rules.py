"""The rules of LESSON_ANATOMY.md that a program can check without running a notebook."""

import re
import subprocess
import sys

import pytest

from course_dev import lesson_text
from course_dev.paths import LESSON_FILE, ROOT, lesson_meta, lessons, source_path

pytestmark = pytest.mark.xdist_group("rules")


@pytest.mark.parametrize("lesson", lessons())
def test_lesson_has_its_facts(lesson):
    assert (ROOT / "solutions" / lesson / LESSON_FILE).is_file(), f"solutions/{lesson}/{LESSON_FILE} is missing"
    meta = lesson_meta(lesson)
    assert re.match(r"Lesson \d+ — \S", meta["title"]), meta["title"]
    assert 0 < meta["budget_s"] <= 30 and isinstance(meta["capstone"], bool) and isinstance(meta["extension"], bool)


# (what LESSON_ANATOMY.md asks for, a pattern of the lesson's text source that shows it), in order; a list is a
# group whose members may come in either order (Explore and Experiment)
ANATOMY = [
    ("a title cell `# Lesson N — …`", r"^# # Lesson \d+ — "),
    ('a "You need" paragraph', r"You need"),
    ("`ac.setup()` in the first code cell", r"ac\.setup\(\)"),
    [("an explorer (`widgets.explore(`)", r"widgets\.explore\("), ("an Experiment section", r"^# ## .*Experiment")],
    ("a Let's review section", r"^# ## .*Let's review"),
    ("a Check your understanding section", r"^# ## .*Check your understanding"),
    ("a free answer graded by hand (`manual=`)", r"^# %% \[markdown\] manual="),
]


@pytest.mark.parametrize("lesson", lessons())
def test_lesson_has_the_anatomy_sections_in_order(lesson):
    text = source_path(lesson).read_text()
    position = 0
    for step in ANATOMY:
        ends = []
        for what, pattern in step if isinstance(step, list) else [step]:
            found = re.compile(pattern, re.M).search(text, position)
            assert found, f"{lesson}: no {what} after what comes before it (LESSON_ANATOMY.md, 'Sections, in order')"
            ends.append(found.start())
        position = max(ends)


@pytest.mark.parametrize("lesson", lessons())
def test_lesson_notebook_is_built_from_its_text_source(lesson):
    problem = lesson_text.differs(lesson)
    assert problem is None, problem


def test_readme_lists_every_lesson():
    readme = (ROOT / "README.md").read_text()
    missing = [lesson for lesson in lessons() if f"`{lesson}`" not in readme]
    assert not missing, f"README's lesson table has no row for {missing}"


def test_code_is_linted_and_formatted():
    """ruff (configured in pyproject.toml) over the package, tools, tests, grading and lesson sources."""
    for command in (["check", "--quiet", "."], ["format", "--check", "--quiet", "."]):
        result = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{(result.stdout + result.stderr)[-3000:]}"
