"""The whole class cycle on the class's JupyterHub (`make hub`'s configuration), through the hub's REST API and
the users' own servers: the instructor releases lesson 01, two students fetch it, answer differently and
submit, the instructor collects, grades with the course's grading command and releases feedback, and each
student fetches feedback that shows their own score and no hidden test. Against SQLite and PostgreSQL."""

import contextlib
import csv
import html
import os
import re
import subprocess
import sys

import pytest
from browser_support import ARTIFACTS
from harness import read
from hub_support import ClassHub
from pg_support import Postgres

from course_dev.cells import grade_id, nbgrader_meta
from course_dev.course import copy_course
from course_dev.paths import ROOT, solution_path

pytestmark = pytest.mark.xdist_group("hub")
LESSON = "01_why_attention"
NOTEBOOK = f"{LESSON}/{LESSON}.ipynb"


def answer(nb, ids):
    """Fill the answer cells whose grade ids are in `ids` with the solution's answers (nb is a JSON dict)."""
    solution = {grade_id(c): c.source for c in read(solution_path(LESSON)).cells if nbgrader_meta(c).get("solution")}
    for cell in nb["cells"]:
        if grade_id(cell) in ids:
            cell["source"] = solution[grade_id(cell)]
    return nb


def log_in_and_look(chromium, hub, name, password, path, expect):
    """In Chromium: log in to the hub as `name`, open `path` (under /user/<name>/), wait for `expect`."""
    context = chromium.new_context()  # its own cookies: one person
    try:
        page = context.new_page()
        page.goto(f"{hub.url}hub/login")
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", password)
        page.click("input[type=submit], button[type=submit]")
        page.wait_for_url(f"**/user/{name}/**", timeout=90_000)
        page.goto(f"{hub.url}user/{name}/{path}")
        page.locator(f"text={expect} >> visible=true").first.wait_for(timeout=90_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"hub_{name}.png"))
    finally:
        context.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def class_hub(request, tmp_path):
    with contextlib.ExitStack() as stack:
        db_url = None
        if request.param == "postgresql":
            db_url = stack.enter_context(Postgres()).url("gradebook")
        course = copy_course(tmp_path / "course", [LESSON])
        hub = stack.enter_context(ClassHub(tmp_path / "hubstate", course, db_url))
        yield hub, course
        stack.close()
        assert not hub.leftovers(), f"processes left running after the hub stopped: {hub.leftovers()}"


