"""Every lesson, executed for real: the solution runs clean, the student version fails only where it
should, and every exercise's tests catch the known mistakes while accepting correct variants."""

import contextlib
import runpy

import pytest
from conftest import lesson_params
from harness import (
    BROWSER_LESSON_FOR_KIND,
    CATALOGS,
    LESSONS,
    LiveKernel,
    describe,
    errors,
    exercises,
    grade_id,
    is_answer,
    is_test,
    load_catalog,
    nbgrader_meta,
    read,
    solution_path,
    stderr,
    student_path,
)

CODE_WRONG, CODE_RIGHT, QUIZ_WRONG, QUIZ_RIGHT = 4, 2, 2, 1
DRIVER = "__import__('course_dev.widget_driver').widget_driver"
EXPLORER_STATUSES = f"{DRIVER}.statuses()"


@pytest.fixture(scope="session")
def solved_kernels():
    """lesson -> a kernel that ran the solution notebook top to bottom, kept alive for the catalog tests.
    Session-scoped so that xdist interleaving tests of several lessons never runs a notebook twice."""
    with contextlib.ExitStack() as stack:
        cache = {}

        def get(lesson):
            if lesson not in cache:
                kernel = stack.enter_context(LiveKernel(solution_path(lesson)))
                kernel.seconds, kernel.lesson = kernel.run_all(), lesson
                cache[lesson] = kernel
            return cache[lesson]

        yield get


@pytest.fixture
def solved(lesson, solved_kernels):
    return solved_kernels(lesson)


