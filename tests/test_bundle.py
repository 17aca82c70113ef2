"""The student bundle holds what a student needs and no solution or hidden test."""

import re
import zipfile

import pytest
from harness import LESSONS, ROOT, read, solution_path

pytestmark = pytest.mark.xdist_group("bundle")
MARKED = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)


def public_text():
    """Everything a student may see anyway: the unmarked parts of every lesson, and the helper package."""
    text = "".join(
        MARKED.sub("", cell.source) + "\n" for lesson in LESSONS for cell in read(solution_path(lesson)).cells
    )
    return text + "".join(p.read_text() for p in (ROOT / "attention_course").glob("*.py"))


def secret_lines(lesson, public):
    """Distinctive lines that appear only between solution / hidden-test markers of a lesson's solution."""
    secret = set()
    for cell in read(solution_path(lesson)).cells:
        for _, body in MARKED.findall(cell.source):
            secret |= {line.strip().lstrip("# ").strip() for line in body.splitlines() if len(line.strip()) >= 24}
    return {line for line in secret if line not in public}


def file_text(path):
    """A file's text as a reader sees it: the cell sources for a notebook, the plain text otherwise."""
    if path.suffix == ".ipynb":
        return "\n".join(cell.source for cell in read(path).cells)
    return path.read_text(errors="ignore")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from course_dev.bundle import build

    return build(tmp_path_factory.mktemp("dist") / "student-bundle")


def test_bundle_contents(bundle):
    folder, archive = bundle
    names = {p.name for p in folder.iterdir()}
    assert {"notebooks", "attention_course", "requirements.txt", "README.md", "Makefile"} <= names
    assert not names & {"solutions", "tests", "autograde", "tools", "course_dev", "nbgrader_config.py"}
    assert not list(folder.rglob("*.db")), "a gradebook leaked into the bundle"
    for lesson in LESSONS:
        assert (folder / "notebooks" / lesson / f"{lesson}.ipynb").is_file()
    with zipfile.ZipFile(archive) as zf:
        assert any(n.endswith("01_why_attention.ipynb") for n in zf.namelist())


def test_bundle_leaks_no_solution_or_hidden_test(bundle):
    folder, _ = bundle
    text = "\n".join(file_text(p) for p in folder.rglob("*") if p.is_file() and p.suffix != ".zip")
    public = public_text()
    for lesson in LESSONS:
        secrets = secret_lines(lesson, public)
        assert secrets, f"{lesson}: no solution found to look for"
        leaked = sorted(line for line in secrets if line in text)
        assert not leaked, f"{lesson}: solution or hidden-test lines found in the student bundle: {leaked[:5]}"
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text


def test_leak_check_would_see_a_leak():
    """The check reads files the same way: every secret line is found in the solution notebook itself."""
    public = public_text()
    for lesson in LESSONS:
        text = file_text(solution_path(lesson))
        missing = [line for line in secret_lines(lesson, public) if line not in text]
        assert not missing, f"{lesson}: the leak check cannot see {missing[:3]}"
