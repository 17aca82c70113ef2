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
# # Lesson 3 — Why divide by $\sqrt{d_k}$?
#
# **Attention, from the dot product up** · lesson 3 · about 60 minutes
#
# In lesson 2 a query scored every key with a dot product (your `dot_scores`), and a softmax turned the
# scores into weights (your `soft_lookup`). That works with the short tag vectors of the video library.
# Real attention heads use queries and keys with more entries ($d_k = 64$ in the original Transformer), and
# dot products of longer vectors are larger: their spread grows like $\sqrt{d_k}$. Large scores make the
# softmax peaked, and that changes how a head learns, though not as simply as "the gradient vanishes".
# Measured at initialisation in this lesson (the median of 200 random heads): at $d_k = 64$ the softmax's
# derivative is less than half its size with scaling (0.13 against 0.30), yet the gradient that reaches the
# query weights $W^Q$ is 1.65 times *larger* without scaling; only from $d_k = 256$ on is it smaller. Measured
# in training: at $d_k = 1024$ an unscaled head starts with a loss of 53 (a uniform guess scores 2.08) and, at
# every learning rate tried, ends several times worse than the scaled head. The Transformer's fix is one division:
#
# $$\text{scores} = \frac{Q K^\top}{\sqrt{d_k}} .$$
#
# In this lesson you derive *why* the right divisor is $\sqrt{d_k}$ (not $d_k$, not the number of
# keys), measure it, and write the scaled scores for whole batches of queries and keys.
#
# **Learning goals.** By the end you can
# 1. derive $\operatorname{Var}(q\cdot k) = d_k\,\sigma^4$ for independent random vectors and confirm it by measurement;
# 2. explain how large scores saturate the softmax and why its derivative $p_i(1-p_i)$ then collapses;
# 3. implement `scaled_scores(Q, K)` for batched queries and keys;
# 4. measure with autograd the gradient that reaches $W^Q$, with and without scaling, and say for which head
#    sizes the division makes it smaller and for which larger;
# 5. say why dividing by $\sqrt{d_k}$ suits every head size at initialisation, and why dividing by $d_k$
#    would overdo it there (and where $1/d_k$ is used instead);
# 6. read a training experiment at several learning rates, explain why folding the factor into $W^Q$'s
#    initialisation (as T5 does) trains differently under the Adam optimiser, and say what μP's $1/d_k$ buys.
#
# **You need** from lesson 2: scores as dot products of one query with many keys, `Q @ K.T` for
# many queries at once, and the idea that a softmax turns scores into weights that sum to 1; the
# query's length acting as an inverse temperature. From `00_pytorch_primer`: tensors, autograd
# (`requires_grad`, `backward()`, `.grad`), which this lesson uses to measure gradients, and an optimiser step.
# In this lesson the softmax is PyTorch's `torch.softmax`; you write your own in lesson 4.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells say
# `# YOUR CODE HERE`: replace `raise NotImplementedError()` with your code. The cell after each
# exercise runs *visible checks*; when your work is graded, hidden checks with other shapes run too,
# so write general code. The **Validate** button runs every check at once.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. Dot products grow with $d_k$
#
# Take a query $q$ and a key $k$ with $d_k$ entries each. Before training, the entries are roughly
# independent random numbers with mean 0 and some variance $\sigma^2$ (that is what a standard
# initialisation gives). The score is a sum of $d_k$ products:
#
# $$q\cdot k = \sum_{i=1}^{d_k} q_i\,k_i .$$
#
# **One term.** Because $q_i$ and $k_i$ are independent with mean 0,
# $\mathbb{E}[q_i k_i] = \mathbb{E}[q_i]\,\mathbb{E}[k_i] = 0$, and
#
# $$\operatorname{Var}(q_i k_i) = \mathbb{E}[q_i^2 k_i^2] - \big(\mathbb{E}[q_i k_i]\big)^2
#   = \mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2] - 0 = \sigma^2\cdot\sigma^2 = \sigma^4 .$$
#
# **The sum.** The $d_k$ terms are independent of each other, and variances of independent terms add up:
#
# $$\boxed{\operatorname{Var}(q\cdot k) = d_k\,\sigma^4}, \qquad \text{standard deviation } \sigma^2\sqrt{d_k}.$$
#
# With unit-variance entries ($\sigma = 1$) the variance *is* $d_k$: a head with $d_k = 64$ produces
# scores that typically lie about $\pm 8$ from zero, a head with $d_k = 512$ about $\pm 23$. Nothing about
# the *meaning* of the match changed — only the size of the vectors.
#
# **The fix.** Dividing a random variable by a constant $c$ divides its variance by $c^2$. So
#
# $$\operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = \frac{d_k\,\sigma^4}{d_k} = \sigma^4 ,$$
#
# which no longer depends on $d_k$ (and is 1 for unit-variance entries). Dividing by $d_k$ instead would
# give $\sigma^4/d_k$: scores that *shrink* towards 0 as heads get bigger, so the softmax would flatten
# into a uniform average. For independent $q$ and $k$, as at initialisation, only a divisor that grows like
# $\sqrt{d_k}$ keeps the spread of the scores the same for every head size, and $\sqrt{d_k}$ itself makes that
# spread $\sigma^2$ (see the footnote below for trained, correlated $q$ and $k$).
#
# A quick check with a few thousand random pairs (the full experiment is in section 5):

# %%
rng = data.rng(0)
for dim in (4, 64, 512):  # d_k
    q = rng.standard_normal((4000, dim))
    k = rng.standard_normal((4000, dim))
    raw = (q * k).sum(axis=1)  # 4000 dot products q·k
    print(
        f"d_k = {dim:3d}: variance of q·k = {raw.var():7.1f} (theory {dim}),  "
        f"variance of q·k/√d_k = {(raw / np.sqrt(dim)).var():.3f} (theory 1)"
    )

# %% [markdown]
# **Footnote: after training.** The derivation assumed that $q$ and $k$ are independent, which holds at
# initialisation. Training makes them *correlated* on purpose: a query learns to point towards the keys
# it should find. If each entry $k_i$ shares a part $\rho$ of the matching $q_i$ (correlation $\rho$), then
# $\mathbb{E}[q\cdot k] = \rho\,\sigma^2 d_k$: the score grows like $d_k$, not like $\sqrt{d_k}$, and dividing by
# $\sqrt{d_k}$ no longer keeps it fixed: $q\cdot k/\sqrt{d_k}$ still grows like $\rho\sqrt{d_k}$, while $q\cdot k/d_k$
# stays at $\rho\sigma^2$. The cell below measures it with $\rho = 0.5$ and $\sigma = 1$. This is why the
# *maximal-update parametrisation* (μP; Yang et al., "Tensor Programs V", 2022), designed so that settings
# tuned on a narrow model carry over to wider ones, divides the scores by $d_k$ instead. The standard
# Transformer, and this course, divide by $\sqrt{d_k}$: the choice that is exact at initialisation.

# %%
rng = data.rng(3)
rho = 0.5
for dim in (4, 64, 512):  # d_k
    q = rng.standard_normal((4000, dim))
    k = rho * q + np.sqrt(1 - rho**2) * rng.standard_normal((4000, dim))  # correlation ρ with q, entry by entry
    raw = (q * k).sum(axis=1)
    print(
        f"d_k = {dim:3d}, ρ = {rho}: mean of q·k = {raw.mean():6.1f} (ρ·d_k = {rho * dim:5.1f});  "
        f"mean of q·k/√d_k = {(raw / np.sqrt(dim)).mean():5.2f};  mean of q·k/d_k = {(raw / dim).mean():.3f}"
    )


# %% [markdown]
# ## 2. Scaled scores for batches
#
# In practice we score many queries against many keys at once, and usually for several sentences
# (a batch) and several heads at the same time. Queries are stored as the rows of $Q$ and keys as the
# rows of $K$, with any number of leading *batch* axes:
#
# | array | shape | meaning |
# |---|---|---|
# | `Q` | `(..., T_q, d_k)` | $T_q$ queries of size $d_k$ |
# | `K` | `(..., T_k, d_k)` | $T_k$ keys of size $d_k$ |
# | scores | `(..., T_q, T_k)` | entry `[..., i, j]` is $q_i\cdot k_j/\sqrt{d_k}$ |
#
# `...` stands for the same batch axes in `Q` and `K` (none, or e.g. `(batch, heads)`).
#
# **Two numpy facts you need.**
# * `A @ B` on arrays with more than two axes multiplies the *last two* axes and keeps the leading ones
#   as a batch: `(2, 5, 16) @ (2, 16, 7) -> (2, 5, 7)`.
# * `K.T` reverses **all** axes: for `K` of shape `(2, 7, 16)` it gives `(16, 7, 2)`, which is not the
#   transpose of each batch entry.