@pytest.mark.slow
def test_class_cycle(class_hub, request):
    hub, course = class_hub
    instructor = hub.user("instructor")
    instructor.formgrader("assign", LESSON)
    instructor.formgrader("release", LESSON)

    ada, alan = hub.user("ada"), hub.user("alan")
    for student in (ada, alan):
        student.assignment_action("fetch", LESSON)
        assert NOTEBOOK in [p for p in student.listing(LESSON)], student.listing()
    if hub.db_url is None:  # once: what a person sees in the browser
        chromium = request.getfixturevalue("chromium")
        log_in_and_look(chromium, hub, "ada", hub.password, f"lab/tree/{NOTEBOOK}", "Lesson 1")
        # formgrader in its own tab, not an iframe
        log_in_and_look(chromium, hub, "instructor", hub.admin_password, "formgrader", LESSON)
    ada.write_notebook(NOTEBOOK, answer(ada.read_notebook(NOTEBOOK), {"rnn-step", "rnn-run"}))
    alan.write_notebook(NOTEBOOK, answer(alan.read_notebook(NOTEBOOK), {"rnn-step"}))
    for student in (ada, alan):
        student.assignment_action("submit", LESSON)

    instructor.formgrader("collect", LESSON)
    submitted = sorted(p.name for p in (course / "grading" / "submitted").iterdir())
    assert submitted == ["ada", "alan"], submitted

    # The course's grading command, sandboxed, as the instructor runs it in a terminal on the hub.
    env = dict(os.environ, ATTENTION_COURSE_EXCHANGE=str(hub.state / "exchange"))  # what the hub gives instructors
    env.update({"ATTENTION_COURSE_DB": hub.db_url} if hub.db_url else {})
    graded = subprocess.run(
        [sys.executable, "-m", "autograde", LESSON, "exchange", "--root", str(course), "--workers", "2", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-3000:]
    with open(course / "grading" / "runs" / LESSON / "grades.csv", newline="") as handle:
        totals = {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}
    assert totals == {"ada": 4.0, "alan": 2.0}, totals
    instructor.formgrader("release_feedback", LESSON)

    hidden = hidden_test_lines()
    for student in (ada, alan):
        student.assignment_action("fetch_feedback", LESSON)
        pages = [p for p in student.listing(f"{LESSON}/feedback") if p]
        page = html.unescape(student.read_text(f"{student.listing(pages[0])[0]}"))
        score = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", page)
        assert score and float(score.group(1)) == totals[student.name], f"{student.name}'s feedback: {score}"
        leaked = [line for line in hidden if line in page]
        assert not leaked, f"hidden tests in {student.name}'s feedback: {leaked[:3]}"


def hidden_test_lines():
    """Distinctive lines of lesson 01's hidden tests (never shown to students)."""
    lines = []
    for cell in read(solution_path(LESSON)).cells:
        for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", cell.source, re.S):
            lines += [line.strip() for line in block.splitlines() if len(line.strip()) > 25]
    assert lines, "lesson 01 has hidden tests to look for"
    return lines


# ---------------------------------------------------------------------------------------------------------------
# Past one machine, checked here: the Kubernetes values against the chart's schema, the image's Dockerfile.

CHART = ROOT / "hub" / "z2jh-chart-4.4.0"


def helm_merge(defaults, values):
    """Helm's merge of a values file into the chart's defaults: maps merge key by key, null removes a key,
    anything else (lists included) replaces."""
    merged = dict(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(defaults.get(key), dict):
            merged[key] = helm_merge(defaults[key], value)
        else:
            merged[key] = value
    return merged


def z2jh_errors(values):
    import json

    import jsonschema
    import yaml

    schema = json.loads((CHART / "values.schema.json").read_text())
    defaults = yaml.safe_load((CHART / "values.yaml").read_text())
    merged = helm_merge(defaults, values)
    return [
        f"{'.'.join(map(str, e.path))}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(merged)
    ]


def test_z2jh_values_validate_against_the_charts_schema():
    import yaml

    values = yaml.safe_load((ROOT / "hub" / "z2jh-values.yaml").read_text())
    assert not z2jh_errors(values), z2jh_errors(values)
    assert "--version 4.4.0" in (ROOT / "hub" / "z2jh-values.yaml").read_text(), "the values name the chart they fit"
    typo = helm_merge(values, {"singleuser": {"memory": {"limit": "3G", "garantee": "1G"}}})
    assert any("garantee" in e for e in z2jh_errors(typo)), "the check sees a misspelt value"


def test_the_image_is_built_from_the_course_pins():
    """hub/Dockerfile (there is no Docker daemon here): it copies the course, makes .venv with `make venv` from
    requirements.txt, installs bubblewrap, runs jupyterhub-singleuser as uid 1000; the build context leaves out
    this machine's state."""
    text = (ROOT / "hub" / "Dockerfile").read_text()
    steps = [line.split()[0] for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert steps[0] == "FROM" and "python:3.11" in text, "the course's Python"
    assert "COPY . /srv/course" in text and "make venv" in text, "the same pins, by the same command"
    assert "bubblewrap" in text and "--uid 1000" in text and 'CMD ["jupyterhub-singleuser"]' in text
    assert "/srv/course/.venv/bin" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "grading", ".hub", "hub/node_modules", ".git"} <= set(ignored)
    assert (ROOT / "requirements.txt").is_file() and "jupyterhub==" in (ROOT / "requirements.txt").read_text()


def load_hub_config(tmp_path, course_root):
    """hub/jupyterhub_config.py as JupyterHub reads it, with its state in tmp_path; returns its namespace."""
    from traitlets.config import Config

    env = {"HUB_STATE": str(tmp_path / "state"), "HUB_COURSE_ROOT": str(course_root)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        namespace = {"get_config": Config, "__file__": str(ROOT / "hub" / "jupyterhub_config.py")}
        exec(compile((ROOT / "hub" / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), namespace)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return namespace


def test_hub_sets_up_each_users_server(tmp_path):
    """What a user finds: instructors' terminals start in the course with .venv first on PATH; everyone's PATH
    has the course's .venv (a login shell would reset it); the one-user demo turns nbgrader's owner check off;
    a student's empty home says where the lessons are."""
    from types import SimpleNamespace

    (tmp_path / "course").mkdir()
    config = load_hub_config(tmp_path, tmp_path / "course")
    for name in ("instructor", "ada"):
        spawner = SimpleNamespace(
            user=SimpleNamespace(name=name), home_dir=str(tmp_path / name), environment={}, notebook_dir=""
        )
        config["prepare_home"](spawner)
        home = tmp_path / name
        shell = (home / ".course_shell").read_text()
        assert f'export PATH="{config["BIN"]}:$PATH"' in shell
        assert ("cd" in shell) == (name == "instructor") and (str(tmp_path / "course") in shell) == (
            name == "instructor"
        )
        assert "check_owner = False" in (home / ".jupyter" / "nbgrader_config.py").read_text()
        server = (home / ".jupyter" / "jupyter_server_config.py").read_text()
        assert "--rcfile" in server and "offline_maths.MathML" in server
        assert (home / "START_HERE.md").exists() == (name == "ada")
    assert "Assignment List" in (tmp_path / "ada" / "START_HERE.md").read_text()
    bash = subprocess.run(
        ["bash", "--rcfile", str(tmp_path / "instructor" / ".course_shell"), "-i", "-c", "pwd; command -v python"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert bash.stdout.split()[:2] == [str(tmp_path / "course"), str(config["BIN"] / "python")], bash.stdout


def test_make_grade_finds_the_demo_hubs_exchange(tmp_path):
    """On the machine, `make grade … SUBMISSIONS=exchange` needs no extra variable: with the demo hub's
    .hub/exchange in the course, nbgrader_config.py points nbgrader there (owner check off: one Unix user)."""
    course = copy_course(tmp_path / "course", [])
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_COURSE_EXCHANGE"}
    (course / ".hub" / "exchange").mkdir(parents=True)
    code = (
        "from traitlets.config.loader import PyFileConfigLoader as Loader\n"
        "c = Loader('nbgrader_config.py', path='.').load_config()\n"
        "print(c.Exchange.root, c.ExchangeCollect.check_owner)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=course, env=env, capture_output=True, text=True)
    assert done.stdout.split() == [str(course / ".hub" / "exchange"), "False"], done.stdout + done.stderr
