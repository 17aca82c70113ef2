# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 11 — Attention at scale: memory, tiling, fewer heads for keys and values
#
# **Attention, from the dot product up** · lesson 11
#
# The examples of the earlier lessons had a few dozen tokens at most; language models read thousands. Attention's
# formula does not change with the length, but its **memory** does: the weight matrix
# $A = \operatorname{softmax}(QK^\top/\sqrt{d_k})$ has one entry per (query, key) pair, $T^2$ of them. In
# this lesson you measure that wall, then take it down the way FlashAttention does — with an **online
# softmax** that grows straight out of the stability trick of lesson 4, and **tiled attention** that
# never holds the $T \times T$ matrix. Finally you shrink another memory cost of a language model that
# generates text, the KV cache of lesson 10, by letting several query heads share one key/value head
# (**grouped-query attention**).
#
# **Learning goals.** By the end you can
# 1. measure the peak memory of plain attention and show that it grows with $T^2$;
# 2. derive and implement the **online softmax**: a running maximum and a running sum, with the sum
#    rescaled whenever the maximum grows;
# 3. implement **tiled attention** (with causal masking inside the tiles) that equals plain attention
#    to rounding error while its extra memory grows only linearly in $T$;
# 4. implement **multi-query and grouped-query attention**, show that they equal multi-head attention when
#    every query head has its own key/value head, and count the KV-cache bytes they save per token;
# 5. connect what you built to how long-context models work today.
#
# **You need:**
#
# | what | from lesson |
# |---|---|
# | the stable softmax: subtracting any constant from a row changes nothing, subtracting the row maximum prevents overflow | 4 (`softmax`) |
# | scaled dot-product attention $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$, the causal mask (True = may attend) | 4 (`scaled_dot_product_attention`) |
# | heads: head $i$ owns columns $[i\,d_k, (i+1)\,d_k)$ of $XW^Q$; split, attend, merge, $W^O$ | 6 (`split_heads`, `MultiHeadAttention`) |
# | rotary position embeddings (for the last section only) | 7 (stretch) |
# | the KV cache: keys and values of past tokens kept for the next one | 10 (`10_causal_decoder`) |
#
# Where a demo can use **your own** code from lesson 4 or 6 it does (it reads your notebook next to this
# one); if that notebook is missing or unfinished, it says so and uses a written-out version instead.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells say
# `# YOUR CODE HERE`: replace `raise NotImplementedError()` with your code. The cell after each exercise
# runs *visible checks*; when your work is graded, hidden checks with other shapes run too, so write
# general code. The **Validate** button runs every check at once.

# %%
import math
import sys
import time
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.patches import Patch

import attention_course as ac
from attention_course import checks, data, plots, reuse, widgets

ac.setup()


def softmax(x, axis=-1):
    """Softmax of a numpy array along `axis` (you built it in lesson 4; here PyTorch's does the work)."""
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()


def peak_memory(fn, *args, **kwargs):
    """Call fn(*args, **kwargs); return (its result, the peak number of bytes allocated while it ran).

    tracemalloc records every allocation Python and numpy make while it is on, so the peak counts the
    arrays fn creates (its temporaries and its result), not the inputs that existed before. It counts every
    thread's allocations, so a long switch interval keeps the notebook's own messaging threads from running
    in between (except while numpy works outside the interpreter lock)."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    tracemalloc.start()
    try:
        result = fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sys.setswitchinterval(switch)
    return result, peak


def mib(n_bytes):
    return n_bytes / 2**20


def polynomial(coefficients, unit="bytes"):
    """'32.00·T² + 12·T − 3 bytes' from np.polyfit's coefficients (highest power first)."""
    powers = {2: "·T²", 1: "·T", 0: ""}
    terms = []
    for power, c in zip(range(len(coefficients) - 1, -1, -1), coefficients):
        text = f"{abs(c):.2f}" if power == len(coefficients) - 1 else f"{abs(c):.0f}"
        terms.append(("−" if c < 0 else "+") + " " + text + powers[power])
    return " ".join(terms).lstrip("+ ") + f" {unit}"


def from_earlier_lesson(lesson, name, probe):
    """Your function or class `name` from the notebook of `lesson` (next to this one), if it is there and
    `probe(it)` runs; otherwise None, after saying why."""
    try:
        (found,) = reuse.from_lesson(lesson, name)
        probe(found)
        return found
    except reuse.NotAvailable as why:
        print(f"({why})")
    except NotImplementedError:
        print(f"(`{name}` in your {lesson} notebook is not implemented yet.)")
    except Exception as error:
        print(f"(`{name}` from your {lesson} notebook raised {type(error).__name__}: {error})")
    return None


# %% [markdown]
# ## 1. The memory wall: $T^2$ weights, measured
#
# Plain attention computes the scores $S = QK^\top/\sqrt{d_k}$ of shape $(T_q, T_k)$, turns them into
# weights $A$ of the same shape, and only then multiplies by $V$. For self-attention $T_q = T_k = T$, so
# the weights alone are $T^2$ numbers: $8T^2$ bytes in float64. The output, $T \times d_v$, is far smaller
# as soon as $T \gg d_v$.
#
# We measure it. `peak_memory` (defined above) switches on Python's `tracemalloc`, which records every
# allocation that Python and numpy make, calls a function and returns the largest amount of memory that was allocated at
# one time during the call. We run **your** `scaled_dot_product_attention` from lesson 4 (it is read from
# `../04_softmax/04_softmax.ipynb`) for one head with $d_k = d_v = 32$ at lengths from 256 to 2048.


# %%
def attention_written_out(Q, K, V):
    """softmax(Q Kᵀ / √d_k) V in numpy with the whole (T_q, T_k) matrix at once, as in lesson 4 (no mask).
    Returns (output, weights) like lesson 4's function."""
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    return A @ V, A


attention_04 = from_earlier_lesson(
    "04_softmax", "scaled_dot_product_attention", probe=lambda f: f(np.eye(2), np.eye(2), np.eye(2))
)
attention_04_name = "your lesson-4 scaled_dot_product_attention"
if attention_04 is None:
    print("We measure attention_written_out, the same formula, instead.")
    attention_04, attention_04_name = attention_written_out, "attention_written_out (lesson 4's formula)"

D_HEAD = 32
LENGTHS = [256, 512, 768, 1024, 1536, 2048]
rng = data.rng(1)
QKV = {T: tuple(rng.standard_normal((T, D_HEAD)) for _ in range(3)) for T in LENGTHS}  # one head, float64

plain_peak = {}
for T in LENGTHS:
    (out, weights), plain_peak[T] = peak_memory(attention_04, *QKV[T])
print(f"Peak memory of {attention_04_name}, one head, d_k = d_v = {D_HEAD}, float64:")
print(f"{'T':>6} {'peak (MiB)':>11} {'one T×T matrix (MiB)':>21} {'peak / (8 T²)':>14}")
for T in LENGTHS:
    print(f"{T:>6} {mib(plain_peak[T]):>11.2f} {mib(8 * T * T):>21.2f} {plain_peak[T] / (8 * T * T):>14.2f}")

a2, a1, a0 = np.polyfit(LENGTHS, [plain_peak[T] for T in LENGTHS], 2)
fit_error = max(abs(np.polyval([a2, a1, a0], T) - plain_peak[T]) / plain_peak[T] for T in LENGTHS)
print(f"\nQuadratic fit: peak ≈ {polynomial([a2, a1, a0])} (largest misfit {fit_error:.1%}).")
print(
    f"The T² coefficient, {a2:.2f} bytes per (query, key) pair, is {a2 / 8:.2f} float64 T×T matrices "
    "alive at the same moment."
)
T_long = 32_768
print(
    f"Extrapolated to T = {T_long:,} (one head, one sequence, one layer): {np.polyval([a2, a1, a0], T_long) / 2**30:.1f} GiB."
)

# %% [markdown]
# The table shows the wall. The peak is a fixed number of float64 $T \times T$ matrices: the last column hardly
# moves while $T$ grows eightfold, and the quadratic fit's $T^2$ coefficient divided by 8 bytes gives the same
# number. Computed this way, every head of every layer, for every sequence of a batch, needs such matrices — and
# the extrapolated line is for *one* head.
#
# Yet the output of a query is only a $d_v$-vector. Could we produce it without ever holding the
# query's whole row of weights? The obstacle is the softmax: every weight is divided by a sum over
# **all** keys, so it seems we must see every score before we can use any of them.

# %% [markdown]
# ## 2. The online softmax
#
# ### Back to lesson 4's stability argument
#
# In lesson 4 you used one fact to make softmax safe: for **any** constant $c$,
#
# $$\operatorname{softmax}(z)_i = \frac{e^{z_i - c}}{\sum_j e^{z_j - c}} ,$$
#
# because the factor $e^{-c}$ cancels. Choosing $c = \max_j z_j$ keeps every exponent $\le 0$ (no overflow)
# and makes the denominator at least 1. Notice what the fact does *not* require: $c$ need not be the
# maximum; any constant works for the mathematics, and the maximum is only the safe choice.
#
# Now let the scores arrive in blocks, $z = (z^{(1)}, z^{(2)}, \dots)$, as they would if we computed the
# keys block by block. After the first $t$ blocks keep two numbers per row:
#
# $$m_t = \max(\text{scores seen so far}), \qquad \ell_t = \sum_{\text{seen } j} e^{z_j - m_t} .$$
#
# $\ell_t$ is exactly lesson 4's denominator, for the scores seen so far, with the shift $c = m_t$. When the
# next block $z^{(t+1)}$ arrives, the maximum may grow: $m_{t+1} = \max\!\big(m_t, \max z^{(t+1)}\big)$.
# The old terms were computed with the shift $m_t$; the shift is now $m_{t+1}$, and
# $e^{z_j - m_{t+1}} = e^{z_j - m_t}\, e^{m_t - m_{t+1}}$, so **one multiplication fixes all of them at once**:
#
# $$\boxed{\;\ell_{t+1} = \ell_t\, e^{\,m_t - m_{t+1}} + \sum_{j \in \text{block } t+1} e^{\,z_j - m_{t+1}}\;}$$
#
# Since $m_{t+1} \ge m_t$, the factor $e^{m_t - m_{t+1}}$ is at most 1 (and exactly 1 when the maximum did
# not change), and every new exponent is $\le 0$: nothing can overflow, at any step. After the last block,
# $m$ is the row maximum and $\ell$ is lesson 4's denominator, so
# $\operatorname{softmax}(z)_i = e^{z_i - m}/\ell$. One pass over the scores gives both numbers; that is the
# **online softmax** (Milakov and Gimelshein, 2018, "Online normalizer calculation for softmax").
#
# **The start.** Before any block, $m_0 = -\infty$ and $\ell_0 = 0$ (the maximum and the sum of nothing).
# The first update then gives $e^{-\infty} = 0$ times the old sum, as it should. Blocked scores are
# $-\infty$ (lesson 4's masks), so a whole block can be $-\infty$ for a row; if *everything* a row has seen is
# $-\infty$, its maximum is still $-\infty$ and $e^{m_t - m_{t+1}} = e^{-\infty + \infty}$ is NaN. Such a row
# has seen no allowed key yet: its state must simply stay $m = -\infty$, $\ell = 0$.
#
# Why not skip the maximum and add up $e^{z_j}$ directly, or fix the shift from the first block? The cell
# shows both on a row whose third score is large.

# %%
row = np.array([3.0, 1.0, 800.0, 2.0])
with np.errstate(over="ignore", invalid="ignore"):
    print("sum of e^z without any shift:       ", np.exp(row).sum())
    print("shift fixed by the first score (3): ", np.exp(row - row[0]).sum(), " — e^797 overflows too")
    print("shift by the true maximum:          ", np.exp(row - row.max()).sum())


# %% [markdown]
# Only a shift that follows the maximum stays finite, and a running maximum is only known up to the
# current block: that is why the sum must be **rescaled** every time the maximum grows.
#
# ### Exercise 11.1 — one step of the online softmax (3 points)
#
# Implement `online_softmax_update(m, l, s)`:
# * `m` and `l` are float arrays of the same shape `(...)`: the running maximum and running sum of each row
#   so far (`-np.inf` and `0` before the first block);
# * `s` has shape `(..., B)` with `B ≥ 1`: the row's next block of scores; entries may be `-np.inf` (blocked);
# * return the new pair `(m_new, l_new)`, both of shape `(...)`, with $m_{t+1}$ and $\ell_{t+1}$ from the boxed
#   formula. A row that has seen only `-inf` so far keeps `m_new = -inf`, `l_new = 0`, without NaN.
# * Return new arrays; do not change `m` or `l` in place.
#
# <details><summary>Hint</summary>
#
# `np.maximum(m, s.max(axis=-1))` is the new maximum. To keep `-inf − (-inf)` out of the exponents, use a
# safe copy of the new maximum for the shifts, e.g. `np.where(np.isneginf(m_new), 0.0, m_new)`: for such a
# row every $e^{\dots}$ is then $e^{-\infty} = 0$. Shift `s` with `[..., None]` so that it broadcasts
# along the block.
# </details>


