"""The integrity guard (autograde/kernel_guard.py) in a plain Python process, without a kernel: an IPython shell
runs the notebook's cells as the kernel would, the guard is installed by the grader's own setup cell from a file
descriptor, and its records are read and analysed by the grader's own code (autograde/guard.py).

    python tests/kernel_guard_driver.py < job.json       (run by tests/test_autograde_kernel_guard.py)

job: {"cells": [{"source": ...} or {"test": grade_id, "source": ...}], "imports": [[name, module, attribute]],
      "packages": [...], "helpers": [...], "hidden": [begin, end] (nbgrader's default delimiters if absent)}
prints: {"flags": [...], "outcomes": {grade_id: {"ok", "ename", "evalue", "value"}}}

The cells run on a thread of a pool made before the guard is installed, so that what calls IPython is the
standard library, as in a kernel (the guard trusts only the environment's code on the stack of a grader's cell).
"""

import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

from IPython.core.interactiveshell import InteractiveShell

from autograde import guard


def main():
    job = json.load(sys.stdin)
    shell = InteractiveShell.instance()
    tests, cells = {}, [guard.setup_source()]
    for cell in job["cells"]:
        if "test" in cell:
            marker, nonce = guard.test_source()
            tests[nonce] = {
                "grade_id": cell["test"],
                "source": cell["source"],
                "value": guard.ends_in_value(cell["source"]),
            }
            cells.append(marker)
        else:
            cells.append(cell["source"])
    check, check_nonce = guard.check_source()
    cells.append(check)
    imports = [tuple(i) for i in job.get("imports", [])]
    packages, helpers = job.get("packages", ["math"]), job.get("helpers", [])
    payload = guard.payload(tests, imports, packages=packages, helpers=helpers, hidden=job.get("hidden"))
    channel, setup = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    setup.write(payload.encode())
    setup.seek(0)
    os.environ.update(AUTOGRADE_GUARD_FD=str(channel.fileno()), AUTOGRADE_SETUP_FD=str(os.dup(setup.fileno())))
    with ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: None).result()  # the thread exists before the guard takes its snapshot
        for source in cells:
            pool.submit(shell.run_cell, source).result()
    channel.seek(0)
    lines = channel.read().decode().splitlines()
    analysis = guard.analyse(lines, list(tests), [check_nonce])
    outcomes = {tests[nonce]["grade_id"]: asdict(outcome) for nonce, outcome in analysis.outcomes.items()}
    print(json.dumps({"flags": analysis.flags, "outcomes": outcomes}), file=sys.__stdout__)


if __name__ == "__main__":
    main()
