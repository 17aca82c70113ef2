"""Run in the solved kernel before a lesson's claims (tests/claims/<lesson>.py): `claim("0.13", value)` asserts
that the number the prose writes is what the notebook measured (equal to the digits written), and records it."""

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
