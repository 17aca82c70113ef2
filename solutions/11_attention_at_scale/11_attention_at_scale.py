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
# **Attention, from the dot product up** · lesson 11 · about 100 minutes (minimal path: about 70)
#
# The examples of the earlier lessons had a few dozen tokens at most; language models read thousands. Attention's
# formula does not change with the length, but its **memory** does: the weight matrix
# $A = \operatorname{softmax}(QK^\top/\sqrt{d_k})$ has one entry per (query, key) pair, $T^2$ of them. In
# this lesson you measure that wall, then take it down the way FlashAttention does — with an **online
# softmax** that grows straight out of the stability trick of lesson 4, and **tiled attention** that never holds
# the $T \times T$ matrix. The optional sections go further: a tiled **backward pass**, the memory traffic that
# makes the tiles fast, and **grouped-query attention**, which shrinks the KV cache of lesson 10.
#
# **Learning goals.** By the end you can
# 1. measure the peak memory of plain attention and show that it grows with $T^2$;
# 2. derive and implement the **online softmax**: a running maximum and a running sum, with the sum
#    rescaled whenever the maximum grows;
# 3. implement **tiled attention** (with causal masking inside the tiles) that equals plain attention
#    to rounding error while its extra memory grows only linearly in $T$;
# 4. *(optional)* implement its backward pass from each row's log-sum-exp alone, and count the memory traffic of
#    your tiled loop against plain attention's;
# 5. *(optional)* implement multi-query and grouped-query attention and count the KV-cache bytes they save.
#
# > **Minimal path: about 70 minutes** (the whole lesson: about 100, plus the optional exercises). Do sections 1–3 with the graded exercises
# > 11.1 and 11.2, read the review (section 9) and answer the quiz (section 10); run every cell from the top. The
# > sections marked *optional* (4–8), their exercises 11.3 and 11.4 and the quiz questions on them are worth 0
# > points: their checks still tell you whether your code is right. Both times are counted the course's one way
# > (README, "Lessons"): words read, exercise points and quiz points.
#
# **You need:**
#
# | what | from lesson |
# |---|---|
# | the stable softmax: subtracting any constant from a row changes nothing, subtracting the row maximum prevents overflow | 4 (`softmax`) |
# | scaled dot-product attention $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$, the causal mask (True = may attend) | 4 (`scaled_dot_product_attention`) |
# | heads: head 1 owns the first $d_k$ columns of $XW^Q$, head 2 the next $d_k$, …; split, attend, merge, $W^O$ | 6 (`split_heads`, `MultiHeadAttention`) |
# | gradients by autograd, and the chain rule behind them | 0 |
# | rotary position embeddings (for the last section only) | 7 (stretch) |
# | the KV cache, and the character-level decoder trained on nursery rhymes | 10 (`10_causal_decoder`) |
#
# Where a demo can use **your own** code from lesson 4 or 6 it does (it reads your notebook next to this
# one); if that notebook is missing or unfinished, it says so and uses a written-out version instead.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells say
# `# YOUR CODE HERE`: replace `raise NotImplementedError()` with your code. The cell after each exercise
# runs *visible checks*; when your work is graded, hidden checks with other shapes run too, so write
# general code. The **Validate** button runs every check at once.

# %%
import copy
import math
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.patches import Patch, PathPatch, Rectangle
from matplotlib.path import Path as Outline  # a drawn shape (pathlib's Path is a file path)
from matplotlib.ticker import FuncFormatter, LogLocator
from torch.func import functional_call, stack_module_state, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

import attention_course as ac
from attention_course import checks, data, plots, reuse, widgets

ac.setup()


def softmax(x, axis=-1):
    """Softmax of a numpy array along `axis` (you built it in lesson 4; here PyTorch's does the work)."""
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()


def peak_memory(fn, *args, **kwargs):
    """Call fn(*args, **kwargs); return (its result, the peak number of bytes numpy held at once while it ran).

    Python's tracemalloc records every allocation that Python and numpy make, so the peak counts the arrays fn
    creates (its temporaries and its result), not the inputs that existed before. It does not see PyTorch's
    allocations at all — a 64 MB tensor counts as almost nothing — so for a function that calls PyTorch the peak is
    NaN (missing), with a note. (The measurement is `checks.numpy_peak_memory`, which the graded checks use too.)"""
    result, peak, torch_calls = checks.numpy_peak_memory(fn, *args, **kwargs)
    if torch_calls:
        print(
            f"({getattr(fn, '__name__', fn)} calls PyTorch, whose memory tracemalloc cannot see: its peak is missing.)"
        )
        return result, math.nan
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
# allocation that Python and numpy make, calls a function and returns the largest amount of memory that was
# allocated at one time during the call. `tracemalloc` does not see PyTorch's memory, so this only works for
# numpy code. We run **your** `scaled_dot_product_attention` from lesson 4 (it is read from
# `../04_softmax/04_softmax.ipynb`; if it uses PyTorch inside, the written-out numpy version below stands in) for
# one head with $d_k = d_v = 32$ at lengths from 256 to 2048. Lesson 4's function returns the weights as well as
# the output; we also measure a written-out version that returns only the output, the same contract as the tiled
# attention you will write.


# %%
def attention_written_out(Q, K, V):
    """softmax(Q Kᵀ / √d_k) V in numpy with the whole (T_q, T_k) matrix at once, as in lesson 4 (no mask).
    Returns (output, weights) like lesson 4's function."""
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    return A @ V, A


def attention_output_only(Q, K, V):
    """The same formula, returning only the output: the weights are freed as soon as the output exists."""
    return attention_written_out(Q, K, V)[0]


attention_04 = from_earlier_lesson(
    "04_softmax", "scaled_dot_product_attention", probe=lambda f: f(np.eye(2), np.eye(2), np.eye(2))
)
attention_04_name = "your lesson-4 scaled_dot_product_attention"
if attention_04 is not None and checks.numpy_peak_memory(attention_04, np.eye(2), np.eye(2), np.eye(2))[2]:
    print("(Your lesson-4 function calls PyTorch, whose memory tracemalloc cannot see.)")
    attention_04 = None
if attention_04 is None:
    print("We measure attention_written_out, the same formula in numpy, instead.")
    attention_04, attention_04_name = attention_written_out, "attention_written_out (lesson 4's formula)"

D_HEAD = 32
LENGTHS = [256, 512, 768, 1024, 1536, 2048]
rng = data.rng(1)
QKV = {T: tuple(rng.standard_normal((T, D_HEAD)) for _ in range(3)) for T in LENGTHS}  # one head, float64

plain_peak = {T: peak_memory(attention_04, *QKV[T])[1] for T in LENGTHS}
output_only_peak = {T: peak_memory(attention_output_only, *QKV[T])[1] for T in LENGTHS}
print(f"Peak memory of {attention_04_name}, one head, d_k = d_v = {D_HEAD}, float64:")
print(f"{'T':>6} {'peak (MiB)':>11} {'output only (MiB)':>18} {'one T×T matrix (MiB)':>21} {'peak / (8 T²)':>14}")
for T in LENGTHS:
    print(
        f"{T:>6} {mib(plain_peak[T]):>11.2f} {mib(output_only_peak[T]):>18.2f} {mib(8 * T * T):>21.2f} "
        f"{plain_peak[T] / (8 * T * T):>14.2f}"
    )

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
# number. A version that returns only the output (second column) peaks lower, but still at several $T \times T$
# matrices: the weights must exist before the output can be computed. Computed this way, every head of every layer,
# for every sequence of a batch, needs such matrices — and the extrapolated line is for *one* head.
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
# <details><summary>Hint 1: the idea</summary>
#
# Two things change when a block arrives: the maximum may grow, and new terms join the sum. Rescale the old sum
# to the new maximum first, then add the new terms, each shifted by the new maximum.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The new maximum is the larger of the old one and the block's own maximum, row by row. A row whose new maximum
# is still $-\infty$ has seen nothing allowed: every exponent of that row must give 0, not NaN — shift such rows
# by 0 instead of by $-\infty$.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.maximum(m, s.max(axis=-1))`; `np.where(np.isneginf(m_new), 0.0, m_new)` as a safe shift; `shift[..., None]`
# broadcasts a row's shift along its block.
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
_s = np.array([[1.0, -1.0], [0.5, 2.0]])  # row 0: the maximum grows from 0 to 1; row 1: it stays 3
# row 0: l = 1·e^(0-1) + e^(1-1) + e^(-1-1) = 1.50321  ·  row 1: l = 2·e^0 + e^(0.5-3) + e^(2-3) = 2.44996
_result = checks.call(online_softmax_update, _m, _l, _s)
checks.expect(isinstance(_result, tuple) and len(_result) == 2, "online_softmax_update must return (m_new, l_new).")
_m_new, _l_new = _result
_wrong_max = {"the new maximum ignores the old one: m_new = max(m, max of the block).": [1.0, 2.0]}
checks.expect_close(_m_new, [1.0, 3.0], "m_new on the worked example", mistakes=_wrong_max)
_UPDATE_MISTAKES = {  # what each mistake gives for l_new, from (m, l, s, m_new)
    "the running sum is not rescaled when the maximum grows: multiply the old sum by e^(m - m_new).": lambda m, l, s, M: (
        np.where(np.isneginf(m), 0, l) + np.exp(s - M[..., None]).sum(-1)
    ),
    "the old sum is rescaled by e^(m_new - m), the wrong way round: the factor is e^(m - m_new) ≤ 1.": lambda m, l, s, M: (
        l * np.exp(M - m) + np.exp(s - M[..., None]).sum(-1)
    ),
    "the new scores are shifted by the old maximum m: shift them by m_new.": lambda m, l, s, M: (
        l * np.exp(m - M) + np.exp(s - m[..., None]).sum(-1)
    ),
}
_mistakes = {text: wrong(_m, _l, _s, np.array([1.0, 3.0])) for text, wrong in _UPDATE_MISTAKES.items()}
checks.expect_close(_l_new, [1.50321472, 2.44996444], "l_new on the worked example", mistakes=_mistakes)
checks.expect_close(np.r_[_m, _l], [0.0, 3.0, 1.0, 2.0], "m and l after the call (they must not change in place)")
_m1, _l1 = online_softmax_update(np.array([-np.inf]), np.array([0.0]), np.array([[2.0, 0.0, 1.0]]))
checks.expect_finite(_l1, "l_new from the start (m = -inf, l = 0)", "e^(-inf - m_new) is 0: no NaN should appear.")
checks.expect_close(np.r_[_m1, _l1], [2.0, 1 + np.exp(-2) + np.exp(-1)], "(m_new, l_new) from the start")
_m2, _l2 = online_softmax_update(np.array([-np.inf, 0.5]), np.array([0.0, 1.0]), np.full((2, 3), -np.inf))
checks.expect_finite(
    _l2,
    "l_new after a block that is entirely -inf",
    "a row that has seen only -inf keeps l = 0 and m = -inf: avoid e^(-inf - (-inf)), which is NaN.",
)
checks.expect(
    np.isneginf(_m2[0]) and (_m2[1], *_l2) == (0.5, 0.0, 1.0), "after a blocked block: m [-inf, 0.5], l [0, 1]."
)
_z, _m3, _l3 = np.random.default_rng(0).normal(0, 3, 20), np.array(-np.inf), np.array(0.0)
for _start in range(0, 20, 3):  # a long row in blocks of 3 ends with lesson 4's maximum and denominator
    _m3, _l3 = online_softmax_update(_m3, _l3, _z[_start : _start + 3])
checks.expect_close(np.r_[_m3, _l3], [_z.max(), np.exp(_z - _z.max()).sum()], "(m, l) after a row in blocks of 3")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(111)
for _shape, _width, _scale in (((3, 4), 5, 1.0), ((2, 3, 2), 1, 30.0), ((6,), 7, 400.0)):  # no overflow at any scale
    _z = _scale * _rng.standard_normal(_shape + (4 * _width + 1,))
    _m, _l = np.full(_shape, -np.inf), np.zeros(_shape)
    for _start in range(0, _z.shape[-1], _width):
        _s, _seen = _z[..., _start : _start + _width], _z[..., : _start + _width]
        _m_new, _l_new = online_softmax_update(_m, _l, _s)
        _what = f"(m_new, l_new) after {_seen.shape[-1]} scores of scale {_scale}, rows {_shape}"
        checks.expect_shape(_m_new, _shape, f"m_new for rows of shape {_shape}")
        checks.expect_finite(_l_new, _what, "shift every exponent by the new maximum, so that none is positive.")
        _want = [_seen.max(-1), torch.logsumexp(torch.from_numpy(_seen), -1).numpy()]
        _mistakes = {
            t: [_seen.max(-1), np.log(w(_m, _l, _s, _want[0])) + _want[0]] for t, w in _UPDATE_MISTAKES.items()
        }
        with np.errstate(all="ignore"):
            _got = [_m_new, np.where(_l_new > 0, np.log(_l_new) + _m_new, -np.inf)]
        checks.expect_close(_got, _want, _what + " (m and m + log l)", atol=1e-9, rtol=1e-9, mistakes=_mistakes)
        _m, _l = _m_new, _l_new
_z = np.where(_rng.random((5, 12)) < 0.4, -np.inf, _rng.standard_normal((5, 12)))
_z[2] = -np.inf  # a row that is blocked everywhere
_m, _l = np.full(5, -np.inf), np.zeros(5)
for _start in range(0, 12, 4):
    _m, _l = online_softmax_update(_m, _l, _z[:, _start : _start + 4])
