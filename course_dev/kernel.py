"""A notebook run headless in a live kernel that stays open for more code: the tests' and the benchmark's runner.

with LiveKernel(path) as kernel:
    seconds = kernel.run_all()           # every code cell, in order, outputs kept in kernel.nb
    outputs = kernel.run("print(1)")     # more code in the same kernel
    value = kernel.value("len(x)")       # an expression's repr, read back as a Python value
"""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config


def errors(outputs):
    return [o for o in outputs if o.output_type == "error"]


def stderr(outputs):
    return "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")


def stdout(outputs):
    return "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stdout")


def describe(outputs):
    """One line per error or stderr output, for messages."""
    lines = [f"{o.ename}: {o.evalue}" for o in errors(outputs)]
    return "; ".join(lines + ([f"stderr: {stderr(outputs)[:300]}"] if stderr(outputs) else []))


def ipc_config(folder):
    """Configuration for nbclient's kernel: ZMQ ipc sockets in `folder` (a short path of its own) instead of TCP ports
    (LiveKernel says why)."""
    return Config(KernelManager={"transport": "ipc", "ip": os.path.join(folder, "k")})


class LiveKernel:
    """Run a notebook's cells in one kernel (started with the first `python` on PATH, as nbgrader's are) and keep
    the kernel for more code afterwards. `quiet` sends the kernel's own stderr (library warnings) to /dev/null.

    The kernel listens on ZMQ ipc sockets in a folder of its own, as the grader's do: TCP ports would be picked free
    and then bound by the kernel a moment later, and on a busy machine, with browsers, servers and other kernels
    taking ports beside it, another process could take one in between."""

    def __init__(self, path, timeout=120, quiet=False, env=None):
        self.path = Path(path)
        self.env = env  # extra environment variables for the kernel (e.g. another PyTorch CPU code path)
        self.nb = nbformat.read(str(self.path), as_version=4)
        self.sockets = tempfile.mkdtemp(prefix="lk-", dir="/tmp")  # short: AF_UNIX paths are limited to 107 bytes
        self.client = NotebookClient(
            self.nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(self.path.parent)}},
            shutdown_kernel="immediate",  # nothing of it is needed afterwards: no polite request, no wait
            config=ipc_config(self.sockets),
        )
        self.quiet = quiet
        self.cell_seconds = []

    def __enter__(self):
        options = {"stderr": subprocess.DEVNULL} if self.quiet else {}
        if self.env:
            options["env"] = {**os.environ, **self.env}
        self._setup = self.client.setup_kernel(**options)
        try:
            self._setup.__enter__()
        except BaseException:  # no kernel: `with` will not call __exit__, so the socket folder goes here
            shutil.rmtree(self.sockets, ignore_errors=True)
            raise
        return self

    def __exit__(self, *exc):
        try:
            return self._setup.__exit__(*exc)
        finally:
            shutil.rmtree(self.sockets, ignore_errors=True)

    def run_all(self):
        """Run every code cell in order; return the wall time in seconds."""
        start = time.perf_counter()
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                t0 = time.perf_counter()
                self.client.execute_cell(cell, index)
                self.cell_seconds.append((index, time.perf_counter() - t0))
        return time.perf_counter() - start

    def run(self, source):
        """Run extra code in the kernel; return its outputs."""
        self.nb.cells.append(nbformat.v4.new_code_cell(source))  # nbclient writes results back by index
        try:
            return self.client.execute_cell(self.nb.cells[-1], len(self.nb.cells) - 1).outputs
        finally:
            self.nb.cells.pop()

    def value(self, expression):
        """Evaluate an expression in the kernel and return its repr()'d value as a Python object."""
        outputs = self.run(f"print(repr({expression}))")
        text = stdout(outputs)
        if errors(outputs) or not text:
            raise RuntimeError(f"could not evaluate {expression!r}: {describe(outputs)}")
        return eval(text)  # noqa: S307 - our own repr of plain data
