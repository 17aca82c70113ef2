"""Whatever a submitted file holds, it gets one row with a status and the batch goes on: the files the
issue found stopping a batch, an honest nbformat 3 notebook, and a property-based test (Hypothesis)
that mutates the released notebook's JSON (types, depths, deletions, duplicates) and checks that
collecting, repairing and scanning never fail, that every file keeps its one row and that an honest
submission next to the mutant is prepared exactly as it is alone (so it keeps its score: each notebook
is graded on its own). The slow batch (tests/test_grading.py) runs a few of these mutants for real."""

import copy
import hashlib
import json
from types import SimpleNamespace

import nbformat
import pytest
from harness import ROOT, read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograde import collect, repairs, tamper
from autograde.prepare import Release, prepare

L = "01_why_attention"
RELEASED = read(ROOT / "notebooks" / L / f"{L}.ipynb")
RELEASED_JSON = json.loads(nbformat.writes(RELEASED))
PROTECTED = {"np", "checks", "torch", "abs", "float", "rnn_step"}
DEEP, HUGE = "@@deep@@", "@@huge@@"


# --- mutations: the same code drives Hypothesis here and the seeded mutants of the slow batch ----------


def paths(node, here=()):
    """Every (path, node) in a JSON tree."""
    yield here, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*here, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*here, index))


def at(tree, path):
    for step in path:
        tree = tree[step]
    return tree


def random_value(rnd):
    return rnd.choice(
        [
            None,
            True,
            rnd.randint(-(10**6), 10**6),
            int("9" * 20),
            HUGE,  # an integer of 5,000 digits in the file: Python refuses to read more than 4,300
            rnd.random() * 1e300,
            "x" * rnd.choice([0, 3, 100_000]),
            [],
            {},
            ["a", 1],
            {"grade_id": ["not", "a", "string"]},
            DEEP,
        ]
    )


def mutate(nb_json, rnd, count):
    """`count` random changes to a copy of the notebook's JSON; returns the file's bytes."""
    tree = copy.deepcopy(nb_json)
    for _ in range(count):
        spots = [(p, n) for p, n in paths(tree) if p]
        path, _ = rnd.choice(spots)
        parent, last = at(tree, path[:-1]), path[-1]
        kind = rnd.choice(["type", "delete", "duplicate", "deep"])
        if kind == "type":
            parent[last] = random_value(rnd)
        elif kind == "delete":
            del parent[last]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif kind == "deep":
            parent[last] = DEEP
    text = json.dumps(tree).replace(json.dumps(HUGE), "7" * 5000)
    depth = rnd.choice([10, 900, 100_000])
    return text.replace(json.dumps(DEEP), "[" * depth + "0" + "]" * depth).encode()


def honest():
    nb = copy.deepcopy(RELEASED)
    for cell in nb.cells:
        if (cell.metadata.get("nbgrader") or {}).get("grade_id") == "quiz-rnn-state-size":
            cell.source = "q1_answer = 64"
    return nbformat.writes(nb).encode()


def prepared(tmp_path, name, raw):
    """What the batch grades for one submitted file: (sanitized notebook bytes or None, failure)."""
    src, dest = tmp_path / "src" / name, tmp_path / "dest" / name
    src.mkdir(parents=True)
    (src / f"{L}.ipynb").write_bytes(raw)
    failure = prepare(src, dest, Release(L, [L], {L: RELEASED}, PROTECTED), hashlib.sha256()).failure
    out = dest / f"{L}.ipynb"
    return (out.read_bytes() if out.exists() and not failure else None), failure


def course(tmp_path):
    return SimpleNamespace(
        submitted=tmp_path / "submitted",
        notebooks=lambda lesson: [lesson],
        lessons=lambda: [L],
        grade_ids=lambda lesson: {"rnn-step", "rnn-step-tests"},
    )


@pytest.fixture(scope="module")
def honest_alone(tmp_path_factory):
    """The honest submission prepared with no other file beside it: the same in every example, so prepared once."""
    return prepared(tmp_path_factory.mktemp("alone"), "ada", honest())


# --- the property ------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False), count=st.integers(1, 4))
def test_any_mutant_gets_one_row_and_leaves_the_honest_control_as_it_was(tmp_path_factory, honest_alone, rnd, count):
    tmp_path = tmp_path_factory.mktemp("mutant")
    raw = mutate(RELEASED_JSON, rnd, count)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    (downloads / f"mallory_{L}.ipynb").write_bytes(raw)
    (downloads / f"ada_{L}.ipynb").write_bytes(honest())
    entries = collect.collect_folder(course(tmp_path), L, downloads)
    assert sorted(e.file for e in entries) == [f"ada_{L}.ipynb", f"mallory_{L}.ipynb"]
    ada = next(e for e in entries if e.student == "ada")
    assert ada.status is None and (tmp_path / "submitted" / "ada" / L / f"{L}.ipynb").read_bytes() == honest()
    result, failure = prepared(tmp_path, "mallory", raw)
    assert failure or nbformat.validate(nbformat.reads(result.decode(), as_version=4)) is None
    assert prepared(tmp_path, "ada", honest()) == honest_alone


# --- the files the issue found stopping a batch -----------------------------------------------------


def reason(raw):
    with pytest.raises(repairs.Broken) as err:
        repairs.repair(raw, RELEASED)
    return str(err.value)


def test_hostile_json_fails_that_file_with_a_reason():
    assert reason(b"[" * 100_000 + b"]" * 100_000) == "invalid JSON (nested too deeply)"
    assert reason(b'{"cells": [], "n": ' + b"7" * 5000 + b"}").startswith("invalid JSON (Exceeds the limit")
    assert reason(b"\xff\xfe") == "invalid JSON (not UTF-8 text)"
    assert reason(b" " * (repairs.MAX_BYTES + 1)).startswith("too large")


def test_metadata_of_the_wrong_type_is_ignored_not_fatal():
    data = json.loads(honest())
    graded = [c for c in data["cells"] if "nbgrader" in c["metadata"]]
    graded[0]["metadata"] = "a string"
    graded[1]["metadata"]["nbgrader"]["grade_id"] = ["a", "list"]
    graded[2]["metadata"]["nbgrader"]["points"] = "20"
    graded[3]["source"] = {"not": "text"}
    nb, notes = repairs.repair(json.dumps(data).encode(), RELEASED)
    nbformat.validate(nb)
    assert any("was not a dict" in n for n in notes) and any("wrong type" in n for n in notes)
    released_ids = [(c.metadata.get("nbgrader") or {}).get("grade_id") for c in RELEASED.cells]
    assert [(c.metadata.get("nbgrader") or {}).get("grade_id") for c in nb.cells] == released_ids
    assert tamper.scan(nb, PROTECTED) == []


def test_an_honest_nbformat3_notebook_is_converted_and_graded():
    nb3 = nbformat.convert(nbformat.reads(honest().decode(), as_version=4), 3)
    raw = nbformat.writes(nb3, version=3).encode()
    assert json.loads(raw)["nbformat"] == 3 and "worksheets" in json.loads(raw)
    nb, _ = repairs.repair(raw, RELEASED)
    answer = next(c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == "quiz-rnn-state-size")
    assert answer.source == "q1_answer = 64"
    assert "could not be converted" in reason(json.dumps({"nbformat": 3, "worksheets": [{"cells": 5}]}).encode())
