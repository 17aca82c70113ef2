"""Step 1, collect: LMS downloads (or an nbgrader exchange) -> STATE/submitted/<student>/<lesson>/.

Every file under SUBMISSIONS becomes one `Entry` (one row of grades.csv), whatever it is: a notebook
of this lesson, a resubmission, a notebook of another lesson, a hidden file, a link, a data file.
File names are read as Canvas (`<name>_<userid>_<submissionid>_<file>`), Moodle
(`<name>_<id>_assignsubmission_file_<file>`) or nbgrader's zip_collect (`<student>_<anything>_<file>`)
downloads. Names are kept as written (Unicode, NFC); one that is not a valid student id is mapped
through the roster (--roster, roster.py) or turned into a readable id and flagged, two people never share an id
(the LMS's own id tells same-name students apart, and they are flagged), and nobody silently
disappears from the grades. A notebook is graded as the lesson only if it is that lesson: by its
name, and by its graded cells' ids against the release.
"""

import os
import re
import subprocess
import sys
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .course import nbgrader_env
from .errors import GradingError
from .messages import Status
from .roster import STUDENT_ID, fold

ATTEMPT = re.compile(r"(\d{4})-(\d{2})-(\d{2})[-_ T](\d{2})[-:.](\d{2})[-:.](\d{2})")
CANVAS = re.compile(r"^(?P<name>[^_]+)(?:_LATE)?_(?P<lms>\d+)_(?P<submission>\d+)_(?P<rest>.+)$")
# Canvas with anonymous grading: `[LATE_]anon_<anonymous id>_<attachment id>_<file>` (no name, no user id)
CANVAS_ANONYMOUS = re.compile(r"^(?:LATE_)?(?P<name>anon_[0-9A-Za-z]+)_(?P<submission>\d+)_(?P<rest>.+)$")
MOODLE = re.compile(r"^(?P<name>[^_]+)_(?P<lms>\d+)_assignsubmission_(?:file|onlinetext)_(?P<rest>.*)$")
# Moodle's "in folders" (Moodle 4.1 and later leave out the trailing `_` of 3.x)
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_]+)_(?P<lms>\d+)_assignsubmission_(?:file|onlinetext)_?$")
# Brightspace/D2L: `<id>-<user id> - <First Last> - <date> - <file>`
D2L = re.compile(r"^(?P<submission>\d+)-(?P<lms>\d+) - (?P<name>.+?) - (?P<date>.+?) - (?P<rest>.+)$")
D2L_FOLDER = re.compile(r"^(?P<submission>\d+)-(?P<lms>\d+) - (?P<name>.+?) - (?P<date>.+)$")  # a folder per submission
D2L_DATES = ("%b %d, %Y %I:%M %p", "%B %d, %Y %I:%M %p", "%d %B, %Y %I:%M %p", "%d %b, %Y %I:%M %p")
# D2L writes the time without a colon and the hour without a leading zero (`926 PM`, `1022 AM`): the last two
# digits are the minutes
D2L_TIME = re.compile(r"\b(\d{1,2}):?(\d{2})(\s*[AP]M)\b")
# Blackboard (nbgrader's ZipCollect convention): `<assignment>_<username>_attempt_<date>_<file>`
BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<name>[^_]+)_attempt_(?P<rest>.*)$")  # the first _attempt_
# nbgrader's exchange inbound folder: `<student>+<assignment>+<timestamp>[+<random>]`
EXCHANGE = re.compile(r"^(?P<name>[^+]+)\+(?P<assignment>[^+]+)\+(?P<date>[^+]+)(?:\+[^+]*)?$")
GRADESCOPE = re.compile(r"^submission_(?P<submission>\d+)$")  # a folder of Gradescope's export
GRADESCOPE_METADATA = "submission_metadata.yml"
UNKNOWN = "(unknown)"  # the student column of a file no person can be read from: never an id
MAX_FILE = 64 * 1024 * 1024  # larger files are listed, not read


@dataclass
class Entry:
    """One submitted file and what became of it."""

    file: str  # as downloaded (or submitted/<student>/<lesson>/<name> for an exchange)
    student: str  # the id it is graded under
    target: str = ""  # the released notebook it is graded as ('' for a data file)
    status: Status | None = None  # set for files that are not graded themselves (superseded, extra file)
    reason: str = ""  # why (the `reason` column)
    notes: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    order: tuple = ()  # (attempt time, LMS number, name): the latest file of a student wins
    when: datetime | None = None  # the attempt's time, when the download gives one
    number: int | None = None  # the LMS's number of the upload (Canvas's attachment id), when it gives one
    own_name: str = ""  # the file's name without the student and attempt parts (notes.txt)
    name: str = ""  # the person's name as the file gives it (NFC)
    lms_id: str = ""  # the LMS's own user id, when the file name has one (Canvas, Moodle)


