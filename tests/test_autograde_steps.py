"""Unit tests of the grader's other steps, without a kernel: collect (names, roster, resubmissions),
the gradebook (one transaction per student, hand-given points kept, snapshot), the sandbox's
command line and limits, the refusal to grade without a sandbox, and the report's rows."""

import sqlite3
from types import SimpleNamespace

import pytest
from nbgrader.api import Gradebook

from autograde import collect, execute, gradebook, report, sandbox
from autograde.errors import GradingError
from autograde.messages import Status, StudentRecord
from autograde.roster import names as names_in
from autograde.roster import read as read_roster

# --- collect ------------------------------------------------------------------------------------


def course_for(tmp_path, notebooks=("01_why_attention",), others=None):
    """A course with lesson 01 (and `others`: {lesson: grade ids}) released."""
    lessons = {"01_why_attention": {"rnn-step", "rnn-step-tests"}, **(others or {})}
    return SimpleNamespace(
        submitted=tmp_path / "submitted",
        notebooks=lambda lesson: list(notebooks) if lesson == "01_why_attention" else [lesson],
        lessons=lambda: sorted(lessons),
        grade_ids=lambda lesson: lessons[lesson],
    )


def downloads(tmp_path, files):
    folder = tmp_path / "downloads"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_every_file_gets_an_entry_and_unreadable_names_an_id(tmp_path):
    folder = downloads(
        tmp_path,
        {
            "ada_attempt_2026-11-20-10-00-00_01_why_attention.ipynb": "{}",
            "José García_attempt_2026-11-20-10-00-00_01_why_attention.ipynb": "{}",
            "bob_attempt_2026-11-20-10-00-00_notes.txt": "hi",
            "eve_attempt_2026-11-20-10-00-00_Untitled.ipynb": "{}",
        },
    )
    entries = collect.collect_folder(course_for(tmp_path), "01_why_attention", folder)
    assert len(entries) == 4
    by = {e.student: e for e in entries}
    assert set(by) == {"ada", "José-García", "bob", "eve"}
    assert "José García" in by["José-García"].flags[0]
    assert (tmp_path / "submitted" / "José-García" / "01_why_attention" / "01_why_attention.ipynb").exists()
    assert (tmp_path / "submitted" / "bob" / "01_why_attention" / "notes.txt").exists()
    assert by["eve"].target == "01_why_attention.ipynb" and "graded as" in by["eve"].notes[0]
    assert (tmp_path / "submitted" / "ada" / "01_why_attention" / "timestamp.txt").read_text() == "2026-11-20 10:00:00"


def test_resubmission_the_latest_attempt_wins(tmp_path):
    folder = downloads(
        tmp_path,
        {
            "ada_attempt_2026-11-20-11-00-00_01_why_attention.ipynb": "late",
            "ada_attempt_2026-11-20-09-00-00_01_why_attention.ipynb": "early",
        },
    )
    entries = collect.collect_folder(course_for(tmp_path), "01_why_attention", folder)
    early = next(e for e in entries if "09-00" in e.file)
    late = next(e for e in entries if "11-00" in e.file)
    assert early.status is Status.SUPERSEDED and not late.status
    assert (tmp_path / "submitted" / "ada" / "01_why_attention" / "01_why_attention.ipynb").read_text() == "late"


def test_roster_maps_lms_names(tmp_path):
    roster_file = tmp_path / "roster.csv"
    roster_file.write_text("name,id\nJosé García,jgarcia\nAda Lovelace,ada\n")
    roster = names_in(read_roster(roster_file))
    assert collect.student_of("Jose Garcia", roster) == ("jgarcia", None)
    assert collect.student_of("ada", roster) == ("ada", None)
    sid, flag = collect.student_of("mallory", roster)
    assert sid == "mallory" and "not in the roster" in flag
    assert collect.derive_id("  ") == "unnamed"
    assert collect.student_of("王伟", roster) == ("王伟", "'王伟' is not in the roster")


# --- gradebook ---------------------------------------------------------------------------------


