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
# **Attention, from the dot product up** · lesson 3
#
# In lesson 2 a query scored every key with a dot product (your `dot_scores`), and a softmax turned the
# scores into weights (your `soft_lookup`). That works with the short tag vectors of the video library. Real attention heads use queries
# and keys with $d_k = 64$ or more entries, and then something goes wrong: the dot products get
# *large*, the softmax snaps onto a single key, and for most queries its gradient all but disappears.
# The Transformer's fix is one division:
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
# 4. measure with autograd the gradient that reaches $W^Q$, with and without scaling, and say what the
#    division changes;
# 5. say why dividing by $\sqrt{d_k}$ suits every head size at initialisation, and why dividing by $d_k$
#    would overdo it there (and where $1/d_k$ is used instead).
#
# **You need** from lesson 2: scores as dot products of one query with many keys, `Q @ K.T` for
# many queries at once, and the idea that a softmax turns scores into weights that sum to 1; the
# query's length acting as an inverse temperature. From `00_pytorch_primer`: tensors, and autograd
# (`requires_grad`, `backward()`, `.grad`), which this lesson uses to measure gradients.
# In this lesson the softmax is PyTorch's `torch.softmax`; you write your own in lesson 4.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells say
# `# YOUR CODE HERE`: replace `raise NotImplementedError()` with your code. The cell after each
# exercise runs *visible checks*; when your work is graded, hidden checks with other shapes run too,
# so write general code. The **Validate** button runs every check at once.

# %%
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
# into a uniform average. For independent $q$ and $k$, as at initialisation, only $\sqrt{d_k}$ keeps the
# spread of the scores the same for every head size (see the footnote below for trained, correlated $q$ and $k$).
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
# from a variable of the notebook.
#
# <details><summary>Hint</summary>
#
# `np.swapaxes(K, -1, -2)` (or `K.swapaxes(-1, -2)`) exchanges only the last two axes of `K`, whatever
# comes before them. `Q.shape[-1]` is the size of the last axis.
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
_Q = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, -1.0]])  # T_q = 2 queries
_K = np.array([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])  # T_k = 3 keys
# raw dot products Q Kᵀ = [[4, 2, 1], [0, 0, 1]]; divided by √4 = 2:
_want = [[2.0, 1.0, 0.5], [0.0, 0.0, 0.5]]
_mistakes = {
    "the scores are not scaled: divide the dot products by √d_k.": [[4.0, 2.0, 1.0], [0.0, 0.0, 1.0]],
    "you divided by d_k (4 here); divide by its square root √d_k.": [[1.0, 0.5, 0.25], [0.0, 0.0, 0.25]],
    "you divided by the number of keys (3 here); divide by √d_k, the square root of the vectors' size.": [
        [4 / 3, 2 / 3, 1 / 3],
        [0.0, 0.0, 1 / 3],
    ],
    "you divided by √T_k, the square root of the number of keys (√3 here); divide by √d_k.": [
        [2.30940108, 1.15470054, 0.57735027],
        [0.0, 0.0, 0.57735027],
    ],
    "you divided by √T_q, the square root of the number of queries (√2 here); d_k is the size of the LAST axis.": [
        [2.82842712, 1.41421356, 0.70710678],
        [0.0, 0.0, 0.70710678],
    ],
    "rows and columns are swapped (you computed K Qᵀ): the result must have one row per query, shape (T_q, T_k).": [
        [2.0, 0.0],
        [1.0, 0.0],
        [0.5, 0.5],
    ],
}
checks.expect_close(
    checks.call(scaled_scores, _Q, _K), _want, "scaled_scores on the worked example", mistakes=_mistakes
)
_rng = np.random.default_rng(0)
for _batch in [(2,), (2, 3)]:
    _Qb, _Kb = _rng.standard_normal(_batch + (5, 8)), _rng.standard_normal(_batch + (7, 8))
    try:
        _out = scaled_scores(_Qb, _Kb)
    except ValueError as _error:
        raise AssertionError(
            f"scaled_scores failed on a batch of shape {_Qb.shape} × {_Kb.shape}: {_error}. On "
            "arrays with batch axes, K.T reverses ALL axes; swap only the last two."
        ) from None
    checks.expect_shape(_out, _batch + (5, 7), f"scaled_scores for batch axes {_batch} with T_q = 5, T_k = 7, d_k = 8")
    for _b in np.ndindex(*_batch):  # each batch entry must equal the unbatched result
        checks.expect_close(
            _out[_b],
            scaled_scores(_Qb[_b], _Kb[_b]),
            f"scaled_scores for batch entry {_b} (compared with the same queries and keys unbatched)",
        )