def derive_id(name):
    """A valid student id made from a name that is not one: letters of every script are kept, spaces and
    ASCII punctuation become '-' ('José García' -> 'José-García'), other signs become their code point
    ('🙂' -> 'u1f642'), so that different names do not become one id."""
    parts = []
    for ch in unicodedata.normalize("NFC", name).strip():
        if re.fullmatch(r"[\w.@+-]", ch) and ch != "_":
            parts.append(ch)
        elif ch.isspace() or ch.isascii():
            parts.append("-")
        else:
            parts.append(f"-u{ord(ch):x}-")
    sid = re.sub(r"-{2,}", "-", "".join(parts)).strip("-.@+")
    return sid or "unnamed"


def student_of(name, roster, lms_id=""):
    """(student id, flag or None) for the name part of a file name; `lms_id`: the LMS's user id the name came with,
    as the roster's lms_id holds it (Canvas's, D2L's), or '' (read_person: Moodle's number is a participant number
    that mod/assign makes per assignment and person, Gradescope's a school's student id)."""
    if roster and lms_id and f"lms:{lms_id}" in roster:
        return roster[f"lms:{lms_id}"], None
    if roster and f"same-name:{fold(name)}" in roster:
        sid, ids = derive_id(name), roster[f"same-name:{fold(name)}"]
        return sid, f"the roster has several people named {name!r} ({ids}): graded as {sid!r}; map it by hand"
    if roster and fold(name) in roster:
        return roster[fold(name)], None
    if STUDENT_ID.match(name):
        if roster is not None and roster and name not in roster.values():
            return name, f"{name!r} is not in the roster"
        return name, None
    sid = derive_id(name)
    return sid, f"student id read from the file name {name!r} as {sid!r}: check it (or map it with --roster)"


@dataclass
class Download:
    """One file under SUBMISSIONS (or in a zip there)."""

    rel: str  # what the `file` column shows
    name: str  # the name that is parsed (a zip member's: _member_name)
    data: bytes | None = None  # None: not read
    status: Status | None = None  # NOT_GRADED if it is not read
    reason: str = ""  # why not
    folders: tuple = ()  # the folders it is in (in the download, or in its zip): some LMSs name the person there
    flag: str = ""  # a doubt about whose it is, for the instructor


HIDDEN = "a hidden file: its name starts with '.'"


def _not_read(path, rel, archive):
    """Why a file is listed but not read, or ''."""
    if path.is_symlink():
        return "a symbolic link"
    if archive is not None and archive not in path.parents:
        return "outside archive/: when SUBMISSIONS has an archive/ folder, only it is read"
    if any(part.startswith(".") for part in Path(rel).parts):
        return HIDDEN
    if path.stat().st_size > MAX_FILE:
        return f"too large: {path.stat().st_size / 2**20:.0f} MiB"
    return ""


def names_a_person(name):
    """Whether a file name carries its person the way an LMS writes one (an LMS's own zip of the class keeps such
    names: the zip's name is put before a member's name only when the member names nobody)."""
    return name_format(name) is not None or "_attempt_" in name


def _member_name(zip_path, member, outer):
    """(name to read, folders) of a file in a zip that sits in the download's folders `outer`. A zip whose own name
    names a person (a student's upload, as the LMS named it) gives that person to each file in it: `<zip name>_<file
    name>`, the folders inside ignored (the student named them). Any other zip (the LMS's own download of the class)
    stands for the folder it was zipped from: its folders and file names say whose each file is, and a bare file
    at its top gets the zip's name."""
    inner = Path(member).parts[:-1]
    if names_a_person(zip_path.name):
        return f"{zip_path.stem}_{Path(member).name}", tuple(outer)
    if inner or names_a_person(member):
        return Path(member).name, tuple(outer) + inner
    return f"{zip_path.stem}_{member}", tuple(outer)


def _member_flag(zip_path, member):
    """A doubt to show when a zip read as one student's holds a file named as an LMS names someone's: a class zip
    renamed like a student's file, or a student's try at handing in as someone else."""
    if names_a_person(zip_path.name) and names_a_person(Path(member).name):
        return f"in {zip_path.name!r}, read as its uploader's, a file named like another download: {member!r}"
    return ""