# %% answer="online-softmax-update"
def online_softmax_update(m, l, s):
    """One block of the online softmax.

    m, l: (...) running maximum and running sum of each row so far (-inf and 0 at the start)
    s:    (..., B) the next block of scores of each row (may contain -inf)
    returns (m_new, l_new), each (...): the maximum and the sum of e^(score - m_new) over everything seen
    """
    ### BEGIN SOLUTION
    s = np.asarray(s, dtype=float)
    m_new = np.maximum(m, s.max(axis=-1))
    shift = np.where(np.isneginf(m_new), 0.0, m_new)  # rows that saw only -inf: every term is e^-inf = 0
    l_new = l * np.exp(m - shift) + np.exp(s - shift[..., None]).sum(axis=-1)
    return m_new, l_new
    ### END SOLUTION


# %% tests="online-softmax-update-tests" points=3
# Visible checks: a worked example with two rows, a start from (-inf, 0), a blocked block, and a long row.
_m, _l = np.array([0.0, 3.0]), np.array([1.0, 2.0])
_s = np.array(
    [
        [1.0, -1.0],  # row 0: the maximum grows from 0 to 1
        [0.5, 2.0],
    ]
)  # row 1: the maximum stays 3
# row 0: l = 1·e^(0-1) + e^(1-1) + e^(-1-1) = 1.50321  ·  row 1: l = 2·e^0 + e^(0.5-3) + e^(2-3) = 2.44996
_result = checks.call(online_softmax_update, _m, _l, _s)
checks.expect(
    isinstance(_result, tuple) and len(_result) == 2, "online_softmax_update must return a tuple (m_new, l_new)."
)
_m_new, _l_new = _result
checks.expect_close(
    _m_new,
    [1.0, 3.0],
    "m_new on the worked example",
    mistakes={"the new maximum ignores the old one: m_new = max(m, max of the block).": [1.0, 2.0]},
)
checks.expect_close(
    _l_new,
    [1.50321472, 2.44996444],
    "l_new on the worked example",
    mistakes={
        "the running sum is not rescaled when the maximum grows: multiply the old sum by e^(m - m_new).": [
            2.13533528,
            2.44996444,
        ],
        "the old sum is rescaled by e^(m_new - m), the wrong way round: the factor is e^(m - m_new) ≤ 1.": [
            3.85361711,
            2.44996444,
        ],
        "the new scores are shifted by the old maximum m: shift them by m_new.": [3.45404071, 2.44996444],
        "the old sum is not rescaled and the new scores are shifted by the old maximum: use l·e^(m - m_new) "
        "+ Σ e^(s - m_new).": [4.08616127, 2.44996444],
    },
)
checks.expect_close(_m, [0.0, 3.0], "m after the call (it must not change in place)")
checks.expect_close(_l, [1.0, 2.0], "l after the call (it must not change in place)")
# From the start (-inf, 0): one block gives its own maximum and lesson 4's denominator.
_m1, _l1 = online_softmax_update(np.array([-np.inf]), np.array([0.0]), np.array([[2.0, 0.0, 1.0]]))
checks.expect_finite(
    _l1,
    "l_new from the start (m = -inf, l = 0)",
    "e^(-inf - m_new) is 0, so the old sum contributes nothing: no NaN should appear.",
)
checks.expect_close(_m1, [2.0], "m_new from the start")
checks.expect_close(_l1, [1 + np.exp(-2) + np.exp(-1)], "l_new from the start")
# A blocked block (-inf everywhere) before any allowed score: the state stays (-inf, 0).
_m2, _l2 = online_softmax_update(np.array([-np.inf, 0.5]), np.array([0.0, 1.0]), np.full((2, 3), -np.inf))
checks.expect_finite(
    _l2,
    "l_new after a block that is entirely -inf",
    "a row that has seen only -inf must keep l = 0 (and m = -inf): avoid e^(-inf - (-inf)), "
    "which is NaN, by shifting with 0 where m_new is -inf.",
)
checks.expect_close(_l2, [0.0, 1.0], "l_new after a block that is entirely -inf")
checks.expect(bool(np.isneginf(_m2[0])) and float(_m2[1]) == 0.5, "m_new after a blocked block should be [-inf, 0.5].")
# A long row fed in blocks of 3 ends with lesson 4's maximum and denominator.
_z = np.random.default_rng(0).normal(0, 3, 20)
_m3, _l3 = np.array(-np.inf), np.array(0.0)
for _start in range(0, 20, 3):
    _m3, _l3 = online_softmax_update(_m3, _l3, _z[_start : _start + 3])
checks.expect_close(_m3, _z.max(), "m after the whole row (blocks of 3)")
checks.expect_close(_l3, np.exp(_z - _z.max()).sum(), "l after the whole row (blocks of 3)")


### BEGIN HIDDEN TESTS
def _online_update_hidden():
    rng = np.random.default_rng(111)

    def lse(x):
        return torch.logsumexp(torch.from_numpy(np.asarray(x, dtype=float)), dim=-1).numpy()

    # batches of rows, blocks of different widths, scores on very different scales (no overflow)
    for shape, width, scale in (((3, 4), 5, 1.0), ((2, 3, 2), 1, 30.0), ((6,), 7, 400.0)):
        z = scale * rng.standard_normal(shape + (4 * width + 1,))
        m, l = np.full(shape, -np.inf), np.zeros(shape)
        for start in range(0, z.shape[-1], width):
            block = z[..., start : start + width]
            m_new, l_new = online_softmax_update(m, l, block)
            checks.expect_shape(m_new, shape, f"m_new for rows of shape {shape}")
            checks.expect_shape(l_new, shape, f"l_new for rows of shape {shape}")
            checks.expect_finite(
                l_new,
                f"l_new for scores of scale {scale}",
                "shift every exponent by the new maximum, so that none is positive.",
            )
            seen = z[..., : start + block.shape[-1]]
            no_rescale = np.where(np.isneginf(m), 0.0, l) + np.exp(block - m_new[..., None]).sum(-1)
            checks.expect_close(m_new, seen.max(-1), f"m_new after {seen.shape[-1]} scores (rows {shape})")
            checks.expect_close(
                np.log(l_new) + m_new,
                lse(seen),
                f"m_new + log(l_new) after {seen.shape[-1]} scores (rows {shape}), compared with torch.logsumexp",
                atol=1e-9,
                rtol=1e-9,
                mistakes={
                    "the running sum is not rescaled when the maximum grows: multiply the "
                    "old sum by e^(m - m_new).": np.log(no_rescale) + m_new
                }
                if start
                else None,
            )
            m, l = m_new, l_new
    # masked entries (-inf), rows that start fully blocked, and blocks that are fully blocked later
    z = rng.standard_normal((5, 12))
    z[0, :8] = -np.inf  # row 0: the first two blocks are blocked
    z[1, 4:8] = -np.inf  # row 1: a blocked block in the middle
    z[2] = -np.inf  # row 2: everything blocked
    z[3, ::2] = -np.inf  # row 3: every other score blocked
    m, l = np.full(5, -np.inf), np.zeros(5)
    for start in range(0, 12, 4):
        m, l = online_softmax_update(m, l, z[:, start : start + 4])
        checks.expect_finite(
            l,
            "l_new with blocked (-inf) scores",
            "a row that has seen only -inf keeps m = -inf and l = 0; avoid e^(-inf - (-inf)).",
        )
    finite = np.isfinite(z).any(-1)
    checks.expect_close(l[finite], np.exp(lse(z[finite]) - m[finite]), "l after rows with blocked scores")
    checks.expect(
        bool(np.isneginf(m[2])) and float(l[2]) == 0.0,
        "a row whose scores are all -inf must end with m = -inf and l = 0.",
    )
    # single scores per block, starting from a given state; inputs untouched
    m0, l0 = np.array([2.0, -1.0, 0.0]), np.array([1.5, 1.0, 3.0])
    s = np.array([[3.0], [-1.0], [-50.0]])
    m_new, l_new = online_softmax_update(m0.copy(), l0.copy(), s)
    checks.expect_close(m_new, [3.0, -1.0, 0.0], "m_new for blocks of one score")
    checks.expect_close(
        l_new,
        [1.5 * np.exp(-1.0) + 1.0, 2.0, 3.0 + np.exp(-50.0)],
        "l_new for blocks of one score",
        mistakes={
            "the running sum is not rescaled when the maximum grows: multiply the old sum by e^(m - m_new).": [
                2.5,
                2.0,
                3.0 + np.exp(-50.0),
            ]
        },
    )
    m1, l1 = m0.copy(), l0.copy()
    online_softmax_update(m1, l1, s)
    checks.expect_close(
        np.concatenate([m1, l1]), np.concatenate([m0, l0]), "m and l after the call (no in-place change)"
    )


_online_update_hidden()
### END HIDDEN TESTS
checks.passed("online_softmax_update")


# %% [markdown]
# **Your update at work.** The cell feeds one row of ten scores to your function in blocks of 3 and
# prints the state after each block. Then it runs the whole online softmax — your update over the blocks,
# followed by $e^{z_i - m}/\ell$ — on a batch of rows whose scores lie near $\pm 1000$ with a spread of a few
# units (so that many weights matter), and compares it with your
# lesson-4 `softmax` (read from your lesson-4 notebook; PyTorch's if that is not available).


# %%
def online_softmax(x, block_size):
    """Softmax along the last axis with one pass of online_softmax_update over blocks of columns."""
    m, l = np.full(x.shape[:-1], -np.inf), np.zeros(x.shape[:-1])
    for start in range(0, x.shape[-1], block_size):
        m, l = online_softmax_update(m, l, x[..., start : start + block_size])
    return np.exp(x - m[..., None]) / l[..., None]


softmax_04, softmax_04_name = (
    from_earlier_lesson("04_softmax", "softmax", probe=lambda f: f(np.zeros(3))),
    "your lesson-4 softmax",
)
if softmax_04 is None:
    print("Comparing with torch.softmax instead.")
    softmax_04, softmax_04_name = softmax, "torch.softmax"

with ac.student_code("online_softmax_update"):
    z = np.array([0.5, 1.0, -2.0, 2.5, 0.0, 1.5, 4.0, 3.0, -1.0, 0.2])
    m, l = np.array(-np.inf), np.array(0.0)
    print(f"{'block':>6} {'scores':>22} {'m':>6} {'l':>8}  rescale factor e^(m_old - m_new)")
    for start in range(0, len(z), 3):
        block = z[start : start + 3]
        m_old = m
        m, l = online_softmax_update(m, l, block)  # yours
        factor = "—" if np.isneginf(m_old) else f"{np.exp(m_old - m):.4f}" + ("  (max grew)" if m > m_old else "")
        print(f"{start // 3:>6} {np.array2string(block, precision=1):>22} {float(m):>6.2f} {float(l):>8.4f}  {factor}")
    print(f"lesson 4's two-pass values: max = {z.max():.2f}, sum = {np.exp(z - z.max()).sum():.4f}")

    demo_rng = np.random.default_rng(5)
    logits = demo_rng.uniform(-1000, 1000, (6, 1)) + demo_rng.normal(0, 3, (6, 50))  # rows near ±1000, spread 3
    for block_size in (1, 7, 50):
        diff = np.abs(online_softmax(logits, block_size) - checks.to_numpy(softmax_04(logits))).max()
        print(
            f"online softmax (blocks of {block_size:>2}) vs {softmax_04_name}, logits in ±1000: "
            f"max abs difference {diff:.1e}"
        )


# %% [markdown]
# Twice the maximum grew and the sum was scaled down by the printed factor before the new terms were
# added; the final state is lesson 4's maximum and denominator. Whatever the block size, the result
# agrees with lesson 4's softmax to rounding error, even with logits of $\pm 1000$.
#
# One honest remark: `online_softmax` still reads the scores twice — once for $m$ and $\ell$, once to
# output $e^{z_i - m}/\ell$. In attention that second pass disappears, because we never need the weights
# themselves, only their product with $V$. That is the next step.

