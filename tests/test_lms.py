"""LMS exports from a gradebook built in place: the column layout of each format's documented header,
points per lesson and a total, students matched through the roster."""

import csv

import pytest
from nbgrader.api import Gradebook

from autograde import lms, roster
from autograde.course import HOME
from autograde.errors import GradingError

pytestmark = pytest.mark.xdist_group("lms")


@pytest.fixture
def gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        for lesson, cells in (("01_why_attention", {"a-tests": 2, "b-tests": 3}), ("02_dot_product", {"c-tests": 4})):
            gb.add_assignment(lesson)
            gb.add_notebook(lesson, lesson)
            for name, points in cells.items():
                gb.add_grade_cell(name, lesson, lesson, max_score=points, cell_type="code")
        for student in ("ada", "alan"):
            gb.add_student(student)
        gb.add_submission("01_why_attention", "ada")
        gb.add_submission("02_dot_product", "ada")
        gb.add_submission("01_why_attention", "alan")
        for (cell, lesson, student), score in {
            ("a-tests", "01_why_attention", "ada"): 2,
            ("b-tests", "01_why_attention", "ada"): 1.5,
            ("c-tests", "02_dot_product", "ada"): 4,
            ("a-tests", "01_why_attention", "alan"): 2,
            ("b-tests", "01_why_attention", "alan"): 0,
        }.items():
            gb.find_grade(cell, lesson, lesson, student).auto_score = score
        gb.db.commit()
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,email,lms_id,sis_user_id,sis_login_id,section\n"
        "ada,Ada Lovelace,ada@example.org,101,S1,ada,Mon\nalan,Alan Turing,alan@example.org,102,S2,alan,Tue\n"
    )
    return url, roster


def read(path):
    with open(path, newline="") as handle:
        return list(csv.reader(handle))


def test_canvas_gradebook_csv(gradebook, tmp_path):
    url, roster = gradebook
    missing = lms.export("canvas", roster, tmp_path / "canvas.csv", url)
    rows = read(tmp_path / "canvas.csv")
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # Canvas's documented columns
    assert rows[0][5:] == ["01_why_attention", "02_dot_product", "Final Score"]
    assert rows[1][0] == "Points Possible" and rows[1][5:7] == ["5", "4"]
    assert rows[2] == ["Ada Lovelace", "101", "S1", "ada", "Mon", "3.5", "4", "7.5"]
    assert rows[3] == ["Alan Turing", "102", "S2", "alan", "Tue", "2", "0", "2"]
    assert missing == {"02_dot_product": {"no submission": ["alan"]}}, "a lesson without a submission is reported"


def test_lms_names_the_lesson_and_tells_collected_from_missing(gradebook, tmp_path):
    url, roster = gradebook
    (tmp_path / "submitted" / "alan" / "02_dot_product").mkdir(parents=True)  # collected, never autograded
    gaps = lms.export("canvas", roster, tmp_path / "canvas.csv", url, submitted=tmp_path / "submitted")
    assert gaps == {"02_dot_product": {"collected, not graded yet": ["alan"]}}
    said = lms.describe_gaps(gaps)
    assert "02_dot_product: collected, not graded yet from alan" in said and "make grade LESSON=02_dot_product" in said


def test_an_answer_waiting_for_a_hand_grade_is_named(tmp_path):
    """A free answer nobody has graded by hand counts 0 in the export: the export says so, student by student."""
    url, lesson = f"sqlite:///{tmp_path / 'gradebook.db'}", "01_why_attention"
    with Gradebook(url) as gb:
        gb.add_assignment(lesson)
        gb.add_notebook(lesson, lesson)
        gb.add_grade_cell("a-tests", lesson, lesson, max_score=2, cell_type="code")
        gb.add_grade_cell("free", lesson, lesson, max_score=3, cell_type="markdown")
        for student in ("ada", "alan"):
            gb.add_student(student)
            gb.add_submission(lesson, student)
            gb.find_grade("a-tests", lesson, lesson, student).auto_score = 2
            gb.find_grade("free", lesson, lesson, student).needs_manual_grade = student == "ada"
        gb.find_grade("free", lesson, lesson, "alan").manual_score = 3
        gb.db.commit()
    people = tmp_path / "roster.csv"
    people.write_text("student_id,name\nada,Ada Lovelace\nalan,Alan Turing\n")
    gaps = lms.export("canvas", people, tmp_path / "canvas.csv", url)
    assert gaps == {lesson: {lms.HAND: ["ada"]}}, gaps
    assert [row[-1] for row in read(tmp_path / "canvas.csv")[2:]] == ["2", "5"], "ada's free answer counts 0"
    said = lms.describe_gaps(gaps)
    assert "01_why_attention: the free answer" in said and "Manual Grading" in said


