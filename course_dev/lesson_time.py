"""How long a lesson takes a student, counted from the lesson itself (LESSON_ANATOMY.md, "How long a lesson takes").

One measure for every lesson, calibrated on a student who did the whole course and timed it (about 16 hours):
the prose is read at READ_WPM words a minute (SKIM_WPM where the lesson's minimal path says to skim a section),
each exercise point takes EXERCISE_MIN_PER_POINT minutes and each quiz point QUIZ_MIN_PER_POINT. Code cells are
run, not read. A lesson's `lesson.toml` may name the sections its minimal path skips (`skip_sections`: optional,
0-point sections) and skims (`skim_sections`); a markdown cell whose text (after its headings) opens with
FIRST_PASS_SKIM is skimmed too, and the student sees that mark where it applies. The lesson's header states both
times; tests check they agree.

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
FIRST_PASS_SKIM = "*Skim on a first pass.*"  # opens a demonstration's prose that the minimal path skims

_SECTION = re.compile(r"^## +(\d+)\.", re.M)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADINGS = re.compile(r"\A(#+ .*\n\s*)*")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


@dataclass(frozen=True)
class LessonTime:
    minimal: int  # minutes, rounded to 5
    full: int


@dataclass
class _Section:
    words: int = 0  # prose to read
    skim_words: int = 0  # prose in cells marked FIRST_PASS_SKIM
    exercise: int = 0  # points
    quiz: int = 0


def _sections(nb):
    """A _Section for each numbered section, keyed by its number as text; "0" is everything before the first
    numbered section (title, goals, "you need")."""
    counts, section = {}, "0"
    for cell in nb.cells:
        if cell.cell_type == "markdown" and (match := _SECTION.search(cell.source)):
            section = match[1]
        count = counts.setdefault(section, _Section())
        grading = cell.metadata.get("nbgrader", {})
        points = grading.get("points", 0) if grading.get("grade") else 0
        if str(grading.get("grade_id", "")).startswith("quiz"):
            count.quiz += points
        else:
            count.exercise += points
        if cell.cell_type == "markdown" and not grading.get("solution"):
            words = len(_WORD.findall(_HTML_COMMENT.sub(" ", cell.source)))  # a comment is not shown
            if _HEADINGS.sub("", cell.source).startswith(FIRST_PASS_SKIM):
                count.skim_words += words
            else:
                count.words += words
    return counts


def _minutes(counts, skip=(), skim=(), first_pass=False):
    """Minutes for the sections not skipped; on a first pass (the minimal path) marked cells are skimmed."""
    total = 0.0
    for number, section in counts.items():
        if number in skip:
            continue
        skimmed = section.skim_words if first_pass else 0
        total += (section.words + section.skim_words - skimmed) / (SKIM_WPM if number in skim else READ_WPM)
        total += skimmed / SKIM_WPM
        total += EXERCISE_MIN_PER_POINT * section.exercise + QUIZ_MIN_PER_POINT * section.quiz
    return int(5 * round(total / 5))


def lesson_time(lesson):
    """The lesson's minimal path and whole lesson, in minutes (rounded to 5)."""
    counts = _sections(nbformat.read(str(solution_path(lesson)), as_version=4))
    meta = lesson_meta(lesson)
    skip = {str(s) for s in meta.get("skip_sections", ())}
    skim = {str(s) for s in meta.get("skim_sections", ())}
    return LessonTime(minimal=_minutes(counts, skip, skim, first_pass=True), full=_minutes(counts))


def main():
    print(f"{'lesson':26} minimal  whole   (minutes: {READ_WPM} wpm, skim {SKIM_WPM} wpm, ", end="")
    print(f"{EXERCISE_MIN_PER_POINT} min per exercise point, {QUIZ_MIN_PER_POINT} per quiz point)")
    for lesson in lessons():
        time = lesson_time(lesson)
        flag = "  over the limit" if time.minimal > LIMIT_MIN else ""
        print(f"{lesson:26} {time.minimal:7d} {time.full:6d}{flag}")


if __name__ == "__main__":
    main()
