"""Step 1, collect: LMS downloads (or an nbgrader exchange) -> STATE/submitted/<student>/<lesson>/.

Every submitted file becomes one `Entry` (one row of grades.csv). A file name is read as
`<student>_<anything>_<lesson>.ipynb` (nbgrader's zip_collect naming); a name that is not a valid
student id (spaces, accents, ...) is mapped through the roster (--roster) or, failing that, turned
into a readable id and flagged, so that nobody silently disappears from the grades.
"""

import csv
import re
import subprocess
import sys
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .course import nbgrader_env

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.@+-]*$")
ATTEMPT = re.compile(r"(\d{4}-\d{2}-\d{2}[-_ T]\d{2}[-:]\d{2}[-:]\d{2})")


@dataclass
class Entry:
    """One submitted file and what became of it."""

    file: str  # as downloaded (or submitted/<student>/<lesson>/<name> for an exchange)
    student: str  # the id it is graded under
    target: str = ""  # the released notebook it is graded as ('' for a data file)
    status: str = ""  # set for files that are not graded themselves (superseded, extra file)
    notes: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    order: tuple = ()  # (attempt time, name): the latest file of a student wins
    own_name: str = ""  # the file's name without the student and attempt parts (notes.txt)


def read_roster(path):
    """{LMS name (case- and accent-insensitive): student id} from a CSV with columns name,id
    (also accepted: name/lms_name/full_name and id/student_id/username)."""
    mapping = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
        name = next((row[k] for k in ("name", "lms_name", "full_name") if row.get(k)), "")
        sid = next((row[k] for k in ("id", "student_id", "username") if row.get(k)), "")
        if not name or not sid:
            continue
        if not STUDENT_ID.match(sid):
            raise SystemExit(f"roster {path}: {sid!r} is not a valid student id (letters, digits, . @ + -)")
        mapping[fold(name)] = sid
    return mapping


def fold(name):
    """Case-, accent- and spacing-insensitive form of a name."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(text.lower().replace("_", " ").split())


def derive_id(name):
    """A valid student id made from an unreadable name: 'José García' -> 'Jose-Garcia'."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    sid = re.sub(r"[^A-Za-z0-9.@+-]+", "-", text).strip("-.@+")
    return sid or "unnamed"


def student_of(name, roster):
    """(student id, flag or None) for the name part of a file name."""
    if roster and fold(name) in roster:
        return roster[fold(name)], None
    if STUDENT_ID.match(name):
        if roster is not None and roster and name not in roster.values():
            return name, f"{name!r} is not in the roster"
        return name, None
    sid = derive_id(name)
    return sid, f"student id read from the file name {name!r} as {sid!r}: check it (or map it with --roster)"


def _downloads(folder):
    """(name, bytes) of every file in the LMS folder (or its archive/), zips unpacked."""
    base = folder / "archive" if (folder / "archive").is_dir() else folder
    out = []
    for path in sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")):
        rel = str(path.relative_to(base))
        if path.suffix == ".zip":  # an LMS may zip a student's files
            try:
                with zipfile.ZipFile(path) as zf:
                    for info in zf.infolist():
                        if not info.is_dir() and not Path(info.filename).name.startswith("."):
                            out.append((f"{path.stem}_{Path(info.filename).name}", zf.read(info), rel))
                continue
            except zipfile.BadZipFile:
                pass
        out.append((path.name, path.read_bytes(), rel))
    return out


def parse_name(name, notebooks, roster):
    """Entry for a file called `name` (no content)."""
    name = unicodedata.normalize("NFC", name)
    who, rest = (name.split("_", 1) + [""])[:2] if "_" in name else (Path(name).stem, name)
    student, flag = student_of(who, roster)
    target = next((f"{nb}.ipynb" for nb in notebooks if rest == f"{nb}.ipynb" or rest.endswith(f"_{nb}.ipynb")), "")
    if not target and name.endswith(".ipynb"):
        target = "?"  # a notebook under another name: decided per student
    stamp = ATTEMPT.search(rest)
    own = re.sub(r"^attempt_[^_]*(_|$)", "", rest) or rest
    entry = Entry(
        file=name, student=student, target=target, order=(stamp.group(1) if stamp else "", name), own_name=own
    )
    if flag:
        entry.flags.append(flag)
    return entry


def collect_folder(course, lesson, folder, roster=None):
    """Copy LMS downloads into submitted/<student>/<lesson>/; returns the entries, one per file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SystemExit(f"no such folder: {folder}")
    notebooks = course.notebooks(lesson)
    entries, content = [], {}
    for name, data, rel in _downloads(folder):
        entry = parse_name(name, notebooks, roster)
        entry.file = rel if rel.endswith(name) else f"{rel}:{name}"
        entries.append(entry)
        content[id(entry)] = data
    by_student = {}
    for entry in entries:
        by_student.setdefault(entry.student, []).append(entry)
    for student, mine in by_student.items():
        dest = course.submitted / student / lesson
        dest.mkdir(parents=True, exist_ok=True)
        nbs = sorted((e for e in mine if e.target), key=lambda e: e.order)
        chosen = {}
        for entry in nbs:  # the latest file for each notebook wins
            target = entry.target
            if target == "?":
                if len(notebooks) == 1:
                    target = f"{notebooks[0]}.ipynb"
                    entry.notes.append(f"notebook named {entry.file!r}: graded as {target}")
                else:
                    entry.status = "not graded (a notebook under another name; rename it to one of the lesson's)"
                    continue
            entry.target = target
            if target in chosen:
                old = chosen[target]
                old.status = f"superseded (a later file of {student} was graded: {entry.file})"
                entry.notes.append(f"resubmission: replaces {old.file}")
            chosen[target] = entry
        for target, entry in chosen.items():
            _write(dest / target, content[id(entry)])
        for entry in mine:
            if not entry.target:
                entry.status = (
                    "extra file (copied beside the notebook)" if chosen else ""
                )  # no notebook: the student's failure shows on this row
                if not entry.file.endswith(".ipynb") and entry.own_name not in ("timestamp.txt", ""):
                    _write(dest / Path(entry.own_name).name, content[id(entry)])
        stamps = [e.order[0] for e in chosen.values() if e.order[0]]
        if stamps:
            _write(dest / "timestamp.txt", _timestamp(max(stamps)).encode())
    return entries


def _timestamp(text):
    digits = re.findall(r"\d+", text)
    return "{}-{}-{} {}:{}:{}".format(*digits[:6])


def _write(path, data):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def collect_exchange(course, lesson):
    """`nbgrader collect LESSON --update`, then one entry per collected student."""
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", lesson, "--update"],
        cwd=course.root,
        env=nbgrader_env(),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0 or "[CollectApp | ERROR]" in result.stderr:
        raise SystemExit(f"nbgrader collect {lesson} failed:\n{result.stderr[-3000:]}")
    return existing(course, lesson)


def existing(course, lesson):
    """One entry per student folder already in submitted/ (exchange mode)."""
    entries = []
    for folder in sorted(course.submitted.glob(f"*/{lesson}")):
        if folder.is_dir():
            student = folder.parent.name
            entry = Entry(file=f"{student}/{lesson}", student=student, target="*")
            if not STUDENT_ID.match(student):
                entry.flags.append(f"the folder name {student!r} is not a valid student id")
            entries.append(entry)
    return entries
