"""Unit tests of the dependency analysis that decides which cells a grade depends on (autograde/prune.py), on
notebooks built in memory. Fast, no kernel. The proof that it never changes a grade, on every lesson's catalog,
is in tests/test_prune_equivalence.py (slow tier)."""

import ast
import json

import pytest
from harness import LESSONS, ROOT, read, solution_path, student_path
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograde import prune

IMPORTS = "import numpy as np\nimport torch\nimport matplotlib.pyplot as plt\nfrom attention_course import checks"


def answer(source, gid="ex"):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False, "grade_id": gid}
    return cell


def check(source, gid="ex-tests"):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": False, "grade": True, "locked": True, "grade_id": gid, "points": 1}
    return cell


def run(*cells, edited=()):
    """The plan for [imports, *cells]; the release is the same cells except those whose index (in `cells`) is in
    `edited` (the student changed them). Returns the indices (in `cells`) that are left out."""
    cells = [new_code_cell(IMPORTS), *cells]
    release = [c.source for i, c in enumerate(cells[1:]) if i not in edited] + [IMPORTS]
    plan = prune.plan(cells, {prune.fingerprint(s) for s in release})
    return [i - 1 for i in plan.skip if i]


def test_an_experiment_no_check_reads_is_left_out():
    assert run(
        answer("def f(x):\n    return 2 * x"), new_code_cell("y = f(3)\nprint(y)"), check("assert f(2) == 4")
    ) == [1]


def test_graded_cells_always_run_and_markdown_is_ignored():
    cells = [new_markdown_cell("# title"), answer("q1 = None"), check("checks.expect_number(q1, 'Q1')")]
    assert run(*cells) == []


def test_a_cell_defining_what_a_check_reads_runs():
    assert run(new_code_cell("N = 5"), answer("def f():\n    return N"), check("assert f() == 5")) == []


def test_a_function_body_reading_a_global_counts_at_call_time():
    cells = [new_code_cell("N = 5"), answer("def f():\n    return N"), new_code_cell("N = 6"), check("f()")]
    assert run(*cells) == []  # the second N = 6 is what f() reads: it runs, and so does the first (not killed)


def test_a_cell_the_student_edited_always_runs():
    # a helper the student defined inside an experiment cell and used in an answer: the edited cell runs
    cells = [new_code_cell("z = 1\ndef helper(x):\n    return x + 1"), answer("def f(x):\n    return helper(x)")]
    assert run(*cells, check("assert f(1) == 2"), edited={0}) == []
    # and an added cell too (not in the release at all)
    assert run(new_code_cell("z = 2"), new_code_cell("print('mine')"), check("pass"), edited={1}) == [0]


def test_whitespace_at_line_ends_is_not_an_edit():
    cells = [new_code_cell("x = 1  \n\n"), check("pass")]
    release = {prune.fingerprint(s) for s in ("x = 1", "pass", IMPORTS)}
    plan = prune.plan([new_code_cell(IMPORTS), *cells], release)
    assert 1 in plan.skip


def test_an_answer_reading_what_an_experiment_computed_keeps_the_experiment():
    cells = [new_code_cell("result = np.arange(4).sum()"), answer("q1 = result"), check("assert q1 == 6")]
    assert run(*cells) == []


def test_an_experiment_changing_an_object_a_check_reads_runs():
    cells = [new_code_cell("data = [1, 2]"), new_code_cell("data.append(3)"), check("assert len(data) == 3")]
    assert run(*cells) == []
    cells = [new_code_cell("data = [1, 2]"), new_code_cell("data[0] = 7"), check("assert data[0] == 7")]
    assert run(*cells) == []


def test_an_alias_made_in_another_cell_is_followed():
    cells = [
        new_code_cell("a = []\nbox = {'k': a}"),
        new_code_cell("box['k'].append(1)"),
        check("assert a == [1]"),
    ]
    assert run(*cells) == []


def test_a_function_that_mutates_a_global_keeps_its_callers():
    cells = [
        new_code_cell("cache = []\ndef remember(x):\n    cache.append(x)"),
        new_code_cell("remember(3)"),
        check("assert cache == [3]"),
    ]
    assert run(*cells) == []