checks.expect(np.isneginf(_m[2]) and _l[2] == 0.0, "a row whose scores are all -inf must end with m = -inf and l = 0.")
_want = np.exp(torch.logsumexp(torch.from_numpy(_z), -1).numpy() - np.where(np.isneginf(_m), 0, _m))
checks.expect_close(_l, np.where(np.isneginf(_m), 0, _want), "l after rows with blocked (-inf) scores")
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


def masked_runs(entries):
    """Rectangles (x, y, width, 1) covering the computed-but-masked entries (code 1) of an entry map, one per run
    of a row: a few dozen patches to hatch instead of one per entry."""
    runs = []
    for i, row in enumerate(entries == 1):
        cols = np.flatnonzero(row)
        for run in np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1) if cols.size else []:
            runs.append(Rectangle((run[0] - 0.5, i - 0.5), len(run), 1))
    return runs


def hatched(runs):
    """The masked entries as one hatched collection, drawn like plots.draw_masked's cells."""
    return PatchCollection(
        runs, facecolor=plots.color("masked"), edgecolor=plots.MASK_EDGE, hatch=plots.MASK_HATCH, linewidth=0
    )


TILE_COLOURS = ListedColormap([plots.color("skipped"), plots.color("masked"), plots.color("yours")])
TILE_LEGEND = [
    Patch(facecolor=plots.color("skipped"), edgecolor="#6E6E6E", label="skipped tile"),
    plots.masked_patch("computed, masked"),
    Patch(facecolor=plots.color("yours"), label="computed, used"),
]

T_demo, B_demo = 12, 4
fig, axes = plt.subplots(1, 2, figsize=(6.6, 4.2), layout="constrained")
counts = {}
for ax, causal in zip(axes, (False, True)):
    entries = entry_map(T_demo, B_demo, causal)
    ax.imshow(entries, cmap=TILE_COLOURS, vmin=0, vmax=2)
    ax.add_collection(hatched(masked_runs(entries)))
    for edge in np.arange(B_demo, T_demo, B_demo) - 0.5:
        ax.axhline(edge, color="#6E6E6E", lw=1.5)
        ax.axvline(edge, color="#6E6E6E", lw=1.5)
    grid = tile_grid(T_demo, B_demo, causal)
    counts[causal] = {kind: int((grid == code).sum()) for code, kind in ((0, "skipped"), (1, "masked"), (2, "full"))}
    ax.set_title(
        f"{'causal' if causal else 'no mask'}:\n{grid.size - counts[causal]['skipped']} of {grid.size} tiles computed"
    )
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
fig.legend(handles=TILE_LEGEND, loc="outside lower center", ncol=3, frameon=False)
fig.suptitle(f"A causal mask skips the tiles above the diagonal\n(T = {T_demo}, B = {B_demo})")
plots.show(
    fig,
    alt=f"A causal mask skips the {counts[True]['skipped']} tiles above the diagonal. "
    f"Two 12 by 12 grids cut into 4 by 4 tiles. Without a mask all 9 tiles are computed. "
    f"With a causal mask {counts[True]['skipped']} tiles above the diagonal are skipped, "
    f"{counts[True]['masked']} diagonal tiles are computed with their upper triangle masked (hatched), "
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
# Implement `tiled_attention(Q, K, V, block_size, causal=False, return_lse=False)` for numpy arrays `Q`
# `(..., T_q, d_k)`, `K` `(..., T_k, d_k)`, `V` `(..., T_k, d_v)` (any number of leading batch axes). Return the
# output `(..., T_q, d_v)` — only the output, no weights — equal to lesson 4's
# $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$ within $10^{-6}$, a float64 array for float64 inputs.
# * Work through tiles: queries in blocks of `block_size` rows and, for each query block, keys and values in
#   blocks of `block_size` rows, with a running $m$, $\ell$ and $\tilde O$ per query row. For every tile you
#   compute, call your `online_softmax_update` **once**, with that tile's scores: shape
#   `(..., rows, columns)` with at most `block_size` rows (queries) and columns (keys), all leading batch axes at
#   once. The checks count these calls and look at their shapes. `block_size` need not divide `T_q` or `T_k`: the
#   last blocks are shorter.
# * **One pass.** Each tile reads its block of keys and its block of values once, `K[..., j0:j0 + block_size, :]`
#   and `V[...]` alike, and the output of a query block is accumulated in the running $\tilde O$ as its tiles go by.
#   A version that first runs over the key blocks for $m$ and $\ell$ and then over them again for the output reads
#   every key block twice. The checks pass `K` and `V` as arrays that count every number read out of them: take
#   the blocks with slices, and do not convert `K` or `V` as a whole first (`np.asarray`), or the count misses them.
# * **Never hold a `(T_q, T_k)` array, and work in numpy** — no PyTorch, in this function or in the
#   `online_softmax_update` it calls. The checks measure your peak memory with `tracemalloc`, which sees numpy's
#   arrays but not PyTorch's, and fail if it reaches the size of one $T_q \times T_k$ float64 matrix (or if
#   PyTorch is called). They also give one block of queries more and more keys: its peak memory must not grow by a
#   `(block_size, T_k)` array of scores — hold one tile of scores at a time, as the running $m$, $\ell$ and $\tilde O$
#   allow.
# * `causal=True` (self-attention, $T_q = T_k$): query $i$ may attend to key $j$ only if $j \le i$. **Skip**
#   the tiles where every key comes after every query: they are never computed, so `online_softmax_update` is
#   called for the other tiles only. Inside the tiles on the diagonal, set the entries $j > i$ to `-np.inf`
#   before the update.
# * `return_lse=True`: return `(output, lse)`, where `lse` `(..., T_q)` is each row's log-sum-exp
#   $\log \sum_j e^{s_{ij}}$ of its scaled (and masked) scores — $m + \log \ell$ after the last tile, the one
#   number per row that the backward pass of section 4 keeps.
#
# <details><summary>Hint 1: the idea</summary>
#
# A query block's output needs only its running $m$, $\ell$ and $\tilde O$: keep those three while you loop over
# the key blocks, and divide $\tilde O$ by $\ell$ after the last one. Whenever the maximum grows, $\tilde O$ is
# rescaled by the same factor as $\ell$.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# Start each query block with $m = -\infty$, $\ell = 0$ and $\tilde O = 0$. One tile's scores are
# `q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)`, shape `(..., rows, columns)`; after
# `m_new, l = online_softmax_update(m, l, s)` the accumulator becomes $\tilde O\, e^{m - m_{\text{new}}} +
# e^{s - m_{\text{new}}} V_{\text{block}}$.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `range(0, T_q, block_size)`; slices such as `Q[..., i0:i0 + block_size, :]` stop at the end on their own;
# `np.arange(j0, j0 + s.shape[-1])` are a tile's global key positions (compare them with its queries' with
# `[None, :]` and `[:, None]`); once `j0` is past the block's last query position, no later tile has an allowed
# entry; `np.log(l)`.
# </details>


# %% answer="tiled-attention"
def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):
    """softmax(Q Kᵀ / √d_k) V computed tile by tile, never holding a (T_q, T_k) array.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v); causal: query i may see keys j <= i
    returns the output (..., T_q, d_v), and with return_lse=True also each row's log-sum-exp (..., T_q)
    """
    ### BEGIN SOLUTION
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    out = np.empty(Q.shape[:-1] + V.shape[-1:], dtype=np.result_type(Q, K, V, np.float64))
    lse = np.empty(Q.shape[:-1])
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
        lse[..., i0 : i0 + block_size] = m + np.log(l)
    return (out, lse) if return_lse else out
    ### END SOLUTION


# %% tests="tiled-attention-tests" points=5
_rng, _update = np.random.default_rng(0), online_softmax_update  # your exercise 11.1 (when graded: a reference)


def _tiled(update, Q, K, V, *rest):
    """Your tiled_attention(Q, K, V, *rest) with `update` as its online_softmax_update: (result, peak memory, torch
    calls, the shapes of the tiles it passed to the update, the values it read out of K and out of V)."""
    shapes = []
    namespace = getattr(tiled_attention, "__globals__", globals())  # where your function finds its update
    saved = namespace.get("online_softmax_update")
    namespace["online_softmax_update"] = lambda m, l, s: shapes.append(np.shape(s)) or update(m, l, s)
    (K_counted, K_reads), (V_counted, V_reads) = checks.read_counter(K), checks.read_counter(V)
    try:
        result = checks.numpy_peak_memory(checks.call, tiled_attention, Q, K_counted, V_counted, *rest)
        return (*result, shapes, K_reads[0], V_reads[0])
    finally:
        namespace["online_softmax_update"] = saved


_sdpa = lambda Q, K, V, causal=False, scale=None, mask=None: F.scaled_dot_product_attention(*(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)), is_causal=causal, scale=scale, attn_mask=mask).numpy()  # fmt: skip


def _check_reads(K, V, B, causal, n_q, K_reads, V_reads, what):  # one read of each K and V block per computed tile
    T_k, batch = K.shape[-2], K[..., 0, 0].size
    keys = sum(min(B, T_k - j0) for i0 in range(0, n_q * B, B) for j0 in range(0, T_k, B) if not causal or j0 < i0 + B)
    rows_K, rows_V = K_reads / (K.shape[-1] * batch), V_reads / (V.shape[-1] * batch)  # rows read, counted
    checks.expect(rows_K >= rows_V, f"{what}: your function read {rows_K:.0f} rows of K but {rows_V:.0f} of V: each tile's scores come from that tile's K block, K[..., j0:j0 + block_size, :]; scores computed for many tiles at once build a whole T_q × T_k matrix: never build it.")  # fmt: skip
    checks.expect(rows_K == rows_V, f"{what}: your function read {rows_K:.0f} rows of K but {rows_V:.0f} of V: it reads the keys twice. Two passes over the keys (m and ℓ first, then the output with the final m and ℓ) read every key block twice: read each tile's K and V blocks once, keeping a running output Õ that is rescaled when the maximum grows. (Or were all the scores computed at once before the tiles? Never build the whole T_q × T_k matrix.)")  # fmt: skip
    checks.expect(rows_K <= keys, f"{what}: your function read {rows_K:.0f} rows of K and of V, more than the {keys} of one pass over the computed tiles: read each tile's K and V blocks once, keeping a running output Õ that is rescaled when the maximum grows.")  # fmt: skip
    return rows_K, rows_V


