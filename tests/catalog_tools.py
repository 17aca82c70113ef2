"""Helpers for writing misconception catalogs (tests/catalogs/<lesson>.py)."""


def quiz(variable, right, wrong):
    """Catalog entry for a quiz question: each value becomes `variable = value`."""
    return {
        "wrong": {f"{variable} = {v!r}": (f"{variable} = {v!r}", None) for v in wrong},
        "right": {f"{variable} = {v!r}": f"{variable} = {v!r}" for v in right},
    }