### BEGIN HIDDEN TESTS
def _scaled_scores_hidden():
    rng = np.random.default_rng(31)

    def run(Q, K, what):
        try:
            return scaled_scores(Q, K)
        except (ValueError, RuntimeError, IndexError) as error:
            raise AssertionError(
                f"scaled_scores failed on {what} with {type(error).__name__}: {error}. "
                "On arrays with batch axes, K.T reverses ALL axes: swap only the last two "
                "(np.swapaxes(K, -1, -2))."
            ) from None

    for batch in [(), (3,), (2, 3)]:
        T_q, T_k, d_k = 5, 7, 16  # all distinct; √16 = 4 differs from 16/2 = 8
        Q, K = rng.standard_normal(batch + (T_q, d_k)), rng.standard_normal(batch + (T_k, d_k))
        raw = torch.matmul(torch.from_numpy(Q), torch.from_numpy(K).transpose(-1, -2)).numpy()
        mistakes = {
            "the scores are not scaled: divide the dot products by √d_k.": raw,
            "you divided by d_k; divide by its square root √d_k.": raw / d_k,
            "you divided by the number of keys T_k; divide by √d_k.": raw / T_k,
            "you divided by √T_k (the number of keys); divide by √d_k (the size of the vectors, Q.shape[-1]).": raw
            / np.sqrt(T_k),
            "you divided by the square root of the number of queries; d_k is the LAST axis, Q.shape[-1].": raw
            / np.sqrt(T_q),
            "you divided by d_k / 2; divide by √d_k.": raw / (d_k / 2),
            "rows and columns are swapped (you computed K Qᵀ): the result must be (..., T_q, T_k), one row per query.": np.swapaxes(
                raw, -1, -2
            )
            / 4.0,
        }
        if batch:
            mistakes["d_k was read from the first axis (Q.shape[0] or len(Q)); use the last axis, Q.shape[-1]."] = (
                raw / np.sqrt(batch[0])
            )
        what = f"Q {Q.shape} and K {K.shape}"
        out = run(Q, K, what)
        checks.expect_close(out, raw / 4.0, f"scaled_scores for {what}", mistakes=mistakes)
    # one query, one key: a single number per batch entry, shape (..., 1, 1)
    Q, K = rng.standard_normal((4, 1, 9)), rng.standard_normal((4, 1, 9))
    checks.expect_close(
        run(Q, K, "T_q = T_k = 1"),
        (Q * K).sum(-1)[..., None] / 3.0,
        "scaled_scores with one query and one key (d_k = 9)",
    )
    # three batch axes, d_k = 25 (√25 = 5)
    Q, K = rng.standard_normal((2, 2, 3, 6, 25)), rng.standard_normal((2, 2, 3, 4, 25))
    want = torch.matmul(torch.from_numpy(Q), torch.from_numpy(K).transpose(-1, -2)).numpy() / 5.0
    checks.expect_close(run(Q, K, "three batch axes, d_k = 25"), want, "scaled_scores with three batch axes (d_k = 25)")


