"""Remove from nbgrader's student list the ids a lesson's batches added there, for example ids read from
misnamed files before the roster was fixed (one command, run from the course root):

    python -m autograde.forget LESSON              # lists what it would remove
    python -m autograde.forget LESSON --yes        # removes them

The ids are those in grading/runs/<lesson>/added_students.txt (written by the grading command when it adds a
student). A student who has a submission of another lesson is kept and named; run the grading command again
afterwards to refresh grades.csv.
"""

import argparse
import sys

from .course import Course


def forget(course, lesson, apply=False):
    """(removed, kept): the ids added by the lesson's batches that are removed, and those kept (other lessons)."""
    from nbgrader.api import Gradebook, MissingEntry

    listing = course.runs(lesson) / "added_students.txt"
    ids = sorted(set(listing.read_text(encoding="utf-8").split())) if listing.exists() else []
    removed, kept = [], []
    with Gradebook(course.db_url, course.course_id) as gb:
        for student in ids:
            try:
                subs = {s.assignment.name for s in gb.find_student(student).submissions}
            except MissingEntry:
                continue
            if subs - {lesson}:
                kept.append(student)
                continue
            if apply:
                gb.remove_student(student)
            removed.append(student)
    if apply:
        listing.write_text("".join(f"{s}\n" for s in kept), encoding="utf-8")
    return removed, kept


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograde.forget", description=__doc__.split("\n\n")[0])
    parser.add_argument("lesson")
    parser.add_argument("--yes", action="store_true", help="remove them (without it: only list them)")
    parser.add_argument("--root", default=".")
    args = parser.parse_args(argv)
    removed, kept = forget(Course(args.root), args.lesson, args.yes)
    verb = "removed" if args.yes else "would remove (add --yes)"
    print(f"{verb}: {' '.join(removed) or 'nobody'}")
    if kept:
        print(f"kept (they have submissions of other lessons): {' '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
