"""Explorers proven in a real browser: JupyterLab in headless Chromium does what a student does.

For the lessons of harness.BROWSER_LESSON_FOR_KIND, which together have every kind of control the
explorers use (test_lessons.py keeps that true, and drives every explorer of every lesson inside its
kernel), or for every lesson with ATTENTION_COURSE_BROWSER_LESSONS=all: open the solution, Run All,
then change every control by typing (the slider's editable readout, the typing box next to a
choice slider / drop-down, or a text box such as a prompt) and with the mouse (drag the handle, pick
from the list), and check that
the figure it drives is redrawn and that no error appears. A screenshot of every explorer after
every change goes to artifacts/browser/ (git-ignored). Also: the student notebook's explorers show
the "implement … first" note, the nbgrader Validate button is in the toolbar, and typing a value
works in Notebook 7 too (where the arrow keys move between cells instead of moving a slider).

Needs /usr/bin/chromium (`apt-get install chromium`) or ATTENTION_COURSE_CHROMIUM=<binary>; without
it the module is skipped, and under CI=true it fails. ATTENTION_COURSE_CHROMIUM=/nonexistent shows
the skip. Runs in one xdist group: one JupyterLab server and one browser for the whole module.
"""

import os
import re
import shutil
import time

import nbformat
import pytest
from browser_support import (
    ARTIFACTS,
    CONTROLS_JS,
    FOCUS_JS,
    FOCUSABLE,
    REDRAW_TIMEOUT_MS,
    JupyterLab,
    NotebookPage,
    axe_violations,
    require_browser,
    shown_images,
)
from harness import BROWSER_LESSON_FOR_KIND, LESSONS, expect_figure_rule, read, solution_path, student_path

from attention_course.plots import LEAST_SHOWN_PT, SHOWN_PT_SLACK, caption, contrast

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

EXPLORE_CALL = re.compile(r"(?<!def )\bexplore\(")


def explore_calls(path):
    return sum(len(EXPLORE_CALL.findall(c.source)) for c in read(path).cells if c.cell_type == "code")


WIDGET_LESSONS = [
    lesson
    for lesson in LESSONS
    if explore_calls(solution_path(lesson))
    and (os.environ.get("ATTENTION_COURSE_BROWSER_LESSONS") == "all" or lesson in BROWSER_LESSON_FOR_KIND.values())
]
# The student notebook opened in the browser: the lesson whose explorer has the most kinds of control (run cell by
# cell, it costs a third less than lesson 01, whose experiments train five models).
STUDENT_LESSON = (WIDGET_LESSONS or [None])[0]


@pytest.fixture(scope="session")  # not module: xdist may interleave modules on a worker
def lab():
    require_browser()
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    with JupyterLab() as server:
        yield server


@pytest.fixture(scope="session")
def browser(chromium, lab):
    return chromium


# Solution notebooks run with Run All, in test order; the last one is the first again, in Notebook 7.
RUN_ALL_PLAN = [(lesson, "lab") for lesson in WIDGET_LESSONS] + [(lesson, "notebook") for lesson in WIDGET_LESSONS[:1]]


@pytest.fixture(scope="session")  # not module: xdist may interleave modules on a worker
def solution_page(browser, lab):
    """`solution_page(lesson, app)`: the solution notebook after Run All, and the seconds it took.

    While one notebook's explorers are driven, the next notebook of RUN_ALL_PLAN already loads and
    runs in a second page (its own kernel), which keeps the two cores busy."""
    started = {}

    def start(key):
        if key not in started:
            lesson, app = key
            started[key] = NotebookPage(browser, lab, f"solutions/{lesson}/{lesson}.ipynb", app)
            started[key].start_run_all()

    def get(lesson, app="lab"):
        key = (lesson, app)
        start(key)
        following = RUN_ALL_PLAN[RUN_ALL_PLAN.index(key) + 1 :] if key in RUN_ALL_PLAN else []
        if following:
            start(following[0])
        return started[key], started[key].wait_run_all()

    yield get
    for page in started.values():
        page.close()


@pytest.fixture(scope="session")
def student_page(browser, lab):
    """STUDENT_LESSON's student notebook, opened once for the tests that look at it (a JupyterLab page costs Chromium
    about 6 CPU-seconds to load and draw)."""
    notebook = NotebookPage(browser, lab, f"notebooks/{STUDENT_LESSON}/{STUDENT_LESSON}.ipynb")
    yield notebook
    notebook.close()


