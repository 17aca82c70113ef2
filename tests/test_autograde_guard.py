"""Unit tests of the integrity guard's pieces (autograde/kernel_guard.py runs in the kernel; here its
parts run in this process) and of the grader's side (autograde/guard.py, execute.outputs_for). Fast,
no kernel; the guard in a real kernel is tested by tests/test_grading.py."""

import functools
import os
import sys
import types

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograde import execute, guard
from autograde import kernel_guard as kg

# --- whose code is running ---------------------------------------------------------------------


def test_trust_covers_the_environment_and_the_guard_only():
    trust = kg.Trust(kg.trusted_roots(["attention_course"]))
    assert trust.trusted_file(os.__file__) and trust.trusted_file(kg.GUARD_FILE)
    assert trust.trusted_file("<autograde test rnn-step-tests>") and trust.trusted_file("<frozen runpy>")
    assert not trust.trusted_file("/tmp/ipykernel_7/123.py") and not trust.trusted_file("/home/student/numpy.py")
    assert not trust.trusted_file(sys.prefix + "-evil/x.py"), "a sibling folder is not inside the environment"
    assert not trust.trusted_file(None)


def test_accessor_skips_the_standard_library_acting_for_its_caller():
    trust = kg.Trust([os.path.dirname(os.__file__)])  # only the standard library is trusted here
    seen = {}

    def probe():
        seen["frame"], seen["via"] = trust.accessor(sys._getframe(1))

    functools.partial(probe)()  # called through functools (plumbing): the accessor is this test
    assert seen["frame"].f_code.co_name == "test_accessor_skips_the_standard_library_acting_for_its_caller"
    assert not trust.trusted_frame(seen["frame"])


# --- the state the tests rely on ---------------------------------------------------------------


@pytest.fixture
def fake_package(monkeypatch):
    """A watched package `fakepkg` with a function, a class and a wrapper-friendly function."""
    pkg = types.ModuleType("fakepkg")
    pkg.__file__ = os.path.join(os.path.dirname(os.__file__), "fakepkg", "__init__.py")

    class Cell:
        __module__ = "fakepkg"

        def forward(self):
            return "real"

    def tanh(x):
        return x

    pkg.Cell, pkg.tanh = Cell, tanh
    monkeypatch.setitem(sys.modules, "fakepkg", pkg)
    shell = types.SimpleNamespace(events=types.SimpleNamespace(callbacks={"pre_run_cell": []}), user_ns={})
    trust = kg.Trust([os.path.dirname(os.__file__)])
    state = kg.State(shell, ["fakepkg"], [], trust, attributes=["fakepkg.Cell"])
    return pkg, state, shell


def test_state_finds_and_undoes_rebinding_and_patches(fake_package):
    pkg, state, _ = fake_package
    assert [c.what for c in state.changes()] == []
    original = pkg.tanh
    pkg.tanh = lambda x: 0
    pkg.Cell.forward = lambda self: "fake"
    found = state.changes()
    assert {c.what for c in found} == {
        "fakepkg: rebinds tanh",
        f"class fakepkg.{pkg.Cell.__qualname__}: patches forward",
    }
    state.restore(found)
    assert pkg.tanh is original and pkg.Cell().forward() == "real" and state.changes() == []


def test_state_accepts_a_library_wrapping_its_own_function(fake_package):
    pkg, state, _ = fake_package
    code = compile(
        "import functools\ndef wrap(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(*a)\n    return w",
        pkg.__file__,
        "exec",
    )
    space = {}
    exec(code, space)
    pkg.Cell.forward = space["wrap"](pkg.Cell.forward)  # as torch.optim wraps `step`
    assert state.changes() == []


def test_state_sees_callbacks_signal_handlers_and_the_import_system(fake_package):
    import signal

    _, state, shell = fake_package
    shell.events.callbacks["pre_run_cell"].append(lambda info: None)
    previous = signal.signal(signal.SIGUSR2, lambda *a: None)
    sys.path.append("/home/student")
    try:
        found = {c.what for c in state.changes()}
        assert found >= {"an IPython pre_run_cell callback was registered", "sys.path changed"}
        assert any("signal" in what for what in found)
        state.restore(state.changes())
        assert state.changes() == [] and "/home/student" not in sys.path
    finally:
        signal.signal(signal.SIGUSR2, previous)
        if "/home/student" in sys.path:
            sys.path.remove("/home/student")


# --- the tests' namespace ----------------------------------------------------------------------