_scaled_scores_hidden()
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
ax.plot(s, p1.detach(), color=plots.COLORS[0], label="$p_1$")
ax.plot(s, slope, color=plots.COLORS[1], label=r"$\partial p_1/\partial z_1$ (autograd)")
ax.plot(s, (p1 * (1 - p1)).detach(), ":", color=plots.COLORS[7], label="$p_1(1-p_1)$")
ax.set_xlabel("score difference s = z_1 − z_2")
ax.set_ylabel("value")
ax.set_title("Softmax over two keys with scores (s, 0)")
ax.legend()
plots.show(
    fig,
    name="03_two_key_gradient",
    alt=(
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
# * left: the distribution of all $64\times 12$ scores (scores beyond ±100 are counted in the outermost bars);
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
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.2, 3.5), layout="constrained")
        zeros = np.zeros(len(EDGES) - 1)
        self.raw_hist = ax1.stairs(zeros, EDGES, fill=True, color=plots.COLORS[5], alpha=0.6, label="unscaled $QK^T$")
        self.scaled_hist = ax1.stairs(
            zeros, EDGES, fill=True, color=plots.COLORS[0], alpha=0.6, label=r"scaled $QK^T/\sqrt{d_k}$ (yours)"
        )
        ax1.set_xlim(EDGES[0], EDGES[-1])
        ax1.set_ylim(0, 0.55)
        ax1.set_xlabel("score")
        ax1.set_ylabel("share of the 768 scores")
        ax1.set_title("Scores of 64 queries × 12 keys")
        ax1.legend(loc="upper left")
        ranks = np.arange(1, N_QUERIES + 1)
        (self.raw_line,) = ax2.plot(ranks, np.zeros(N_QUERIES), "-", color=plots.COLORS[5], lw=2)
        (self.scaled_line,) = ax2.plot(ranks, np.zeros(N_QUERIES), "-", color=plots.COLORS[0], lw=2)
        ax2.axhline(1 / N_KEYS, color=plots.COLORS[7], lw=1, ls=":")
        ax2.axvline((N_QUERIES + 1) / 2, color=plots.COLORS[7], lw=1, ls=":")
        ax2.text(2, 1 / N_KEYS + 0.02, "uniform, 1/12", fontsize=9)
        ax2.text((N_QUERIES + 1) / 2 + 1, 0.02, "median query", fontsize=9)
        ax2.set_xlim(1, N_QUERIES)
        ax2.set_ylim(0, 1.03)
        ax2.set_xlabel("query (sorted by its largest weight)")
        ax2.set_ylabel("largest of its 12 weights")
        ax2.set_title("Largest weight of each query (colours as on the left)")
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
        return (
            f"Left: histograms of the 768 scores at d_k = {d_k}; the unscaled scores have standard deviation "
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
    explorer_table = {}
    for dim in DIMS:
        raw, scaled = explorer_scores(dim)
        top_raw, top_scaled = largest_weights(raw), largest_weights(scaled)
        explorer_table[dim] = (np.median(top_raw), np.median(top_scaled))
        print(
            f"{dim:5d}  {raw.std():10.1f} {scaled.std():11.2f}   {np.median(top_raw):10.3f} {np.median(top_scaled):11.3f}   "
            f"{top_raw[0]:12.3f}   {top_scaled[-1]:11.3f}   {np.mean(top_raw > 0.9):14.0%}"
        )
    one_hot_from = next(d for d in DIMS if all(explorer_table[e][0] > 0.95 for e in DIMS if e >= d))
    medians_scaled = [explorer_table[d][1] for d in DIMS]
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
# scatter around these medians: even at $d_k = 1024$ the least peaked unscaled query keeps its largest
# weight at 0.51 (two keys nearly tied), and the most peaked scaled query reaches 0.72. So judge by the
# whole curve, not by one query.

# %% [markdown]
# ## 5. Experiment: variance and gradient against $d_k$
#
# Two claims to back with measurements, for $d_k = 1, 2, 4, \dots, 1024$:
# 1. the variance of $q\cdot k$ is $d_k\sigma^4$ — we measure it for $\sigma = 1$ and $\sigma = 0.5$
#    (where theory says $d_k/16$) on 4,000 random pairs per point, and the variance of the scaled score;
# 2. without scaling, the softmax saturates and learning gets a poor gradient. What "gradient" means needs
#    care; we measure three things, below.

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
ax.loglog(dims, dims, "-", color=plots.COLORS[7], lw=1, label="theory: $d_k$")
ax.loglog(dims, var_1, "o", color=plots.COLORS[0], label=r"measured Var$(q\cdot k)$, $\sigma = 1$")
ax.loglog(dims, np.array(dims) / 16, "--", color=plots.COLORS[7], lw=1, label=r"theory: $\sigma^4 d_k = d_k/16$")
ax.loglog(dims, var_half, "s", color=plots.COLORS[1], label=r"measured Var$(q\cdot k)$, $\sigma = 0.5$")
ax.loglog(dims, var_scaled, "^", color=plots.COLORS[2], label=r"measured Var$(q\cdot k/\sqrt{d_k})$, $\sigma = 1$")
ax.set_xscale("log", base=2)
ax.set_xlabel("$d_k$")
ax.set_ylabel("variance of the score")
ax.set_title("Variance of dot-product scores (4,000 random pairs per point)")
ax.legend(fontsize=9)
plots.show(
    fig,
    name="03_variance_vs_dk",
    alt=(
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
# **What the gradient measurement measures.** For each $d_k$ we build 200 independent heads at
# initialisation. Each has one query token $x \in \mathbb{R}^{16}$ (unit-variance entries), a freshly
# initialised $W^Q \in \mathbb{R}^{16\times d_k}$ with entries of variance $1/16$ (so that $q = xW^Q$ has
# unit-variance entries), and its own 16 random keys. The softmax's input $z$ is the raw score $q\cdot k_j$
# without scaling, and $q\cdot k_j/\sqrt{d_k}$ with it. We measure, for each head, with autograd:
#
# * **(a)** how one-hot the weights are: the largest weight $\max_j p_j$;
# * **(b)** the size of the softmax's own derivative $\partial p/\partial z$ (the $16\times16$ matrix of
#   section 3, its Frobenius norm), taken with respect to the softmax's *input* $z$;
# * **(c)** the size of the gradient that reaches the parameters, $\lVert\partial L/\partial W^Q\rVert$, for a
#   stand-in loss $L = \sum_j u_j p_j$ with fixed random numbers $u_j$. (Any loss of the attention output
#   reaches the weights this way: $u_j$ plays the role of $\partial L/\partial p_j$.)
#
# Each is reported as the median over the 200 heads, and (c) also as the 90th percentile.
#
# (b) and (c) are not the same thing. By the chain rule, $\partial L/\partial q = \sum_j (\partial L/\partial z_j)\,
# \partial z_j/\partial q$, and $\partial z_j/\partial q$ is $k_j/\sqrt{d_k}$ with scaling but $k_j$ without it: the
# division that rescues the softmax also divides every gradient flowing back through it by $\sqrt{d_k}$.
# The keys have length about $\sqrt{d_k}$, so with scaling the two factors roughly cancel, while without
# scaling the gradient reaching $q$ is about $\sqrt{d_k}$ times larger than the one reaching $z$. A ratio of
# softmax derivatives, (b), therefore overstates what scaling gains at $W^Q$ by a factor of the order of
# $\sqrt{d_k}$; (c) is what training feels. ($\partial L/\partial W^Q = x^\top\,\partial L/\partial q$ adds the
# same factor $x$ to both settings.)

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
jacobian = {"unscaled": medians[0].tolist(), "scaled": medians[1].tolist()}

median_W = {s: np.array([m for m, _ in grad_WQ[s]]) for s in grad_WQ}
p90_W = {s: np.array([q for _, q in grad_WQ[s]]) for s in grad_WQ}
i16 = dims.index(16)
ratio_b = jacobian["scaled"][i512] / jacobian["unscaled"][i512]
ratio_c = median_W["scaled"][i512] / median_W["unscaled"][i512]
smaller_from = next(
    d for i, d in enumerate(dims) if all(median_W["unscaled"][j] < median_W["scaled"][j] for j in range(i, len(dims)))
)

fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(11.5, 3.7), layout="constrained")
for setting, colour, marker in (("unscaled", plots.COLORS[5], "o"), ("scaled", plots.COLORS[0], "s")):
    label = "unscaled $QK^T$" if setting == "unscaled" else r"scaled $QK^T/\sqrt{d_k}$"
    ax1.plot(dims, top[setting], marker + "-", color=colour, label=label)
    ax2.plot(dims, jacobian[setting], marker + "-", color=colour, label=label)
    ax3.plot(dims, median_W[setting], marker + "-", color=colour, label=f"{setting}, median")
    ax3.plot(dims, p90_W[setting], marker + "--", color=colour, mfc="none", label=f"{setting}, 90th percentile")
for ax in (ax1, ax2, ax3):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("$d_k$")
ax2.set_yscale("log")
ax3.set_yscale("log")
ax1.set_ylim(0, 1.05)
ax1.set_ylabel("median largest weight")
ax1.set_title("(a) how one-hot (16 keys)")
ax2.set_ylabel(r"median $\|\partial p/\partial z\|_F$")
ax2.set_title("(b) softmax derivative w.r.t. its input")
ax3.set_ylabel(r"$\|\partial L/\partial W^Q\|_F$")
ax3.set_title("(c) gradient reaching $W^Q$ (autograd)")
ax1.legend()
ax3.legend(fontsize=9)
plots.show(
    fig,
    name="03_softmax_gradient_vs_dk",
    alt=(
        f"Three charts against d_k from 1 to 1024, 200 heads each, unscaled in red-orange and scaled in blue. "
        f"(a) Median largest weight: unscaled rises to {top['unscaled'][i512]:.3f} at d_k = 512, scaled stays near "
        f"{np.median(top['scaled']):.2f}. (b) Median size of the softmax derivative: unscaled falls to "
        f"{jacobian['unscaled'][i512]:.1e} at 512, scaled stays near {np.median(jacobian['scaled']):.2f}. (c) Size of the "
        f"gradient reaching W^Q: the scaled median stays between {median_W['scaled'].min():.2f} and "
        f"{median_W['scaled'].max():.2f}; the unscaled median is {median_W['unscaled'][i16] / median_W['scaled'][i16]:.1f} "
        f"times larger at d_k = 16, drops below the scaled one from d_k = {smaller_from} and is {ratio_c:.0f} times "
        f"smaller at 512, while its 90th percentile stays {p90_W['unscaled'][i512] / p90_W['scaled'][i512]:.0f} times "
        f"above the scaled one."
    ),
)

print(
    f"(a) median largest weight at d_k = 512: {top['unscaled'][i512]:.3f} unscaled, {top['scaled'][i512]:.3f} scaled."
)
print(
    f"(b) median size of ∂p/∂z at d_k = 512: {jacobian['unscaled'][i512]:.1e} unscaled, {jacobian['scaled'][i512]:.2f} "
    f"scaled: {ratio_b:.0f} times smaller without scaling."
)
print(
    f"(c) median size of ∂L/∂W^Q: with scaling between {median_W['scaled'].min():.2f} and {median_W['scaled'].max():.2f} "
    f"for every d_k. Without scaling it is {median_W['unscaled'][i16] / median_W['scaled'][i16]:.1f} times the scaled "
    f"one at d_k = 16, smaller than it from d_k = {smaller_from} on, and {ratio_c:.0f} times smaller at d_k = 512."
)
print(f"    (b) overstated that factor {ratio_b / ratio_c:.0f}-fold (√512 = {512**0.5:.1f}).")
print(
    f"    90th percentile of ∂L/∂W^Q at d_k = 512: {p90_W['unscaled'][i512]:.1f} unscaled, "
    f"{p90_W['scaled'][i512]:.1f} scaled."
)
largest_tenth = size_512 >= size_512.quantile(0.9)
print(
    f"    At d_k = 512 without scaling, the gap between a head's two best scores has a median of "
    f"{float(gap_512.median()):.1f} over all heads, but of {float(gap_512[largest_tenth].median()):.2f} over the "
    f"tenth of heads with the largest gradients: near-ties."
)

# %% [markdown]
# The first figure confirms the derivation: the measured variance follows the line $d_k$ (and
# $d_k/16$ for $\sigma = 0.5$) over three orders of magnitude, while the scaled scores keep a variance
# near 1.
#
# The second figure puts numbers on the consequence, and the printout says exactly what each number is.
# **(a)** Without scaling, the softmax becomes nearly one-hot as $d_k$ grows. **(b)** Its derivative with
# respect to its input then falls by orders of magnitude (the printed factor at $d_k = 512$). **(c)** The
# gradient that actually reaches $W^Q$ tells a more careful story. With scaling, its median stays within
# the printed bounds, less than a factor of two apart, for every head size. Without scaling, it is *larger* for small heads (no $1/\sqrt{d_k}$ on the
# way back), and only for large heads does the saturation win: from the printed $d_k$ on, the median
# unscaled gradient is smaller, at $d_k = 512$ by the printed factor — much less than (b) suggested, by a
# factor of the order of $\sqrt{d_k}$, as the chain rule predicts. And the unscaled gradient is uneven
# (dashed lines): its 90th percentile stays far above the scaled one. The last line of the printout says
# which heads get those large gradients: the ones whose two best scores nearly tie. Most heads get almost none.
#
# So the division by $\sqrt{d_k}$ does not simply make gradients larger. It makes their size the same for
# every head size and similar across heads, so that one learning rate can suit them all. (We report medians and
# percentiles because the unscaled measurements are dominated by those few near-ties.)

# %% [markdown]
# ## 6. Let's review
#
# * A score $q\cdot k$ is a sum of $d_k$ products. For independent entries with mean 0 and variance
#   $\sigma^2$, $\operatorname{Var}(q\cdot k) = d_k\sigma^4$: the spread grows like $\sqrt{d_k}$. You measured it up to $d_k = 1024$.
# * The softmax turns score *differences* into weight *ratios* exponentially, so large scores make it
#   nearly one-hot.
# * Its derivative $\partial p_i/\partial z_j = p_i(\delta_{ij}-p_j)$ is at most $\tfrac14$ on the diagonal and
#   vanishes when the softmax saturates.
# * What reaches $W^Q$ also carries the chain rule's factor: without scaling, the median gradient is larger
#   for small heads and collapses for large ones, and it is uneven across heads; with scaling it has the same
#   size for every $d_k$.
# * Dividing by $\sqrt{d_k}$ brings the variance back to $\sigma^4$ for every $d_k$ when $q$ and $k$ are
#   independent (at initialisation); dividing by $d_k$ would shrink the scores towards 0 there. Trained,
#   correlated $q$ and $k$ can grow like $d_k$, which is why μP divides by $d_k$.
# * `scaled_scores(Q, K)` swaps only the last two axes of `K`, so it works for any batch axes in front.
#
# Next lesson: you write the softmax yourself — one that never overflows — and put everything together
# into scaled dot-product attention with masks.

# %% [markdown]
# ## 7. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format only; the
# answer itself is graded when your notebook is graded.
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
# **Q6 (1 point).** A head with $d_k = 512$ is used *without* the scaling. What did the experiment show
# happens at initialisation?
#
# * **a** — the weights become uniform over the keys and the gradient grows
# * **b** — nothing: the softmax does not care how large the scores are
# * **c** — the weights become nearly one-hot and the softmax's derivative becomes tiny
# * **d** — the scores become smaller than with scaling

# %% quiz="quiz-saturation" choices="abcd" key="c" points=1

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** A colleague says: *"The division by $\sqrt{d_k}$ is
# pointless. It is just a constant, and the network can learn to make $W^Q$ smaller by itself."*
# In 3–5 sentences, explain what is right about this and why the scaling is still used, with what
# you measured in this lesson.

# %% [markdown] manual="quiz-free-learn-the-scale" points=3
# ### BEGIN SOLUTION
# *Model answer.* It is true that a constant factor could in principle be absorbed into $W^Q$ (or
# $W^K$): scaling the weights down by $\sqrt{d_k}$ gives exactly the same scores. But the network
# would have to *learn* that, and it starts from a standard initialisation where the scores have
# variance $d_k$. For $d_k = 512$ the softmax is then almost one-hot, and the experiment measured that
# the gradient reaching $W^Q$ is, for the median head, tens of times smaller than with scaling, while a
# few near-tie heads get large ones. So the very gradient that should shrink $W^Q$ is tiny for most
# heads and erratic for the rest, and the learning rate that suits one head size does not suit another.
# Dividing by $\sqrt{d_k}$ costs nothing, keeps the scores at unit variance for every head size at
# initialisation, and so gives every head the same, healthy starting point.
#
# *Rubric (3 points).* 1 point: agrees that a constant could be absorbed into the weights (so the
# model is equally expressive). 1 point: explains that at initialisation the unscaled scores have
# variance $d_k$ (spread $\sqrt{d_k}$) and saturate the softmax, whose derivative then vanishes, citing
# the measured effect (one-hot weights, a much smaller or uneven gradient reaching $W^Q$ for large $d_k$).
# 1 point: concludes that scaling keeps the score variance independent of $d_k$ so training starts
# well for any head size (free, no learning needed). No point for restating the question.
# ### END SOLUTION