def test_a_function_that_sets_items_of_a_global_keeps_its_callers_only_when_a_check_reads_it():
    define = new_code_cell("runs = {}\ndef record(seed):\n    runs[seed] = seed * 2")
    assert run(define, new_code_cell("record(3)"), check("assert runs[3] == 6")) == []
    assert run(define, new_code_cell("record(3)"), check("assert 1 + 1 == 2")) == [0, 1]
    # setting an attribute of a module, a function or a class: a change "may change" cannot follow, so callers run
    patch = new_code_cell("def patch():\n    np.pi = 3")
    assert run(patch, new_code_cell("patch()"), check("assert 1 + 1 == 2")) == []


def test_a_name_bound_earlier_in_the_same_with_loop_or_branch_is_the_cells_own():
    # `k` is read only after the cell itself bound it: the cell cannot change the check's `k`
    for body in ("with open('/dev/null') as f:\n    k = [1]\n    y = len(k)",
                 "for i in range(2):\n    k = [i]\n    y = k[0]",
                 "if True:\n    k = [1]\n    k.append(2)",
                 "try:\n    k = [1]\n    k.append(2)\nexcept ValueError:\n    pass"):  # fmt: skip
        cells = [new_code_cell("k = [5]"), answer("def f():\n    return k"), new_code_cell(body), check("f()")]
        assert 2 not in run(*cells), body
    # read before the cell binds it: the check's `k` may be changed, the cell runs
    appends = new_code_cell("with open('/dev/null'):\n    k.append(1)")
    cells = [new_code_cell("k = [5]"), answer("def f():\n    return k"), appends, check("f()")]
    assert run(*cells) == []


PACKAGE = new_code_cell("import attention_course as ac")
RESEED = "ac.reseed(3)\nassert torch.rand(1).item() >= 0"


def test_a_check_that_reseeds_first_does_not_need_earlier_draws():
    assert run(PACKAGE, new_code_cell("w = torch.randn(5)"), check(RESEED)) == [1]
    # reseeding later in the cell, or with a value computed at run time, is not reseeding first
    later = "x = torch.rand(1)\nac.reseed(3)"
    assert run(PACKAGE, new_code_cell("w = torch.randn(5)"), check(later)) == []
    computed = RESEED.replace("reseed(3)", "reseed(n)")
    assert run(PACKAGE, new_code_cell("n = 3\nw = torch.randn(5)"), check(computed)) == []


@pytest.mark.parametrize(
    "student",
    [
        "import attention_course as ac\nac.reseed = lambda seed: None",  # the package patched
        "ac = None",  # the name rebound
        "import attention_course as zz\ndef off():\n    zz.reseed = print",  # patched through another name
        "torch.manual_seed = print",  # what reseed calls, patched
    ],
)
def test_a_reseed_a_student_could_have_changed_does_not_count(student):
    assert 1 not in run(PACKAGE, new_code_cell("w = torch.randn(5)"), answer(student), check(RESEED))  # the draw runs


def test_a_call_into_code_the_analysis_cannot_follow_runs():
    student = answer("def f(x):\n    global hits\n    hits = x\n    return x")
    assert run(student, new_code_cell("f(3)"), check("assert f(1) == 1")) == []
    dynamic = answer("def f(x):\n    setattr(np, 'pi', 3)\n    return x")
    assert run(dynamic, new_code_cell("f(3)"), check("assert f(1) == 1")) == []


@pytest.mark.parametrize(
    "source",
    [
        "np.random.seed(1)",
        "x = np.random.rand(3)",
        "torch.manual_seed(0)",
        "w = torch.randn(3)",
        "layer = torch.nn.Linear(3, 3)",
        "import random\nrandom.random()",
    ],
)
def test_the_global_random_generators(source):
    # an experiment cell that consumes the global RNG before a check that relies on it runs
    assert run(new_code_cell(source), check("assert torch.rand(1).item() >= 0")) == []
    # after the last check that uses it, or before checks that do not, it may be left out
    assert run(check("assert torch.rand(1).item() >= 0"), new_code_cell(source), check("pass")) == [1]
    assert run(new_code_cell(source), check("assert 1 + 1 == 2")) == [0]