@pytest.fixture
def book(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("L")
        gb.add_notebook("L", "L")
        gb.add_grade_cell("t", "L", "L", max_score=2, cell_type="code")
        gb.add_grade_cell("free", "L", "L", max_score=3, cell_type="markdown")
        gb.add_solution_cell("a", "L", "L")
        gb.add_solution_cell("free", "L", "L")
        gb.add_source_cell("t", "L", "L", cell_type="code", locked=True, source="assert x", checksum="c")
    return SimpleNamespace(db_url=url, course_id="default_course", state=tmp_path, root=tmp_path)


def results(t=2.0, free=0.0):
    return {
        "timestamp": None,
        "notebooks": {
            "L": {
                "penalty": None,
                "grades": {"t": {"auto": t, "max": 2}, "free": {"auto": free, "max": 3}},
                "comments": {"a": None, "free": None},
            }
        },
    }


def test_commit_keeps_hand_given_points(book):
    gradebook.commit(book, "L", "ada", results())
    with Gradebook(book.db_url) as gb:
        g = gb.find_grade("free", "L", "L", "ada")
        g.manual_score = 2.5
        gb.db.commit()
    manual = gradebook.read_manual(book, "L", ["ada", "nobody"])
    assert manual == {"ada": {"L": {"grades": {"free": [2.5, None]}, "comments": {}}}}
    gradebook.commit(book, "L", "ada", results(t=0.0))
    scores, prints = gradebook.read_scores(book, "L", ["ada", "nobody"])
    assert scores == {"ada": {"t": (0.0, 2.0), "free": (2.5, 3.0)}} and set(prints) == {"ada"}
    # a worker's private copy with the same results and the hand-given points shows the same scores
    copy = SimpleNamespace(db_url=f"sqlite:///{book.state / 'copy.db'}", course_id="default_course")
    gradebook.make_template(book, "L", book.state / "copy.db")
    gradebook.commit(copy, "L", "ada", results(t=0.0))
    gradebook.apply_manual(book.state / "copy.db", "L", "ada", manual["ada"])
    assert gradebook.read_scores(copy, "L", ["ada"])[1] == prints, "the feedback made by a worker is current"


def test_one_answer_waits_for_a_hand_grade_in_the_report_the_feedback_and_the_export(book):
    """The free answer nobody has graded waits (no score yet); an autograded cell the formgrader flagged for review
    keeps its points. The report, the feedback page and the LMS export ask the same function."""
    from autograde import lms

    gradebook.commit(book, "L", "ada", results(free=None))
    with Gradebook(book.db_url) as gb:
        gb.find_grade("t", "L", "L", "ada").needs_manual_grade = True  # the formgrader's "flag"
        gb.db.commit()
        assert lms.pending_in(gb) == {("ada", "L")}
        waiting = {
            g.name: gradebook.waits_for_hand_grade(g) for g in gb.find_submission_notebook("L", "L", "ada").grades
        }
    assert waiting == {"t": False, "free": True}
    scores, _ = gradebook.read_scores(book, "L", ["ada"])
    assert scores == {"ada": {"t": (2.0, 2.0), "free": (None, 3.0)}}


def test_commit_is_one_transaction(book, monkeypatch):
    original = Gradebook.find_comment

    def crash(self, *a, **k):
        raise RuntimeError("killed mid-student")

    monkeypatch.setattr(Gradebook, "find_comment", crash)
    with pytest.raises(RuntimeError):
        gradebook.commit(book, "L", "ada", results())
    monkeypatch.setattr(Gradebook, "find_comment", original)
    with Gradebook(book.db_url) as gb:
        assert [s.id for s in gb.students] == [], "a half-written student must leave no trace"


def test_snapshot_and_template(book, tmp_path):
    gradebook.commit(book, "L", "ada", results())
    path, why = gradebook.snapshot(book)
    assert path.exists() and not why
    with sqlite3.connect(path) as con:
        assert con.execute("select count(*) from grade").fetchone()[0] == 2
    assert gradebook.snapshot(SimpleNamespace(db_url="postgresql://x/y"))[0] is None
    template = gradebook.make_template(book, "L", tmp_path / "template.db")
    with Gradebook(f"sqlite:///{template}") as gb:
        nb = gb.find_notebook("L", "L")
        assert [c.name for c in nb.grade_cells] == ["t", "free"] and nb.source_cells[0].source == "assert x"
        assert not gb.students
    assert gradebook.lesson_in_gradebook(book, "L", ["L"]) == ""
    assert "not in the gradebook" in gradebook.lesson_in_gradebook(book, "M", ["M"])


# --- sandbox, limits, isolation ----------------------------------------------------------------


def test_sandbox_command_binds_only_what_the_kernel_needs(tmp_path):
    cmd = sandbox.command(
        ["/venv/bin/python", "-m", "ipykernel_launcher"],
        tmp_path / "s",
        tmp_path / "ipc",
        sandbox.Limits(),
        uid=2_000_000_001,
        fds={"AUTOGRADE_GUARD_FD": 7, "AUTOGRADE_SETUP_FD": 8},
    )
    text = " ".join(cmd)
    for flag in (
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--clearenv",
        f"--chdir {sandbox.HOME}",
        f"--data={2 * sandbox.GiB}",
        "--reuid=2000000001",
        "AUTOGRADE_GUARD_FD 7",
        "AUTOGRADE_SETUP_FD 8",
        f"--perms 01777 --size {sandbox.GiB} --tmpfs {sandbox.HOME}",  # the home: in memory, 1 GiB at most
        f"--ro-bind {tmp_path / 's'} {sandbox.SEED}",  # what the home starts with, copied in
    ):
        assert flag in text, flag
    binds = [cmd[i + 2] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind")]
    writable = [cmd[i + 2] for i, a in enumerate(cmd) if a == "--bind"]
    assert writable == [str(tmp_path / "ipc")]
    assert not any("solutions" in b or "notebooks" in b or "grading" in b for b in binds)
    assert cmd[-3:] == ["/venv/bin/python", "-m", "ipykernel_launcher"]
    measured = sandbox.command(
        ["/venv/bin/python"], tmp_path / "s", tmp_path / "ipc", sandbox.Limits(), home_in_memory=False
    )
    assert "--data" not in " ".join(sandbox.command(["/p"], tmp_path, tmp_path, sandbox.Limits(), rlimit_memory=False))
    assert [measured[i + 2] for i, a in enumerate(measured) if a == "--bind"][-1] == sandbox.HOME


def test_sizes_and_limit_statuses():
    assert sandbox.parse_size("2G") == 2 * sandbox.GiB and sandbox.parse_size("512 MiB") == 512 * sandbox.MiB
    assert sandbox.size(2 * sandbox.GiB) == "2 GiB"
    limits = vars(sandbox.Limits())

    def nb(ename, evalue):
        return SimpleNamespace(cells=[{"outputs": [{"output_type": "error", "ename": ename, "evalue": evalue}]}])

    assert execute.limit_hit(nb("_ArrayMemoryError", "Unable to allocate"), limits) == "memory limit 2 GiB"
    assert (
        execute.limit_hit(nb("RuntimeError", "DefaultCPUAllocator: can't allocate memory"), limits)
        == "memory limit 2 GiB"
    )
    assert execute.limit_hit(nb("OSError", "[Errno 27] File too large"), limits) == "file size limit 100 MiB"
    assert execute.limit_hit(nb("BlockingIOError", "[Errno 11] Resource temporarily unavailable"), limits).startswith(
        "process limit"
    )
    assert execute.limit_hit(nb("ValueError", "x"), limits, exit_code=-24, died=True) == "CPU time limit 600 s"
    assert execute.limit_hit(nb("OSError", "[Errno 28] No space left on device"), limits) == "disk limit 1 GiB"
    # counted by a cgroup, memory and processes are what the cgroup says, never what a notebook printed
    assert execute.limit_hit(nb("MemoryError", "raised by hand"), limits, counted=True) == ""
    assert execute.limit_hit(nb("AssertionError", "wrong"), limits) == ""


def test_grading_refuses_without_a_sandbox_unless_told(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(GradingError, match="--no-sandbox"):
        sandbox.isolation(sandbox.Limits())
    text, kind = sandbox.isolation(sandbox.Limits(), no_sandbox=True)
    assert kind == "none" and "--no-sandbox" in text


# --- report ------------------------------------------------------------------------------------


def test_rows_one_per_file_with_statuses():
    e = collect.Entry
    entries = [
        e("ada_nb.ipynb", "ada", "nb.ipynb"),
        e("bob_nb.ipynb", "bob", "nb.ipynb"),
        e("bob_old.ipynb", "bob", "nb.ipynb", status=Status.SUPERSEDED, reason="later file"),
        e("cy_notes.txt", "cy", ""),
        e("dee_nb.ipynb", "dee", "nb.ipynb", flags=["odd name"]),
    ]
    results = {
        "ada": StudentRecord("ada", status=Status.GRADED),
        "bob": StudentRecord("bob", status=Status.FAILED, reason="invalid JSON"),
        "dee": StudentRecord("dee", status=Status.GRADED),
    }
    scores = {"ada": {"t": (2.0, 2.0), "free": (None, 3.0)}, "dee": {"t": (1.0, 2.0), "free": (0.0, 3.0)}}
    rows = report.rows_for(entries, results, scores, [("t", 2.0), ("free", 3.0)], reviewed=set())
    status = {r["file"]: (r["status"], r["reason"]) for r in rows}
    assert status == {
        "ada_nb.ipynb": ("needs manual grading", ""),
        "bob_nb.ipynb": ("failed to run", "invalid JSON"),
        "bob_old.ipynb": ("superseded", "later file"),
        "cy_notes.txt": ("failed to run", "no notebook submitted"),
        "dee_nb.ipynb": ("needs manual grading", ""),
    }
    assert [r["total"] for r in rows] == ["2", "", "", "", "1"]
    assert report.rows_for(entries[-1:], results, scores, [("t", 2.0), ("free", 3.0)], {"dee"})[0]["status"] == "graded"


def test_sandbox_tmp_is_mounted_before_what_lives_under_it(tmp_path):
    """A course or venv under /tmp (a fresh clone there, a CI checkout) stays visible: bwrap applies its
    options in order, so the private /tmp must come before the read-only binds beneath it."""
    cmd = sandbox.command(
        ["/venv/bin/python", "-m", "ipykernel_launcher"],
        tmp_path / "s",
        tmp_path / "ipc",
        sandbox.Limits(),
        extra_ro=["/tmp/somewhere/course-helpers"],
    )
    tmpfs = cmd.index("--tmpfs")
    assert cmd[tmpfs + 1] == "/tmp"
    under_tmp = [
        i for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind", "--dir") and cmd[i + 1].startswith("/tmp")
    ]
    assert under_tmp and min(under_tmp) > tmpfs