# %% [markdown]
# ### Exercise 3.1 — `scaled_scores` (3 points)
#
# Implement `scaled_scores(Q, K)`: for inputs shaped as in the table (no batch axes, or any number of them),
# return the array of shape `(..., T_q, T_k)` whose entry `[..., i, j]` is query $i$'s dot product with key $j$,
# divided by $\sqrt{d_k}$. Here $d_k$ is the size of the arrays' **last** axis: read it from the arrays, not
# from a variable of the notebook. For float64 inputs, return float64 numbers: compute in the inputs' precision,
# without converting to float32 (the checks use float64 arrays and compare to many digits).
#
# <details><summary>Hint 1: the idea</summary>
#
# Entry `[..., i, j]` is a dot product of row $i$ of `Q` with row $j$ of `K`. A matrix product gives all of
# them at once if the keys stand as *columns* on its right: turn each batch entry of `K` on its side, and
# nothing else.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# For `K` of shape `(2, 7, 16)` the keys turned on their side have shape `(2, 16, 7)`: only the last two axes
# are exchanged. Then `(2, 5, 16) @ (2, 16, 7)` has the shape you want, `(2, 5, 7)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.swapaxes(K, -1, -2)` (or `K.swapaxes(-1, -2)`) exchanges only the last two axes of `K`, whatever comes
# before them; `Q.shape[-1]` is the size of the last axis; `np.sqrt` takes the square root.
# </details>


# %% answer="scaled-scores"
def scaled_scores(Q, K):
    """Scaled dot-product scores.

    Q: (..., T_q, d_k) queries
    K: (..., T_k, d_k) keys (same leading batch axes as Q)
    returns (..., T_q, T_k) with entry [..., i, j] = Q[..., i, :] · K[..., j, :] / sqrt(d_k)
    """
    ### BEGIN SOLUTION
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    ### END SOLUTION


# %% tests="scaled-scores-tests" points=3
# Visible checks: a worked example you can verify by hand (d_k = 4, so √d_k = 2), then batches.
def _mistakes(raw, T_q, T_k, d_k):  # what known mistakes return, from the raw dot products Q Kᵀ
    return {
        "the scores are not scaled: divide the dot products by √d_k.": raw,
        f"you divided by d_k ({d_k} here); divide by its square root √d_k.": raw / d_k,
        f"you divided by the number of keys ({T_k} here); divide by √d_k, the root of the vectors' size.": raw / T_k,
        f"you divided by √T_k, the root of the number of keys (√{T_k} here); divide by √d_k.": raw / T_k**0.5,
        f"you divided by √T_q, the root of the number of queries (√{T_q} here); d_k is the LAST axis.": raw / T_q**0.5,
        "you divided by d_k / 2; divide by √d_k.": raw / (d_k / 2),
        "rows and columns are swapped (you computed K Qᵀ): return one row per query.": raw.swapaxes(-1, -2) / d_k**0.5,
    }


def _batched(Q, K):  # your scaled_scores on copies (whether it changes its inputs is not graded)
    try:
        return scaled_scores(Q.copy(), K.copy())
    except (ValueError, RuntimeError, IndexError) as error:
        raise AssertionError(
            f"scaled_scores failed on Q {Q.shape}, K {K.shape}: {type(error).__name__}: {error}. With batch axes, K.T "
            "reverses ALL axes: swap only the last two (np.swapaxes(K, -1, -2))."
        ) from None


_Q = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, -1.0]])  # T_q = 2 queries
_K = np.array([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])  # T_k = 3 keys
_raw = np.array([[4.0, 2.0, 1.0], [0.0, 0.0, 1.0]])  # Q Kᵀ by hand; the answer is _raw / √4
_got = checks.call(scaled_scores, _Q, _K)
checks.expect_close(_got, _raw / 2, "scaled_scores, worked example", mistakes=_mistakes(_raw, 2, 3, 4))
_f64 = "compute in the inputs' precision: do not convert to float32 (torch.tensor(..., dtype=torch.float32))."
checks.expect_float64(_got, "scaled_scores of float64 inputs (worked example)", _f64)
_rng = np.random.default_rng(0)
for _batch in [(2,), (2, 3)]:
    _Qb, _Kb = _rng.standard_normal(_batch + (5, 8)), _rng.standard_normal(_batch + (7, 8))
    _out = _batched(_Qb, _Kb)
    checks.expect_shape(_out, _batch + (5, 7), f"scaled_scores for batch axes {_batch} with T_q = 5, T_k = 7, d_k = 8")
    for _b in np.ndindex(*_batch):  # each batch entry must equal the unbatched result
        _one = scaled_scores(_Qb[_b].copy(), _Kb[_b].copy())
        checks.expect_close(_out[_b], _one, f"scaled_scores, batch entry {_b} vs unbatched")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(31)  # sizes all distinct; d_k = 16: √16 = 4 differs from 16 / 2 = 8
for _batch, _T_q, _T_k, _d in [
    ((), 5, 7, 16),
    ((3,), 5, 7, 16),
    ((2, 3), 5, 7, 16),
    ((4,), 1, 1, 9),
    ((2, 2, 3), 6, 4, 25),
    ((3,), 4, 6, 10),  # √10 is not a whole number
]:
    _Qb, _Kb = _rng.standard_normal((*_batch, _T_q, _d)), _rng.standard_normal((*_batch, _T_k, _d))
    _raw = torch.matmul(torch.from_numpy(_Qb), torch.from_numpy(_Kb).transpose(-1, -2)).numpy()  # reference
    _wrong = _mistakes(_raw, _T_q, _T_k, _d)
    _wrong["d_k was read from the first axis (len(Q)); use the last one, Q.shape[-1]."] = _raw / len(_Qb) ** 0.5
    _wrong["√d_k was rounded to a whole number: divide by the exact square root."] = _raw / int(_d**0.5)
    _what = f"scaled_scores for Q {_Qb.shape} and K {_Kb.shape}"
    _out = _batched(_Qb, _Kb)
    checks.expect_close(_out, _raw / _d**0.5, _what, mistakes=_wrong)
    checks.expect_float64(_out, _what, _f64)
### END HIDDEN TESTS
checks.passed("scaled_scores")

# %% [markdown]
# With your function, the measurement of section 1 for a whole batch: the spread of the scaled
# scores no longer depends on $d_k$.

# %%
with ac.student_code("scaled_scores"):
    rng = data.rng(1)
    for dim in (4, 64, 512):  # d_k
        Q, K = rng.standard_normal((8, 10, dim)), rng.standard_normal((8, 12, dim))  # 8 sentences
        S = scaled_scores(Q, K)  # (8, 10, 12)
        print(f"d_k = {dim:3d}: scores {S.shape}, standard deviation {S.std():.2f}")

# %% [markdown]
# ## 3. What large scores do to the softmax
#
# Attention turns the scores $z_1,\dots,z_n$ of one query into weights with the softmax
#
# $$p_i = \frac{e^{z_i}}{\sum_j e^{z_j}} .$$
#
# The exponential turns *differences* of scores into *ratios* of weights: $p_i/p_j = e^{z_i - z_j}$.
# A difference of 2 is a ratio of about 7; a difference of 20 is a ratio of about 500 million. So when
# the scores are spread by $\sqrt{d_k}\approx 23$ (for $d_k = 512$), the top key takes almost all the
# weight and every other key gets practically none. The cell below scores one random query against
# 8 random keys, without and with scaling.

# %%
rng = data.rng(2)
for dim in (4, 64, 512):  # d_k
    q, K = torch.from_numpy(rng.standard_normal(dim)), torch.from_numpy(rng.standard_normal((8, dim)))
    raw = K @ q
    p_raw, p_scaled = torch.softmax(raw, dim=0), torch.softmax(raw / dim**0.5, dim=0)
    print(
        f"d_k = {dim:3d}: largest weight {p_raw.max():.4f} unscaled, {p_scaled.max():.4f} scaled "
        f"(spread of the raw scores: {raw.std():.1f})"
    )

# %% [markdown]
# ### The derivative of the softmax
#
# Training adjusts the scores through the derivative of the weights with respect to the scores.
# Differentiating $p_i = e^{z_i}/\sum_j e^{z_j}$ with the quotient rule gives
#
# $$\frac{\partial p_i}{\partial z_j} = p_i\,(\delta_{ij} - p_j), \qquad\text{in particular}\qquad
#   \frac{\partial p_i}{\partial z_i} = p_i\,(1 - p_i).$$
#
# Here $\delta_{ij}$ is 1 if $i = j$ and 0 otherwise. Since $p_i(1-p_i)$ is largest at $p_i = \tfrac12$,
# $\partial p_i/\partial z_i \le \tfrac14$ **always**. And when the softmax is *saturated* — one
# $p_i \approx 1$, the others $\approx 0$ — every entry of the derivative is near 0: for the winner
# $p_i(1-p_i)\approx 1\cdot 0$, for the losers $p_j(\ldots)\approx 0$. Section 5 measures what this does to
# the gradient that reaches $W^Q$.
#
# Let us check the formula with PyTorch's autograd (see `00_pytorch_primer`) on two keys with scores
# $(s, 0)$: here $p_1 = 1/(1+e^{-s})$. `torch.autograd.grad(y, z)` returns $\partial y/\partial z$ directly
# (instead of storing it in `z.grad` as `y.backward()` does).