def test_own_generators_are_not_the_global_one():
    assert run(new_code_cell("g = np.random.default_rng(0)\nx = g.normal()"), check("torch.rand(1)")) == [0]


def test_a_check_calling_a_function_that_draws_counts_as_using_the_generator():
    cells = [answer("def init():\n    return torch.randn(2)"), new_code_cell("w = torch.randn(5)"), check("init()")]
    assert run(*cells) == []


@pytest.mark.parametrize(
    "source",
    [
        "torch.set_default_dtype(torch.float64)",
        "np.seterr(all='raise')",
        "import sys\nsys.setrecursionlimit(50)",
        "plt.rcParams['font.size'] = 3",
        "torch.set_num_threads(1)",
        "import warnings\nwarnings.filterwarnings('error')",
        "np.allclose = lambda *a, **k: True",
        "exec('x = 1')",
        "y = eval('1')",
        "globals()['x'] = 1",
        "from math import *",
        "%run other.ipynb",
        "%time x = 1",
        "!ls",
        "get_ipython().run_line_magic('time', 'x = 1')",
    ],
)
def test_module_state_magics_and_dynamic_code_always_run(source):
    assert run(new_code_cell(source), check("assert 1 + 1 == 2")) == []


def test_plotting_runs_only_when_a_check_reads_pyplot():
    cells = [new_code_cell("fig, ax = plt.subplots()\nax.plot([1, 2])")]
    assert run(*cells, check("assert 1 + 1 == 2")) == [0]
    assert run(*cells, check("assert len(plt.get_fignums()) == 1")) == []


def test_files_written_before_a_check_that_reads_files():
    cells = [new_code_cell("np.save('w.npy', np.ones(2))")]
    assert run(*cells, check("assert 1 + 1 == 2")) == [0]
    assert run(*cells, check("assert np.load('w.npy').sum() == 2")) == []


def test_a_check_that_rebinds_a_name_first_does_not_need_the_earlier_value():
    cells = [new_code_cell("_x = np.ones(3)"), check("_x = 2\nassert _x == 2")]
    assert run(*cells) == [0]
    # a value that could raise before it is bound: the earlier value might be the one read
    cells = [new_code_cell("_x = np.ones(3)"), check("_x = np.zeros(2)\nassert _x.sum() == 0")]
    assert run(*cells) == [0]  # read after its own statement bound it: the earlier cell is not needed
    cells = [new_code_cell("r = 1"), answer("r = compute()\nq = r")]
    assert run(*cells, check("assert r == 1")) == []  # if compute() raises, r is still 1


def test_the_annotation_lifts_only_the_random_generator_reason():
    heavy = f"{prune.ANNOTATION}\nw = torch.randn(1000)"
    assert run(new_code_cell(heavy), check("torch.rand(1)")) == [0]
    defines = f"{prune.ANNOTATION}\nw = torch.randn(1000)"
    assert run(new_code_cell(defines), check("assert w.numel() == 1000")) == []


def test_without_a_release_every_cell_runs():
    cells = [new_code_cell(IMPORTS), new_code_cell("y = 1"), check("pass")]
    assert prune.plan(cells, None).skip == []


def test_a_cell_that_does_not_parse_runs():
    assert run(new_code_cell("def (:"), check("pass")) == []


def test_facts_of_a_cell():
    f = prune.facts("import numpy as np\nfrom a.b import c as d\nx = np.ones(2)\nx[0] = 1\ndef g(y):\n    return y + z")
    assert f.imports == {"np": "numpy", "d": "a.b.c"}
    assert {"np", "d", "x", "g"} <= f.defs
    assert "z" in f.reads and "y" not in f.reads
    assert f.roots == {"x"}
    assert f.funcs["g"] == {"z"}
    assert not f.rng and not f.state


