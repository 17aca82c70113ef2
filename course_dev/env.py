"""The environment in which nbgrader, nbclient and alembic find this interpreter first on PATH
(they start kernels and tools with whatever `python` comes first)."""

import os
import sys

BIN = os.path.dirname(sys.executable)


def with_this_python(env=None):
    """A copy of `env` (default os.environ) with this interpreter's folder first on PATH."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def use_this_python():
    """Put this interpreter's folder first on PATH in this process (and so in its children)."""
    if os.environ.get("PATH", "").split(os.pathsep)[0] != BIN:
        os.environ["PATH"] = BIN + os.pathsep + os.environ.get("PATH", "")
