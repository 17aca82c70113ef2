"""The class's JupyterHub (hub/jupyterhub_config.py), started by a test on a free loopback port and always stopped.

`ClassHub` runs `hub/start.py` (what `make hub` runs) with a temporary state folder and course, an admin
API token for the test, and the hub's own proxy. `hub.user(name)` starts that user's server through the
hub's REST API and returns a client for it (requests go through the hub's proxy with a token of that user).
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest
from browser_support import free_port

from course_dev.env import with_this_python
from course_dev.paths import ROOT

CLASS_COURSE = "attention-from-the-dot-product-up"
PROXY = ROOT / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"


MAKE_FILES = ("Makefile", "requirements.txt", "pyproject.toml")  # what `make grade` needs in a course copy


def ready_for_make(course):
    """A course copy where the README's `make …` commands run as in the repository: the Makefile, and the
    course's .venv (a link, marked as set up: the pins are older than its stamp, so make installs nothing)."""
    stamp = ROOT / ".venv" / ".installed"
    (course / ".venv").symlink_to(ROOT / ".venv")
    for name in MAKE_FILES:
        os.utime(course / name, (stamp.stat().st_mtime - 60,) * 2)
    return course


def require_hub():
    """Skip (fail under CI=true) when the proxy from npm is missing."""
    if not PROXY.exists():
        subprocess.run(["make", "hub-proxy"], cwd=ROOT, capture_output=True)
    if not PROXY.exists():
        message = "the hub tests need configurable-http-proxy: run `make hub-proxy` (needs node and npm)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def quote(path):
    return urllib.parse.quote(path)


def request(url, method="GET", token=None, body=None, timeout=60, raw=False):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"token {token}")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as response:
        payload = response.read()
    return payload if raw else (json.loads(payload) if payload.strip() else None)


class UserServer:
    """One user's single-user server, reached through the hub's proxy with that user's token."""

    def __init__(self, hub, name, token):
        self.hub, self.name, self.token = hub, name, token
        self.base = f"{hub.url}user/{name}/"

    def call(self, path, method="GET", body=None, timeout=120, raw=False):
        return request(self.base + path, method, self.token, body, timeout, raw)

    def read_notebook(self, path):
        return self.call(f"api/contents/{quote(path)}?content=1")["content"]

    def write_notebook(self, path, nb):
        self.call(f"api/contents/{quote(path)}", "PUT", {"type": "notebook", "format": "json", "content": nb})

    def read_text(self, path):
        return self.call(f"api/contents/{quote(path)}?content=1&format=text&type=file")["content"]

    def listing(self, path=""):
        return [item["path"] for item in self.call(f"api/contents/{quote(path)}?content=1")["content"]]

    def assignment_action(self, action, assignment):
        return self.call(f"assignments/{action}", "POST", {"course_id": CLASS_COURSE, "assignment_id": assignment})

    def formgrader(self, action, assignment):
        """POST the formgrader's API for one assignment (assign, release, collect, release_feedback, …)."""
        result = self.call(f"formgrader/api/assignment/{assignment}/{action}", "POST", {})
        if isinstance(result, dict) and result.get("success") is False:
            raise AssertionError(f"formgrader {action} {assignment} failed: {result.get('error') or result.get('log')}")
        return result


class ClassHub:
    def __init__(self, state, course_root, db_url=None):
        self.state, self.course_root, self.db_url = Path(state), Path(course_root), db_url
        self.port = free_port(3)  # the proxy's; the hub's API and the proxy's API take the next two
        self.url = f"http://127.0.0.1:{self.port}/"
        self.token = secrets.token_hex(16)
        self.password, self.admin_password = secrets.token_urlsafe(9), secrets.token_urlsafe(24)
        self.process = None

    def __enter__(self):
        require_hub()
        env = with_this_python(
            dict(
                os.environ,
                HUB_STATE=str(self.state),
                HUB_PORT=str(self.port),
                HUB_API_TOKEN=self.token,
                HUB_PASSWORD=self.password,
                HUB_ADMIN_PASSWORD=self.admin_password,
                HUB_COURSE_ROOT=str(self.course_root),
            )
        )
        if self.db_url:
            env["ATTENTION_COURSE_DB"] = self.db_url
        self.log = open(self.state.parent / f"{self.state.name}.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "hub" / "start.py")],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:  # a hub that failed at start may have left its proxy running: stop both
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub exited at start:\n{self.log_tail()}")
            try:  # a short wait per try: whatever holds a port the hub could not bind may take requests and not answer
                request(f"{self.url}hub/api/", token=self.token, timeout=5)
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        raise RuntimeError(f"the hub did not answer in {seconds} s:\n{self.log_tail()}")

    def __exit__(self, *exc):
        """Stop the hub (it stops every user's server and its proxy), then make sure nothing is left."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:  # it usually ends in 2-4 s; once in a few runs its clean-up hangs, so it is not waited on for long
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        leftovers = self.leftovers()
        for proc in leftovers:
            proc.kill()
        psutil.wait_procs(leftovers, timeout=10)  # gone before anyone looks for them again
        self.log.close()

    def leftovers(self):
        """Processes still running from this hub: its proxy (its command line names the state folder) and user
        servers (they run in a home under the state folder and call the hub's API, on the port after HUB_PORT)."""
        api, state, found = f"http://127.0.0.1:{self.port + 1}/hub/api", str(self.state), []
        for proc in psutil.process_iter(["cmdline", "environ", "cwd"]):
            try:
                environ = proc.info["environ"] or {}
                text = " ".join(proc.info["cmdline"] or []) + " " + environ.get("HUB_STATE", "")
                in_home = (proc.info["cwd"] or "").startswith(state)
                if state in text or environ.get("JUPYTERHUB_API_URL") == api or in_home:
                    found.append(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return found

    def log_tail(self):
        self.log.flush()
        return (self.state.parent / f"{self.state.name}.log").read_text()[-4000:]

    def api(self, path, method="GET", body=None):
        return request(f"{self.url}hub/api/{path}", method, self.token, body)

    def user(self, name):
        """Start `name`'s server through the hub's REST API; return a client for it."""
        self.api(f"users/{name}/server", "POST")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            server = self.api(f"users/{name}").get("servers", {}).get("")
            if server and server.get("ready"):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"{name}'s server did not start:\n{self.log_tail()}")
        token = self.api(f"users/{name}/tokens", "POST", {"note": "class test"})["token"]
        return UserServer(self, name, token)
