"""Step 4a, the sandbox: every notebook's kernel runs in its own bubblewrap sandbox.

The kernel sees, read-only, the Python environment (the venv and the interpreter it links to), the
system libraries in /usr and the helper package; read-write, only its home (a size-limited in-memory
folder holding a copy of the released lesson's data files, never the notebook), a small /tmp and the
folder of its ZMQ `ipc` sockets. No network (a new network namespace), no other process (a new pid
namespace: when the kernel ends, everything it started ends with it, daemons included), no
capabilities. Limits per notebook, all its processes together (containment.py: a cgroup where one
can be had): memory, processes; per process: CPU time, file size, open files. Only the kernel is
wrapped: nbgrader, the gradebook and the notebook files stay outside, in the grading worker.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Int, Unicode

from . import containment
from .errors import GradingError

GiB, MiB = 1024**3, 1024**2
HOME = "/home/student"  # the kernel's home and working directory inside the sandbox
UID_BASE = 2_000_000_000  # as root, kernels run as UID_BASE + worker pid (no such user exists)


@dataclass
class Limits:
    memory: int = 2 * GiB  # all processes of a notebook together (shared memory, in-memory folders included)
    cpu: int = 600  # RLIMIT_CPU, seconds of CPU time of each process
    processes: int = 64  # processes and threads beyond what the kernel itself needs
    file_size: int = 100 * MiB  # RLIMIT_FSIZE: largest file a student's code may write
    disk: int = 1 * GiB  # what the notebook may keep in its home folder (a tmpfs of this size)
    open_files: int = 1024  # RLIMIT_NOFILE
    output: int = 10 * MiB  # bytes of output of one notebook (all cells)
    tmp: int = 256 * MiB  # size of the sandbox's /tmp (a tmpfs)

    def describe(self):
        return {
            "memory": size(self.memory),
            "cpu": f"{self.cpu} s",
            "processes": self.processes,
            "file size": size(self.file_size),
            "disk": size(self.disk),
            "output": size(self.output),
        }

    def reason(self, which):
        """The status reason for a limit that was hit ('memory' -> 'memory limit 2 GiB')."""
        return {
            "memory": f"memory limit {size(self.memory)}",
            "processes": f"process limit ({self.processes} processes)",
            "disk": f"disk limit {size(self.disk)}",
            "file_size": f"file size limit {size(self.file_size)}",
            "cpu": f"CPU time limit {self.cpu} s",
        }.get(which, "")


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


def isolation(limits, no_sandbox=False):
    """(what summary.txt says of the isolation, 'bwrap' or 'none'); GradingError where no sandbox can run and
    `no_sandbox` was not asked for."""
    if no_sandbox:
        return "none: --no-sandbox was given, student code ran with the grader's permissions", "none"
    why = probe()
    if why:
        raise GradingError(
            f"Refusing to grade: no sandbox for student code ({why}).\n"
            "Install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap), or, knowing that "
            "student code will then run with your permissions, pass --no-sandbox."
        )
    who = "a throw-away uid per worker" if os.geteuid() == 0 else "your uid in a user namespace"
    lim = ", ".join(f"{k} {v}" for k, v in limits.describe().items())
    home = "an in-memory home" if sized_tmpfs() else "a private scratch folder (its size measured)"
    return (
        f"bubblewrap sandbox per notebook (no network, own pid namespace, read-only Python, {home}, {who}); "
        f"limits: {lim}; memory and processes per notebook: {containment.detect().name}"
    ), "bwrap"


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


KERNEL_PROBE = """
import importlib.util, json, sys
spec = importlib.util.find_spec("attention_course")
print(json.dumps({"prefix": sys.prefix, "base_prefix": sys.base_prefix, "executable": sys.executable,
                  "path": sys.path, "helpers": list(spec.submodule_search_locations) if spec else []}))