# %%
s = torch.linspace(-12, 12, 241, dtype=torch.float64)
z = torch.stack([s, torch.zeros_like(s)], dim=1).requires_grad_(True)  # 241 score pairs (s, 0)
p1 = torch.softmax(z, dim=1)[:, 0]
(dp1_dz,) = torch.autograd.grad(p1.sum(), z)  # rows are independent
slope = dp1_dz[:, 0].detach()
i_max = int(slope.argmax())
at_10 = float(slope[s == 10])

fig, ax = plt.subplots(figsize=(6.4, 3.4))
ax.plot(s, p1.detach(), color=plots.color("other"), lw=2, label="weight $p_1$", zorder=2.5)  # over the wide band
ax.plot(s, slope, color=plots.color("other2"), lw=4, alpha=0.6, label=r"$\partial p_1/\partial z_1$ (autograd)")
ax.plot(s, (p1 * (1 - p1)).detach(), ":", color=plots.color("theory"), lw=1.5, label="formula $p_1(1-p_1)$", zorder=3)
ax.set_xlabel("score difference s = z_1 − z_2")
ax.set_ylabel("value")
ax.set_title(f"Two keys, scores (s, 0): the slope peaks at {float(slope[i_max]):.2f} and is near 0 once |s| > 10")
ax.legend()
plots.show(
    fig,
    name="03_two_key_gradient",
    alt=(
        f"The slope of the weight peaks at {float(slope[i_max]):.2f} where the two scores are equal and is near 0 "
        "once |s| > 10. "
        f"Line chart over the score difference s from −12 to 12: the weight p_1 rises from 0 to 1 like an S; its "
        f"derivative by autograd, which lies on top of the dotted curve p_1(1 − p_1), is a bump with its peak "
        f"{float(slope[i_max]):.2f} at s = 0 and falls to {at_10:.1e} at s = 10."
    ),
)
print(
    f"autograd matches p(1−p) to {float((slope - p1 * (1 - p1)).abs().max()):.1e}; the largest slope is "
    f"{float(slope[i_max]):.4f} at s = {round(float(s[i_max]), 6) + 0.0:.1f}; at s = 10 it is only {at_10:.1e}."
)

# %% [markdown]
# ## 4. Explore: the $d_k$ slider
#
# The explorer draws 64 random queries and 12 random keys with $d_k$ entries each (unit variance)
# and shows, unscaled beside scaled (the scaled scores come from **your** `scaled_scores`):
# * left: the distribution of all $64\times 12$ scores, unscaled as a filled area, scaled as an outline (scores
#   beyond ±100 are counted in the outermost bars);
# * right: for each of the 64 queries, the largest of its 12 attention weights, sorted from the least to
#   the most peaked. A largest weight near 1 means one-hot; $1/12 \approx 0.083$ means uniform. The
#   dotted vertical line marks the median query.
#
# Move the $d_k$ slider from 1 to 1024. Which distribution widens, and what happens to the weights?

# %%
DIMS = [2**i for i in range(11)]
N_QUERIES, N_KEYS = 64, 12
EDGES = np.linspace(-100, 100, 101)  # bins of width 2


def explorer_scores(d_k):
    """The explorer's 64 queries against its 12 keys: unscaled scores and your scaled ones."""
    rng = data.rng(5)
    Q, K = rng.standard_normal((N_QUERIES, d_k)), rng.standard_normal((N_KEYS, d_k))
    return Q @ K.T, np.asarray(scaled_scores(Q, K), dtype=float)  # yours


def largest_weights(scores):
    """The largest attention weight of each query (row), sorted."""
    return np.sort(torch.softmax(torch.from_numpy(scores), dim=-1).max(dim=-1).values.numpy())


class ScalingView(widgets.View):
    """Histogram of unscaled and scaled scores; sorted largest weight of each query."""

    def build(self, d_k):
        fig = plt.figure(figsize=(6.5, 4.2), layout="constrained")
        grid = fig.add_gridspec(2, 2)
        ax_raw, ax2 = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[:, 1])
        ax_scaled = fig.add_subplot(grid[1, 0], sharex=ax_raw, sharey=ax_raw)
        zeros = np.zeros(len(EDGES) - 1)
        # one histogram per axes: they never hide each other, even where they coincide (d_k = 1)
        self.raw_hist = ax_raw.stairs(zeros, EDGES, fill=True, color=plots.color("unscaled"), lw=0)
        self.scaled_hist = ax_scaled.stairs(zeros, EDGES, fill=True, color=plots.color("scaled"), lw=0)
        ax_raw.set_xlim(EDGES[0], EDGES[-1])
        ax_raw.set_ylim(0, 0.55)  # the peak bar is at most 0.49 (at d_k = 1)
        ax_raw.tick_params(labelbottom=False)
        ax_scaled.set_xlabel("score")
        for ax in (ax_raw, ax_scaled):
            ax.set_ylabel("share of\nthe 768 scores")
        ax_raw.set_title("unscaled $QK^T$:\nspreads with $d_k$")
        ax_scaled.set_title(r"scaled $QK^T/\sqrt{d_k}$ (yours):" "\nthe same spread at every $d_k$")
        ranks = np.arange(1, N_QUERIES + 1)
        # a wide dashed unscaled line under a narrow scaled one: where they coincide (d_k = 1) both still show
        (self.raw_line,) = ax2.plot(
            ranks, np.zeros(N_QUERIES), "--", color=plots.color("unscaled"), lw=3.5, label="unscaled"
        )
        (self.scaled_line,) = ax2.plot(
            ranks, np.zeros(N_QUERIES), "-", color=plots.color("scaled"), lw=1.8, label="scaled (yours)"
        )
        ax2.axhline(1 / N_KEYS, color=plots.color("chance"), lw=1, ls=":")
        ax2.axvline((N_QUERIES + 1) / 2, color=plots.color("chance"), lw=1, ls=":")
        ax2.text(2, 1 / N_KEYS + 0.02, "uniform, 1/12", fontsize=9, color=plots.TEXT)
        ax2.text((N_QUERIES + 1) / 2 + 1, 0.02, "median query", fontsize=9, color=plots.TEXT)
        ax2.set_xlim(1, N_QUERIES)
        ax2.set_ylim(0, 1.03)
        ax2.set_xlabel("query (sorted by its largest weight)")
        ax2.set_ylabel("largest of its 12 weights")
        ax2.set_title("Largest weight of each query:\nunscaled climbs towards one-hot")
        # under the figure: inside the axes the rising unscaled curve ran through the legend
        fig.legend(handles=[self.raw_line, self.scaled_line], loc="outside lower center", ncols=2)
        self.dynamic = [self.raw_hist, self.scaled_hist, self.raw_line, self.scaled_line]
        return fig

    def update(self, d_k):
        raw, scaled = explorer_scores(d_k)
        for hist, scores in ((self.raw_hist, raw), (self.scaled_hist, scaled)):
            hist.set_data(np.histogram(np.clip(scores, EDGES[0], EDGES[-1]), EDGES)[0] / scores.size)
        self.top_raw, self.top_scaled = largest_weights(raw), largest_weights(scaled)
        self.raw_line.set_ydata(self.top_raw)
        self.scaled_line.set_ydata(self.top_scaled)
        self.std_raw, self.std_scaled = raw.std(), scaled.std()

    def alt(self, d_k):
        if d_k == 1:
            finding = "At d_k = 1 scaling changes nothing: both histograms and both curves are the same"
        else:
            finding = (
                f"At d_k = {d_k} the unscaled scores spread {self.std_raw / self.std_scaled:.0f} times as wide as "
                f"your scaled ones, and the median query's largest weight is {np.median(self.top_raw):.2f} unscaled "
                f"against {np.median(self.top_scaled):.2f} scaled"
            )
        return (
            f"{finding}. Left: histograms of the 768 scores at d_k = {d_k}, unscaled above, scaled below; the unscaled scores have standard deviation "
            f"{self.std_raw:.1f}, your scaled scores {self.std_scaled:.2f}. Right: the largest weight of each of "
            f"64 queries, sorted; median {np.median(self.top_raw):.3f} unscaled (from {self.top_raw[0]:.2f} to "
            f"{self.top_raw[-1]:.2f}) and {np.median(self.top_scaled):.3f} scaled (from {self.top_scaled[0]:.2f} "
            f"to {self.top_scaled[-1]:.2f})."
        )


widgets.explore(ScalingView(), needs=["scaled_scores"], d_k=widgets.choice_slider("d_k", DIMS, 64))

# %% [markdown]
# The same 64 queries and 12 keys for every $d_k$ of the slider, in numbers (the scaled scores are yours):

