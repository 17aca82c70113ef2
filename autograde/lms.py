"""Grades an LMS accepts: a Canvas gradebook CSV and a Moodle grade-import CSV, from the nbgrader gradebook, as
nbgrader export plugins (nbgrader's ExportPlugin interface):

    make lms LMS=canvas ROSTER=roster.csv            (writes grading/canvas.csv)
    nbgrader export --exporter=autograde.lms.CanvasExportPlugin --LmsExportPlugin.roster=roster.csv --to=out.csv
    nbgrader export --exporter=autograde.lms.MoodleExportPlugin --LmsExportPlugin.roster=roster.csv --to=out.csv
    python -m autograde.lms canvas roster.csv canvas_grades.csv [--db-url URL] [--root COURSE]   (the same)

The roster is the course's one roster, the same file as the grading command's `--roster` (roster.py,
autograde/roster-example.csv): student_id,name,email,lms_id,sis_user_id,sis_login_id,section.
Points are autograded plus hand-given points of each lesson's latest graded submission; a lesson a student
did not submit, or that was collected and not graded yet, counts 0 and is reported by lesson.
"""

import argparse
import csv
import sys
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

from . import roster
from .cli import console
from .course import Course, default_root
from .errors import GradingError
from .gradebook import waits_for_hand_grade
from .report import safe_cell

# Canvas: the first five columns of its gradebook export/import, then one column per assignment (the
# lesson id); the second row gives each assignment's points possible (the identity columns are left empty there).
CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_TOTAL = "Final Score"  # a read-only column: Canvas shows it and ignores it on import
# Moodle: the identity columns of its own CSV export (map "Email address" or "ID number" when importing),
# then one column per grade item, named like Moodle's export ("<item> (Real)").
MOODLE_ID_COLUMNS = ["First name", "Last name", "ID number", "Email address"]
MOODLE_TOTAL = "Course total (Real)"
HAND = "the free answer (its points count 0 until graded by hand)"  # a hand grade not given yet


def points_in(gb, lessons=None):
    """({lesson: max points}, {(student, lesson): points}) from an open nbgrader Gradebook, lessons in course
    order."""
    names = sorted(lessons or [a.name for a in gb.assignments])
    maximum = {name: gb.find_assignment(name).max_score for name in names}
    points = {}
    for name in names:
        for student in gb.students:
            try:
                points[student.id, name] = gb.find_submission(name, student.id).score
            except MissingEntry:
                pass
    return maximum, points


def pending_in(gb, lessons=None):
    """{(student, lesson)} whose submission has an answer waiting for a hand grade (the free answer): it counts 0
    in an export until someone grades it."""
    names = sorted(lessons or [a.name for a in gb.assignments])
    waiting = set()
    for name in names:
        for submission in gb.find_assignment(name).submissions:
            notebooks = submission.notebooks
            if any(waits_for_hand_grade(g) for nb in notebooks for g in nb.grades):
                waiting.add((submission.student.id, name))
    return waiting


def _score(points, student, lesson):
    return round(points.get((student, lesson), 0.0), 2)


def canvas_rows(people, maximum, points):
    header = CANVAS_ID_COLUMNS + list(maximum) + [CANVAS_TOTAL]
    rows = [header, ["Points Possible", "", "", "", ""] + [f"{m:g}" for m in maximum.values()] + [""]]
    for person in people:
        scores = [_score(points, person["student_id"], n) for n in maximum]
        rows.append(
            [
                person.get("name", ""),
                person.get("lms_id", ""),
                person.get("sis_user_id", ""),
                person.get("sis_login_id", ""),
                person.get("section", ""),
            ]
            + [f"{s:g}" for s in scores]
            + [f"{sum(scores):g}"]
        )
    return rows


def moodle_rows(people, maximum, points):
    header = MOODLE_ID_COLUMNS + [f"{n} (Real)" for n in maximum] + [MOODLE_TOTAL]
    rows = [header]
    for person in people:
        first, _, last = person.get("name", "").partition(" ")
        scores = [_score(points, person["student_id"], n) for n in maximum]
        rows.append(
            [first, last, person["student_id"], person.get("email", "")]
            + [f"{s:.2f}" for s in scores]
            + [f"{sum(scores):.2f}"]
        )
    return rows


