"""Helpers for the course *Attention, from the dot product up*.

Modules:
    data     toy sentences, deterministic embeddings, the video library
    plots    labelled heatmaps and bar charts with colour-blind-safe colours
    widgets  sliders and pickers that redraw figures from the student's own functions
    checks   the assertions used by visible and hidden tests, with messages that name the mistake
    reuse    the student's own code from an earlier lesson's notebook, for later lessons

Nothing here answers an exercise: references come from torch built-ins or from formulas in the tests.
"""

import contextlib
import os
import random
import warnings

__all__ = ["reseed", "setup", "student_code", "torch_threads"]

# The modules a lesson's kernel uses. The others (run, validation, offline_maths, nbclient_fix) are tools for Jupyter
# and the command line that import nbconvert, nbclient or nbgrader: the grader's integrity guard loads and watches
# only these before a student's code runs, which spares every graded kernel about 1.5 s of imports.
KERNEL_MODULES = ("checks", "data", "plots", "reuse", "traffic", "widgets")


def setup(seed=0):
    """Run once at the top of every lesson: fixed seeds, quiet warnings, readable figures."""
    import matplotlib as mpl
    import numpy as np
    import torch

    reseed(seed)
    # The course's tensors are tiny: one thread is faster, and grading runs notebooks in parallel. The tests set
    # ATTENTION_COURSE_THREADS to prove the lessons' claims hold with more threads (other reduction orders) too.
    torch.set_num_threads(int(os.environ.get("ATTENTION_COURSE_THREADS", "1")))
    np.set_printoptions(precision=4, suppress=True)
    warnings.filterwarnings("ignore")  # stray library warnings on stderr would cost points under nbgrader
    mpl.rcParams.update(
        {
            "figure.dpi": 90,
            "figure.figsize": (6.4, 3.6),
            "axes.grid": False,
            "image.cmap": "viridis",
            "font.size": 10,
            # at least 9 pt everywhere, and an opaque white background (readable in a dark theme)
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "legend.fontsize": 9,
            "legend.title_fontsize": 9,
            "axes.titlesize": 10,
            "figure.titlesize": 11,
            "figure.facecolor": "white",
            "savefig.facecolor": "white",
            "savefig.transparent": False,
        }
    )


def reseed(seed):
    """Seed Python's, NumPy's and PyTorch's global random generators. A test cell that opens with `ac.reseed(n)`
    draws the same numbers whatever ran before it, so grading need not run earlier cells for their random draws
    (autograde/prune.py)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@contextlib.contextmanager
def student_code(name):
    """Wrap a demo that calls the student's function `name`: until it is implemented,
    print a short hint instead of a traceback. Every other error is shown as usual."""
    try:
        yield
    except NotImplementedError:
        print(f"(Implement `{name}` in the exercise above, run its cell, then re-run this cell.)")


@contextlib.contextmanager
def torch_threads(count):
    """Run the block on `count` PyTorch threads, then set back the count it had, also after an error or an interrupt:
    a timing on one thread leaves nothing behind that outlives its cell (which is what lets grading skip it)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
