"""Step 4b, the sandboxed run: nbgrader's Execute preprocessor, with the kernel in the sandbox, the
integrity guard around the student's cells, an output cap, and a record of which limit was hit.

`SandboxExecute` replaces `Execute` in nbgrader's autograde preprocessors. What it found goes to
`SandboxExecute.reports` (one dict per notebook) for the grading worker to read.
"""

import json

from nbformat.v4 import new_code_cell
from nbgrader.preprocessors import Execute
from traitlets import Bool, Dict, Int, List, Unicode

from . import guard
from .sandbox import SandboxKernelManager, size

AUTOGRADE_KEY = "autograde_injected"


def limit_hit(nb, limits, exit_code=None, died=False):
    """The limit a notebook ran into, as a status reason ('memory limit 2 GiB'), or ''."""
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                text.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
    joined = "\n".join(text)
    if (
        "MemoryError" in joined
        or "can't allocate memory" in joined
        or "Cannot allocate memory" in joined
        or "std::bad_alloc" in joined
    ):
        return f"memory limit {size(limits['memory'])}"
    if "[Errno 27]" in joined or "File too large" in joined:
        return f"file size limit {size(limits['file_size'])}"
    if (
        "BlockingIOError" in joined
        and "Resource temporarily unavailable" in joined
        or "can't start new thread" in joined
    ):
        return f"process limit ({limits['processes']} processes)"
    if died and exit_code in (-24, 152, 128 + 24):
        return f"CPU time limit {limits['cpu']} s"
    return ""


class SandboxExecute(Execute):
    """Execute with the kernel in a bubblewrap sandbox, plus the integrity guard and limits."""

    guard = Bool(True, help="inject the run-time integrity guard").tag(config=True)
    aliases = Dict({}, help="names the tests use for modules: {'np': 'numpy', ...}").tag(config=True)
    builtin_names = List([], help="builtins the tests use").tag(config=True)
    output_limit = Int(10 * 1024 * 1024, help="bytes of output of one notebook").tag(config=True)
    limits = Dict({}, help="see sandbox.Limits").tag(config=True)
    sandbox = Unicode("bwrap").tag(config=True)

    reports = []  # one per executed notebook, read by the worker

    def __init__(self, **kw):
        super().__init__(**kw)
        self.kernel_manager_class = SandboxKernelManager

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.limits = dict(self.limits)
        km.sandbox = self.sandbox
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
        self._nonces = []
        cells = []
        if self.guard:
            setup = new_code_cell(
                guard.setup_source(
                    "__import__('os').environ.pop('AUTOGRADE_GUARD_FD', '-1')", self.aliases, self.builtin_names
                )
            )
            setup.metadata[AUTOGRADE_KEY] = "setup"
            cells.append(setup)
        for cell in nb.cells:
            m = cell.metadata.get("nbgrader", {})
            if self.guard and cell.cell_type == "code" and m.get("grade") and not m.get("solution"):
                src, nonce = guard.check_source()
                check = new_code_cell(src)
                check.metadata[AUTOGRADE_KEY] = nonce
                cells.append(check)
            cells.append(cell)
        if self.guard:
            src, nonce = guard.check_source()
            check = new_code_cell(src)
            check.metadata[AUTOGRADE_KEY] = nonce
            cells.append(check)
        nb.cells = cells

    def on_cell_executed(self, **kwargs):
        super().on_cell_executed(**kwargs)
        cell, reply = kwargs["cell"], kwargs["execute_reply"]
        tag = cell.metadata.get(AUTOGRADE_KEY)
        if tag and tag != "setup" and reply and reply.get("content", {}).get("status") == "ok":
            self._nonces.append(tag)
        if tag == "setup" and reply and reply.get("content", {}).get("status") != "ok":
            self._setup_failed = True

    def preprocess(self, nb, resources=None, km=None):
        self._output_bytes, self._over_output, self._setup_failed, self._km = 0, False, False, None
        self._inject(nb)
        report = {"died": False, "error": "", "exit_code": None}
        try:
            nb, resources = super().preprocess(nb, resources, km)
        except Exception as err:  # a dead kernel, an IOPub timeout: recorded, then re-raised
            report["died"] = "DeadKernel" in type(err).__name__ or "died" in str(err).lower()
            report["error"] = f"{type(err).__name__}: {str(err)[:300]}"
            raise
        finally:
            km_ = self._km
            lines = km_.guard_lines(wait=2) if km_ is not None else []
            report["exit_code"] = getattr(km_, "exit_code", None)
            report["limit"] = limit_hit(nb, self.limits, report["exit_code"], report["died"])
            if self._over_output:
                report["limit"] = report["limit"] or f"output limit {size(self.output_limit)}"
            injected = [c for c in nb.cells if c.metadata.get(AUTOGRADE_KEY)]
            nb.cells = [c for c in nb.cells if not c.metadata.get(AUTOGRADE_KEY)]
            if self.guard and not report["died"]:
                report["flags"] = guard.analyse(lines, self._nonces)
                if self._setup_failed:
                    report["flags"].insert(0, "the integrity guard could not start")
            else:
                report["flags"] = []
            report["checks"] = len(self._nonces)
            report["injected"] = len(injected)
            report["sandbox"] = km_.info() if km_ is not None else {}
            SandboxExecute.reports.append(report)
        return nb, resources