# %%
with ac.student_code("scaled_scores"):
    print(
        f"{'d_k':>5}  {'std of the scores':>22}   {'median largest weight':>22}   "
        f"{'least peaked':>12}   {'most peaked':>11}   {'queries with':>14}"
    )
    print(
        f"{'':>5}  {'unscaled':>10} {'scaled':>11}   {'unscaled':>10} {'scaled':>11}   {'unscaled':>12}   "
        f"{'scaled':>11}   {'> 0.9 unscaled':>14}"
    )
    explorer_table = {}  # d_k -> the row printed below
    for dim in DIMS:
        raw, scaled = explorer_scores(dim)
        top_raw, top_scaled = largest_weights(raw), largest_weights(scaled)
        row = explorer_table[dim] = {
            "std": (raw.std(), scaled.std()),
            "median": (np.median(top_raw), np.median(top_scaled)),
            "least peaked unscaled": top_raw[0],
            "most peaked scaled": top_scaled[-1],
        }
        print(
            f"{dim:5d}  {raw.std():10.1f} {scaled.std():11.2f}   {row['median'][0]:10.3f} {row['median'][1]:11.3f}   "
            f"{top_raw[0]:12.3f}   {top_scaled[-1]:11.3f}   {np.mean(top_raw > 0.9):14.0%}"
        )
    one_hot_from = next(d for d in DIMS if all(explorer_table[e]["median"][0] > 0.95 for e in DIMS if e >= d))
    medians_scaled = [explorer_table[d]["median"][1] for d in DIMS]
    print(
        f"\nFrom d_k = {one_hot_from} on, the median unscaled query puts more than 0.95 of its weight on one key; "
        f"the scaled median stays between {min(medians_scaled):.2f} and {max(medians_scaled):.2f} for every d_k."
    )

# %% [markdown]
# **Things to try.** At $d_k = 1$ both pictures coincide, as $\sqrt 1 = 1$. As $d_k$ grows, the unscaled
# scores spread out (standard deviation 0.7 at $d_k = 1$, 32.6 at $d_k = 1024$) while the scaled ones keep a
# standard deviation between 0.66 and 1.16 (table). On the right, the unscaled curve climbs towards 1: from
# $d_k = 64$ on, the *median* query puts more than 0.95 of its weight on a single key, while the scaled
# median stays between 0.19 and 0.28 at every $d_k$. That is the point of the division. Single queries
# scatter around these medians. At $d_k = 1024$, for example, the least peaked unscaled query keeps its
# largest weight at 0.51 (two keys nearly tied), and the most peaked scaled query reaches 0.72; over all
# $d_k$ of the table, the most peaked scaled query reaches 0.84 (at $d_k = 32$). So judge by the whole curve,
# not by one query.

# %% [markdown]
# ## 5. Experiment: variance and gradient against $d_k$
#
# Sections 1 and 3 made two claims. Here both are measured for $d_k = 1, 2, 4, \dots, 1024$, at
# initialisation (before any training):
# 1. the variance of $q\cdot k$ is $d_k\sigma^4$;
# 2. without scaling the softmax saturates, and this changes the gradient that learning receives.
#
# ### 5.1 The variance of the scores
#
# For each $d_k$, 4,000 random pairs $(q, k)$ with $\sigma = 1$, and 4,000 with $\sigma = 0.5$ (where theory
# says $d_k/16$); and the variance of the scaled score $q\cdot k/\sqrt{d_k}$.

# %%
dims = [2**i for i in range(11)]
gen = torch.Generator().manual_seed(0)


def measured_variance(d_k, sigma, n=4000):
    q = sigma * torch.randn(n, d_k, generator=gen)
    k = sigma * torch.randn(n, d_k, generator=gen)
    return float((q * k).sum(1).double().var())


var_1 = [measured_variance(d, 1.0) for d in dims]
var_half = [measured_variance(d, 0.5) for d in dims]
var_scaled = [v / d for v, d in zip(var_1, dims)]  # the same σ = 1 scores divided by √d_k: Var(x/√d) = Var(x)/d
worst = max(abs(v / d - 1) for v, d in zip(var_1, dims))
i512 = dims.index(512)

fig, ax = plt.subplots(figsize=(6.6, 4.0))
ax.loglog(dims, dims, "-", color=plots.color("theory"), lw=1, label="theory: $d_k$")
ax.loglog(dims, var_1, "o", color=plots.color("unscaled"), label=r"measured Var$(q\cdot k)$, $\sigma = 1$")
ax.loglog(dims, np.array(dims) / 16, "--", color=plots.color("theory"), lw=1, label=r"theory: $\sigma^4 d_k = d_k/16$")
ax.loglog(
    dims, var_half, "s", color=plots.color("unscaled"), mfc="none", label=r"measured Var$(q\cdot k)$, $\sigma = 0.5$"
)
ax.loglog(
    dims, var_scaled, "^", color=plots.color("scaled"), label=r"measured Var$(q\cdot k/\sqrt{d_k})$, $\sigma = 1$"
)
ax.set_xscale("log", base=2)
ax.set_xlabel("$d_k$")
ax.set_ylabel("variance of the score")
ax.set_title("The variance of $q\\cdot k$ grows like $d_k$; divided by $\\sqrt{d_k}$ it stays near 1")
ax.legend(fontsize=9)
plots.show(
    fig,
    name="03_variance_vs_dk",
    alt=(
        "The variance of q·k grows like d_k, while divided by √d_k it stays near 1. "
        f"Log-log chart of the variance of dot-product scores against d_k from 1 to 1024. The measured variance "
        f"for σ = 1 lies on the line d_k (within {100 * worst:.1f}%; {var_1[i512]:.0f} at d_k = 512), the one for "
        f"σ = 0.5 on the line d_k/16 ({var_half[i512]:.1f} at 512), and the variance of the scaled score stays "
        f"flat between {min(var_scaled):.2f} and {max(var_scaled):.2f}."
    ),
)

print(
    f"σ = 1: at d_k = 512 the measured variance is {var_1[i512]:.1f} (theory 512); over all d_k the "
    f"measurement is within {100 * worst:.1f}% of d_k."
)
print(f"σ = 0.5: at d_k = 512 it is {var_half[i512]:.2f} (theory σ⁴·d_k = {512 / 16:.0f}).")
print(
    f"scaled: the variance of q·k/√d_k stays between {min(var_scaled):.2f} and {max(var_scaled):.2f} for d_k = 1 … 1024."
)

# %% [markdown]
# The measured variance follows the line $d_k$ (and $d_k/16$ for $\sigma = 0.5$) over three orders of
# magnitude, while the scaled scores keep a variance near 1: the derivation of section 1 holds.
#
# ### 5.2 The gradient at initialisation
#
# **The set-up.** For each $d_k$ we build 200 independent heads. Each has one query token $x$ with 16
# unit-variance entries, a freshly initialised $W^Q$ ($16\times d_k$, entries of variance $1/16$, so that
# $q = xW^Q$ has unit-variance entries) and its own 16 random keys. The softmax's input is $z_j = q\cdot k_j$
# without scaling and $z_j = q\cdot k_j/\sqrt{d_k}$ with it. A gradient needs a loss; we use a stand-in,
# $L = \sum_j u_j p_j$ with fixed random numbers $u_j$ (any loss of the attention output reaches the weights
# this way: $u_j$ plays the role of $\partial L/\partial p_j$).
#
# **Three measurements, each one step further back from the loss towards the weights** (the median over the
# 200 heads):
# * **(a)** how peaked the weights are: the largest weight $\max_j p_j$;
# * **(b)** how much the softmax passes back: the size of its derivative $\partial p/\partial z$ (the
#   Frobenius norm of the $16\times16$ matrix of section 3);
# * **(c)** how much reaches the parameters: the size of $\partial L/\partial W^Q$, by autograd; also its 90th
#   percentile over the heads. Panel (d) divides the unscaled median by the scaled one.

# %%
n_heads, n_keys, d_model = 200, 16, 16
gen_heads = torch.Generator().manual_seed(1)
top, grad_WQ, inputs = {}, {}, {}  # per setting: one entry per d_k
for dim in dims:  # d_k
    x = torch.randn(n_heads, 1, d_model, generator=gen_heads, dtype=torch.float64)  # one query token per head
    W_Q_init = torch.randn(n_heads, d_model, dim, generator=gen_heads, dtype=torch.float64) / d_model**0.5
    K = torch.randn(n_heads, n_keys, dim, generator=gen_heads, dtype=torch.float64)  # each head's 16 keys
    u = torch.randn(n_heads, n_keys, generator=gen_heads, dtype=torch.float64)  # ∂L/∂p
    for setting, divisor in (("unscaled", 1.0), ("scaled", dim**0.5)):
        W_Q = W_Q_init.clone().requires_grad_(True)
        z = (x @ W_Q @ K.transpose(-1, -2))[:, 0] / divisor  # (n_heads, n_keys): the softmax's input
        p = torch.softmax(z, dim=-1)
        L = (p * u).sum()  # the heads' losses, added up
        L.backward()  # each head's slice of W_Q.grad is its own ∂L/∂W^Q
        size = W_Q.grad.flatten(1).norm(dim=1)  # ‖∂L/∂W^Q‖ of each head
        if (setting, dim) == ("unscaled", 512):  # which heads get the large gradients?
            best_two = z.detach().topk(2, dim=-1).values
            gap_512, size_512 = best_two[:, 0] - best_two[:, 1], size.detach()
        top.setdefault(setting, []).append(float(p.detach().max(dim=-1).values.median()))
        grad_WQ.setdefault(setting, []).append((float(size.median()), float(size.quantile(0.9))))
        inputs.setdefault(setting, []).append(z.detach())