"""
_ENVIRONMENTS = {}


def kernel_environment(python=None):
    """What the kernel's Python uses, asked of that Python with the sandbox's clean environment: its
    prefixes, sys.path and where it imports the helper package from (cached per interpreter)."""
    python = python or sys.executable
    if python not in _ENVIRONMENTS:
        env = {"PATH": f"{os.path.dirname(python)}:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
        result = subprocess.run(
            [python, "-c", KERNEL_PROBE],
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            timeout=120,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{python} cannot start: {result.stderr.strip()[-300:]}")
        import json

        _ENVIRONMENTS[python] = json.loads(result.stdout)
    return _ENVIRONMENTS[python]


def python_binds(executable=None):
    """Folders the kernel's Python needs: the venv, the interpreter installation it links to, and any
    site folder on its path outside them (never a course folder: only site-packages-like entries)."""
    exe = Path(executable or sys.executable)
    venv = exe.parent.parent
    real = Path(os.path.realpath(exe)).parent.parent
    binds = [venv]
    if not str(real).startswith(str(venv) + os.sep) and real != venv:
        binds.append(real)
    for entry in environment_or_empty(str(exe))["path"]:
        path = Path(entry)
        inside = any(str(path).startswith(str(b) + os.sep) for b in binds)
        if not inside and path.name in ("site-packages", "dist-packages") and path.is_dir():
            binds.append(path)
    return [str(p) for p in binds]


def helper_binds(executable=None):
    """Where the kernel's Python imports the course's helper package from (an editable install points
    into a course folder: only the package's own folder is bound, never the course around it)."""
    return [str(Path(p).resolve()) for p in environment_or_empty(executable)["helpers"]]


def environment_or_empty(python):
    """kernel_environment, or nothing to bind if that Python cannot be asked (the canary then says why)."""
    try:
        return kernel_environment(python)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired):
        return {"path": [], "helpers": []}


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


SEED = "/autograde/seed"  # inside the sandbox: what the kernel's home starts with, copied in at start


def command(
    kernel_cmd, scratch, ipc_dir, limits, uid=None, extra_ro=(), fds=None, home_in_memory=True, rlimit_memory=True
):
    """The bwrap command line that runs `kernel_cmd` in the sandbox. `fds`: {environment variable:
    file descriptor} passed to the kernel. With `home_in_memory`, the home is a tmpfs of `limits.disk`
    bytes that starts as a copy of `scratch`; otherwise `scratch` itself is the home."""
    binds = [*python_binds(kernel_cmd[0]), *helper_binds(kernel_cmd[0]), *extra_ro]
    cmd = _namespaces(uid) + _system(limits) + _folders(binds, ipc_dir) + _home(scratch, limits, home_in_memory)
    for key, value in _environment(kernel_cmd[0], ipc_dir, fds).items():
        cmd += ["--setenv", key, value]
    cmd += ["--", *_process_limits(limits, uid, rlimit_memory), "--", *_as_user(uid)]
    if home_in_memory:  # the home starts as a copy of the prepared folder (data files, font cache)
        cmd += ["/bin/sh", "-c", f'cp -R {SEED}/. "$HOME"/ && exec "$0" "$@"']
    return cmd + list(kernel_cmd)


