"""The browser tests' entry point: course_dev.browser (JupyterLab in headless Chromium), and whether it can run."""

import os

import pytest

from course_dev.browser import (  # noqa: F401 - the tests import these from here
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    CONTROLS_JS,
    FOCUS_JS,
    FOCUSABLE,
    HOW_TO_ENABLE,
    REDRAW_TIMEOUT_MS,
    JupyterLab,
    NotebookPage,
    axe_violations,
    free_port,
    shown_images,
)


def require_browser():
    """Skip (fail under CI=true) when Chromium or the playwright package is missing."""
    problem = None
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        problem = f"browser tests need Chromium at {CHROMIUM}, which is missing"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "browser tests need the `playwright` package (pinned in requirements.txt)"
    if problem:
        message = f"{problem}: {HOW_TO_ENABLE}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
