"""Every lesson, executed for real: the solution runs clean, the student version fails only where it
should, and every exercise's tests catch the known mistakes while accepting correct variants."""

import contextlib
import copy
import html
import re
import runpy

import catalog_tools
import nbformat
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
    expect_figure_rule,
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

from attention_course.plots import COLUMN_PX, DENSITY, LEAST_SHOWN_PT, SHOWN_PT_SLACK, caption, widest_px

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
    shown = [
        grade_id(c) for c in solved.nb.cells if is_test(c) and any(o.output_type == "execute_result" for o in c.outputs)
    ]
    assert not shown, f"test cells that show a value (nbgrader would give partial credit): {shown}"


@pytest.mark.parametrize("lesson", lesson_params())
def test_solution_widgets_draw(solved):
    statuses = solved.value(EXPLORER_STATUSES)
    assert statuses, "every lesson has at least one explorer widget"
    assert set(statuses) == {"figure"}, statuses


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_control_of_every_explorer_redraws_it(solved):
    """Each control of each explorer, set twice to other values in its range: each change redraws the figure."""
    turns = max(solved.value(f"[len(e.controls) for e in {DRIVER}.explorers()]"))
    reports = solved.value(f"{DRIVER}.drive(changes={2 * turns}, warmup=0)")
    for report in reports:
        assert report["missed"] == 0 and len(report["seconds"]) == 2 * turns, report
        assert report["statuses"] == ["figure"], report

    def no_hidden_data():
        for report in reports:
            assert not report["problems"], f"explorer {report['explorer']} hides data: {report['problems']}"

    expect_figure_rule("hides no data", solved.lesson, no_hidden_data)


@pytest.mark.parametrize("lesson", lesson_params())
def test_figures_hide_no_data(solved):
    """No figure draws a series that shows nothing, and a log or ratio axis whose data crosses 1 labels both sides of
    1 (plots.figure_problems, run on every figure plots.show shows; explorers at every setting driven above)."""
    problems = solved.value("__import__('attention_course').plots.PROBLEMS")

    def no_hidden_data():
        assert not problems, "figures that hide data (alt text, what): " + "; ".join(map(str, problems))

    expect_figure_rule("hides no data", solved.lesson, no_hidden_data)


@pytest.mark.parametrize("lesson", lesson_params())
def test_the_browser_suite_drives_this_lessons_kinds_of_control(solved):
    kinds = set(solved.value(f"{DRIVER}.control_kinds()"))
    unknown = kinds - set(BROWSER_LESSON_FOR_KIND)
    assert not unknown, f"no lesson of the browser suite has a {unknown}: add one to harness.BROWSER_LESSON_FOR_KIND"
    claimed = {kind for kind, lesson in BROWSER_LESSON_FOR_KIND.items() if lesson == solved.lesson}
    assert claimed <= kinds, f"harness.BROWSER_LESSON_FOR_KIND: {solved.lesson} has no {claimed - kinds}"


def _images(nb):
    """(cell index, <img> attributes) of every image a notebook's outputs show, and the cells that show an image
    some other way (a bare PNG, which JupyterLab shows without alt text)."""
    images, bare = [], []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data or "image/svg+xml" in data:
                bare.append(i)
            for tag, shown in re.findall(
                r"(<img\b[^>]*>)(?:<figcaption[^>]*>(.*?)</figcaption>)?", str(data.get("text/html", ""))
            ):
                images.append((i, dict(re.findall(r'(\w+)="([^"]*)"', tag), caption=html.unescape(shown))))
    return images, bare


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_figure_has_alt_text_in_the_page(solved):
    """Every image a lesson shows (figures and explorers) is an <img> whose alt text says what it shows: JupyterLab
    ignores alt text kept in an image output's metadata, so figures are HTML outputs (plots.show)."""
    images, bare = _images(solved.nb)
    assert not bare, (
        f"cells {bare} show an image without alt text in the page: show figures with plots.show(fig, alt=…)"
    )
    assert images and all(attrs.get("alt", "").strip() for _, attrs in images), [
        i for i, a in images if not a.get("alt")
    ]
    alts = solved.value(f"{DRIVER}.alt_texts()")
    assert all(a.strip() for a in alts), f"every explorer image has alt text: {alts}"
    disagree = [(i, a["caption"], a["alt"][:80]) for i, a in images if a["caption"] != caption(html.unescape(a["alt"]))]
    assert not disagree, f"(cell, caption, alt) whose caption is not the alt text's first sentence: {disagree}"


