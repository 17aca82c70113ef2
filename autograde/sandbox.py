"""Step 4a, the sandbox: every notebook's kernel runs in its own bubblewrap sandbox.

The kernel sees, read-only, the Python environment (the venv and the interpreter it links to), the
system libraries in /usr and the helper package; read-write, only a private scratch folder (its
home and working directory, which does not hold the notebook) and the folder of its ZMQ `ipc`
sockets. No network (a new network namespace), no other process (a new pid namespace: when the
kernel ends, everything it started ends with it, daemons included), no capabilities, and limits
on memory, CPU time, processes, file size and open files. Only the kernel is wrapped: nbgrader,
the gradebook and the notebook files stay outside, in the grading worker.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Int, Unicode

GiB, MiB = 1024**3, 1024**2
HOME = "/home/student"  # the kernel's home and working directory inside the sandbox
UID_BASE = 2_000_000_000  # as root, kernels run as UID_BASE + worker pid (no such user exists)


@dataclass
class Limits:
    memory: int = 2 * GiB  # RLIMIT_DATA: heap and anonymous memory of each process
    cpu: int = 600  # RLIMIT_CPU, seconds of CPU time of each process
    processes: int = 64  # processes and threads beyond what the kernel itself needs
    file_size: int = 100 * MiB  # RLIMIT_FSIZE: largest file a student's code may write
    open_files: int = 1024  # RLIMIT_NOFILE
    output: int = 10 * MiB  # bytes of output of one notebook (all cells)
    tmp: int = 256 * MiB  # size of the sandbox's /tmp (a tmpfs)

    def describe(self):
        return {
            "memory": size(self.memory),
            "cpu": f"{self.cpu} s",
            "processes": self.processes,
            "file size": size(self.file_size),
            "output": size(self.output),
        }


def size(n):
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= factor:
            value = n / factor
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def parse_size(text):
    """'2G', '512M', '2 GiB', '1000000' -> bytes."""
    t = str(text).strip().upper().replace("IB", "").replace("B", "").replace(" ", "")
    factor = {"K": 1024, "M": MiB, "G": GiB}.get(t[-1:], 1)
    return int(float(t[:-1] if t[-1:] in "KMG" else t) * factor)


def bwrap_path():
    return shutil.which("bwrap")


def probe(kind="bwrap"):
    """'' if the sandbox works on this machine, else why not."""
    if kind != "bwrap":
        return f"unknown sandbox {kind!r}"
    exe = bwrap_path()
    if not exe:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    cmd = [
        exe,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/bin",
        "/bin",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "/usr/bin/true",
    ]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap does not run: {err}"
    if result.returncode != 0:
        return f"bwrap cannot create namespaces here: {result.stderr.strip()[:200]}"
    return ""


def python_binds(executable=None):
    """Folders the kernel's Python needs: the venv and the interpreter installation it links to."""
    exe = Path(executable or sys.executable)
    venv = exe.parent.parent
    real = Path(os.path.realpath(exe)).parent.parent
    binds = [venv]
    if not str(real).startswith(str(venv) + os.sep) and real != venv:
        binds.append(real)
    return [str(p) for p in binds]


def helper_binds():
    """Where the course's helper package is imported from (an editable install points into the repo)."""
    import importlib.util

    spec = importlib.util.find_spec("attention_course")
    if spec and spec.submodule_search_locations:
        return [str(Path(p).resolve()) for p in spec.submodule_search_locations]
    return []


def system_binds():
    binds = ["/usr"]
    for name in ("/etc/ld.so.cache", "/etc/fonts", "/etc/localtime", "/etc/ssl/certs", "/etc/alternatives"):
        if os.path.exists(name):
            binds.append(name)
    return binds


def user_processes(uid):
    """Processes and threads of `uid` now (RLIMIT_NPROC counts them all, not only the sandbox's)."""
    import psutil

    count = 0
    for p in psutil.process_iter(["uids", "num_threads"]):
        try:
            if p.info["uids"] and p.info["uids"].real == uid:
                count += p.info["num_threads"] or 1
        except psutil.Error:
            pass
    return count