def _check_tiled(Q, K, V, B, causal, what, mistakes=None, memory=False):  # with _update (below) as the update
    out, peak, torch_calls, shapes, K_reads, V_reads = _tiled(_update, Q, K, V, B, causal)
    with_lse = _tiled(_update, Q, K, V, B, causal, True)[0]
    T_q, T_k, n_q, n_k = Q.shape[-2], K.shape[-2], -(-Q.shape[-2] // B), -(-K.shape[-2] // B)
    checks.expect(not torch_calls, f"{what}: tiled_attention (or the update it calls) used PyTorch: work in numpy.")
    checks.expect(not isinstance(out, tuple) and isinstance(with_lse, tuple) and len(with_lse) == 2,
                  "tiled_attention returns only the output, and (output, lse) with return_lse=True.")  # fmt: skip
    big = [s for s in shapes if s[-2] > B or s[-1] > B]  # tiles larger than block_size
    checks.expect(not big, f"{what}: online_softmax_update got scores of shape {big[:1]}: a tile has at most "
                  f"block_size = {B} rows (queries) and columns (keys): cut both into blocks.")  # fmt: skip
    tiles = n_q * (n_q + 1) // 2 if causal else n_q * n_k  # the computed tiles
    checks.expect(len(shapes) == tiles, f"{what}: online_softmax_update was called {len(shapes)} times for {tiles} "
                  f"computed tiles: once per tile{', skipping the tiles above the diagonal' if causal else ''}.")  # fmt: skip
    rows_K, rows_V = _check_reads(K, V, B, causal, n_q, K_reads, V_reads, what)
    checks.expect(not memory or peak < 8 * T_q * T_k, f"{what}: {peak / 2**20:.2f} MiB at the peak, a whole T_q × T_k matrix: never build it.")  # fmt: skip
    grew = memory and np.subtract(*(_tiled(_update, Q[..., :B, :], K[..., :n, :], V[..., :n, :], B)[1] for n in (T_k, T_k // 4)))  # fmt: skip
    checks.expect(not memory or grew < 8 * B * (T_k - T_k // 4), f"{what}: one query block against {T_k - T_k // 4} more keys: your peak memory grew by {grew / 2**10:.0f} KiB, a whole block_size × T_k array of scores: hold one tile of scores at a time.")  # fmt: skip
    checks.expect(checks._dtype_name(out) == "float64", f"{what}: float64 inputs gave a result of dtype {checks._dtype_name(out) or type(out).__name__}: return a float64 numpy array for float64 inputs.")  # fmt: skip
    checks.expect_finite(out, f"the output for {what}", "a row without allowed keys? query i may attend to key j = i.")
    checks.expect_close(out, _sdpa(Q, K, V, causal), f"the output for {what}", mistakes=mistakes)
    S = np.where(np.tri(T_q, T_k, dtype=bool) | (not causal), Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 0.5, -np.inf)
    m, lse = S.max(-1), torch.logsumexp(torch.from_numpy(S), -1).numpy()
    checks.expect_close(with_lse[1], lse, f"lse for {what}", mistakes={"lse is only the running maximum m: add log ℓ.": m, "lse is log ℓ only: add m.": lse - m})  # fmt: skip
    checks.expect(min(rows_K, rows_V) >= T_k, f"{what}: the checks counted {rows_K:.0f} rows read out of K and {rows_V:.0f} out of V, fewer than their {T_k} rows: take each block with a slice, K[..., j0:j0 + block_size, :], and do not convert K or V first (np.asarray, np.array): the checks count what you read.")  # fmt: skip


def _update_passes_11_1():  # does your online_softmax_update give exercise 11.1's numbers? (tiled_attention uses it)
    z = np.random.default_rng(7).normal(0, 3, (3, 9))
    z[1, :4] = -np.inf
    try:
        m, l = _update(np.full(3, -np.inf), np.zeros(3), z[:, :4])
        m, l = _update(m, l, z[:, 4:])
        return checks.is_close(np.r_[m, np.log(l) + m], np.r_[z.max(-1), torch.logsumexp(torch.from_numpy(z), -1)])
    except Exception:
        return False


### BEGIN HIDDEN TESTS
def _update(m, l, s):  # when graded: exercise 11.1's update, so that a mistake there costs points there only
    m_new = np.maximum(m, s.max(axis=-1))
    shift = np.where(np.isneginf(m_new), 0.0, m_new)
    return m_new, l * np.exp(m - shift) + np.exp(s - shift[..., None]).sum(axis=-1)


### END HIDDEN TESTS
_q, _k = np.ones((1, 1)), np.array([[0.0], [-1], [2], [1], [0.5]])  # scores 0, -1, 2, 1, 0.5: the max grows in block 2
_v = np.array([[1.0, 0], [0, 1], [1, 1], [2, 0], [0, 3]])
_mistakes = {
    "the output accumulator is not rescaled when the maximum grows: multiply O by e^(m - m_new).": (
        np.exp(_k[:, 0] - [0, 0, 2, 2, 2]) @ _v / np.exp(_k[:, 0] - 2).sum())[None],
    "each key block loses its last key: the block at j0 is K[..., j0:j0 + block_size, :].": _sdpa(_q, _k[::2], _v[::2]),
    "the last, shorter key block is missing: loop over range(0, T_k, block_size).": _sdpa(_q, _k[:4], _v[:4]),
}  # fmt: skip
checks.expect(
    _update is not online_softmax_update or _update_passes_11_1(),
    "tiled_attention is checked with your online_softmax_update, which does not give exercise 11.1's results yet: "
    "fix exercise 11.1 first (its check cell names the mistake), then run this cell again.",
)
_check_tiled(_q, _k, _v, 2, False, "the worked example (block_size = 2)", _mistakes)
_Q, _K, _V = _rng.standard_normal((5, 4)), _rng.standard_normal((7, 4)), _rng.standard_normal((7, 3))
_mistakes = {"the scores are not scaled: divide by √d_k.": _sdpa(_Q, _K, _V, scale=1.0)}
_check_tiled(_Q, _K, _V, 3, False, "T_q = 5, T_k = 7, B = 3", _mistakes)
_X, _Vx, _i, _j = _rng.standard_normal((10, 4)), _rng.standard_normal((10, 2)), *np.indices((10, 10))
_mistakes = {  # attention with the masks these mistakes build (True = may attend)
    "nothing is masked inside the diagonal tiles: block the keys j > i.": _sdpa(_X, _X, _Vx, mask=torch.from_numpy(_j // 4 <= _i // 4)),
    "inside the diagonal tiles the upper triangle is kept: block the keys j > i.": _sdpa(_X, _X, _Vx, mask=torch.from_numpy((_j // 4 < _i // 4) | ((_j // 4 == _i // 4) & (_j >= _i)))),
}  # fmt: skip
_check_tiled(_X, _X, _Vx, 4, True, "causal, T = 10, block_size = 4", _mistakes)
_check_tiled(*(_rng.standard_normal((512, 4)) for _ in range(3)), 64, False, "T = 512, B = 64", memory=True)
### BEGIN HIDDEN TESTS
_Q, _K, _V = (_rng.standard_normal((2, 3, T, d)) for T, d in ((11, 16), (13, 16), (13, 6)))  # batches, d_k = 16
_mistakes = {"the scores are divided by d_k: divide by √d_k.": _sdpa(_Q, _K, _V, scale=1 / 16)}
for _B in (1, 4, 5, 13, 40):
    _check_tiled(_Q, _K, _V, _B, False, f"a batch, T_q = 11, T_k = 13, B = {_B}", _mistakes)
_Kb = _rng.standard_normal((3, 17, 16))  # queries 300 times larger: scores of several hundred, e^score overflows
_check_tiled(300 * _rng.standard_normal((3, 9, 16)), _Kb, _Kb[..., :5], 4, False, "scores ~ 300")
for _T, _B in ((13, 4), (16, 4), (9, 1), (7, 8), (20, 6)):
    _X = _rng.standard_normal((2, _T, 16))  # keys 1.3 X reversed, values of width 3
    _check_tiled(_X, 1.3 * _X[..., ::-1], _X[..., :3], _B, True, f"causal, T = {_T}, B = {_B}")
_M600 = [_rng.standard_normal((600, 4)) for _ in range(3)]
for _causal in (False, True):
    _check_tiled(*_M600, 50, _causal, f"T = 600, B = 50, causal={_causal}", memory=True)
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
        f"peak memory at T = {T}: plain, returning only the output {mib(output_only_peak[T]):.2f} MiB; tiled "
        f"{mib(tiled_peak_1024):.2f} MiB ({output_only_peak[T] / tiled_peak_1024:.0f}× less); "
        f"the output alone is {mib(8 * T * D_HEAD):.2f} MiB"
    )


# %% [markdown]
# The outputs agree to rounding error, far inside $10^{-6}$. Both functions return only the output here, so the
# peaks compare like with like: the tiled version's is a small multiple of the output it has to return, plain
# attention's is dominated by its $T \times T$ matrices. The Experiment in section 7 measures how both peaks grow
# with $T$.

# %% [markdown]
# ## 4. Optional: the backward pass from one number per row, and the memory traffic it saves
#
# ### What training needs
#
# Training differentiates a loss $L$ through attention. Write $S = QK^\top/\sqrt{d_k}$ (masked entries $-\infty$),
# $P = \operatorname{softmax}(S)$ row by row, $O = PV$, and let $dO = \partial L/\partial O$ be the gradient that
# arrives from the layers above (same shape as $O$; $dX$ always means $\partial L / \partial X$). The chain rule
# gives, with $P_{ij} = e^{S_{ij}}/\sum_k e^{S_{ik}}$,
#
# $$dV = P^\top dO, \qquad dP = dO\, V^\top, \qquad dS_{ij} = P_{ij}\,\big(dP_{ij} - D_i\big), \qquad
#   dQ = \frac{dS\, K}{\sqrt{d_k}}, \qquad dK = \frac{dS^\top Q}{\sqrt{d_k}} .$$
#
# The third formula is the softmax's derivative: moving one score $S_{ij}$ changes $P_{ij}$ and, through the
# shared denominator, every other weight of row $i$; the correction is $D_i = \sum_j P_{ij}\, dP_{ij}$. And
# $D_i = \sum_j P_{ij}\,(dO_i \cdot v_j) = dO_i \cdot \sum_j P_{ij} v_j = dO_i \cdot O_i$: one dot product per row,
# from the output the forward pass returned.
#
# Autograd would keep $P$ — $T_q \times T_k$ numbers — from the forward pass to compute these. FlashAttention keeps
# only the softmax's statistics of each row: the first version kept $m_i$ and $\ell_i$, FlashAttention-2 one number,
# the log-sum-exp $\mathrm{lse}_i = \log \sum_k e^{S_{ik}} = m_i + \log \ell_i$, which your
# `tiled_attention(..., return_lse=True)` returns. Then $P_{ij} = e^{S_{ij} - \mathrm{lse}_i}$ exactly, so the
# backward pass can **recompute** $P$ tile by tile, like the forward pass: for each tile (query block $a$, key
# block $b$), recompute $S_{ab}$ and $P_{ab} = e^{S_{ab} - \mathrm{lse}_a}$, then add the tile's share to each
# gradient,
#
# $$dV_b \mathrel{+}= P_{ab}^\top dO_a, \qquad dS_{ab} = P_{ab} \circ \big(dO_a V_b^\top - D_a\big), \qquad
#   dQ_a \mathrel{+}= \frac{dS_{ab} K_b}{\sqrt{d_k}}, \qquad dK_b \mathrel{+}= \frac{dS_{ab}^\top Q_a}{\sqrt{d_k}} .$$
#
# Every gradient is a sum with one term per tile, so nothing of size $T_q \times T_k$ is ever held. The price is
# arithmetic: the scores are computed twice, once in each pass.
#
# ### Optional exercise 11.3 — the backward pass, tiled (0 points: checked, not graded)
#
# Implement `tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False)` in numpy:
# * `Q`, `K`, `V` as in exercise 11.2; `O` `(..., T_q, d_v)` the output of the forward pass; `dO` (same shape) the
#   gradient of the loss with respect to `O`; `lse` `(..., T_q)` each row's log-sum-exp, as `tiled_attention`
#   returns it with `return_lse=True`.
# * Return `(dQ, dK, dV)`, shaped like `Q`, `K` and `V`, float64 arrays for float64 inputs, equal within $10^{-6}$ to
#   the gradients autograd computes through $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$ (with the causal mask if `causal=True`).
# * Use the `lse` and the `O` you are given: a tile's weights are $e^{S - \mathrm{lse}}$, and $D$ comes from $O$.
#   Do not recompute the row statistics. The checks pass an `lse` increased by $\log 2$, which halves every weight,
#   and expect every gradient to halve with it.
# * Work tile by tile (blocks of `block_size` queries and keys), never hold a `(T_q, T_k)` array, and work in
#   numpy: the checks measure your peak memory with `tracemalloc`, as in exercise 11.2 (including one block of
#   queries against more and more keys, whose peak must not grow by a `(block_size, T_k)` array). With `causal=True`, mask
#   the entries $j > i$ inside the diagonal tiles; the tiles above the diagonal contribute nothing, so you may
#   skip them.
#
# <details><summary>Hint 1: the idea</summary>
#
# It is the forward loop again, with other sums inside: in each tile, recompute the scores, turn them into
# weights with the row's lse (no running maximum is needed any more), and add the tile's contribution to each of
# the three gradients. Start the three gradients at zero.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# Compute $D$ once for all rows, `(dO * O).sum(axis=-1)`, shape `(..., T_q)`. In a tile with query rows
# `i0:i0 + block_size`, the weights are `np.exp(s - lse[..., i0:i0 + block_size, None])`, where `s` is the tile's
# scaled scores ($-\infty$ where masked, which gives weight 0).
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.swapaxes(P, -1, -2) @ dO_block` adds to `dV[..., j0:j0 + block_size, :]`; `dO_block @ np.swapaxes(v, -1, -2)`
# is $dP$; `dS @ k` and `np.swapaxes(dS, -1, -2) @ q`, each divided by `np.sqrt(d_k)`, add to `dQ` and `dK`.
# </details>


# %% answer="tiled-backward"
def tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False):
    """Gradients (dQ, dK, dV) of softmax(Q Kᵀ / √d_k) V, given O, dO = ∂L/∂O and each row's lse, tile by tile.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v), O and dO: (..., T_q, d_v), lse: (..., T_q)
    """
    ### BEGIN SOLUTION
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    D = (dO * O).sum(axis=-1)  # (..., T_q): dO_i · O_i
    for i0 in range(0, T_q, block_size):
        q, do = Q[..., i0 : i0 + block_size, :], dO[..., i0 : i0 + block_size, :]
        rows = np.arange(i0, i0 + q.shape[-2])
        for j0 in range(0, T_k, block_size):
            if causal and j0 > rows[-1]:
                break  # this tile and every later one: all masked
            k, v = K[..., j0 : j0 + block_size, :], V[..., j0 : j0 + block_size, :]
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)  # (..., Bq, Bk)
            if causal:
                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)
            P = np.exp(s - lse[..., i0 : i0 + block_size, None])  # the tile's weights, exactly
            dV[..., j0 : j0 + block_size, :] += np.swapaxes(P, -1, -2) @ do
            dS = P * (do @ np.swapaxes(v, -1, -2) - D[..., i0 : i0 + block_size, None])
            dQ[..., i0 : i0 + block_size, :] += dS @ k / np.sqrt(d_k)
            dK[..., j0 : j0 + block_size, :] += np.swapaxes(dS, -1, -2) @ q / np.sqrt(d_k)
    return dQ, dK, dV
    ### END SOLUTION


# %% tests="tiled-backward-tests" points=0
# Visible checks: your gradients against autograd's (float64), with a block size that does not divide T, with the
# causal mask, with an lse increased by log 2 (every gradient halves), and the peak memory.
def _autograd(Q, K, V, dO, causal):
    """O and autograd's (dQ, dK, dV) of PyTorch's attention, and the pieces the named mistakes are made of."""
    q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o.backward(torch.from_numpy(dO))
    S = np.where(np.tri(*Q.shape[-2:-1], K.shape[-2], dtype=bool) | (not causal), Q @ np.swapaxes(K, -1, -2), -np.inf)
    S = S / np.sqrt(Q.shape[-1])
    lse = torch.logsumexp(torch.from_numpy(S), -1).numpy()
    P = np.exp(S - lse[..., None])
    dS_no_D = P * (dO @ np.swapaxes(V, -1, -2))  # the softmax's derivative without its second term
    return o.detach().numpy(), [t.grad.numpy() for t in (q, k, v)], lse, dS_no_D


def _peak_one_block(Q, K, V, dO, B):  # peak memory of your backward pass, for inputs small enough to check quickly
    O, _, lse, _ = _autograd(Q, K, V, dO, False)
    return checks.numpy_peak_memory(checks.call, tiled_attention_backward, Q, K, V, O, dO, lse, B)[1]


def _check_backward(Q, K, V, dO, B, causal, what, memory=False):
    O, grads, lse, dS_no_D = _autograd(Q, K, V, dO, causal)
    result, peak, torch_calls = checks.numpy_peak_memory(
        checks.call, tiled_attention_backward, Q, K, V, O, dO, lse, B, causal
    )
    checks.expect(not torch_calls, f"{what}: tiled_attention_backward used PyTorch: work in numpy.")
    checks.expect(isinstance(result, tuple) and len(result) == 3, "tiled_attention_backward returns (dQ, dK, dV).")
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    checks.expect(not memory or peak < 8 * T_q * T_k, f"{what}: {peak / 2**20:.2f} MiB at the peak, a whole T_q × T_k matrix: work tile by tile.")  # fmt: skip
    if memory:  # one block of queries against a quarter of the keys, then all of them
        grew = np.subtract(*(_peak_one_block(Q[:B], K[:n], V[:n], dO[:B], B) for n in (T_k, T_k // 4)))
        checks.expect(grew < 8 * B * (T_k - T_k // 4), f"{what}: one query block against {T_k - T_k // 4} more keys: your peak memory grew by {grew / 2**10:.0f} KiB, a whole block_size × T_k array: work tile by tile.")  # fmt: skip
    mistakes = [
        {"dQ lacks the factor 1/√d_k (the scores were divided by √d_k).": grads[0] * np.sqrt(d_k),
         "dS lacks its second term: dS = P ∘ (dP − D) with D = rowsum(dO ∘ O).": dS_no_D @ K / np.sqrt(d_k)},
        {"dK lacks the factor 1/√d_k (the scores were divided by √d_k).": grads[1] * np.sqrt(d_k),
         "dS lacks its second term: dS = P ∘ (dP − D) with D = rowsum(dO ∘ O).": np.swapaxes(dS_no_D, -1, -2) @ Q / np.sqrt(d_k)},
        {},
    ]  # fmt: skip
    for name, got, want, named in zip(("dQ", "dK", "dV"), result, grads, mistakes):
        checks.expect(checks._dtype_name(got) == "float64", f"{name} for {what}: float64 inputs gave a result of dtype {checks._dtype_name(got) or type(got).__name__}: return float64 numpy arrays for float64 inputs.")  # fmt: skip
        checks.expect_close(got, want, f"{name} for {what}, compared with autograd", mistakes=named)
    halved = checks.call(tiled_attention_backward, Q, K, V, O, dO, lse + np.log(2), B, causal)
    checks.expect(
        all(checks.is_close(got, want / 2) for got, want in zip(halved, grads)),
        f"{what}: with lse + log 2 your gradients did not halve: compute a tile's weights as exp(S − lse) with the lse "
        "you are given, and D from the O you are given, instead of recomputing them.",
    )


_rng = np.random.default_rng(3)
_Q, _K, _V, _dO = (_rng.standard_normal(shape) for shape in ((5, 4), (7, 4), (7, 3), (5, 3)))
_check_backward(_Q, _K, _V, _dO, 3, False, "T_q = 5, T_k = 7, block_size = 3")
_X, _Vx, _dOx = (_rng.standard_normal(shape) for shape in ((10, 4), (10, 2), (10, 2)))
_check_backward(_X, 1.5 * _X[:, ::-1], _Vx, _dOx, 4, True, "causal, T = 10, block_size = 4")
_check_backward(*(_rng.standard_normal((400, 4)) for _ in range(4)), 64, False, "T = 400, B = 64", memory=True)
### BEGIN HIDDEN TESTS
_shapes = ((2, 3, 11, 16), (2, 3, 13, 16), (2, 3, 13, 6), (2, 3, 11, 6))  # batches, T_q ≠ T_k, d_k = 16, d_v = 6
_Q, _K, _V, _dO = (_rng.standard_normal(shape) for shape in _shapes)
for _B in (1, 5, 13, 40):
    _check_backward(_Q, _K, _V, _dO, _B, False, f"a batch, T_q = 11, T_k = 13, block_size = {_B}")
for _T, _B in ((13, 4), (9, 1), (7, 8), (20, 6)):
    _X, _Vx, _dOx = (_rng.standard_normal((2, _T, d)) for d in (16, 3, 3))
    _check_backward(_X, 1.3 * _X[..., ::-1], _Vx, _dOx, _B, True, f"causal, T = {_T}, block_size = {_B}")
_check_backward(
    20 * _rng.standard_normal((9, 16)), *(_rng.standard_normal((n, 16)) for n in (17, 17, 9)), 4, False, "scores ~ 20"
)
_check_backward(*(_rng.standard_normal((500, 4)) for _ in range(4)), 50, True, "causal, T = 500, B = 50", memory=True)
### END HIDDEN TESTS
checks.passed("tiled_attention_backward")

# %% [markdown]
# **Your backward pass against autograd.** The cell runs a causal head of $T = 256$ tokens through your forward
# pass (for $O$ and the lse) and your backward pass, and compares the three gradients with PyTorch's autograd
# through `F.scaled_dot_product_attention`.

# %%
with ac.student_code("tiled_attention_backward"):
    rng = data.rng(12)
    Q, K, V, dO = (rng.standard_normal((256, 32)) for _ in range(4))
    O, lse = tiled_attention(Q, K, V, 64, causal=True, return_lse=True)  # yours (exercise 11.2)
    grads = tiled_attention_backward(Q, K, V, O, dO, lse, 64, causal=True)  # yours
    q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(torch.from_numpy(dO))
    backward_gap = max(np.abs(g - t.grad.numpy()).max() for g, t in zip(grads, (q, k, v)))
    print(f"causal, T = 256, B = 64: largest difference between your gradients and autograd's: {backward_gap:.1e}")
    print(f"kept from the forward pass: {lse.size} numbers (the lse), instead of the {256 * 256:,} weights of P")

# %% [markdown]
# ### Memory traffic: why the tiles are fast
#
# A GPU keeps $Q$, $K$, $V$ and the output in a large main memory that is slow to reach (HBM), and computes in a
# small fast memory next to its arithmetic units (SRAM). For attention the arithmetic is cheap next to moving the
# numbers between the two, so Dao et al. (2022) count the moves. We count them for **your** `tiled_attention`: the
# cell hands it $Q$, $K$ and $V$ as arrays that count every number read out of them (`checks.read_counter`, the same
# counter as exercise 11.2's checks), and adds the output it writes.
#
# Which block size does a fast memory of $M$ numbers allow? While one tile is computed, the fast memory holds a query
# block and its output accumulator ($2Bd$ numbers for $B$ rows of width $d$), a key block and a value block ($2Bd$)
# and the tile of scores ($B^2$): $4Bd + B^2 \le 6Bd$ numbers while $B \le 2d$. So we run your function with
# $B = M/(6d)$. (The paper's Algorithm 1 puts the key blocks outside and picks its blocks by a similar rule, $M/(4d)$;
# it counts up to a constant factor.)
#
# With the query blocks outside, as in exercise 11.2, the loop reads each query block once and writes its output once
# ($2Nd$ numbers for $N$ tokens), and reads all of $K$ and $V$ once per query block: $N/B$ times $2Nd$. With
# $B = M/(6d)$ that is $12N^2d^2/M$, the paper's $\Theta(N^2 d^2/M)$. Plain attention, counted the way the paper counts
# it, reads $Q$, $K$ and $V$ once, writes and reads back $S$ and $P$ once each, and writes $O$: $4Nd + 4N^2$ numbers,
# $\Theta(Nd + N^2)$ (this ignores the re-reads its own large matrix products would need, so it flatters plain
# attention). The cell counts both for one head of $d = 64$, with $M$ from $\tfrac34 d^2$ to $12 d^2$ numbers, and
# checks that the counted runs compute attention. (If your loop puts the key blocks outside, your counts differ
# from the formula; the laws below still hold up to a constant.)


# %%
def tiled_traffic(Q, K, V, M):
    """Your tiled_attention for one head (N, d) with block_size = M // (6d), the largest block whose working set fits
    a fast memory of M numbers; returns (the output, the numbers moved: those read out of Q, K and V, counted, plus
    the output written)."""
    counted = [checks.read_counter(a) for a in (Q, K, V)]
    out = tiled_attention(*(a for a, _ in counted), M // (6 * Q.shape[-1]))  # yours
    return out, sum(reads[0] for _, reads in counted) + np.size(out)


def plain_attention_traffic(N, d):
    """Numbers plain attention moves, counted as Dao et al. count them: (read, written) per step."""
    steps = [(2 * N * d, N * N), (N * N, N * N), (N * N + N * d, N * d)]  # S = QKᵀ; P = softmax(S); O = PV
    return sum(read + written for read, written in steps)


D_IO, N_IO, M_IO = 64, [128, 256, 512], [3072, 6144, 12288, 24576, 49152]  # M from 3d²/4 to 12d²
io_rng = data.rng(13)
Q_io, K_io, V_io = (io_rng.standard_normal((max(N_IO), D_IO)) for _ in range(3))
plain_traffic = {N: plain_attention_traffic(N, D_IO) for N in N_IO}
traffic = {}
with ac.student_code("tiled_attention"):
    check_out, _ = tiled_traffic(Q_io[:256], K_io[:256], V_io[:256], M_IO[0])
    io_gap = np.abs(
        check_out - F.scaled_dot_product_attention(*map(torch.from_numpy, (Q_io[:256], K_io[:256], V_io[:256]))).numpy()
    ).max()
    traffic = {(N, M): tiled_traffic(Q_io[:N], K_io[:N], V_io[:N], M)[1] for N in N_IO for M in M_IO}
if traffic:
    slope_N = np.polyfit(np.log(N_IO), np.log([traffic[N, M_IO[1]] for N in N_IO]), 1)[0]
    slope_M = np.polyfit(np.log(M_IO), np.log([traffic[N_IO[-1], M] for M in M_IO]), 1)[0]
    print(f"the counted runs compute attention: largest difference from F.scaled_dot_product_attention {io_gap:.1e}")
    print(f"{'N':>5} " + " ".join(f"{'tiled, M = ' + format(M, ','):>18}" for M in M_IO) + f" {'plain':>12}")
    for N in N_IO:
        print(f"{N:>5} " + " ".join(f"{traffic[N, M]:>18,}" for M in M_IO) + f" {plain_traffic[N]:>12,}")
    ratio_to_theory = [traffic[N_IO[-1], M] / (N_IO[-1] ** 2 * D_IO**2 / M) for M in M_IO]
    print(
        f"tiled traffic ∝ N^{slope_N:.2f} (M = {M_IO[1]:,}) and ∝ M^{slope_M:.2f} (N = {N_IO[-1]}); at N = {N_IO[-1]}, "
        f"traffic / (N²d²/M) from {min(ratio_to_theory):.1f} to {max(ratio_to_theory):.1f}"
    )
    fewer_from = min((M for M in M_IO if traffic[N_IO[-1], M] < plain_traffic[N_IO[-1]]), default=math.inf)
    share_at_largest = traffic[N_IO[-1], M_IO[-1]] / plain_traffic[N_IO[-1]]
    print(
        f"at N = {N_IO[-1]}: the tiled loop moves fewer numbers than plain attention from M = {fewer_from:,} on "
        f"({share_at_largest:.2f} of plain's at M = {M_IO[-1]:,} = 12d², "
        f"{traffic[N_IO[-1], M_IO[0]] / plain_traffic[N_IO[-1]]:.1f} times plain's at M = {M_IO[0]:,})"
    )


def draw_traffic():
    fig, (ax_n, ax_m) = plt.subplots(2, 1, figsize=(6.6, 8.0), layout="constrained")
    styles = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)))
    for M, marker, style, shade in zip(M_IO, "os^Dv", styles, plots.shades("tiled", len(M_IO))):  # light: small M
        ax_n.loglog(
            N_IO, [traffic[N, M] for N in N_IO], marker=marker, ls=style, color=shade, label=f"tiled, M = {M:,}"
        )
    # plain attention under the tiled lines, thick and in its own colour: it runs close to M = 12,288's
    ax_n.loglog(
        N_IO, [plain_traffic[N] for N in N_IO], "x-", color=plots.color("plain"), lw=3, ms=9, zorder=1.5,
        label="plain attention",
    )  # fmt: skip
    ax_n.set_xticks(N_IO, [str(N) for N in N_IO])
    ax_n.minorticks_off()
    ax_n.set_xlabel("sequence length N")
    ax_n.set_ylabel("numbers moved (log)")
    ax_n.set_title(
        f"Both grow like N² (tiled, M = {M_IO[1]:,}: slope {slope_N:.2f});\nonly the tiled loop's depends on M",
        loc="left",
    )
    ax_n.legend(loc="upper left", ncol=2)
    N = N_IO[-1]
    M_fine = np.geomspace(M_IO[0], M_IO[-1], 50)
    ax_m.loglog(M_IO, [traffic[N, M] for M in M_IO], "o", color=plots.color("tiled"), ms=8, label="tiled, counted")
    exact = 2 * N * D_IO + 12 * N * N * D_IO**2 / M_fine  # Q read and O written once; K and V once per query block
    ax_m.loglog(M_fine, exact, "--", color=plots.color("reference"), lw=1, label="2Nd + 12 N²d²/M")
    ax_m.axhline(plain_traffic[N], color=plots.color("plain"), lw=2, label="plain attention")
    ax_m.set_xticks(M_IO, [f"{M:,}" for M in M_IO])
    ax_m.minorticks_off()
    # labelled ticks at 1, 2, 3 and 5 of every power of ten, with light grid lines, to read the values off
    ax_m.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5)))
    ax_m.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax_m.grid(axis="y", color=plots.color("chance"), lw=0.5, alpha=0.3)
    ax_m.set_xlabel("fast memory M (numbers)")
    ax_m.set_ylabel("numbers moved (log)")
    ax_m.set_title(
        f"N = {N}, d = {D_IO}: doubling M nearly halves the tiled loop's traffic\n(slope {slope_M:.2f})", loc="left"
    )
    ax_m.legend(loc="upper right")
    plots.show(
        fig,
        alt=f"Both plain and tiled attention move numbers in proportion to N², but only the tiled loop's traffic "
        f"falls as the fast memory M grows: it crosses below plain attention's from M = {fewer_from:,} on. "
        f"Two log-log plots of the numbers moved between slow and fast memory for one head of d = {D_IO}. Top: "
        f"against N from {N_IO[0]} to {N_IO[-1]}; every line rises with slope about 2; the tiled loop's lines, light to dark "
        f"blue as the fast memory M grows, sit lower the larger M; plain attention's line does not depend on M. Bottom: at N = {N}, the tiled "
        f"loop's traffic against M falls with slope {slope_M:.2f}, on the line 2Nd + 12 N²d²/M, crosses below plain "
        f"attention's from M = {fewer_from:,} on, and is {share_at_largest:.2f} of it at M = {M_IO[-1]:,}.",
        name="11_io",
    )


if traffic:
    draw_traffic()

# %% [markdown]
# The count reproduces the paper's two laws: the tiled loop's traffic is $2Nd + 12N^2d^2/M$, so it grows like $N^2$
# and falls like $1/M$ once the $N^2$ term dominates (the printed slopes and the ratio to $N^2d^2/M$), while plain
# attention's does not depend on $M$. With these block sizes the two cross where $12d^2/M \approx 4$, at
# $M \approx 3d^2$: with a smaller fast memory the tiles would move *more* numbers than plain attention (other block
# sizes move the crossing by a constant factor; the laws stay). Dao et al. argue that for the head sizes and on-chip
# memories of the GPUs they used, $d^2$ is many times smaller than $M$; at $M = 12d^2$, the largest fast memory counted
# here, the tiles already move less than a third of plain attention's numbers (printed) — and moving numbers, not
# arithmetic, is what takes the time.
#
# **A CPU shows it too.** A CPU's caches are its fast memory: a tile that fits in them is reused from there, while plain
# attention streams its $T \times T$ matrices through main memory. The PyTorch pinned by this course has such a tiled
# kernel for the CPU: `F.scaled_dot_product_attention` picks it by default, and `sdpa_kernel(SDPBackend.MATH)` forces
# the plain computation instead. The cell times both on one head of $T = 2048$, $d = 64$ (float32, one thread, the best
# of five runs each). It counts the processor time this thread used (`time.thread_time`), not the time on the clock:
# while other programs hold the core, the clock runs on but this count stops, so a busy machine tilts the comparison far
# less (they still share the caches and the memory). With the vectorised code paths PyTorch uses on current CPUs (AVX2,
# AVX-512) the tiled kernel is **the faster one**; with PyTorch's unvectorised fallback (`ATEN_CPU_CAPABILITY=default`)
# the two take about the same time, because the arithmetic, not the traffic, is then the bottleneck. By how much the
# tiles win depends on your CPU's caches; the printed ratio is what to read.


# %%
def best_time(fn, repeats=5):
    """The shortest of `repeats` runs of fn(), in seconds of this thread's processor time (the least disturbed)."""
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


with ac.torch_threads(1):
    q_cpu, k_cpu, v_cpu = (torch.randn(1, 1, 2048, 64, generator=torch.Generator().manual_seed(i)) for i in range(3))
    kernel_time = {}
    for name, backend in (("plain (math)", SDPBackend.MATH), ("tiled (flash)", SDPBackend.FLASH_ATTENTION)):
        with sdpa_kernel(backend):
            kernel_time[name] = best_time(lambda: F.scaled_dot_product_attention(q_cpu, k_cpu, v_cpu))
cpu_speedup = kernel_time["plain (math)"] / kernel_time["tiled (flash)"]
print(
    f"one head, T = 2048, d = 64, float32, one thread, CPU code path {torch.backends.cpu.get_cpu_capability()}, "
    + "processor time: "
    + ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in kernel_time.items())
    + f"; the tiled kernel is {cpu_speedup:.1f} times as fast"
)

# %% [markdown]
# ## 5. Optional: fewer heads for keys and values, multi-query and grouped-query attention
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
# of $d_{\text{model}} \times h\,d_k$. Queries, $W^Q$ and $W^O$ are as in lesson 6. Counting heads from 1, as
# lesson 6 does: query head $i$ owns columns $(i-1)\,d_k + 1$ to $i\,d_k$ of $XW^Q$, and the query heads
# $1, \dots, h/g$ share key/value head 1, the next $h/g$ share key/value head 2, and so on: query head $i$ uses
# key/value head $\lceil i\,g/h \rceil$. In code, where Python counts from 0, head $i$ is index $i - 1$ and query
# index `q` uses key/value index `q // (h // g)`. This **contiguous** grouping is the convention of PyTorch:
# `F.scaled_dot_product_attention(..., enable_gqa=True)` repeats each key/value head $h/g$ times in place, like
# `torch.repeat_interleave` — not like `np.tile`, which would cycle through the key/value heads (query index `q`
# with key/value index `q % g`), a different model.
#
# ### Optional exercise 11.4 — grouped-query attention (0 points: checked, not graded)
#
# Implement `grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False)` in numpy:
# * `X` `(..., T, d_model)`; `W_Q` `(d_model, n_heads·d_k)`; `W_K`, `W_V` `(d_model, n_kv_heads·d_k)`;
#   `W_O` `(n_heads·d_k, d_model)`; $d_k$ = `W_Q.shape[1] // n_heads`; `n_kv_heads` divides `n_heads`;
#   used as `X @ W_Q` (no biases).
# * Query index `q` (from 0) uses key/value index `q // (n_heads // n_kv_heads)`; scale by $\sqrt{d_k}$; softmax
#   over the keys (the `softmax` helper at the top is PyTorch's); merge the heads as in lesson 6 (query index `q`
#   in columns `q·d_k` to `(q + 1)·d_k − 1`); multiply by `W_O`.
# * `causal=True`: token $i$ may attend to tokens $j \le i$ only.
# * Return only the output, shape `(..., T, d_model)`.
#
# <details><summary>Hint 1: the idea</summary>
#
# It is lesson 6's multi-head attention, except that the keys and values have fewer heads than the queries. Line
# them up: give every query head the key/value head of its group, then attend head by head as before.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# Split as in lesson 6, `(..., T, heads·d_k)` → `(..., heads, T, d_k)`, with `n_heads` for the queries and
# `n_kv_heads` for the keys and values. Then repeat each key/value head `n_heads // n_kv_heads` times in a row along
# the head axis.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.swapaxes(M.reshape(*batch, T, heads, d_k), -2, -3)` splits; `np.repeat(K, n_heads // n_kv_heads, axis=-3)`
# repeats in place (copy-free alternative: reshape the queries to `(..., g, h/g, T, d_k)` and give the keys an axis
# of size 1, `K[..., :, None, :, :]`); `np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)` masks.
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


# %% tests="gqa-tests" points=0
# Visible checks. Worked example: T = 5 tokens, 4 query heads and 2 key/value heads of d_k = 3 (d_model = 12).
# Every token's value is the constant 1 in key/value head 1 and 10 in head 2, so each query head outputs its
# key/value head's constant, whatever its weights; W_O = identity shows the heads side by side.
_rng = np.random.default_rng(1)
_X = np.hstack([np.ones((5, 1)), _rng.standard_normal((5, 11))])  # feature 0 is 1 for every token
_W_Q, _W_K, _W_V = _rng.standard_normal((12, 12)), _rng.standard_normal((12, 6)), np.zeros((12, 6))
_W_V[0] = [1.0, 1, 1, 10, 10, 10]  # value head 1 -> 1s, value head 2 -> 10s
_out = checks.call(grouped_query_attention, _X, _W_Q, _W_K, _W_V, np.eye(12), 4, 2)
checks.expect(not isinstance(_out, tuple), "grouped_query_attention returns only the output.")
checks.expect_shape(_out, (5, 12), "the output for T = 5 tokens, 4 query heads of d_k = 3, W_O = identity")
_INTERLEAVED = (
    "the key/value heads are interleaved (query index q uses key/value index q % n_kv_heads, like np.tile): groups "
    "are contiguous, query index q uses key/value index q // (n_heads // n_kv_heads)."
)
_want, _wrong = np.tile([1.0] * 6 + [10.0] * 6, (5, 1)), np.tile([1.0] * 3 + [10.0] * 3, (5, 2))
checks.expect_close(
    _out, _want, "the worked example (query heads 1-2 share key/value head 1)", mistakes={_INTERLEAVED: _wrong}
)


def _torch_mha(X, Ws, h, causal):  # nn.MultiheadAttention without biases, holding the same weights
    mha = nn.MultiheadAttention(X.shape[-1], h, bias=False, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W.T for W in Ws[:3]])))
        mha.out_proj.weight.copy_(torch.from_numpy(Ws[3].T))
        blocked = torch.ones(X.shape[-2], X.shape[-2], dtype=torch.bool).triu(1) if causal else None  # True = blocked
        return mha(*(torch.from_numpy(X),) * 3, attn_mask=blocked, need_weights=False)[0].numpy()


_Xm, _Ws = _rng.standard_normal((2, 6, 12)), [_rng.standard_normal((12, 12)) / np.sqrt(12) for _ in range(4)]
for _causal in (False, True):  # as many key/value heads as query heads: multi-head attention
    _what = f"the output with n_kv_heads = n_heads = 3, causal={_causal}, compared with nn.MultiheadAttention"
    checks.expect_close(
        grouped_query_attention(_Xm, *_Ws, 3, 3, causal=_causal), _torch_mha(_Xm, _Ws, 3, _causal), _what
    )


### BEGIN HIDDEN TESTS
def _reference(X, W_Q, W_K, W_V, W_O, h, g, causal=False, tiled="", scale=None, skip_o=False):
    """PyTorch's enable_gqa attention; `tiled` names which of "k", "v" are grouped like np.tile instead (mistakes)."""
    (*batch, T, _), dk = X.shape, W_Q.shape[1] // h
    split = lambda M, n: torch.from_numpy(np.swapaxes(M.reshape(*batch, T, n, dk), -2, -3).copy())
    q, k, v = split(X @ W_Q, h), split(X @ W_K, g), split(X @ W_V, g)
    k, v = (t.repeat(*[1] * (t.dim() - 3), h // g, 1, 1) if name in tiled else t for name, t in (("k", k), ("v", v)))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
    merged = np.swapaxes(o.numpy(), -2, -3).reshape(*batch, T, h * dk)
    return merged if skip_o else merged @ W_O


_GROUPING = {  # the grouping mistakes, for 1 < n_kv_heads < n_heads
    _INTERLEAVED: dict(tiled="kv"),
    "the keys are grouped like np.tile: keys and values both use index q // (n_heads // n_kv_heads).": dict(tiled="k"),
    "the values are grouped like np.tile: keys and values both use index q // (n_heads // n_kv_heads).": dict(
        tiled="v"
    ),
}
_OTHERS = {
    "the scores are divided by √d_model: each head has width d_k, divide by √d_k.": dict(scale=1 / np.sqrt(96)),
    "the scores are divided by d_k: divide by √d_k.": dict(scale=1 / 16),
    "W_O is missing: multiply the merged heads by W_O.": dict(skip_o=True),
}
for _g, _shape in ((2, (2, 7, 96)), (3, (5, 96)), (1, (2, 2, 4, 96)), (6, (3, 5, 96))):  # 6 query heads, d_k = 16
    _Ws = [_rng.standard_normal(s) / np.sqrt(96) for s in ((96, 96), (96, 16 * _g), (96, 16 * _g), (96, 96))]
    _X = _rng.standard_normal(_shape)
    for _causal in (False, True):
        _ref = lambda **kw: _reference(_X, *_Ws, 6, _g, **({"causal": _causal} | kw))
        _mask = "the causal mask is ignored." if _causal else "the causal mask is applied although causal=False."
        _named = (_GROUPING if 1 < _g < 6 else {}) | _OTHERS | {_mask: dict(causal=not _causal)}
        _what = f"the output for X of shape {_shape}, 6 query heads, {_g} key/value head(s), causal={_causal}"
        _mistakes = {text: _ref(**kw) for text, kw in _named.items()}
        checks.expect_close(grouped_query_attention(_X, *_Ws, 6, _g, causal=_causal), _ref(), _what, mistakes=_mistakes)
_Xm, _Ws = _rng.standard_normal((2, 6, 48)), [1.5 * _rng.standard_normal((48, 48)) / np.sqrt(48) for _ in range(4)]
checks.expect_close(grouped_query_attention(_Xm, *_Ws, 3, 3), _torch_mha(_Xm, _Ws, 3, False), "d_model = 48, 3 heads")
_Ws = [_rng.standard_normal(s) / 5 for s in ((20, 64), (20, 16), (20, 16), (64, 20))]  # multi-query, W_O not square
_X = _rng.standard_normal((3, 9, 20))
_what = "the multi-query output, d_model = 20"
checks.expect_close(grouped_query_attention(_X, *_Ws, 4, 1, True), _reference(_X, *_Ws, 4, 1, True), _what)
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

fig, axes = plt.subplots(1, 2, figsize=(6.6, 4.2), layout="constrained")
x_pos = np.arange(len(kv_heads_options))
axes[0].bar(
    x_pos, [measured_per_token[g] for g in kv_heads_options], color=plots.color("yours"), label="measured (array sizes)"
)
axes[0].plot(
    x_pos,
    [formula_per_token[g] for g in kv_heads_options],
    "o",
    color=plots.color("reference"),
    ms=7,
    label="2 · layers · kv heads\n· $d_{\\mathrm{head}}$ · 2 bytes",
)
axes[0].set_xticks(x_pos, [str(g) for g in kv_heads_options])
axes[0].set_xlabel("key/value heads\n(8 query heads)")
axes[0].set_ylabel("KV-cache bytes per token")
axes[0].set_title(f"Toy decoder ({N_LAYERS_TOY} layers, float16)", loc="left")
axes[0].set_ylim(0, 1.45 * max(measured_per_token.values()))
axes[0].legend(loc="upper right")
groups_big = list(big_per_token)
axes[1].bar(
    np.arange(len(groups_big)),
    [big_per_token[g] * big["context"] / 2**30 for g in groups_big],
    color=plots.color("yours"),
)
axes[1].set_xticks(np.arange(len(groups_big)), [str(g) for g in groups_big])
axes[1].set_xlabel("key/value heads\n(32 query heads)")
axes[1].set_ylabel(f"GiB for {big['context']:,} tokens")
axes[1].set_title("Hypothetical 32-layer model", loc="left")
fig.suptitle("The KV cache shrinks in proportion to the number\nof key/value heads")
plots.show(
    fig,
    alt="The KV cache shrinks in proportion to the number of key/value heads. "
    "Two bar charts. Left: measured KV-cache bytes per token of a toy 4-layer decoder for 8, 4, 2 "
    f"and 1 key/value heads: {', '.join(f'{measured_per_token[g]:.0f}' for g in kv_heads_options)} "
    "bytes, on top of the formula's dots. Right: a hypothetical 32-layer model's cache for 4096 "
    f"tokens: {', '.join(f'{big_per_token[g] * 4096 / 2**30:.2f}' for g in groups_big)} GiB for "
    "32, 8, 4 and 1 key/value heads.",
    name="11_kv_cache",
)

# %% [markdown]
# The measured bytes equal the formula exactly, and they fall in proportion to the number of key/value heads:
# GQA with 4 key/value heads for 32 query heads keeps an eighth of the cache of multi-head attention, MQA a
# thirty-second. Note also what GQA does *not* change: the query heads and the $T_q \times T_k$ weights of every
# query head are all still there — tiling and GQA attack different memory.
#
# ### What sharing keys and values costs a trained model
#
# The saving is certain; the price is not: fewer distinct keys and values per layer might make a model worse.
# Ainslie et al. (2023) turn a trained multi-head model into a GQA model by **mean-pooling**: the key heads of each
# group are averaged into one key head (the same for the values), and the model is then trained a little more —
# **uptrained** — to adapt. We do the same with lesson 10's character-level decoder: the same nursery rhymes with
# the same held-out rhymes (every sixth), the same sizes (2 blocks, $d_{\text{model}} = 48$, 4 heads of
# $d_k = 12$), the same optimiser, but 200 training steps instead of 400. In lesson 10 the held-out loss flattened in
# the second half of the training while the training loss kept falling: more steps there mostly memorise the
# training rhymes, and a comparison made in that regime would measure memorisation as much as sharing (it also takes
# twice as long). Three seeds, trained at once as one batched model (`torch.func.vmap` runs one model's code on a
# stack of three models' weights), give three multi-head decoders. Each is mean-pooled to 2 key/value heads and to 1,
# and then every model — the multi-head ones too, so that the comparison is fair — gets 40 more steps (a fifth of the
# training) at a smaller learning rate, on the same batches. The decoder below is lesson 10's, written with
# `n_kv_heads` key/value heads (the repetition of exercise 11.4, in torch).


# %%
class GQABlock(nn.Module):
    """Lesson 10's pre-LN decoder block with causal attention, where n_heads query heads share n_kv_heads
    key/value heads in contiguous groups."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.d_k = n_heads, n_kv_heads, d_model // n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.W_q, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_k, self.W_v = nn.Linear(d_model, n_kv_heads * self.d_k), nn.Linear(d_model, n_kv_heads * self.d_k)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        B, T, d = x.shape
        h = self.ln1(x)
        split = lambda t, heads: t.view(B, T, heads, self.d_k).transpose(1, 2)  # (B, heads, T, d_k)
        group = self.n_heads // self.n_kv_heads
        q = split(self.W_q(h), self.n_heads)
        k, v = (split(W(h), self.n_kv_heads).repeat_interleave(group, dim=1) for W in (self.W_k, self.W_v))
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        scores = (q @ k.transpose(-2, -1) / self.d_k**0.5).masked_fill(~causal, float("-inf"))
        x = x + self.W_o((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d))
        return x + self.ff(self.ln2(x))


class GQADecoder(nn.Module):
    """Lesson 10's TinyDecoder: token and position embeddings, GQA blocks, a final layer norm and a linear head."""

    def __init__(self, vocab_size, n_kv_heads, d_model=48, n_heads=4, n_layers=2, max_len=32):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab_size, d_model), nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([GQABlock(d_model, n_heads, n_kv_heads) for _ in range(n_layers)])
        self.ln, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[-1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def mean_pooled(model, n_kv_heads):
    """A copy of `model` with n_kv_heads key/value heads: each group's key heads (and value heads) averaged."""
    pooled, state = GQADecoder(model.head.out_features, n_kv_heads), model.state_dict()
    for name, weight in state.items():
        if ".W_k." in name or ".W_v." in name:  # rows of the weight (and the bias): head after head, d_k rows each
            heads = weight.reshape(n_kv_heads, -1, pooled.blocks[0].d_k, *weight.shape[1:])
            state[name] = heads.mean(dim=1).reshape(-1, *weight.shape[1:])
    pooled.load_state_dict(state)
    return pooled


rhymes = Path("nursery_rhymes.txt").read_text(encoding="utf-8").lower().split("\n\n")
vocab = sorted(set("\n\n".join(rhymes)))
encode = lambda s: torch.tensor([vocab.index(c) for c in s])
train_ids = encode("\n\n".join(r for i, r in enumerate(rhymes) if i % 6 != 5))  # as in lesson 10
held_ids = encode("\n\n".join(rhymes[5::6]))
n_windows = (len(held_ids) - 1) // 32
held_windows = held_ids[: n_windows * 32 + 1].unfold(0, 33, 32)  # consecutive windows of 33: inputs and targets


WINDOWS = 16  # random windows per model and step, as in lesson 10


def train_batched(models, steps, lr, seed):
    """Train models of one shape at once, one batch of 16 random windows each per step (AdamW, learning rate falling
    linearly to 0); update the models and return their held-out losses."""
    weights, buffers = stack_module_state(models)  # every parameter with a leading axis of len(models)
    template = copy.deepcopy(models[0]).to("meta")
    run = vmap(lambda w, b, x: functional_call(template, (w, b), (x,)))
    optimizer = torch.optim.AdamW(weights.values(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - step / steps)
    generator, n = torch.Generator().manual_seed(seed), len(models)
    for _ in range(steps):
        windows = train_ids[
            torch.randint(0, len(train_ids) - 33, (n, WINDOWS, 1), generator=generator) + torch.arange(33)
        ]
        logits = run(weights, buffers, windows[..., :-1])
        loss = n * F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[..., 1:].reshape(-1))  # sum of means
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    with torch.no_grad():
        logits = run(weights, buffers, held_windows[:, :-1].expand(n, -1, -1))
        held_out = [F.cross_entropy(z.reshape(-1, z.shape[-1]), held_windows[:, 1:].reshape(-1)).item() for z in logits]
    for i, model in enumerate(models):
        model.load_state_dict({name: value[i].detach() for name, value in (weights | buffers).items()})
    return held_out


def held_out_loss(model):
    with torch.no_grad():
        logits = model(held_windows[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), held_windows[:, 1:].reshape(-1)).item()


SEEDS, BASE_STEPS, UPTRAIN_STEPS, UPTRAIN_LR = [0, 1, 2], 200, 40, 3e-3
start = time.perf_counter()
base_models = []
for seed in SEEDS:
    torch.manual_seed(seed)
    base_models.append(GQADecoder(len(vocab), n_kv_heads=4))
base_losses = train_batched(base_models, BASE_STEPS, 1e-2, seed=0)
print(f"multi-head decoders after {BASE_STEPS} steps, held-out loss per seed: {np.round(base_losses, 3).tolist()}")

# %% [markdown]
# Now the pooling: each multi-head decoder becomes a grouped one (2 key/value heads) and a multi-query one (1), and
# every model — the multi-head ones too — is uptrained for 40 steps. Each pooled decoder is compared with the
# multi-head decoder of its own seed, after the same extra steps.

# %%
uptraining = {}  # key/value heads -> (held-out losses right after pooling, after uptraining), one per seed
for n_kv in (4, 2, 1):
    pooled = [mean_pooled(model, n_kv) for model in base_models]
    before = [held_out_loss(model) for model in pooled]
    uptraining[n_kv] = (before, train_batched(pooled, UPTRAIN_STEPS, UPTRAIN_LR, seed=1))
experiment_seconds = time.perf_counter() - start
cache_bytes = {n_kv: 2 * 2 * n_kv * 12 * 4 for n_kv in uptraining}  # K and V · 2 layers · heads · d_k · float32
print(f"3 seeds, trained at once for {BASE_STEPS} steps, then pooled and uptrained: {experiment_seconds:.1f} s")
multi_head = np.array(uptraining[4][1])  # the multi-head decoders after the same extra steps, one per seed
paired = {n_kv: np.array(after) - multi_head for n_kv, (_, after) in uptraining.items()}  # seed by seed
gap_before = {n_kv: np.mean(before) - np.mean(uptraining[4][0]) for n_kv, (before, _) in uptraining.items()}
closed = {n_kv: 1 - paired[n_kv].mean() / gap_before[n_kv] for n_kv in (2, 1)}  # share of the gap won back
print("held-out loss, mean over the 3 seeds (lowest–highest seed):")
print(
    f"{'kv heads':>9} {'cache bytes/token':>18} {'right after pooling':>24} {f'after {UPTRAIN_STEPS} steps':>24}   minus multi-head, per seed"
)
for n_kv, (before, after) in uptraining.items():
    spread = lambda v: f"{np.mean(v):.3f} ({min(v):.3f}–{max(v):.3f})"
    differences = "  —" if n_kv == 4 else " ".join(f"{d:+.3f}" for d in paired[n_kv])
    print(f"{n_kv:>9} {cache_bytes[n_kv]:>18} {spread(before):>24} {spread(after):>24}   {differences}")
print(
    "uptraining closed "
    + " and ".join(f"{closed[n_kv]:.0%} (with {n_kv} kv head{'s' * (n_kv > 1)})" for n_kv in (2, 1))
    + " of the gap to the multi-head decoders; the seeds' multi-head losses spread over "
    + f"{np.ptp(multi_head):.3f} nats"
)

fig, ax = plt.subplots(figsize=(6.6, 4.4), layout="constrained")
x = {n_kv: i for i, n_kv in enumerate(uptraining)}
for n_kv, (before, after) in uptraining.items():
    shift = 0.08 * (np.arange(len(before)) - (len(before) - 1) / 2)  # one column per seed: equal losses stay apart
    for dx, seed_before, seed_after in zip(shift, before, after):
        ax.plot([x[n_kv] - 0.2 + dx, x[n_kv] + 0.2 + dx], [seed_before, seed_after], color=plots.color("chance"),
                lw=0.8)  # fmt: skip
    ax.plot(x[n_kv] - 0.2 + shift, before, "o", mfc="white", color=plots.color("baseline"), ms=8, ls="none")
    ax.plot(x[n_kv] + 0.2 + shift, after, "o", color=plots.color("yours"), ms=8, ls="none")
ax.plot([], [], "o", mfc="white", color=plots.color("baseline"), label="right after mean-pooling")
ax.plot([], [], "o", color=plots.color("yours"), label=f"after {UPTRAIN_STEPS} steps of uptraining")
labels = [
    f"{n_kv} ({'multi-head' if n_kv == 4 else 'multi-query' if n_kv == 1 else 'grouped'})\n{cache_bytes[n_kv]} bytes per token"
    for n_kv in uptraining
]
ax.set_xticks(list(x.values()), labels)
ax.set_xlim(-0.5, len(x) - 0.5)
ax.set_xlabel("key/value heads (4 query heads),\nand the KV cache they need")
ax.set_ylabel("held-out loss (nats per character)")
ax.set_title("Pooling raises the loss; uptraining closes most of the gap,\nnot all (3 seeds)", loc="left")
ax.legend(loc="upper left")
plots.show(
    fig,
    alt="Mean-pooling key/value heads raises the held-out loss, and uptraining closes most of the gap, not all. "
    "Held-out loss of lesson 10's decoder for 4, 2 and 1 key/value heads, three seeds each: right after "
    "mean-pooling "
    + "; ".join(f"{n_kv} heads {np.mean(b):.2f}" for n_kv, (b, _) in uptraining.items())
    + f"; after {UPTRAIN_STEPS} steps of uptraining "
    + "; ".join(f"{n_kv} heads {np.mean(a):.2f}" for n_kv, (_, a) in uptraining.items())
    + ". The KV cache needs "
    + ", ".join(f"{cache_bytes[n_kv]}" for n_kv in uptraining)
    + " bytes per token.",
    name="11_uptraining",
)

# %% [markdown]
# Right after pooling, the held-out loss rises, most for a single key/value head: averaging heads throws information
# away. A short uptraining — a fifth of the original training — closes more than half of the gap to the multi-head
# decoders, which got the same extra steps (the last printed line), but not all of it. Seed by seed, the grouped
# decoder stays a few hundredths of a nat behind the multi-head decoder it came from, and the multi-query one about a
# tenth of a nat: a half and a quarter of the cache, for that price. The three per-seed differences lie close
# together, closer than the three seeds' losses themselves, because each pooled decoder is compared with its own
# parent: the price is measured, not noise, at this size and after this much uptraining (how much of it a longer
# uptraining would win back, this experiment does not measure). Ainslie et al. found the same order for large language models, uptrained for a few percent
# of the original training: grouped-query attention close to multi-head quality, multi-query further behind.

# %% [markdown]
# ## 6. Explore (optional): tiles, running statistics and memory
#
# The explorer runs **your** code on one head with $d_k = 8$ (fixed random queries, keys and values; the sliders
# take the first $T$ of 64 tokens).
# * **Top left:** the $T \times T$ score matrix cut into tiles of $B \times B$: which tiles are computed, which
#   entries are masked inside them (hatched), which tiles are skipped (pale). The square always shows the whole
#   matrix, whatever $T$.
# * **Top middle and right:** the running maximum $m_i$ and the running sum $\ell_i$ of every query row $i$ (down)
#   after each key block (across), from **your** `online_softmax_update` (pale: a skipped tile, where the state does
#   not change). A white dot marks a block where the row's maximum grew, so its sum was rescaled.
# * **Bottom:** the peak memory of plain attention (lesson 4's formula, written out, returning only the output) and
#   of **your** `tiled_attention`, measured with `tracemalloc`, on a log scale.
# * **On top:** the number of tiles computed, the number of rescales (dots), and the largest difference between
#   your tiled output and `F.scaled_dot_product_attention`.
#
# Things to try:
# * Make $B$ small and look at the dots: do they thin out from left to right, and why would they? (How likely is
#   it that the next block holds a new maximum, once many keys have been seen?)
# * Switch the mask to causal: how many tiles are left, compared with "none"?
# * Move $T$ at a fixed $B$, then $B$ at a fixed $T$, and watch the two memory points. When $B$ is close to $T$, or
#   $T$ is tiny, the tiled point can sit as far right as plain's or further: a $B \times B$ tile plus the
#   bookkeeping is no smaller than a $T \times T$ matrix when $B \ge T$. The Experiment below measures realistic
#   lengths.

# %%
EXPLORE_T_MAX, EXPLORE_D = 64, 8
_explore_rng = data.rng(11)
Q_ex = 1.6 * _explore_rng.standard_normal((EXPLORE_T_MAX, EXPLORE_D))
K_ex, V_ex = (_explore_rng.standard_normal((EXPLORE_T_MAX, EXPLORE_D)) for _ in range(2))
S_ex = Q_ex @ K_ex.T / np.sqrt(EXPLORE_D)  # the colour scale is fixed from it


def unit_squares(runs, T):
    """masked_runs' rectangles as one compound path in the explorer's unit square (the matrix spans 0..1 both
    ways): a single hatched patch draws much faster than one per run."""
    squares = []
    for r in runs:
        (x, y), w = r.get_xy(), r.get_width()
        x0, x1, y0, y1 = (x + 0.5) / T, (x + 0.5 + w) / T, (y + 0.5) / T, (y + 1.5) / T
        squares.append(Outline([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)], closed=True))
    return Outline.make_compound_path(*squares) if squares else Outline(np.zeros((1, 2)))


class TilesView(widgets.View):
    """Tile map, running max and sum per row and key block, and peak memory, for one (B, T, mask) setting."""

    def __init__(self):
        self.measured = {}  # measurements kept per setting: see measure()

    def build(self, block_size, T, mask):
        fig = plt.figure(figsize=(6.6, 5.4), layout="constrained")
        grid = fig.add_gridspec(2, 3, height_ratios=[3.2, 1])
        ax_t, ax_m, ax_l = (fig.add_subplot(grid[0, i]) for i in range(3))
        ax_mem = fig.add_subplot(grid[1, :])
        unit = dict(extent=(0, 1, 1, 0), interpolation="nearest", interpolation_stage="rgba", aspect="auto")
        self.tiles = ax_t.imshow(np.zeros((1, 1)), cmap=TILE_COLOURS, vmin=0, vmax=2, **unit)
        self.masked = PathPatch(
            Outline(np.zeros((1, 2))),
            facecolor=plots.color("masked"),
            edgecolor="#6E6E6E",
            hatch=plots.MASK_HATCH,
            lw=0,
        )
        ax_t.add_patch(self.masked)
        self.edges = LineCollection([], colors="#6E6E6E", linewidths=1.0)
        ax_t.add_collection(self.edges)
        ax_t.set_title("tiles of the\nT × T scores")
        ax_t.set_xlabel("key j →")
        ax_t.set_ylabel("← query i")
        state_map = plt.get_cmap(plots.SEQUENTIAL).with_extremes(bad=plots.color("skipped"))
        self.maxima = ax_m.imshow(
            np.zeros((1, 1)), cmap=state_map, vmin=float(S_ex[:, 0].min()), vmax=float(S_ex.max()), **unit
        )
        self.sums = ax_l.imshow(np.ones((1, 1)), cmap=state_map, norm=LogNorm(1, EXPLORE_T_MAX), **unit)
        fig.colorbar(self.maxima, ax=ax_m, location="bottom", label="running max $m_i$")
        fig.colorbar(self.sums, ax=ax_l, location="bottom", label="running sum $\\ell_i$ (log)")
        self.dots = ax_m.scatter([], [], s=10, color="white", edgecolors="black", linewidths=0.4)
        ax_m.set_title("running max\n(• = it grew)")
        ax_l.set_title("running sum\n")
        for ax in (ax_t, ax_m, ax_l):
            ax.set_xlim(0, 1)
            ax.set_ylim(1, 0)
            ax.set_xticks([])
            ax.set_yticks([])
        ax_m.set_xlabel("key block →")
        ax_l.set_xlabel("key block →")
        ax_m.set_ylabel("← query row i")
        ax_t.legend(handles=TILE_LEGEND, loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False, fontsize=9)
        self.points = [ax_mem.plot([], [], "o", color=plots.color(meaning), ms=10)[0] for meaning in ("plain", "tiled")]
        ax_mem.set_xscale("log")
        ax_mem.set_xlim(1e3, 1e6)
        ax_mem.set_ylim(1.7, -0.7)
        ax_mem.set_yticks([0, 1], ["plain", "tiled (yours)"])
        ax_mem.set_xlabel("peak memory (bytes, log scale)")
        self.point_texts = [ax_mem.text(1e3, y, "", va="center", ha="left", fontsize=9) for y in (0, 1)]
        self.headline = fig.suptitle(" ")
        self.dynamic = [
            self.tiles, self.masked, self.edges, self.maxima, self.dots, self.sums, *self.points, *self.point_texts,
            self.headline,
        ]  # fmt: skip
        return fig

    def measure(self, block_size, T, mask):
        """Peak memory of the written-out formula (once per T) and of your tiled attention (once per setting),
        and PyTorch's output to compare yours with (once per T and mask)."""
        Q, K, V = Q_ex[:T], K_ex[:T], V_ex[:T]
        if ("plain", T) not in self.measured:
            self.measured["plain", T] = peak_memory(attention_output_only, Q, K, V)[1]
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

        entries = entry_map(T, block_size, causal)
        self.tiles.set_data(entries)
        self.masked.set_path(unit_squares(masked_runs(entries), T))
        cuts = np.arange(block_size, T, block_size) / T
        self.edges.set_segments([[(c, 0), (c, 1)] for c in cuts] + [[(0, c), (1, c)] for c in cuts])
        self.maxima.set_data(M)
        self.sums.set_data(L)
        self.dots.set_offsets(
            np.column_stack([(np.array(grew_blocks) + 0.5) / n_blocks, (np.array(grew_rows) + 0.5) / T])
            if grew_rows
            else np.empty((0, 2))
        )
        for point, text, y, value in zip(self.points, self.point_texts, (0, 1), (plain_bytes, tiled_bytes)):
            point.set_data([value], [y])
            text.set_position((value * 1.25 if np.isfinite(value) else 1.1e3, y))
            text.set_text(f"{value / 1024:.1f} KiB" if np.isfinite(value) else "missing: PyTorch's memory is invisible")
        computed = int((grid > 0).sum())
        self.headline.set_text(
            f"{computed} of {grid.size} tiles computed, {len(grew_rows)} rescales,\nmax |tiled − F.sdpa| {error:.0e}"
        )
        self.summary = (computed, grid.size, len(grew_rows), plain_bytes, tiled_bytes, error)

    def alt(self, block_size, T, mask):
        computed, total, rescales, plain_bytes, tiled_bytes, error = self.summary
        return (
            f"With mask {mask}, T = {T} and block size {block_size}, your tiled attention computes {computed} of "
            f"{total} tiles and holds {tiled_bytes / 1024:.1f} KiB at its peak, against {plain_bytes / 1024:.1f} KiB "
            "for plain attention. "
            f"Mask {mask}, T = {T}, block size {block_size}: a tile map with {computed} of {total} tiles computed, "
            "masked entries hatched; heatmaps of the running maximum and running sum of each of the "
            f"{T} query rows after each key block, with {rescales} rescaling events marked; peak memory "
            f"{plain_bytes / 1024:.1f} KiB for plain attention and {tiled_bytes / 1024:.1f} KiB for your tiled "
            f"attention; largest difference from PyTorch {error:.0e}."
        )


widgets.explore(
    TilesView(),
    needs=["online_softmax_update", "tiled_attention"],
    block_size=widgets.choice_slider("block size B", [4, 8, 16, 32], 8),
    T=widgets.slider("sequence length T", 8, EXPLORE_T_MAX, 40, step=4),
    mask=widgets.dropdown("mask", ["causal", "none"]),
)

# %% [markdown]
# ## 7. Experiment (optional): peak memory against $T$, plain and tiled
#
# **Claim.** Plain attention's peak memory grows with $T^2$; your tiled attention's grows linearly in $T$, and
# its only $T$-dependent part is the output it returns (and perhaps a copy of it, if it assembles the output from
# pieces). We measure both with `tracemalloc` for one head ($d_k = d_v = 32$, float64) at the six lengths of
# section 1, with $B = 64$; both return only the output. We fit a quadratic to plain attention's peaks and a
# straight line to the tiled ones, and read the coefficients. A third panel holds $T = 1024$ fixed and varies $B$:
# what is left when $T$ is fixed is set by the tile.

# %%
with ac.student_code("tiled_attention"):
    B_exp = 64
    tiled_peak = {T: peak_memory(tiled_attention, *QKV[T], B_exp)[1] for T in LENGTHS}  # yours
    Ts = np.array(LENGTHS, dtype=float)
    plain_y = np.array([output_only_peak[T] for T in LENGTHS], dtype=float)
    tiled_y = np.array([tiled_peak[T] for T in LENGTHS], dtype=float)
    if np.isnan(tiled_y).any():  # PyTorch inside: its memory cannot be measured here (see the note above)
        raise NotImplementedError("tiled_attention in numpy")
    plain_fit, tiled_fit1, tiled_fit2 = (
        np.polyfit(Ts, plain_y, 2),
        np.polyfit(Ts, tiled_y, 1),
        np.polyfit(Ts, tiled_y, 2),
    )
    misfit = lambda fit, y: float(np.max(np.abs(np.polyval(fit, Ts) - y) / y))
    block_sizes = [32, 64, 128, 256]
    by_block = {B: peak_memory(tiled_attention, *QKV[1024], B)[1] for B in block_sizes}  # yours
    output_bytes_1024 = 8 * 1024 * D_HEAD

    fig = plt.figure(figsize=(6.6, 7.8), layout="constrained")
    grid = fig.add_gridspec(2, 2)
    ax_p, ax_t, ax_b = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    T_fine = np.linspace(0, Ts[-1], 100)
    ax_p.plot(Ts, plain_y / 2**20, "o", color=plots.color("plain"), label="measured")
    ax_p.plot(
        T_fine, np.polyval(plain_fit, T_fine) / 2**20, "-", color=plots.color("plain"), lw=1, label="quadratic fit"
    )
    ax_p.set_title(f"Plain: {plain_fit[0] / 8:.2f} T×T\nfloat64 matrices", loc="left")
    ax_t.plot(Ts, tiled_y / 2**20, "s", color=plots.color("tiled"), label=f"measured, B = {B_exp}")
    ax_t.plot(
        T_fine, np.polyval(tiled_fit1, T_fine) / 2**20, "-", color=plots.color("tiled"), lw=1, label="straight-line fit"
    )
    ax_t.plot(T_fine, 8 * T_fine * D_HEAD / 2**20, ":", color=plots.color("reference"), label="the output alone")
    ax_t.set_title(f"Tiled (yours):\n{tiled_fit1[0]:.0f} bytes per row", loc="left")
    for ax in (ax_p, ax_t):
        ax.set_xlim(0, Ts[-1] * 1.05)
        ax.set_ylim(0, None)
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("peak memory (MiB)")
        ax.legend(loc="upper left")
    ax_b.plot(
        block_sizes, [by_block[B] / 2**20 for B in block_sizes], "s-", color=plots.color("tiled"), label="tiled (yours)"
    )
    ax_b.axhline(
        output_bytes_1024 / 2**20, color=plots.color("reference"), ls=":", label="the output alone (8·T·$d_v$ bytes)"
    )
    ax_b.set_xscale("log", base=2)
    ax_b.set_xticks(block_sizes, [str(B) for B in block_sizes])
    ax_b.minorticks_off()
    ax_b.set_ylim(0, None)
    ax_b.set_xlabel("block size B")
    ax_b.set_ylabel("peak memory (MiB)")
    ax_b.set_title(
        "T = 1024: the tile sets what the tiled version holds beyond its output\n"
        f"(plain: {mib(output_only_peak[1024]):.0f} MiB)",
        loc="left",
    )
    ax_b.legend(loc="upper left")
    fig.suptitle("Peak memory: plain attention grows like T²,\nyour tiled attention like T")
    ratio = output_only_peak[LENGTHS[-1]] / tiled_peak[LENGTHS[-1]]
    plots.show(
        fig,
        alt="Plain attention's peak memory grows like T², your tiled attention's like T. "
        f"Top left: plain attention's peak memory against T from 256 to 2048, rising from {mib(plain_y[0]):.1f} to "
        f"{mib(plain_y[-1]):.1f} MiB along a parabola. Top right: your tiled attention with B = 64 rises from "
        f"{mib(tiled_y[0]):.2f} to {mib(tiled_y[-1]):.2f} MiB along a straight line, above the line of the output "
        f"alone. Bottom: at T = 1024 the tiled peak grows with the block size from {mib(by_block[32]):.2f} MiB at "
        f"B = 32 to {mib(by_block[256]):.2f} MiB at B = 256, above the output alone ({mib(output_bytes_1024):.2f} MiB).",
        name="11_memory_vs_T",
    )

    print(
        f"plain (returning only the output): quadratic fit {polynomial(plain_fit)} (largest misfit "
        f"{misfit(plain_fit, plain_y):.1%}); T² coefficient = {plain_fit[0] / 8:.2f} float64 matrices"
    )
    print(
        f"tiled: straight-line fit {polynomial(tiled_fit1)} (largest misfit {misfit(tiled_fit1, tiled_y):.1%}); "
        f"a quadratic fit gives a T² coefficient of {tiled_fit2[0]:.1e} bytes, {abs(tiled_fit2[0]) / plain_fit[0]:.1e} of plain's"
    )
    print(
        f"the output takes 8·d_v = {8 * D_HEAD} bytes per query row; the fitted slope is {tiled_fit1[0]:.1f} bytes per "
        f"row, {tiled_fit1[0] / (8 * D_HEAD):.2f} output rows"
    )
    print(
        f"at T = {LENGTHS[-1]}: plain {mib(output_only_peak[LENGTHS[-1]]):.1f} MiB (returning only the output; "
        f"{mib(plain_peak[LENGTHS[-1]]):.1f} MiB returning the weights too), tiled "
        f"{mib(tiled_peak[LENGTHS[-1]]):.2f} MiB: {ratio:.0f}× less"
    )
    print(
        "at T = 1024, peak minus the output, by block size: "
        + ", ".join(f"B = {B}: {(by_block[B] - output_bytes_1024) / 1024:.0f} KiB" for B in block_sizes)
        + f"  (one B × B float64 tile at B = 256: {8 * 256 * 256 / 1024:.0f} KiB)"
    )
    T = LENGTHS[-1]
    start = time.perf_counter()
    attention_output_only(*QKV[T])
    plain_time = time.perf_counter() - start
    start = time.perf_counter()
    tiled_attention(*QKV[T], B_exp)  # yours
    tiled_time = time.perf_counter() - start
    print(
        f"run time at T = {T} on this CPU (numpy, one thread, tracemalloc off): plain {plain_time:.2f} s, "
        f"tiled {tiled_time:.2f} s"
    )

# %% [markdown]
# **Reading the numbers.** The quadratic fit of plain attention needs its $T^2$ term: a fixed number of float64
# $T\times T$ matrices (printed). The tiled peak lies on a straight line; its quadratic coefficient is negligible
# next to plain's, and its slope per query row is a small multiple of the $8 d_v$ bytes of one output row (printed):
# about one row for the output it must return, about two if the function collects the blocks' outputs and joins
# them at the end (the pieces and the joined copy). The rest is a constant that does not depend on $T$ but on the
# tile: at $T = 1024$ it grows with $B$ and reaches a few $B \times B$ matrices at $B = 256$ (bottom panel). So the extra memory beyond the output is set
# by $B$, not $T$. (Had you tiled only the keys — all queries against one key block — the scores would be
# $T \times B$, and the extra memory $O(T\cdot B)$: still linear in $T$, but exercise 11.2 asks for tiles.)
#
# What tiling does **not** save is arithmetic: every non-skipped tile still computes its $B^2$ dot products, so
# without a mask all $T_q T_k$ scores are computed, as in plain attention. Nor is speed what this experiment is
# about: the last line prints both run times on this CPU, where numpy pays for the tiles' Python loop and plain
# attention for its large arrays. Compiled tiled kernels gain from the memory traffic counted in section 4, on a
# GPU and, as section 4 timed, on a CPU too.

# %% [markdown]
# ## 8. Optional: where the field went from here
#
# Each of these ideas extends something you built in this course.
#
# **FlashAttention: your tiled loop, as one GPU kernel.** Dao et al. (2022, "FlashAttention: Fast and
# Memory-Efficient Exact Attention with IO-Awareness") run the algorithm you wrote — tiles, a running maximum and
# sum, a rescaled output accumulator — inside one GPU kernel, and its backward pass as another: the one you wrote in
# exercise 11.3, which keeps only the softmax's statistics of each row (you kept the log-sum-exp) and recomputes the
# tiles. The speed-up comes from fewer
# transfers between the GPU's slow and fast memories, the traffic you counted in section 4, not from fewer
# operations (in the forward pass the operations are the same; the backward pass even does more, since it computes
# the scores again). Later versions (FlashAttention-2 and -3) reorganise the work across the GPU; the online softmax
# at their core is the one you wrote. PyTorch's `F.scaled_dot_product_attention` dispatches to such a fused
# kernel on a GPU, and to a tiled kernel of its own on a CPU (section 4).
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
# your tiled attention. GQA and paging work together: GQA shrinks each token's entry (section 5), paging avoids
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
# ## 9. Let's review
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
# * **The backward pass** needs only each row's log-sum-exp from the forward pass: $P = e^{S - \mathrm{lse}}$ is
#   recomputed tile by tile, $D_i = dO_i \cdot O_i$ replaces the softmax's row sums, and every gradient is a sum over
#   tiles. **Memory traffic:** the tiled loop moves $2Nd + 12N^2d^2/M$ numbers between slow memory and a fast buffer of
#   $M$ numbers (with our block sizes), plain attention about $4N^2$: the tiles move fewer once $M$ is larger than
#   about $3d^2$, and ever fewer as $M$ grows.
# * **MQA / GQA:** query heads share key/value heads in contiguous groups (query head $i$, counted from 1, uses
#   key/value head $\lceil i g/h \rceil$, as `enable_gqa=True` and `repeat_interleave` do; interleaving is a
#   different model). With $g = h$ it is your multi-head attention. The KV cache costs
#   $2 \cdot n_{\text{layers}} \cdot g \cdot d_{\text{head}} \cdot \text{bytes}$ per token, so it shrinks by $h/g$.
#   Mean-pooling a trained decoder's key/value heads costs loss at first; a short uptraining wins back most of it,
#   not all: measured seed by seed, fewer key/value heads still cost a little.
# * The same ideas reappear in the systems of section 8: FlashAttention kernels (your loops in on-chip memory),
#   sliding windows (a mask that skips tiles), paged KV caches (key blocks in any order), RoPE (rotations per
#   position, applied before the tiles).

# %% [markdown]
# ## 10. Check your understanding
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
# **Q4 (optional, section 5; 0 points).** A decoder has 24 layers and 16 query heads of $d_{\text{head}} = 64$, with grouped-query
# attention using 4 key/value heads, and caches float16 values (2 bytes). How many bytes of KV cache does one
# token take?

# %% quiz="quiz-kv-bytes" key="2 * 24 * 4 * 64 * 2" points=0
q4_answer = 2 * 24 * 4 * 64 * 2
_obvious_wrong = [
    2 * 24 * 16 * 64 * 2,  # multi-head: all 16 heads
    24 * 4 * 64 * 2,  # keys only (forgot the values)
    2 * 24 * 4 * 64 * 4,  # float32
    2 * 24 * 4 * 64,
]  # forgot the bytes per value
assert all(abs(q4_answer - w) > 0.01 * q4_answer for w in _obvious_wrong)

# %% [markdown]
# **Q5 (optional, section 5; 0 points).** Grouped-query attention with 8 query heads and 4 key/value heads, grouped as in PyTorch's
# `enable_gqa=True`. Counting heads from 1, as lesson 6 does: which key/value head does query head 6 use?
#
# * **a** — head 1 &nbsp; **b** — head 2 &nbsp; **c** — head 3 &nbsp; **d** — head 4

# %% quiz="quiz-gqa-group" choices="abcd" key="c" points=0
q5_answer = "abcd"[(6 - 1) // (8 // 4)]  # query index 5 uses key/value index 5 // 2 = 2: key/value head 3
assert q5_answer != "abcd"[(6 - 1) % 4]  # the interleaved answer differs

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
# **Q8 (optional, section 4; 0 points).** In the traffic count of section 4 (one head, its block sizes), what happens to the number of
# values the tiled loop moves when the fast memory $M$ is doubled, for a long sequence?
#
# * **a** — it roughly halves
# * **b** — it roughly quarters
# * **c** — it stays the same: the loop reads every key and value anyway
# * **d** — it roughly doubles

# %% quiz="quiz-traffic-memory" choices="abcd" key="a" points=0

# %% [markdown]
# **Q9 (optional, section 5; 0 points).** In the uptraining experiment of section 5, what happened to the held-out loss of lesson 10's
# decoder when its four key/value heads were mean-pooled into one?
#
# * **a** — nothing: averaging the heads keeps everything the model knew
# * **b** — it rose right after pooling; a short uptraining won back more than half of the gap, but every seed stayed
#   behind the multi-head decoder it came from
# * **c** — it rose right after pooling, and uptraining made it rise further
# * **d** — it rose right after pooling, and a short uptraining brought every seed back to its multi-head decoder's
#   loss or below

# %% quiz="quiz-uptraining" choices="abcd" key="b" points=0

# %% [markdown]
# **Q10 — free answer (3 points, graded by hand).** A classmate says: "Tiled attention must be an approximation:
# each tile's softmax only sees $B$ keys, but the real softmax divides by a sum over all of them." In 4–6
# sentences, explain why tiled attention is nevertheless exact, using the running maximum, the running sum and the
# output accumulator; then say what it saves and what it does not save, citing a number you measured in this notebook.
#
# <details><summary>Before you hand in</summary>
#
# * Does your answer say what a tile computes, if not a softmax of its own?
# * Do you say why the correction when the maximum grows is a single multiplication, and which lesson's fact it
#   rests on?
# * Do you treat the output accumulator, not only the running sum?
# * Did you quote a number from **your** run (a memory peak of section 3 or 7), and say what tiling does not reduce?
# </details>

# %% [markdown] manual="quiz-free-exact-tiling" points=3
# ### BEGIN SOLUTION
# *Model answer.* No tile computes its own softmax: each tile only *updates* running quantities that are exactly
# the sums the real softmax needs. By lesson 4's shift invariance, $\sum_j e^{z_j}$ may be computed with any shift
# $c$; the running sum $\ell$ uses the running maximum $m$ as the shift, and whenever $m$ grows to $m'$, every old
# term is corrected at once by multiplying by $e^{m - m'}$. The unnormalised output $\tilde o = \sum_j e^{z_j - m} v_j$
# uses the same shift and gets the same factor. After the last key block, $m$ is the row's true maximum and $\ell$
# the true denominator, so $\tilde o/\ell = \sum_j \operatorname{softmax}(z)_j v_j$ exactly — the notebook measured
# differences around $10^{-16}$ to $10^{-15}$ against lesson 4 and PyTorch. What it saves is memory: the $T\times T$
# scores and weights are never stored, and the peak grew linearly in $T$: at $T = 2048$ the notebook printed
# 0.66 MiB for the tiled version against 96.0 MiB for plain attention returning only the output. It does not save
# arithmetic: without a mask every one of the $T^2$ dot products is still computed (causal masking skips the tiles
# above the diagonal, as plain attention could too).
#
# *Rubric (3 points).* 1 point: the sums are accumulated across tiles (no per-tile softmax), with the rescaling by
# $e^{m - m'}$ when the maximum grows, justified by shift invariance. 1 point: the output accumulator is rescaled
# the same way and divided by $\ell$ only at the end, so the result equals softmax$(S)V$ (rounding-level
# differences). 1 point: saves memory ($T^2$ → linear in $T$ / set by $B$), with a number measured in the notebook,
# and states that the number of dot products is not reduced. No point for restating the question.
# ### END SOLUTION
