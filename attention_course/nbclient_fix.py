"""Work around a lost wake-up when nbclient executes a cell that builds widgets (jupyter/nbclient#312).

Seen here: under CPU load, about one run in five of a notebook with an explorer widget waits the whole
per-cell timeout in `shell_channel.get_msg(timeout)` although the kernel's reply has arrived; the
poll only notices it when the timeout expires. Polling in short slices re-checks the socket, so a
missed wake-up costs at most one slice. `apply()` patches jupyter_client in this process only; call it
where notebooks are executed (the grading workers, the tests' harness, the benchmark, `python -m attention_course.run`,
and Validate through tools/student/nbgrader_config.py), never on import. With no timeout (nbconvert's default) a lost
wake-up waited forever: a notebook that "hung" with its kernel idle.
"""

import time
from queue import Empty

from jupyter_client.channels import AsyncZMQSocketChannel

SLICE = 0.25  # seconds
_get_msg = AsyncZMQSocketChannel.get_msg


async def _get_msg_in_slices(self, timeout=None):
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        remaining = SLICE if deadline is None else min(SLICE, max(0.0, deadline - time.monotonic()))
        try:
            return await _get_msg(self, remaining)
        except Empty:
            if deadline is not None and time.monotonic() >= deadline:
                raise


def apply():
    """Patch AsyncZMQSocketChannel.get_msg in this process (idempotent)."""
    if not getattr(AsyncZMQSocketChannel.get_msg, "sliced", False):
        _get_msg_in_slices.sliced = True
        AsyncZMQSocketChannel.get_msg = _get_msg_in_slices
