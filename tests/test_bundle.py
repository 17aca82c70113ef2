"""The student bundle holds what a student needs and no solution or hidden test."""

import json
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
    assert not names & {"solutions", "tests", "autograde", "tools", "course_dev"}
    config = (folder / "nbgrader_config.py").read_text()
    assert "Execute.timeout" in config and "solutions" not in config, "Validate settings only"
    hidden = json.loads((folder / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert hidden.get("@jupyter/nbgrader:create-assignment") and hidden.get("@jupyter/nbgrader:formgrader")
    overrides = json.loads((folder / "labsettings" / "overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false", "no news pop-up"
    assert "validate_hook" in config and "CourseDirectory" not in config and "db_url" not in config
    assert (folder / ".validate" / "prune.py").is_file() and (folder / "notebooks" / ".release_cells.json").is_file()
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


def test_bundle_pins_are_the_runtime_at_the_course_pins(bundle):
    """The bundle's requirements are the course's runtime packages, at exactly the course's pins, and nothing else."""
    from course_dev.bundle import STUDENT_PACKAGES

    def pins(text):
        return dict(re.findall(r"^\s*(?:-\s*)?([A-Za-z0-9_.-]+)==(\S+)", text, re.M))

    folder, _ = bundle
    course = pins((ROOT / "requirements.txt").read_text())
    for name in ("requirements.txt", "environment.yml"):
        student = pins((folder / name).read_text())
        assert sorted(student) == sorted(STUDENT_PACKAGES), f"{name}: {sorted(student)}"
        assert all(course[p] == v for p, v in student.items()), f"{name} pins differ from the course's"
    assert not {"jupyterhub", "pytest", "playwright", "ruff", "psycopg", "jupytext"} & set(student)


def test_bundle_readme_covers_hand_in_and_headless_runs(bundle):
    folder, _ = bundle
    text = (folder / "README.md").read_text()
    needed_all = ("Handing in", "LMS", "Submit", "make run NB=", "make validate NB=", "Without JupyterLab")
    needed_all += ("## Lessons", "`11_attention_at_scale`")  # the section lessons 09-11 cite as (README, "Lessons")
    for needed in needed_all:
        assert needed in text, f"the student README does not say {needed!r}"
    make = (folder / "Makefile").read_text()
    assert all(f"\n{target}:" in make for target in ("lab", "run", "validate")), "README's make targets exist"


@pytest.mark.slow
def test_bundle_installs_alone_and_runs_a_notebook(bundle, tmp_path):
    """A student's machine: the bundle unzipped away from the repository, its own .venv from its own pins
    (`make venv`), then a notebook run headless as its README says (`make run NB=…`)."""
    import os
    import subprocess

    _, archive = bundle
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp_path)
    home = tmp_path / "student-bundle"
    # a clean environment: not the course's .venv on PATH, no PYTHONPATH or anything else of the test run; only the
    # machine's own settings a student's machine has too (where packages come from, whose certificates to trust:
    # without them uv cannot reach the index and the Makefile falls back to pip, which takes 30 s more)
    machine = ("HOME", "LANG", "PIP_FIND_LINKS", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
    env = {k: os.environ[k] for k in machine if k in os.environ}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    lesson = "02_dot_product"

    def make(*args, timeout=600):
        done = subprocess.run(["make", *args], cwd=home, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"make {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done

    make("venv")
    python = home / ".venv" / "bin" / "python"
    assert (home / ".venv" / "share" / "jupyter" / "lab" / "settings" / "overrides.json").is_file(), "no news pop-up"
    listed = subprocess.run([python, "-m", "pip", "list"], capture_output=True, text=True).stdout.lower()
    assert "torch" in listed and "nbgrader" in listed and "jupyterhub" not in listed and "playwright" not in listed
    located = subprocess.run(
        [python, "-c", "import attention_course; print(attention_course.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    assert located.startswith(str(home)), f"the bundle's own helper package is used, not the repository's: {located}"
    make("run", f"NB=notebooks/{lesson}/{lesson}.ipynb", timeout=300)
    ran = read(home / "notebooks" / lesson / f"{lesson}.ipynb")
    errors = [c for c in ran.cells if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs)]
    assert all(c.metadata.get("nbgrader", {}).get("grade_id") for c in errors), "only answer and test cells fail"
    assert sum(bool(c.outputs) for c in ran.cells if c.cell_type == "code") > len(errors), "the rest ran"
