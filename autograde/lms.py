"""Grades an LMS accepts: a Canvas gradebook CSV and a Moodle grade-import CSV, from the nbgrader gradebook.

    make lms LMS=canvas ROSTER=roster.csv            (writes grading/canvas.csv)
    python -m autograde.lms canvas roster.csv canvas_grades.csv [--db-url URL] [--root COURSE]
    python -m autograde.lms moodle roster.csv moodle_grades.csv

The roster is the course's one roster, the same file as the grading command's `--roster` (roster.py,
autograde/roster-example.csv): student_id,name,email,lms_id,sis_user_id,sis_login_id,section.
Points are autograded plus hand-given points of each lesson's latest graded submission; a lesson a student
did not submit counts 0 and is reported.
"""

import argparse
import csv
import sys

from nbgrader.api import Gradebook, MissingEntry

from . import roster
from .cli import console
from .course import Course, default_root
from .report import safe_cell

# Canvas: the first five columns of its gradebook export/import, then one column per assignment (the
# lesson id); the second row gives each assignment's points possible (the identity columns are left empty there).
CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_TOTAL = "Final Score"  # a read-only column: Canvas shows it and ignores it on import
# Moodle: the identity columns of its own CSV export (map "Email address" or "ID number" when importing),
# then one column per grade item, named like Moodle's export ("<item> (Real)").
MOODLE_ID_COLUMNS = ["First name", "Last name", "ID number", "Email address"]
MOODLE_TOTAL = "Course total (Real)"


def lesson_points(db_url, lessons=None):
    """({lesson: max points}, {(student, lesson): points}) from the gradebook, lessons in course order."""
    with Gradebook(db_url) as gb:
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


def export(kind, roster_path, out_path, db_url):
    """Write the CSV; return the students of the roster with no submission of some lesson."""
    people = roster.read(roster_path)
    maximum, points = lesson_points(db_url)
    rows = (canvas_rows if kind == "canvas" else moodle_rows)(people, maximum, points)
    with open(out_path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([safe_cell(cell) for cell in row] for row in rows)
    return sorted({p["student_id"] for p in people for n in maximum if (p["student_id"], n) not in points})


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
    db_url = args.db_url or Course(args.root).db_url
    missing = export(args.kind, args.roster, args.out, db_url)
    print(
        f"wrote {args.out} ({args.kind})"
        + (f"; no submission of some lesson (counted 0): {', '.join(missing)}" if missing else "")
    )


if __name__ == "__main__":
    sys.exit(console(main))
