"""The whole class cycle on the class's JupyterHub (`make hub`'s configuration), through the hub's REST API and
the users' own servers: the instructor releases lesson 01, two students fetch it, answer differently and
submit, the instructor collects, grades with the course's grading command and releases feedback, and each
student fetches feedback that shows their own score and no hidden test. Against SQLite and PostgreSQL."""

import contextlib
import csv
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
from browser_support import ARTIFACTS
from harness import read
from hub_support import CLASS_COURSE, MAKE_FILES, ClassHub, ready_for_make
from pg_support import Postgres

from autograde.cells import grade_id, nbgrader_meta
from course_dev.course import copy_course
from course_dev.paths import ROOT, solution_path

pytestmark = pytest.mark.xdist_group("hub")
LESSON = "01_why_attention"
NOTEBOOK = f"{LESSON}/{LESSON}.ipynb"
FREE = "quiz-free-bigger-state"  # the lesson's free answer, graded by hand


def answer(nb, ids):
    """Fill the answer cells whose grade ids are in `ids` with the solution's answers (nb is a JSON dict)."""
    solution = {grade_id(c): c.source for c in read(solution_path(LESSON)).cells if nbgrader_meta(c).get("solution")}
    for cell in nb["cells"]:
        if grade_id(cell) in ids:
            cell["source"] = solution[grade_id(cell)]
    return nb


def log_in(chromium, hub, name, password, url, offline=False):
    """A Chromium context (its own cookies: one person) logged in to the hub as `name`, on the page `url` (the
    login's `next`: JupyterLab is not loaded first only to be left). offline=True blocks every request that does
    not go to this machine, and records them in `context.blocked`."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.blocked = []
    if offline:

        def local_only(route):
            if route.request.url.startswith(("http://127.0.0.1", "data:", "blob:", "about:")):
                route.continue_()
            else:
                context.blocked.append(route.request.url)
                route.abort()

        context.route("**/*", local_only)
    page = context.new_page()
    page.goto(f"{hub.url}hub/login?{urllib.parse.urlencode({'next': urllib.parse.urlsplit(url).path})}")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", password)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(lambda now: arrived(now, url), timeout=90_000)
    return context, page


def arrived(now, url):
    """Whether the browser at `now` is on the page `url` or where it redirects inside it (the formgrader to its
    first tab); quoted or not, whatever the query."""
    path = lambda u: urllib.parse.unquote(urllib.parse.urlsplit(u).path)  # noqa: E731
    return path(now).startswith(path(url))


def look(page, name, url, expect):
    """Open `url` (unless the page is there), wait for the text `expect`, keep a screenshot for a person to look at."""
    if not arrived(page.url, url):
        page.goto(url)
    page.locator(f"text={expect} >> visible=true").first.wait_for(timeout=90_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"hub_{name}.png"))


def maths_drawn(page):
    """(formulas on the page, how many have a drawn box): MathML the browser lays out itself."""
    sizes = page.evaluate("[...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
    return len(sizes), sum(h > 0 for h in sizes)


def type_in_terminal(page, hub, instructor, command, done, seconds=480):
    """In JupyterLab's terminal (screen-reader mode, so its text is in the page): type `command`, wait until
    the terminal shows `done` (a regular expression) after it, return the terminal's text."""
    instructor.call(
        "lab/api/settings/@jupyterlab/terminal-extension:plugin", "PUT", {"raw": '{"screenReaderMode": true}'}
    )
    page.goto(f"{hub.url}user/instructor/lab?reset")  # File > New > Terminal, from the Launcher
    page.locator(".jp-LauncherCard:has-text('Terminal')").first.click(timeout=90_000)
    screen = page.locator(".jp-Terminal .xterm-accessibility-tree").first
    screen.wait_for(state="attached", timeout=90_000)
    page.locator(".jp-Terminal .xterm-screen").first.click()
    page.keyboard.type(command + "\n", delay=5)
    deadline, text = time.monotonic() + seconds, ""
    while time.monotonic() < deadline:
        text = screen.inner_text()
        if re.search(done, text.split(command, 1)[-1]):
            break
        page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "hub_instructor_terminal.png"))
    return text


