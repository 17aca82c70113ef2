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
from course_dev.paths import solution_path

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hub")]
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