def test_the_annotation_check():
    heavy = new_code_cell(f"{prune.ANNOTATION}\nw = torch.randn(1000)")
    cells = [new_code_cell(IMPORTS), heavy, check("torch.rand(1)")]
    release = {prune.fingerprint(c.source) for c in cells}
    assert prune.check_annotations(cells, release) == []
    dead = [new_code_cell(IMPORTS), new_code_cell(f"{prune.ANNOTATION}\nw = 1"), check("pass")]
    assert "not needed" in prune.check_annotations(dead, {prune.fingerprint(c.source) for c in dead})[0]
    used = [new_code_cell(IMPORTS), new_code_cell(f"{prune.ANNOTATION}\nw = torch.randn(3)"), check("w.sum()")]
    assert "still runs" in prune.check_annotations(used, {prune.fingerprint(c.source) for c in used})[0]


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_marks_only_cells_the_mark_is_for(lesson):
    """The authoring check of `# autograde: independent` on every lesson (static: no kernel)."""
    solution = read(solution_path(lesson))
    release = prune.release_fingerprints(read(student_path(lesson)))
    assert prune.check_annotations(solution.cells, release) == []


def test_release_fingerprints_are_up_to_date():
    """notebooks/.release_cells.json (Validate's view of the release) matches the committed notebooks: run
    `python -m course_dev.release --fingerprints` (make release does it) after building notebooks."""
    from course_dev.release import FINGERPRINTS, fingerprints

    assert json.loads((ROOT / FINGERPRINTS).read_text()) == fingerprints(ROOT)


@pytest.mark.parametrize(
    "source",
    [
        "q1 = eval('measured')",
        "q1 = globals()['measured']",
        "q1 = _",
        "q1 = Out[3]",
        "import __main__\nq1 = __main__.measured",
        "def f():\n    return vars()\nq1 = 1",
        "q1 = [n for n in dir()]",
        "%time q1 = measured",
        "from math import *\nq1 = 1",
    ],
)
def test_an_answer_the_analysis_cannot_follow_runs_every_cell(source):
    cells = [new_code_cell("measured = 3"), new_code_cell("unused = 1"), answer(source), check("assert q1")]
    assert run(*cells) == []


def test_a_throwaway_underscore_is_not_the_history():
    cells = [new_code_cell("for _ in range(3):\n    pass\nunused = [0 for _ in range(2)]"), check("pass")]
    assert run(*cells) == [0]


def test_a_test_cell_reading_names_given_as_strings_counts_them_as_read():
    cells = [new_code_cell("d_k = 4"), new_code_cell("other = 1"), check("assert globals().get('d_k') == 4")]
    assert run(*cells) == [1]
    cells = [new_code_cell("d_k = 4"), answer("q = globals()['d_k']"), check("assert q")]
    assert run(*cells) == [], "in an answer (the student's code) it stops all pruning"


def test_a_left_out_cell_is_marked_with_the_note_as_nbformat_reads_it():
    from nbformat.v4 import new_notebook

    nb = new_notebook(cells=[new_code_cell(IMPORTS), new_code_cell("y = 1"), check("pass")])
    nb.cells[1].outputs = [{"output_type": "stream", "name": "stdout", "text": "stale"}]
    plan = prune.apply(nb, {prune.fingerprint(c.source) for c in nb.cells})
    cell = nb.cells[1]
    assert 1 in plan.skip and cell.outputs[0].output_type == "stream" and prune.NOTE in cell.outputs[0].text
    assert cell.metadata.autograde.not_run and prune.SKIP_TAG in cell.metadata.tags
    prune.apply(nb, None)  # nothing known: every mark is taken off again
    assert prune.SKIP_TAG not in nb.cells[1].metadata.tags and "autograde" not in nb.cells[1].metadata


def test_the_analysis_of_a_source_is_remembered_and_no_plan_changes_it():
    """A grading worker analyses the same release cells for every student: the Facts are remembered per source, and
    what `plan` adjusts for one notebook (a test cell reading names given as strings) is not seen by the next."""
    by_name = "assert globals().get('d_k') == 4"
    assert prune.facts(by_name).unfollowable
    assert run(new_code_cell("d_k = 4"), new_code_cell("other = 1"), check(by_name)) == [1]
    assert prune.facts(by_name).unfollowable and "d_k" not in prune.facts(by_name).reads
    assert prune.facts(by_name) is not prune.facts(by_name)
    tree = ast.parse("x = 'kept'\nprint(f'{x} text')")  # strings blanked for the patterns, then given back
    assert prune._code(tree) == "x = ''\nprint(f'{x}')" and ast.unparse(tree) == "x = 'kept'\nprint(f'{x} text')"


