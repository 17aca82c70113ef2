"""Unit tests of the static tamper rules (autograde/tamper.py), each on a notebook built in memory,
and of the run-time guard's report analysis (autograde/guard.py). Fast, no kernel."""

import hashlib
import hmac
import json

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograde import guard, tamper

PROTECTED = {"np", "checks", "torch", "abs", "float", "str", "rnn_step"}


def flags(*sources, rules=None):
    nb = new_notebook()
    nb.cells = [new_code_cell("import numpy as np\nfrom attention_course import checks")] + [
        new_code_cell(s) for s in sources
    ]
    return tamper.scan(nb, PROTECTED, rules or tamper.RULES)


def only(rule, source):
    return flags(source, rules=[rule])


CASES = [
    (tamper.RebindsModuleAttribute, "np.allclose = lambda *a, **k: True", "x = np.allclose(1, 1)"),
    (tamper.RebindsModuleAttribute, "import attention_course.checks as zz\nzz.expect_close = print", "zz = 1"),
    (tamper.WritesGlobalsDict, "globals()['np'] = None", "g = globals()"),
    (tamper.WritesGlobalsDict, "import sys\nsys.modules['attention_course.checks'] = None", "import sys"),
    (tamper.WritesGlobalsDict, "checks.__dict__['expect_close'] = print", "d = checks.__dict__"),
    (tamper.RebindsTestName, "abs = lambda x: 0", "def f():\n    abs = 1\n    return abs"),
    (tamper.RedefinesTestName, "def float(x):\n    return 64", "def my_float(x):\n    return 64"),
    (tamper.ImportRebindsBuiltin, "from numpy import abs", "from numpy import tanh"),
    (tamper.ImportRebindsBuiltin, "import fake_checks as checks", "from attention_course import checks"),
    (tamper.BindsTestNameAnyhow, "for abs in [len]:\n    pass", "for i in [abs]:\n    pass"),
    (
        tamper.BindsTestNameAnyhow,
        "if True:\n    for abs in [len]:\n        pass",
        "def f():\n    for abs in [1]:\n        pass",
    ),
    (tamper.BindsTestNameAnyhow, "with open('x') as abs:\n    pass", "with open('x') as handle:\n    pass"),
    (tamper.BindsTestNameAnyhow, "(abs := len)", "(total := len)"),
    (tamper.BindsTestNameAnyhow, "[(abs := v) for v in [1]]", "[abs(v) for v in [1]]"),
    (
        tamper.BindsTestNameAnyhow,
        "try:\n    1 / 0\nexcept Exception as abs:\n    pass",
        "try:\n    1\nexcept Exception as e:\n    pass",
    ),
    (tamper.BindsTestNameAnyhow, "def f():\n    global abs\n    abs = len", "def f():\n    abs = len\n    return abs"),
    (
        tamper.BindsTestNameAnyhow,
        "def f():\n    global abs\n    def abs(v):\n        return 0",
        "def f():\n    def abs(v):\n        return 0",
    ),
    (
        tamper.BindsTestNameAnyhow,
        "def f():\n    global abs\n    from numpy import abs",
        "def f():\n    from numpy import abs",
    ),
    (
        tamper.BindsTestNameAnyhow,
        "def f():\n    global np\n    for np in [1]:\n        pass",
        "def f():\n    global total\n    total = 1",
    ),
    (tamper.BindsTestNameAnyhow, "globals().update(abs=len)", "locals().get('x')"),
    (tamper.BindsTestNameAnyhow, "match 1:\n    case abs:\n        pass", "match 1:\n    case value:\n        pass"),
    (tamper.DynamicCall, "exec('x = 1')", "x = 1"),
    (tamper.DynamicCall, "setattr(checks, 'expect_close', print)", "getattr(checks, 'expect_close')"),
    (tamper.StoresModuleInternals, "checks.expect_close.__code__ = (lambda: 0).__code__", "c = print.__doc__"),
    (
        tamper.ImportModuleByName,
        "import importlib\nm = importlib.import_module('attention_course.checks')",
        "import importlib",
    ),
    (tamper.PatchesShell, "get_ipython().input_transformers_cleanup.append(lambda l: [])", "ip = get_ipython()"),
    (
        tamper.PatchesShell,
        "get_ipython().showtraceback = lambda *a, **k: None",
        "get_ipython().run_line_magic('matplotlib', 'inline')",
    ),
    (tamper.Introspection, "import gc\nobjs = gc.get_objects()", "import gc\ngc.collect()"),
    (tamper.Introspection, "import ctypes", "import math"),
    (
        tamper.PretendingValue,
        "class A(str):\n    def __eq__(self, o):\n        return True",
        "class A:\n    def __eq__(self, o):\n        return True",
    ),
]


