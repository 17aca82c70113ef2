"""Step 4b, the sandboxed run: nbgrader's Execute preprocessor, with the kernel in the sandbox, the
tests run by the integrity guard (guard.py), an output cap, and a record of which limit was hit.

`SandboxExecute` replaces `Execute` in nbgrader's autograde preprocessors. What it finds about a notebook goes
into the `RunReport` that `SandboxAutograde` (nbgrader's Autograde) puts in the notebook's resources, where
nbgrader's preprocessors read and leave what they find (`resources["nbgrader"]`); the grading worker reads the
reports from the converter. The report is filled whether the run ends or fails.
"""

import json
import time
from dataclasses import dataclass, field

from nbformat.v4 import new_code_cell, new_output
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict, Int, List, Unicode, default

from . import guard
from .cells import grade_id, is_test
from .sandbox import Limits, SandboxKernelManager, size

AUTOGRADE_KEY = "autograde_injected"
REPORT_KEY = "sandbox"  # in resources["nbgrader"]


@dataclass
class RunReport:
    """What SandboxExecute found about one notebook's run."""

    ran: bool = False  # SandboxExecute ran the notebook
    died: bool = False  # the kernel died
    error: str = ""  # what stopped the run (a dead kernel, an IOPub timeout), or ''
    exit_code: int | None = None  # the kernel's
    flags: list = field(default_factory=list)  # what the integrity guard saw
    limit: str = ""  # the limit the notebook hit ('memory limit 2 GiB'), or ''
    tests: int = 0  # test cells run by the guard
    setup_seconds: float = 0.0  # how long the grader's setup cell took
    sandbox: dict = field(default_factory=dict)  # the sandbox and limits (SandboxKernelManager.info)

    def __deepcopy__(self, memo):
        return self  # nbconvert runs its preprocessors on a copy of the resources: this report is filled in