# --- what a hostile review found (2026-12-03): each of these once left out a cell a check depended on ------------
LATE = new_code_cell("SCALE = 3")  # an experiment that binds what a student's code reads later, when it is called


@pytest.mark.parametrize(
    "holder, call",
    [
        ("get = lambda: SCALE", "get()"),
        ("from functools import partial\ndef scale():\n    return SCALE\nget = partial(scale)", "get()"),
        ("class Notes:\n    def scale(self):\n        return SCALE\nnotes = Notes()", "notes.scale()"),
        ("class Box:\n    pass\nBox.f = lambda: SCALE", "Box.f()"),  # stored in an attribute
        ("gen = (SCALE for _ in range(3))", "next(gen)"),
    ],
    ids=["lambda", "partial", "object", "attribute", "generator"],
)
def test_code_held_in_a_value_reads_its_names_when_it_is_called(holder, call):
    assert run(new_code_cell(holder), LATE, answer(f"q = {call}"), check("assert q == 3")) == []


@pytest.mark.parametrize(
    "student",
    [
        "class Trace:\n    log = []\ndef f(x):\n    Trace.log.append(x)\n    return x",
        "def f(x):\n    f.seen.append(x)\n    return x\nf.seen = []",
        "def f(x, seen=[]):\n    seen.append(x)\n    return x",
    ],
    ids=["class-attribute", "function-attribute", "mutable-default"],
)
def test_state_kept_by_a_students_function_between_calls_makes_its_callers_run(student):
    counted = "q = len(Trace.log)" if "Trace" in student else "q = len(f.seen if hasattr(f, 'seen') else [])"
    cells = [answer(student), new_code_cell("for i in range(5):\n    f(i)"), answer(counted, "q"), check("q")]
    assert run(*cells) == []


@pytest.mark.parametrize(
    "draw",
    [
        "torch.ones(4).multinomial(2)",
        "torch.tensor([0.5]).bernoulli()",
        "torch.distributions.Normal(0.0, 1.0).sample()",
        "torch.nn.functional.gumbel_softmax(torch.zeros(3))",
        "torch.default_generator.initial_seed()",
    ],
)
def test_every_draw_from_the_global_generator_is_one(draw):
    assert run(new_code_cell(draw), answer("q = float(torch.rand(1))"), check("assert q >= 0")) == []


def test_a_name_bound_to_a_random_function_draws_where_it_is_read():
    cells = [new_code_cell("from numpy.random import standard_normal as gauss"), new_code_cell("gauss(3)")]
    assert run(*cells, answer("q = np.random.rand()"), check("assert q >= 0")) == []


@pytest.mark.parametrize(
    "source",
    [
        'q = getattr(f, "__globals__")["SCALE"]',
        'import builtins\nbuiltins.exec("q = SCALE")',
        'import operator\nq = operator.attrgetter("__glo" + "bals__")(f)["SCALE"]',
        'from IPython.core.interactiveshell import InteractiveShell\nq = InteractiveShell.instance().user_ns["SCALE"]',
        'import importlib\nq = importlib.import_module("__main__").SCALE',
        "class D:\n    def __del__(self):\n        EVENTS.append(1)\nEVENTS = []\nSCALE = D()\nq = 3",
        "q = f.__defaults__",
    ],
)
def test_a_student_reaching_names_past_the_analysis_runs_every_cell(source):
    cells = [new_code_cell("def f():\n    return 1"), LATE, answer(source), check("assert q")]
    assert run(*cells, edited=(2,)) == []


def test_the_stricter_rule_is_for_the_students_code_only():
    cells = [new_code_cell("def f():\n    return 1"), LATE, answer('q = getattr(f, "__name__")'), check("assert q")]
    assert run(*cells, edited=(2,)) == [] and run(*cells) == [1]  # in the release (the course's code): followed