# %% [markdown]
# ## 3. Tiled attention
#
# ### The output can be accumulated too
#
# The output of query $i$ is $o_i = \sum_j A_{ij} v_j = \frac{1}{\ell}\sum_j e^{s_{ij} - m}\, v_j$ with the
# final $m$ and $\ell$ of row $i$. Keep, next to $m$ and $\ell$, an **unnormalised output**
# $\tilde o = \sum_{\text{seen } j} e^{s_{ij} - m_t}\, v_j$ (a $d_v$-vector per row). It has the same shift as
# $\ell$, so it is rescaled the same way when a new key block arrives:
#
# $$\tilde o_{t+1} = \tilde o_t\, e^{\,m_t - m_{t+1}} + \sum_{j \in \text{block}} e^{\,s_{ij} - m_{t+1}}\, v_j ,
# \qquad o_i = \tilde o_{\text{last}} / \ell_{\text{last}} .$$
#
# In matrix form, for a block of queries $Q_a$ and a block of keys and values $K_b, V_b$: compute the tile of
# scores $S_{ab} = Q_a K_b^\top/\sqrt{d_k}$, update $m$ and $\ell$ (your exercise 11.1), rescale $\tilde O$ and add
# $e^{S_{ab} - m_{\text{new}}} V_b$. After the last key block, divide by $\ell$. The result is **exactly**
# attention, not an approximation: every step is an identity of lesson 4's shift argument.
#
# ### Tiles
#
# Cut the queries into blocks of $B$ rows and the keys and values into blocks of $B$ rows. Each pair
# (query block $a$, key block $b$) is a **tile** of the score matrix, at most $B \times B$. Besides the output,
# which any method must return, the only arrays needed at any moment are of the size of one tile
# ($B \times B$) and, for the current query block, $m$, $\ell$ ($B$ numbers each) and $\tilde O$ ($B \times d_v$).
#
# **Causal masking in tiles.** Query $i$ may attend to key $j$ only if $j \le i$ (lesson 4's lower
# triangle). With aligned tiles, three kinds appear:
# * tiles entirely **below** the diagonal: every key comes before every query, nothing is masked;
# * tiles entirely **above** the diagonal: every entry is masked — **skip them**, they contribute
#   nothing (and cost nothing);
# * tiles **on** the diagonal: mask inside the tile, with the *global* positions $i$ and $j$ of its rows and columns.
#
# When $B$ does not divide $T$, the last block is shorter; slicing `K[..., j0:j0 + B, :]` takes care of that.
# The helper below classifies the tiles; the figure shows them for $T = 12$, $B = 4$.


# %%
def tile_grid(T, block_size, causal=False, window=None):
    """One entry per tile (query block a, key block b) of a T × T score matrix cut into block_size blocks:
    0 = skipped (every entry masked), 1 = computed with some entries masked inside, 2 = computed, nothing masked.
    causal: query i may see keys j <= i; window W (implies causal): keys i - W < j <= i."""
    starts = np.arange(0, T, block_size)
    ends = np.minimum(starts + block_size, T) - 1
    a0, a1, b0, b1 = starts[:, None], ends[:, None], starts[None, :], ends[None, :]
    if not causal and window is None:
        return np.full((len(starts), len(starts)), 2)
    some = b0 <= a1  # some key of the tile comes no later than some query
    every = b1 <= a0  # every key comes no later than every query
    if window is not None:
        some &= b1 > a0 - window
        every &= b0 > a1 - window
    return np.where(every, 2, np.where(some, 1, 0))


def entry_map(T, block_size, causal=False):
    """Per (query, key) entry: 0 = in a skipped tile, 1 = computed but masked, 2 = computed and used."""
    tiles = np.repeat(np.repeat(tile_grid(T, block_size, causal), block_size, 0), block_size, 1)[:T, :T]
    allowed = np.tril(np.ones((T, T), dtype=bool)) if causal else np.ones((T, T), dtype=bool)
    return np.where(tiles == 0, 0, np.where(allowed, 2, 1))


TILE_COLOURS = ListedColormap(["#DDDDDD", plots.COLORS[1], plots.COLORS[0]])  # skipped, masked, used
TILE_LEGEND = [
    Patch(color="#DDDDDD", label="skipped tile"),
    Patch(color=plots.COLORS[1], label="computed, masked"),
    Patch(color=plots.COLORS[0], label="computed, used"),
]

T_demo, B_demo = 12, 4
fig, axes = plt.subplots(1, 2, figsize=(8.4, 4.0), layout="constrained")
counts = {}
for ax, causal in zip(axes, (False, True)):
    ax.imshow(entry_map(T_demo, B_demo, causal), cmap=TILE_COLOURS, vmin=0, vmax=2)
    for edge in np.arange(B_demo, T_demo, B_demo) - 0.5:
        ax.axhline(edge, color="white", lw=2.5)
        ax.axvline(edge, color="white", lw=2.5)
    grid = tile_grid(T_demo, B_demo, causal)
    counts[causal] = {kind: int((grid == code).sum()) for code, kind in ((0, "skipped"), (1, "masked"), (2, "full"))}
    ax.set_title(
        f"{'causal' if causal else 'no mask'}: {grid.size - counts[causal]['skipped']} of {grid.size} tiles computed"
    )
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
axes[1].legend(handles=TILE_LEGEND, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False)
fig.suptitle(f"Tiles of a T × T score matrix, T = {T_demo}, B = {B_demo}")
plots.show(
    fig,
    alt=f"Two 12 by 12 grids cut into 4 by 4 tiles. Without a mask all 9 tiles are computed. "
    f"With a causal mask {counts[True]['skipped']} tiles above the diagonal are skipped, "
    f"{counts[True]['masked']} diagonal tiles are computed with their upper triangle masked, "
    f"and {counts[True]['full']} tiles below are computed in full.",
    name="11_tiles",
)
print(
    f"causal, T = {T_demo}, B = {B_demo}: {counts[True]['full']} full tiles, {counts[True]['masked']} diagonal "
    f"tiles masked inside, {counts[True]['skipped']} tiles skipped"
)


# %% [markdown]
# ### Exercise 11.2 — tiled attention (5 points)
#
# Implement `tiled_attention(Q, K, V, block_size, causal=False)` for numpy arrays `Q` `(..., T_q, d_k)`,
# `K` `(..., T_k, d_k)`, `V` `(..., T_k, d_v)` (any number of leading batch axes). Return the output
# `(..., T_q, d_v)` — only the output, no weights — equal to lesson 4's
# $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$ within $10^{-6}$ in float64.
# * Work through tiles: queries in blocks of `block_size` rows and, for each query block, keys and values in
#   blocks of `block_size` rows, with a running $m$, $\ell$ and $\tilde O$ per query row (use your
#   `online_softmax_update`). `block_size` need not divide `T_q` or `T_k`: the last blocks are shorter.
# * **Never hold a `(T_q, T_k)` array.** The checks measure your peak memory with `tracemalloc` and fail if it
#   reaches the size of one $T_q \times T_k$ float64 matrix.
# * `causal=True` (self-attention, $T_q = T_k$): query $i$ may attend to key $j$ only if $j \le i$. Skip
#   the tiles where every key comes after every query, and mask the entries $j > i$ inside the tiles on the
#   diagonal with `-np.inf` before the update.
#
# <details><summary>Hint</summary>
#
# Two loops: `for i0 in range(0, T_q, block_size)` and, inside, `for j0 in range(0, T_k, block_size)`.
# Slices such as `Q[..., i0:i0 + block_size, :]` stop at the end on their own. Start each query block with
# `m = np.full(shape, -np.inf)`, `l = np.zeros(shape)` and `O = 0`. In each tile:
# `s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)`; `m_new, l = online_softmax_update(m, l, s)`;
# `O = O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v`; `m = m_new`. At the end of the
# key loop, `O / l[..., None]` is the output of that query block. For the mask, compare the global
# positions `np.arange(j0, j0 + s.shape[-1])` of the tile's keys with those of its queries. Once
# `j0` is larger than the last query position of the block, no later tile has an allowed entry.
# </details>


# %% answer="tiled-attention"
def tiled_attention(Q, K, V, block_size, causal=False):
    """softmax(Q Kᵀ / √d_k) V computed tile by tile, never holding a (T_q, T_k) array.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v); causal: query i may see keys j <= i
    returns the output (..., T_q, d_v)
    """
    ### BEGIN SOLUTION
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    out = np.empty(Q.shape[:-1] + V.shape[-1:], dtype=np.result_type(Q, K, V, np.float64))
    for i0 in range(0, T_q, block_size):
        q = Q[..., i0 : i0 + block_size, :] / np.sqrt(d_k)  # (..., Bq, d_k)
        rows = np.arange(i0, i0 + q.shape[-2])  # global query positions
        m = np.full(q.shape[:-1], -np.inf)  # (..., Bq)
        l = np.zeros(q.shape[:-1])
        O = np.zeros(q.shape[:-1] + V.shape[-1:])  # (..., Bq, d_v), unnormalised
        for j0 in range(0, T_k, block_size):
            if causal and j0 > rows[-1]:
                break  # this tile and every later one: all masked
            k, v = K[..., j0 : j0 + block_size, :], V[..., j0 : j0 + block_size, :]
            s = q @ np.swapaxes(k, -1, -2)  # (..., Bq, Bk): one tile of scores
            if causal and j0 + s.shape[-1] - 1 > rows[0]:  # the tile crosses the diagonal
                cols = np.arange(j0, j0 + s.shape[-1])
                s = np.where(cols[None, :] <= rows[:, None], s, -np.inf)
            m_new, l = online_softmax_update(m, l, s)
            O = O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v
            m = m_new
        out[..., i0 : i0 + block_size, :] = O / l[..., None]
    return out
    ### END SOLUTION


# %% tests="tiled-attention-tests" points=5
### BEGIN HIDDEN TESTS
# These checks use a reference online_softmax_update, so that a mistake in exercise 11.1 costs points there only.
def _reference_update(m, l, s):
    s = np.asarray(s, dtype=float)
    m_new = np.maximum(m, s.max(axis=-1))
    shift = np.where(np.isneginf(m_new), 0.0, m_new)
    return m_new, l * np.exp(m - shift) + np.exp(s - shift[..., None]).sum(axis=-1)


_students_update, online_softmax_update = online_softmax_update, _reference_update


### END HIDDEN TESTS
# Visible checks: a worked example in which the maximum grows, comparisons with F.scaled_dot_product_attention
# (PyTorch's plain attention) for a block size that does not divide T and for the causal mask, and the peak memory.
def _sdpa(Q, K, V, causal=False):
    return F.scaled_dot_product_attention(
        *(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)), is_causal=causal
    ).numpy()


# Worked example: one query (d_k = 1, q = 1) and five keys with scores 0, -1, 2, 1, 0.5, in blocks of
# block_size = 2: [0, -1], [2, 1], [0.5]. The maximum grows from 0 to 2 in the second block, so what was
# accumulated for the first block must be rescaled by e^(0 - 2); the last block is shorter.
_q, _k = np.array([[1.0]]), np.array([[0.0], [-1.0], [2.0], [1.0], [0.5]])
_v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
_z = _k[:, 0]  # the five scores


def _attend(keys):  # softmax over some of the keys, times V: shape (1, 2)
    return (np.exp(_z[keys] - _z[keys].max()) @ _v[keys] / np.exp(_z[keys] - _z[keys].max()).sum())[None]


_out = checks.call(tiled_attention, _q, _k, _v, 2)
checks.expect(not isinstance(_out, tuple), "tiled_attention returns only the output (no weights, no tuple).")
checks.expect_close(
    _out,
    _attend([0, 1, 2, 3, 4]),
    "the output of the worked example (scores 0, -1, 2, 1, 0.5; block_size = 2)",
    mistakes={
        "the running sum is not rescaled when the maximum grows: multiply l by e^(m - m_new) too.": (
            np.exp(_z - 2.0) @ _v / (2 * (1.0 + np.exp(-1.0)) + np.exp(-1.5))
        )[None],
        "the output accumulator is not rescaled when the maximum grows: multiply O by e^(m - m_new) too.": (
            np.exp(_z - [0.0, 0.0, 2.0, 2.0, 2.0]) @ _v / np.exp(_z - 2.0).sum()
        )[None],
        "each key block loses its last key: the block starting at j0 is [j0, j0 + block_size), i.e. "
        "K[..., j0:j0 + block_size, :].": _attend([0, 2, 4]),
        "the last, shorter key block is missing: loop over range(0, T_k, block_size).": _attend([0, 1, 2, 3]),
    },
)
_rng = np.random.default_rng(0)
_Q, _K, _V = _rng.standard_normal((5, 4)), _rng.standard_normal((7, 4)), _rng.standard_normal((7, 3))
_out = tiled_attention(_Q, _K, _V, 3)
checks.expect_shape(_out, (5, 3), "the output for T_q = 5, T_k = 7, d_v = 3")
_every_third_dropped = torch.from_numpy(np.arange(7) % 3 != 2)  # keys 2 and 5 missing
checks.expect_close(
    _out,
    _sdpa(_Q, _K, _V),
    "the output for T_q = 5, T_k = 7, block_size = 3 (compared with F.scaled_dot_product_attention)",
    mistakes={
        "the last, shorter key block is missing: loop over range(0, T_k, block_size).": _sdpa(_Q, _K[:6], _V[:6]),
        "each key block loses its last key: the block starting at j0 is [j0, j0 + block_size), i.e. "
        "K[..., j0:j0 + block_size, :].": F.scaled_dot_product_attention(
            *(torch.from_numpy(a) for a in (_Q, _K, _V)), attn_mask=_every_third_dropped
        ).numpy(),
        "the scores are not scaled: divide by √d_k.": _sdpa(_Q * 2, _K, _V),
    },
)
_X = _rng.standard_normal((10, 4))
_Vx = _rng.standard_normal((10, 2))
_i, _j = np.arange(10)[:, None], np.arange(10)[None, :]  # global query and key positions


