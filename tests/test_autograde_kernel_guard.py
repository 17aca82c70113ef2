"""The run-time integrity guard (autograde/kernel_guard.py) rule by rule, installed for real in a plain Python
process (an IPython shell, no kernel, no sandbox: tests/kernel_guard_driver.py): each rule gets a notebook that
breaks it, and the grader's reading of the guard's records (autograde/guard.py) must show the outcome and the flag.
Its pieces are tested in this process by tests/test_autograde_guard.py; the guard in the students' sandboxed
kernels by tests/test_grading.py."""

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("kernel_guard_driver.py")
MATH = [["math", "math", None]]  # the lesson's imports the tests use: `import math`
SQRT_TEST = {"test": "sqrt-tests", "source": "assert math.sqrt(4) == 2.0"}
LATER_TEST = {"test": "later-tests", "source": "assert 1 + 1 == 2"}


@functools.cache
def hidden():
    """What marks a test cell's hidden part, read once here by the grader's own function (each driver importing
    nbgrader for it would cost a second of CPU)."""
    from autograde.guard import hidden_delimiters

    return hidden_delimiters()


def guarded(*cells, imports=MATH):
    """{"flags": [...], "outcomes": {grade_id: outcome}} of the cells run under the guard."""
    job = {"cells": [{"source": "import math"}, *cells], "imports": imports, "packages": ["math"], "helpers": []}
    job["hidden"] = hidden()
    done = subprocess.run(
        [sys.executable, str(DRIVER)], input=json.dumps(job), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def code(source):
    return {"source": source}


def flagged(report, text):
    return any(text in flag for flag in report["flags"])


def test_an_honest_notebook_passes_with_no_flag_and_a_failing_test_fails():
    report = guarded(code("x = 3"), SQRT_TEST, {"test": "x-tests", "source": "assert x == 4, 'x is not 4'"})
    assert report["flags"] == []
    assert report["outcomes"]["sqrt-tests"]["ok"]
    assert report["outcomes"]["x-tests"] == {
        "ok": False,
        "ename": "AssertionError",
        "evalue": "x is not 4",
        "value": None,
        "problems": [],
    }


def test_partial_credit_is_a_plain_number_only():
    report = guarded({"test": "half-tests", "source": "1.5"}, {"test": "bool-tests", "source": "True"})
    assert report["outcomes"]["half-tests"]["value"] == 1.5 and report["outcomes"]["bool-tests"]["value"] is None


def test_the_hidden_part_of_a_test_never_reaches_the_notebook():
    hidden = "y = 1\n### BEGIN HIDDEN TESTS\n_secret = 42\n### END HIDDEN TESTS\n"
    report = guarded(
        {"test": "t-tests", "source": hidden},
        {
            "test": "look-tests",
            "source": "assert 'y' in get_ipython().user_ns and '_secret' not in get_ipython().user_ns",
        },
    )
    assert all(o["ok"] for o in report["outcomes"].values()), report


def test_a_module_rebound_before_a_test_is_put_back_and_flagged():
    report = guarded(code("math.sqrt = lambda v: 2.0 * v"), SQRT_TEST)
    assert report["outcomes"]["sqrt-tests"]["ok"], "the test ran on the real math.sqrt"
    assert flagged(report, "at run time: math: rebinds sqrt (undone before the test ran)")


def test_a_module_rebound_while_a_test_runs_fails_that_test():
    sneaky = "def half(v):\n    import math as m\n    m.floor = lambda q: 0\n    return v / 2\n"
    report = guarded(code(sneaky), {"test": "half-tests", "source": "assert half(4) == 2"})
    outcome = report["outcomes"]["half-tests"]
    assert (
        not outcome["ok"]
        and outcome["ename"] == "AutogradeIntegrityError"
        and "math: rebinds floor" in outcome["evalue"]
    )


def test_builtins_rebound_are_put_back():
    report = guarded(
        code("import builtins\nbuiltins.abs = lambda v: 0"), {"test": "abs-tests", "source": "assert abs(-2) == 2"}
    )
    assert report["outcomes"]["abs-tests"]["ok"] and flagged(report, "builtins: rebinds abs")


def test_sys_modules_replaced_is_put_back():
    swap = "import sys, types\nsys.modules['math'] = types.ModuleType('math')"
    report = guarded(code(swap), {"test": "m-tests", "source": "import math as m\nassert m.sqrt(9) == 3"})
    assert report["outcomes"]["m-tests"]["ok"] and flagged(report, "sys.modules['math'] replaced")


def test_reading_a_frame_outside_a_test_fails_every_later_test():
    walk = "try:\n    raise RuntimeError\nexcept RuntimeError as err:\n    f = err.__traceback__.tb_frame\n"
    report = guarded(code(walk), SQRT_TEST, LATER_TEST)
    assert flagged(report, "at run time: reads tb_frame")
    for outcome in report["outcomes"].values():
        assert not outcome["ok"] and "not run: earlier, the notebook reads tb_frame" in outcome["evalue"]


def test_reading_a_frame_while_a_test_runs_fails_that_test_only():
    peek = "import sys\ndef answer():\n    return sys._getframe(1).f_locals.get('expected', 0)\n"
    report = guarded(code(peek), {"test": "peek-tests", "source": "expected = 5\nassert answer() == 5"}, LATER_TEST)
    assert not report["outcomes"]["peek-tests"]["ok"] and "sys._getframe" in report["outcomes"]["peek-tests"]["evalue"]
    assert report["outcomes"]["later-tests"]["ok"]


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import gc\ngc.get_referents(math.sqrt)", "gc.get_referents"),
        ("import ctypes\nctypes.string_at(id(1), 8)", "ctypes"),
        ("import sys\nsys.settrace(None)", "sys.settrace"),
        ("import types\ntypes.CodeType", "types.CodeType"),
    ],
)
def test_reaching_into_the_interpreter_is_flagged(source, what):
    report = guarded(code(source), SQRT_TEST)
    if what == "types.CodeType":  # naming the type is harmless: only making code objects is flagged
        assert report["flags"] == [] and report["outcomes"]["sqrt-tests"]["ok"]
    else:
        assert flagged(report, what) and not report["outcomes"]["sqrt-tests"]["ok"]