@pytest.mark.parametrize("rule, bad, good", CASES)
def test_rule(rule, bad, good):
    assert only(rule, bad), f"{rule.__name__} must flag {bad!r}"
    assert not only(rule, good), f"{rule.__name__} must not flag {good!r}"


def test_every_rule_has_a_test():
    assert {rule.__name__ for rule, _, _ in CASES} == {r.__name__ for r in tamper.RULES}


def test_descriptions_name_the_cell_and_the_target():
    found = flags("np.allclose = lambda *a, **k: True\nchecks.expect_close = print")
    assert "cell 2: rebinds np.allclose" in found and "cell 2: rebinds checks.expect_close" in found


def test_test_cells_are_not_scanned_and_honest_code_is_not_flagged():
    nb = new_notebook()
    test = new_code_cell("checks.expect_close = print")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t", "points": 1}
    nb.cells = [
        new_code_cell("import numpy as np\nimport torch\nfrom attention_course import checks, plots"),
        new_code_cell("def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T + b)"),
        new_code_cell("X = torch.zeros(3)\nX[0] = 1\nfig = plots.heatmap\nvalues = [abs(v) for v in X]"),
        test,
    ]
    assert tamper.scan(nb, PROTECTED) == []


def test_test_names_reads_hidden_tests_too():
    nb = new_notebook()
    t = new_code_cell("checks.expect(abs(x) < 1, 'm')\n### BEGIN HIDDEN TESTS\nfloat(y)\n### END HIDDEN TESTS")
    t.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t", "points": 1}
    nb.cells = [t]
    assert {"checks", "abs", "float", "x", "y"} <= tamper.test_names(nb)


# --- the run-time guard's records ---------------------------------------------------------------


def records(*items, key=b"k" * 32, forge=False):
    lines = []
    for n, data in enumerate([{"kind": "hello", "key": key.hex()}, *items]):
        body = json.dumps(dict(data, seq=n + 1), sort_keys=True)
        mac = hmac.new(b"x" * 32 if forge and n else key, body.encode(), hashlib.sha256).hexdigest()
        lines.append(f"{mac} {body}")
    return lines


def test_guard_clean_run_has_no_flags_and_the_outcomes():
    lines = records(
        {"kind": "test", "nonce": "t1", "ok": True, "violations": [], "restored": []},
        {"kind": "test", "nonce": "t2", "ok": False, "ename": "AssertionError", "evalue": "off by 1"},
        {"kind": "check", "nonce": "c", "problems": []},
    )
    found = guard.analyse(lines, ["t1", "t2"], ["c"])
    assert found.flags == []
    assert found.outcomes["t1"].ok and not found.outcomes["t2"].ok and found.outcomes["t2"].evalue == "off by 1"


def test_guard_reports_problems_violations_and_missing_tests():
    lines = records(
        {"kind": "test", "nonce": "t1", "ok": True, "restored": ["attention_course.checks: rebinds expect_close"]},
        {"kind": "violation", "what": "gc.get_referents", "fatal": True},
        {"kind": "check", "nonce": "c", "problems": []},
    )
    found = guard.analyse(lines, ["t1", "t2"], ["c"])
    assert "at run time: attention_course.checks: rebinds expect_close (undone before the test ran)" in found.flags
    assert "at run time: gc.get_referents" in found.flags
    assert any("1 of 2 tests did not report" in f for f in found.flags)
    assert "t2" not in found.outcomes  # no outcome: that test scores 0 (execute.outputs_for)


def test_guard_detects_forged_or_missing_records():
    forged = guard.analyse(records({"kind": "test", "nonce": "t", "ok": True}, forge=True), ["t"], [])
    assert any("forged" in f for f in forged.flags) and "t" not in forged.outcomes
    assert guard.analyse([], ["t"], []).flags[0].startswith("the integrity guard did not report")


def test_guard_sources():
    src, nonce = guard.test_source()
    assert src.startswith(guard.TEST_MARKER) and nonce in src and src.count("\n") == 1
    src, nonce = guard.check_source()
    assert src.startswith(guard.CHECK_MARKER) and nonce in src
    compile(guard.setup_source(), "setup", "exec")
