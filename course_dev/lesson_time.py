"""How long a lesson takes a student, counted from the lesson itself (LESSON_ANATOMY.md, "How long a lesson takes").

One measure for every lesson, calibrated on a student who did the whole course and timed it (about 16 hours):
the prose is read at READ_WPM words a minute (SKIM_WPM where the lesson's minimal path says to skim a section),
each exercise point takes EXERCISE_MIN_PER_POINT minutes and each quiz point QUIZ_MIN_PER_POINT. Code cells are
run, not read. A lesson's `lesson.toml` may name the sections its minimal path skips (`skip_sections`: optional,
0-point sections) and skims (`skim_sections`). The lesson's header states both times; tests check they agree.

    python -m course_dev.lesson_time          # the table, in minutes
"""

import re
from dataclasses import dataclass

import nbformat

from course_dev.paths import lesson_meta, lessons, solution_path

READ_WPM = 150  # technical prose with maths, read to be understood
SKIM_WPM = 450  # a section the minimal path says to skim: headings, figures, the conclusion
EXERCISE_MIN_PER_POINT = 4  # writing and debugging code until the visible checks pass
QUIZ_MIN_PER_POINT = 1.5  # reading a question and its choices, or writing a short answer
LIMIT_MIN = 90  # no lesson's minimal path may take longer (issue 32)

_SECTION = re.compile(r"^## +(\d+)\.", re.M)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


@dataclass(frozen=True)
class LessonTime:
    minimal: int  # minutes, rounded to 5
    full: int


def _sections(nb):
    """(section number as text, words of its prose, exercise points, quiz points) for each section, in order;
    "0" is everything before the first numbered section (title, goals, "you need")."""
    counts, section = {}, "0"
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (match := _SECTION.search(cell.source)):
            section = match[1]
        words, exercise, quiz = counts.get(section, (0, 0, 0))
        grading = cell.metadata.get("nbgrader", {})
        points = grading.get("points", 0) if grading.get("grade") else 0
        is_quiz = str(grading.get("grade_id", "")).startswith("quiz")
        if cell.cell_type == "markdown" and not grading.get("solution"):
            words += len(_WORD.findall(cell.source))
        counts[section] = (words, exercise + (0 if is_quiz else points), quiz + (points if is_quiz else 0))
    return counts


def _minutes(counts, skip=(), skim=()):
    total = 0.0
    for section, (words, exercise, quiz) in counts.items():
        if section in skip:
            continue
        total += words / (SKIM_WPM if section in skim else READ_WPM)
        total += EXERCISE_MIN_PER_POINT * exercise + QUIZ_MIN_PER_POINT * quiz
    return int(5 * round(total / 5))


def lesson_time(lesson):
    """The lesson's minimal path and whole lesson, in minutes (rounded to 5)."""
    counts = _sections(nbformat.read(str(solution_path(lesson)), as_version=4))
    meta = lesson_meta(lesson)
    skip = {str(s) for s in meta.get("skip_sections", ())}
    skim = {str(s) for s in meta.get("skim_sections", ())}
    return LessonTime(minimal=_minutes(counts, skip, skim), full=_minutes(counts))


def main():
    print(f"{'lesson':26} minimal  whole   (minutes: {READ_WPM} wpm, skim {SKIM_WPM} wpm, ", end="")
    print(f"{EXERCISE_MIN_PER_POINT} min per exercise point, {QUIZ_MIN_PER_POINT} per quiz point)")
    for lesson in lessons():
        time = lesson_time(lesson)
        flag = "  over the limit" if time.minimal > LIMIT_MIN else ""
        print(f"{lesson:26} {time.minimal:7d} {time.full:6d}{flag}")


if __name__ == "__main__":
    main()