# (b) ∂p/∂z for every head, setting and d_k at once: z is a new leaf, one autograd call per row of the 16×16 matrix
z = torch.stack([torch.stack(inputs[setting]) for setting in ("unscaled", "scaled")]).requires_grad_(True)
p = torch.softmax(z, dim=-1)  # (2, len(dims), n_heads, n_keys)
squares = torch.zeros(z.shape[:-1], dtype=torch.float64)
for i in range(n_keys):
    (row,) = torch.autograd.grad(p[..., i].sum(), z, retain_graph=True)  # row i of ∂p/∂z, for every head at once
    squares += (row**2).sum(-1)
medians = squares.sqrt().median(dim=-1).values  # median ‖∂p/∂z‖_F: (2, len(dims))
jacobian = {"unscaled": medians[0].numpy(), "scaled": medians[1].numpy()}
median_W = {s: np.array([m for m, _ in grad_WQ[s]]) for s in grad_WQ}
p90_W = {s: np.array([q for _, q in grad_WQ[s]]) for s in grad_WQ}
ratio_W = median_W["unscaled"] / median_W["scaled"]  # > 1: the unscaled head gets the larger gradient
smaller_from = next(d for i, d in enumerate(dims) if all(ratio_W[i:] < 1))
i64 = dims.index(64)

STYLE = {"unscaled": ("o", "--", "unscaled $QK^T$"), "scaled": ("s", "-", r"scaled $QK^T/\sqrt{d_k}$")}
fig, axes = plt.subplots(2, 2, figsize=(6.5, 6.4), sharex=True, layout="constrained")
(ax_a, ax_b), (ax_c, ax_d) = axes
for setting in ("unscaled", "scaled"):
    marker, dash, label = STYLE[setting]
    style = dict(marker=marker, ls=dash, color=plots.color(setting), label=label)
    ax_a.plot(dims, top[setting], **style)
    ax_b.plot(dims, jacobian[setting], **style)
    ax_c.plot(dims, median_W[setting], **{**style, "label": f"{setting}, median"})
    ax_c.plot(dims, p90_W[setting], **{**style, "ls": ":", "mfc": "none", "label": f"{setting}, 90th percentile"})
ax_d.plot(dims, ratio_W, "o-", color=plots.color("unscaled"))
ax_d.axhline(1, color=plots.color("theory"), lw=1)
ax_d.text(1, 0.003, "above the line: larger\nwithout scaling;\nbelow it: smaller", fontsize=9, color=plots.TEXT)
for ax in axes.flat:
    ax.set_xscale("log")
    ax.set_xticks([1, 4, 16, 64, 256, 1024], ["1", "4", "16", "64", "256", "1024"])  # numbers, not powers of 2
    ax.xaxis.set_minor_locator(plt.NullLocator())
for ax in axes[1]:
    ax.set_xlabel("$d_k$")
for ax in (ax_b, ax_c, ax_d):
    ax.set_yscale("log")
ax_a.set_ylim(0, 1.05)
ax_a.set_ylabel("median largest weight")
ax_a.set_title("(a) unscaled weights\nbecome one-hot")
ax_b.set_ylabel(r"median $\|\partial p/\partial z\|_F$")
ax_b.set_title("(b) the softmax passes back\nless and less")
ax_c.set_ylabel(r"$\|\partial L/\partial W^Q\|_F$")
ax_c.set_title("(c) what reaches $W^Q$\n(autograd)")
ax_d.set_ylabel("median unscaled / median scaled")
RATIO_TICKS = [0.001, 0.01, 0.1, 1, 3]  # the ratio axis: labelled on both sides of 1
ax_d.set_yticks(RATIO_TICKS, [f"{t:g}" for t in RATIO_TICKS])
ax_d.yaxis.set_minor_formatter(plt.NullFormatter())
ax_d.set_title(f"(d) (c)'s ratio drops below 1\nfrom $d_k = {smaller_from}$")
ax_a.legend()
ax_c.set_ylim(bottom=ax_c.get_ylim()[0] / 8)  # room under the curves: the legend covered the line from 256 to 512
ax_c.legend(loc="lower left", fontsize=9)
plots.show(
    fig,
    name="03_softmax_gradient_vs_dk",
    alt=(
        "Without scaling, the weights become one-hot and the gradient reaching W^Q collapses as d_k grows (smaller "
        f"than with scaling from d_k = {smaller_from} on); with scaling all of them stay flat. "
        f"Four charts against d_k from 1 to 1024, 200 heads each, unscaled in vermilion (dashed) and scaled in blue. "
        f"(a) Median largest weight: unscaled rises to {top['unscaled'][i512]:.3f} at d_k = 512, scaled stays near "
        f"{np.median(top['scaled']):.2f}. (b) Median size of the softmax derivative: unscaled {jacobian['unscaled'][i64]:.2f} "
        f"at d_k = 64 and {jacobian['unscaled'][i512]:.1e} at 512, scaled near {np.median(jacobian['scaled']):.2f}. "
        f"(c) Size of the gradient reaching W^Q: the scaled median stays between {median_W['scaled'].min():.2f} and "
        f"{median_W['scaled'].max():.2f}; the unscaled 90th percentile stays above the scaled one. (d) The ratio of "
        f"the medians is {ratio_W[i64]:.2f} at d_k = 64, below 1 from d_k = {smaller_from}, and "
        f"{ratio_W[i512]:.3f} at 512."
    ),
)

print(f"{'':5} {'(a) largest weight':>20} {'(b) ‖∂p/∂z‖':>20} {'(c) ‖∂L/∂W^Q‖, median':>30} {'90th percentile':>18}")
print(f"{'d_k':>5} {'unscaled':>10}{'scaled':>10} {'unscaled':>10}{'scaled':>10} {'unscaled':>10}{'scaled':>10}{'ratio':>10} "
      f"{'unscaled':>9}{'scaled':>9}")  # fmt: skip
for i, dim in enumerate(dims):
    print(
        f"{dim:5d} {top['unscaled'][i]:10.3f}{top['scaled'][i]:10.3f} {jacobian['unscaled'][i]:10.3g}"
        f"{jacobian['scaled'][i]:10.2f} {median_W['unscaled'][i]:10.3f}{median_W['scaled'][i]:10.3f}{ratio_W[i]:10.3g} "
        f"{p90_W['unscaled'][i]:9.2f}{p90_W['scaled'][i]:9.2f}"
    )
largest_tenth = size_512 >= size_512.quantile(0.9)
gap_all, gap_top = float(gap_512.median()), float(gap_512[largest_tenth].median())
print(
    f"\nAt d_k = 512 without scaling, the gap between a head's two best scores has a median of {gap_all:.1f} over "
    f"all heads, but of {gap_top:.2f} over the tenth of heads with the largest gradients: near-ties."
)
drop_b = jacobian["scaled"][i512] / jacobian["unscaled"][i512]  # how much (b) shrinks without scaling at 512
print(
    f"At d_k = 512, (b) is {drop_b:.0f} times smaller without scaling, (c) only {1 / ratio_W[i512]:.0f} times: "
    f"a gap of {drop_b * ratio_W[i512]:.0f}, of the order of √512 = {512**0.5:.1f}."
)

# %% [markdown]
# **Reading the figure, panel by panel** (every number is in the table).
#
# **(a) and (b): the softmax saturates.** Without scaling, the median largest weight climbs to 1.000 at
# $d_k = 512$, and the softmax's derivative shrinks with it: at $d_k = 64$ it is 0.13 against 0.30 with
# scaling, at $d_k = 512$ it is 0.0003. With scaling, neither changes much with $d_k$.
#
# **(c) and (d): what reaches $W^Q$ is not (b).** By the chain rule the gradient reaching the query is
# $\partial L/\partial q = \sum_j (\partial L/\partial z_j)\,\partial z_j/\partial q$, and $\partial z_j/\partial q$ is
# $k_j$ without scaling but $k_j/\sqrt{d_k}$ with it. So for the same softmax derivative, the gradient reaching
# $q$ is $\sqrt{d_k}$ times larger without scaling, and this factor competes with the saturation of (b):
# * for small heads the factor wins: at $d_k = 64$ the median unscaled gradient is 1.65 times the scaled one;
# * from $d_k = 256$ on the saturation wins: at $d_k = 512$ the median unscaled gradient is 75 times smaller.
#   That is far less than the 1000-fold drop of (b); the gap, 13-fold, is of the order of the chain rule's
#   factor $\sqrt{512} \approx 22.6$.
#
# The dotted lines of (c) show a second effect: without scaling the gradient is *uneven* across heads. At
# $d_k = 512$ its 90th percentile (20.4) is 12 times the scaled one (1.7), while the median head gets almost
# nothing. The last line of the printout says which heads get the large gradients: those whose two best scores
# nearly tie (a gap of 0.94 against 8.7 for all heads).
#
# **In one sentence:** at initialisation the division by $\sqrt{d_k}$ does not simply make gradients larger;
# it makes their size nearly the same for every head size, and similar across heads. Whether that matters once
# training starts is the next experiment.