def _zip_members(path, rel, budget=512 * 1024 * 1024):
    """The files in a zip, each a Download (hidden and oversized members listed, not read)."""
    try:
        with zipfile.ZipFile(path) as zf:
            out = []
            for info in zf.infolist():
                if info.is_dir():
                    continue
                member = unicodedata.normalize("NFC", info.filename)
                name, folders = _member_name(path, member, Path(rel).parts[:-1])
                download = Download(f"{rel}:{member}", name, folders=folders, flag=_member_flag(path, member))
                if any(part.startswith(".") for part in Path(member).parts):
                    download.status, download.reason = Status.NOT_GRADED, HIDDEN
                elif info.file_size > MAX_FILE or info.file_size > budget:
                    download.status = Status.NOT_GRADED
                    download.reason = f"too large: {info.file_size / 2**20:.0f} MiB unpacked"
                else:
                    download.data = zf.read(info)
                    budget -= len(download.data)
                out.append(download)
            return out
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError):
        return None


def downloads(folder):
    """Every file under the LMS folder, each a Download: zips unpacked, nothing left out (hidden files,
    links, files outside archive/ and oversized files are listed with the reason they are not read)."""
    folder = Path(folder)
    archive = folder / "archive" if (folder / "archive").is_dir() else None
    out = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files) + sorted(d for d in dirs if (Path(top) / d).is_symlink()):
            path = Path(top) / name
            base = archive if archive is not None and archive in path.parents else folder
            rel = unicodedata.normalize("NFC", str(path.relative_to(base)))
            why = _not_read(path, rel, archive)
            if not why and path.suffix.lower() == ".zip":
                members = _zip_members(path, rel)
                if members is not None:
                    out += members
                    continue
                why = "a damaged zip file"
            data = None if why else path.read_bytes()
            status = Status.NOT_GRADED if why else None
            out.append(Download(rel, unicodedata.normalize("NFC", path.name), data, status, why, Path(rel).parts[:-1]))
    return out


def notebook_named(rest, lessons):
    """(lesson, notebook) whose notebook name appears in the file name `rest`, this lesson's first."""
    for lesson, notebooks in lessons.items():
        for nb in notebooks:
            if re.search(rf"(?:^|[^A-Za-z0-9]){re.escape(nb)}(?:$|[^A-Za-z0-9])", rest):
                return lesson, nb
    return None, None


def stamp(text):
    """The first date and time in a text, as a datetime whatever its separators (`2026-11-20T08-00-00`,
    `2026-11-20-09-00-00`, `2026-11-20 08:00:00.000 UTC`, D2L's `Nov 20, 2026 1015 AM`), or None."""
    found = ATTEMPT.search(text or "")
    if found:
        try:
            return datetime(*map(int, found.groups()))
        except ValueError:
            return None
    text = D2L_TIME.sub(r"\1:\2\3", (text or "").strip())
    for pattern in D2L_DATES:
        try:
            return datetime.strptime(text, pattern)
        except ValueError:
            pass
    return None


def folder_person(folders, lessons, gradescope):
    """(name, LMS id, time, user id) of the person a download's folders name, or None: Moodle's "in folders"
    (`Ada Lovelace_2001_assignsubmission_file_/`), Brightspace's folder per submission, nbgrader's exchange
    (`ada+lesson+time/`, or `ada/<lesson>/`), Gradescope's export (`submission_<id>/`, the person from its metadata
    file). The outermost folder that names someone counts: the LMS made it, while a folder inside it is the
    student's own, named as they like. The user id is what the roster's lms_id may hold: D2L's; not Moodle's
    participant number, nor Gradescope's student id."""
    folders = [f for f in folders if f and f != "archive"]
    if len(folders) == 2 and folders[-1] in lessons:  # nbgrader's `<student>/<lesson>/`, nothing around it
        return folders[0], "", None, ""
    for folder in folders:
        for pattern in (MOODLE_FOLDER, D2L_FOLDER, EXCHANGE):
            found = pattern.match(folder)
            if found:
                fields = found.groupdict()
                when = stamp(fields["date"]) if fields.get("date") else None
                return found["name"], fields.get("lms", ""), when, fields["lms"] if pattern is D2L_FOLDER else ""
        if GRADESCOPE.match(folder):
            return (*gradescope.get(folder, ("", "", None)), "")
    return None