def test_moodle_grade_import_csv(gradebook, tmp_path):
    url, roster = gradebook
    lms.export("moodle", roster, tmp_path / "moodle.csv", url)
    rows = read(tmp_path / "moodle.csv")
    assert rows[0][:4] == ["First name", "Last name", "ID number", "Email address"]  # Moodle's export columns
    assert rows[0][4:] == ["01_why_attention (Real)", "02_dot_product (Real)", "Course total (Real)"]
    assert rows[1] == ["Ada", "Lovelace", "ada", "ada@example.org", "3.50", "4.00", "7.50"]
    assert rows[2][-1] == "2.00" and len(rows) == 3


def test_a_roster_without_ids_is_refused(tmp_path):
    bad = tmp_path / "roster.csv"
    bad.write_text("name,email\nAda,ada@example.org\n")
    with pytest.raises(GradingError, match="student_id"):
        roster.read(bad)
    bad.write_text("student_id,name\nada lovelace,Ada\n")
    with pytest.raises(GradingError, match="not a valid student id"):
        roster.read(bad)


def test_one_roster_for_grading_and_export(gradebook, tmp_path):
    """The documented example roster maps LMS names for the grading command and feeds the export; the older
    headers `id` and `full_name` are read as `student_id` and `name`."""
    url, _ = gradebook
    example = HOME / "autograde" / "roster-example.csv"
    assert roster.names(roster.read(example))["ada lovelace"] == "ada", "the grading command maps LMS names through it"
    lms.export("canvas", example, tmp_path / "canvas.csv", url)
    rows = read(tmp_path / "canvas.csv")
    assert [r[0] for r in rows[2:]] == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    old = tmp_path / "old.csv"
    old.write_text("full_name,id\nAda Lovelace,ada\n")
    assert [(p["student_id"], p["name"]) for p in roster.read(old)] == [("ada", "Ada Lovelace")]
    assert lms.export("moodle", old, tmp_path / "moodle.csv", url) == {}
    assert read(tmp_path / "moodle.csv")[1][:3] == ["Ada", "Lovelace", "ada"]


def test_make_lms_writes_the_export(gradebook, tmp_path):
    """`make lms LMS=canvas ROSTER=…` as the README types it, against this gradebook."""
    import os
    import subprocess

    url, roster = gradebook
    out = tmp_path / "canvas.csv"
    env = dict(os.environ, ATTENTION_COURSE_DB=url)
    done = subprocess.run(
        ["make", "-s", "lms", "LMS=canvas", f"ROSTER={roster}", f"OUT={out}"],
        cwd=HOME,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert read(out)[2][0] == "Ada Lovelace" and "wrote" in done.stdout


@pytest.mark.parametrize("kind", ["canvas", "moodle"])
def test_the_exports_are_nbgrader_export_plugins(gradebook, tmp_path, kind):
    """`nbgrader export --exporter=autograde.lms.<Kind>ExportPlugin` writes the same file as the export above (the
    gradebook from the course's configuration), and says what was counted 0."""
    import os
    import subprocess
    import sys

    url, roster = gradebook
    lms.export(kind, roster, tmp_path / "direct.csv", url)
    plugin = {"canvas": "CanvasExportPlugin", "moodle": "MoodleExportPlugin"}[kind]
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", f"--exporter=autograde.lms.{plugin}"]
        + [f"--LmsExportPlugin.roster={roster}", f"--to={tmp_path / 'plugin.csv'}"],
        cwd=HOME,
        env=dict(os.environ, ATTENTION_COURSE_DB=url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "plugin.csv").read_bytes() == (tmp_path / "direct.csv").read_bytes()
    assert "02_dot_product: no submission from alan" in done.stdout
