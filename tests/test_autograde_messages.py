"""The messages between the grading command and its workers (autograde/messages.py): each written by one
function and read by one, a misspelt or missing field refused where it is read; and the batch's timings."""

import json

import pytest

from autograde.batch import PHASES, Timings
from autograde.messages import FeedbackJob, GradeJob, Result, Status, StudentRecord, read_job


def grade_job():
    return GradeJob(
        student="ada",
        lesson="L",
        root="/course",
        notebooks=["L"],
        sanitized="/runs/L/sanitized",
        staging="/work/students/ada",
        log="/runs/L/logs/ada.log",
        template="/work/template.db",
        release="/course/notebooks/L",
        limits={"memory": 1, "output": 2},
        sandbox="bwrap",
        imports=[["np", "numpy", None]],
    )


def test_every_message_reads_back_as_it_was_written():
    job = grade_job()
    assert read_job(job.line()) == job and str(job.db) == "/work/students/ada/gradebook.db"
    feedback = FeedbackJob("ada", "L", "/course", "sqlite:///g.db", "/work/students/ada/feedback")
    assert read_job(feedback.line()) == feedback
    result = Result("ada", ok=True, flags=["at run time: x"], results={"notebooks": {}}, seconds=1.5)
    assert Result.read(result.line()) == result
    assert job.line().endswith("\n") and "\n" not in job.line()[:-1], "one line per message"


def test_a_student_record_reads_back_and_a_foreign_one_is_not_read(tmp_path):
    """results/<student>.json: a StudentRecord written is read back equal, its status a Status; a record this grader
    did not write (an unknown field, an unknown status) reads as None, so the student is graded again."""
    record = StudentRecord("ada", key="k", status=Status.FAILED, reason="invalid JSON", flags=["x"], seconds=1.5)
    record.write(tmp_path / "ada.json")
    back = StudentRecord.read(tmp_path / "ada.json")
    assert back == record and back.status is Status.FAILED and back.failed
    assert json.loads((tmp_path / "ada.json").read_text())["status"] == "failed to run"
    for foreign in ({"student": "ada", "status": "failed"}, {"student": "ada", "studnet": "x"}, ["ada"]):
        (tmp_path / "old.json").write_text(json.dumps(foreign))
        assert StudentRecord.read(tmp_path / "old.json") is None
    assert StudentRecord.read(tmp_path / "missing.json") is None


def test_a_misspelt_or_missing_field_fails_where_it_is_read():
    data = json.loads(grade_job().line())
    with pytest.raises(ValueError, match="no field studnet"):
        read_job(json.dumps(dict(data, studnet="ada")))
    del data["lesson"]
    with pytest.raises(TypeError, match="lesson"):
        read_job(json.dumps(data))
    with pytest.raises(ValueError, match="unknown job kind"):
        read_job(json.dumps({"kind": "grades", "student": "ada"}))


def test_timings_add_up_the_pieces_of_a_phase():
    timings = Timings()
    for _ in range(2):
        with timings.phase("commit"):
            pass
    with pytest.raises(RuntimeError), timings.phase("failing"):
        raise RuntimeError
    assert set(timings.phases) == {"commit", "failing"} and timings.total() >= sum(timings.phases.values())
    assert [name for name, _ in PHASES] == [
        "start",
        "gradebook set-up and snapshot",
        "collect",
        "repair and scan",
        "grading (workers)",
        "feedback refresh",
        "report",
    ], "the phases' names are timings.json's keys (make bench reads them)"


@pytest.mark.parametrize("fails", [False, True])
def test_the_sandbox_report_comes_back_through_the_resources_even_when_the_run_fails(fails):
    """nbconvert runs its preprocessors on a copy of the resources and drops it when one raises: the RunReport
    SandboxAutograde puts there is the one SandboxExecute fills in, either way."""
    from nbconvert.exporters import NotebookExporter
    from nbconvert.preprocessors import Preprocessor
    from nbformat.v4 import new_notebook

    from autograde.execute import REPORT_KEY, RunReport

    class Run(Preprocessor):
        def preprocess(self, nb, resources):
            report = resources["nbgrader"][REPORT_KEY]
            report.ran, report.flags = True, ["at run time: seen"]
            if fails:
                raise RuntimeError("Kernel died")
            return nb, resources

    exporter = NotebookExporter()
    exporter.register_preprocessor(Run(), enabled=True)
    report = RunReport()
    try:
        exporter.from_notebook_node(new_notebook(), {"nbgrader": {REPORT_KEY: report}})
    except RuntimeError:
        assert fails
    assert report.ran and report.flags == ["at run time: seen"]