def command(kernel_cmd, scratch, ipc_dir, limits, uid=None, extra_ro=(), guard_fd=None):
    """The bwrap command line that runs `kernel_cmd` in the sandbox."""
    exe = bwrap_path()
    cmd = [
        exe,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--hostname",
        "sandbox",
    ]
    if os.geteuid() == 0 and uid is None:
        cmd += ["--cap-drop", "ALL"]
    for path in system_binds():
        cmd += ["--ro-bind", path, path]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/bin", "usr/bin"), ("/sbin", "usr/sbin")):
        if os.path.islink(link):
            cmd += ["--symlink", target, link]
        elif os.path.isdir(link):
            cmd += ["--ro-bind", link, link]
    # /proc, /dev and the private /tmp first: a course or venv that lives under /tmp is bound on top of it
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(limits.tmp), "--tmpfs", "/tmp"]
    binds = [*python_binds(kernel_cmd[0]), *helper_binds(), *extra_ro]
    made = {"/tmp"}
    for path in [*binds, str(ipc_dir), HOME]:  # parents readable by the kernel's uid, whatever the umask
        for parent in reversed(Path(path).parents):
            if str(parent) != "/" and str(parent) not in made and not str(parent).startswith(("/usr", "/proc")):
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
    for path in binds:
        cmd += ["--ro-bind", path, path]
    cmd += [
        "--bind",
        str(ipc_dir),
        str(ipc_dir),
        "--bind",
        str(scratch),
        HOME,
        "--chdir",
        HOME,
        "--clearenv",
    ]
    env = {
        "HOME": HOME,
        "PATH": f"{os.path.dirname(kernel_cmd[0])}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": f"{HOME}/.config/matplotlib",
        "IPYTHONDIR": f"{HOME}/.ipython",
        "JUPYTER_RUNTIME_DIR": str(ipc_dir),
        "JUPYTER_DATA_DIR": f"{HOME}/.local/share/jupyter",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "NBGRADER_EXECUTION": "autograde",
        "TMPDIR": "/tmp",
        "USER": "student",
    }
    if guard_fd is not None:
        env["AUTOGRADE_GUARD_FD"] = str(guard_fd)
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    real_uid = uid if uid is not None else os.getuid()
    nproc = limits.processes + (64 if uid is not None else user_processes(real_uid) + 64)
    cmd += [
        "--",
        "/usr/bin/prlimit",
        f"--data={limits.memory}",
        f"--cpu={limits.cpu}:{limits.cpu + 10}",
        f"--nproc={nproc}",
        f"--fsize={limits.file_size}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
    ]
    if uid is not None:
        cmd += [
            "/usr/bin/setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    return cmd + list(kernel_cmd)


def _die_with_parent():
    """In the child before exec: SIGKILL when the grading worker dies (bwrap's own --die-with-parent
    only covers the sandboxed command, so an orphaned bwrap would keep its kernel alive)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def orphans():
    """Sandboxes and kernels whose grading worker is gone (there should be none)."""
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        for part in cmd.split("/tmp/agk-")[1:]:
            try:
                owner = int(part.split("-")[0])
            except ValueError:
                continue
            if not psutil.pid_exists(owner):
                found.append(p.info["pid"])
                break
    return found


_watched = None  # the pid of the worker whose watchdog runs


def watch_this_worker():
    """Once per worker: a watchdog outside the worker's process tree that, when the worker dies (even by
    SIGKILL, which no handler sees; bwrap's parent-death signal is cleared when it changes credentials),
    kills every sandbox and kernel of this worker. They carry /tmp/agk-<worker pid>- on their command
    line; the pattern is written `[/]tmp/…` so that it does not match the watchdog's own command line."""
    global _watched
    worker = os.getpid()
    if _watched == worker:
        return
    _watched = worker
    loop = f"while kill -0 {worker} 2>/dev/null; do sleep 0.5; done; pkill -9 -f '[/]tmp/agk-{worker}-'"
    quiet = subprocess.DEVNULL
    # its own session: a kill of the grader's process group spares it; the worker's death reparents it to init
    subprocess.Popen(["sh", "-c", loop], stdin=quiet, stdout=quiet, stderr=quiet, start_new_session=True)


def clean_stale():
    """Remove the scratch and socket folders of kernels whose worker is gone (killed with kill -9)."""
    import psutil

    for path in Path("/tmp").glob("ag[ks]-*-*"):
        try:
            pid = int(path.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not psutil.pid_exists(pid):
            shutil.rmtree(path, ignore_errors=True)


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel in a bubblewrap sandbox, over ZMQ's ipc transport.

    nbclient (and so nbgrader's Execute) creates it with the preprocessor's config:
    `c.SandboxKernelManager.limits = {...}`. After the kernel ends, `status` says how it ended."""

    limits = Dict({}, help="Limits fields (see Limits)").tag(config=True)
    sandbox = Unicode("bwrap", help="'bwrap' or 'none' (no isolation)").tag(config=True)
    run_as = Int(-1, help="uid for the kernel when grading as root (-1: UID_BASE + worker pid)").tag(config=True)
    files_from = Unicode("", help="folder whose non-notebook files are copied into the scratch folder").tag(config=True)

    def __init__(self, **kw):
        super().__init__(**kw)
        pid = os.getpid()  # in the names, for clean_stale()
        self.ipc_dir = Path(tempfile.mkdtemp(prefix=f"agk-{pid}-", dir="/tmp"))  # short: AF_UNIX paths are limited
        self.scratch = Path(tempfile.mkdtemp(prefix=f"ags-{pid}-", dir="/tmp"))
        self.transport = "ipc"
        self.ip = str(self.ipc_dir / "k")
        self.connection_file = str(self.ipc_dir / "kernel.json")
        self.guard_read, self.guard_write = os.pipe()
        self.guard_data = bytearray()
        self._reader = None
        self.exit_code = None
        self.kernel_uid = None
        if os.geteuid() == 0 and self.sandbox == "bwrap":
            self.kernel_uid = self.run_as if self.run_as >= 0 else UID_BASE + os.getpid()

    @property
    def the_limits(self):
        return Limits(**self.limits)

    def _prepare_scratch(self, cwd):
        """The kernel's private folder: the assignment's data files, never a notebook."""
        (self.scratch / ".config" / "matplotlib").mkdir(parents=True, exist_ok=True)
        for source in (cwd, self.files_from):
            if source and os.path.isdir(source):
                for item in Path(source).iterdir():
                    if item.is_file() and item.suffix != ".ipynb" and item.name != "timestamp.txt":
                        shutil.copy(item, self.scratch / item.name)
        cache = Path(os.environ.get("MPLCONFIGDIR", Path.home() / ".cache" / "matplotlib"))
        for font_list in cache.glob("fontlist-*.json") if cache.is_dir() else []:
            shutil.copy(font_list, self.scratch / ".config" / "matplotlib" / font_list.name)
        if self.kernel_uid is not None:
            for path in [self.scratch, self.ipc_dir, *self.scratch.rglob("*")]:
                os.chown(path, self.kernel_uid, self.kernel_uid)

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if self.sandbox != "bwrap":
            return cmd
        return command(cmd, self.scratch, self.ipc_dir, self.the_limits, uid=self.kernel_uid, guard_fd=self.guard_write)

    async def _async_pre_start_kernel(self, **kw):
        watch_this_worker()  # before the first sandbox exists: no moment when one could be left behind
        cwd = kw.pop("cwd", None)
        self._prepare_scratch(cwd)
        if self.kernel_spec is not None:
            self.kernel_spec.interrupt_mode = "message"  # SIGINT to bwrap would end the sandbox
        kw["cwd"] = str(self.scratch)
        env = dict(kw.get("env") or os.environ)
        env.pop("JPY_PARENT_PID", None)
        env["AUTOGRADE_GUARD_FD"] = str(self.guard_write)
        kw["env"] = env
        kw["pass_fds"] = (self.guard_write,)
        kw["preexec_fn"] = _die_with_parent
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if self.kernel_uid is not None:
            os.chown(self.connection_file, self.kernel_uid, self.kernel_uid)
        await super()._async_launch_kernel(kernel_cmd, **kw)
        os.close(self.guard_write)  # the kernel holds the only write end now
        self.guard_write = -1
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self):
        while True:
            try:
                chunk = os.read(self.guard_read, 65536)
            except OSError:
                return
            if not chunk:
                return
            if len(self.guard_data) < 16 * MiB:
                self.guard_data.extend(chunk)

    def guard_lines(self, wait=0.0):
        if wait and self._reader is not None:
            self._reader.join(wait)
        return bytes(self.guard_data).decode("utf-8", "replace").splitlines()

    async def _async_shutdown_kernel(self, now=False, restart=False):
        await super()._async_shutdown_kernel(now=True, restart=restart)

    async def _async_cleanup_resources(self, restart=False):
        if self.provisioner is not None and getattr(self.provisioner, "process", None) is not None:
            self.exit_code = self.provisioner.process.returncode
        await super()._async_cleanup_resources(restart=restart)
        if self._reader is not None:
            self._reader.join(2)
        for fd in (self.guard_read, self.guard_write):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.guard_read = self.guard_write = -1
        shutil.rmtree(self.ipc_dir, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def info(self):
        return {"sandbox": self.sandbox, "uid": self.kernel_uid, "limits": asdict(self.the_limits)}
