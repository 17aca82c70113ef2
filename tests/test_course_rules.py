"""The rules of LESSON_ANATOMY.md that a program can check without running a notebook."""

import json
import re
import subprocess
import sys

import pytest

from course_dev import lesson_text
from course_dev.lesson_time import LIMIT_MIN, lesson_time
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


@pytest.mark.parametrize("lesson", lessons())
def test_lesson_states_its_counted_time(lesson):
    """The header, the README's table and the minimal-path box state the time course_dev.lesson_time counts."""
    time = lesson_time(lesson)
    header = next(line for line in source_path(lesson).read_text().splitlines() if "from the dot product up**" in line)
    minimal = f" (minimal path: about {time.minimal})" if time.minimal != time.full else ""
    stated = f"about {time.full} minutes{minimal}"
    assert header.endswith(stated), f"{lesson}: its header should end with '{stated}' (course_dev.lesson_time)"
    shown = str(time.full) if time.full == time.minimal else f"{time.minimal} / {time.full}"
    assert f"| `{lesson}` | {shown} |" in (ROOT / "README.md").read_text(), f"README's row for {lesson}: time {shown}"
    if time.minimal != time.full:
        box = f"**Minimal path: about {time.minimal} minutes** (the whole lesson: about {time.full}"
        assert box in source_path(lesson).read_text(), f"{lesson}: its minimal-path box should open with '{box}'"
    assert time.minimal <= LIMIT_MIN, f"{lesson}: minimal path {time.minimal} min, over the course's {LIMIT_MIN}"


def test_code_is_linted_and_formatted():
    """ruff (configured in pyproject.toml) over the package, tools, tests, grading and lesson sources."""
    for command in (["check", "--quiet", "."], ["format", "--check", "--quiet", "."]):
        result = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{(result.stdout + result.stderr)[-3000:]}"


def test_release_refuses_a_notebook_edit_its_source_lacks(tmp_path):
    """An edit made in Jupyter to a solution notebook is never overwritten by `make release`: it refuses and names
    `extract`, which moves the edit into the text source; then the release goes on."""
    import shutil

    import nbformat

    from course_dev import release

    lesson = "02_dot_product"
    folder = tmp_path / "solutions" / lesson
    folder.mkdir(parents=True)
    for name in (f"{lesson}.py", f"{lesson}.ipynb"):
        shutil.copy(ROOT / "solutions" / lesson / name, folder / name)
    nb = nbformat.read(str(folder / f"{lesson}.ipynb"), as_version=4)
    nb.cells[1].source += "\n\nAn instructor's new sentence."
    nbformat.write(nb, str(folder / f"{lesson}.ipynb"))
    with pytest.raises(release.ReleaseError, match=f"lesson_text extract {lesson}"):
        release.release(tmp_path, [lesson])
    assert "An instructor's new sentence." not in (folder / f"{lesson}.py").read_text()
    lesson_text.extract(lesson, tmp_path)
    assert "An instructor's new sentence." in (folder / f"{lesson}.py").read_text()
    assert lesson_text.differs(lesson, tmp_path) is None and not lesson_text.edited_since_built(lesson, tmp_path)


@pytest.mark.parametrize("lesson", lessons())
def test_built_notebooks_say_which_file_to_edit(lesson):
    nb = json.loads(lesson_text.solution_path(lesson).read_text())
    source = f"solutions/{lesson}/{lesson}.py"
    assert nb["metadata"]["attention_course"]["edit"] == source
    assert source in "".join(nb["cells"][0]["source"]).splitlines()[0]


def test_every_lesson_has_claims_that_compile():
    """A lesson's claims are a file of their own (tests/claims/<lesson>.py, linted by ruff), not a string."""
    import catalog_tools
    from harness import LESSONS

    for lesson in LESSONS:
        path = catalog_tools.CLAIMS / f"{lesson}.py"
        compile(path.read_text(), str(path), "exec")