def _masked(allowed):  # attention with a mask, True = may attend
    return F.scaled_dot_product_attention(
        torch.from_numpy(_X), torch.from_numpy(_X), torch.from_numpy(_Vx), attn_mask=torch.from_numpy(allowed)
    ).numpy()


_causal_out = tiled_attention(_X, _X, _Vx, 4, causal=True)
checks.expect_finite(
    _causal_out,
    "the causal output for T = 10, block_size = 4",
    "query i may attend to key j = i: block only the keys j > i, keep the diagonal.",
)
checks.expect_close(
    _causal_out,
    _masked(_j <= _i),
    "the causal output for T = 10, block_size = 4",
    mistakes={
        "nothing is masked inside the diagonal tiles: inside them, block the keys j > i.": _masked(_j // 4 <= _i // 4),
        "inside the diagonal tiles the upper triangle is kept instead of the lower one: block the keys j > i.": _masked(
            (_j // 4 < _i // 4) | ((_j // 4 == _i // 4) & (_j >= _i))
        ),
        "the causal mask is ignored.": _masked(np.ones((10, 10), dtype=bool)),
    },
)
checks.expect_close(_causal_out[0], _Vx[0], "the causal output of query 0 (it can only see key 0)")
_T = 512
_Qm, _Km, _Vm = (_rng.standard_normal((_T, 8)) for _ in range(3))
tracemalloc.start()
try:
    _mem_out = tiled_attention(_Qm, _Km, _Vm, 32)
    _peak = tracemalloc.get_traced_memory()[1]
finally:
    tracemalloc.stop()
checks.expect(
    _peak < 8 * _T * _T,
    f"for T = {_T}, block_size = 32 your function allocated {_peak / 2**20:.2f} MiB "
    f"at its peak, as much as a whole {_T} × {_T} float64 matrix ({8 * _T * _T / 2**20:.2f} MiB): work "
    "tile by tile and never build the full score matrix.",
)
checks.expect_close(_mem_out, _sdpa(_Qm, _Km, _Vm), f"the output for T = {_T}, block_size = 32")


### BEGIN HIDDEN TESTS
def _tiled_hidden():
    rng = np.random.default_rng(222)

    def ref(Q, K, V, causal=False, scale=None):
        return F.scaled_dot_product_attention(
            *(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)), is_causal=causal, scale=scale
        ).numpy()

    def not_rescaled_sum(Q, K, V, B):
        """What a running sum that is never rescaled (while the output accumulator is) produces."""
        d = Q.shape[-1]
        out = np.empty(Q.shape[:-1] + V.shape[-1:])
        for i0 in range(0, Q.shape[-2], B):
            q = Q[..., i0 : i0 + B, :] / np.sqrt(d)
            m = np.full(q.shape[:-1], -np.inf)
            l = np.zeros(q.shape[:-1])
            O = np.zeros(q.shape[:-1] + V.shape[-1:])
            for j0 in range(0, K.shape[-2], B):
                s = q @ np.swapaxes(K[..., j0 : j0 + B, :], -1, -2)
                m_new = np.maximum(m, s.max(-1))
                l = l + np.exp(s - m_new[..., None]).sum(-1)
                O = O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ V[..., j0 : j0 + B, :]
                m = m_new
            out[..., i0 : i0 + B, :] = O / l[..., None]
        return out

    # 1. batches of heads, T_q != T_k, d_k = 16, block sizes that do and do not divide the lengths
    B_, H, T_q, T_k, d_k, d_v = 2, 3, 11, 13, 16, 6
    Q, K, V = (rng.standard_normal((B_, H, T, d)) for T, d in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    for block in (1, 4, 5, 13, 40):
        out = tiled_attention(Q, K, V, block)
        checks.expect_shape(out, (B_, H, T_q, d_v), f"the output for a (2, 3) batch, block_size = {block}")
        mistakes = {
            "the scores are divided by d_k: divide by √d_k.": ref(Q, K, V, scale=1 / d_k),
            "the scores are not scaled: divide by √d_k.": ref(Q, K, V, scale=1.0),
            "the last, shorter key block is missing: loop over range(0, T_k, block_size).": ref(
                Q, K[..., : T_k - T_k % block, :], V[..., : T_k - T_k % block, :]
            )
            if T_k % block and block < T_k
            else None,
            "the running sum is not rescaled when the maximum grows: multiply l by e^(m - m_new) too.": not_rescaled_sum(
                Q, K, V, block
            )
            if block < T_k
            else None,
        }
        checks.expect_close(
            out,
            ref(Q, K, V),
            f"the output for a (2, 3) batch, T_q = {T_q}, T_k = {T_k}, d_k = 16, block_size = {block}",
            mistakes={k: v for k, v in mistakes.items() if v is not None},
        )
    # 2. large scores: the running maximum must keep every exponent <= 0
    Qb = 300 * rng.standard_normal((3, 9, 16))  # scores beyond 709: e^score overflows
    Kb, Vb = rng.standard_normal((3, 17, 16)), rng.standard_normal((3, 17, 5))
    out = tiled_attention(Qb, Kb, Vb, 4)
    checks.expect_finite(
        out,
        "the output for scores of several hundred",
        "shift every exponent by the running maximum (and rescale when it grows).",
    )
    checks.expect_close(out, ref(Qb, Kb, Vb), "the output for scores of several hundred")
    # 3. causal self-attention: tiles that straddle the diagonal, a last tile that is shorter
    for T, block in ((13, 4), (16, 4), (9, 1), (7, 8), (20, 6)):
        X, Vx = rng.standard_normal((2, T, 16)), rng.standard_normal((2, T, 3))
        out = tiled_attention(X, 1.3 * X[..., ::-1], Vx, block, causal=True)
        want = ref(X, 1.3 * X[..., ::-1], Vx, causal=True)
        checks.expect_finite(
            out,
            f"the causal output for T = {T}, block_size = {block}",
            "query i may attend to key j = i: do not mask the diagonal itself.",
        )
        checks.expect_close(
            out,
            want,
            f"the causal output for T = {T}, block_size = {block}",
            mistakes={"the causal mask is ignored.": ref(X, 1.3 * X[..., ::-1], Vx)},
        )
        # no position sees the future: changing the last token changes only the last output
        X2, V2 = X.copy(), Vx.copy()
        X2[..., -1, :] += 5.0
        V2[..., -1, :] -= 3.0
        out2 = tiled_attention(X2, 1.3 * X2[..., ::-1], V2, block, causal=True)
        checks.expect_close(
            out2[..., :-1, :],
            out[..., :-1, :],
            f"the causal outputs before the last token "
            f"after changing the last token (T = {T}, block_size = {block}): no query may see a later key",
        )
    # 4. peak memory: well below one T × T matrix, causal too
    T = 600
    Qm, Km, Vm = (rng.standard_normal((T, 16)) for _ in range(3))
    for causal in (False, True):
        tracemalloc.start()
        try:
            out = tiled_attention(Qm, Km, Vm, 50, causal=causal)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        checks.expect(
            peak < 8 * T * T,
            f"for T = {T}, block_size = 50 (causal={causal}) your function allocated "
            f"{peak / 2**20:.2f} MiB at its peak, as much as a whole T × T float64 matrix: work tile by tile.",
        )
        checks.expect_close(out, ref(Qm, Km, Vm, causal=causal), f"the output for T = {T} (causal={causal})")


try:
    _tiled_hidden()
finally:
    online_softmax_update = _students_update
### END HIDDEN TESTS
checks.passed("tiled_attention")

# %% [markdown]
# **Your tiled attention against lesson 4.** The same inputs as in section 1, now through your
# `tiled_attention` with $B = 64$, compared with the lesson-4 attention measured there, without and with a
# causal mask. (For the causal case lesson 4's function gets `np.tril` as its mask; the written-out
# version has no mask, so PyTorch's `F.scaled_dot_product_attention(is_causal=True)` stands in for it.)

# %%
with ac.student_code("tiled_attention"):
    T = 1024
    Q, K, V = QKV[T]
    tiled_out, tiled_peak_1024 = peak_memory(tiled_attention, Q, K, V, 64)  # yours
    plain_out = checks.to_numpy(attention_04(Q, K, V)[0])
    print(f"T = {T}, B = 64, no mask: max |tiled − {attention_04_name}| = {np.abs(tiled_out - plain_out).max():.1e}")
    causal_tiled = tiled_attention(Q, K, V, 64, causal=True)
    if attention_04 is attention_written_out:
        causal_plain = F.scaled_dot_product_attention(*map(torch.from_numpy, (Q, K, V)), is_causal=True).numpy()
    else:
        causal_plain = checks.to_numpy(attention_04(Q, K, V, np.tril(np.ones((T, T), dtype=bool)))[0])
    print(f"T = {T}, B = 64, causal:  max |tiled − plain| = {np.abs(causal_tiled - causal_plain).max():.1e}")
    print(
        f"peak memory: plain {mib(plain_peak[T]):.2f} MiB, tiled {mib(tiled_peak_1024):.2f} MiB "
        f"({plain_peak[T] / tiled_peak_1024:.0f}× less); the output alone is {mib(8 * T * D_HEAD):.2f} MiB"
    )


# %% [markdown]
# The outputs agree to rounding error, far inside $10^{-6}$, and the tiled version's peak is a small
# multiple of the output it has to return. The Experiment in section 6 measures how both peaks grow with $T$.

# %% [markdown]
# ## 4. Fewer heads for keys and values: multi-query and grouped-query attention
#
# ### The other memory wall: the KV cache
#
# Tiling removes the $T^2$ weights. A language model that *generates* text has a second memory bill. In
# lesson 10 (`10_causal_decoder`) you built a **KV cache**: to produce token $t+1$, the model needs the keys
# and values of all $t$ earlier tokens, in every layer, so it keeps them instead of recomputing them. Per
# token the cache holds a key and a value vector for every key/value head of every layer:
#
# $$\text{bytes per token} = 2 \cdot n_{\text{layers}} \cdot n_{\text{kv heads}} \cdot d_{\text{head}} \cdot
#   \text{bytes per value},$$
#
# the 2 being one key and one value. The whole cache is this times the number of tokens kept, so it grows
# linearly with the context length and with the batch size; in multi-head attention $n_{\text{kv heads}} = h$,
# the number of query heads.
#
# ### Sharing keys and values between query heads
#
# * **Multi-query attention** (MQA; Shazeer, 2019, "Fast Transformer Decoding: One Write-Head is All You
#   Need"): all $h$ query heads share **one** key head and one value head.
# * **Grouped-query attention** (GQA; Ainslie et al., 2023): the $h$ query heads form $g = n_{\text{kv heads}}$
#   groups of $h/g$ consecutive heads; each group shares one key head and one value head. $g = 1$ is MQA,
#   $g = h$ is ordinary multi-head attention.
#
# Only the key and value projections shrink: $W^K, W^V \in \mathbb{R}^{d_{\text{model}} \times g\,d_k}$ instead
# of $d_{\text{model}} \times h\,d_k$. Queries, $W^Q$ and $W^O$ are as in lesson 6. Query head $i$ (columns
# $[i d_k, (i+1) d_k)$ of $XW^Q$, as in lesson 6) uses key/value head $\lfloor i / (h/g) \rfloor$ (columns
# $[j d_k, (j+1) d_k)$ of $XW^K$ and $XW^V$ with $j = \lfloor i/(h/g) \rfloor$). This **contiguous** grouping is
# the convention of PyTorch: `F.scaled_dot_product_attention(..., enable_gqa=True)` repeats each key/value head
# $h/g$ times in place, like `torch.repeat_interleave` — not like `np.tile`, which would cycle through the
# key/value heads (query head $i$ with head $i \bmod g$), a different model.
#
# ### Exercise 11.3 — grouped-query attention (4 points)
#
# Implement `grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False)` in numpy:
# * `X` `(..., T, d_model)`; `W_Q` `(d_model, n_heads·d_k)`; `W_K`, `W_V` `(d_model, n_kv_heads·d_k)`;
#   `W_O` `(n_heads·d_k, d_model)`; $d_k$ = `W_Q.shape[1] // n_heads`; `n_kv_heads` divides `n_heads`;
#   used as `X @ W_Q` (no biases).
# * Query head $i$ uses key/value head `i // (n_heads // n_kv_heads)`; scale by $\sqrt{d_k}$; softmax over
#   the keys (the `softmax` helper at the top is PyTorch's); merge the heads as in lesson 6 (head $i$ in
#   columns $[i d_k, (i+1) d_k)$); multiply by `W_O`.
# * `causal=True`: token $i$ may attend to tokens $j \le i$ only.
# * Return only the output, shape `(..., T, d_model)`.
#
# <details><summary>Hint</summary>
#
# Split as in lesson 6: `np.swapaxes(M.reshape(*batch, T, heads, d_k), -2, -3)` gives `(..., heads, T, d_k)`.
# `np.repeat(K, n_heads // n_kv_heads, axis=-3)` lines the key heads up with the query heads
# (head $j$ repeated $h/g$ times in a row). Copy-free alternative: reshape the queries to
# `(..., g, h/g, T, d_k)` and give the keys an axis of size 1, `K[..., :, None, :, :]`, so that broadcasting
# shares them. For the causal mask, `np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)`.
# </details>


# %% answer="gqa"
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):
    """Grouped-query self-attention: query head i uses key/value head i // (n_heads // n_kv_heads).

    X: (..., T, d_model); W_Q: (d_model, n_heads*d_k); W_K, W_V: (d_model, n_kv_heads*d_k); W_O: (n_heads*d_k, d_model)
    causal: token i may see tokens j <= i.  Returns the output (..., T, d_model).
    """
    ### BEGIN SOLUTION
    *batch, T, _ = X.shape
    d_k = W_Q.shape[-1] // n_heads
    group = n_heads // n_kv_heads

    def split(M, heads):  # (..., T, heads*d_k) -> (..., heads, T, d_k)
        return np.swapaxes(M.reshape(*batch, T, heads, d_k), -2, -3)

    Q = split(X @ W_Q, n_heads)
    K = np.repeat(split(X @ W_K, n_kv_heads), group, axis=-3)  # key head j serves query heads j*group ...
    V = np.repeat(split(X @ W_V, n_kv_heads), group, axis=-3)
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., n_heads, T, T)
    if causal:
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    heads = softmax(S, axis=-1) @ V  # (..., n_heads, T, d_k)
    return np.swapaxes(heads, -2, -3).reshape(*batch, T, n_heads * d_k) @ W_O
    ### END SOLUTION


