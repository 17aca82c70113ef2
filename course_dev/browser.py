"""A real JupyterLab in headless Chromium, for the browser tests (tests/test_browser.py, test_lessons.py) and the
benchmark's action-to-paint measurement (course_dev/paint.py).

`JupyterLab` starts `jupyter lab` on 127.0.0.1 (free port, random token, scratch config, runtime,
settings and workspace folders) with a temporary copy of the course as its root, and always stops it.
`NotebookPage` opens one notebook in its own workspace and does what a student does: Run All, run
cell by cell, type into a slider's readout, drag a handle.

The system Chromium is used (Playwright's own browser download is not available here):
`apt-get install chromium`. ATTENTION_COURSE_CHROMIUM=<path> points at another binary (a missing path
makes the tests skip, which is how to check the skip); with CI=true a missing browser is a failure.
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

import nbformat

from course_dev.env import with_this_python
from course_dev.paths import ROOT

CHROMIUM = os.environ.get("ATTENTION_COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "artifacts" / "browser"
RUN_TIMEOUT_MS = 120_000  # Run All of one notebook (budget 15 s, the capstone 30 s, on a busy machine)
REDRAW_TIMEOUT_MS = 30_000  # one explorer redraw after a change
HOW_TO_ENABLE = (
    "install Debian's Chromium (`sudo apt-get install chromium`, giving /usr/bin/chromium) "
    "or set ATTENTION_COURSE_CHROMIUM to a Chromium binary; CI=true makes this a failure"
)


def _ephemeral_low():
    """The first port of the range the kernel hands out for bind(0) and outgoing connections (Linux: 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(count=1):
    """A loopback port P such that P .. P+count-1 are free (a hub takes three in a row), chosen at random below the
    ephemeral range: the kernels, browsers and clients started beside a test take their ports from that range, so
    none of them can take a server's port between this check and the server binding it (a hub once failed to start
    with "Address already in use" on its second port during a full run)."""
    low = _ephemeral_low()
    first, last = (10_000, low - count) if low - count > 10_000 else (1024, 65_536 - count)  # else: anywhere
    for _ in range(500):
        port = random.randrange(first, last)
        if all(_port_free(p) for p in range(port, port + count)):
            return port
    raise RuntimeError(f"no {count} free loopback ports in a row between {first} and {last + count}")


# Settings for the scratch JUPYTERLAB_SETTINGS_DIR: no news pop-up over the notebook.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False}
}


class JupyterLab:
    """`with JupyterLab() as lab:` → lab.url(path) opens a file of the course copy in the browser."""

    def __init__(self, timeout=90):
        self.timeout = timeout
        self.token = os.urandom(16).hex()
        self.port = free_port()
        self.proc = None

    def __enter__(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="attention_lab_"))
        self.root = self.tmp / "course"
        self.root.mkdir()
        for name in ("solutions", "notebooks", "attention_course", "tools"):  # tools/student: Validate's settings
            shutil.copytree(ROOT / name, self.root / name, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
        shutil.copy(ROOT / "nbgrader_config.py", self.root)
        (self.root / "autograde").mkdir()
        dirs = {
            key: self.tmp / key.lower()
            for key in (
                "JUPYTER_CONFIG_DIR",
                "JUPYTER_RUNTIME_DIR",
                "JUPYTERLAB_SETTINGS_DIR",
                "JUPYTERLAB_WORKSPACES_DIR",
            )
        }
        for path in dirs.values():
            path.mkdir()
        for name, values in LAB_SETTINGS.items():
            target = dirs["JUPYTERLAB_SETTINGS_DIR"] / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values))
        env = with_this_python(dict(os.environ, **{k: str(v) for k, v in dirs.items()}))  # kernels: this venv
        command = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self.log = open(self.tmp / "server.log", "w")
        self.proc = subprocess.Popen(
            command, cwd=self.root, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer /api/status in {self.timeout} s:\n{self.log_tail()}")

    def api(self, path, method="GET"):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            return json.loads(body) if body else None

    def shutdown_kernels(self):
        for kernel in self.api("kernels"):
            try:
                self.api(f"kernels/{kernel['id']}", method="DELETE")
            except OSError:
                pass

    def url(self, path, workspace, app="lab"):
        """A URL that opens `path` (relative to the course) alone, in a fresh workspace."""
        if app == "notebook":
            return f"http://127.0.0.1:{self.port}/notebooks/{path}?token={self.token}"
        return f"http://127.0.0.1:{self.port}/lab/workspaces/{workspace}/tree/{path}?token={self.token}"

    def log_tail(self, lines=30):
        self.log.flush()
        return "\n".join((self.tmp / "server.log").read_text(errors="replace").splitlines()[-lines:])

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=15)
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return False


