import pytest
from harness import LESSONS, MAKE_TEST_KEEPS


@pytest.fixture(scope="session")  # not module: xdist may interleave modules on a worker
def chromium():
    """One headless Chromium per worker. Playwright's sync API runs an event loop for as long as it is open,
    so every test that drives a browser must share this one rather than start its own."""
    from browser_support import CHROMIUM, CHROMIUM_ARGS, require_browser
    from playwright.sync_api import sync_playwright

    require_browser()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def lesson_params():
    """One parameter per lesson, grouped so that all tests of a lesson share one worker and one kernel."""
    return [pytest.param(lesson, marks=pytest.mark.xdist_group(lesson), id=lesson) for lesson in LESSONS]


# The longest xdist groups first, so that the two workers finish together instead of one idling at the end
# (pyproject's --no-loadscope-reorder: xdist would otherwise start with the groups that have the most tests).
# Later lessons take longer to run.
LONG_GROUPS = ["grading", "browser", "hub", "readme", "grading-alone", "bundle", *reversed(LESSONS)]


def pytest_collection_modifyitems(items):
    for item in items:  # the cases `make test` leaves to `make test-full`
        keeps = MAKE_TEST_KEEPS.get(getattr(item, "originalname", item.name))
        if keeps is not None and getattr(getattr(item, "callspec", None), "id", None) not in keeps:
            item.add_marker(pytest.mark.full)

    def rank(item):
        mark = item.get_closest_marker("xdist_group")
        group = (mark.args or [mark.kwargs.get("name")])[0] if mark else None
        return LONG_GROUPS.index(group) if group in LONG_GROUPS else len(LONG_GROUPS)

    items.sort(key=rank)  # stable: the order inside a group and among the rest is kept


def pytest_terminal_summary(terminalreporter):
    """Print the wall time of every notebook that the tests executed."""
    rows, redraws = [], []
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", []):
        for key, value in report.user_properties:
            if key == "notebook_seconds":
                rows.append(value)
            elif key == "browser_redraw_ms":
                redraws.append(value)
            elif key == "hub_validate_seconds":  # reported, never asserted: the machine may be loaded
                rows.append(("Validate pressed on the hub (lesson 01, unanswered)", value))
    if rows:
        terminalreporter.section("notebook wall times (2 cores, one kernel each)")
        for name, seconds in sorted(rows):
            terminalreporter.write_line(f"{name:<48} {seconds:6.1f} s")
    if redraws:  # reported, not asserted: the browser shares the machine with the kernel and the tests
        terminalreporter.section("explorers in Chromium: a student's action to the new image (median, max)")
        for name, median, worst, count in sorted(redraws):
            terminalreporter.write_line(f"{name:<48} {median:6.0f} ms {worst:6.0f} ms  ({count} changes)")
