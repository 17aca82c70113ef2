"""Helpers for writing misconception catalogs (tests/catalogs/<lesson>.py) and their CLAIMS."""

import re
from pathlib import Path


def quiz(variable, right, wrong):
    """Catalog entry for a quiz question: each value becomes `variable = value`."""
    return {
        "wrong": {f"{variable} = {v!r}": (f"{variable} = {v!r}", None) for v in wrong},
        "right": {f"{variable} = {v!r}": f"{variable} = {v!r}" for v in right},
    }


# --- CLAIMS: every number written in a lesson's prose is guarded ----------------------------------------------------

CLAIMS = Path(__file__).with_name("claims")  # <lesson>.py: run in the solved kernel after _tools.py

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?!\w)")
_REFERENCE = re.compile(
    r"(?i)\b(lessons?|sections?|exercises?|steps?|figures?|parts?|Q|questions?)\s*\d[\d.]*"
    r"(\s*(–|-|and|to|or|,)\s*\d[\d.]*)*"
)


# the lesson's time in its header and minimal-path box: "· about 70 minutes", "Minimal path: about 85 minutes"
_LESSON_TIME = re.compile(r"(?i)(minimal path: |the whole lesson: |· )about \d+( minutes)?")


def _canonical(text):
    return text.rstrip(".,").replace(",", "").replace("−", "").replace("-", "")


def prose_numbers(markdown):
    """The numbers a markdown cell states as facts: every number outside code, headings' numbering, references to
    lessons, sections, exercises and questions, and point values; integers 0–10 (counts such as "two heads" or
    "3 seeds" written as digits) and integers inside maths (formulas) are left out, decimals in maths are kept."""
    text = re.sub(r"<!--.*?-->|<summary>.*?</summary>", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", lambda m: " ".join(re.findall(r"\d+\.\d+", m.group())), text, flags=re.S)
    text = re.sub(r"^#+ [\d.]*", " ", text, flags=re.M)
    text = _REFERENCE.sub(" ", text)
    text = re.sub(r"\(\d+ points?[^)]*\)|\d+ points?", " ", text)
    text = _LESSON_TIME.sub(" ", text)  # counted by course_dev.lesson_time, checked by tests/test_course_rules.py
    numbers = []
    for found in _NUMBER.finditer(text):
        number = _canonical(found.group())
        if "." not in number and int(number) <= 10:
            continue
        numbers.append(number)
    return numbers


def unguarded(markdown_cells, claimed, not_measured):
    """Numbers of the prose that no claim asserts and `not_measured` does not list, with the start of their cell."""
    allowed = {_canonical(str(n)) for n in not_measured} | {_canonical(str(n)) for n in claimed}
    return sorted(
        {(n, source.strip()[:60]) for source in markdown_cells for n in prose_numbers(source) if n not in allowed}
    )