def test_a_module_with_state_is_followed_under_any_name():
    cells = [new_code_cell("plt.figure()"), answer("import matplotlib.pyplot as pp\nq = len(pp.get_fignums())")]
    assert run(*cells, check("assert q")) == []


# --- a second hostile review, of the fixes above ------------------------------------------------------------------
@pytest.mark.parametrize(
    "student, counted",
    [
        ("def f(x):\n    f.calls += 1\n    return x\nf.calls = 0", "q = f.calls"),
        (
            "class Trace:\n    log = []\ndef f(x):\n    log = Trace.log\n    log.append(x)\n    return x",
            "q = len(Trace.log)",
        ),
        ("class Trace:\n    log = []\ndef f(x):\n    Trace().log.append(x)\n    return x", "q = len(Trace.log)"),
        ("import functools\n@functools.lru_cache\ndef f(x):\n    return x", "q = f.cache_info().hits"),
        (
            "class Trace:\n    log = []\n    def add(self, x):\n        self.log.append(x)\ndef f(x):\n"
            "    Trace().add(x)\n    return x",
            "q = len(Trace.log)",
        ),
        ("def f(x):\n    m = np\n    m.seen = x\n    return x", "q = np.seen"),
    ],
    ids=["own-attribute", "local-alias", "new-object", "lru-cache", "class-level-list", "module-alias"],
)
def test_more_state_a_students_function_keeps_makes_its_callers_run(student, counted):
    cells = [answer(student), new_code_cell("for i in range(5):\n    f(i)"), answer(counted, "q"), check("q")]
    assert run(*cells) == []


@pytest.mark.parametrize(
    "source",
    [
        'import pkgutil\nq = pkgutil.resolve_name("_" * 2 + "main" + "_" * 2 + ":SCALE")',
        'q = ("{0." + "_" * 2 + "globals" + "_" * 2 + "[SCALE]}").format(f)',
    ],
)
def test_more_names_given_as_strings_run_every_cell(source):
    cells = [new_code_cell("def f():\n    return 1"), LATE, answer(source), check("assert q")]
    assert run(*cells, edited=(2,)) == []


@pytest.mark.parametrize(
    "draw",
    [
        "torch.utils.data.random_split(range(10), [5, 5])",
        "list(torch.utils.data.DataLoader(range(10), shuffle=True))",
    ],
)
def test_data_splits_and_shuffled_loaders_draw_from_the_global_generator(draw):
    assert run(new_code_cell(draw), answer("q = float(torch.rand(1))"), check("assert q >= 0")) == []


def test_the_global_generator_under_another_name_is_one():
    cells = [new_code_cell("torch.rand(1)"), answer("gen = torch.default_generator"), answer("q = gen.seed()", "q")]
    assert run(*cells, check("assert q")) == []


def test_a_cell_too_deep_to_analyse_runs_every_cell_instead_of_crashing():
    deep = "q = " + " + ".join(["'x'"] * 2000)
    assert run(new_code_cell("y = 1"), answer(deep), check("assert q")) == []


def test_an_analysis_that_fails_runs_every_cell(monkeypatch):
    from nbformat.v4 import new_notebook

    nb = new_notebook(cells=[new_code_cell(IMPORTS), new_code_cell("y = 1"), check("pass")])
    monkeypatch.setattr(prune, "plan", lambda *a: 1 / 0)
    result = prune.apply(nb, {prune.fingerprint(c.source) for c in nb.cells})
    assert result.skip == [] and "ZeroDivisionError" in result.run[1]
    assert not any(prune.SKIP_TAG in c.metadata.get("tags", []) for c in nb.cells)


def test_a_callback_a_student_hands_to_a_module_with_state_is_followed():
    """`plots` keeps what it is given; a later cell of the release draws through it: the student's list may change."""
    hook = answer("from attention_course import plots\nseen = []\nplots.on_draw(seen.append)")
    cells = [hook, new_code_cell("from attention_course import plots\nplots.draw(1)"), answer("q = len(seen)", "q")]
    assert run(*cells, check("assert q"), edited=(0, 2)) == []
    assert run(*cells, check("assert q")) == [1], "the course's own cells: not linked through the module"