# %% [markdown]
# ## 6. Experiment: scaling in training
#
# Everything so far was measured at initialisation. A fair question: does it matter once training starts?
# After all, the division is a constant, and a network could learn to make $W^Q$ smaller by itself, or the
# constant could be folded into $W^Q$'s starting values. T5, a well-known Transformer, does exactly that: it does
# not divide the scores, and initialises $W^Q$ with entries $\sqrt{d_k}$ times smaller instead. So we train.
#
# **The task: a 1-of-8 lookup.** Each example has 8 random key vectors $x_1, \dots, x_8$ with 16 entries, and
# a query that is a rotated, noisy copy of one of them: $x_q = R\,x_t + \text{noise}$, with a fixed hidden
# rotation $R$ and noise of standard deviation 0.5. One attention head scores the query against the keys,
# $z_j = (x_q W^Q)\cdot(x_j W^K)/c$, and is trained to put its weight on the right key: the loss is the
# cross-entropy $-\log p_t$. To succeed, $W^Q$ and $W^K$ must learn the hidden rotation. A uniform guess
# scores $\ln 8 = 2.08$.
#
# **Four variants**, identical except for where the factor $\sqrt{d_k}$ sits:
#
# | variant | the scores are divided by $c =$ | $W^Q$ starts with entries of standard deviation |
# |---|---|---|
# | scaled (the Transformer) | $\sqrt{d_k}$ | $1/4$ (so the entries of $q$ and $k$ have variance about 1) |
# | unscaled | 1 | $1/4$ |
# | $1/d_k$ (μP, section 1's footnote) | $d_k$ | $1/4$ |
# | T5 | 1 | $1/(4\sqrt{d_k})$ |
#
# $W^K$ starts with entries of standard deviation $1/4$ in every variant. (Exactly: on average over the draws of
# the weights, the entries of $k$ have variance 1, those of $q$ 1.25, the noise adding $0.5^2$.)
# Within a seed every variant starts from the same random draw, so at step 0 the T5 head's scores *are* the
# scaled head's scores. Each variant is trained at $d_k = 16, 64, 256, 1024$ with 3 seeds and the same optimiser
# (Adam, the usual choice for Transformers, written out below as `adam_step`), for 120 steps of 32 examples, at
# three learning rates: 0.003, 0.01 and 0.03. A variant can look good or bad just because the rate suits it, so we
# compare each variant at every rate, and at its best one.
# All 144 runs train at once, as one batched model (each seed draws its own rotation, weights and data; the three
# rates share them). Every 5 steps we measure the loss on 512 held-out examples. This takes a few seconds.

# %%
TRAIN_DIMS = [16, 64, 256, 1024]  # d_k
VARIANTS = ["scaled", "unscaled", "1/d_k", "T5"]
DIVISOR = {"scaled": lambda d: d**0.5, "unscaled": lambda d: 1.0, "1/d_k": lambda d: float(d), "T5": lambda d: 1.0}
RATES = [0.003, 0.01, 0.03]  # Adam's learning rate: every variant is trained at each
SEEDS, D_MODEL, KEYS_PER_EXAMPLE, NOISE = 3, 16, 8, 0.5
STEPS, BATCH, EVERY = 120, 32, 5
RUNS = len(RATES) * len(VARIANTS)  # per d_k and seed: (rate, variant) pairs, the variant changing fastest


def lookup_examples(rotation, size, gen):
    """`size` examples per seed: 8 random keys, and a query that is a rotated, noisy copy of one of them."""
    keys = torch.randn(SEEDS, size, KEYS_PER_EXAMPLE, D_MODEL, generator=gen)
    target = torch.randint(KEYS_PER_EXAMPLE, (SEEDS, size), generator=gen)  # which key the query was made from
    picked = keys[torch.arange(SEEDS)[:, None], torch.arange(size), target]  # (SEEDS, size, D_MODEL)
    query = picked @ rotation.transpose(-1, -2) + NOISE * torch.randn(SEEDS, size, D_MODEL, generator=gen)
    return query, keys, target


def all_scores(weights, query, keys):
    """Scores of every run: (d_k, run, seed, example, key). q·k = x_q W^Q (x_k W^K)ᵀ is computed as
    x_q (W^Q W^Kᵀ) x_kᵀ: the same numbers and gradients, with less work for large d_k."""
    M = torch.stack([w[0] @ w[1].transpose(-1, -2) for w in weights])  # (d_k, run, seed, D_MODEL, D_MODEL)
    return torch.einsum("sbi,dvsij,sbnj->dvsbn", query, M, keys) / divisors


def adam_step(params, moments, step, lr, betas=(0.9, 0.999), eps=1e-8):
    """One step of Adam (Kingma and Ba, 2015), as torch.optim.Adam takes it: each weight moves by about `lr`,
    whatever the size of its gradient, because the step divides by the gradient's running size. `lr` may be a
    tensor that gives every run its own rate."""
    with torch.no_grad():
        for p, (m, v) in zip(params, moments):
            m.lerp_(p.grad, 1 - betas[0])  # running mean of the gradient
            v.lerp_(p.grad**2, 1 - betas[1])  # running mean of its square
            m_hat, v_hat = m / (1 - betas[0] ** step), v / (1 - betas[1] ** step)  # corrected for starting at 0
            p -= lr * m_hat / (v_hat.sqrt() + eps)
            p.grad = None


def lookup_loss(scores, target):
    """Cross-entropy of each run's attention weights against the right key: (d_k, run, seed)."""
    t = target.expand(*scores.shape[:2], -1, -1)
    return torch.nn.functional.cross_entropy(scores.flatten(0, 3), t.flatten(), reduction="none").view(t.shape).mean(-1)


gen = torch.Generator().manual_seed(3)
rotation = torch.linalg.qr(torch.randn(SEEDS, D_MODEL, D_MODEL, generator=gen))[0]  # each seed's hidden rotation R
divisors = torch.tensor([[DIVISOR[v](d) for v in VARIANTS] * len(RATES) for d in TRAIN_DIMS]).view(-1, RUNS, 1, 1, 1)
rates = torch.tensor(RATES).repeat_interleave(len(VARIANTS)).view(RUNS, 1, 1, 1)  # each run's learning rate
weights = []  # per d_k: (W^Q or W^K, run, seed, D_MODEL, d_k); every run starts from its seed's same draw
for dim in TRAIN_DIMS:
    w = (torch.randn(2, 1, SEEDS, D_MODEL, dim, generator=gen) / D_MODEL**0.5).repeat(1, RUNS, 1, 1, 1)
    w[0, VARIANTS.index("T5") :: len(VARIANTS)] /= dim**0.5  # T5: W^Q starts √d_k smaller (the scores not divided)
    weights.append(w.requires_grad_(True))
moments = [(torch.zeros_like(w), torch.zeros_like(w)) for w in weights]  # Adam's state: one pair per tensor
held_out = lookup_examples(rotation, 512, gen)
curve = []  # held-out loss every EVERY steps
started = time.perf_counter()
for step in range(STEPS + 1):
    if step % EVERY == 0:
        with torch.no_grad():
            z = all_scores(weights, *held_out[:2])
            curve.append(lookup_loss(z, held_out[2]))
    if step < STEPS:
        query, keys, target = lookup_examples(rotation, BATCH, gen)
        lookup_loss(all_scores(weights, query, keys), target).sum().backward()  # the runs share no weights
        adam_step(weights, moments, step + 1, rates)  # the same optimiser for every run, at its own rate
curve = torch.stack(curve).unflatten(2, (len(RATES), len(VARIANTS))).numpy()  # (evaluation, d_k, rate, variant, seed)
# the last evaluation's scores: (d_k, rate, variant, seed, example, key)
z = z.unflatten(1, (len(RATES), len(VARIANTS)))
steps = np.arange(0, STEPS + 1, EVERY)
print(f"{np.prod(curve.shape[1:])} runs trained in {time.perf_counter() - started:.1f} s")

# %% [markdown]
# The loss after 120 steps against $d_k$, one panel per learning rate. Each line is the mean of the 3 seeds; the
# band around it spans the lowest and the highest seed. Both axes are logarithmic.