# --- in the page ------------------------------------------------------------------------------

# Every code cell has run ([n]: prompts, none pending) and the kernel is idle.
ALL_RAN_JS = """codeCells => {
  const kernel = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt'));
  return kernel && kernel.getAttribute('data-status') === 'idle' && prompts.length >= codeCells
         && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
}"""

# Run All has stopped short: the kernel is idle, nothing is queued or running, and some code cell never ran.
STALLED_JS = r"""() => {
  const kernel = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt'))
    .map(p => p.textContent.trim());
  return !!kernel && kernel.getAttribute('data-status') === 'idle' && !prompts.includes('[*]:')
         && prompts.some(p => !/^\[\d+\]:$/.test(p));
}"""

STATE_JS = """() => 'kernel ' + (document.querySelector('.jp-Notebook-ExecutionIndicator') || {getAttribute: () => '?'})
  .getAttribute('data-status') + '; prompts ' + Array.from(document.querySelectorAll(
  '.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')).map(p => p.textContent.trim()).join(' ') + '; dialogs '
  + Array.from(document.querySelectorAll('.jp-Dialog')).map(d => d.innerText.slice(0, 200)).join(' | ')"""

DIALOGS_JS = "() => Array.from(document.querySelectorAll('.jp-Dialog')).map(d => d.innerText.trim().slice(0, 300))"

STDERR_JS = """() => Array.from(document.querySelectorAll(
    '.jp-Notebook .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
  .map(e => e.textContent.trim().slice(0, 300))"""

# Each explorer: its VBox (controls on top, an Output below), found from its controls.
EXPLORERS_JS = """() => {
  const boxes = [];
  for (const control of document.querySelectorAll('.jp-Notebook .widget-slider, .jp-Notebook .widget-dropdown')) {
    const box = control.closest('.widget-vbox');
    if (box && box.querySelector('.widget-output') && !boxes.includes(box)) boxes.push(box);
  }
  return boxes.length;
}"""