def name_format(name):
    """The LMS pattern a download's own name is read with, or None (Blackboard's, or `<student>_<file>`). Only the
    LMS's own prefix names the person: the rest is the file name the student chose. A name that fits Canvas's
    pattern with `attempt_<date>` right after its numbers is Blackboard's (`Homework_1_20231234_attempt_…`: the
    assignment `Homework_1`, the user name `20231234`)."""
    pattern = next((p for p in (D2L, CANVAS_ANONYMOUS, CANVAS, MOODLE) if p.match(name)), None)
    leftover = pattern.match(name)["rest"] if pattern else ""
    if pattern is CANVAS and leftover.startswith("attempt_") and ATTEMPT.match(leftover[len("attempt_") :]):
        return None  # Blackboard's: only its own `attempt_<date>` right after the numbers, never the student's text
    return pattern


def read_person(name, folders, lessons, gradescope):
    """(who, rest of the name, LMS id, time, LMS number, user id) of one download, in the formats of the LMSs. The
    LMS id tells two people of one name apart; the user id is the one the roster's lms_id may hold (Canvas's, D2L's),
    '' where the LMS's number is not a user's id (Moodle's participant number, Canvas's anonymous id)."""
    person = folder_person(folders, lessons, gradescope)
    if person is not None:
        return person[0], name, person[1], person[2], None, person[3]
    pattern = name_format(name)
    if pattern is not None:
        found = pattern.match(name)
        fields = found.groupdict()
        number = int(found["submission"]) if pattern in (CANVAS, CANVAS_ANONYMOUS) else None  # attachment id
        canvas = pattern in (CANVAS, CANVAS_ANONYMOUS)  # ordered by its upload number, not the student's file name
        when = stamp(fields["date"]) if "date" in fields else None if canvas else stamp(found["rest"])
        lms = fields.get("lms") or ""
        anonymous = pattern is CANVAS_ANONYMOUS  # `anon_<id>` becomes the id `anon-<id>`
        who = found["name"].replace("_", "-") if anonymous else found["name"]
        return who, found["rest"], lms, when, number, "" if pattern is MOODLE else lms
    found = BLACKBOARD.match(name)
    if found:
        return found["name"], found["rest"], "", stamp(found["rest"]), None, ""
    who, rest = name.split("_", 1) if "_" in name else (Path(name).stem, name)
    return who, rest, "", stamp(rest), None, ""


def other_readings(name, who):
    """The user names a file name can also be read as, longest first, when the LMS's separator `_` may be in a user
    name too: Blackboard's `<assignment>_<user name>_attempt_…` (`Lesson 1_ada_l_attempt_…`: 'ada_l' or 'l'), and
    `<student>_<file>` ('ada_l_01_why_attention.ipynb': 'ada' or 'ada_l')."""
    if BLACKBOARD.match(name):
        parts = name.split("_attempt_", 1)[0].split("_")
        return ["_".join(parts[i:]) for i in range(1, len(parts))]
    parts = name.split("_")
    return ["_".join(parts[:i]) for i in range(len(parts) - 1, 0, -1) if "_".join(parts[:i]) != who] + [who]


def read_gradescope(folder):
    """{`submission_<id>`: (name, id, time)} from the metadata file of Gradescope's export, if there is one."""
    path = Path(folder) / GRADESCOPE_METADATA
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return {}
    people = {}
    for key, value in data.items() if isinstance(data, dict) else ():
        value = {str(k).lstrip(":"): v for k, v in value.items()} if isinstance(value, dict) else {}
        submitters = value.get("submitters") or [{}]
        first = {str(k).lstrip(":"): v for k, v in submitters[0].items()} if isinstance(submitters[0], dict) else {}
        who = str(first.get("name") or "")
        lms_id = str(first.get("sid") or first.get("email") or "")
        people[str(key).lstrip(":")] = (who, lms_id, stamp(str(value.get("created_at", ""))))
    return people


