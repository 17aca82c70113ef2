"""The gradebook: only the grader process writes it, one transaction per student.

Workers grade against a private copy of the lesson's gradebook entries (a small SQLite file, the
`template`), so that nothing a student's notebook does, and nothing a worker does, can touch the
real gradebook; the grader then writes each student's scores in one transaction. A batch starts
with a snapshot of the gradebook (SQLite), and a lesson missing from the gradebook (a fresh clone)
is added from the release itself.
"""

import contextlib
import datetime
import functools
import sqlite3
import tempfile
from pathlib import Path

from .errors import GradingError


def schema_version_in_process():
    """Make nbgrader read its gradebook's schema version (the head of its alembic migrations) in this process.

    For every new gradebook, nbgrader 0.9.6 runs `alembic heads` in a subprocess to learn that constant of the
    installed nbgrader (nbgrader.api.get_alembic_version): about 2.5 CPU-seconds of Python and alembic starting up,
    on every fresh clone's first release or grading run. alembic's own ScriptDirectory reads the same migration
    scripts here. Idempotent; call it before nbgrader makes a gradebook (tests/test_autograde_pins.py checks that
    the answer is the subprocess's and that nbgrader still asks through this function)."""
    import nbgrader.api

    if getattr(nbgrader.api.get_alembic_version, "in_process", False):
        return

    @functools.cache
    def head():
        from alembic.script import ScriptDirectory
        from nbgrader.dbutil import ALEMBIC_DIR

        return ScriptDirectory(ALEMBIC_DIR).get_current_head()

    head.in_process = True
    nbgrader.api.get_alembic_version = head


def waits_for_hand_grade(grade):
    """An nbgrader Grade with no points yet and a person's to give (what autograde leaves for a free answer:
    `commit`). A cell the formgrader flagged for review keeps its automatic points until someone changes them."""
    return bool(grade.needs_manual_grade and grade.manual_score is None and grade.auto_score is None)


def sqlite_path(db_url):
    """The file of a sqlite:/// URL, or None for another database."""
    if db_url.startswith("sqlite:///"):
        return Path(db_url[len("sqlite:///") :])
    return None


def snapshot(course, keep=20):
    """Copy the gradebook to STATE/snapshots/gradebook-<time>.db (SQLite's online backup). Returns the
    path, or a note when the database is not SQLite."""
    path = sqlite_path(course.db_url)
    if path is None:
        return None, "the gradebook is not SQLite: back it up with your database's own tools"
    if not path.exists():
        return None, "no gradebook yet"
    folder = course.state / "snapshots"
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"gradebook-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S-%f')}.db"
    src = sqlite3.connect(str(path))
    try:
        dst = sqlite3.connect(str(dest))
        with dst:
            src.backup(dst)
        dst.close()
    finally:
        src.close()
    for old in sorted(folder.glob("gradebook-*.db"))[:-keep]:
        old.unlink()
    return dest, ""


@contextlib.contextmanager
def transaction(gb):
    """Make nbgrader's Gradebook methods (which commit after every change) share one transaction."""
    session = gb.db
    session.commit = session.flush
    try:
        yield gb
        del session.commit
        session.commit()
    except BaseException:
        if "commit" in vars(session):
            del session.commit
        session.rollback()
        raise


def lesson_in_gradebook(course, lesson, notebooks):
    """'' if the gradebook has the lesson with all its notebooks, else what is missing."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url, course.course_id) as gb:
        try:
            assignment = gb.find_assignment(lesson)
        except MissingEntry:
            return f"lesson {lesson} is not in the gradebook"
        have = {nb.name for nb in assignment.notebooks}
        missing = [nb for nb in notebooks if nb not in have]
        if missing:
            return f"notebook(s) {', '.join(missing)} of {lesson} are not in the gradebook"
        for nb in assignment.notebooks:
            if nb.name in notebooks and not nb.source_cells:
                return f"the gradebook has no cells for {nb.name}"
    return ""


def add_lesson(course, lesson, log=print):
    """Record the lesson in the gradebook from the release: nbgrader generate_assignment runs on
    solutions/<lesson> into a temporary folder (notebooks/ is not touched), and the notebooks it makes
    must equal the committed release, or grading stops before anyone is graded."""
    import nbformat
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="autograde-release-") as tmp:
        config = Config(course.config)
        config.merge(Config({"CourseDirectory": {"release_directory": tmp, "db_url": course.db_url}}))
        with contextlib.chdir(course.root):
            result = NbGraderAPI(config=config).generate_assignment(lesson, force=True)
        if not result["success"]:
            raise GradingError(
                f"could not add {lesson} to the gradebook:\n{result.get('log', '')}{result.get('error', '')}\n"
                f"run `make release` (or `python -m course_dev.release {lesson}`) and try again"
            )
        for path in sorted((Path(tmp) / lesson).glob("*.ipynb")):
            fresh = nbformat.read(str(path), as_version=4)
            committed_path = course.release / lesson / path.name
            committed = nbformat.read(str(committed_path), as_version=4) if committed_path.exists() else None
            same = committed is not None and [
                (c.cell_type, c.source, c.metadata.get("nbgrader")) for c in fresh.cells
            ] == [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in committed.cells]
            if not same:
                raise GradingError(
                    f"{committed_path} is not what {course.source / lesson} releases, so the gradebook "
                    f"cannot be built from it. Run `make release` (or `python -m course_dev.release {lesson}`), "
                    f"check that students received that version, then grade again."
                )
    log(
        f"added {lesson} to the gradebook from the release (nbgrader generate_assignment, checked against "
        f"{course.release / lesson})"
    )


def make_template(course, lesson, dest):
    """A new SQLite gradebook at `dest` holding only the lesson's definition (cells, points, hidden
    tests), copied through nbgrader's API so that any database works as the source."""
    from nbgrader.api import Gradebook

    dest = Path(dest)
    if dest.exists():
        dest.unlink()
    with (
        Gradebook(course.db_url, course.course_id) as src,
        Gradebook(f"sqlite:///{dest}", course.course_id) as dst,
        transaction(dst),
    ):
        a = src.find_assignment(lesson)
        dst.add_assignment(a.name, duedate=a.duedate)
        for nb in a.notebooks:
            dst.add_notebook(nb.name, a.name)
            for c in nb.grade_cells:
                dst.add_grade_cell(c.name, nb.name, a.name, max_score=c.max_score, cell_type=c.cell_type)
            for c in nb.solution_cells:
                dst.add_solution_cell(c.name, nb.name, a.name)
            for c in nb.task_cells:
                dst.add_task_cell(c.name, nb.name, a.name, max_score=c.max_score, cell_type=c.cell_type)
            for c in nb.source_cells:
                dst.add_source_cell(
                    c.name,
                    nb.name,
                    a.name,
                    cell_type=c.cell_type,
                    locked=c.locked,
                    source=c.source,
                    checksum=c.checksum,
                )
    return dest