def test_starting_a_process_is_flagged_but_not_fatal():
    report = guarded(code("import subprocess\nsubprocess.run(['true'])"), SQRT_TEST)
    assert flagged(report, "started a process") and report["outcomes"]["sqrt-tests"]["ok"]


def test_a_grader_cell_compiled_by_the_notebook_is_refused():
    forge = "compile('# autograde test 0123\\n', '<cell>', 'exec')"
    report = guarded(code(forge), SQRT_TEST)
    assert flagged(report, "compiled a grader's cell from its own code") and not report["outcomes"]["sqrt-tests"]["ok"]


def test_an_ipython_callback_registered_by_the_notebook_is_removed():
    hook = "get_ipython().events.register('pre_run_cell', lambda info: None)"
    report = guarded(code(hook), SQRT_TEST)
    assert flagged(report, "an IPython pre_run_cell callback was registered") and report["outcomes"]["sqrt-tests"]["ok"]


def test_a_change_after_the_last_test_is_found_by_the_final_check():
    report = guarded(SQRT_TEST, code("math.pi = 3"))
    assert flagged(report, "at run time: math: rebinds pi")


def test_a_thread_of_the_notebook_running_during_a_test_fails_it():
    report = guarded(code("import threading, time\nthreading.Thread(target=lambda: time.sleep(3)).start()"), SQRT_TEST)
    assert flagged(report, "a thread started by the notebook is running") and not report["outcomes"]["sqrt-tests"]["ok"]


MIMETYPES = {"imports": [["mimetypes", "mimetypes", None], *MATH], "packages": ["math", "mimetypes"]}


def guarded_with_mimetypes(*cells):
    """As `guarded`, with the standard library's mimetypes watched: its `init()` rebinds module globals
    (`global inited, _db, ...`) the way torch._functorch.predispatch rebinds DECOMPOSITIONS_LOADED."""
    job = {"cells": [{"source": "import math, mimetypes"}, *cells], **MIMETYPES, "helpers": []}
    done = subprocess.run(
        [sys.executable, str(DRIVER)], input=json.dumps(job), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_library_rebinding_its_own_globals_is_not_tampering():
    report = guarded_with_mimetypes(code("mimetypes.init()\nmimetypes.guess_type('a.txt')"), SQRT_TEST)
    assert report["flags"] == [] and report["outcomes"]["sqrt-tests"]["ok"], report


def test_the_notebook_rebinding_a_library_global_is_still_tampering():
    """A name the library's own code never stores, or one it stores given a value the notebook made. (The
    notebook storing a plain value in a name the library stores lazily is left to the static scan: it flags
    `torch....X = ...`, `setattr` and `vars(...)[...] = ...`.)"""
    report = guarded_with_mimetypes(code("mimetypes.guess_all_extensions = len"), SQRT_TEST)
    assert flagged(report, "mimetypes: rebinds guess_all_extensions"), report
    report = guarded_with_mimetypes(code("vars(mimetypes)['types_map'] = lambda *a: None"), SQRT_TEST)
    assert flagged(report, "mimetypes: rebinds types_map"), report
    report = guarded_with_mimetypes(code("vars(mimetypes)['guess_type'] = print"), SQRT_TEST)
    assert flagged(report, "mimetypes: rebinds guess_type"), report


SHADOWING = [
    "for zip in [lambda *a: iter(())]:\n    pass",
    "import contextlib\nwith contextlib.nullcontext(lambda v: 0) as abs:\n    pass",
    "(sum := lambda v: 0)",
    "def f():\n    global len\n    len = lambda v: 0\nf()",
    "globals().update(max=lambda *a: 0)",
    "def g():\n    global min\n    from operator import add as min\ng()",
    "math = None",
]
BUILTINS_TEST = {
    "test": "builtins-tests",
    "source": "assert list(zip([1], [2])) == [(1, 2)] and abs(-2) == 2 and sum([1, 2]) == 3\n"
    "assert len('ab') == 2 and max(1, 2) == 2 and min(1, 2) == 1 and math.sqrt(4) == 2",
}


def test_a_global_named_like_a_builtin_never_reaches_a_test_and_is_flagged():
    """Every route that binds a notebook global (for, with, walrus, `global` in a function, globals().update,
    an import inside a function): the test still sees the real builtins and the lesson's `math`."""
    report = guarded(*map(code, SHADOWING), BUILTINS_TEST)
    assert report["outcomes"]["builtins-tests"]["ok"], report
    for name in ("zip", "abs", "sum", "len", "max", "min"):
        assert flagged(report, f"the notebook's global '{name}' shadows the builtin {name}"), (name, report)
    assert flagged(report, "the notebook's global 'math' shadows the lesson's math"), report


def test_a_test_sees_only_the_notebook_names_it_uses():
    report = guarded(
        code("answer = 4\nunrelated = 5"),
        {"test": "only-tests", "source": "assert answer == 4\nassert 'unrelated' not in globals()"},
    )
    assert report["outcomes"]["only-tests"]["ok"], report