def parse_name(name, lesson, lessons, roster, folders=(), gradescope=None):
    """Entry for a file called `name` (no content), in `folders` of the download. `lessons`: {lesson: notebook
    names}, this one first."""
    name = unicodedata.normalize("NFC", name)
    bare = name.lstrip(".")
    who, rest, lms_id, when, number, user_id = read_person(bare, folders, lessons, gradescope or {})
    by_folder = folder_person(folders, lessons, gradescope or {}) is not None
    plain = not by_folder and name_format(bare) is None
    readings = other_readings(bare, who) if plain else []
    known = [r for r in readings if roster and (r in roster.values() or fold(r) in roster)]
    if known:  # a user name with `_` in it: the roster says which reading is a person
        who, rest = known[0], bare[len(known[0]) + 1 :] if bare.startswith(known[0] + "_") else rest
    found, nb = notebook_named(rest, lessons)
    status, reason, target = None, "", ""
    if found == lesson and rest.lower().endswith(".ipynb"):
        target = f"{nb}.ipynb"
    elif found and rest.lower().endswith(".ipynb"):
        status, reason = Status.NOT_THIS_LESSON, f"looks like {found}"
    elif rest.lower().endswith(".ipynb"):
        target = "?"  # a notebook under another name: decided per student
    own = re.sub(r"^attempt_[^_]*(_|$)", "", rest) or rest
    dated = ATTEMPT.match(own)
    own = (own[dated.end() :].lstrip("_") if dated else own) or rest
    anonymous = not who.strip() or (not by_folder and any(bare.startswith(n) for ns in lessons.values() for n in ns))
    entry = Entry(
        file=name,
        student=UNKNOWN if anonymous else "",
        target="" if anonymous else target,
        status=Status.NOT_GRADED if anonymous else status,
        reason="no person can be read from its name or folder: rename it <student>_<file>" if anonymous else reason,
        order=(when or datetime.min, -1 if number is None else number, name),
        when=when,
        number=number,
        own_name=own,
        name=unicodedata.normalize("NFC", who),
        lms_id=lms_id,
    )
    if not anonymous:
        entry.student, flag = student_of(who, roster, user_id)
        if flag:
            entry.flags.append(flag)
        if BLACKBOARD.match(bare) and len(readings) > 1 and not known:
            shown = ", ".join(repr(r) for r in readings)
            entry.flags.append(f"the file name can be read as the user names {shown}: graded as {who!r}; check it")
        if not by_folder and CANVAS_ANONYMOUS.match(bare):
            entry.flags.append(f"Canvas's anonymous grading: graded under its anonymous id {who!r}")
    return entry


def grade_ids_in(data):
    """The grade ids of a submitted file's graded cells (types checked), or None if it is not readable."""
    from .repairs import Broken, ShapeCells, load

    try:
        cells = load(data).get("cells", [])
    except Broken:
        return None
    ids = set()
    for cell in cells:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nb_meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        if ShapeCells.well_typed(nb_meta) and nb_meta.get("grade_id"):
            ids.add(nb_meta["grade_id"])
    return ids


def lesson_by_content(data, lesson, grade_ids):
    """'' if the file's graded cells are this lesson's (or cannot tell), else the lesson they are of."""
    ids = grade_ids_in(data)
    if not ids or ids & grade_ids.get(lesson, set()):
        return ""
    overlap = {other: len(ids & known) for other, known in grade_ids.items() if other != lesson}
    best = max(overlap, key=overlap.get, default="")
    return best if best and overlap[best] else ""


INVENTED = ("student id read from the file name", "another student's files gave the same id")


def invented_ids(entries):
    """The ids the grader made up (from a name that is not an id, or to tell two people apart): they are graded
    into grades.csv, never into nbgrader's student list, until the roster maps the person (issue 30)."""
    return {e.student for e in entries if any(f.startswith(INVENTED) for f in e.flags)}


def by_student(entries):
    """{student id: their entries}, in the order of the entries."""
    found = {}
    for entry in entries:
        found.setdefault(entry.student, []).append(entry)
    return found


def separate_people(entries):
    """Two people never share an id: entries of one id but different people (another LMS user id, or
    another name that made the same id) get ids of their own, and are flagged."""
    for student, mine in by_student(entries).items():
        people = sorted({(e.lms_id, e.name) for e in mine if e.reason != HIDDEN})
        if len(people) < 2 or all(not e.flags and not e.lms_id for e in mine):
            continue  # one person, or the same id read from the roster or given as is
        lms_ids = {lms for lms, _ in people if lms}
        if len(people) == 2 and len(lms_ids) < 2 and len({n for _, n in people}) == 1:
            continue  # one person, once with and once without the LMS's id
        for k, (lms, name) in enumerate(people, 1):
            new = f"{student}-{lms}" if lms else f"{student}-{k}"
            others = ", ".join(f"{n} ({lm})" if lm else n for lm, n in people if (lm, n) != (lms, name))
            for entry in mine:
                if (entry.lms_id, entry.name) == (lms, name):
                    entry.student = new
                    entry.flags.append(
                        f"another student's files gave the same id {student!r} ({others}): "
                        f"graded as {new!r}; check who is who"
                    )
    return entries


