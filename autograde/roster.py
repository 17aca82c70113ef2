"""The course roster: one file, one format, for the grading command (`--roster`) and the LMS export (lms.py).

    student_id,name,email,lms_id,sis_user_id,sis_login_id,section

One row per student. `student_id` is the nbgrader/JupyterHub id (required); `name` the name the LMS shows (Moodle
and Brightspace put it in download file names, Gradescope in its metadata; Canvas a squashed form that matches no
name); `lms_id` the LMS's own user id (Canvas's numeric user ID, in its download file names; Moodle's number there
is a participant number of one assignment and is never looked up); the SIS columns and `section` are copied into
Canvas's file. Unused columns may be left empty or out. Older rosters' headers are read as the columns they meant
(`ALIASES`). autograde/roster-example.csv is a complete example.
"""

import csv
import re
import unicodedata

from .errors import GradingError

COLUMNS = ("student_id", "name", "email", "lms_id", "sis_user_id", "sis_login_id", "section")
ALIASES = {"student_id": ("student_id", "id", "username"), "name": ("name", "lms_name", "full_name")}
STUDENT_ID = re.compile(r"^[^\W_][\w.@+-]*$")  # letters and digits of any script, then . @ + - too


def read(path):
    """The roster's people: one dict per row with a student id, every column of COLUMNS present ('' if empty)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [{k.strip().lower(): (v or "").strip() for k, v in row.items() if k} for row in csv.DictReader(handle)]
    if not rows or not any(header in rows[0] for header in ALIASES["student_id"]):
        raise GradingError(
            f"{path}: a roster needs a header with at least student_id, e.g.\n"
            f"{','.join(COLUMNS)} (see autograde/roster-example.csv)"
        )
    people = []
    for row in rows:
        person = {column: row.get(column, "") for column in COLUMNS}
        for column, headers in ALIASES.items():
            person[column] = next((row[h] for h in headers if row.get(h)), "")
        if not person["student_id"]:
            continue
        if not STUDENT_ID.match(person["student_id"]):
            raise GradingError(
                f"roster {path}: {person['student_id']!r} is not a valid student id (letters, digits, . @ + -)"
            )
        people.append(person)
    return people


def names(people):
    """{name as `fold` writes it, and "lms:<LMS user id>": student id}: whom a download's file name means. A name two
    people share means nobody: it is kept as "same-name:<name>" -> their ids, for the grader to flag."""
    mapping, ids_of = {}, {}
    for person in people:
        if person["name"]:
            ids_of.setdefault(fold(person["name"]), []).append(person["student_id"])
        if person["lms_id"]:
            mapping[f"lms:{person['lms_id']}"] = person["student_id"]
    for name, ids in ids_of.items():
        if len(ids) == 1:
            mapping[name] = ids[0]
        else:
            mapping[f"same-name:{name}"] = ", ".join(ids)
    return mapping


def fold(name):
    """Case-, accent- and spacing-insensitive form of a name, in any script ('José' and 'jose' match,
    '王伟' stays '王伟')."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
    return " ".join(text.casefold().replace("_", " ").split())
