"""What a student feels: from a change typed into an explorer to the new image painted, measured in the page.

    python -m course_dev.bench --only paint [--lessons 04_softmax] [--changes 10]

For each lesson with an explorer: open its solution in JupyterLab in headless Chromium (course_dev.browser), Run All,
then, for each explorer, type values into its first control that can be typed into (a slider's readout, the box next
to a choice) and press Enter, `changes` times. In the page, a listener notes the time of the Enter key and a
MutationObserver the moment the new <img> arrives; `img.decode()` and the next animation frame mark it painted. In
the kernel, the explorer's own clock (Explorer.redraw_seconds) times its redraw (the student's code, drawing, PNG
encoding). What is left of the total is the round trip: the comm message to the kernel and the image back, and the
page's own work to put it in place.
"""

import json
import statistics

import nbformat

from course_dev import widget_driver
from course_dev.paths import solution_path

# Installed on one explorer box: remembers when Enter was pressed in it, and when each new image was painted.
PAINT_JS = """box => {
  // the output that shows the figure (an explorer may have another, for a note)
  const outputs = [...box.querySelectorAll('.widget-output')];
  const output = outputs.find(o => o.querySelector('img')) || outputs[0];
  window.acPaint = {times: [], start: null, last: null};
  box.addEventListener('keydown', event => { if (event.key === 'Enter') acPaint.start = performance.now(); }, true);
  new MutationObserver(async () => {
    const image = output.querySelector('img');
    if (!image || image === acPaint.last || acPaint.start === null) return;
    const start = acPaint.start;
    acPaint.last = image;
    acPaint.start = null;
    const arrived = performance.now();
    await image.decode();
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const painted = performance.now();
      acPaint.times.push({total: painted - start, arrived: arrived - start, decode: painted - arrived});
    }));
  }).observe(output, {childList: true, subtree: true});
}"""

TYPEABLE = ".widget-readout[contenteditable=true]:visible, .ac-type-entry input:visible"


def measure_explorer(page, box, changes):
    """Type `changes` values into the explorer's first typeable control; the page's timings, one dict per change."""
    box.scroll_into_view_if_needed()
    page.evaluate(PAINT_JS, box.element_handle())
    target = box.locator(TYPEABLE).first
    typed = target.evaluate("e => e.tagName === 'INPUT' ? e.value : e.textContent").strip()
    choice = target.evaluate("e => e.tagName === 'INPUT'")
    for k in range(changes):
        value = typed if k % 2 else _other_value(box, typed, choice)
        target.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(value)
        expected = k + 1
        page.keyboard.press("Enter")
        page.wait_for_function("n => acPaint.times.length >= n", arg=expected, timeout=30_000)
    return page.evaluate("() => acPaint.times")


def _other_value(box, typed, choice):
    """Another value for the control: for a choice, another option's label; for a number, a nearby one."""
    labels = box.locator(".ac-labels").first
    if choice and labels.count():
        options = json.loads(labels.get_attribute("data-labels"))
        return next(option for option in options if option != typed)
    if typed.lstrip("-").isdigit():  # an integer slider takes only whole numbers
        half = int(typed) // 2
        return str(half if half >= 1 else int(typed) + 1)
    number = float(typed)
    return f"{number * 0.5:.2f}" if number else "1"


def summary(lesson, number, page_times, kernel_seconds):
    def ms(values, q):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    totals = [t["total"] for t in page_times]
    kernel = [1000 * s for s in kernel_seconds[-len(page_times) :]]
    decode = [t["decode"] for t in page_times]
    return {
        "lesson": lesson,
        "explorer": number,
        "changes": len(totals),
        "median_ms": statistics.median(totals),
        "p90_ms": ms(totals, 0.9),
        "kernel_median_ms": statistics.median(kernel) if kernel else None,
        "decode_median_ms": statistics.median(decode),
        "round_trip_median_ms": statistics.median(totals)
        - statistics.median(decode)
        - (statistics.median(kernel) if kernel else 0),
    }


def bench_paint(names, changes, log):
    """Median and p90 of action-to-paint per explorer, with where the time goes."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    from course_dev.browser import CHROMIUM, CHROMIUM_ARGS, JupyterLab, NotebookPage

    rows = []
    with JupyterLab() as lab, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for lesson in names:
            nb = nbformat.read(str(solution_path(lesson)), as_version=4)
            nb.cells.insert(0, nbformat.v4.new_code_cell(widget_driver.RECORD_SOURCE))  # the kernel's clocks
            relative = f"solutions/{lesson}/{lesson}_paint.ipynb"  # beside the lesson's data files
            nbformat.write(nb, str(lab.root / relative))
            notebook = NotebookPage(browser, lab, relative)
            try:
                notebook.run_all()
                boxes = notebook.page.locator(".ac-explorer")
                for number in range(1, boxes.count() + 1):
                    try:  # one explorer that does not repaint is a row of the table, not the end of the bench
                        times = measure_explorer(notebook.page, boxes.nth(number - 1), changes)
                    except PlaywrightError as err:
                        rows.append({"lesson": lesson, "explorer": number, "failed": str(err).splitlines()[0]})
                        log(f"  paint: {lesson} #{number}: FAILED ({rows[-1]['failed']})")
                        continue
                    kernel = _kernel_redraws(notebook, number)
                    rows.append(summary(lesson, number, times, kernel))
                    log(f"  paint: {lesson} #{number}: median {rows[-1]['median_ms']:.0f} ms")
            finally:
                notebook.close()
        browser.close()
    return {"changes": changes, "explorers": rows}


def _kernel_redraws(notebook, number):
    """The explorer's own redraw times, read from the kernel by running a cell at the end of the notebook."""
    page = notebook.page
    source = f"print('ac-redraws', {widget_driver.__name__}.explorers()[{number - 1}].redraw_seconds)"
    code = f"import {widget_driver.__name__}\n{source}"
    last = page.locator(".jp-Notebook .jp-Cell").last
    last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new cell below
    page.keyboard.press("Enter")
    page.keyboard.type(code)
    page.keyboard.press("Shift+Enter")
    output = page.locator(".jp-OutputArea-output", has_text="ac-redraws").last
    output.wait_for(timeout=30_000)
    text = output.inner_text().split("ac-redraws", 1)[1]
    return [float(x) for x in text.strip(" []\n").split(",") if x.strip()]
