"""Every command in a ```bash block of README.md and autograde/README.md works as typed, on a fresh copy of
the course: the ones that start a server or take tens of minutes in their dry-run form (`make -n …`: the
target exists and its recipe expands), the others for real, in order, as a teacher would type them, one
shell per README (so `export PATH=…` carries on), from the course folder, with a home whose ~/Downloads
holds an LMS download of lesson 01. A command added to a README without a line in HOW fails here, so the
READMEs cannot drift from what works."""

import os
import re
import shutil
import subprocess

import nbformat
import pytest
from hub_support import ready_for_make

from course_dev.course import submission
from course_dev.paths import ROOT

pytestmark = pytest.mark.xdist_group("readme")
READMES = ["README.md", "autograde/README.md"]
LESSON = "01_why_attention"
RUN, DRY = "run", "dry-run"
# Every fenced command, and how the test runs it. Dry-run: servers (lab, formgrader, hub), the suites and the
# benchmark (minutes to an hour), and grading over an exchange (tests/test_hub.py runs that one for real, in
# the instructor's terminal on the class hub).
HOW = {
    "make lab": DRY,
    "make test": DRY,
    "make test-full": DRY,
    "make release": RUN,
    f"make validate NB=notebooks/{LESSON}/{LESSON}.ipynb": RUN,
    f"make run NB=notebooks/{LESSON}/{LESSON}.ipynb": DRY,  # the bundle's same recipe runs for real in test_bundle
    "make student-bundle": RUN,
    f"make grade LESSON={LESSON} SUBMISSIONS=~/Downloads/{LESSON}": RUN,
    f"make grade LESSON={LESSON} SUBMISSIONS=exchange": DRY,
    f'make grade LESSON={LESSON} SUBMISSIONS=exchange GRADE_ARGS="--workers 4"': DRY,
    "make formgrader": DRY,
    "cp autograde/roster-example.csv roster.csv": RUN,
    "make lms LMS=canvas ROSTER=roster.csv": RUN,
    "make lms LMS=moodle ROSTER=roster.csv": RUN,
    "make hub": DRY,
    "make bench": DRY,
    'make bench BENCH_ARGS="--only notebooks,memory --repeat 1"': DRY,
    'make bench BENCH_ARGS="--lesson 02_dot_product --submissions 40 --workers 2"': DRY,
    'make bench BENCH_ARGS="--readme"': DRY,
    'export PATH="$PWD/.venv/bin:$PATH"': RUN,
    f"python -m autograde {LESSON} ~/Downloads/{LESSON} --workers 4 --roster roster.csv": RUN,
}
INSTALLED = ("attention_course/", "course_dev/", "autograde/")  # code the .venv's editable install provides
FENCE = re.compile(r"^[ \t]*```bash\n(.*?)^[ \t]*```", re.S | re.M)


def fenced_commands(readme):
    """The commands of a README's ```bash blocks, in order, without comments."""
    commands = []
    for block in FENCE.findall((ROOT / readme).read_text()):
        for line in block.splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(" ".join(command.split()))
    return commands


def script(readme):
    """A bash script running the README's commands in order (dry-run ones as `make -n …`), each announced."""
    lines = ["set -e"]
    for i, command in enumerate(fenced_commands(readme)):
        run = command if HOW[command] == RUN else command.replace("make ", "make -n ", 1)
        lines += [f"echo '::command {i}: {command}'", run]
    return "\n".join(lines) + "\n"