class SandboxAutograde(Autograde):
    """nbgrader's Autograde that gives each notebook it grades a RunReport in its resources, for SandboxExecute to
    fill in (the first pass, which sanitizes the notebook, runs no kernel)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self._reports = []

    def init_single_notebook_resources(self, notebook_filename):
        resources = super().init_single_notebook_resources(notebook_filename)
        if not self._sanitizing:
            self._reports.append(RunReport())
            resources["nbgrader"][REPORT_KEY] = self._reports[-1]
        return resources

    @property
    def reports(self):
        """The RunReport of each notebook SandboxExecute ran, in order."""
        return [report for report in self._reports if report.ran]


# (what the error says, which limit, counted by a cgroup when there is one)
LIMIT_ERRORS = [
    (("No space left on device", "[Errno 28]"), "disk", False),
    (("MemoryError", "can't allocate memory", "Cannot allocate memory", "std::bad_alloc"), "memory", True),
    (("[Errno 27]", "File too large"), "file_size", False),
    (("can't start new thread", "BlockingIOError: [Errno 11] Resource temporarily unavailable"), "processes", True),
]


def limit_hit(nb, limits, exit_code=None, died=False, counted=False):
    """The limit a notebook ran into, as a status reason ('memory limit 2 GiB'), or '', from its
    errors. With `counted`, memory and processes are counted by the kernel (a cgroup) and only that
    count says they were exceeded: an error message a notebook prints proves nothing."""
    errors = "\n".join(
        f"{out.get('ename', '')}: {out.get('evalue', '')}"
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    )
    for needles, which, by_cgroup in LIMIT_ERRORS:
        if not (counted and by_cgroup) and any(n in errors for n in needles):
            return Limits(**limits).reason(which)
    if died and exit_code in (-24, 152, 128 + 24):
        return Limits(**limits).reason("cpu")
    return ""


class SandboxExecute(Execute):
    """Execute with the kernel in a bubblewrap sandbox, the tests run by the integrity guard, and limits."""

    guard = Bool(True, help="run the tests through the run-time integrity guard").tag(config=True)
    imports = List([], help="the lesson's imports the tests use: [name, module, attribute or None]").tag(config=True)
    output_limit = Int(10 * 1024 * 1024, help="bytes of output of one notebook").tag(config=True)
    limits = Dict({}, help="see sandbox.Limits").tag(config=True)
    sandbox = Unicode("bwrap").tag(config=True)
    data_from = Unicode("", help="the released lesson's folder: its data files go into the kernel's folder").tag(
        config=True
    )

    setup_timeout = Int(300, help="seconds the grader's own cells may take (at least the per-cell limit)").tag(
        config=True
    )

    @default("shutdown_kernel")
    def _kill_at_the_end(self):
        # By the end every output and guard record is in (the guard writes them unbuffered), and closing the box
        # kills whatever is left: nbclient's polite shutdown only waited about 0.8 s a notebook for ipykernel to exit
        return "immediate"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.kernel_manager_class = SandboxKernelManager
        if self.timeout_func is None:
            self.timeout_func = self.cell_limit

    def cell_limit(self, cell):
        """The per-cell limit is the student's: the grader's own cells get their own bound."""
        if cell.metadata.get(AUTOGRADE_KEY):
            return max(self.setup_timeout, self.timeout or 0) or None
        return self.timeout

    def setup_problem(self, seconds):
        """What a refusal says when the grader's own setup ran past its bound."""
        return (
            f"the grader's setup took {seconds:.0f} s (limit {self.cell_limit(_injected('', 'setup'))} s); the "
            "machine is loaded: raise --cell-timeout or use fewer workers"
        )

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.limits = dict(self.limits)
        km.sandbox = self.sandbox
        km.files_from = self.data_from
        km.setup_payload = self._payload
        if km.kernel_uid is not None and self.sandbox != "bwrap":
            km.kernel_uid = None
        self._km = km
        return km

    # --- output cap -----------------------------------------------------------------------
    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        self._output_bytes += len(json.dumps(content, default=str)) if msg.get("msg_type") != "status" else 0
        if self._output_bytes > self.output_limit:
            if not self._over_output:
                self._over_output = True
            return None
        return super().output(outs, msg, display_id, cell_index)

    # --- the guard --------------------------------------------------------------------------
    def _inject(self, nb):
        """The setup cell first; each test cell becomes a comment with a nonce (its source goes to the
        guard); a final check cell."""
        self._tests, self._checks, self._payload = {}, [], ""
        if not self.guard:
            return
        tests = {}
        cells = [_injected(guard.setup_source(), "setup")]
        for cell in nb.cells:
            if cell.cell_type == "code" and is_test(cell):
                marker, nonce = guard.test_source()
                gid = grade_id(cell) or ""
                tests[nonce] = {"grade_id": gid, "source": cell.source, "value": guard.ends_in_value(cell.source)}
                self._tests[nonce] = (cell, cell.source)
                cell.source = marker
            cells.append(cell)
        marker, nonce = guard.check_source()
        self._checks.append(nonce)
        cells.append(_injected(marker, nonce))
        nb.cells = cells
        self._payload = guard.payload(tests, self.imports, hidden=guard.hidden_delimiters(self.config))

    def on_cell_execute(self, **kwargs):
        if kwargs["cell"].metadata.get(AUTOGRADE_KEY) == "setup":
            self._setup_started = time.monotonic()

    def on_cell_executed(self, **kwargs):
        super().on_cell_executed(**kwargs)
        cell, reply = kwargs["cell"], kwargs["execute_reply"]
        if cell.metadata.get(AUTOGRADE_KEY) != "setup":
            return
        self._setup_seconds = time.monotonic() - (self._setup_started or time.monotonic())
        content = (reply or {}).get("content", {})
        if content.get("status") != "ok":
            self._setup_failed = (
                self.setup_problem(self._setup_seconds) if content.get("ename") == "CellTimeoutError" else True
            )

    def _settle(self, nb, lines):
        """Test cells get their own source back, and outputs made from the guard's records: what they
        printed, then the failure if they failed (what nbgrader scores), never what the notebook emitted."""
        nb.cells = [c for c in nb.cells if not c.metadata.get(AUTOGRADE_KEY)]
        if not self.guard:
            return []
        analysis = guard.analyse(lines, list(self._tests), self._checks)
        for nonce, (cell, source) in self._tests.items():
            cell.source = source
            cell.outputs = outputs_for(cell.get("outputs", []), analysis.outcomes.get(nonce))
        flags = analysis.flags
        if self._setup_failed:
            flags.insert(
                0, self._setup_failed if self._setup_failed is not True else "the integrity guard could not start"
            )
        return flags

    def preprocess(self, nb, resources=None, km=None):
        self._output_bytes, self._over_output, self._setup_failed, self._km = 0, False, False, None
        self._setup_started, self._setup_seconds = None, 0.0
        self._inject(nb)
        report = ((resources or {}).get("nbgrader") or {}).get(REPORT_KEY) or RunReport()
        report.ran = True
        try:
            nb, resources = super().preprocess(nb, resources, km)
        except Exception as err:  # a dead kernel, an IOPub timeout: recorded, then re-raised
            report.died = "DeadKernel" in type(err).__name__ or "died" in str(err).lower()
            report.error = f"{type(err).__name__}: {str(err)[:300]}"
            raise
        finally:
            self._report(nb, report)
        return nb, resources

    def _report(self, nb, report):
        """The run's report, once its kernel has ended (its box closed, the guard's records read)."""
        km = self._km
        if km is not None:
            km.settle()
        lines = km.guard_lines(wait=2) if km is not None else []
        report.exit_code = getattr(km, "exit_code", None)
        report.flags = self._settle(nb, lines) if not report.died else []
        counted = km is not None and km.counted
        report.limit = limit_hit(nb, self.limits, report.exit_code, report.died, counted)
        if km is not None and km.limit_exceeded:
            report.limit = km.limit_exceeded
        if self._over_output:
            report.limit = report.limit or f"output limit {size(self.output_limit)}"
        report.tests = len(self._tests)
        report.setup_seconds = self._setup_seconds
        report.sandbox = km.info() if km is not None else {}


def _injected(source, tag):
    cell = new_code_cell(source)
    cell.metadata[AUTOGRADE_KEY] = tag
    return cell


def outputs_for(kernel_outputs, outcome):
    """A test cell's outputs: what it printed (stdout), then its result as the guard reported it."""
    kept = [o for o in kernel_outputs if o.get("output_type") == "stream" and o.get("name") == "stdout"]
    if outcome is None:
        kept.append(
            new_output(
                "error",
                ename="AutogradeError",
                evalue="this test did not run to the end (the kernel stopped, or the notebook kept it from running)",
                traceback=[],
            )
        )
    elif not outcome.ok:
        kept.append(new_output("error", ename=outcome.ename, evalue=outcome.evalue, traceback=[]))
    elif outcome.value is not None:
        kept.append(new_output("execute_result", data={"text/plain": repr(float(outcome.value))}, execution_count=None))
    for output in kept:
        if output.get("output_type") == "error":
            output["traceback"] = [f"{output['ename']}: {output['evalue']}"]
    return kept