# %%
STYLE = {"scaled": ("scaled", "-o"), "unscaled": ("unscaled", "--s"), "1/d_k": ("other", ":^"), "T5": ("other2", "-.D")}
LABEL = {
    "scaled": r"scaled: $QK^T/\sqrt{d_k}$",
    "unscaled": "unscaled: $QK^T$",
    "1/d_k": "$QK^T/d_k$ (μP)",
    "T5": r"T5: $QK^T$, $W^Q$ starts $\sqrt{d_k}$ smaller",
}
v = {name: VARIANTS.index(name) for name in VARIANTS}
r = {rate: RATES.index(rate) for rate in RATES}
D = {dim: i for i, dim in enumerate(TRAIN_DIMS)}
end = curve[-1].mean(-1)  # (d_k, rate, variant): the mean over the seeds at step 120
best = end.min(1)  # (d_k, variant): each variant at its best rate
fig, axes = plt.subplots(1, 3, figsize=(6.5, 4.3), sharex=True, sharey=True, layout="constrained")
for ax, rate in zip(axes, RATES):
    ax.axhline(np.log(KEYS_PER_EXAMPLE), color=plots.color("chance"), lw=1)
    for name in VARIANTS:
        meaning, dash = STYLE[name]
        runs = curve[-1, :, r[rate], v[name]]  # (d_k, seed)
        ax.fill_between(TRAIN_DIMS, runs.min(-1), runs.max(-1), color=plots.color(meaning), alpha=0.25, lw=0)
        ax.plot(TRAIN_DIMS, runs.mean(-1), dash, color=plots.color(meaning), lw=2, ms=5, label=LABEL[name])
    ax.set(xscale="log", yscale="log", title=f"learning rate {rate}", xlabel="$d_k$", xticks=TRAIN_DIMS)
    ax.set_xticklabels([str(dim) for dim in TRAIN_DIMS], rotation=45)
    ax.set_yticks([0.1, 0.3, 1, 3, 10], ["0.1", "0.3", "1", "3", "10"])  # numbers, both sides of 1
    ax.minorticks_off()
    ax.tick_params(labelleft=True)  # every panel labels its loss axis
axes[0].set_ylabel(f"held-out loss at step {STEPS} (log scale)")
axes[0].text(TRAIN_DIMS[0], np.log(KEYS_PER_EXAMPLE) * 1.1, "uniform guess,\nln 8", va="bottom", color=plots.TEXT)
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
fig.suptitle(
    "With $\\sqrt{d_k}$ the best learning rate falls as heads grow (0.03 suits $d_k = 16$,\n"
    "not 1024); with $1/d_k$ (μP) the loss changes little with $d_k$,\nand the same rate, 0.03, is best at every $d_k$"
)
plots.show(
    fig,
    name="03_training",
    alt=(
        "With the √d_k scaling the best learning rate falls as d_k grows (0.03 suits d_k = 16, not 1024); with 1/d_k "
        "(μP) the loss changes little with d_k, and the same rate, 0.03, is best at every d_k. "
        f"Three charts, one per learning rate ({', '.join(map(str, RATES))}), of the held-out loss after {STEPS} "
        f"steps against d_k = {', '.join(map(str, TRAIN_DIMS))}, four variants each (mean of {SEEDS} seeds, with a "
        "band from the lowest to the highest seed). "
        + " ".join(
            f"At learning rate {rate}: "
            + "; ".join(
                name + " " + ", ".join(f"{end[i, r[rate], v[name]]:.2f}" for i in D.values()) for name in VARIANTS
            )
            + "."
            for rate in RATES
        )
    ),
)

print(f"held-out loss at step {STEPS}: mean of {SEEDS} seeds [lowest, highest]; a uniform guess scores ln 8 = "
      f"{np.log(KEYS_PER_EXAMPLE):.2f}; * marks each variant's best rate at that d_k")  # fmt: skip
print(f"{'d_k':>5} {'variant':9} {'step 0':>7}" + "".join(f"{f'rate {rate}':>22}" for rate in RATES))
for dim, i in D.items():
    for name in VARIANTS:
        runs = curve[-1, i, :, v[name]]  # (rate, seed)
        print(
            f"{dim:5d} {name:9} {curve[0, i, 0, v[name]].mean():7.2f}"
            + "".join(
                f"  {'*' if k == end[i, :, v[name]].argmin() else ' '}{runs[k].mean():6.2f} [{runs[k].min():5.2f}, "
                f"{runs[k].max():5.2f}]"
                for k in range(len(RATES))
            )
        )
slow = r[RATES[0]]  # the lowest rate: where the T5 and unscaled heads do best at d_k = 1024
t5_best = curve[:, D[1024], slow, v["T5"]].mean(-1)
final_p = torch.softmax(z[D[1024], slow], dim=-1)  # the lowest rate's runs at d_k = 1024: (variant, seed, example, key)
missed = final_p.argmax(-1) != held_out[2]  # the examples each run gets wrong
accuracy = 1 - missed.double().mean(-1).numpy()  # (variant, seed)
loss_on_missed = {
    name: float(-final_p[v[name]].gather(-1, held_out[2][..., None])[..., 0].log()[missed[v[name]]].mean())
    for name in VARIANTS
}
step0_gap = np.abs(curve[0, :, :, v["T5"]] - curve[0, :, :, v["scaled"]]).max()
print(
    f"\nLargest difference between the T5 and the scaled heads' losses at step 0: {step0_gap:.1e}.\n"
    f"At d_k = 1024 and rate {RATES[0]}: the T5 head's mean loss is lowest at step {steps[t5_best.argmin()]} "
    f"({t5_best.min():.2f}), then rises to {t5_best[-1]:.2f}; every run picks the right key "
    f"{accuracy.min():.0%}–{accuracy.max():.0%} of the time; the mean loss on the held-out examples a head gets "
    "wrong: " + ", ".join(f"{name} {loss:.1f}" for name, loss in loss_on_missed.items()) + "."
)

# %% [markdown]
# **What the training shows** (every number is in the table). Training amplifies tiny rounding differences, in the
# last digits, between one machine and another, so your table may differ a little from the one the course was
# written with: the prose gives rounded values, orderings and bounds, which hold on any machine.
# * **At step 0**, the same at every rate: the unscaled head is confidently wrong, with a loss of 6.8 at
#   $d_k = 16$ rising to 53 at $d_k = 1024$, against 2.08 for a uniform guess. The T5 head equals the scaled head
#   (the same loss, to rounding); after the first step it no longer does.
# * **Scaled** ($\sqrt{d_k}$): which head size trains best depends on the rate. At 0.003, bigger heads train
#   better: the loss at step 120 falls with every size, from about 0.4 at $d_k = 16$ to about 0.07 at
#   $d_k = 1024$. At 0.03 it is the other way round: the biggest heads train worst, the loss rising from about
#   0.09 at $d_k = 16$ to more than twice that at $d_k = 1024$. So the best rate falls as the head grows: 0.03 at
#   $d_k = 16$, 0.01 at $d_k = 64$ and $d_k = 256$, while at $d_k = 1024$ the rates 0.003 and 0.01 end close
#   together and 0.03 is far worse. At its best rate the scaled head ends below 0.12 at every $d_k$.
# * **Unscaled and T5**: for small heads they can beat the scaled head at the same rate (at 0.003 and
#   $d_k = 16$ both end below it). Not because the unscaled gradient is larger (Adam's step does not depend on
#   the gradient's size, see below), but because without the division the same step of $W^Q$ or $W^K$ moves the
#   scores $\sqrt{d_k}$ times further: the chain-rule factor of section 5. At $d_k = 1024$ that is far too fast:
#   at every rate tried they end several times above the scaled head's best, and at 0.03 worse than a uniform
#   guess.
# * **$1/d_k$** (μP): at each rate its loss changes by less than a factor of 2 from $d_k = 16$ to 1024, which is
#   what μP is designed for. Its
#   scores start near 0 (uniform weights), so at 0.003 it is the slowest variant at every $d_k$, still above 0.75
#   at step 120. But its best rate is the same, the largest tried, 0.03, at every $d_k$, and there it ends level
#   with the scaled head at its best (about 0.07 from $d_k = 64$ on).
#
# So $1/\sqrt{d_k}$ does not make one learning rate right for every head size. It gives every head size scores of
# the same spread at the start, and at a well-chosen rate it trains well at every size, but that rate must be
# chosen again when $d_k$ changes. μP's $1/d_k$ buys exactly that: **a best learning rate that does not depend on
# $d_k$**, so a rate tuned on a small, cheap model carries over to a big one.
#
# **Confidently wrong.** At 0.003 and $d_k = 1024$, accuracy hides most of this: every run picks the right key at
# least 90 % of the time (last line of the printout). The loss also charges for confidence. A head whose scores
# are too large is *confidently* wrong where it errs: on the held-out examples it gets wrong, the unscaled and T5
# heads' mean loss is above 8, against below 2 for the scaled head. And the T5 head gets there by *un*learning: its
# loss is lowest within the first 10 steps and then rises again, to well above that low point at step 120.
#
# **Why folding the factor into $W^Q$ trains differently.** Adam divides each weight's gradient by a running
# estimate of that gradient's size, so each weight moves by about the learning rate per step, *whatever* the
# size of its gradient or of the weight itself. In the T5 head, $W^Q$ starts $\sqrt{d_k}$ times smaller but moves
# by the same amount per step, so relative to its size it changes $\sqrt{d_k}$ times faster: the T5 head trains
# exactly like the scaled head with $W^Q$'s learning rate multiplied by $\sqrt{d_k}$ (32 at $d_k = 1024$; exactly,
# up to Adam's tiny safety constant $\epsilon$). For large heads that is too fast. The same rough count explains
# the other variants: a score adds up $d_k$ products, so when Adam moves every entry of $W^Q$ a little in a
# useful direction, the score moves roughly in proportion to $d_k$. Divided by $\sqrt{d_k}$, that still grows with
# $d_k$ (so a bigger scaled head learns faster at the same rate, and needs a smaller rate to avoid overshooting);
# divided by $d_k$, it does not (the $1/d_k$ head learns at the same speed at every $d_k$, and one rate suits
# them all). An optimiser whose step is proportional to the size of each weight matrix would make the T5 fold
# exact (Adafactor, which T5 was trained with, can scale its steps this way). With Adam, *where* the constant
# sits decides how fast each weight effectively learns.
#
# **Try it.** Add 0.001 or 0.1 to `RATES` and run the two cells again. Does the $1/d_k$ head's best rate stay the
# same at every $d_k$? Which variant's best rate moves?