# %% tests="gqa-tests" points=4
# Visible checks. Worked example: T = 5 tokens, 4 query heads and 2 key/value heads of d_k = 3 (d_model = 12).
# Every token's value vector is the constant 1 in key/value head 0 and 10 in head 1, so each query head outputs
# its own key/value head's constant, whatever its weights; W_O = identity shows the heads side by side.
_rng = np.random.default_rng(1)
_X = np.hstack([np.ones((5, 1)), _rng.standard_normal((5, 11))])  # feature 0 is 1 for every token
_W_Q, _W_K = _rng.standard_normal((12, 12)), _rng.standard_normal((12, 6))
_W_V = np.zeros((12, 6))
_W_V[0] = [1.0, 1.0, 1.0, 10.0, 10.0, 10.0]  # value head 0 -> 1s, head 1 -> 10s
_out = checks.call(grouped_query_attention, _X, _W_Q, _W_K, _W_V, np.eye(12), 4, 2)
checks.expect(not isinstance(_out, tuple), "grouped_query_attention returns only the output.")
checks.expect_shape(_out, (5, 12), "the output for T = 5 tokens, 4 query heads of d_k = 3, W_O = identity")
checks.expect_close(
    _out,
    np.tile([1.0] * 6 + [10.0] * 6, (5, 1)),
    "the output of the worked example (query heads 0-1 share key/value head 0, heads 2-3 head 1)",
    mistakes={
        "the key/value heads are interleaved (query head i uses value head i % n_kv_heads, like "
        "np.tile): groups are contiguous, query head i uses head i // (n_heads // n_kv_heads).": np.tile(
            [1.0] * 3 + [10.0] * 3 + [1.0] * 3 + [10.0] * 3, (5, 1)
        )
    },
)
# With as many key/value heads as query heads, it is multi-head attention: compare with nn.MultiheadAttention.
_d, _h = 12, 3
_Xm = _rng.standard_normal((2, 6, _d))
_Ws = [_rng.standard_normal((_d, _d)) / np.sqrt(_d) for _ in range(4)]
_mha = nn.MultiheadAttention(_d, _h, bias=False, batch_first=True).double()
with torch.no_grad():
    _mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([_W.T for _W in _Ws[:3]])))
    _mha.out_proj.weight.copy_(torch.from_numpy(_Ws[3].T))
_tX = torch.from_numpy(_Xm)
_causal = np.tril(np.ones((6, 6), dtype=bool))  # True = may attend (our convention)
with torch.no_grad():
    _want = _mha(_tX, _tX, _tX, need_weights=False)[0].numpy()
    _want_causal = _mha(_tX, _tX, _tX, attn_mask=torch.from_numpy(~_causal), need_weights=False)[
        0
    ].numpy()  # True = blocked
checks.expect_close(
    grouped_query_attention(_Xm, *_Ws[:3], _Ws[3], _h, _h),
    _want,
    "the output with n_kv_heads = n_heads = 3, compared with nn.MultiheadAttention",
)
checks.expect_close(
    grouped_query_attention(_Xm, *_Ws[:3], _Ws[3], _h, _h, causal=True),
    _want_causal,
    "the causal output with n_kv_heads = n_heads = 3, compared with nn.MultiheadAttention",
)