def _namespaces(uid):
    """No network, no other process, no shared IPC, a host name of its own; it dies with the worker. As root
    with no uid to change to, no capability either."""
    cmd = [bwrap_path(), "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    cmd += ["--hostname", "sandbox"]
    return cmd + (["--cap-drop", "ALL"] if os.geteuid() == 0 and uid is None else [])


def _system(limits):
    """/usr and a few system files read-only; /proc, /dev and a private /tmp first, so that a course or venv that
    lives under /tmp is bound on top of it."""
    cmd = []
    for path in system_binds():
        cmd += ["--ro-bind", path, path]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/bin", "usr/bin"), ("/sbin", "usr/sbin")):
        if os.path.islink(link):
            cmd += ["--symlink", target, link]
        elif os.path.isdir(link):
            cmd += ["--ro-bind", link, link]
    return cmd + ["--proc", "/proc", "--dev", "/dev", "--perms", "01777", "--size", str(limits.tmp), "--tmpfs", "/tmp"]


def _folders(binds, ipc_dir):
    """The Python environment and the helper package read-only, the kernel's sockets read-write; every folder
    above them readable by the kernel's uid, whatever the umask."""
    cmd, made = [], {"/tmp"}
    for path in [*binds, str(ipc_dir), HOME, SEED]:
        for parent in reversed(Path(path).parents):
            if str(parent) != "/" and str(parent) not in made and not str(parent).startswith(("/usr", "/proc")):
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
    for path in binds:
        cmd += ["--ro-bind", path, path]
    return cmd + ["--bind", str(ipc_dir), str(ipc_dir)]


def _home(scratch, limits, in_memory):
    """The kernel's home and working folder: in memory (limits.disk bytes) starting as a copy of `scratch`, or
    `scratch` itself; and an environment of nothing but what _environment sets."""
    if in_memory:
        home = ["--perms", "01777", "--size", str(limits.disk), "--tmpfs", HOME, "--ro-bind", str(scratch), SEED]
    else:
        home = ["--bind", str(scratch), HOME]
    return home + ["--chdir", HOME, "--clearenv"]


def _environment(python, ipc_dir, fds):
    env = {
        "HOME": HOME,
        "PATH": f"{os.path.dirname(python)}:/usr/bin:/bin",
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
    return env | {key: str(fd) for key, fd in (fds or {}).items()}


def _process_limits(limits, uid, rlimit_memory):
    """prlimit's per-process limits (memory only without a cgroup: then each process at least is bounded)."""
    real_uid = uid if uid is not None else os.getuid()
    nproc = limits.processes + (64 if uid is not None else user_processes(real_uid) + 64)
    cmd = ["/usr/bin/prlimit"] + ([f"--data={limits.memory}"] if rlimit_memory else [])
    return cmd + [
        f"--cpu={limits.cpu}:{limits.cpu + 10}",
        f"--nproc={nproc}",
        f"--fsize={limits.file_size}",
        f"--nofile={limits.open_files}",
        "--core=0",
    ]


def _as_user(uid):
    """As root: the kernel's own uid, no group, no capability, no way to gain privileges."""
    if uid is None:
        return []
    return [
        "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


_SIZED_TMPFS = {}


def sized_tmpfs():
    """True if this bwrap can size a tmpfs (--size, bubblewrap >= 0.7)."""
    if "ok" not in _SIZED_TMPFS:
        exe = bwrap_path()
        links = [
            x
            for link in ("/lib", "/lib64", "/bin")
            if os.path.islink(link)
            for x in ("--symlink", os.readlink(link), link)
        ]
        try:
            result = subprocess.run(
                [exe, "--ro-bind", "/usr", "/usr", *links, "--size", "1048576", "--tmpfs", "/x", "--", "/usr/bin/true"],
                capture_output=True,
                timeout=30,
            )
            _SIZED_TMPFS["ok"] = result.returncode == 0
        except (OSError, subprocess.TimeoutExpired, TypeError):
            _SIZED_TMPFS["ok"] = False
    return _SIZED_TMPFS["ok"]


def folder_bytes(folder):
    """Bytes of the files under `folder` (links not followed)."""
    total = 0
    for top, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                pass
    return total


def die_with_parent():
    """Linux: this process gets SIGKILL when its parent dies, even by kill -9 (PR_SET_PDEATHSIG). A grading
    worker calls it (it dies with the grading command), and each sandbox before exec (bwrap's own
    --die-with-parent only covers the sandboxed command, so an orphaned bwrap would keep its kernel alive)."""
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
    containment.clean_stale(psutil.pid_exists)  # and their cgroups


class SandboxKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel in a bubblewrap sandbox, over ZMQ's ipc transport.

    nbclient (and so nbgrader's Execute) creates it with the preprocessor's config:
    `c.SandboxKernelManager.limits = {...}`. After the kernel ends, `exit_code` says how it ended and
    `limit_exceeded` which limit of its box (containment.py) it hit, if any."""

    limits = Dict({}, help="Limits fields (see Limits)").tag(config=True)
    sandbox = Unicode("bwrap", help="'bwrap' or 'none' (no isolation)").tag(config=True)
    run_as = Int(-1, help="uid for the kernel when grading as root (-1: UID_BASE + worker pid)").tag(config=True)
    files_from = Unicode("", help="the released lesson's folder: its data files go into the kernel's home").tag(
        config=True
    )
    setup_payload = Unicode("", help="what the guard's setup cell reads (guard.payload)").tag(config=True)

    started = 0  # kernels started by this worker, for the names of their boxes

    def __init__(self, **kw):
        super().__init__(**kw)
        pid = os.getpid()  # in the names, for clean_stale()
        self.ipc_dir = Path(tempfile.mkdtemp(prefix=f"agk-{pid}-", dir="/tmp"))  # short: AF_UNIX paths are limited
        self.scratch = Path(tempfile.mkdtemp(prefix=f"ags-{pid}-", dir="/tmp"))
        self.transport = "ipc"
        self.ip = str(self.ipc_dir / "k")
        self.connection_file = str(self.ipc_dir / "kernel.json")
        self.guard_read, self.guard_write = os.pipe()
        self.setup_fd = -1
        self.guard_data = bytearray()
        self._reader = None
        self.exit_code = None
        self.kernel_uid = None
        self.box = None
        self.limit_exceeded = ""
        self.counted = False  # memory and processes counted by a cgroup
        self.disk_peak = 0
        if os.geteuid() == 0 and self.sandbox == "bwrap":
            self.kernel_uid = self.run_as if self.run_as >= 0 else UID_BASE + os.getpid()

    @property
    def the_limits(self):
        return Limits(**self.limits)

    def _prepare_scratch(self):
        """What the kernel's home starts with: the released lesson's data files, never a notebook, never
        a file the student attached (it could shadow a module the tests import)."""
        (self.scratch / ".config" / "matplotlib").mkdir(parents=True, exist_ok=True)
        if self.files_from and os.path.isdir(self.files_from):
            for item in Path(self.files_from).iterdir():
                if item.is_file() and item.suffix != ".ipynb":
                    shutil.copy(item, self.scratch / item.name)
        cache = Path(os.environ.get("MPLCONFIGDIR", Path.home() / ".cache" / "matplotlib"))
        for font_list in cache.glob("fontlist-*.json") if cache.is_dir() else []:
            shutil.copy(font_list, self.scratch / ".config" / "matplotlib" / font_list.name)
        if self.kernel_uid is not None:
            for path in [self.scratch, self.ipc_dir, *self.scratch.rglob("*")]:
                os.chown(path, self.kernel_uid, self.kernel_uid)

    def _fds(self):
        fds = {"AUTOGRADE_GUARD_FD": self.guard_write}
        if self.setup_fd >= 0:
            fds["AUTOGRADE_SETUP_FD"] = self.setup_fd
        return fds

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if self.sandbox != "bwrap":
            return cmd
        return command(
            cmd,
            self.scratch,
            self.ipc_dir,
            self.the_limits,
            uid=self.kernel_uid,
            fds=self._fds(),
            home_in_memory=sized_tmpfs(),
            rlimit_memory=isinstance(containment.detect(), containment.Measured),
        )

    def _open_setup(self):
        """The guard's payload in an unlinked file, readable through one inherited descriptor only."""
        if not self.setup_payload:
            return
        handle = tempfile.TemporaryFile()
        handle.write(self.setup_payload.encode())
        handle.seek(0)
        self.setup_fd = os.dup(handle.fileno())
        handle.close()
        os.lseek(self.setup_fd, 0, os.SEEK_SET)

    async def _async_pre_start_kernel(self, **kw):
        watch_this_worker()  # before the first sandbox exists: no moment when one could be left behind
        kw.pop("cwd", None)  # the submission's folder: never the kernel's
        self._prepare_scratch()
        self._open_setup()
        if self.kernel_spec is not None:
            self.kernel_spec.interrupt_mode = "message"  # SIGINT to bwrap would end the sandbox
        kw["cwd"] = str(self.scratch)
        env = dict(kw.get("env") or os.environ)
        env.pop("JPY_PARENT_PID", None)
        env.update({k: str(v) for k, v in self._fds().items()})
        kw["env"] = env
        kw["pass_fds"] = tuple(self._fds().values())
        if self.sandbox == "bwrap":
            limits = self.the_limits
            SandboxKernelManager.started += 1
            self.box = containment.detect().box(
                f"autograde-{os.getpid()}-{SandboxKernelManager.started}",
                memory=limits.memory,
                processes=limits.processes + 64,
            )
        box = self.box
        self.counted = box is not None and not isinstance(box, containment.MeasuredBox)

        def preexec():
            die_with_parent()
            if box is not None:
                box.join()

        kw["preexec_fn"] = preexec
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if self.kernel_uid is not None:
            os.chown(self.connection_file, self.kernel_uid, self.kernel_uid)
        await super()._async_launch_kernel(kernel_cmd, **kw)
        for attr in ("guard_write", "setup_fd"):  # the kernel holds them now
            if getattr(self, attr) >= 0:
                os.close(getattr(self, attr))
                setattr(self, attr, -1)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        process = getattr(self.provisioner, "process", None)
        if process is not None and self.sandbox == "bwrap":
            threading.Thread(target=self._watch_home, args=(process.pid,), daemon=True).start()
            if isinstance(self.box, containment.MeasuredBox):
                self.box.watch(process.pid, lambda: self.disk_peak)

    def _watch_home(self, pid):
        """The peak use of the kernel's home. In memory (a tmpfs), read through the sandbox's
        /proc/<pid>/root (as root; elsewhere a full home shows as 'No space left on device'). On disk
        (bubblewrap without --size), measured here, and the sandbox killed when it is over."""
        import psutil

        inner, disk, in_memory = None, self.the_limits.disk, sized_tmpfs()
        while self.exit_code is None:
            try:
                if in_memory:
                    inner = inner or psutil.Process(pid).children()[0].pid
                    stat = os.statvfs(f"/proc/{inner}/root{HOME}")
                    if abs(stat.f_blocks * stat.f_frsize - disk) <= 1 << 20:  # the home's tmpfs, not the host's
                        self.disk_peak = max(self.disk_peak, (stat.f_blocks - stat.f_bfree) * stat.f_frsize)
                else:
                    self.disk_peak = max(self.disk_peak, folder_bytes(self.scratch))
                    if self.disk_peak > disk:
                        for proc in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
                            proc.kill()
                        return
            except (psutil.Error, IndexError):
                pass  # the sandbox is not up yet, or is gone
            except OSError:
                return  # not readable by this user
            time.sleep(0.25)

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

    async def _async_cleanup_resources(self, restart=False):
        if self.provisioner is not None and getattr(self.provisioner, "process", None) is not None:
            self.exit_code = self.provisioner.process.returncode
        if self.exit_code is None:
            self.exit_code = 0
        self.settle()
        await super()._async_cleanup_resources(restart=restart)

    def settle(self):
        """Read which limit of its box the notebook hit, then close the box (everything left in it is
        killed). Also called by the executor: nbclient skips the clean-up of a kernel that died."""
        if self.box is None:
            return
        limits = self.the_limits
        which = self.box.verdict()
        if not which and self.disk_peak >= 0.98 * limits.disk:
            which = "disk"
        self.limit_exceeded = limits.reason(which)
        self.box.close()
        self.box = None
        if self.exit_code is None and getattr(self.provisioner, "process", None) is not None:
            self.exit_code = self.provisioner.process.poll()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self._reader is not None:
            self._reader.join(2)
        for fd in (self.guard_read, self.guard_write, self.setup_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.guard_read = self.guard_write = self.setup_fd = -1
        shutil.rmtree(self.ipc_dir, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def info(self):
        return {"sandbox": self.sandbox, "uid": self.kernel_uid, "limits": asdict(self.the_limits)}