@pytest.mark.parametrize("lesson", lesson_params())
def test_solution_runs_clean(solved, record_property):
    record_property("notebook_seconds", (f"solutions/{solved.lesson}", solved.seconds))
    problems = [
        f"cell {i}: {describe(c.outputs)}"
        for i, c in enumerate(solved.nb.cells)
        if c.cell_type == "code" and (errors(c.outputs) or stderr(c.outputs))
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lesson", lesson_params())
def test_solution_widgets_draw(solved):
    statuses = solved.value(EXPLORER_STATUSES)
    assert statuses, "every lesson has at least one explorer widget"
    assert set(statuses) == {"figure"}, statuses


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_control_of_every_explorer_redraws_it(solved):
    """Each control of each explorer, set twice to other values in its range: each change redraws the figure."""
    turns = max(solved.value(f"[len(e.controls) for e in {DRIVER}.explorers()]"))
    for report in solved.value(f"{DRIVER}.drive(changes={2 * turns}, warmup=0)"):
        assert report["missed"] == 0 and len(report["seconds"]) == 2 * turns, report
        assert report["statuses"] == ["figure"], report


@pytest.mark.parametrize("lesson", lesson_params())
def test_the_browser_suite_drives_this_lessons_kinds_of_control(solved):
    kinds = set(solved.value(f"{DRIVER}.control_kinds()"))
    unknown = kinds - set(BROWSER_LESSON_FOR_KIND)
    assert not unknown, f"no lesson of the browser suite has a {unknown}: add one to harness.BROWSER_LESSON_FOR_KIND"
    claimed = {kind for kind, lesson in BROWSER_LESSON_FOR_KIND.items() if lesson == solved.lesson}
    assert claimed <= kinds, f"harness.BROWSER_LESSON_FOR_KIND: {solved.lesson} has no {claimed - kinds}"


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_figure_has_alt_text(solved):
    """Every image a lesson shows (figures and explorers) says what it shows, for screen readers."""
    missing = [
        i
        for i, c in enumerate(solved.nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
        and not str(o.get("metadata", {}).get("image/png", {}).get("alt", "")).strip()
    ]
    assert not missing, f"image outputs without alt text in cells {missing}: show figures with plots.show(fig, alt=...)"
    alts = solved.value("__import__('course_dev.widget_driver').widget_driver.alt_texts()")
    assert all(a.strip() for a in alts), f"every explorer image has alt text: {alts}"


@pytest.mark.parametrize("lesson", lesson_params())
def test_claims_in_the_prose_hold(solved):
    """A catalog may define CLAIMS: test-only code, run in the solved kernel, that asserts what the lesson's prose
    says about its own measurements (kept out of the notebook, where a student's run could trip it)."""
    claims = runpy.run_path(str(CATALOGS / f"{solved.lesson}.py")).get("CLAIMS")
    if not claims:
        pytest.skip("no CLAIMS in this lesson's catalog")
    outputs = solved.run(claims)
    assert not errors(outputs) and not stderr(outputs), describe(outputs)


@pytest.mark.parametrize("lesson", lesson_params())
def test_catalog_covers_every_exercise(solved):
    catalog = load_catalog(solved.lesson)
    for answer, _, _ in exercises(solved.nb):
        gid = grade_id(answer)
        assert gid in catalog, f"{solved.lesson}: no catalog entry for exercise {gid}"
        quiz = gid.startswith("quiz-")
        need_wrong, need_right = (QUIZ_WRONG, QUIZ_RIGHT) if quiz else (CODE_WRONG, CODE_RIGHT)
        assert len(catalog[gid]["wrong"]) >= need_wrong, f"{gid}: at least {need_wrong} wrong implementations"
        assert len(catalog[gid]["right"]) >= need_right, f"{gid}: at least {need_right} correct variants"
    test_ids = {grade_id(c) for c in solved.nb.cells if is_test(c)}
    orphans = test_ids - {grade_id(t) for _, t, _ in exercises(solved.nb)}
    assert not orphans, f"test cells not named <answer id>-tests: {orphans}"


def _score_variant(kernel, answer, tests, source):
    """Run a variant in place of the answer, then the exercise's tests (hidden ones included).
    Returns None if the tests pass as nbgrader would score them (no error, no stderr), else the reason."""
    defined = kernel.run(source)
    assert not errors(defined), f"the variant itself does not run: {describe(defined)}"
    outputs = kernel.run(tests.source)
    kernel.run(answer.source)  # restore the reference answer
    return describe(outputs) or None


@pytest.mark.parametrize("lesson", lesson_params())
def test_wrong_implementations_lose_points(solved):
    catalog, failures = load_catalog(solved.lesson), []
    for answer, tests, _ in exercises(solved.nb):
        for name, (source, message) in catalog.get(grade_id(answer), {}).get("wrong", {}).items():
            reason = _score_variant(solved, answer, tests, source)
            if reason is None:
                failures.append(f"{grade_id(answer)} / {name}: the tests gave full marks")
            elif message and message not in reason:
                failures.append(f"{grade_id(answer)} / {name}: expected the message to say {message!r}, got {reason}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("lesson", lesson_params())
def test_correct_variants_keep_points(solved):
    catalog, failures = load_catalog(solved.lesson), []
    for answer, tests, _ in exercises(solved.nb):
        for name, source in catalog.get(grade_id(answer), {}).get("right", {}).items():
            reason = _score_variant(solved, answer, tests, source)
            if reason is not None:
                failures.append(f"{grade_id(answer)} / {name}: lost points: {reason}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("lesson", lesson_params())
def test_a_mistake_costs_points_in_one_exercise_only(solved):
    """Each code exercise answered with its catalog's first wrong implementation: the tests of every later code
    exercise (with the solution's answers, defined after it as a student's are) still give full marks, because
    they call the student's later functions with reference versions of the earlier ones."""
    catalog, items, problems = load_catalog(solved.lesson), list(exercises(solved.nb)), []
    code = [(i, a, t) for i, (a, t, _) in enumerate(items) if not grade_id(a).startswith("quiz-")]
    for i, answer, _ in code:
        wrong = catalog.get(grade_id(answer), {}).get("wrong", {})
        later = [(a, t) for j, a, t in code if j > i]
        if not wrong or not later:
            continue
        name, (source, _) = next(iter(wrong.items()))
        solved.run(source)
        for later_answer, later_tests in later:
            solved.run(later_answer.source)
            if reason := describe(solved.run(later_tests.source)):
                problems.append(f"{grade_id(answer)} / {name} costs points in {grade_id(later_answer)}: {reason}")
        for source in [answer.source] + [a.source for a, _ in later]:  # the solution again
            solved.run(source)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("lesson", lesson_params())
def test_student_notebook_fails_only_where_unanswered(lesson, record_property):
    """Released notebook, nothing answered: answer cells raise NotImplementedError, every test cell fails with
    NotImplementedError or AssertionError (so nbgrader scores a blank submission 0), every other cell (demos,
    widgets, experiments) runs clean."""
    with LiveKernel(student_path(lesson)) as kernel:
        record_property("notebook_seconds", (f"notebooks/{lesson} (unanswered)", kernel.run_all()))
        problems = []
        for i, cell in enumerate(kernel.nb.cells):
            if cell.cell_type != "code":
                continue
            allowed = {"NotImplementedError"} if is_answer(cell) else set()
            if is_test(cell):
                allowed = {"NotImplementedError", "AssertionError"}
            bad = [e for e in errors(cell.outputs) if e.ename not in allowed]
            if bad or stderr(cell.outputs):
                problems.append(f"cell {i} ({grade_id(cell) or 'demo'}): {describe(cell.outputs)}")
            elif is_test(cell) and not errors(cell.outputs):
                problems.append(f"cell {i} ({grade_id(cell)}): passes with nothing answered (a blank scores points)")
        assert not problems, "\n".join(problems)
        statuses = kernel.value(EXPLORER_STATUSES)
        assert statuses and set(statuses) == {"not implemented"}, statuses


@pytest.mark.parametrize("lesson", LESSONS)
def test_answer_cells_are_marked_for_nbgrader(lesson):
    nb = read(solution_path(lesson))
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code":
            assert "### BEGIN SOLUTION" in cell.source, f"{grade_id(cell)}: answer cell without solution markers"
        if meta:
            assert meta.get("schema_version") == 3 and meta.get("grade_id"), cell.source[:80]
