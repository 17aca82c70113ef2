"""Every file under SUBMISSIONS gets exactly one row, under the right person and for the right lesson
(autograde/collect.py), and no cell of the grader's CSV files is a formula (autograde/report.py,
autograde/lms.py). Fast, no kernel."""

import json
import os
import zipfile
from datetime import datetime
from types import SimpleNamespace

from autograde import collect, report, roster
from autograde.messages import Status

L = "01_why_attention"


def course(tmp_path):
    lessons = {L: {"rnn-step", "rnn-step-tests"}, "11_attention_at_scale": {"gqa", "gqa-tests"}}
    return SimpleNamespace(
        submitted=tmp_path / "submitted",
        notebooks=lambda lesson: [lesson],
        lessons=lambda: sorted(lessons),
        grade_ids=lambda lesson: lessons[lesson],
    )


def notebook(*grade_ids):
    cells = [{"cell_type": "code", "source": "", "metadata": {"nbgrader": {"grade_id": g}}} for g in grade_ids]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def collect_files(tmp_path, files):
    folder = tmp_path / "downloads"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    entries = collect.collect_folder(course(tmp_path), L, folder)
    return {e.file: e for e in entries}


def test_unicode_names_are_kept_and_never_collapse(tmp_path):
    found = collect_files(
        tmp_path,
        {
            f"王伟_{L}.ipynb": notebook("rnn-step"),
            f"李娜_{L}.ipynb": notebook("rnn-step"),
            f"🙂_{L}.ipynb": notebook("rnn-step"),
            f"José García_{L}.ipynb": notebook("rnn-step"),
        },
    )
    ids = {name.split("_")[0]: e.student for name, e in found.items()}
    assert ids == {"王伟": "王伟", "李娜": "李娜", "🙂": "u1f642", "José García": "José-García"}
    assert not any(e.status for e in found.values()), "nobody is superseded by somebody else"
    assert collect.fold("JOSÉ  García") == collect.fold("jose garcia") and collect.fold("王伟") == "王伟"


def test_canvas_and_moodle_ids_tell_same_name_students_apart(tmp_path):
    found = collect_files(
        tmp_path,
        {
            f"smithjohn_1001_5001_{L}.ipynb": notebook("rnn-step"),
            f"smithjohn_1002_5002_{L}.ipynb": notebook("rnn-step"),
            f"Ada Lovelace_77_assignsubmission_file_{L}.ipynb": notebook("rnn-step"),
        },
    )
    twins = [found[f"smithjohn_100{k}_500{k}_{L}.ipynb"] for k in (1, 2)]
    assert [e.student for e in twins] == ["smithjohn-1001", "smithjohn-1002"]
    assert all("check who is who" in e.flags[-1] and not e.status for e in twins)
    moodle = found[f"Ada Lovelace_77_assignsubmission_file_{L}.ipynb"]
    assert moodle.student == "Ada-Lovelace" and moodle.lms_id == "77" and moodle.target == f"{L}.ipynb"
    roster = {"lms:1001": "jsmith", collect.fold("smithjohn"): "someone"}
    assert collect.student_of("smithjohn", roster, "1001") == ("jsmith", None)


def test_a_moodle_number_never_names_someone_in_the_roster(tmp_path):
    """Moodle's number in a download is a participant number of that one assignment (mod/assign makes one per
    assignment and person), not the user's id: a roster's lms_id that happens to hold it (another LMS's user id, or
    a Moodle user id) must not give the file to that person; the name does."""
    roster = {"lms:2001": "grace", "lms:1001": "jsmith", collect.fold("Ada Lovelace"): "ada"}
    folder = tmp_path / "downloads"
    for name in (
        f"Ada Lovelace_2001_assignsubmission_file_{L}.ipynb",
        f"x/Ada Lovelace_2001_assignsubmission_file_/{L}.ipynb",
    ):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(notebook("rnn-step"))
    entries = collect.collect_folder(course(tmp_path), L, folder, roster)
    assert {e.student for e in entries} == {"ada"}, [(e.file, e.student) for e in entries]
    canvas = collect.parse_name(f"smithjohn_1001_5001_{L}.ipynb", L, {L: [L]}, roster)
    assert canvas.student == "jsmith", "Canvas's number is the user's id: the roster's lms_id maps it"


