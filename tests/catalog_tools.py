"""Helpers for writing misconception catalogs (tests/catalogs/<lesson>.py) and their CLAIMS."""

import re


def quiz(variable, right, wrong):
    """Catalog entry for a quiz question: each value becomes `variable = value`."""
    return {
        "wrong": {f"{variable} = {v!r}": (f"{variable} = {v!r}", None) for v in wrong},
        "right": {f"{variable} = {v!r}": f"{variable} = {v!r}" for v in right},
    }


# --- CLAIMS: every number written in a lesson's prose is guarded ----------------------------------------------------

# Run in the solved kernel before a catalog's CLAIMS. `claim("0.13", value)` asserts that the number the prose
# writes is what the notebook measured (equal to the digits written), and records it as guarded.
CLAIM_TOOLS = r'''
import re as _re

_claimed = set()


def _number(text):
    found = _re.search(r"[-−]?\d[\d,]*(?:\.\d+)?", str(text))
    if not found:
        raise ValueError(f"claim: no number in {text!r}")
    return found.group().replace(",", "").replace("−", "-")


def claim(text, value, tol=None):
    """The prose writes `text` ("0.13", "1.65×", "81 %", "9,194"); `value` is what the notebook measured, in the same
    unit. They must agree to the digits written (or within `tol`)."""
    number = _number(text)
    digits = len(number.split(".")[1]) if "." in number else 0
    limit = tol if tol is not None else 0.5 * 10**-digits * (1 + 1e-9)
    assert abs(float(value) - float(number)) <= limit, f"the prose says {text}, the notebook measured {value!r}"
    _claimed.add(number.lstrip("-"))
    return True
'''

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?!\w)")
_REFERENCE = re.compile(
    r"(?i)\b(lessons?|sections?|exercises?|steps?|figures?|parts?|Q|questions?)\s*\d[\d.]*"
    r"(\s*(–|-|and|to|or|,)\s*\d[\d.]*)*"
)


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
