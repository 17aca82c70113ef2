"""Limits per notebook, for all of its processes together: memory (shared memory, files in its
in-memory folders and children included) and the number of processes and threads.

The kernel's own mechanism is used where the grader can have it: a control group per notebook
(`CgroupV2`, or `CgroupV1` on machines that still mount the v1 memory and pids controllers). Where it
cannot (no writable cgroup, e.g. grading as a normal user without a delegated cgroup), `Measured`
samples the sandbox's processes a few times a second and kills the sandbox when they are over, with
per-process rlimits (sandbox.py) as the backstop. `detect()` picks one; `describe()` says which, for
summary.txt. Each notebook gets a `Box`: joined by the sandbox's first process before it starts the
kernel, asked afterwards which limit, if any, was hit, then closed (everything in it killed).
"""

import os
import threading
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def own_cgroup(controller, proc_cgroup="/proc/self/cgroup"):
    """This process's cgroup path for a v1 controller ('memory', 'pids') or, with '', the v2 one."""
    for line in Path(proc_cgroup).read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (controller and controller in controllers.split(",")) or (not controller and controllers == ""):
            return path
    return None


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def _read_counts(path):
    """{'oom_kill': 1, 'max': 0, ...} from a cgroup file of 'key value' lines."""
    counts = {}
    try:
        for line in Path(path).read_text().splitlines():
            key, _, value = line.partition(" ")
            if value.strip().lstrip("-").isdigit():
                counts[key] = int(value)
    except OSError:
        pass
    return counts


def _kill_and_remove(folders):
    """Kill what is left in the cgroups (the sandbox already ended, normally) and remove them."""
    for _ in range(50):
        pids = set()
        for folder in folders:
            try:
                pids |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        if not pids:
            break
        time.sleep(0.05)
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