class NotebookPage:
    """One notebook open in its own page and workspace."""

    def __init__(self, browser, lab, path, app="lab", wait_for_kernel=True):
        self.lab, self.path = lab, path
        cells = nbformat.read(str(lab.root / path), as_version=4).cells  # attached lazily: wait for all of them
        self.n_cells, self.n_code = len(cells), sum(c.cell_type == "code" for c in cells)
        self.page = browser.new_page(viewport={"width": 1280, "height": 800})  # a laptop, file browser open
        self.page_errors, self.dialogs = [], []
        self.page.on("pageerror", lambda error: self.page_errors.append(str(error)[:300]))
        workspace = re.sub(r"\W", "-", f"{app}-{path}")
        self.page.goto(lab.url(path, workspace, app), wait_until="domcontentloaded")
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        self.sessions = []
        if wait_for_kernel:
            self.wait_for_idle_kernel()
            self.sessions = self._new_sessions()

    def wait_for_idle_kernel(self, seconds=60):
        """Wait until the kernel is idle, accepting a dialog on the way (a kernel that could not start on a
        busy machine leaves "Select Kernel")."""
        deadline = time.monotonic() + seconds
        while not self.page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").count():
            if time.monotonic() > deadline:
                raise AssertionError(f"the kernel was not idle after {seconds} s: {self.state()}")
            if self.page.evaluate(DIALOGS_JS):
                self.close_dialogs()
            time.sleep(0.2)

    claimed = set()  # kernel sessions that belong to some page (two pages may show the same file)

    def _new_sessions(self):
        ids = [s["id"] for s in self.lab.api("sessions") if s.get("path") == self.path and s["id"] not in self.claimed]
        self.claimed.update(ids)
        return ids

    def close(self):
        """Close the page and shut down this notebook's kernel (other pages keep theirs)."""
        if not self.page.is_closed():
            self.page.close()
        for session in self.sessions or self._new_sessions():
            try:
                self.lab.api(f"sessions/{session}", method="DELETE")
            except OSError:
                pass
        self.sessions = []

    def menu(self, top, item):
        self.page.get_by_role("menuitem", name=top, exact=True).click()
        self.page.get_by_role("menuitem", name=item, exact=True).click()

    def run_all(self):
        """Run → Run All Cells, then wait until every code cell has run and the kernel is idle."""
        self.start_run_all()
        return self.wait_run_all()

    def start_run_all(self):
        """Click into the notebook (so it is JupyterLab's current widget), then Run → Run All Cells."""
        self.run_started = time.perf_counter()
        self.request_run_all()

    def request_run_all(self):
        self.close_dialogs()
        self.page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").click()
        self.menu("Run", "Run All Cells")

    def close_dialogs(self):
        """Accept any JupyterLab dialog ("Kernel Restarting" after a kernel died, "Select Kernel" when a session
        is lost), and say so: a dialog over the notebook swallows every click. Returns the dialogs' texts."""
        texts = []
        for _ in range(5):  # closing one may show the next
            shown = self.page.evaluate(DIALOGS_JS)
            if not shown:
                break
            texts.append(shown[0])
            warnings.warn(f"{self.path}: JupyterLab showed a dialog, accepted: {shown[0]!r}", stacklevel=2)
            dialog = self.page.locator(".jp-Dialog").first
            accept = dialog.locator(".jp-Dialog-button.jp-mod-accept")
            (accept if accept.count() else dialog.locator(".jp-Dialog-button").last).click()
            time.sleep(0.5)
        self.dialogs += texts
        return texts

    def wait_run_all(self):
        """Wait for the Run All started by start_run_all; return the seconds since it started.

        A click that reached the menu before the notebook had focus runs nothing, or only the first cell
        (the kernel goes idle with cells never run); a kernel that died leaves a dialog and cells never run.
        Run All is then asked for again, twice at most, after closing any dialog (with a warning)."""
        deadline, retries, idle_since = time.monotonic() + RUN_TIMEOUT_MS / 1000, 2, None
        while time.monotonic() < deadline:
            if self.page.evaluate(ALL_RAN_JS, self.n_code):
                return time.perf_counter() - self.run_started
            stalled = self.page.evaluate(STALLED_JS)
            idle_since = (idle_since or time.monotonic()) if stalled else None
            if self.page.evaluate(DIALOGS_JS):
                self.close_dialogs()
            if idle_since and time.monotonic() - idle_since >= 5 and retries:
                retries, idle_since = retries - 1, None
                self.request_run_all()
            time.sleep(0.2)
        raise AssertionError(f"Run All did not finish in {RUN_TIMEOUT_MS / 1000:.0f} s: {self.state()}")

    def state(self):
        """Kernel status and prompts, for failure messages; also saves a screenshot."""
        shot = ARTIFACTS / f"failure_{re.sub(r'[^A-Za-z0-9]+', '_', self.path)}.png"
        self.page.screenshot(path=str(shot))
        return self.page.evaluate(STATE_JS) + f"; screenshot {shot}"

    def run_cell_by_cell(self):
        """Shift-Enter through every cell from the top, as a student does (Run All stops at the first
        exercise that raises NotImplementedError; running cell by cell goes on)."""
        start = time.perf_counter()
        cells = self.page.locator(".jp-Notebook .jp-Cell")
        self.page.wait_for_function(
            "n => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n", arg=self.n_cells, timeout=60_000
        )
        cells.first.locator(".jp-InputPrompt").click()  # select the first cell (command mode)
        self.page.keyboard.press("Escape")
        for index in range(self.n_cells):
            cell = cells.nth(index)
            is_code = "jp-CodeCell" in (cell.get_attribute("class") or "")
            self.page.keyboard.press("Shift+Enter")
            if is_code:
                cell.locator(".jp-InputArea-prompt").filter(has_text=re.compile(r"^\[\d+\]:$")).wait_for(
                    timeout=RUN_TIMEOUT_MS
                )
        self.page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status=idle]", timeout=RUN_TIMEOUT_MS)
        return time.perf_counter() - start

    def stderr_outputs(self):
        return self.page.evaluate(STDERR_JS)

    def explorers(self, expected):
        """Locators of every explorer's VBox, in notebook order, once `expected` of them have rendered."""
        try:
            self.page.wait_for_function(f"() => ({EXPLORERS_JS})() >= {expected}", timeout=REDRAW_TIMEOUT_MS)
        except Exception as error:
            raise AssertionError(
                f"{expected} explorer(s) expected, {self.page.evaluate(EXPLORERS_JS)} rendered: {self.state()}"
            ) from error
        count = self.page.evaluate(EXPLORERS_JS)
        boxes = (
            self.page.locator(".jp-Notebook .widget-vbox")
            .filter(has=self.page.locator(".widget-output"))
            .filter(has=self.page.locator(".widget-slider, .widget-dropdown"))
        )
        found = [boxes.nth(i) for i in range(boxes.count())]
        assert len(found) == count, f"found {len(found)} explorer boxes, expected {count}"
        return found