# %% [markdown]
# ## 7. Let's review
#
# * A score $q\cdot k$ is a sum of $d_k$ products. For independent entries with mean 0 and variance
#   $\sigma^2$, $\operatorname{Var}(q\cdot k) = d_k\sigma^4$: the spread grows like $\sqrt{d_k}$. You measured it
#   up to $d_k = 1024$.
# * The softmax turns score *differences* into weight *ratios* exponentially, so large scores make it
#   nearly one-hot.
# * Its derivative $\partial p_i/\partial z_j = p_i(\delta_{ij}-p_j)$ is at most $\tfrac14$ on the diagonal and
#   vanishes when the softmax saturates.
# * What reaches $W^Q$ also carries the chain rule's factor: without scaling, the median gradient at
#   initialisation is larger for small heads and collapses for large ones, and it is uneven across heads; with
#   scaling it has nearly the same size for every $d_k$.
# * Dividing by $\sqrt{d_k}$ brings the variance back to $\sigma^4$ for every $d_k$ when $q$ and $k$ are
#   independent (at initialisation); dividing by $d_k$ would shrink the scores towards 0 there. Trained,
#   correlated $q$ and $k$ can grow like $d_k$, which is why μP divides by $d_k$.
# * In training with Adam, the unscaled head started confidently wrong and, at $d_k = 1024$, ended several times
#   worse than the scaled head at every learning rate tried. The $\sqrt{d_k}$ head trained well at every size at a
#   well-chosen rate, but its best rate fell as $d_k$ grew; the $1/d_k$ head (μP) had the same best rate at every
#   $d_k$, which is what μP's $1/d_k$ buys.
# * Folding the factor into $W^Q$'s initialisation (T5) gives the same scores at step 0 but not the same
#   training: Adam moves each weight by about the learning rate whatever its size, so a smaller $W^Q$ changes
#   faster relative to its size.
# * `scaled_scores(Q, K)` swaps only the last two axes of `K`, so it works for any batch axes in front.
#
# Next lesson: you write the softmax yourself — one that never overflows — and put everything together
# into scaled dot-product attention with masks.

# %% [markdown]
# ## 8. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after each
# answer checks the format only; the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** Queries and keys have independent entries with mean 0 and variance 1, and
# $d_k = 64$. What is the variance of the *unscaled* score $q\cdot k$?

# %% quiz="quiz-variance-dk64" key="64" points=1

# %% [markdown]
# **Q2 (1 point).** Now the entries are independent with standard deviation $\sigma = 2$ (variance 4) and $d_k = 16$.
# What is the variance of the unscaled score $q\cdot k$?

# %% quiz="quiz-variance-sigma2" key="256" points=1

# %% [markdown]
# **Q3 (1 point).** At initialisation, when the entries of $q$ and $k$ are independent, why does the
# Transformer divide the scores by $\sqrt{d_k}$ rather than by $d_k$?
#
# * **a** — $\sqrt{d_k}$ is cheaper to compute than $d_k$
# * **b** — for independent $q$ and $k$ the *standard deviation* of $q\cdot k$ grows like $\sqrt{d_k}$, so dividing by $\sqrt{d_k}$ keeps the scores' spread fixed; dividing by $d_k$ would shrink them towards 0 and flatten the softmax
# * **c** — dividing by $d_k$ would make the scores negative
# * **d** — the softmax only accepts scores between −1 and 1

# %% quiz="quiz-why-sqrt" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** What is the largest value that $\partial p_i/\partial z_i$ of a softmax can take,
# over all possible scores?

# %% quiz="quiz-max-gradient" key="0.25" points=1

# %% [markdown]
# **Q5 (1 point).** With independent unit-variance entries and $d_k = 256$, what is the *standard deviation* of the
# scaled score $q\cdot k/\sqrt{d_k}$?

# %% quiz="quiz-scaled-std" key="1" points=1

# %% [markdown]
# **Q6 (1 point).** A head with $d_k = 512$ is used *without* the scaling. What did the experiment of section 5
# show happens at initialisation?
#
# * **a** — the weights become uniform over the keys and the gradient grows
# * **b** — nothing: the softmax does not care how large the scores are
# * **c** — the weights become nearly one-hot and the softmax's derivative becomes tiny
# * **d** — the scores become smaller than with scaling

# %% quiz="quiz-saturation" choices="abcd" key="c" points=1

# %% [markdown]
# **Q7 (1 point).** In section 6 the T5 head and the scaled head had exactly the same scores at step 0. Why
# did they train differently?
#
# * **a** — the T5 head divides its scores by $d_k$
# * **b** — Adam moves each weight by about the learning rate per step whatever the weight's size, so a $W^Q$
#   that starts $\sqrt{d_k}$ times smaller changes $\sqrt{d_k}$ times faster relative to its size
# * **c** — the two heads saw different training examples
# * **d** — the T5 head's gradients are exactly zero at initialisation

# %% quiz="quiz-t5-fold" choices="abcd" key="b" points=1

# %% [markdown]
# **Q8 — free answer (3 points, graded by hand).** A colleague says: *"The division by $\sqrt{d_k}$ is
# pointless. It is just a constant, and the network can learn to make $W^Q$ smaller by itself."*
# In 3–5 sentences, explain what is right about this and why the scaling is still used, with what
# you measured in this lesson.
#
# <details><summary>Before you hand in</summary>
#
# A full answer:
# * says what is true in the colleague's claim (what a constant factor does to what the model can express);
# * says where an unscaled head starts at a standard initialisation, and what that did in section 6's
#   training, with a number you measured;
# * says whether folding the constant into $W^Q$'s starting values is the same as dividing, and why, citing
#   section 6 (what the optimiser does to a smaller $W^Q$);
# * ends with what the division buys, in one sentence, and what it does not (look at the three learning rates).
# </details>

# %% [markdown] manual="quiz-free-learn-the-scale" points=3
# ### BEGIN SOLUTION
# *Model answer.* The colleague is right that a constant factor adds no expressive power: it can be folded into
# $W^Q$, and T5 does exactly that, starting $W^Q$ $\sqrt{d_k}$ times smaller and not dividing; at step 0 the
# scores are then identical. But left to itself, an unscaled head at a standard initialisation starts with
# scores whose variance grows like $d_k$, a saturated softmax and confident mistakes: at $d_k = 1024$ its loss
# was 53 at step 0, and after 120 steps it was still several times the scaled head's at every learning rate
# tried. And folding the constant into the initialisation is not the same in training: Adam moves each weight
# by about the learning rate whatever its size, so the smaller $W^Q$ effectively learns $\sqrt{d_k}$ times
# faster; at $d_k = 1024$ and the lowest rate the T5 head's loss was lowest within the first 10 steps and then
# rose again. Writing $1/\sqrt{d_k}$ in the formula costs nothing and gives every head size scores of the same
# spread at the start, so at a suitable rate every size trains well. It does not make one rate best for every
# size: the scaled head's best rate fell as $d_k$ grew (0.03 was best at $d_k = 16$ and far worse at 1024); a
# best rate independent of $d_k$ is what μP's $1/d_k$ buys.
#
# *Rubric (3 points).* 1 point: agrees that a constant can be absorbed into $W^Q$ (the model is equally
# expressive; T5 folds it into the initialisation). 1 point: explains that without the division a standard
# initialisation starts saturated, citing a measurement of section 6 (e.g. a step-0 loss of 53 at $d_k = 1024$,
# or an unscaled head several times worse than the scaled one after 120 steps at every rate) or of section 5
# (one-hot weights, a much smaller or uneven gradient at large $d_k$). 1 point: explains that where the constant
# sits changes the optimiser's effective step (Adam's step does not shrink with the weight), citing the T5 run
# (its loss rising again after the first steps at $d_k = 1024$), and concludes with what the division buys: the
# same starting spread for every head size, so every size can train well at a suitable rate. Full marks do not
# require the learning-rate point, but an answer that claims one rate is best for every head size with the
# division loses this point (section 6 shows the best rate falls as $d_k$ grows; that independence is what
# μP's $1/d_k$ gives). No point for restating the question.
# ### END SOLUTION
