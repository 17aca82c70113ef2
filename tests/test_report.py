"""autograde/report.py: the summary a teacher reads has no nan, says when a question waits for a human, and
lists who did not submit."""

from autograde import report

COLUMNS = [("a-tests", 2.0), ("free", 3.0)]


def row(student, a, free, status):
    return {"student": student, "file": f"{student}.ipynb", "a-tests": a, "free": free, "total": a, "max": "5"} | {
        "status": status,
        "flags": "",
        "notes": "",
    }


def test_summary_without_nan_and_with_not_submitted(tmp_path):
    rows = [row("ada", "2", "", "needs manual grading"), row("alan", "0", "", "needs manual grading")]
    rows += report.not_submitted_rows({"ada", "alan", "grace"}, rows, COLUMNS)
    assert rows[-1]["student"] == "grace" and rows[-1]["status"] == "not submitted" and rows[-1]["total"] == ""
    report.write(tmp_path, "L", COLUMNS, rows, "none")
    summary = (tmp_path / "summary.txt").read_text()
    assert "nan" not in summary.lower()
    free = next(line for line in summary.splitlines() if line.startswith("free "))
    assert free.split()[1:] == ["3", "0", "-", "-", "-", "2"], "nobody graded yet: no mean, 2 pending"
    assert "2 submitted files, 3 students" in summary
    assert "Not submitted (on the roster or in nbgrader's student list): grace" in summary
    assert (tmp_path / "grades.csv").read_text().count("not submitted") == 1


def test_no_row_for_a_student_who_has_one():
    rows = [row("ada", "2", "3", "graded")]
    assert report.not_submitted_rows({"ada"}, rows, COLUMNS) == []


def test_the_status_and_its_reason_are_separate_columns(tmp_path):
    from autograde.collect import Entry
    from autograde.messages import Status, StudentRecord

    entries = [Entry("ada.ipynb", "ada", "ada.ipynb"), Entry("old.ipynb", "ada", "", Status.SUPERSEDED, "later")]
    entries += [Entry("cy.ipynb", "cy", "cy.ipynb")]
    records = {
        "ada": StudentRecord("ada", status=Status.GRADED),
        "cy": StudentRecord("cy", status=Status.FAILED, reason="invalid JSON (nested too deeply)"),
    }
    scores = {"ada": {"a-tests": (2.0, 2.0), "free": (3.0, 3.0)}}
    made = report.rows_for(entries, records, scores, COLUMNS, reviewed=set())
    assert [(r["status"], r["reason"]) for r in made] == [
        ("graded", ""),
        ("superseded", "later"),
        ("failed to run", "invalid JSON (nested too deeply)"),
    ], "the status is one of Status, the why is the reason column: no text parsed"
    rows = [row("ada", "2", "3", "graded") | {"reason": ""}]
    rows += report.not_submitted_rows({"ada", "bob"}, rows, COLUMNS)
    report.write(tmp_path, "L", COLUMNS, rows, "none")
    header = (tmp_path / "grades.csv").read_text().splitlines()[0]
    assert header.endswith("status,reason,flags,notes")