# --- what a reader with a screen reader or a small laptop gets -----------------------------------------------------

AXE_SCRIPT = ROOT / "tests" / "browser_deps" / "node_modules" / "axe-core" / "axe.min.js"
# The course's own output in a notebook page: rendered markdown (prose, hints, quizzes) and cell outputs (figures,
# explorers, printouts). JupyterLab's own chrome (menus, toolbars, prompts, code editors, the file browser) is not
# ours to fix and is left out.
COURSE_OUTPUT = [[".jp-Notebook .jp-MarkdownOutput"], [".jp-Notebook .jp-OutputArea"]]
# Every image in the course's output: its alt text, the width it is shown at, the width it was made for (the
# width attribute: figures are drawn at twice that density) and the smallest text size it carries, in points.
IMAGES_JS = """scope => Array.from(document.querySelectorAll(scope + ' img')).map(i => ({
  alt: i.getAttribute('alt'), shown: i.getBoundingClientRect().width, made: Number(i.getAttribute('width')),
  min_pt: Number(i.dataset.minPt || 0), src: (i.getAttribute('src') || '').slice(0, 30)}))"""


def axe_violations(page, include=COURSE_OUTPUT):
    """The accessibility violations axe-core finds in `include` (CSS selector lists), of any impact (minor too)."""
    if not AXE_SCRIPT.is_file():
        raise RuntimeError(f"{AXE_SCRIPT} is missing: `make test` installs it (tests/browser_deps/package.json)")
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_SCRIPT))
    return page.evaluate(
        """async include => (await axe.run({include}, {resultTypes: ['violations']})).violations.map(v => ({
             id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.html.slice(0, 200))}))""",
        include,
    )


def shown_images(page, scope=".jp-Notebook .jp-OutputArea-output"):
    """(alt, shown/made width ratio, smallest text as shown in points) of every image under `scope`."""
    return [
        (image["alt"], image["shown"] / (image["made"] or 1), image["min_pt"] * image["shown"] / (image["made"] or 1))
        for image in page.evaluate(IMAGES_JS, scope)
    ]


# What a keyboard reaches in an explorer, in reading order: slider handles, editable readouts, text boxes, drop-downs.
FOCUSABLE = ".noUi-handle, .widget-readout[contenteditable=true], input:not([type=hidden]), select, textarea, button"

# Every control of one explorer (the element passed), in reading order: its kind, the label of the widget it belongs
# to, its role and accessible name (aria-label, or the <label> that names it), what it announces (a handle's
# aria-valuetext), what its label or box shows (a handle: its readout, or a choice's typing box), its value, and a
# slider's track width.
CONTROLS_JS = (Path(__file__).parent / "js" / "controls.js").read_text()

# The focused element: is it `element`, and its outline (style, width, colour) and the background it is drawn on.
FOCUS_JS = """element => {
  const style = getComputedStyle(element);
  let back = element.parentElement, colour = 'rgb(255, 255, 255)';
  for (; back; back = back.parentElement) {
    const b = getComputedStyle(back).backgroundColor;
    if (b && b !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(b)) { colour = b; break; }
  }
  return {focused: document.activeElement === element, style: style.outlineStyle,
          width: parseFloat(style.outlineWidth), colour: style.outlineColor, background: colour};
}"""
