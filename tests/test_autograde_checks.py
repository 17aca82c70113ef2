"""The checks the tests use can be trusted while the student's code runs in the same process
(attention_course/checks.py): values are reduced to plain data without running any of the student's
methods, and nothing a check uses can be rebound. Fast, no kernel."""

import builtins
import dis
import types

import numpy as np
import pytest
import torch

from attention_course import checks


def sealed_functions():
    return {
        name: f
        for name, f in vars(checks).items()
        if isinstance(f, types.FunctionType) and f.__module__ == checks.__name__ and name != "_make_kit"
    }


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def test_no_check_looks_anything_up_in_globals_or_builtins():
    """Every name a check uses comes from its keyword-only kit, bound at import: rebinding a module
    global or a builtin, even for the moment a check runs, changes nothing."""
    found = [
        (name, ins.argval)
        for name, f in sealed_functions().items()
        for code in code_objects(f.__code__)
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "LOAD_CLASSDEREF")
    ]
    assert found == []
    assert all(f.__closure__ is None for f in sealed_functions().values())
    assert "_KIT" not in vars(checks)


class Spy:
    """An answer object that records every method of its own that runs."""

    calls = []

    def __getattribute__(self, name):
        Spy.calls.append(name)
        return object.__getattribute__(self, name)

    def __array__(self, dtype=None, copy=None):
        Spy.calls.append("__array__")
        return np.zeros(2)

    def __float__(self):
        Spy.calls.append("__float__")
        return 64.0

    def __str__(self):
        Spy.calls.append("__str__")
        return "b"

    def __eq__(self, other):
        Spy.calls.append("__eq__")
        return True

    __hash__ = object.__hash__

    def __bool__(self):
        Spy.calls.append("__bool__")
        return True


@pytest.mark.parametrize(
    "check",
    [
        lambda v: checks.expect_close(v, np.zeros(2), "f(x)"),
        lambda v: checks.expect_shape(v, (2,), "f(x)"),
        lambda v: checks.expect_finite(v, "f(x)"),
        lambda v: checks.is_close(v, np.zeros(2)) or (_ for _ in ()).throw(AssertionError()),
        lambda v: checks.expect(v, "a check"),
        lambda v: checks.check_number(v, 64, "Q1"),
        lambda v: checks.check_choice(v, "b", "Q2"),
        lambda v: checks.expect_number(v, "Q1"),
        lambda v: checks.expect_choice(v, "abcd", "Q2"),
    ],
)
def test_no_method_of_a_students_object_runs_in_a_check(check):
    Spy.calls = []
    with pytest.raises(AssertionError):
        check(Spy())
    assert Spy.calls == []


def test_subclasses_of_plain_types_count_by_their_plain_value():
    class Tricky(float):
        def __float__(self):
            return 64.0

        def __sub__(self, other):
            return 0.0

    with pytest.raises(AssertionError):
        checks.check_number(Tricky(63.0), 64, "Q1")
    checks.check_number(np.float32(64.0), 64, "Q1")

    class Shouty(str):
        def lower(self):
            return "b"

    with pytest.raises(AssertionError):
        checks.check_choice(Shouty("a"), "b", "Q2")
    checks.check_choice(np.str_(" B "), "b", "Q2")


def test_tensors_arrays_lists_and_their_look_alikes():
    checks.expect_close(torch.tensor([1.0, 2.0], requires_grad=True), [1.0, 2.0], "x")
    checks.expect_close(torch.nn.Parameter(torch.ones(2)), np.ones(2), "x")
    checks.expect_close([[1, 2], (3, 4)], np.array([[1.0, 2], [3, 4]]), "x")
    checks.expect(torch.tensor(True), "a 0-d tensor is a truth value")
    checks.expect(np.array([1.0]) > 0, "one entry is a truth value")

    class Loud(torch.Tensor):
        pass

    with pytest.raises(AssertionError, match="not an array"):
        checks.expect_close(torch.zeros(2).as_subclass(Loud), np.zeros(2), "x")
    with pytest.raises(AssertionError, match="not numbers"):
        checks.expect_close(np.array([Spy(), Spy()], dtype=object), np.zeros(2), "x")
    with pytest.raises(AssertionError, match="could not be evaluated"):
        checks.expect(np.array([True, True]), "two values are not one truth value")


def test_rebinding_what_a_check_uses_changes_nothing(monkeypatch):
    monkeypatch.setattr(np, "abs", lambda x: x * 0)
    monkeypatch.setattr(np, "isfinite", lambda x: np.ones_like(x, dtype=bool))
    monkeypatch.setattr(builtins, "float", lambda x=0: 0.0)
    monkeypatch.setattr(builtins, "abs", lambda x: 0)
    monkeypatch.setitem(vars(checks), "_close", lambda *a, **k: True)
    with pytest.raises(AssertionError):
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "out")
    with pytest.raises(AssertionError):
        checks.check_number(63, 64, "Q1")