@pytest.mark.parametrize("lesson", lesson_params())
def test_every_figure_fits_the_notebook_column(solved):
    """No figure is wider than JupyterLab's notebook column at 1280 px with the file browser open, so none is shrunk
    below 9 pt there (stack wide panels instead), and none is so wide that at 1024 px, shrunk to the column, its
    smallest text shows below 8 pt (plots.widest_px: 645 px with 9-pt text, 716 px with 10-pt). Explorers are checked
    by the browser suite."""
    expect_figure_rule("fits 1024 px", solved.lesson, lambda: _figures_fit(solved))


def _figures_fit(solved):
    images, _ = _images(solved.nb)
    wide = [
        (i, int(a["width"]), float(a.get("data-min-pt", 9)))
        for i, a in images
        if int(a.get("width", 0)) > widest_px(float(a.get("data-min-pt", 9)))
    ]
    assert not wide, (
        f"(cell, width in px, smallest text in pt) too wide: at 1024 px its text would show below {LEAST_SHOWN_PT} pt "
        f"(or wider than the {COLUMN_PX}-px column at 1280): {wide}"
    )
    explorers = solved.value(f"[__import__('attention_course').plots.png_size(e.png)[0] for e in {DRIVER}.explorers()]")
    assert all(w / DENSITY <= COLUMN_PX for w in explorers), (
        f"explorer widths in px: {[w / DENSITY for w in explorers]}"
    )


@pytest.fixture(scope="session")
def reading_lab():
    """One JupyterLab per worker in which solved notebooks are opened as a reader sees them (no second run)."""
    from browser_support import JupyterLab, require_browser

    require_browser()
    with JupyterLab() as lab:
        yield lab


def _as_read(nb):
    """The solved notebook with its outputs, signed as trusted (as a run in the reader's own JupyterLab is), without
    the explorers' widget views (they need the live kernel; tests/test_browser.py drives them)."""
    from nbformat.sign import NotebookNotary

    nb = nbformat.from_dict(copy.deepcopy(nb))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [
                o for o in cell.outputs if "application/vnd.jupyter.widget-view+json" not in o.get("data", {})
            ]
    NotebookNotary().sign(nb)
    return nb


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("lesson", lesson_params())
def test_figures_reach_every_reader_in_jupyterlab_and_html(solved, reading_lab, chromium):
    """In JupyterLab at 1280 px with the file browser open: every image has its alt text in the page, is shown at
    least at 90 % of its size with no text under 9 pt (at 1024 px: no text under 8 pt), and axe-core finds no violation
    (minor ones included) in the course's output (browser_support.COURSE_OUTPUT). In nbconvert's HTML export (what
    feedback pages are made with) every image has its alt text too."""
    from browser_support import ARTIFACTS, NotebookPage, axe_violations, shown_images
    from nbconvert import HTMLExporter

    path = reading_lab.root / "read" / f"{solved.lesson}.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(_as_read(solved.nb), str(path))
    page = NotebookPage(chromium, reading_lab, f"read/{solved.lesson}.ipynb", wait_for_kernel=False)  # outputs only
    try:
        page.page.set_viewport_size({"width": 1280, "height": 800})
        page.page.wait_for_function(
            "n => document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img').length >= n",
            arg=len(_images(solved.nb)[0]),
            timeout=60_000,
        )
        page.page.wait_for_timeout(500)  # the last images settle into the column
        images = shown_images(page.page)
        assert images and all((alt or "").strip() for alt, _, _ in images), [alt for alt, _, _ in images]
        small = [(alt[:50], round(ratio, 2), round(pt, 1)) for alt, ratio, pt in images if ratio < 0.9 or pt < 8.95]
        assert not small, f"images shrunk (alt, shown/made, smallest text in pt as shown): {small}"
        violations = axe_violations(page.page)
        assert not violations, violations
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.page.screenshot(path=str(ARTIFACTS / f"{solved.lesson}_read_1280.png"))
        page.page.set_viewport_size({"width": 1024, "height": 768})  # a small laptop: shrunk, but never below 8 pt
        page.page.wait_for_timeout(500)
        least = LEAST_SHOWN_PT - SHOWN_PT_SLACK
        small_1024 = [(alt[:50], round(r, 2), round(pt, 1)) for alt, r, pt in shown_images(page.page) if pt < least]
        page.page.screenshot(path=str(ARTIFACTS / f"{solved.lesson}_read_1024.png"))
    finally:
        page.close()
    body, _ = HTMLExporter().from_notebook_node(_as_read(solved.nb))
    exported = re.findall(r"<img\b[^>]*>", body)
    assert exported and all(re.search(r'alt="[^"]+"', tag) for tag in exported), "nbconvert HTML: an image lacks alt"

    def readable_at_1024():
        assert not small_1024, (
            f"at 1024 px, text under {LEAST_SHOWN_PT} pt (alt, shown/made, smallest pt): {small_1024}"
        )

    expect_figure_rule("fits 1024 px", solved.lesson, readable_at_1024)