def test_frozen_modules_give_the_values_at_set_up(fake_package):
    pkg, state, _ = fake_package
    original = pkg.tanh
    pkg.tanh = lambda x: 0
    frozen = kg.frozen_modules(state)("fakepkg")
    assert frozen.tanh is original and frozen.Cell is pkg.Cell
    assert isinstance(frozen, types.ModuleType)
    imported = kg.guarded_import(state, kg.frozen_modules(state), __import__)("fakepkg")
    assert imported.tanh is original


def test_split_test_separates_visible_and_hidden_names_and_the_value():
    source = "_x = f(1)\ndef _g():\n    return 2\n### BEGIN HIDDEN TESTS\n_h = 3\n### END HIDDEN TESTS\n_x + 1\n"
    tree, value, visible = kg.split_test(source)
    assert visible == {"_x", "_g"} and value is not None
    assert kg.split_test("checks.passed('f')\n")[1] is not None  # a call: its value decides (None: no value)


def test_a_test_standing_in_for_a_notebook_function_reaches_the_notebooks_code():
    """Assignments of the visible part reach the notebook at once, also of names a test's function
    declares `global` (Python then stores them without the namespace's __setitem__)."""
    user = {"helper": lambda: "student"}
    user["run"] = eval("lambda: helper()", user)  # the notebook's code, looking names up in its namespace
    source = (
        "def _stand_in():\n    global helper\n    saved = helper\n    helper = lambda: 'test'\n"
        "    out = run()\n    helper = saved\n    return out\n"
        "got = _stand_in()\nhelper2 = helper\n"
        "try:\n    helper = lambda: 'top'\n    top = run()\nfinally:\n    helper = helper2\n"
    )
    tree, _, visible = kg.split_test(source)
    ns = kg.Mirrored(user, visible, kg.Guard.rebind)
    for key, value in {**user, "__builtins__": __builtins__, kg.MIRROR: None}.items():
        dict.__setitem__(ns, key, value)
    dict.__setitem__(ns, kg.MIRROR, ns.mirror)
    exec(compile(tree, "<autograde test t>", "exec"), ns)
    assert ns["got"] == "test" and ns["top"] == "top" and user["helper"]() == "student"
    assert user["_stand_in"].__globals__ is user, "the notebook gets a copy that looks names up in its namespace"


def test_plain_error_and_value_run_no_code_of_the_notebook():
    class Sly(Exception):
        def __str__(self):
            raise RuntimeError("ran")

    assert kg.plain_error(AssertionError("off by 1")) == ("AssertionError", "off by 1")
    assert kg.plain_error(Sly("x"))[0] == "Sly"
    assert "not shown" in kg.plain_error(ValueError(object()))[1]
    assert kg.plain_value(2) == 2.0 and kg.plain_value(True) is None and kg.plain_value(Sly()) is None


# --- the grader's side ---------------------------------------------------------------------------


def released_notebook():
    nb = new_notebook()
    nb.cells = [
        new_code_cell("import numpy as np\nimport torch.nn.functional as F\nfrom attention_course import checks"),
        new_code_cell("import time\nfrom torch import nn"),
    ]
    return nb


def test_lesson_imports_and_what_the_tests_reach():
    imports = guard.lesson_imports([released_notebook()])
    assert imports == [
        ("F", "torch.nn.functional", None),
        ("checks", "attention_course", "checks"),
        ("nn", "torch", "nn"),
        ("np", "numpy", None),
    ]
    modules, attributes = guard.reached(["x = np.random.default_rng(0)\nnn.RNNCell(2, 3)"], imports)
    assert {"numpy", "numpy.random", "torch.nn"} <= set(modules)
    assert {"numpy.random.default_rng", "torch.nn.RNNCell"} <= set(attributes)


def test_a_test_cells_outputs_come_from_the_guards_record_only():
    """What the notebook emitted in a test cell never scores: only stdout stays, and the outcome decides."""
    emitted = [
        nbformat.v4.new_output("stream", name="stdout", text="✓ passed\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1),
        nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
    ]
    passed = execute.outputs_for(emitted, guard.Outcome(ok=True))
    assert [o.output_type for o in passed] == ["stream"]
    failed = execute.outputs_for(emitted, guard.Outcome(ok=False, ename="AssertionError", evalue="off"))
    assert failed[-1].output_type == "error" and failed[-1].evalue == "off"
    assert execute.outputs_for(emitted, None)[-1].ename == "AutogradeError"
    partial = execute.outputs_for([], guard.Outcome(ok=True, value=0.5))
    assert partial[-1].output_type == "execute_result" and partial[-1].data["text/plain"] == "0.5"
