"""Step 4d, the pool (in the grading command): long-lived `python -m autograde.worker` processes,
fed one job at a time (messages.GradeJob, FeedbackJob; a messages.Result back); a worker past the
wall-clock cap is killed (its sandboxes die with it) and replaced."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from .course import PACKAGE, nbgrader_env
from .messages import Result


class Worker:
    """A long-lived `python -m autograde.worker` process (nbgrader imported once)."""

    def __init__(self, index, log_dir):
        env = nbgrader_env()
        env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
        self.index = index
        self.stderr = open(log_dir / f"worker-{index}.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograde.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            start_new_session=True,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = False
        self.thread = threading.get_ident()  # it dies with this thread (PR_SET_PDEATHSIG follows the thread)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, job, timeout):
        """Send a job; the answer, or None if the worker died or ran past `timeout` (then it is killed)."""
        deadline = time.monotonic() + timeout
        if not self.ready:
            first = self._get(deadline + 120)
            try:
                if not first or "ready" not in json.loads(first):
                    return None
            except ValueError:
                return None
            self.ready = True
        try:
            self.proc.stdin.write(job.line().encode())
            self.proc.stdin.flush()
        except OSError:
            return None
        line = self._get(deadline)
        try:
            return Result.read(line) if line else None
        except (ValueError, TypeError):  # not a Result: the worker is broken
            self.kill()
            return None

    def _get(self, deadline):
        try:
            return self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            self.kill()
            return None

    def kill(self):
        try:
            import psutil

            family = psutil.Process(self.proc.pid).children(recursive=True)
        except Exception:  # noqa: BLE001 - already gone
            family = []
        for p in family:  # its sandboxes (each in its own session)
            try:
                p.kill()
            except Exception:  # noqa: BLE001
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self.stderr.close()


class Pool:
    """Workers started ahead of time (by the command's own thread, so that they live as long as the
    command: a worker dies with the thread that started it), so that their imports overlap with the
    command's set-up, and serve every run of the batch."""

    def __init__(self, count, log_dir):
        self.thread = threading.get_ident()
        self.idle = [Worker(i, log_dir) for i in range(count)]

    def fill(self, count, log_dir):
        """At least `count` idle workers (called from the command's own thread)."""
        while len(self.idle) < count:
            self.idle.append(Worker(len(self.idle), log_dir))

    def take(self, index, log_dir):
        while self.idle:
            worker = self.idle.pop()
            if worker.proc.poll() is None:
                return worker
            worker.close()
        return Worker(index, log_dir)

    def give_back(self, worker):
        """A live worker of the command's thread waits for the next run; any other is closed."""
        if worker.thread == self.thread and worker.proc.poll() is None:
            self.idle.append(worker)
        else:
            worker.close()

    def close(self):
        for worker in self.idle:
            worker.close()
        self.idle = []


SKIPPED = "not graded: the batch was stopped"


class _Feed:
    """One run of jobs on the pool: each thread feeds one worker, job after job, and puts (job, Result) in `done`."""

    def __init__(self, jobs, pool, cap, log_dir, stop):
        self.pool, self.cap, self.log_dir, self.stop = pool, cap, log_dir, stop
        self.todo, self.done = queue.Queue(), queue.Queue()
        for job in jobs:
            self.todo.put(job)

    def next_job(self):
        try:
            return self.todo.get_nowait()
        except queue.Empty:
            return None

    def serve(self, index):
        try:
            self.work(index)
        except BaseException as err:  # never leave the batch waiting for a dead thread
            while (job := self.next_job()) is not None:
                self.done.put((job, Result(job.student, reason=f"grading crashed: {err}")))
            raise

    def work(self, index):
        worker = self.pool.take(index, self.log_dir)
        try:
            while (job := self.next_job()) is not None:
                if self.stop.is_set():
                    self.done.put((job, Result(job.student, reason=SKIPPED)))
                    continue
                start = time.monotonic()
                result = worker.ask(job, self.cap)
                if result is None:
                    seconds = time.monotonic() - start
                    reason = f"timed out after {self.cap:g} s" if seconds >= self.cap - 1 else "the grading worker died"
                    result = Result(job.student, reason=reason, seconds=round(seconds, 1))
                    worker.kill()
                    worker = Worker(index, self.log_dir)
                self.done.put((job, result))
        finally:
            self.pool.give_back(worker)


def run_jobs(jobs, workers, cap, log_dir, on_result, progress, pool=None, stop=None):
    """Grade `jobs` on `workers` long-lived workers; on_result(job, result) runs in this thread. The
    workers go back to `pool` (the caller closes it), or are closed if no pool was given. Once `stop`
    (a threading.Event) is set, no new job starts: the rest get the result `SKIPPED`."""
    own = pool is None
    pool = pool or Pool(0, log_dir)
    feed = _Feed(jobs, pool, cap, log_dir, stop or threading.Event())
    count = max(1, min(workers, len(jobs)))
    if pool.thread == threading.get_ident():
        pool.fill(count, log_dir)
    threads = [threading.Thread(target=feed.serve, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for n in range(len(jobs)):
        job, result = feed.done.get()
        on_result(job, result)
        progress(n + 1, len(jobs), job, result)
    for t in threads:
        t.join()
    if own:
        pool.close()