def collect_folder(course, lesson, folder, roster=None):
    """Copy LMS downloads into submitted/<student>/<lesson>/; returns the entries, one per file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GradingError(f"no such folder: {folder}")
    notebooks = course.notebooks(lesson)
    lessons = {lesson: notebooks, **{other: course.notebooks(other) for other in course.lessons() if other != lesson}}
    grade_ids = {name: course.grade_ids(name) for name in lessons}
    entries, content, gradescope = [], {}, read_gradescope(folder)
    for download in downloads(folder):
        entry = parse_name(download.name, lesson, lessons, roster, download.folders, gradescope)
        if download.name == GRADESCOPE_METADATA and gradescope:
            entry.student, entry.status = UNKNOWN, Status.NOT_GRADED
            entry.reason = "Gradescope's list of who submitted what: read"
        elif download.name == "index.html" and not download.folders:  # Brightspace's page of its download
            entry.student, entry.status, entry.flags = UNKNOWN, Status.NOT_GRADED, []
            entry.reason = "the LMS's page listing its download (Brightspace's index.html): nobody's submission"
        entry.file = download.rel
        entry.flags += [download.flag] if download.flag else []
        if download.status:
            entry.status, entry.reason, entry.target = download.status, download.reason, ""
        elif entry.target:
            looks_like = lesson_by_content(download.data, lesson, grade_ids)
            if looks_like:
                entry.status, entry.reason, entry.target = Status.NOT_THIS_LESSON, f"looks like {looks_like}", ""
        entries.append(entry)
        content[id(entry)] = download.data
    for student, mine in by_student(separate_people(entries)).items():
        usable = [e for e in mine if not e.status and student != UNKNOWN]
        if usable:  # else only files that are not graded: their rows say why
            _place(usable, course.submitted / student / lesson, notebooks, content)
    return entries


def _place(usable, dest, notebooks, content):
    """One student's files into submitted/<student>/<lesson>/: the latest file for each notebook (the others
    superseded), the files the student attached, and the attempt's time (timestamp.txt)."""
    dest.mkdir(parents=True, exist_ok=True)
    chosen = {}
    for entry in sorted((e for e in usable if e.target), key=lambda e: e.order):  # the latest file wins
        target = entry.target
        if target == "?":
            if len(notebooks) != 1:
                entry.status = Status.NOT_GRADED
                entry.reason = "a notebook under another name; rename it to one of the lesson's"
                continue
            target = f"{notebooks[0]}.ipynb"
            entry.notes.append(f"notebook named {entry.file!r}: graded as {target}")
        entry.target = target
        if target in chosen:
            old = chosen[target]
            old.status, old.reason = Status.SUPERSEDED, f"a later file of {entry.student} was graded: {entry.file}"
            entry.notes.append(f"resubmission: replaces {old.file}")
            if not ordered(old, entry):
                entry.flags.append(
                    f"two files for {target} and the download does not say which is later ({old.file}, "
                    f"{entry.file}): {entry.file} was graded (the last by name); check it is the latest"
                )
        chosen[target] = entry
    for target, entry in chosen.items():
        _write(dest / target, content[id(entry)])
    for entry in usable:
        if not entry.target:  # with no notebook, the student's failure shows on this row
            entry.status = Status.EXTRA if chosen else None
            entry.reason = "kept with the submission; not used for grading" if chosen else ""
            kept = Path(entry.own_name).name
            if not entry.file.endswith(".ipynb") and kept not in ("timestamp.txt", "", ".", "..") and kept[0] != ".":
                _write(dest / kept, content[id(entry)])
    stamps = [e.when for e in chosen.values() if e.when is not None]
    if stamps:
        _write(dest / "timestamp.txt", max(stamps).strftime("%Y-%m-%d %H:%M:%S").encode())


def ordered(earlier, later):
    """True when the download itself says which of two files is later: both have times, or both LMS numbers
    (Canvas's attachment ids), and they differ."""
    if earlier.when is not None and later.when is not None and earlier.when != later.when:
        return True
    return earlier.number is not None and later.number is not None and earlier.number != later.number


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
        raise GradingError(f"nbgrader collect {lesson} failed:\n{result.stderr[-3000:]}")
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