def _assert_claims_hold(kernel, lesson):
    catalog = runpy.run_path(str(CATALOGS / f"{lesson}.py"))
    claims = catalog_tools.CLAIMS / f"{lesson}.py"
    assert claims.is_file(), f"no claims for this lesson: write {claims}"
    outputs = kernel.run((catalog_tools.CLAIMS / "_tools.py").read_text() + "\n" + claims.read_text())
    assert not errors(outputs) and not stderr(outputs), describe(outputs)
    claimed = kernel.value("sorted(_claimed)")
    prose = [c.source for c in kernel.nb.cells if c.cell_type == "markdown"]
    missing = catalog_tools.unguarded(prose, claimed, catalog.get("NOT_MEASURED", {}))
    assert not missing, f"numbers in the prose that no claim asserts (claim them, or add to NOT_MEASURED): {missing}"


@pytest.mark.parametrize("lesson", lesson_params())
def test_claims_in_the_prose_hold(solved):
    """Every lesson has claims (tests/claims/<lesson>.py): test-only code, run in the solved kernel, that asserts what
    the lesson's prose, model answers and rubrics say about its own measurements (kept out of the notebook, where a
    student's run could trip it). Every number written in the prose is asserted there with `claim("0.13", value)`,
    or listed in the catalog's NOT_MEASURED with why (a parameter, a definition, a date)."""
    _assert_claims_hold(solved, solved.lesson)


# PyTorch picks its CPU kernels by the CPU's capability (AVX-512, AVX2, none), and a reduction's rounding depends on
# the kernel and on the thread count; training amplifies those last-digit differences. The solved kernels above run
# on this machine's best code path with one thread; these run every lesson again on two other paths (the second
# with two BLAS threads), so that no claim depends on the machine it was written on. The BLAS libraries choose their
# own kernels by CPU, whatever ATen does (MKL for torch's matrix products, oneDNN, OpenBLAS for numpy's), so each path
# sets theirs too: "avx2" is what an AVX2 machine without AVX-512, such as an AMD EPYC, runs in all four.
# (Two torch threads per kernel beside the suite's two workers on two cores made training cells run past their
# limit: torch keeps one thread, numpy's BLAS gets two.)
CPU_PATH_ONE_THREAD = {"ATTENTION_COURSE_THREADS": "1", "OMP_NUM_THREADS": "1"}
OTHER_CPU_PATHS = {
    "default-1thread": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "OPENBLAS_CORETYPE": "Nehalem",
        **CPU_PATH_ONE_THREAD,
    },
    "avx2-blas2threads": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "OPENBLAS_CORETYPE": "Zen",
        **CPU_PATH_ONE_THREAD,
        "OMP_NUM_THREADS": "2",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("cpu_path", list(OTHER_CPU_PATHS))
@pytest.mark.parametrize("lesson", lesson_params())
def test_claims_hold_on_other_cpu_code_paths(lesson, cpu_path):
    with LiveKernel(solution_path(lesson), timeout=600, env=OTHER_CPU_PATHS[cpu_path]) as kernel:
        kernel.run_all()
        _assert_claims_hold(kernel, lesson)


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