@pytest.fixture(params=["sqlite", "postgresql"])
def class_hub(request, tmp_path):
    with contextlib.ExitStack() as stack:
        db_url = None
        if request.param == "postgresql":
            db_url = stack.enter_context(Postgres()).url("gradebook")
        course = ready_for_make(copy_course(tmp_path / "course", [LESSON], extra=MAKE_FILES))
        # the default state folder, .hub/ inside the course (make hub's): the instructor's home is inside the course
        hub = stack.enter_context(ClassHub(course / ".hub", course, db_url))
        yield hub, course
        stack.close()
        assert not hub.leftovers(), f"processes left running after the hub stopped: {hub.leftovers()}"


GRADE = f"make grade LESSON={LESSON} SUBMISSIONS=exchange"  # as the README types it


@pytest.mark.slow
def test_class_cycle(class_hub, request, record_property):
    hub, course = class_hub
    instructor = hub.user("instructor")
    ada, alan = release_and_fetch(hub, instructor)
    browser = hub.db_url is None  # once: what people see and do in the browser
    chromium = request.getfixturevalue("chromium") if browser else None
    teacher, tpage = first_look(chromium, hub, record_property) if browser else (None, None)
    submit(hub, course, instructor, ada, alan)

    # The course's grading command, sandboxed, as the README says, in the instructor's terminal on the hub.
    if browser:
        shown = type_in_terminal(tpage, hub, instructor, GRADE, r"\bwrote\b|\*\*\*|Error|Refusing")
        assert re.search(r"\bwrote\b", shown.split(GRADE, 1)[-1]), f"make grade in the terminal:\n{shown[-3000:]}"
    else:  # the same command and environment, without the browser
        env = dict(os.environ, ATTENTION_COURSE_EXCHANGE=str(hub.state / "exchange"), ATTENTION_COURSE_DB=hub.db_url)
        graded = subprocess.run(GRADE.split(), cwd=course, env=env, capture_output=True, text=True, timeout=600)
        assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-3000:]
    with open(course / "grading" / "runs" / LESSON / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["grace"]["status"] == "not submitted", "everyone in the class has a row"
    totals = {s: float(r["total"]) for s, r in rows.items() if r["total"]}
    assert totals == {"ada": 4.0, "alan": 2.0}, totals
    assert "nan" not in (course / "grading" / "runs" / LESSON / "summary.txt").read_text()

    # nbgrader's own Generate Feedback (the formgrader's button) makes the course's page: no hidden test.
    hidden = hidden_test_lines()
    shutil.rmtree(course / "grading" / "feedback")
    instructor.formgrader("generate_feedback", LESSON)
    for name in ("ada", "alan"):
        page_text = (course / "grading" / "feedback" / name / LESSON / f"{LESSON}.html").read_text()
        assert "your feedback" in page_text and "<math" in page_text and "cdnjs" not in page_text
        leaked = [line for line in hidden if line in html.unescape(page_text)]
        assert not leaked, f"Generate Feedback put hidden tests in {name}'s page: {leaked[:3]}"

    if browser:  # the formgrader with the network off: maths drawn, the rubric beside the free answer
        teacher.close()
        formgrader_offline(chromium, hub, instructor)
    instructor.formgrader("release_feedback", LESSON)
    for student in (ada, alan):
        fetch_feedback(chromium, hub, student, totals, hidden)


def release_and_fetch(hub, instructor):
    """The instructor releases the lesson; ada and alan fetch it. Returns them."""
    instructor.formgrader("assign", LESSON)
    instructor.formgrader("release", LESSON)
    ada, alan = hub.user("ada"), hub.user("alan")
    for student in (ada, alan):
        assert "START_HERE.md" in student.listing(), "an empty home says where the lessons are"
        student.assignment_action("fetch", LESSON)
        assert NOTEBOOK in [p for p in student.listing(LESSON)], student.listing()
    return ada, alan


def first_look(chromium, hub, record_property):
    """ada's notebook (her menus, Validate) and the instructor's formgrader in the browser; the instructor's context
    and page (open)."""
    ada_notebook = f"{hub.url}user/ada/lab/tree/{NOTEBOOK}"
    context, page = log_in(chromium, hub, "ada", hub.password, ada_notebook)
    look(page, "ada", ada_notebook, "Lesson 1")
    items = nbgrader_menu(page)
    instructor_only = {"Formgrader", "Course List"} & set(items)
    assert "Assignment List" in items and not instructor_only, f"ada's Nbgrader menu: {items}"
    assert page.locator("text=Create Assignment >> visible=true").count() == 0, "a student sees Create Assignment"
    record_property("hub_validate_seconds", validate_seconds(page))
    context.close()
    formgrader = f"{hub.url}user/instructor/formgrader"
    teacher, tpage = log_in(chromium, hub, "instructor", hub.admin_password, formgrader)
    look(tpage, "instructor", formgrader, LESSON)  # its own tab, not an iframe
    folder_link = tpage.locator(f"a[href^='/tree/']:has-text('{LESSON}')").first.get_attribute("href")
    tpage.goto(hub.url.rstrip("/") + folder_link)  # nbgrader's link, without /user/instructor/
    tpage.wait_for_url(f"**/user/instructor/lab/tree/**{LESSON}**", timeout=90_000)
    return teacher, tpage


def nbgrader_menu(page):
    """The items of JupyterLab's Nbgrader menu, as the user sees them."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click(timeout=30_000)
    items = page.locator(".lm-Menu-content .lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    return [item.strip() for item in items if item.strip()]


def validate_seconds(page):
    """Press Validate on the open notebook (unanswered: the verdict lists the failing checks); the seconds to the
    verdict, reported and never asserted (a loaded machine is slower; `make bench` measures it)."""
    start = time.monotonic()
    page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click(timeout=30_000)
    verdict = page.locator(".jp-Dialog #validation-message")
    verdict.wait_for(state="visible", timeout=300_000)
    seconds = time.monotonic() - start
    assert "Exercise 1.1" in verdict.inner_text(), verdict.inner_text()[:300]
    page.screenshot(path=str(ARTIFACTS / "hub_ada_validate.png"))
    page.keyboard.press("Escape")
    return seconds


def submit(hub, course, instructor, ada, alan):
    """ada answers everything, alan one question; both submit, and the instructor collects."""
    ada.write_notebook(NOTEBOOK, answer(ada.read_notebook(NOTEBOOK), {"rnn-step", "rnn-run", FREE}))
    alan.write_notebook(NOTEBOOK, answer(alan.read_notebook(NOTEBOOK), {"rnn-step"}))
    ada.call(f"api/contents/{NOTEBOOK}/checkpoints", "POST")  # as JupyterLab's save does
    for student in (ada, alan):
        student.assignment_action("submit", LESSON)
    inbound = [p.name for p in (hub.state / "exchange" / CLASS_COURSE / "inbound").rglob("*")]
    assert ".ipynb_checkpoints" not in inbound, "submissions carry no checkpoints"
    instructor.formgrader("collect", LESSON)
    submitted = sorted(p.name for p in (course / "grading" / "submitted").iterdir())
    assert submitted == ["ada", "alan"], submitted


def formgrader_offline(chromium, hub, instructor):
    """The formgrader with the network off: maths drawn, the rubric beside the free answer."""
    notebooks = instructor.call(f"formgrader/api/submitted_notebooks/{LESSON}/{LESSON}")
    ada_id = next(n["id"] for n in notebooks if n["student"] == "ada")
    grading = f"{hub.url}user/instructor/formgrader/submissions/{ada_id}/"
    teacher, tpage = log_in(chromium, hub, "instructor", hub.admin_password, grading, offline=True)
    look(tpage, "instructor_grading", grading, "Rubric")
    assert tpage.locator("text=Deduct nothing for style").first.is_visible(), "the rubric is on the page"
    count, drawn = maths_drawn(tpage)
    assert count and drawn == count, f"{drawn} of {count} formulas drawn in the formgrader"
    assert not teacher.blocked, f"the formgrader asked the internet for {teacher.blocked}"
    teacher.close()


def fetch_feedback(chromium, hub, student, totals, hidden):
    """A student fetches their feedback: their score, no hidden test, questions named; ada's page in the browser
    (when `chromium`) with the network off."""
    student.assignment_action("fetch_feedback", LESSON)
    pages = [p for p in student.listing(f"{LESSON}/feedback") if p]
    path = student.listing(pages[0])[0]
    page_text = html.unescape(student.read_text(path))
    score = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", page_text)
    assert score and float(score.group(1)) == totals[student.name], f"{student.name}'s feedback: {score}"
    leaked = [line for line in hidden if line in page_text]
    assert not leaked, f"hidden tests in {student.name}'s feedback: {leaked[:3]}"
    titled = re.search(r"Q\d+ — free answer", page_text) and "Test cell" not in page_text
    assert titled, "questions named after the lesson"
    if chromium is not None and student.name == "ada":  # the student's page, opened in the browser, network off
        feedback = f"{hub.url}user/ada/files/{path}"
        context, page = log_in(chromium, hub, "ada", hub.password, feedback, offline=True)
        look(page, "ada_feedback", feedback, "your feedback")
        count, drawn = maths_drawn(page)
        assert count and drawn == count, f"{drawn} of {count} formulas drawn in ada's feedback"
        assert page.locator("nav .pending").first.is_visible(), "the free answer waits for a human"
        assert not context.blocked, f"the feedback page asked the internet for {context.blocked}"
        view_feedback_from_the_assignment_list(page, hub)
        context.close()


def view_feedback_from_the_assignment_list(page, hub):
    """ada's Assignment List: "(view feedback)" opens her feedback page in a browser tab of its own
    (tools/student/labextension), not only its folder in the file browser, and its links to each question work."""
    page.goto(f"{hub.url}user/ada/lab")
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click(timeout=90_000)
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text="Assignment List").first.click()
    with page.context.expect_page(timeout=60_000) as opened:
        page.get_by_text("(view feedback)").first.click(timeout=60_000)
    feedback = opened.value
    feedback.get_by_text("your feedback").first.wait_for(timeout=60_000)
    feedback.get_by_role("link", name=re.compile(r"Q\d+ — free answer")).first.click()
    feedback.wait_for_url(re.compile(r"#"), timeout=30_000)
    assert feedback.get_by_text("your feedback").first.is_visible(), "a question's link leaves the feedback page"
    feedback.screenshot(path=str(ARTIFACTS / "hub_ada_view_feedback.png"))
    feedback.close()


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


def load_hub_config(tmp_path, course_root, state=None):
    """hub/jupyterhub_config.py as JupyterHub reads it, with its state in `state` (default tmp_path/state);
    returns its namespace."""
    from traitlets.config import Config

    env = {"HUB_STATE": str(state or tmp_path / "state"), "HUB_COURSE_ROOT": str(course_root)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        namespace = {"get_config": Config, "__file__": str(ROOT / "hub" / "jupyterhub_config.py")}
        exec(compile((ROOT / "hub" / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), namespace)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return namespace


def test_a_hub_that_cannot_start_fails_loudly_and_leaves_nothing_running(tmp_path):
    """A hub whose own API port is taken exits after it has started its proxy: the test's hub says why within seconds
    (the port's holder may take the request and never answer) and stops the proxy too (a full run once left it
    running for the rest of the run)."""
    hub = ClassHub(tmp_path / "state", copy_course(tmp_path / "course", [LESSON], extra=MAKE_FILES))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", hub.port + 1))
        taken.listen()
        with pytest.raises(RuntimeError, match="(?s)the hub exited at start.*Address already in use"):
            with hub:
                pass
    assert not hub.leftovers(), f"processes left running after the hub failed: {hub.leftovers()}"


def test_hub_sets_up_each_users_server(tmp_path):
    """What a user finds: instructors' terminals start in the course with .venv first on PATH; everyone's PATH
    has the course's .venv (a login shell would reset it); the one-user demo turns nbgrader's owner check off;
    a student's empty home says where the lessons are."""
    from types import SimpleNamespace

    (tmp_path / "course").mkdir()
    config = load_hub_config(tmp_path, tmp_path / "course")
    for name in ("instructor", "ada"):
        spawner = SimpleNamespace(
            user=SimpleNamespace(name=name),
            home_dir=str(tmp_path / name),
            environment={},
            notebook_dir="",
            default_url="",
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
        labconfig = home / ".jupyter" / "labconfig" / "page_config.json"
        hidden = json.loads(labconfig.read_text())["disabledExtensions"] if labconfig.exists() else {}
        assert bool(hidden.get("@jupyter/nbgrader:create-assignment")) == (name == "ada"), "no instructor tools"
        assert (spawner.default_url == "/lab/tree/START_HERE.md") == (name == "ada"), "a student's first page"
    assert "Assignment List" in (tmp_path / "ada" / "START_HERE.md").read_text()
    overrides = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    bash = subprocess.run(
        ["bash", "--rcfile", str(tmp_path / "instructor" / ".course_shell"), "-i", "-c", "pwd; command -v python"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert bash.stdout.split()[:2] == [str(tmp_path / "course"), str(config["BIN"] / "python")], bash.stdout


def test_no_news_question_in_jupyterlab(tmp_path):
    """JupyterLab asks "Would you like to get notified about official Jupyter news?" while its setting fetchNews is
    "none", whatever LabApp.news_url says. The servers this .venv runs (make lab, make formgrader, every hub user's)
    report "false" as its default (the overrides `make venv` and the hub install; the bundle ships them too), and
    open Markdown files rendered."""
    from jupyterlab.labapp import LabApp
    from jupyterlab_server.settings_utils import _get_overrides, get_settings

    load_hub_config(tmp_path, tmp_path)  # the hub installs them too, for `jupyterhub -f`
    app = LabApp()
    overrides, error = _get_overrides(app.app_settings_dir)
    assert not error, error

    def defaults(plugin):  # the plugin's settings' defaults, as this JupyterLab reports them to the page
        reported, _ = get_settings(
            app.app_settings_dir,
            app.schemas_dir,
            str(tmp_path / "user-settings"),
            schema_name=plugin,
            overrides=overrides,
            labextensions_path=app.labextensions_path,
        )
        return {name: spec.get("default") for name, spec in reported["schema"]["properties"].items()}

    assert defaults("@jupyterlab/apputils-extension:notification")["fetchNews"] == "false"
    # START_HERE.md, a student's first page, opens rendered
    assert defaults("@jupyterlab/docmanager-extension:plugin")["defaultViewers"] == {"markdown": "Markdown Preview"}


def test_instructor_terminal_starts_in_the_course_with_the_default_state_folder(tmp_path):
    """With the default state folder (.hub/ inside the course), the instructor's home is inside the course too:
    a terminal opened there still starts in the course folder, where `make grade …` runs as typed."""
    from types import SimpleNamespace

    course = tmp_path / "course"
    (course / "autograde").mkdir(parents=True)
    config = load_hub_config(tmp_path, course, state=course / ".hub")
    home = course / ".hub" / "home" / "instructor"
    spawner = SimpleNamespace(
        user=SimpleNamespace(name="instructor"), home_dir=str(home), environment={}, notebook_dir=""
    )
    config["prepare_home"](spawner)
    for start, expected in ((home, course), (course / "autograde", course / "autograde"), (tmp_path, course)):
        bash = subprocess.run(
            ["bash", "--rcfile", str(home / ".course_shell"), "-i", "-c", "pwd"],
            cwd=start,
            env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
            capture_output=True,
            text=True,
        )
        assert bash.stdout.split()[:1] == [str(expected)], f"a terminal opened in {start}: {bash.stdout}"


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