class Box:
    """The cgroup(s) of one notebook."""

    def __init__(self, folders, describe_limit):
        self.folders = folders
        self.describe_limit = describe_limit

    def join(self):
        """Called in the sandbox's first process before it execs: it and all it starts are counted."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", "0")

    def verdict(self):
        return ""

    def close(self):
        _kill_and_remove(self.folders)


class CgroupV1:
    """Separate v1 hierarchies for memory and pids (a memsw limit too, where swap accounting exists)."""

    name = "cgroup v1 (memory, pids)"

    def __init__(self, memory_root, pids_root):
        self.memory_root, self.pids_root = Path(memory_root), Path(pids_root)

    @classmethod
    def detect(cls, root=CGROUP_ROOT, proc_cgroup="/proc/self/cgroup"):
        memory, pids = own_cgroup("memory", proc_cgroup), own_cgroup("pids", proc_cgroup)
        if memory is None or pids is None:
            return None
        candidate = cls(root / "memory" / memory.lstrip("/"), root / "pids" / pids.lstrip("/"))
        return candidate if candidate.works() else None

    def works(self):
        try:
            box = self.box(f"autograde-{os.getpid()}-probe", memory=64 << 20, processes=8)
        except OSError:
            return False
        box.close()
        return True

    def box(self, name, memory, processes):
        memory_dir, pids_dir = self.memory_root / name, self.pids_root / name
        made = []
        try:
            for folder in (memory_dir, pids_dir):
                folder.mkdir()
                made.append(folder)
            _write(memory_dir / "memory.limit_in_bytes", str(memory))
            if (memory_dir / "memory.memsw.limit_in_bytes").exists():
                _write(memory_dir / "memory.memsw.limit_in_bytes", str(memory))  # no swapping past the limit
            _write(pids_dir / "pids.max", str(processes))
        except OSError:
            _kill_and_remove(made)
            raise
        return V1Box([memory_dir, pids_dir], memory, processes)

    def stale(self):
        return [p for root in (self.memory_root, self.pids_root) for p in root.glob("autograde-*") if p.is_dir()]


class V1Box(Box):
    def __init__(self, folders, memory, processes):
        super().__init__(folders, None)
        self.memory, self.processes = memory, processes

    def verdict(self):
        memory_dir, pids_dir = self.folders
        if _read_counts(memory_dir / "memory.oom_control").get("oom_kill", 0) > 0:
            return "memory"
        if _read_counts(pids_dir / "pids.events").get("max", 0) > 0:
            return "processes"
        return ""


class CgroupV2:
    """One v2 cgroup per notebook, under a parent where the memory and pids controllers are (or can be)
    enabled for children: this process's own cgroup (a delegated one), or, as root, an `autograde`
    cgroup made at the top of the hierarchy (a cgroup that holds processes cannot enable controllers
    for children, the top one excepted)."""

    name = "cgroup v2 (memory, pids)"

    def __init__(self, parent):
        self.parent = Path(parent)

    @classmethod
    def detect(cls, root=CGROUP_ROOT, proc_cgroup="/proc/self/cgroup"):
        path = own_cgroup("", proc_cgroup)
        if path is None:
            return None
        for mount in (root, root / "unified"):
            if not (mount / "cgroup.subtree_control").exists():
                continue
            for parent in (mount / path.lstrip("/"), mount / "autograde"):
                candidate = cls(parent)
                if candidate.works():
                    return candidate
        return None

    def works(self):
        made = not self.parent.exists()
        try:
            self.parent.mkdir(exist_ok=True)
            enabled = set((self.parent / "cgroup.subtree_control").read_text().split())
            if not {"memory", "pids"} <= enabled:
                _write(self.parent / "cgroup.subtree_control", "+memory +pids")
            box = self.box(f"autograde-{os.getpid()}-probe", memory=64 << 20, processes=8)
        except OSError:
            if made:
                _kill_and_remove([self.parent])
            return False
        box.close()
        return True

    def box(self, name, memory, processes):
        folder = self.parent / name
        folder.mkdir()
        try:
            _write(folder / "memory.max", str(memory))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(processes))
        except OSError:
            _kill_and_remove([folder])
            raise
        return V2Box([folder], memory, processes)

    def stale(self):
        return [p for p in self.parent.glob("autograde-*") if p.is_dir()]


class V2Box(Box):
    def __init__(self, folders, memory, processes):
        super().__init__(folders, None)
        self.memory, self.processes = memory, processes

    def verdict(self):
        folder = self.folders[0]
        if _read_counts(folder / "memory.events").get("oom_kill", 0) > 0:
            return "memory"
        if _read_counts(folder / "pids.events").get("max", 0) > 0:
            return "processes"
        return ""

    def close(self):
        try:
            _write(self.folders[0] / "cgroup.kill", "1")
        except OSError:
            pass
        super().close()


class Measured:
    """No cgroup: the sandbox's processes are sampled every `interval` seconds (resident memory, which
    counts the shared memory each touches, and the number of threads); over a limit, the sandbox is
    killed. Per-process rlimits (memory, processes) stay on as the backstop between samples."""

    name = "measured (no writable cgroup: the sandbox's processes sampled 5 times a second)"

    def __init__(self, interval=0.2):
        self.interval = interval

    def box(self, name, memory, processes):
        return MeasuredBox(memory, processes, self.interval)

    def stale(self):
        return []


class MeasuredBox(Box):
    def __init__(self, memory, processes, interval):
        super().__init__([], None)
        self.memory, self.processes, self.interval = memory, processes, interval
        self.hit, self.peak, self._stop, self._thread = "", 0, threading.Event(), None

    def join(self):
        pass

    def watch(self, pid, extra_bytes=lambda: 0):
        """Start sampling the process tree under `pid` (the sandbox); `extra_bytes()` adds what its
        in-memory folders hold, when that can be read."""
        self._thread = threading.Thread(target=self._loop, args=(pid, extra_bytes), daemon=True)
        self._thread.start()

    def _loop(self, pid, extra_bytes):
        import psutil

        try:
            root = psutil.Process(pid)
        except psutil.Error:
            return
        while not self._stop.wait(self.interval):
            try:
                family = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            used, threads = extra_bytes(), 0
            for proc in family:
                try:
                    used += proc.memory_info().rss
                    threads += proc.num_threads()
                except psutil.Error:
                    pass
            self.peak = max(self.peak, used)
            over = "memory" if used > self.memory else "processes" if threads > self.processes else ""
            if over:
                self.hit = over
                for proc in reversed(family):
                    try:
                        proc.kill()
                    except psutil.Error:
                        pass
                return

    def verdict(self):
        return self.hit

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


_DETECTED = {}


def detect(root=CGROUP_ROOT):
    """The best mechanism this process can use (cached per process)."""
    if root not in _DETECTED:
        _DETECTED[root] = CgroupV2.detect(root) or CgroupV1.detect(root) or Measured()
    return _DETECTED[root]


def clean_stale(pid_alive):
    """Remove the cgroups of workers that are gone (named autograde-<worker pid>-<n>)."""
    for folder in detect().stale():
        try:
            owner = int(folder.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not pid_alive(owner):
            _kill_and_remove([folder])
