"""Bring the student's own code from an earlier lesson into a later one.

    MultiHeadAttention, = reuse.from_lesson("06_multi_head", "MultiHeadAttention")

runs the answer cells (the ones marked `# YOUR CODE HERE` in the student notebook) of the earlier
lesson's notebook, found next to this one (`../06_multi_head/06_multi_head.ipynb`), in a fresh
namespace that already holds the course's usual imports, and returns the requested names. Nothing
here holds an answer: what comes back is whatever the student wrote. Graded tests never rely on it;
they use references built from torch.
"""

import json
import math
from pathlib import Path


class NotAvailable(ImportError):
    """The earlier notebook is missing, or the names are not implemented there yet."""


def _namespace():
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn

    return {"np": np, "torch": torch, "nn": nn, "F": F, "math": math, "__name__": "earlier_lesson"}


def notebook_path(lesson, here="."):
    """Where lesson `lesson`'s notebook sits next to the current one (both layouts: course and bundle)."""
    return Path(here).resolve().parent / lesson / f"{lesson}.ipynb"


def answer_cells(path):
    """Sources of the answer cells (nbgrader `solution: true` code cells) of a notebook, in order."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return [
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]


def from_lesson(lesson, *names, here="."):
    """The student's own `names` from lesson `lesson`, as a tuple, or NotAvailable saying what is missing."""
    path = notebook_path(lesson, here)
    if not path.is_file():
        raise NotAvailable(f"{path.name} is not next to this notebook (looked in {path.parent}).")
    namespace, failed = _namespace(), []
    for source in answer_cells(path):
        try:
            exec(compile(source, f"<{lesson} answer cell>", "exec"), namespace)  # noqa: S102 - the student's own code
        except Exception as error:  # an unanswered or broken cell: the names it defines stay missing
            failed.append(f"{type(error).__name__}: {error}"[:120])
    missing = [n for n in names if n not in namespace]
    if missing:
        detail = f" ({'; '.join(failed)})" if failed else ""
        raise NotAvailable(
            f"{', '.join(missing)} not found in your {lesson} notebook: finish those exercises there first{detail}."
        )
    return tuple(namespace[n] for n in names)


def load_from_torch(mine, theirs):
    """Copy the weights of PyTorch's nn.MultiheadAttention `theirs` into a MultiHeadAttention `mine` of lesson 6
    (attributes W_q, W_k, W_v, W_o, each an nn.Linear(d_model, d_model)); returns `mine`.

    Taught in lesson 6 (06_multi_head, "MultiHeadAttention as a module"), used again in lesson 10. PyTorch keeps the
    three input projections stacked in one (3·d_model, d_model) matrix, in the order query, key, value."""
    import torch

    d = theirs.embed_dim
    with torch.no_grad():
        for i, name in enumerate(("W_q", "W_k", "W_v")):
            getattr(mine, name).weight.copy_(theirs.in_proj_weight[i * d : (i + 1) * d])
            if theirs.in_proj_bias is not None:
                getattr(mine, name).bias.copy_(theirs.in_proj_bias[i * d : (i + 1) * d])
        mine.W_o.weight.copy_(theirs.out_proj.weight)
        if theirs.out_proj.bias is not None:
            mine.W_o.bias.copy_(theirs.out_proj.bias)
    return mine