def test_every_file_is_listed_even_the_ones_not_read(tmp_path):
    folder = tmp_path / "downloads"
    (folder / "archive").mkdir(parents=True)
    (folder / "archive" / f"ada_{L}.ipynb").write_text(notebook("rnn-step"))
    (folder / "archive" / f".bob_{L}.ipynb").write_text(notebook("rnn-step"))
    (folder / "archive" / ".DS_Store").write_text("x")
    (folder / "elsewhere.txt").write_text("outside archive/")
    os.symlink("/etc/hostname", folder / "archive" / f"eve_{L}.ipynb")
    with zipfile.ZipFile(folder / "archive" / "cy.zip", "w") as zf:
        zf.writestr(f"cy_{L}.ipynb", notebook("rnn-step"))
        zf.writestr("__MACOSX/._cy.ipynb", "resource fork")
    entries = collect.collect_folder(course(tmp_path), L, folder)
    status = {e.file: (e.status, e.reason) for e in entries}
    assert len(entries) == 7
    assert status[f"ada_{L}.ipynb"] == (None, "") and status[f"cy.zip:cy_{L}.ipynb"] == (None, "")
    hidden = (Status.NOT_GRADED, collect.HIDDEN)
    assert status[f".bob_{L}.ipynb"] == status[".DS_Store"] == status["cy.zip:__MACOSX/._cy.ipynb"] == hidden
    assert status["elsewhere.txt"][0] is Status.NOT_GRADED and status["elsewhere.txt"][1].startswith("outside archive/")
    assert status[f"eve_{L}.ipynb"] == (Status.NOT_GRADED, "a symbolic link")


def test_a_notebook_of_another_lesson_is_never_graded_as_this_one(tmp_path):
    found = collect_files(
        tmp_path,
        {
            f"kim_{L}.ipynb": notebook("rnn-step"),
            "kim_11_attention_at_scale.ipynb": notebook("gqa"),
            "lee_Untitled.ipynb": notebook("gqa", "gqa-tests"),  # renamed, but its cells are lesson 11's
            "max_Untitled.ipynb": notebook("rnn-step"),  # renamed, this lesson's cells: graded
        },
    )
    other = (Status.NOT_THIS_LESSON, "looks like 11_attention_at_scale")
    assert found[f"kim_{L}.ipynb"].status is None and found[f"kim_{L}.ipynb"].target == f"{L}.ipynb"
    assert (found["kim_11_attention_at_scale.ipynb"].status, found["kim_11_attention_at_scale.ipynb"].reason) == other
    assert (found["lee_Untitled.ipynb"].status, found["lee_Untitled.ipynb"].reason) == other
    assert found["max_Untitled.ipynb"].status is None and found["max_Untitled.ipynb"].target == f"{L}.ipynb"
    assert (tmp_path / "submitted" / "kim" / L / f"{L}.ipynb").read_text() == notebook("rnn-step")
    assert not (tmp_path / "submitted" / "lee").exists()