def fresh_course(tmp_path):
    """A fresh clone's course folder: every file git tracks (as in this work tree), with lesson 01 the only
    lesson, and the course's .venv (the packages' code is the .venv's); and a home with an LMS download of
    the lesson: one full and one half-answered submission."""
    course = tmp_path / "course"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in tracked.splitlines():
        parts = name.split("/")
        if parts[0] in ("solutions", "notebooks") and len(parts) > 2 and parts[1] != LESSON:
            continue
        if name.startswith(INSTALLED) and not name.endswith((".md", ".csv")):
            continue  # the course's packages come from its .venv, installed from this work tree
        if (ROOT / name).is_file():
            (course / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, course / name)
    ready_for_make(course)
    downloads = tmp_path / "home" / "Downloads" / LESSON
    downloads.mkdir(parents=True)
    solution = nbformat.read(str(ROOT / "solutions" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    answers = [
        c.metadata["nbgrader"]["grade_id"] for c in solution.cells if c.metadata.get("nbgrader", {}).get("solution")
    ]
    for student, answered in (("ada", answers), ("alan", answers[:1])):
        nb = submission(LESSON, set(answered))
        nbformat.write(nb, str(downloads / f"{student}_attempt_2026-11-20-10-00-00_{LESSON}.ipynb"))
    return course


def shell_env(tmp_path):
    """A teacher's fresh shell: no .venv on PATH, no course variables, their own home."""
    env = {k: os.environ[k] for k in ("LANG", "TERM", "TMPDIR", "PIP_FIND_LINKS") if k in os.environ}
    return env | {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home")}


def run_script(text, course, env, timeout):
    done = subprocess.run(["bash", "-c", text], cwd=course, env=env, capture_output=True, text=True, timeout=timeout)
    failed = re.findall(r"^::command \d+: (.*)$", done.stdout, re.M)
    where = failed[-1] if failed else "(before the first command)"
    assert done.returncode == 0, f"`{where}` failed:\n{done.stdout[-2500:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_every_fenced_command_is_declared():
    found = {command for readme in READMES for command in fenced_commands(readme)}
    assert found, "the READMEs have fenced commands"
    undeclared = sorted(found - set(HOW))
    assert not undeclared, f"commands in the READMEs that this test does not know how to run: {undeclared}"
    stale = sorted(set(HOW) - found)
    assert not stale, f"commands in HOW that no README has any more: {stale}"
    assert all(c.startswith("make ") for c, how in HOW.items() if how == DRY), "a dry run is `make -n`"


def test_dry_run_commands_expand(tmp_path):
    """The commands run in their dry-run form only: each make target exists and its recipe expands."""
    course = fresh_course(tmp_path)
    dry = [c for c, how in HOW.items() if how == DRY]
    text = "set -e\n" + "".join(f"echo '::command 0: {c}'\n{c.replace('make ', 'make -n ', 1)}\n" for c in dry)
    out = run_script(text, course, shell_env(tmp_path), 120)
    assert "--ServerApp.root_dir=notebooks" in out, "make lab opens notebooks/"
    assert "--LabApp.default_url=/formgrader" in out, "make formgrader opens the formgrader"


@pytest.mark.slow
def test_readme_commands_run_as_typed(tmp_path):
    """Both READMEs' commands, in order, in one fresh course: release, bundle, grade the LMS download, the
    roster, the LMS exports; then the instructor guide's (its PATH line, grading again, python -m autograde)."""
    course = fresh_course(tmp_path)
    env = shell_env(tmp_path)
    for readme in READMES:
        run_script(script(readme), course, env, 900)
    runs = course / "grading" / "runs" / LESSON
    grades = (runs / "grades.csv").read_text()
    assert "ada" in grades and "alan" in grades and "not submitted" in grades, grades  # grace: on the roster
    assert (course / "dist" / "student-bundle.zip").is_file()
    canvas = (course / "grading" / "canvas.csv").read_text()
    assert canvas.startswith("Student,ID,SIS User ID") and "Ada Lovelace" in canvas
    assert (course / "grading" / "moodle.csv").read_text().startswith("First name,Last name")
    assert "nan" not in (runs / "summary.txt").read_text()
    feedback = (runs / "feedback" / "ada.html").read_text()
    assert "your feedback" in feedback and "<math" in feedback, "the course's feedback page, in a fresh copy too"
