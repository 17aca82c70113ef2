"""The canary's verdict and preflight (autograde/canary.py) on results made by hand: fast, no kernel.
The canary in a real batch, and its refusal for a course whose .venv points at another folder, are
tested in tests/test_grading.py."""

from types import SimpleNamespace

from harness import ROOT

from autograde import canary, sandbox
from autograde.messages import Result

COLUMNS = [("f-tests", 2.0), ("q1-tests", 1.0), ("free", 3.0)]


def result(f, q1, flags=(), ok=True, reason=""):
    grades = {"f-tests": {"auto": f}, "q1-tests": {"auto": q1}, "free": {"auto": None}}
    return Result("s", ok=ok, reason=reason, flags=list(flags), results={"notebooks": {"L": {"grades": grades}}})


def test_the_canary_passes_when_the_solution_is_full_and_the_blank_zero():
    results = {canary.SOLUTION: result(2.0, 1.0), canary.BLANK: result(0.0, 0.0)}
    assert canary.verdict(results, COLUMNS, manual={"free"}) == []


def test_the_canary_says_what_differs():
    results = {canary.SOLUTION: result(0.0, 1.0, flags=["at run time: reads tb_frame"]), canary.BLANK: result(0.0, 1.0)}
    problems = canary.verdict(results, COLUMNS, manual={"free"})
    assert "the lesson's solution scores 0.0 of 2 on f-tests" in problems
    assert "the lesson's solution was flagged: at run time: reads tb_frame" in problems
    assert any("unanswered release scores 1.0 of 1 on q1-tests (a test that passes unanswered)" in p for p in problems)
    failed = {canary.SOLUTION: result(0, 0, ok=False, reason="memory limit 64 MiB"), canary.BLANK: result(0, 0)}
    assert canary.verdict(failed, COLUMNS, {"free"}) == ["the lesson's solution failed to run (memory limit 64 MiB)"]
    text = canary.refusal("L", ["x"], "bwrap")
    assert text.startswith("Refusing to grade L") and "Nothing was graded" in text


def test_preflight_names_both_folders_when_the_venv_belongs_to_another(monkeypatch, tmp_path):
    (tmp_path / "attention_course").mkdir()
    elsewhere = str(tmp_path / "other" / "attention_course")
    monkeypatch.setitem(sandbox._ENVIRONMENTS, "/x/python", {"helpers": [elsewhere], "executable": "/x/python"})
    text = canary.preflight(SimpleNamespace(root=tmp_path), "/x/python")
    assert elsewhere in text and str(tmp_path / "attention_course") in text and "make venv" in text
    monkeypatch.setitem(sandbox._ENVIRONMENTS, "/x/python", {"helpers": [], "executable": "/x/python"})
    assert "cannot import attention_course" in canary.preflight(SimpleNamespace(root=tmp_path), "/x/python")
    assert canary.preflight(SimpleNamespace(root=ROOT)) == "", "this checkout's own .venv is consistent"


def test_the_canarys_submissions_are_the_release_with_and_without_the_answers():
    course = SimpleNamespace(release=ROOT / "notebooks", source=ROOT / "solutions")
    made = canary.submissions(course, "01_why_attention", ["01_why_attention"])
    blank = made[canary.BLANK]["01_why_attention"].decode()
    solution = made[canary.SOLUTION]["01_why_attention"].decode()
    assert "q1_answer = 64" in solution and "q1_answer = 64" not in blank
    assert "BEGIN HIDDEN TESTS" not in solution, "hidden tests come from the gradebook, as for students"