def test_no_csv_cell_is_a_formula(tmp_path):
    for text in ("=HYPERLINK(1)", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert report.safe_cell(text) == "'" + text
    assert report.safe_cell("-2") == "-2" and report.safe_cell("12") == "12" and report.safe_cell("ada") == "ada"
    rows = [{"student": "=HYPERLINK(1)", "file": "f", "t": "2", "total": "2", "max": "2"}]
    rows[0].update(status="graded", flags="", notes="")
    report.write(tmp_path, L, [("t", 2.0)], rows, "none")
    assert "'=HYPERLINK(1)" in (tmp_path / "grades.csv").read_text()


def test_no_lms_export_cell_is_a_formula(tmp_path):
    from autograde import lms, roster

    path = tmp_path / "roster.csv"
    path.write_text("student_id,name,email,lms_id\nada,=HYPERLINK(1),@evil,1\n")
    for kind in ("canvas", "moodle"):
        lms.write(kind, roster.read(path), ({L: 12.0}, {("ada", L): 9.0}), tmp_path / f"{kind}.csv")
        text = (tmp_path / f"{kind}.csv").read_text()
        assert "9" in text.splitlines()[-1]
        assert "'=HYPERLINK(1)" in text and ",=HYPERLINK" not in text and "\n=HYPERLINK" not in text
    assert "'@evil" in (tmp_path / "moodle.csv").read_text()


# --- every LMS's download, with real file names: two students and a resubmission each (issue 30 item 2) --------
RIGHT, WRONG = notebook("rnn-step", "right"), notebook("rnn-step", "wrong")


def graded(tmp_path, files):
    """{student: the file graded for them}, and the entries by file."""
    found = collect_files(tmp_path, files)
    chosen = {e.student: e.file for e in found.values() if not e.status and e.target}
    return chosen, found


def assert_right_latest(tmp_path, chosen, people):
    assert sorted(chosen) == sorted(people), chosen
    for student in people:
        assert (tmp_path / "submitted" / student / L / f"{L}.ipynb").read_text() == RIGHT, student


def test_canvas_resubmissions_are_ordered_by_the_attachment_id_as_a_number(tmp_path):
    chosen, found = graded(
        tmp_path,
        {
            f"lovelaceada_2001_9999_{L}.ipynb": WRONG,
            f"lovelaceada_2001_10001_{L}-1.ipynb": RIGHT,  # a later upload: a larger id, shorter as text
            f"hopper_2002_5000_{L}.ipynb": RIGHT,
            f"hopper_LATE_2002_5003_{L}-1.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["lovelaceada", "hopper"])
    assert chosen["lovelaceada"] == f"lovelaceada_2001_10001_{L}-1.ipynb"
    assert found[f"lovelaceada_2001_9999_{L}.ipynb"].status is Status.SUPERSEDED
    assert not any("does not say which is later" in f for e in found.values() for f in e.flags)


def test_moodle_flat_and_in_folders(tmp_path):
    chosen, found = graded(
        tmp_path,
        {
            f"Ada Lovelace_2001_assignsubmission_file_/{L}.ipynb": RIGHT,
            f"Grace Hopper_2002_assignsubmission_file_/{L}.ipynb": WRONG,
            f"Grace Hopper_2002_assignsubmission_file_/{L} (1).ipynb": RIGHT,
        },
    )
    assert sorted(chosen) == ["Ada-Lovelace", "Grace-Hopper"]
    assert found[f"Ada Lovelace_2001_assignsubmission_file_/{L}.ipynb"].lms_id == "2001"
    flags = found[f"Grace Hopper_2002_assignsubmission_file_/{L}.ipynb"].flags
    flags += found[f"Grace Hopper_2002_assignsubmission_file_/{L} (1).ipynb"].flags
    assert any("the download does not say which is later" in f for f in flags), "Moodle keeps no order: flagged"
    flat, found = graded(
        tmp_path / "flat",
        {
            f"Ada Lovelace_2001_assignsubmission_file_{L}.ipynb": RIGHT,
            f"Grace Hopper_2002_assignsubmission_file_{L}.ipynb": RIGHT,
        },
    )
    assert sorted(flat) == ["Ada-Lovelace", "Grace-Hopper"]


def test_blackboard_names_the_assignment_first_and_the_attempt_time(tmp_path):
    chosen, found = graded(
        tmp_path,
        {
            f"Lesson01_ada_attempt_2026-11-20-08-00-00_{L}.ipynb": WRONG,
            f"Lesson01_ada_attempt_2026-11-21-08-00-00_{L}.ipynb": RIGHT,
            f"Lesson01_grace_attempt_2026-11-20-09-30-00_{L}.ipynb": RIGHT,
            "Lesson01_grace_attempt_2026-11-20-09-30-00.txt": "Name: Grace Hopper",
        },
    )
    assert_right_latest(tmp_path, chosen, ["ada", "grace"])
    assert (tmp_path / "submitted" / "grace" / L / "timestamp.txt").read_text() == "2026-11-20 09:30:00"


def test_brightspace_names_the_person_and_the_date(tmp_path):
    chosen, _ = graded(
        tmp_path,
        {
            f"128686-297946 - Ada Lovelace - Nov 20, 2026 1015 AM - {L}.ipynb": WRONG,
            f"128687-297946 - Ada Lovelace - Nov 20, 2026 1230 PM - {L}.ipynb": RIGHT,
            f"128690-297950 - Grace Hopper - Nov 19, 2026 0905 AM - {L}.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["Ada-Lovelace", "Grace-Hopper"])


def test_gradescope_export_reads_the_people_from_its_metadata(tmp_path):
    metadata = (
        ":submission_501:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '2001'\n"
        "  :created_at: 2026-11-20 08:00:00.000000000 -08:00\n"
        ":submission_507:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '2001'\n"
        "  :created_at: 2026-11-21 08:00:00.000000000 -08:00\n"
        ":submission_502:\n  :submitters:\n  - :name: Grace Hopper\n    :sid: '2002'\n"
        "  :created_at: 2026-11-20 09:00:00.000000000 -08:00\n"
    )
    chosen, found = graded(
        tmp_path,
        {
            "submission_metadata.yml": metadata,
            f"submission_501/{L}.ipynb": WRONG,
            f"submission_507/{L}.ipynb": RIGHT,
            f"submission_502/{L}.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["Ada-Lovelace", "Grace-Hopper"])
    assert found["submission_metadata.yml"].student == collect.UNKNOWN


def with_roster(tmp_path, files, roster):
    """{file: entry} of `files` collected with `roster` ({"lms:<id>" or folded name: student id})."""
    folder = tmp_path / "downloads"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return {e.file: e for e in collect.collect_folder(course(tmp_path), L, folder, roster)}


def test_an_lms_zip_of_the_class_keeps_each_persons_file(tmp_path):
    """Canvas's own zip (`<course>-<title>_submissions.zip`, its files at the top): one student per file, not one
    student named after the zip."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    people = ("lovelaceada_2001_10001", "hoppergrace_2002_10002", "turingalan_2003_10003")
    with zipfile.ZipFile(folder / "CS101-lesson-01_submissions.zip", "w") as zf:
        for person in people:
            zf.writestr(f"{person}_{L}.ipynb", RIGHT)
    entries = collect.collect_folder(course(tmp_path), L, folder)
    assert sorted(e.student for e in entries) == ["hoppergrace", "lovelaceada", "turingalan"]
    assert not any(e.status for e in entries), [(e.file, e.status) for e in entries]


def test_a_zip_a_student_handed_in_is_theirs_whatever_is_inside(tmp_path):
    """Grace's own zip (Canvas named it after her) holds a file and a folder named like Ada's submissions; a zip in
    Alan's Moodle folder holds a bare notebook: each file is its uploader's."""
    folder = tmp_path / "downloads"
    (folder / "Alan Turing_2003_assignsubmission_file_").mkdir(parents=True)
    with zipfile.ZipFile(folder / "hoppergrace_2002_10002_work.zip", "w") as zf:
        zf.writestr(f"lovelaceada_2001_99999_{L}.ipynb", RIGHT)
        zf.writestr(f"ada+{L}+2026-12-01 10:00:00.000000 UTC/{L}.ipynb", RIGHT)
    with zipfile.ZipFile(folder / "Alan Turing_2003_assignsubmission_file_" / "work.zip", "w") as zf:
        zf.writestr(f"{L}.ipynb", RIGHT)
    entries = collect.collect_folder(course(tmp_path), L, folder)
    whose = {e.file: e.student for e in entries}
    assert set(whose.values()) == {"hoppergrace", "Alan-Turing"}, whose
    named_like_ada = next(e for e in entries if e.file.endswith(f"lovelaceada_2001_99999_{L}.ipynb"))
    assert any("a file named like another download" in f for f in named_like_ada.flags), named_like_ada.flags


def test_canvas_anonymous_grading_keeps_each_submission_apart(tmp_path):
    """Anonymous grading names files `[LATE_]anon_<anonymous id>_<attachment id>_<file>`: each is its own student,
    flagged, and an all-digit anonymous id is never read as a Canvas user id of the roster."""
    files = {f"anon_aB3x9_10001_{L}.ipynb": RIGHT, f"LATE_anon_Qw7Zk_10002_{L}.ipynb": RIGHT}
    files[f"anon_12345_10004_{L}.ipynb"] = RIGHT
    found = with_roster(tmp_path, files, {"lms:12345": "grace"})
    assert sorted(e.student for e in found.values()) == ["anon-12345", "anon-Qw7Zk", "anon-aB3x9"]
    assert all(not e.status and any("anonymous" in f for f in e.flags) for e in found.values())


def test_a_gradescope_student_id_is_not_the_rosters_lms_id(tmp_path):
    metadata = ":submission_501:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '2001'\n"
    files = {"submission_metadata.yml": metadata, f"submission_501/{L}.ipynb": RIGHT}
    found = with_roster(tmp_path, files, {"lms:2001": "grace", collect.fold("Ada Lovelace"): "ada"})
    assert found[f"submission_501/{L}.ipynb"].student == "ada", "the name, not a Canvas id equal to the sid"


def test_brightspace_times_with_a_one_digit_hour_and_its_folders(tmp_path):
    assert collect.stamp("Nov 20, 2026 115 PM") == datetime(2026, 11, 20, 13, 15)
    assert collect.stamp("Nov 20, 2026 1022 AM") == datetime(2026, 11, 20, 10, 22)
    chosen, _ = graded(
        tmp_path,
        {
            f"128686-297946 - Ada Lovelace - Nov 20, 2026 900 PM - {L}.ipynb": RIGHT,
            f"128690-297946 - Ada Lovelace - Nov 20, 2026 115 PM - {L}.ipynb": WRONG,  # earlier, though "115" > "900"
            f"39786-640693 - Alan Turing - Oct 10, 2025 1022 AM/{L}.ipynb": RIGHT,  # a folder per submission
            "index.html": "<html>Brightspace's list of the download</html>",
        },
    )
    assert_right_latest(tmp_path, chosen, ["Ada-Lovelace", "Alan-Turing"])
    index = collect_files(tmp_path / "again", {"index.html": "<html></html>"})["index.html"]
    assert index.student == collect.UNKNOWN and index.status is Status.NOT_GRADED and not index.flags


def test_moodle_4_folders_and_a_students_own_subfolder(tmp_path):
    chosen, _ = graded(
        tmp_path,
        {
            f"Ada Lovelace_2001_assignsubmission_file/{L}.ipynb": RIGHT,  # Moodle 4.1+: no trailing _
            f"Grace Hopper_2002_assignsubmission_file_/work/{L}.ipynb": RIGHT,  # a folder the student uploaded
            # a folder Alan made, named like another student's exchange folder: the LMS's folder says who he is
            f"Alan Turing_2003_assignsubmission_file_/ada+{L}+2026-12-01 10:00:00.000000 UTC/{L}.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["Ada-Lovelace", "Alan-Turing", "Grace-Hopper"])


def test_user_names_with_an_underscore(tmp_path):
    """Blackboard's `<assignment>_<user name>_attempt_…` and `<student>_<file>` when a user name holds `_`: the roster
    says which reading is a person; without one, an ambiguous Blackboard name is flagged, never silently merged."""
    files = {
        f"Lesson 1_ada_l_attempt_2026-11-20-10-00-00_{L}.ipynb": RIGHT,
        f"Lesson 1_bob_l_attempt_2026-11-20-11-00-00_{L}.ipynb": RIGHT,
        f"cy_x_{L}.ipynb": RIGHT,
    }
    roster = {collect.fold("Ada L"): "ada_l", collect.fold("Bob L"): "bob_l", collect.fold("Cy X"): "cy_x"}
    roster |= {collect.fold("Cy"): "cy"}
    files[f"Homework_1_20231234_attempt_2026-11-20-10-00-00_{L}.ipynb"] = RIGHT  # Blackboard, an all-digit user
    files[f"Homework_1_20235678_attempt_2026-11-20-11-00-00_{L}.ipynb"] = RIGHT  # name: not Canvas's pattern
    found = with_roster(tmp_path / "roster", files, roster)
    graded = sorted(e.student for e in found.values() if not e.status)
    assert graded == ["20231234", "20235678", "ada_l", "bob_l", "cy_x"], graded
    alone = collect_files(tmp_path / "alone", files)
    blackboard = [e for name, e in alone.items() if name.startswith("Lesson 1")]
    assert all(any("can be read as the user names 'ada_l', 'l'" in f or "'bob_l', 'l'" in f for f in e.flags)
               for e in blackboard), [e.flags for e in blackboard]  # fmt: skip


def test_what_a_student_names_never_makes_the_file_someone_elses(tmp_path):
    """Ada chooses her file's name (after the LMS's prefix) and her folders: written like Blackboard's, Canvas's or
    nbgrader's layouts with Grace in them, they are still Ada's."""
    files = {
        f"lovelaceada_1001_5001_x_grace_attempt_2026-12-01-00-00-00_{L}.ipynb": RIGHT,  # Canvas
        f"Ada Lovelace_77_assignsubmission_file_x_Grace Hopper_attempt_2026-12-01-00-00-00_{L}.ipynb": RIGHT,
        f"128686-297946 - Ada Lovelace - Nov 20, 2026 1015 AM - x_1002_1_{L}.ipynb": RIGHT,  # Brightspace
        f"Ada Lovelace_78_assignsubmission_file_/grace/{L}/{L}.ipynb": RIGHT,  # nbgrader's <student>/<lesson>/
        f"Lesson01_ada_attempt_2026-11-20-08-00-00_x_grace_attempt_2099-01-01-00-00-00_{L}.ipynb": RIGHT,
    }
    roster = {collect.fold("Grace Hopper"): "grace", "lms:1002": "grace", collect.fold("Ada Lovelace"): "ada"}
    roster |= {"lms:1001": "ada", "lms:297946": "ada", "ada": "ada"}
    found = with_roster(tmp_path, files, roster)  # five LMSs' ids for one person: told apart as ada-<id>, flagged
    assert all(e.student.startswith("ada") for e in found.values()), {n: e.student for n, e in found.items()}


def test_a_name_two_people_share_in_the_roster_is_flagged(tmp_path):
    people = [{"student_id": sid, "name": "John Smith", "lms_id": ""} for sid in ("jsmith1", "jsmith2")]
    found = with_roster(tmp_path, {f"John Smith_77_assignsubmission_file_{L}.ipynb": RIGHT}, roster.names(people))
    entry = found[f"John Smith_77_assignsubmission_file_{L}.ipynb"]
    assert entry.student not in ("jsmith1", "jsmith2") and any("several people named" in f for f in entry.flags)


def test_canvas_orders_by_the_upload_not_a_date_in_the_file_name(tmp_path):
    chosen, found = graded(
        tmp_path,
        {
            f"lovelaceada_2001_5001_{L} 2026-11-20 10.15.30.ipynb": WRONG,  # older: a date in the name the OS gave
            f"lovelaceada_2001_5009_{L}.ipynb": RIGHT,
            f"lovelaceada_2001_5012_{L}.html": RIGHT,  # a later HTML export: not a notebook to grade
        },
    )
    assert chosen == {"lovelaceada": f"lovelaceada_2001_5009_{L}.ipynb"}, chosen


def test_nbgrader_exchange_folders(tmp_path):
    chosen, _ = graded(
        tmp_path,
        {
            f"ada+{L}+2026-11-20 08:00:00.000000 UTC+x1/{L}.ipynb": WRONG,
            f"ada+{L}+2026-11-20 10:00:00.000000 UTC+x2/{L}.ipynb": RIGHT,
            f"grace+{L}+2026-11-20 09:00:00.000000 UTC+x3/{L}.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["ada", "grace"])
    layout, _ = graded(tmp_path / "b", {f"ada/{L}/{L}.ipynb": RIGHT, f"grace/{L}/{L}.ipynb": RIGHT})
    assert sorted(layout) == ["ada", "grace"]


def test_times_are_dates_whatever_their_separators(tmp_path):
    chosen, found = graded(
        tmp_path,
        {
            f"ada_attempt_2026-11-20T08-00-00_{L}.ipynb": WRONG,  # ISO: sorts after the later one as text
            f"ada_attempt_2026-11-20-09-00-00_{L}.ipynb": RIGHT,
            f"grace_attempt_2026-11-20-09-00-00_{L}.ipynb": RIGHT,
        },
    )
    assert_right_latest(tmp_path, chosen, ["ada", "grace"])
    assert collect.stamp("2026-11-20T08-00-00") < collect.stamp("2026-11-20-09-00-00")


def test_a_file_no_person_can_be_read_from_gets_its_own_row(tmp_path):
    chosen, found = graded(
        tmp_path, {f"{L}.ipynb": WRONG, f"{L} (1).ipynb": RIGHT, f"ada_{L}.ipynb": RIGHT, f"grace_{L}.ipynb": RIGHT}
    )
    assert sorted(chosen) == ["ada", "grace"]
    for name in (f"{L}.ipynb", f"{L} (1).ipynb"):
        assert found[name].student == collect.UNKNOWN and found[name].status is Status.NOT_GRADED
        assert "no person can be read" in found[name].reason
    assert not (tmp_path / "submitted" / collect.UNKNOWN).exists() and not (tmp_path / "submitted" / "01").exists()


# --- no phantom students (issue 30 item 3) ----------------------------------------------------------------------


def test_ids_the_grader_made_up_are_known_as_such(tmp_path):
    found = collect_files(
        tmp_path,
        {
            f"ada_{L}.ipynb": notebook("rnn-step"),
            f"José García_{L}.ipynb": notebook("rnn-step"),
            f"smithjohn_1001_5001_{L}.ipynb": notebook("rnn-step"),
            f"smithjohn_1002_5002_{L}.ipynb": notebook("rnn-step"),
        },
    )
    assert collect.invented_ids(found.values()) == {"José-García", "smithjohn-1001", "smithjohn-1002"}


def test_forget_removes_the_ids_a_batch_added_and_keeps_other_lessons_students(tmp_path):
    from nbgrader.api import Gradebook

    from autograde import forget

    runs = tmp_path / "runs" / L
    runs.mkdir(parents=True)
    (runs / "added_students.txt").write_text("01\nLesson01\nbob\n")
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment(L)
        gb.add_assignment("other")
        for student in ("01", "Lesson01", "bob", "ada"):
            gb.add_student(student)
        gb.add_submission(L, "01")
        gb.add_submission("other", "bob")
    course = SimpleNamespace(db_url=url, course_id="default_course", runs=lambda lesson: tmp_path / "runs" / lesson)
    assert forget.forget(course, L) == (["01", "Lesson01"], ["bob"])  # a dry run by default
    assert forget.forget(course, L, apply=True) == (["01", "Lesson01"], ["bob"])
    with Gradebook(url) as gb:
        assert sorted(s.id for s in gb.students) == ["ada", "bob"]
    assert (runs / "added_students.txt").read_text() == "bob\n"