### BEGIN HIDDEN TESTS
def _gqa_hidden():
    rng = np.random.default_rng(333)

    def ref(X, W_Q, W_K, W_V, W_O, h, g, causal=False, order="contiguous", scale=None, skip_o=False):
        *batch, T, _ = X.shape
        dk = W_Q.shape[1] // h
        sp = lambda M, n: torch.from_numpy(np.ascontiguousarray(np.swapaxes(M.reshape(*batch, T, n, dk), -2, -3)))
        q, k, v = sp(X @ W_Q, h), sp(X @ W_K, g), sp(X @ W_V, g)
        if order == "interleaved":
            k, v = (t.repeat(*([1] * (t.dim() - 3)), h // g, 1, 1) for t in (k, v))
        elif order == "mixed":
            k, v = k.repeat_interleave(h // g, dim=-3), v.repeat(*([1] * (v.dim() - 3)), h // g, 1, 1)
        elif order == "mixed2":
            k, v = k.repeat(*([1] * (k.dim() - 3)), h // g, 1, 1), v.repeat_interleave(h // g, dim=-3)
        if order == "contiguous":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
        merged = np.swapaxes(o.numpy(), -2, -3).reshape(*batch, T, h * dk)
        return merged if skip_o else merged @ W_O

    def weights(d, h, g):
        dk = d // h
        return (
            rng.standard_normal((d, h * dk)) / np.sqrt(d),
            rng.standard_normal((d, g * dk)) / np.sqrt(d),
            rng.standard_normal((d, g * dk)) / np.sqrt(d),
            rng.standard_normal((h * dk, d)) / np.sqrt(d),
        )

    names = {
        "interleaved": "the key/value heads are interleaved (query head i uses head i % n_kv_heads): groups are "
        "contiguous, query head i uses head i // (n_heads // n_kv_heads).",
        "mixed": "keys and values are grouped differently: both must use key/value head i // (n_heads // n_kv_heads).",
        "mixed2": "keys and values are grouped differently: both must use key/value head i // (n_heads // n_kv_heads).",
    }
    # 1. GQA: d_model = 96, 6 query heads of d_k = 16, 2 and 3 key/value heads; batches; with and without the mask
    d, h = 96, 6
    for g, shape in ((2, (2, 7, d)), (3, (5, d)), (1, (2, 2, 4, d)), (6, (3, 5, d))):
        Ws = weights(d, h, g)
        X = rng.standard_normal(shape)
        for causal in (False, True):
            want = ref(X, *Ws, h, g, causal)
            mistakes = {text: ref(X, *Ws, h, g, causal, order=kind) for kind, text in names.items() if 1 < g < h}
            mistakes["the scores are divided by √d_model: each head has width d_k, divide by √d_k."] = ref(
                X, *Ws, h, g, causal, scale=1 / np.sqrt(d)
            )
            mistakes["the scores are divided by d_k: divide by √d_k."] = ref(X, *Ws, h, g, causal, scale=1 / 16)
            if not causal:
                mistakes["the causal mask is applied although causal=False."] = ref(X, *Ws, h, g, True)
            else:
                mistakes["the causal mask is ignored."] = ref(X, *Ws, h, g, False)
            out = grouped_query_attention(X, *Ws, h, g, causal=causal)
            checks.expect_shape(out, shape, f"the output for X of shape {shape}, {h} query heads, {g} key/value heads")
            checks.expect_close(
                out,
                want,
                f"the output for {h} query heads and {g} key/value head(s), causal={causal}, "
                "compared with F.scaled_dot_product_attention(enable_gqa=True)",
                mistakes=mistakes,
            )
    # 2. multi-head attention when n_kv_heads = n_heads: nn.MultiheadAttention with injected weights
    d, h, T = 48, 3, 6
    X = rng.standard_normal((2, T, d))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) * 1.5 for _ in range(4))
    mha = nn.MultiheadAttention(d, h, bias=False, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_Q.T, W_K.T, W_V.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(W_O.T))
        tX = torch.from_numpy(X)
        want = mha(tX, tX, tX, need_weights=False)[0].numpy()
    checks.expect_close(
        grouped_query_attention(X, W_Q, W_K, W_V, W_O, h, h),
        want,
        "the output with n_kv_heads = n_heads (d_model = 48), compared with nn.MultiheadAttention",
        mistakes={"W_O is missing: multiply the merged heads by W_O.": ref(X, W_Q, W_K, W_V, W_O, h, h, skip_o=True)},
    )
    # 3. multi-query attention with a non-square W_O (n_heads * d_k != d_model)
    d, h, dk = 20, 4, 16
    W_Q, W_K, W_V = rng.standard_normal((d, h * dk)) / 5, rng.standard_normal((d, dk)) / 5, rng.standard_normal((d, dk))
    W_O = rng.standard_normal((h * dk, d))
    X = rng.standard_normal((3, 9, d))
    checks.expect_close(
        grouped_query_attention(X, W_Q, W_K, W_V, W_O, h, 1, causal=True),
        ref(X, W_Q, W_K, W_V, W_O, h, 1, causal=True),
        "the multi-query output (4 query heads of d_k = 16, one key/value head, d_model = 20)",
    )


_gqa_hidden()
### END HIDDEN TESTS
checks.passed("grouped_query_attention")

# %% [markdown]
# **Equal to multi-head attention when every query head has its own key/value head.** The cell loads your
# lesson-6 `MultiHeadAttention` module (from `../06_multi_head/06_multi_head.ipynb`), builds one without
# biases, takes its weights ($W^Q$ = `W_q.weight.T`, since `nn.Linear` stores `(d_out, d_in)`) and runs your
# `grouped_query_attention` with `n_kv_heads = n_heads` on the same input. Your lesson-6 module takes a mask
# with True = may attend, like ours. (If your lesson-6 notebook is not available, `nn.MultiheadAttention` stands
# in; its boolean `attn_mask` means True = blocked, so it gets the inverted mask `~causal_mask`.)

# %%
MultiHeadAttention_06 = from_earlier_lesson(
    "06_multi_head", "MultiHeadAttention", probe=lambda cls: cls(4, 2, bias=False)(torch.zeros(1, 3, 4))
)
with ac.student_code("grouped_query_attention"):
    torch.manual_seed(0)
    if MultiHeadAttention_06 is not None:
        mha_06, who = MultiHeadAttention_06(64, 8, bias=False).double(), "your lesson-6 MultiHeadAttention"
    else:
        print("Comparing with nn.MultiheadAttention instead.")
        mha_06, who = None, "nn.MultiheadAttention"
    x = torch.randn(2, 20, 64, dtype=torch.float64)
    causal_mask = torch.ones(20, 20, dtype=torch.bool).tril()  # True = may attend
    if mha_06 is not None:
        W = {name: getattr(mha_06, name).weight.detach().T.numpy() for name in ("W_q", "W_k", "W_v", "W_o")}
        with torch.no_grad():
            theirs = {False: mha_06(x)[0].numpy(), True: mha_06(x, causal_mask)[0].numpy()}
    else:
        torch_mha = nn.MultiheadAttention(64, 8, bias=False, batch_first=True).double()
        d = 64
        W = dict(
            zip(
                ("W_q", "W_k", "W_v"),
                (torch_mha.in_proj_weight[i * d : (i + 1) * d].detach().T.numpy() for i in range(3)),
            ),
            W_o=torch_mha.out_proj.weight.detach().T.numpy(),
        )
        with torch.no_grad():
            theirs = {
                False: torch_mha(x, x, x, need_weights=False)[0].numpy(),
                True: torch_mha(x, x, x, attn_mask=~causal_mask, need_weights=False)[0].numpy(),
            }  # True = blocked
    for causal in (False, True):
        mine = grouped_query_attention(x.numpy(), W["W_q"], W["W_k"], W["W_v"], W["W_o"], 8, 8, causal=causal)
        print(
            f"8 query heads, 8 key/value heads, causal={causal!s:5}: max |GQA − {who}| = "
            f"{np.abs(mine - theirs[causal]).max():.1e}"
        )


# %% [markdown]
# **Equal to PyTorch's grouped-query attention.** Now with fewer key/value heads: $d_{\text{model}} = 64$, 8 query
# heads of $d_k = 8$, and 8, 4, 2 or 1 key/value heads. The reference projects with the same matrices, splits the
# heads and calls `F.scaled_dot_product_attention(q, k, v, enable_gqa=True)` (available in the PyTorch 2.13
# pinned by this course), then merges and applies $W^O$.


# %%
def reference_gqa(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):
    T, d_k = X.shape[-2], W_Q.shape[1] // n_heads
    split = lambda M, n: torch.from_numpy(np.ascontiguousarray(np.swapaxes(M.reshape(-1, T, n, d_k), 1, 2)))
    o = F.scaled_dot_product_attention(
        split(X @ W_Q, n_heads),
        split(X @ W_K, n_kv_heads),
        split(X @ W_V, n_kv_heads),
        is_causal=causal,
        enable_gqa=True,
    )
    return np.swapaxes(o.numpy(), 1, 2).reshape(X.shape[:-1] + (n_heads * d_k,)) @ W_O


with ac.student_code("grouped_query_attention"):
    rng = data.rng(4)
    X = rng.standard_normal((2, 24, 64))
    W_Q, W_O = rng.standard_normal((64, 64)) / 8, rng.standard_normal((64, 64)) / 8
    for g in (8, 4, 2, 1):
        W_K, W_V = rng.standard_normal((64, g * 8)) / 8, rng.standard_normal((64, g * 8)) / 8
        diff = max(
            np.abs(
                grouped_query_attention(X, W_Q, W_K, W_V, W_O, 8, g, causal=c)
                - reference_gqa(X, W_Q, W_K, W_V, W_O, 8, g, causal=c)
            ).max()
            for c in (False, True)
        )
        kind = "multi-head" if g == 8 else "multi-query" if g == 1 else "grouped-query"
        print(
            f"{g} key/value head(s) ({kind:13s}): W_K and W_V have {W_K.size:>5,} parameters each; "
            f"max |yours − enable_gqa| = {diff:.1e}"
        )

# %% [markdown]
# ### The KV cache per token, measured
#
# To count the cache, we fill one. A toy decoder with 4 layers, $d_{\text{model}} = 64$ and 8 query heads of
# $d_{\text{head}} = 8$ reads 100 tokens; every layer stores $XW^K$ and $XW^V$ in 16-bit floats (`float16`, 2
# bytes per value): one key and one value vector per token, layer and key/value head, the layout of lesson 10's
# cache. (What the cache holds is $XW^K$ and $XW^V$, whatever attention later reads it, so this needs only the
# projections.)
# We measure the arrays' sizes for 8, 4, 2 and 1 key/value heads and compare with the formula.

# %%
N_LAYERS_TOY, D_MODEL_TOY, HEADS_TOY, D_HEAD_TOY, N_TOKENS = 4, 64, 8, 8, 100
rng = data.rng(6)
X_toy = rng.standard_normal((N_TOKENS, D_MODEL_TOY)).astype(np.float32)
kv_heads_options = [8, 4, 2, 1]
measured_per_token, formula_per_token = {}, {}
for g in kv_heads_options:
    cache = []
    for layer in range(N_LAYERS_TOY):
        W_K, W_V = (rng.standard_normal((D_MODEL_TOY, g * D_HEAD_TOY)).astype(np.float32) for _ in range(2))
        cache.append(((X_toy @ W_K).astype(np.float16), (X_toy @ W_V).astype(np.float16)))  # what the cache keeps
    measured_per_token[g] = sum(k.nbytes + v.nbytes for k, v in cache) / N_TOKENS
    formula_per_token[g] = 2 * N_LAYERS_TOY * g * D_HEAD_TOY * 2
    print(
        f"{g} key/value head{'s' if g > 1 else ''}: measured {measured_per_token[g]:,.0f} bytes per token, "
        f"formula 2·{N_LAYERS_TOY}·{g}·{D_HEAD_TOY}·2 = {formula_per_token[g]:,} bytes"
    )

# A larger, hypothetical configuration (not any particular model): 32 layers, 32 query heads of 128, float16.
big = dict(layers=32, heads=32, d_head=128, bytes_per_value=2, context=4096)
big_per_token = {g: 2 * big["layers"] * g * big["d_head"] * big["bytes_per_value"] for g in (32, 8, 4, 1)}
for g, per_token in big_per_token.items():
    print(
        f"hypothetical 32-layer model, {g:>2} key/value head{'s' if g > 1 else ' '}: {per_token / 2**10:>5,.0f} KiB per token, "
        f"{per_token * big['context'] / 2**30:.2f} GiB for one {big['context']:,}-token sequence"
    )

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
x_pos = np.arange(len(kv_heads_options))
axes[0].bar(
    x_pos, [measured_per_token[g] for g in kv_heads_options], color=plots.COLORS[0], label="measured (array sizes)"
)
axes[0].plot(
    x_pos,
    [formula_per_token[g] for g in kv_heads_options],
    "o",
    color=plots.COLORS[1],
    ms=9,
    label="2 · layers · kv heads · d_head · 2 bytes",
)
axes[0].set_xticks(x_pos, [str(g) for g in kv_heads_options])
axes[0].set_xlabel("key/value heads (8 query heads)")
axes[0].set_ylabel("KV-cache bytes per token")
axes[0].set_title(f"toy decoder: {N_LAYERS_TOY} layers, d_head = {D_HEAD_TOY}, float16")
axes[0].legend(loc="upper right")
groups_big = list(big_per_token)
axes[1].bar(
    np.arange(len(groups_big)), [big_per_token[g] * big["context"] / 2**30 for g in groups_big], color=plots.COLORS[2]
)
axes[1].set_xticks(np.arange(len(groups_big)), [str(g) for g in groups_big])
axes[1].set_xlabel("key/value heads (32 query heads)")
axes[1].set_ylabel(f"GiB for {big['context']:,} tokens")
axes[1].set_title("hypothetical: 32 layers, d_head = 128, float16")
fig.suptitle("The KV cache shrinks in proportion to the number of key/value heads")
plots.show(
    fig,
    alt="Two bar charts. Left: measured KV-cache bytes per token of a toy 4-layer decoder for 8, 4, 2 "
    f"and 1 key/value heads: {', '.join(f'{measured_per_token[g]:.0f}' for g in kv_heads_options)} "
    "bytes, on top of the formula's dots. Right: a hypothetical 32-layer model's cache for 4096 "
    f"tokens: {', '.join(f'{big_per_token[g] * 4096 / 2**30:.2f}' for g in groups_big)} GiB for "
    "32, 8, 4 and 1 key/value heads.",
    name="11_kv_cache",
)

# %% [markdown]
# The measured bytes equal the formula exactly, and they fall in proportion to the number of key/value heads:
# GQA with 4 key/value heads for 32 query heads keeps an eighth of the cache of multi-head attention, MQA a
# thirty-second. The price is expressiveness: fewer distinct keys and values per layer. Whether a model
# loses quality by that is an empirical question this notebook cannot answer; Ainslie et al. (2023) study it for
# their models. Note also what GQA does *not* change: the query heads and the $T_q \times T_k$ weights of every
# query head are all still there — tiling and GQA attack different memory.

# %% [markdown]
# ## 5. Explore: tiles, running statistics and memory
#
# The explorer runs **your** code on one head with $d_k = 8$ (fixed random queries, keys and values; the sliders
# take the first $T$ of 64 tokens).
# * **Left:** the $T \times T$ score matrix cut into tiles of $B \times B$: which tiles are computed, which
#   entries are masked inside them, which tiles are skipped. The square always shows the whole matrix, whatever $T$.
# * **Middle:** the running maximum $m_i$ and the running sum $\ell_i$ of every query row $i$ (down) after each key
#   block (across), from **your** `online_softmax_update` (grey: a skipped tile, where the state does not change).
#   A white dot marks a block where the row's maximum grew, so its sum was rescaled.
# * **Right:** the peak memory of plain attention (lesson 4's formula, written out) and of **your**
#   `tiled_attention`, measured with `tracemalloc`.
# * **On top:** the number of tiles computed, the number of rescales (dots), and the largest difference between
#   your tiled output and `F.scaled_dot_product_attention`.
#
# Things to try:
# * Make $B$ small and look at the dots: do they thin out from left to right, and why would they? (How likely is
#   it that the next block holds a new maximum, once many keys have been seen?)
# * Switch the mask to causal: how many tiles are left, compared with "none"?
# * Move $T$ at a fixed $B$, then $B$ at a fixed $T$, and watch the two memory bars. When $B$ is close to $T$, or $T$
#   is tiny, the tiled bar can be as long as plain's or longer: a $B \times B$ tile plus the bookkeeping is no
#   smaller than a $T \times T$ matrix when $B \ge T$. The Experiment below measures realistic lengths.

# %%
EXPLORE_T_MAX, EXPLORE_D = 64, 8
_explore_rng = data.rng(11)
Q_ex = 1.6 * _explore_rng.standard_normal((EXPLORE_T_MAX, EXPLORE_D))
K_ex, V_ex = (_explore_rng.standard_normal((EXPLORE_T_MAX, EXPLORE_D)) for _ in range(2))
S_ex = Q_ex @ K_ex.T / np.sqrt(EXPLORE_D)  # the colour scale is fixed from it


class TilesView(widgets.View):
    """Tile map, running max and sum per row and key block, and peak memory, for one (B, T, mask) setting."""

    def __init__(self):
        self.measured = {}  # measurements kept per setting: see measure()

    def build(self, block_size, T, mask):
        fig = plt.figure(figsize=(10.4, 3.7), layout="constrained")
        grid = fig.add_gridspec(1, 4, width_ratios=[1, 1, 1, 0.85])
        ax_t, ax_m, ax_l, ax_mem = (fig.add_subplot(grid[0, i]) for i in range(4))
        unit = dict(extent=(0, 1, 1, 0), interpolation="nearest", interpolation_stage="rgba", aspect="auto")
        self.tiles = ax_t.imshow(np.zeros((1, 1)), cmap=TILE_COLOURS, vmin=0, vmax=2, **unit)
        self.edges = LineCollection([], colors="white", linewidths=1.2)
        ax_t.add_collection(self.edges)
        ax_t.set_title("tiles of the T × T scores")
        ax_t.set_xlabel("key j →")
        ax_t.set_ylabel("← query i")
        ax_t.legend(handles=TILE_LEGEND, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
        state_map = plt.get_cmap(plots.SEQUENTIAL).with_extremes(bad="#BBBBBB")
        self.maxima = ax_m.imshow(
            np.zeros((1, 1)), cmap=state_map, vmin=float(S_ex[:, 0].min()), vmax=float(S_ex.max()), **unit
        )
        self.sums = ax_l.imshow(np.ones((1, 1)), cmap=state_map, norm=LogNorm(1, EXPLORE_T_MAX), **unit)
        fig.colorbar(self.maxima, ax=ax_m, location="bottom", label="running max m_i")
        fig.colorbar(self.sums, ax=ax_l, location="bottom", label="running sum ℓ_i (log)")
        self.dots = ax_m.scatter([], [], s=10, color="white", edgecolors="black", linewidths=0.4)
        ax_m.set_title("running max (• = it grew)")
        ax_l.set_title("running sum")
        for ax in (ax_t, ax_m, ax_l):
            ax.set_xlim(0, 1)
            ax.set_ylim(1, 0)
            ax.set_xticks([])
            ax.set_yticks([])
        ax_m.set_xlabel("key block →")
        ax_l.set_xlabel("key block →")
        ax_m.set_ylabel("← query row i")
        self.bars = ax_mem.barh([0, 1], [1, 1], color=[plots.COLORS[5], plots.COLORS[0]])
        ax_mem.set_xscale("log")
        ax_mem.set_xlim(1e3, 3e5)
        ax_mem.set_ylim(1.6, -0.6)
        ax_mem.set_yticks([0, 1], ["plain", "tiled\n(yours)"])
        ax_mem.set_xlabel("bytes (log scale)")
        ax_mem.set_title("peak memory")
        self.bar_texts = [ax_mem.text(1.15e3, y, "", va="center", color="white", fontsize=9) for y in (0, 1)]
        self.headline = fig.suptitle(" ")
        self.dynamic = [
            self.tiles,
            self.edges,
            self.maxima,
            self.dots,
            self.sums,
            *self.bars,
            *self.bar_texts,
            self.headline,
        ]
        return fig

    def measure(self, block_size, T, mask):
        """Peak memory of the written-out formula (once per T) and of your tiled attention (once per setting),
        and PyTorch's output to compare yours with (once per T and mask)."""
        Q, K, V = Q_ex[:T], K_ex[:T], V_ex[:T]
        if ("plain", T) not in self.measured:
            self.measured["plain", T] = peak_memory(attention_written_out, Q, K, V)[1]
        if ("reference", T, mask) not in self.measured:
            self.measured["reference", T, mask] = F.scaled_dot_product_attention(
                *(torch.from_numpy(a) for a in (Q, K, V)), is_causal=mask == "causal"
            ).numpy()
        key = (tiled_attention, block_size, T, mask)
        if key not in self.measured:
            out, tiled_bytes = peak_memory(tiled_attention, Q, K, V, block_size, causal=mask == "causal")  # yours
            self.measured[key] = (np.asarray(out, dtype=float), tiled_bytes)
        out, tiled_bytes = self.measured[key]
        return out, self.measured["plain", T], tiled_bytes, self.measured["reference", T, mask]

    def update(self, block_size, T, mask):
        causal = mask == "causal"
        n_blocks = -(-T // block_size)
        grid = tile_grid(T, block_size, causal)
        # the running statistics: your update, one key block at a time, for all query rows at once
        S = S_ex[:T, :T]
        if causal:
            S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
        visited = np.repeat(grid > 0, block_size, axis=0)[:T]  # (T, n_blocks): tile computed?
        M, L = np.full((T, n_blocks), np.nan), np.full((T, n_blocks), np.nan)
        m, l = np.full(T, -np.inf), np.zeros(T)
        grew_rows, grew_blocks = [], []
        for b in range(n_blocks):
            m_new, l_new = online_softmax_update(m, l, S[:, b * block_size : (b + 1) * block_size])  # yours
            m_new, l_new = np.asarray(m_new, dtype=float), np.asarray(l_new, dtype=float)
            rows = np.flatnonzero(visited[:, b] & np.isfinite(m) & (m_new > m))
            grew_rows.extend(rows)
            grew_blocks.extend([b] * len(rows))
            M[visited[:, b], b], L[visited[:, b], b] = m_new[visited[:, b]], l_new[visited[:, b]]
            m, l = m_new, l_new
        out, plain_bytes, tiled_bytes, reference = self.measure(block_size, T, mask)
        error = float(np.abs(out - reference).max())

        self.tiles.set_data(entry_map(T, block_size, causal))
        cuts = np.arange(block_size, T, block_size) / T
        self.edges.set_segments([[(c, 0), (c, 1)] for c in cuts] + [[(0, c), (1, c)] for c in cuts])
        self.maxima.set_data(M)
        self.sums.set_data(L)
        self.dots.set_offsets(
            np.column_stack([(np.array(grew_blocks) + 0.5) / n_blocks, (np.array(grew_rows) + 0.5) / T])
            if grew_rows
            else np.empty((0, 2))
        )
        for bar, text, value in zip(self.bars, self.bar_texts, (plain_bytes, tiled_bytes)):
            bar.set_width(value)
            text.set_text(f"{value / 1024:.1f} KiB")
        computed = int((grid > 0).sum())
        self.headline.set_text(
            f"{computed} of {grid.size} tiles computed, {len(grew_rows)} rescales, max |tiled − F.sdpa| {error:.0e}"
        )
        self.summary = (computed, grid.size, len(grew_rows), plain_bytes, tiled_bytes, error)

    def alt(self, block_size, T, mask):
        computed, total, rescales, plain_bytes, tiled_bytes, error = self.summary
        return (
            f"Mask {mask}, T = {T}, block size {block_size}: a tile map with {computed} of {total} tiles computed; "
            f"heatmaps of the running maximum and running sum of each of the {T} query rows after each key block, "
            f"with {rescales} rescaling events marked; peak memory {plain_bytes / 1024:.1f} KiB for plain "
            f"attention and {tiled_bytes / 1024:.1f} KiB for your tiled attention; largest difference from "
            f"PyTorch {error:.0e}."
        )


widgets.explore(
    TilesView(),
    needs=["online_softmax_update", "tiled_attention"],
    block_size=widgets.choice_slider("block size B", [4, 8, 16, 32], 8),
    T=widgets.slider("sequence length T", 8, EXPLORE_T_MAX, 40, step=4),
    mask=widgets.dropdown("mask", ["causal", "none"]),
)

# %% [markdown]
# ## 6. Experiment: peak memory against $T$, plain and tiled
#
# **Claim.** Plain attention's peak memory grows with $T^2$; your tiled attention's grows linearly in $T$,
# and its only $T$-dependent part is the output it returns. We measure both with `tracemalloc` for one head
# ($d_k = d_v = 32$, float64) at the six lengths of section 1, with $B = 64$, fit a quadratic to each, and read
# the coefficients. A second panel holds $T = 1024$ fixed and varies $B$: what is left when $T$ is fixed is
# set by the tile.

# %%
with ac.student_code("tiled_attention"):
    B_exp = 64
    tiled_peak = {T: peak_memory(tiled_attention, *QKV[T], B_exp)[1] for T in LENGTHS}  # yours
    Ts = np.array(LENGTHS, dtype=float)
    plain_y = np.array([plain_peak[T] for T in LENGTHS], dtype=float)
    tiled_y = np.array([tiled_peak[T] for T in LENGTHS], dtype=float)
    plain_fit, tiled_fit2 = np.polyfit(Ts, plain_y, 2), np.polyfit(Ts, tiled_y, 2)
    tiled_fit1 = np.polyfit(Ts, tiled_y, 1)
    misfit = lambda fit, y: float(np.max(np.abs(np.polyval(fit, Ts) - y) / y))
    block_sizes = [32, 64, 128, 256]
    by_block = {B: peak_memory(tiled_attention, *QKV[1024], B)[1] for B in block_sizes}  # yours
    output_bytes_1024 = 8 * 1024 * D_HEAD

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.5, 3.9), layout="constrained")
    T_fine = np.linspace(Ts[0], Ts[-1], 100)
    ax1.loglog(Ts, plain_y / 2**20, "o", color=plots.COLORS[5], label="plain (lesson 4)")
    ax1.loglog(
        T_fine,
        np.polyval(plain_fit, T_fine) / 2**20,
        "-",
        color=plots.COLORS[5],
        lw=1,
        label=f"quadratic fit, {plain_fit[0]:.1f} bytes·T² + …",
    )
    ax1.loglog(Ts, tiled_y / 2**20, "s", color=plots.COLORS[0], label=f"tiled, B = {B_exp} (yours)")
    ax1.loglog(
        T_fine,
        np.polyval(tiled_fit1, T_fine) / 2**20,
        "--",
        color=plots.COLORS[0],
        lw=1,
        label=f"linear fit, {tiled_fit1[0]:.0f} bytes·T + {tiled_fit1[1] / 1024:.0f} KiB",
    )
    ax1.set_xticks(LENGTHS, [str(T) for T in LENGTHS])
    ax1.set_ylim(0.1, 300)
    ax1.minorticks_off()
    ax1.set_xlabel("sequence length T")
    ax1.set_ylabel("peak memory (MiB, log)")
    ax1.set_title(f"one head, d_k = d_v = {D_HEAD}, float64")
    ax1.legend(loc="upper left")
    ax2.loglog(
        block_sizes,
        [by_block[B] / 2**20 for B in block_sizes],
        "s-",
        color=plots.COLORS[0],
        label="tiled (yours), T = 1024",
    )
    ax2.axhline(output_bytes_1024 / 2**20, color=plots.COLORS[7], ls=":", label="the output alone (8·T·d_v bytes)")
    ax2.axhline(plain_peak[1024] / 2**20, color=plots.COLORS[5], ls="--", label="plain, T = 1024")
    ax2.set_xticks(block_sizes, [str(B) for B in block_sizes])
    ax2.minorticks_off()
    ax2.set_xlabel("block size B")
    ax2.set_ylabel("peak memory (MiB, log)")
    ax2.set_ylim(0.1, 100)
    ax2.set_title("T = 1024: what the tile size costs")
    ax2.legend(loc="center left")
    fig.suptitle("Peak memory measured with tracemalloc: plain attention vs your tiled attention")

    ratio = plain_peak[LENGTHS[-1]] / tiled_peak[LENGTHS[-1]]
    plots.show(
        fig,
        alt=f"Left: log-log plot of peak memory against T from 256 to 2048. Plain attention rises from "
        f"{mib(plain_y[0]):.1f} to {mib(plain_y[-1]):.1f} MiB along a quadratic fit; tiled attention "
        f"with B = 64 rises from {mib(tiled_y[0]):.2f} to {mib(tiled_y[-1]):.2f} MiB along a straight "
        f"line. Right: at T = 1024 the tiled peak grows with the block size from "
        f"{mib(by_block[32]):.2f} MiB at B = 32 to {mib(by_block[256]):.2f} MiB at B = 256, between "
        f"the output alone ({mib(output_bytes_1024):.2f} MiB) and plain attention "
        f"({mib(plain_peak[1024]):.1f} MiB).",
        name="11_memory_vs_T",
    )

    print(
        f"plain: quadratic fit {polynomial(plain_fit)} "
        f"(largest misfit {misfit(plain_fit, plain_y):.1%}); T² coefficient = {plain_fit[0] / 8:.2f} float64 matrices"
    )
    print(
        f"tiled: linear fit {polynomial(tiled_fit1)} (largest misfit "
        f"{misfit(tiled_fit1, tiled_y):.1%}); a quadratic fit gives a T² coefficient of {tiled_fit2[0]:.1e} "
        f"bytes, {abs(tiled_fit2[0]) / plain_fit[0]:.1e} of plain's"
    )
    print(
        f"the output alone takes 8·d_v = {8 * D_HEAD} bytes per query row; the fitted slope is "
        f"{tiled_fit1[0]:.1f} bytes per row"
    )
    print(
        f"at T = {LENGTHS[-1]}: plain {mib(plain_peak[LENGTHS[-1]]):.1f} MiB, tiled {mib(tiled_peak[LENGTHS[-1]]):.2f} MiB "
        f"({ratio:.0f}× less)"
    )
    print(
        "at T = 1024, peak minus the output, by block size: "
        + ", ".join(f"B = {B}: {(by_block[B] - output_bytes_1024) / 1024:.0f} KiB" for B in block_sizes)
        + f"  (one B × B float64 tile at B = 256: {8 * 256 * 256 / 1024:.0f} KiB)"
    )
    T = LENGTHS[-1]
    start = time.perf_counter()
    attention_04(*QKV[T])
    plain_time = time.perf_counter() - start
    start = time.perf_counter()
    tiled_attention(*QKV[T], B_exp)  # yours
    tiled_time = time.perf_counter() - start
    print(
        f"run time at T = {T} on this CPU (numpy, one thread, tracemalloc off): plain {plain_time:.2f} s, "
        f"tiled {tiled_time:.2f} s"
    )

# %% [markdown]
# **Reading the numbers.** The quadratic fit of plain attention needs its $T^2$ term: a fixed number of
# float64 $T\times T$ matrices (printed). The tiled peak lies on a straight line; its quadratic coefficient is
# negligible next to plain's, and its slope per query row is close to the $8 d_v$ bytes of the output row it
# must return (printed side by side). The rest is a constant that does not depend on $T$ but on the tile: at
# $T = 1024$ it grows with $B$ and reaches a few $B \times B$ matrices at $B = 256$ (right panel). So the extra
# memory beyond the output is set by $B$, not $T$. (If you tiled only the keys — all queries against one key
# block — the scores would be $T \times B$, and the extra memory $O(T\cdot B)$: still linear in $T$.)
#
# What tiling does **not** save is arithmetic: every non-skipped tile still computes its $B^2$ dot products,
# so without a mask all $T_q T_k$ scores are computed, as in plain attention. Nor is speed what this experiment
# is about: the last line prints both run times on this CPU, where numpy pays for the tiles' Python loop and
# plain attention for its large arrays. On a GPU the gain comes from *where* the memory lives, the subject of the
# next section.

# %% [markdown]
# ## 7. Where the field went from here
#
# Each of these ideas extends something you built in this course.
#
# **FlashAttention: your tiled loop, as one GPU kernel.** Dao et al. (2022, "FlashAttention: Fast and
# Memory-Efficient Exact Attention with IO-Awareness") run the algorithm you wrote — tiles, a running maximum and
# sum, a rescaled output accumulator — inside one GPU kernel. A GPU has a large but comparatively slow main
# memory (HBM) and a small, fast on-chip memory (SRAM). Plain attention writes $S$ and $A$ to main memory and reads
# them back; the fused kernel loads tiles of $Q$, $K$, $V$ into on-chip memory and writes only the output, so the
# $T \times T$ matrix never makes the round trip — the paper's speed-up comes from fewer memory transfers, not fewer
# operations (in the forward pass the operations are the same, as you saw; the backward pass even does more).
# For training, it does not store $A$ for the backward pass: it keeps per-row statistics — your $m$ and $\ell$,
# which combine into the log-sum-exp $m + \log \ell$ — and recomputes the tiles. Later versions (FlashAttention-2 and -3) reorganise the work across
# the GPU; the online softmax at their core is the one you wrote. On a GPU, PyTorch's
# `F.scaled_dot_product_attention` can dispatch to such a fused kernel.
#
# **Sliding-window attention: a mask that skips even more tiles.** Instead of every earlier token, query $i$ sees
# only the last $W$: keys $i - W < j \le i$ (sliding windows appear, for example, in Longformer, Beltagy et al.,
# 2020). That is one more mask, and your tile logic handles it: tiles entirely outside the band are skipped, so the
# work grows like $T\cdot W$, not $T^2$ — and a KV cache need only keep the last $W$ tokens. The cell below counts
# the tiles with the same `tile_grid` as the explorer, for three lengths.
#
# **Paged KV caches: key blocks can live anywhere.** Your online softmax combines key blocks one at a time, and the
# final $m$ and $\ell$ do not depend on the **order** of the blocks (max and sum do not care; the cell below checks it
# with your update). So the keys and values of one sequence need not sit in one contiguous array. vLLM's
# PagedAttention (Kwon et al., 2023) stores the KV cache of lesson 10 in fixed-size blocks, like pages of virtual
# memory, allocated as a sequence grows, and attention walks the sequence's list of blocks — the key-block loop of
# your tiled attention. GQA and paging work together: GQA shrinks each token's entry (section 4), paging avoids
# reserving space for tokens a sequence has not produced yet.
#
# **RoPE at scale.** The rotary embeddings of lesson 7's stretch rotate $q$ and $k$ by angles set by *their own*
# positions, before the dot product. So they slot into everything here unchanged: a tile rotates its queries and
# keys by their global positions; a KV cache can store keys already rotated; and the score still depends only on the
# offset. To read longer texts than they were trained on, some models rescale those angles — position
# interpolation (Chen et al., 2023) divides the positions by a constant so that the angles stay in the range seen
# in training.

# %%
with ac.student_code("online_softmax_update"):
    B_big = 64
    settings = (("no mask", {}), ("causal", dict(causal=True)), ("window W = 512", dict(window=512)))
    for T_big in (2048, 4096, 8192):
        counts = [int((tile_grid(T_big, B_big, **kwargs) > 0).sum()) for _, kwargs in settings]
        print(
            f"T = {T_big:>5,}, B = {B_big}: tiles computed — "
            + ", ".join(f"{label}: {count:>5,}" for (label, _), count in zip(settings, counts))
        )

    scores = data.rng(9).normal(0, 4, (3, 96))  # 3 rows, 12 key blocks of 8
    blocks = [scores[:, i : i + 8] for i in range(0, 96, 8)]
    results = []
    for order in (range(12), range(11, -1, -1), data.rng(10).permutation(12)):
        m, l = np.full(3, -np.inf), np.zeros(3)
        for b in order:
            m, l = online_softmax_update(m, l, blocks[b])  # yours
        results.append(m + np.log(l))  # the log-sum-exp of each row
    spread = max(np.abs(r - results[0]).max() for r in results)
    print(
        f"log-sum-exp m + log ℓ of 3 rows after 12 key blocks in order, reversed and shuffled: largest difference "
        f"{spread:.1e}"
    )

# %% [markdown]
# When $T$ doubles, the causal count roughly quadruples while the window count roughly doubles: with a window, the
# work is linear in $T$. And the order of the key blocks changes $m + \log \ell$ only by rounding, if at all.

# %% [markdown]
# ## 8. Let's review
#
# * Plain attention holds $T \times T$ scores and weights: you measured a peak that is a fixed number of
#   $T \times T$ float64 matrices, a $T^2$ law.
# * **Online softmax:** lesson 4's shift invariance lets the shift follow a *running* maximum $m$. When the maximum
#   grows from $m_t$ to $m_{t+1}$, the running sum is rescaled, $\ell \leftarrow \ell\, e^{m_t - m_{t+1}} +
#   \sum e^{z_j - m_{t+1}}$; start from $(-\infty, 0)$; a row that has seen only $-\infty$ stays there.
# * **Tiled attention:** the unnormalised output $\tilde O$ is rescaled by the same factor; divide by $\ell$ at the end.
#   The result is exact (equal to lesson 4 and to PyTorch within rounding). Causal: skip tiles above the diagonal,
#   mask inside the diagonal tiles with global positions. Measured: extra memory linear in $T$, its
#   $T$-independent part set by $B$; the arithmetic is unchanged.
# * **MQA / GQA:** query heads share key/value heads in contiguous groups (head $i$ uses $\lfloor i/(h/g)\rfloor$,
#   as `enable_gqa=True` and `repeat_interleave` do; interleaving is a different model). With $g = h$ it is your
#   multi-head attention. The KV cache costs $2 \cdot n_{\text{layers}} \cdot g \cdot d_{\text{head}} \cdot
#   \text{bytes}$ per token, so it shrinks by $h/g$.
# * The same ideas reappear in the systems of section 7: FlashAttention kernels (your loop in on-chip memory),
#   sliding windows (a mask that skips tiles), paged KV caches (key blocks in any order), RoPE (rotations per
#   position, applied before the tiles).

# %% [markdown]
# ## 9. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number (an expression such
# as `2 * 3` is fine). The cell after each answer checks the format only; the answer itself is graded when your
# notebook is graded.
#
# **Q1 (1 point).** One head's attention weights for a sequence of $T = 8192$ tokens are stored in **float32**.
# How many MiB ($2^{20}$ bytes) does that one $T \times T$ matrix take?

# %% quiz="quiz-weights-mib" key="8192 * 8192 * 4 / 2**20" tol=0.001 points=1
q1_answer = 8192 * 8192 * 4 / 2**20
_obvious_wrong = [8192 * 8192 * 8 / 2**20, 8192 * 8192 * 4 / 1e6, 8192 * 4 / 2**20, 8192 * 8192 / 2**20]
assert all(abs(q1_answer - w) > 0.01 * q1_answer for w in _obvious_wrong)

# %% [markdown]
# **Q2 (1 point).** A row's online-softmax state is $m = 2$, $\ell = 1.5$. The next block holds a single score,
# $3$. What is the new running sum $\ell$? (Three decimals are enough.)

# %% quiz="quiz-online-step" key="1.5 * math.exp(-1.0) + 1.0" tol=0.001 points=1
q2_answer = 1.5 * math.exp(2 - 3) + math.exp(3 - 3)
_obvious_wrong = [
    1.5 + 1.0,  # not rescaled
    1.5 * math.exp(3 - 2) + 1.0,  # rescaled the wrong way
    1.5 + math.exp(3 - 2),  # new term shifted by the old maximum
    1.5 * math.exp(2 - 3),
]  # new term forgotten
assert all(abs(q2_answer - w) > 0.05 for w in _obvious_wrong)

# %% [markdown]
# **Q3 (1 point).** Causal tiled attention with $T = 1024$ and $B = 128$. How many tiles are computed (not skipped)?

# %% quiz="quiz-causal-tiles" key="(1024 // 128) * (1024 // 128 + 1) // 2" points=1
_n = 1024 // 128
q3_answer = _n * (_n + 1) // 2
_obvious_wrong = [_n * _n // 2, _n * (_n - 1) // 2, _n * _n, 1024 * 1025 // 2]
assert all(abs(q3_answer - w) >= 1 for w in _obvious_wrong)

# %% [markdown]
# **Q4 (1 point).** A decoder has 24 layers and 16 query heads of $d_{\text{head}} = 64$, with grouped-query
# attention using 4 key/value heads, and caches float16 values (2 bytes). How many bytes of KV cache does one
# token take?

# %% quiz="quiz-kv-bytes" key="2 * 24 * 4 * 64 * 2" points=1
q4_answer = 2 * 24 * 4 * 64 * 2
_obvious_wrong = [
    2 * 24 * 16 * 64 * 2,  # multi-head: all 16 heads
    24 * 4 * 64 * 2,  # keys only (forgot the values)
    2 * 24 * 4 * 64 * 4,  # float32
    2 * 24 * 4 * 64,
]  # forgot the bytes per value
assert all(abs(q4_answer - w) > 0.01 * q4_answer for w in _obvious_wrong)

# %% [markdown]
# **Q5 (1 point).** Grouped-query attention with 8 query heads and 4 key/value heads, grouped as in PyTorch's
# `enable_gqa=True`. Which key/value head does query head 5 use (heads are numbered from 0)?
#
# * **a** — head 0 &nbsp; **b** — head 1 &nbsp; **c** — head 2 &nbsp; **d** — head 3

# %% quiz="quiz-gqa-group" choices="abcd" key="c" points=1
q5_answer = "abcd"[5 // (8 // 4)]
assert q5_answer != "abcd"[5 % 4]  # the interleaved answer differs

# %% [markdown]
# **Q6 (1 point).** A new block raises a row's running maximum from $m$ to $m' > m$. What must happen to the
# running sum $\ell$ before the new block's terms $e^{z_j - m'}$ are added?
#
# * **a** — nothing: the old terms are still correct
# * **b** — multiply it by $e^{m - m'}$
# * **c** — multiply it by $e^{m' - m}$
# * **d** — reset it to 0: the old terms are no longer needed

# %% quiz="quiz-rescale" choices="abcd" key="b" points=1

# %% [markdown]
# **Q7 (1 point).** Compared with plain attention, tiled attention **without a mask**
#
# * **a** — computes fewer query–key dot products
# * **b** — computes the same $T_q T_k$ dot products, but never holds more than a tile of scores at a time
# * **c** — is an approximation whose error grows with $T$
# * **d** — only works when $B$ divides $T$

# %% quiz="quiz-what-tiling-saves" choices="abcd" key="b" points=1

# %% [markdown]
# **Q8 — free answer (3 points, graded by hand).** A classmate says: "Tiled attention must be an approximation:
# each tile's softmax only sees $B$ keys, but the real softmax divides by a sum over all of them." In 4–6
# sentences, explain why tiled attention is nevertheless exact, using the running maximum, the running sum and the
# output accumulator; then say what it saves and what it does not save, citing a number you measured in this notebook.

# %% [markdown] manual="quiz-free-exact-tiling" points=3
# ### BEGIN SOLUTION
# *Model answer.* No tile computes its own softmax: each tile only *updates* running quantities that are exactly
# the sums the real softmax needs. By lesson 4's shift invariance, $\sum_j e^{z_j}$ may be computed with any shift
# $c$; the running sum $\ell$ uses the running maximum $m$ as the shift, and whenever $m$ grows to $m'$, every old
# term is corrected at once by multiplying by $e^{m - m'}$. The unnormalised output $\tilde o = \sum_j e^{z_j - m} v_j$
# uses the same shift and gets the same factor. After the last key block, $m$ is the row's true maximum and $\ell$
# the true denominator, so $\tilde o/\ell = \sum_j \operatorname{softmax}(z)_j v_j$ exactly — the notebook measured
# differences around $10^{-16}$ to $10^{-15}$ against lesson 4 and PyTorch. What it saves is memory: the $T\times T$
# scores and weights are never stored, and the peak grew linearly in $T$ (at $T = 2048$ the notebook printed
# less than 1 MiB for the tiled version against more than 100 MiB for plain attention). It does not save arithmetic: without a mask every one of the $T^2$ dot products is still
# computed (causal masking skips the tiles above the diagonal, as plain attention could too).
#
# *Rubric (3 points).* 1 point: the sums are accumulated across tiles (no per-tile softmax), with the rescaling by
# $e^{m - m'}$ when the maximum grows, justified by shift invariance. 1 point: the output accumulator is rescaled
# the same way and divided by $\ell$ only at the end, so the result equals softmax$(S)V$ (rounding-level
# differences). 1 point: saves memory ($T^2$ → linear in $T$ / set by $B$), with a number measured in the notebook,
# and states that the number of dot products is not reduced. No point for restating the question.
# ### END SOLUTION
