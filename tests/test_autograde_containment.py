"""Limits per notebook for all its processes together (autograde/containment.py): the cgroup
mechanisms on a fake cgroup tree, the one this machine offers on real processes (shared memory and
children counted), and the measured fallback. Fast: a few short-lived processes."""

import subprocess
import sys

import pytest

from autograde import containment

HOG = "import mmap, time\nm = mmap.mmap(-1, {size})\nfor i in range(0, {size}, 4096):\n    m[i] = 1\ntime.sleep(5)"


def fake_v1(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("9:pids:/\n4:memory:/jobs/grader\n0::/\n")
    for folder in ("memory/jobs/grader", "pids"):
        (tmp_path / "fs" / folder).mkdir(parents=True)
    return proc


def test_own_cgroup_reads_each_hierarchy(tmp_path):
    proc = fake_v1(tmp_path)
    assert containment.own_cgroup("memory", proc) == "/jobs/grader"
    assert containment.own_cgroup("pids", proc) == "/" and containment.own_cgroup("", proc) == "/"


def test_cgroup_v1_box_writes_the_limits_and_reads_the_verdict(tmp_path):
    proc = fake_v1(tmp_path)
    v1 = containment.CgroupV1.detect(tmp_path / "fs", proc)
    assert v1 is not None
    box = v1.box("autograde-1-1", memory=2 << 30, processes=128)
    memory, pids = box.folders
    assert (memory / "memory.limit_in_bytes").read_text() == str(2 << 30)
    assert (pids / "pids.max").read_text() == "128" and box.verdict() == ""
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert box.verdict() == "memory"
    (memory / "memory.oom_control").write_text("oom_kill 0\n")
    (pids / "pids.events").write_text("max 3\n")
    assert box.verdict() == "processes"


def test_cgroup_v2_box_writes_the_limits_and_reads_the_verdict(tmp_path):
    (tmp_path / "cgroup").write_text("0::/grading.slice\n")
    parent = tmp_path / "fs" / "grading.slice"
    parent.mkdir(parents=True)
    (tmp_path / "fs" / "cgroup.subtree_control").write_text("memory pids\n")
    (parent / "cgroup.subtree_control").write_text("memory pids\n")
    v2 = containment.CgroupV2.detect(tmp_path / "fs", tmp_path / "cgroup")
    box = v2.box("autograde-1-1", memory=1 << 30, processes=100)
    folder = box.folders[0]
    assert (folder / "memory.max").read_text() == str(1 << 30) and (folder / "pids.max").read_text() == "100"
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    assert box.verdict() == "memory"


def test_cgroup_v2_as_root_uses_a_cgroup_of_its_own_at_the_top(tmp_path):
    """Our own cgroup holds processes, so it cannot enable controllers for children: the grader makes
    /sys/fs/cgroup/autograde (the top cgroup may) and puts the notebooks' cgroups there."""
    (tmp_path / "cgroup").write_text("0::/user.slice/session-1.scope\n")
    top = tmp_path / "fs"
    (top / "user.slice" / "session-1.scope").mkdir(parents=True)
    (top / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (top / "user.slice" / "session-1.scope" / "cgroup.subtree_control").mkdir()  # writing it fails (busy)
    (top / "autograde").mkdir()
    (top / "autograde" / "cgroup.subtree_control").write_text("")  # what the kernel makes with the folder
    v2 = containment.CgroupV2.detect(top, tmp_path / "cgroup")
    assert v2 is not None and v2.parent == top / "autograde"


def test_no_cgroup_means_the_measured_fallback(tmp_path):
    (tmp_path / "cgroup").write_text("0::/\n")
    assert containment.CgroupV2.detect(tmp_path / "fs", tmp_path / "cgroup") is None
    assert containment.CgroupV1.detect(tmp_path / "fs", tmp_path / "cgroup") is None


def run_in(box, code):
    proc = subprocess.Popen([sys.executable, "-c", code], preexec_fn=box.join)
    if isinstance(box, containment.MeasuredBox):
        box.watch(proc.pid)
    proc.wait(timeout=60)
    return proc.returncode


@pytest.mark.skipif(isinstance(containment.detect(), containment.Measured), reason="no writable cgroup here")
def test_this_machines_cgroup_counts_shared_memory_and_children():
    """A shared anonymous mapping, and three children each under the limit but over it together."""
    mechanism = containment.detect()
    box = mechanism.box("autograde-test-shared", memory=128 << 20, processes=64)
    try:
        assert run_in(box, HOG.format(size=300 << 20)) != 0
        assert box.verdict() == "memory"
    finally:
        box.close()
    children = (
        "import subprocess, sys\n"
        f"code = {HOG.format(size=60 << 20)!r}\n"
        "procs = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(3)]\n"
        "[p.wait() for p in procs]"
    )
    box = mechanism.box("autograde-test-children", memory=128 << 20, processes=64)
    try:
        run_in(box, children)
        assert box.verdict() == "memory"
    finally:
        box.close()


@pytest.mark.skipif(isinstance(containment.detect(), containment.Measured), reason="no writable cgroup here")
def test_this_machines_cgroup_counts_processes_and_threads_together():
    box = containment.detect().box("autograde-test-pids", memory=512 << 20, processes=12)
    spawn = "import threading, time\nfor _ in range(40):\n    threading.Thread(target=time.sleep, args=(2,)).start()"
    try:
        assert run_in(box, spawn) != 0
        assert box.verdict() == "processes"
    finally:
        box.close()


def test_measured_fallback_kills_a_sandbox_over_its_memory():
    box = containment.Measured(interval=0.05).box("x", memory=100 << 20, processes=64)
    try:
        assert run_in(box, HOG.format(size=300 << 20)) != 0
        assert box.verdict() == "memory"
    finally:
        box.close()
