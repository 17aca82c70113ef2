"""A throwaway PostgreSQL cluster for tests: initdb in a temporary folder, a free port on 127.0.0.1, stopped after.

initdb refuses to run as root, so as root the cluster belongs to `nobody` (runuser); as any other user it
is that user's. The binaries come from PATH or Debian's postgresql package (/usr/lib/postgresql/*/bin).
"""

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from browser_support import free_port

HOW_TO_ENABLE = "install PostgreSQL's server (Debian: `apt-get install postgresql`); CI=true makes this a failure"


def pg_bin(name):
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    return found


def require_postgres():
    missing = [n for n in ("initdb", "pg_ctl", "postgres") if not pg_bin(n)]
    if missing:
        message = f"PostgreSQL tests need {', '.join(missing)}: {HOW_TO_ENABLE}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


class Postgres:
    """`with Postgres() as pg: pg.url("gradebook")` -> a SQLAlchemy URL of a fresh database."""

    def __init__(self):
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="pg_", dir="/tmp"))
        self.data = self.folder / "data"
        self.as_root = os.geteuid() == 0

    def _run(self, *command, **kwargs):
        prefix = ["runuser", "-u", "nobody", "--"] if self.as_root else []
        return subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, **kwargs)

    def __enter__(self):
        require_postgres()
        self.folder.chmod(0o755)
        if self.as_root:
            shutil.chown(self.folder, "nobody")
        try:
            self._run(
                pg_bin("initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            )
            options = f"-p {self.port} -h 127.0.0.1 -k {self.folder} -F"
            self._run(
                pg_bin("pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.folder / "log"),
                "-w",
                "-t",
                "60",
                "start",
            )
        except subprocess.CalledProcessError as error:  # nothing left behind: a server -w gave up on, the folder
            log = self.log()
            try:
                self.__exit__()
            except subprocess.CalledProcessError:
                pass
            message = f"PostgreSQL did not start on port {self.port}: {error.stderr.strip()}\n{log}"
            raise RuntimeError(message) from error
        return self

    def __exit__(self, *exc):
        try:
            self._run(pg_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database):
        """Create `database` and return its URL."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{database}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def log(self):
        path = self.folder / "log"
        return path.read_text()[-3000:] if path.exists() else ""


def wait_until(predicate, seconds, step=0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False