def export(kind, roster_path, out_path, db_url, submitted=None):
    """Write the CSV; return what was counted 0: {lesson: {"no submission" or "collected, not graded yet": [ids]}}
    (collected = in the course's `submitted` folder, nbgrader's collect step, without a grade in the gradebook)."""
    with Gradebook(db_url) as gb:
        return write(kind, roster.read(roster_path), points_in(gb), out_path, submitted, pending_in(gb))


def write(kind, people, lesson_points, out_path, submitted=None, pending=()):
    """export's CSV from the roster's rows and (maximum, points) of the gradebook; returns what was counted 0
    (`pending`: the (student, lesson) pairs whose free answer waits for a hand grade)."""
    maximum, points = lesson_points
    rows = (canvas_rows if kind == "canvas" else moodle_rows)(people, maximum, points)
    with open(out_path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([safe_cell(cell) for cell in row] for row in rows)
    gaps = {}
    for lesson in maximum:
        for student in sorted(p["student_id"] for p in people if (p["student_id"], lesson) not in points):
            collected = submitted is not None and (Path(submitted) / student / lesson).is_dir()
            why = "collected, not graded yet" if collected else "no submission"
            gaps.setdefault(lesson, {}).setdefault(why, []).append(student)
        for student in sorted(p["student_id"] for p in people if (p["student_id"], lesson) in pending):
            gaps.setdefault(lesson, {}).setdefault(HAND, []).append(student)
    return gaps


def describe_gaps(gaps):
    """One line per lesson with a student counted 0, in the instructor's terms, and what to do about it."""
    lines = []
    for lesson, kinds in gaps.items():
        for why, students in kinds.items():
            line = f"  {lesson}: {why} from {', '.join(students)}"
            if why == HAND:
                line += " (grade it in the formgrader's Manual Grading, then make lms again)"
            elif why != "no submission":
                line += f" (grade it: make grade LESSON={lesson} SUBMISSIONS=exchange, then make lms again)"
            lines.append(line)
    return "\n".join(["counted 0:", *lines]) if lines else ""


class LmsExportPlugin(ExportPlugin):
    """An nbgrader export plugin for an LMS's grade import (`nbgrader export --exporter=autograde.lms.<Kind>...`):
    one row per person of the roster (`--LmsExportPlugin.roster`), points per lesson (those of `--assignment`, by
    default all) and a total, to `--to` (default: <kind>.csv). It says what was counted 0, as `make lms` does."""

    KIND = ""
    roster = Unicode("roster.csv", help="the course's roster (autograde/roster-example.csv)").tag(config=True)

    def export(self, gradebook):
        out = self.to or f"{self.KIND}.csv"
        try:
            people = roster.read(self.roster)
        except (GradingError, OSError) as err:  # the message, not a traceback, and a failing exit status
            self.log.error("the roster %s: %s", self.roster, err)
            self.parent.exit(1)
        if self.student:
            people = [p for p in people if p["student_id"] in {str(s) for s in self.student}]
        lessons = [str(a) for a in self.assignment]
        gaps = write(
            self.KIND, people, points_in(gradebook, lessons), out, self._submitted(), pending_in(gradebook, lessons)
        )
        print(f"wrote {out} ({self.KIND})")
        if gaps:
            print(describe_gaps(gaps))

    def _submitted(self):
        """The course's submitted folder (nbgrader's collect step), to tell collected from missing."""
        coursedir = getattr(self.parent, "coursedir", None)
        return Course(coursedir.root if coursedir is not None else None).submitted


class CanvasExportPlugin(LmsExportPlugin):
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, a column per lesson."""

    KIND = "canvas"


class MoodleExportPlugin(LmsExportPlugin):
    """Moodle's grade import: First name, Last name, ID number, Email address, `<lesson> (Real)` per lesson."""

    KIND = "moodle"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["canvas", "moodle"])
    parser.add_argument("roster")
    parser.add_argument("out")
    parser.add_argument("--db-url", help="the gradebook (default: the course's, from nbgrader_config.py)")
    parser.add_argument(
        "--root", default=str(default_root()), help="course root (default: the current folder if it is a course)"
    )
    args = parser.parse_args(argv)
    course = Course(args.root)
    gaps = export(args.kind, args.roster, args.out, args.db_url or course.db_url, course.submitted)
    print(f"wrote {args.out} ({args.kind})")
    if gaps:
        print(describe_gaps(gaps))


if __name__ == "__main__":
    sys.exit(console(main))