@pytest.fixture
def open_notebook(browser, lab):
    pages = []

    def opener(path, app="lab", wait_for_kernel=True):
        pages.append(NotebookPage(browser, lab, path, app, wait_for_kernel))
        return pages[-1]

    yield opener
    for page in pages:
        page.close()


# --- reading and changing an explorer ------------------------------------------------------

# The figure as shown: its image and its alt text (a change may leave the pixels alone, e.g. top-k above the number of
# characters, but it is then said in the alt text and caption).
IMG_SRC_JS = """el => { const i = el.querySelector('.widget-output img');
                        return i ? i.getAttribute('src') + '|' + i.getAttribute('alt') : ''; }"""
REDRAWN_JS = f"""([el, before]) => ({IMG_SRC_JS})(el) !== '' && ({IMG_SRC_JS})(el) !== before"""
SLIDER_JS = """el => { const s = el.querySelector('.noUi-target').noUiSlider;
                       return {min: s.options.range.min, max: s.options.range.max, step: s.options.step,
                               value: Number(s.get())}; }"""


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:30] or "control"


def _rgb(css):
    """(r, g, b) in 0..1 of a CSS rgb()/rgba() colour."""
    return tuple(int(n) / 255 for n in re.findall(r"[\d.]+", css)[:3])


class ExplorerDriver:
    """Change one explorer's controls the way a student does and check each redraw."""

    def __init__(self, notebook, box, lesson, number):
        self.notebook, self.page, self.box = notebook, notebook.page, box
        self.name, self.lesson = f"{lesson}_explorer{number}", lesson
        self.handle = box.element_handle()
        self.changes = 0
        self.started, self.timings = None, []  # end-to-end: from a student's action to the new image shown

    def src(self):
        return self.handle.evaluate(IMG_SRC_JS)

    def expect_redraw(self, before, what):
        try:
            self.page.wait_for_function(REDRAWN_JS, arg=[self.handle, before], timeout=REDRAW_TIMEOUT_MS, polling=100)
        except Exception as error:
            raise AssertionError(
                f"{self.name}: the figure did not change after {what}; the explorer shows: "
                f"{self.box.text_content()[:300]!r}"
            ) from error
        if self.started is not None:
            self.timings.append((what, time.perf_counter() - self.started))
        text = self.box.text_content()
        assert "Your code raised" not in text and "Implement" not in text, f"{self.name} after {what}: {text[:300]}"
        assert not self.notebook.stderr_outputs(), f"{self.name} after {what}: {self.notebook.stderr_outputs()}"
        self.changes += 1
        self.box.screenshot(path=str(ARTIFACTS / f"{self.name}_{self.changes:02d}_{slug(what)}.png"))

    def type_into(self, target, text):
        target.click()
        self.started = time.perf_counter()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Enter")

    def drag(self, slider, fraction):
        handle = slider.locator(".noUi-handle").bounding_box()
        track = slider.locator(".noUi-base").bounding_box()
        y = handle["y"] + handle["height"] / 2
        self.page.mouse.move(handle["x"] + handle["width"] / 2, y)
        self.started = time.perf_counter()
        self.page.mouse.down()
        self.page.mouse.move(track["x"] + track["width"] * fraction, y, steps=6)
        self.page.mouse.up()

    def far_fraction(self, slider):
        """Drag to 10 % or 90 % of the track, whichever is farther from the handle."""
        handle = slider.locator(".noUi-handle").bounding_box()
        track = slider.locator(".noUi-base").bounding_box()
        position = (handle["x"] + handle["width"] / 2 - track["x"]) / track["width"]
        return 0.1 if position > 0.5 else 0.9

    def drive_number_slider(self, slider):
        """IntSlider / FloatSlider: type a value into the readout + Enter, then drag the handle."""
        label = slider.locator(".widget-label").inner_text().strip()
        readout = slider.locator(".widget-readout")
        assert readout.get_attribute("contenteditable") == "true", f"{self.name}: {label!r} readout is not editable"
        info = slider.evaluate(SLIDER_JS)
        steps = round((info["max"] - info["min"]) / info["step"])
        candidates = [info["min"] + round(steps * k) * info["step"] for k in (0.25, 0.75)]
        target = max(candidates, key=lambda v: abs(v - info["value"]))
        decimals = len(readout.inner_text().strip().partition(".")[2])
        text = f"{target:.{decimals}f}"
        before = self.src()
        self.type_into(readout, text)
        self.expect_redraw(before, f"typing {text} into {label}")
        assert readout.inner_text().strip() == text, f"{self.name}: {label} shows {readout.inner_text()!r}"

        before, shown = self.src(), readout.inner_text().strip()
        self.drag(slider, self.far_fraction(slider))
        self.expect_redraw(before, f"dragging {label}")
        assert readout.inner_text().strip() != shown, f"{self.name}: dragging {label} did not move it"

    def drive_typeable(self, control):
        """A choice slider or drop-down with its typing box: change it with the mouse, then type."""
        entry = control.locator(".ac-type-entry input")
        select = control.locator(".widget-dropdown select")
        label = control.locator(".widget-label").first.inner_text().strip()
        start = entry.input_value()
        before = self.src()
        if select.count():
            labels = select.locator("option").all_inner_texts()  # ipywidgets shows spaces as U+00A0
            other = next(text for text in labels if text.replace("\xa0", " ").strip() != start)
            self.started = time.perf_counter()
            select.select_option(label=other)
            self.expect_redraw(before, f"choosing {other.strip()} in {label}")
        else:
            self.drag(control.locator(".widget-slider"), self.far_fraction(control.locator(".widget-slider")))
            self.expect_redraw(before, f"dragging {label}")
        moved = entry.input_value()
        assert moved != start, f"{self.name}: the typing box of {label} still shows {start!r}"

        before = self.src()
        self.type_into(entry, start)
        self.expect_redraw(before, f"typing {start} into {label}")
        assert entry.input_value() == start, f"{self.name}: typing {start!r} into {label} gave {entry.input_value()!r}"

    def drive_plain_dropdown(self, control):
        select = control.locator("select")
        label = control.locator(".widget-label").inner_text().strip()
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        other = next(o for o in select.locator("option").all_inner_texts() if o.strip() != current.strip())
        before = self.src()
        self.started = time.perf_counter()
        select.select_option(label=other)
        self.expect_redraw(before, f"choosing {other} in {label}")

    def drive_text(self, control):
        """A text box such as a prompt (value sent on Enter): type a shorter text, then the original again."""
        entry = control.locator("input")
        label = control.locator(".widget-label").inner_text().strip()
        start = entry.input_value()
        for text in (start[: max(1, len(start) // 2)] if len(start) > 1 else start + start, start):
            before = self.src()
            self.type_into(entry, text)
            self.expect_redraw(before, f"typing {text!r} into {label}")
            assert entry.input_value() == text, f"{self.name}: {label} shows {entry.input_value()!r}, not {text!r}"

    def controls(self):
        return self.handle.evaluate(CONTROLS_JS, FOCUSABLE)

    def focus_ring(self, target, label):
        """The focused control shows an outline at least 2 px wide and 3:1 against what it is drawn on."""
        ring = target.evaluate(FOCUS_JS)
        assert ring["focused"], f"{self.name}: Tab did not reach {label!r} in reading order"
        colour, background = (_rgb(ring["colour"]), _rgb(ring["background"]))
        assert ring["style"] not in ("none", "hidden") and ring["width"] >= 2, f"{self.name}: {label!r} focus: {ring}"
        assert contrast(colour, background) >= 3, f"{self.name}: {label!r} focus outline {ring} is under 3:1"

    def announces_what_it_shows(self, index, what):
        """After a change, the handle of control `index` announces what its label shows (polled: the page's script
        updates it after the widget)."""
        try:
            self.page.wait_for_function(
                f"([el, focusable, i]) => {{ const c = ({CONTROLS_JS})(el, focusable)[i];"
                " return c.shows === null || c.says === c.shows; }",
                arg=[self.handle, FOCUSABLE, index],
                timeout=5_000,
            )
        except Exception as error:
            raise AssertionError(f"{self.name}: after {what}: {self.controls()[index]}") from error

    def drive_by_keyboard(self):
        """Plain keys only: focus the first control, then Tab through every control in reading order; on each, an
        arrow key (handles, drop-downs) or a typed value + Enter (readouts, typing boxes, text boxes) redraws the
        figure, and every handle then announces what its label shows."""
        targets = self.box.locator(FOCUSABLE)
        controls = self.controls()
        assert controls, f"{self.name}: nothing to reach with the keyboard"
        visible = [i for i in range(targets.count()) if targets.nth(i).is_visible()]
        assert len(visible) == len(controls), f"{self.name}: {len(visible)} visible, {len(controls)} listed"
        targets.nth(visible[0]).focus()
        for index in range(len(controls)):
            if index:
                self.page.keyboard.press("Tab")
            control = self.controls()[index]  # as it is now: a change before may have changed it
            target, label = targets.nth(visible[index]), control["label"]
            self.focus_ring(target, f"{label} ({control['kind']})")
            before = self.src()
            self.started = time.perf_counter()
            if control["kind"] in ("handle", "select"):
                key = ("ArrowLeft" if control["kind"] == "handle" else "ArrowUp") if control["at_end"] else None
                key = key or ("ArrowRight" if control["kind"] == "handle" else "ArrowDown")
                self.page.keyboard.press(key)
                what = f"pressing {key} on {label}"
            else:
                text = self.typed_value(control, target)
                self.page.keyboard.press("Control+A")
                self.page.keyboard.type(text)
                self.page.keyboard.press("Enter")
                what = f"typing {text} + Enter into {control['name']}"
            self.expect_redraw(before, what)
            self.announces_what_it_shows(index - 1 if control["kind"] == "readout" else index, what)

    def typed_value(self, control, target):
        """A value other than the current one: a readout's slider at a quarter or three quarters of its range, another
        option of a choice, a shorter (or doubled) text."""
        if control["kind"] == "readout":
            slider = target.locator("xpath=ancestor::div[contains(@class, 'widget-slider')][1]")
            info = slider.evaluate(SLIDER_JS)
            steps = round((info["max"] - info["min"]) / info["step"])
            candidates = [info["min"] + round(steps * k) * info["step"] for k in (0.25, 0.75)]
            target = max(candidates, key=lambda v: abs(v - info["value"]))
            decimals = len(control["value"].partition(".")[2])
            return f"{target:.{decimals}f}"
        if control["kind"] == "entry" and control["options"]:
            return next(o for o in control["options"] if o.strip() != control["value"].strip()).strip()
        start = control["value"]
        return start[: max(1, len(start) // 2)] if len(start) > 1 else start + start

    def check_accessible(self):
        """Every control has a role and a name saying what it sets: a handle is named after its slider and announces
        what its label shows (a readout's rounded value, a choice's option: never its position nor 1.0000000000000002),
        a readout is a text box "<label>, type a value", a typing box "<label>, or type a value", a drop-down or text
        box is named by its label. Every track is at least 150 px wide; the figure is shown at its size with its
        caption, the alt text's first sentence; axe finds no violation."""
        for control in self.controls():
            kind, label, name = control["kind"], control["label"], control["name"]
            assert control["role"] in {"handle": ("slider",), "select": ("combobox", "listbox")}.get(kind, ("textbox",))
            expected = {"readout": f"{label}, type a value", "entry": f"{label}, or type a value"}.get(kind, label)
            assert label and name == expected, f"{self.name}: {kind} named {name!r}, not {expected!r}: {control}"
            if kind == "handle":
                assert control["track"] >= 150, f"{self.name}: the track of {label!r} is {control['track']} px"
                assert control["says"] and not re.search(r"\d\.\d{5,}", control["says"]), control
                if control["shows"] is not None:
                    assert control["says"] == control["shows"], f"{self.name}: the handle announces {control}"
        for figure in self.box.locator("figure").all():
            alt = figure.locator("img").get_attribute("alt")
            assert figure.locator("figcaption").inner_text().strip() == caption(alt), f"{self.name}: caption vs {alt}"
        for alt, ratio, pt in shown_images(self.page, ".ac-explorer"):
            assert alt and ratio >= 0.9 and pt >= 8.95, f"{self.name}: {alt[:60]!r} shown at {ratio:.2f}, {pt:.1f} pt"
        violations = axe_violations(self.page, [[".ac-explorer"]])
        assert not violations, f"{self.name}: {violations}"

    def check_reading_at(self, width):
        """At a viewport `width` px wide (the file browser open): no text of the explorer's figure shows below
        LEAST_SHOWN_PT, and the controls wrap rather than clip."""
        self.page.set_viewport_size({"width": width, "height": 800})
        self.page.wait_for_timeout(300)
        self.box.scroll_into_view_if_needed()
        self.box.screenshot(path=str(ARTIFACTS / f"{self.name}_at_{width}px.png"))
        column = self.handle.evaluate("el => el.closest('.jp-OutputArea-output').clientWidth")
        with open(ARTIFACTS / "columns.txt", "a") as out:  # the notebook column's width, for plots.COLUMN_1024_PX
            out.write(f"{self.name} at {width} px: column {column} px\n")
        for alt, ratio, pt in shown_images(self.page, ".ac-explorer"):
            shown = f"{alt[:60]!r} shown at {ratio:.2f} of its size, {pt:.1f} pt (column {column} px)"
            assert pt >= LEAST_SHOWN_PT - SHOWN_PT_SLACK, f"{self.name} at {width} px: {shown}"
        clipped = self.handle.evaluate(
            "el => Array.from(el.querySelectorAll('.widget-hbox, .widget-inline-hbox'))"
            ".filter(b => b.scrollWidth > b.clientWidth + 1).length"
        )
        assert not clipped, f"{self.name} at {width} px: {clipped} control rows clipped"

    def drive_all(self):
        self.box.scroll_into_view_if_needed()
        assert self.src().startswith("data:image/png"), (
            f"{self.name}: no figure after Run All: {self.box.text_content()[:300]!r}"
        )
        self.box.screenshot(path=str(ARTIFACTS / f"{self.name}_00_initial.png"))
        typeable = self.box.locator(".ac-typeable")
        sliders = self.box.locator(".widget-slider:not(.ac-typeable .widget-slider)")
        dropdowns = self.box.locator(".widget-dropdown:not(.ac-typeable .widget-dropdown)")
        texts = self.box.locator(".widget-text:not(.ac-typeable .widget-text)")
        for i in range(sliders.count()):
            self.drive_number_slider(sliders.nth(i))
        for i in range(typeable.count()):
            self.drive_typeable(typeable.nth(i))
        for i in range(dropdowns.count()):
            self.drive_plain_dropdown(dropdowns.nth(i))
        for i in range(texts.count()):
            self.drive_text(texts.nth(i))
        assert self.changes >= 1, f"{self.name}: no control to change"


# --- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", WIDGET_LESSONS)
def test_every_explorer_responds_in_jupyterlab(lesson, solution_page, record_property):
    notebook, seconds = solution_page(lesson)
    record_property("notebook_seconds", (f"{lesson} (Chromium, Run All, next one overlapping)", seconds))
    assert not notebook.stderr_outputs(), f"Run All printed errors: {notebook.stderr_outputs()}"
    boxes = notebook.explorers(explore_calls(solution_path(lesson)))
    too_small = []
    for number, box in enumerate(boxes, 1):
        driver = ExplorerDriver(notebook, box, lesson, number)
        driver.drive_by_keyboard()
        driver.drive_all()
        driver.check_accessible()
        for width in (1024, 1280):  # every explorer is driven before a figure too wide for 1024 px fails the test
            try:
                driver.check_reading_at(width)
            except AssertionError as error:
                too_small.append(str(error).splitlines()[0])
            finally:
                notebook.page.set_viewport_size({"width": 1280, "height": 800})
        milliseconds = sorted(1000 * seconds for _, seconds in driver.timings)
        record_property(
            "browser_redraw_ms",
            (driver.name, milliseconds[len(milliseconds) // 2], milliseconds[-1], len(milliseconds)),
        )
    assert not notebook.page_errors, f"JavaScript errors in the page: {notebook.page_errors}"
    notebook.close()

    def readable():
        assert not too_small, "text too small as shown: " + "; ".join(too_small)

    expect_figure_rule("fits 1024 px", lesson, readable)


@pytest.mark.skipif(STUDENT_LESSON is None, reason="no lesson has an explorer yet")
def test_student_explorers_ask_for_the_exercise_first(student_page):
    notebook = student_page
    notebook.run_cell_by_cell()
    boxes = notebook.explorers(explore_calls(student_path(STUDENT_LESSON)))
    for number, box in enumerate(boxes, 1):
        box.scroll_into_view_if_needed()
        text = box.text_content()
        assert "Implement" in text and "first" in text, f"explorer {number} shows {text[:300]!r}"
        assert "Traceback" not in text and "Your code raised" not in text, text[:300]
        box.screenshot(path=str(ARTIFACTS / f"{STUDENT_LESSON}_student_explorer{number}.png"))
    explorer_cells = notebook.page.locator(".jp-Notebook .jp-CodeCell").filter(
        has=notebook.page.locator(".widget-vbox")
    )
    for i in range(explorer_cells.count()):
        errors = explorer_cells.nth(i).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        assert errors.count() == 0, f"an explorer cell shows an error: {errors.first.inner_text()[:300]}"


@pytest.mark.skipif(STUDENT_LESSON is None, reason="no lesson has an explorer yet")
def test_validate_button_is_in_the_notebook_toolbar(student_page):
    toolbar = student_page.page.locator(".jp-NotebookPanel-toolbar")
    toolbar.get_by_text("Validate", exact=True).wait_for(state="visible", timeout=30_000)


BIAS_MISSING = "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T)\n"  # Exercise 1.1, no b


@pytest.mark.skipif("01_why_attention" not in LESSONS, reason="lesson 01 is not in this course")
def test_validate_says_the_exercise_and_its_message_first(open_notebook, lab):
    """Validate on a notebook whose Exercise 1.1 forgets the bias: the dialog's first lines, visible at 1280×800
    without scrolling, name the exercise and the mistake (attention_course/validation.py)."""
    nb = read(student_path("01_why_attention"))
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "rnn-step":
            cell.source = BIAS_MISSING
    nbformat.write(nb, str(lab.root / "notebooks" / "01_why_attention" / "validate_me.ipynb"))
    notebook = open_notebook("notebooks/01_why_attention/validate_me.ipynb", wait_for_kernel=False)
    page = notebook.page
    page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click(timeout=30_000)
    message = page.locator(".jp-Dialog #validation-message")
    message.wait_for(state="visible", timeout=300_000)  # the notebook runs in the server first
    first = message.locator("pre").first
    text = first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "validate_dialog.png"))
    assert text.startswith("Exercise 1.1 — one step of an RNN: ") and "the bias b is missing" in text, text[:300]
    box, body = first.bounding_box(), page.locator(".jp-Dialog-body").bounding_box()
    assert box["y"] >= body["y"] and box["y"] + box["height"] <= min(body["y"] + body["height"], 800), (box, body)
    assert page.locator(".jp-Dialog-body").evaluate("el => el.scrollTop") == 0
    for pre in message.locator("pre").all():  # every line whole: the dialog does not wrap lines itself
        assert pre.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), pre.inner_text()[:300]
    page.keyboard.press("Escape")


@pytest.mark.skipif(not WIDGET_LESSONS, reason="no lesson has an explorer yet")
def test_typing_a_value_works_in_notebook_7(solution_page):
    """Notebook 7 takes the arrow keys on a focused slider; typing into the readout still works; its images carry
    their alt text too."""
    lesson = WIDGET_LESSONS[0]
    notebook, _ = solution_page(lesson, app="notebook")
    images = shown_images(notebook.page, ".jp-Notebook .jp-OutputArea-output")
    assert images and all((alt or "").strip() for alt, _, _ in images), "Notebook 7: an image without alt text"
    box = notebook.explorers(explore_calls(solution_path(lesson)))[0]
    driver = ExplorerDriver(notebook, box, lesson + "_notebook7", 1)
    box.scroll_into_view_if_needed()
    targets = box.locator(".widget-readout[contenteditable=true], .ac-type-entry input")
    assert targets.count(), "no control of the first explorer can be typed into"
    sliders = box.locator(".widget-slider:not(.ac-typeable .widget-slider)")
    if sliders.count():
        driver.drive_number_slider(sliders.first)
    else:
        driver.drive_typeable(box.locator(".ac-typeable").first)


def test_run_all_goes_on_after_the_kernel_dies(open_notebook, lab, tmp_path):
    """A kernel that dies during Run All leaves JupyterLab's "Kernel Restarting" dialog over the notebook;
    wait_run_all closes it (with a warning) and asks for Run All again."""
    marker = tmp_path / "died-once"
    nb = nbformat.v4.new_notebook(metadata=read(solution_path(STUDENT_LESSON)).metadata)  # its kernel: python3
    nb.cells = [
        nbformat.v4.new_code_cell(f"import os, pathlib\nmarker = pathlib.Path({str(marker)!r})"),
        nbformat.v4.new_code_cell("if not marker.exists():\n    marker.touch()\n    os._exit(1)"),
        nbformat.v4.new_code_cell("print('after the restart')"),
    ]
    nbformat.write(nb, str(lab.root / "dies_once.ipynb"))
    notebook = open_notebook("dies_once.ipynb")
    with pytest.warns(UserWarning, match="dialog"):
        notebook.run_all()
    assert marker.exists() and any("died" in text or "Restarting" in text for text in notebook.dialogs)