def read_results(db_path, lesson, student):
    """What a worker's private gradebook says about one student: grades, comments, timestamp, penalties."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db_path}") as gb:
        sub = gb.find_submission(lesson, student)
        out = {"timestamp": sub.timestamp.isoformat() if sub.timestamp else None, "notebooks": {}}
        for nb in sub.notebooks:
            out["notebooks"][nb.name] = {
                "penalty": nb.late_submission_penalty,
                "grades": {g.name: {"auto": g.auto_score, "max": g.max_score} for g in nb.grades},
                "comments": {c.name: c.auto_comment for c in nb.comments},
            }
    return out


def commit(course, lesson, student, results):
    """Write one student's autograded results into the real gradebook in one transaction. Hand-given
    points (manual_score, extra credit, manual comments) are kept, as nbgrader's own autograde does.
    Returns True if the student was not in nbgrader's student list before."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url, course.course_id) as gb, transaction(gb):
        try:
            gb.find_student(student)
            added = False
        except MissingEntry:
            added = True
        gb.update_or_create_student(student)
        kwargs = {"timestamp": results["timestamp"]} if results.get("timestamp") else {}
        gb.update_or_create_submission(lesson, student, **kwargs)
        for nb_name, nb in results["notebooks"].items():
            sub_nb = gb.find_submission_notebook(nb_name, lesson, student)
            sub_nb.late_submission_penalty = nb.get("penalty")
            for name, g in nb["grades"].items():
                grade = gb.find_grade(name, nb_name, lesson, student)
                grade.auto_score = g["auto"]
                grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            for name, text in nb["comments"].items():
                gb.find_comment(name, nb_name, lesson, student).auto_comment = text
    return added


def student_ids(course):
    """nbgrader's student list (formgrader's Manage Students, `nbgrader db student import`, the hub's class)."""
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, course.course_id) as gb:
        return {student.id for student in gb.students}


def submissions(course, lesson, students):
    """(student, nbgrader's submission) of each student in `students` who has one in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url, course.course_id) as gb:
        for student in students:
            try:
                yield student, gb.find_submission(lesson, student)
            except MissingEntry:
                continue


def read_scores(course, lesson, students):
    """{student: {grade cell: (score or None if waiting for a human, max)}} and a fingerprint per
    student of everything feedback shows (to know when a page must be made again)."""
    import hashlib

    scores, prints = {}, {}
    for student, sub in submissions(course, lesson, students):
        cells, h = {}, hashlib.sha256()
        for nb in sub.notebooks:
            for g in nb.grades:
                cells[g.name] = (None if waits_for_hand_grade(g) else float(g.score), float(g.max_score))
                h.update(repr((g.name, g.auto_score, g.manual_score, g.extra_credit)).encode())
            for c in nb.comments:
                h.update(repr((c.name, c.auto_comment, c.manual_comment)).encode())
        scores[student] = cells
        prints[student] = h.hexdigest()
    return scores, prints


def read_manual(course, lesson, students):
    """Hand-given points and comments already in the gradebook: {student: {notebook: {...}}}."""
    out = {}
    for student, sub in submissions(course, lesson, students):
        nbs = {}
        for nb in sub.notebooks:
            grades = {
                g.name: [g.manual_score, g.extra_credit]
                for g in nb.grades
                if g.manual_score is not None or g.extra_credit is not None
            }
            comments = {c.name: c.manual_comment for c in nb.comments if c.manual_comment}
            if grades or comments:
                nbs[nb.name] = {"grades": grades, "comments": comments}
        if nbs:
            out[student] = nbs
    return out


def apply_manual(db_path, lesson, student, manual):
    """Put hand-given points into a worker's private gradebook, so its feedback page shows them."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db_path}") as gb, transaction(gb):
        for nb_name, nb in manual.items():
            for name, (score, extra) in nb.get("grades", {}).items():
                grade = gb.find_grade(name, nb_name, lesson, student)
                grade.manual_score, grade.extra_credit = score, extra
                grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            for name, text in nb.get("comments", {}).items():
                gb.find_comment(name, nb_name, lesson, student).manual_comment = text
