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
# # Lesson 4 — Softmax, masks and scaled dot-product attention
#
# **Attention, from the dot product up** · lesson 4
#
# You have scores (lesson 2) and you know to scale them by $\sqrt{d_k}$ (lesson 3). Two pieces are
# missing before attention works end to end: a softmax that turns each row of scores into weights
# **without ever overflowing**, and a **mask** that stops a query from looking at keys it must not see
# (the future, or padding). In this lesson you write both and assemble the whole mechanism,
#
# $$\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V ,$$
#
# then prove that your version agrees with PyTorch's to within rounding.
#
# **Learning goals.** By the end you can
# 1. explain what makes softmax a probability distribution and why the naive formula overflows;
# 2. implement a numerically stable `softmax(x, axis=-1)` that survives logits of ±1000;
# 3. describe how a temperature sharpens or flattens the weights, and measure it with entropy;
# 4. implement `scaled_dot_product_attention(Q, K, V, mask)` with boolean masks, including causal masks
#    and fully masked rows, and check it against `torch.nn.functional.scaled_dot_product_attention`.
#
# **You need from lesson 3:** scaled scores `Q @ swapaxes(K, -1, -2) / sqrt(d_k)` for batched arrays
# of shape `(..., T, d_k)`, and why the softmax saturates when scores are large. **From
# `00_pytorch_primer`:** torch tensors and the way between numpy and torch (`torch.from_numpy`,
# `.numpy()`); we use them to compare your functions with PyTorch's built-ins.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells say
# `# YOUR CODE HERE`: replace `raise NotImplementedError()` with your code. The cell after each
# exercise runs *visible checks*; when your work is graded, hidden checks with other shapes run too,
# so write general code. The **Validate** button runs every check at once.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. Softmax: from scores to a probability distribution
#
# For a vector of scores (also called *logits*) $z_1, \dots, z_n$,
#
# $$\operatorname{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{n} e^{z_j}} .$$
#
# Three properties make it the right tool for attention weights:
# * every output is **positive** (an exponential is never negative or zero),
# * the outputs **sum to 1** (we divide by their total) — so they form a probability distribution,
#   and the attention output is a weighted *average* of the values;
# * it **keeps the order**: a larger score always gets a larger weight, and it is smooth, so gradients
#   flow to every score.
#
# One more property is the key to computing it safely. Adding the same constant $c$ to every score
# changes nothing, because $e^{z_i + c} = e^{z_i} e^{c}$ and the factor $e^{c}$ cancels:
#
# $$\operatorname{softmax}(z + c)_i = \frac{e^{c}\,e^{z_i}}{e^{c}\sum_j e^{z_j}} = \operatorname{softmax}(z)_i .$$
#
# ### Why the formula as written breaks
#
# Your `soft_lookup` in lesson 2 used the formula exactly as written, which is fine for the small scores of the video library.
# A floating-point number has a largest value. $e^{z}$ exceeds it as soon as $z$ is larger than
# $\ln(\text{largest number})$, and then numpy returns `inf`; `inf / inf` is `nan`. Very negative scores
# have the opposite problem: every $e^{z_j}$ rounds to 0 and the division becomes $0/0$. The cell
# below computes the limits and tries the formula as written on scores of about 1000.

# %%
for dtype in (np.float32, np.float64):
    print(f"{np.dtype(dtype).name}: e^z overflows for z > ln(max) = {np.log(np.finfo(dtype).max):.2f}")

print(f"unscaled scores of a d_k = 512 head have a standard deviation of about √512 = {np.sqrt(512):.1f} (lesson 3)")

z_big = np.array([1000.0, 999.0, 998.0])
with np.errstate(over="ignore", invalid="ignore"):  # silence numpy's overflow warnings here
    naive = np.exp(z_big) / np.exp(z_big).sum()
    naive_neg = np.exp(-z_big) / np.exp(-z_big).sum()
print("formula as written on", z_big, "->", naive)
print("formula as written on", -z_big, "->", naive_neg)


# %% [markdown]
# Scores of 1000 are not exotic: the *unscaled* scores of a $d_k = 512$ head already spread about
# $\sqrt{512} \approx 23$ either side of 0 (lesson 3), a trained model's logits can be far larger, and in
# float32 (the default on GPUs) the limit is below 89 (both printed above). The fix uses the shift property: subtract the **largest** score $m = \max_j z_j$ first,
#
# $$\operatorname{softmax}(z)_i = \frac{e^{z_i - m}}{\sum_j e^{z_j - m}} .$$
#
# Now every exponent is $\le 0$, so no $e^{\cdot}$ can overflow, and the largest one is exactly
# $e^0 = 1$, so the denominator is at least 1 and can never be 0. The result is mathematically identical.

# %% [markdown]
# ### Exercise 4.1 — a stable softmax (3 points)
#
# Implement `softmax(x, axis=-1)` for a numpy array of any shape, normalising along `axis`
# (each slice along that axis sums to 1; by default the last axis). It must return finite, correct
# values for logits around ±1000, in float32 and in float64, and give weight exactly 0 to a score of
# `-np.inf` (a blocked position, used in section 3) as long as the slice has at least one finite score.
# (A slice that is entirely `-np.inf` has no meaningful answer; exercise 4.2 deals with it.)
#
# <details><summary>Hint</summary>
#
# Use the shift property with $c = -\max_j z_j$ taken **along `axis`**, not over the whole array.
# `x.max(axis=axis, keepdims=True)` keeps the reduced axis with size 1, so that it broadcasts against `x`;
# do the same for the sum.
# </details>


# %% answer="softmax-stable"
def softmax(x, axis=-1):
    """Numerically stable softmax of x along `axis` (every slice along `axis` sums to 1)."""
    ### BEGIN SOLUTION
    x = np.asarray(x)
    shifted = x - x.max(axis=axis, keepdims=True)  # largest entry becomes 0: exp cannot overflow
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
    ### END SOLUTION


# %% tests="softmax-stable-tests" points=3
# Visible checks: a worked example, rows summing to 1, the axis argument, and logits of ±1000.
_out = checks.call(softmax, np.array([1.0, 2.0, 3.0]))
checks.expect_close(
    _out,
    [0.09003057, 0.24472847, 0.66524096],
    "softmax([1, 2, 3])",
    mistakes={
        "the exponentials are not divided by their sum.": [2.71828183, 7.3890561, 20.08553692],
        "the scores are divided by their sum without the exponential.": [1 / 6, 2 / 6, 3 / 6],
    },
)
_x = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
_rows = checks.to_numpy(softmax(_x)).sum(axis=-1)
checks.expect_close(
    _rows,
    [1.0, 1.0],
    "the row sums of softmax(x) for x of shape (2, 3)",
    mistakes={"the whole array sums to 1, not each row: normalise along `axis` only.": [0.78734471, 0.21265529]},
)
checks.expect_close(softmax(_x)[1], [1 / 3, 1 / 3, 1 / 3], "softmax of the equal row [1, 1, 1]")
_cols = checks.to_numpy(softmax(_x, axis=0)).sum(axis=0)
checks.expect_close(
    _cols,
    [1.0, 1.0, 1.0],
    "the column sums of softmax(x, axis=0)",
    mistakes={"softmax(x, axis=0) normalised the rows: use the `axis` argument.": [0.42336391, 0.5780618, 0.99857429]},
)
for _dtype in (np.float32, np.float64):
    _big = np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, -1000.0]], dtype=_dtype)
    _out = softmax(_big)
    checks.expect_finite(
        _out,
        f"softmax of logits around ±1000 in {np.dtype(_dtype).name}",
        "exp(1000) overflows to inf and exp(-1000) rounds to 0: subtract the maximum of each "
        "row (along `axis`, with keepdims=True) before exponentiating.",
    )
    checks.expect_close(
        _out,
        [[0.66524096, 0.24472847, 0.09003057], [0.21194156, 0.57611688, 0.21194156]],
        f"softmax of logits around ±1000 in {np.dtype(_dtype).name}",
    )


### BEGIN HIDDEN TESTS
def _softmax_hidden():
    rng = np.random.default_rng(21)
    hint = (
        "subtract the maximum along `axis` (with keepdims=True) before exponentiating; "
        "the maximum of the whole array is not enough when rows differ a lot."
    )
    x = 30 * rng.standard_normal((3, 4, 5))
    for axis in (-1, 0, 1, 2, -2):
        want = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
        out = softmax(x, axis=axis)
        checks.expect_finite(out, f"softmax of a (3, 4, 5) array along axis {axis}", hint)
        mistakes = {
            f"softmax(x, axis={axis}) normalised along the last axis: use the `axis` argument.": torch.softmax(
                torch.from_numpy(x), dim=-1
            ).numpy()
        }
        checks.expect_close(
            out,
            want,
            f"softmax of a (3, 4, 5) array along axis {axis}",
            mistakes=mistakes if axis not in (-1, 2) else None,
        )
    # a square matrix: the max taken without keepdims broadcasts along the wrong axis
    s = 50 * rng.standard_normal((4, 4))
    e = np.exp(s - s.max(axis=-1))
    checks.expect_close(
        softmax(s),
        torch.softmax(torch.from_numpy(s), dim=-1).numpy(),
        "softmax of a (4, 4) matrix",
        mistakes={
            "the row maxima were subtracted without keepdims=True, so they broadcast across the wrong axis.": e
            / e.sum(axis=-1, keepdims=True)
        },
    )
    # rows on very different scales, in float32 and float64
    for dtype in (np.float32, np.float64):
        big = (1000 * rng.uniform(-1, 1, (6, 7))).astype(dtype)
        big[0] = 1000.0
        big[1] = -1000.0
        big[2, :3] = [1000.0, -1000.0, 0.0]
        want = torch.softmax(torch.from_numpy(big.astype(np.float64)), dim=-1).numpy()
        out = softmax(big)
        checks.expect_finite(out, f"softmax of logits in [-1000, 1000] ({np.dtype(dtype).name})", hint)
        checks.expect_close(out, want, f"softmax of logits in [-1000, 1000] ({np.dtype(dtype).name})")
        checks.expect_close(
            softmax(big.T, axis=0), want.T, f"softmax along axis 0 of logits in [-1000, 1000] ({np.dtype(dtype).name})"
        )
    # -inf marks a blocked position: weight exactly 0, the rest renormalised
    z = np.array([[0.0, -np.inf, 1.0, -np.inf], [-np.inf, 2.0, -np.inf, -np.inf]])
    out = softmax(z)
    checks.expect_finite(
        out,
        "softmax of scores with -inf entries",
        "-inf is a blocked position: subtract the row MAXIMUM (not the minimum) so that exp(-inf) = 0.",
    )
    checks.expect_close(
        out,
        [[1 / (1 + np.e), 0.0, np.e / (1 + np.e), 0.0], [0.0, 1.0, 0.0, 0.0]],
        "softmax of scores with -inf entries",
    )
    checks.expect_close(softmax(np.array([5.0])), [1.0], "softmax of a single score")


_softmax_hidden()
### END HIDDEN TESTS
checks.passed("softmax")


# %% [markdown]
# ## 2. Temperature: sharper or flatter
#
# Dividing all scores by a positive number $\tau$ (tau), the **temperature**, before the softmax changes how
# peaked the weights are, without changing their order:
#
# $$p_i(T) = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}} .$$
#
# * $\tau < 1$ stretches the differences between scores: the weights get **sharper**; as $\tau \to 0$ all
#   weight goes to the largest score (a hard $\arg\max$ lookup, as in lesson 2), or is shared equally
#   by the scores tied for the largest.
# * $\tau > 1$ shrinks the differences: the weights get **flatter**; as $\tau \to \infty$ they become uniform.
#
# The $\sqrt{d_k}$ of lesson 3 *is* a temperature, chosen so that the scores of random, independent
# queries and keys have unit variance.
# Lesson 2's sharpness $\beta$, which multiplied the scores, is the same knob: $\beta = 1/\tau$.
# Language models use it too when they sample words.
#
# To measure how spread out a distribution is we use its **entropy** in bits,
# $H(p) = -\sum_i p_i \log_2 p_i$ (with $0 \log 0 = 0$): it is 0 when all weight sits on one key and
# $\log_2 n$, its largest value, when the $n$ weights are uniform.


# %%
def entropy_bits(p, axis=-1):
    """Entropy in bits of distributions along `axis` (0 · log 0 counts as 0)."""
    p = np.asarray(p, dtype=float)
    logs = np.log2(np.where(p > 0, p, 1.0))
    return -(p * logs).sum(axis=axis)


keys = data.SHORT_SENTENCE  # "the cat sat on the mat"
scores = np.array([1.0, 3.0, 2.0, -1.0, 1.0, 0.5])  # one query's scores over these 6 keys
temperatures = [0.25, 1.0, 4.0]
with ac.student_code("softmax"):
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.1), sharey=True, layout="constrained")
    described = []
    for ax, tau in zip(axes, temperatures):
        p = softmax(scores / tau)  # yours
        ax.bar(range(len(keys)), p, color=plots.COLORS[0])
        ax.set_xticks(range(len(keys)), [f"{i}:{t}" for i, t in enumerate(keys)], rotation=45)
        ax.set_title(f"τ = {tau}: entropy {entropy_bits(p):.2f} bits")
        ax.set_xlabel("key")
        described.append(
            f"τ = {tau}: largest weight {p.max():.2f} on '{keys[int(np.argmax(p))]}', "
            f"entropy {entropy_bits(p):.2f} bits"
        )
    axes[0].set_ylabel("weight")
    fig.suptitle(f"softmax(scores / τ) for scores {scores.tolist()}")
    plots.show(
        fig,
        name="04_temperature",
        alt=f"Three bar charts of softmax(scores / τ) over the 6 keys of '{' '.join(keys)}'; "
        + "; ".join(described)
        + ".",
    )
    print(
        f"The largest possible entropy over {len(keys)} keys is log2({len(keys)}) = {np.log2(len(keys)):.2f} bits; "
        f"at τ = 0.01 the entropy is {entropy_bits(softmax(scores / 0.01)):.2g} bits "
        f"(almost all weight on '{keys[int(np.argmax(scores))]}', the key with the largest score)."
    )

# %% [markdown]
# ## 3. Scaled dot-product attention, with masks
#
# Put the pieces together. For queries $Q$ `(..., T_q, d_k)`, keys $K$ `(..., T_k, d_k)` and values
# $V$ `(..., T_k, d_v)`:
#
# 1. scores $S = QK^\top/\sqrt{d_k}$, shape `(..., T_q, T_k)` (lesson 3);
# 2. weights $A = \operatorname{softmax}(S)$ along the **last** axis — each query's weights over the keys sum to 1;
# 3. output $O = AV$, shape `(..., T_q, d_v)`: row $i$ is the weighted average of the value rows.
#
# ### Masks
#
# Often a query must **not** look at some keys:
# * a *causal* mask in a model that writes text left to right: token $i$ may look at tokens $0,\dots,i$ but
#   not at later ones (they have not been written yet) — a lower-triangular pattern;
# * a *padding* mask: sentences in a batch are padded to the same length, and nobody should attend to the padding.
#
# **Our convention (the same as the boolean `attn_mask` of PyTorch's `F.scaled_dot_product_attention`).**
# `mask` is a boolean array that broadcasts against the scores `(..., T_q, T_k)`;
# **`True` means "query $i$ may attend to key $j$"**, `False` means the position is **blocked**.
# A blocked score is replaced by $-\infty$ *before* the softmax, so it gets weight $e^{-\infty} = 0$ and the
# remaining weights still sum to 1. (Careful when you read other code: the boolean `attn_mask` and
# `key_padding_mask` of `torch.nn.MultiheadAttention` mean the *opposite* — there `True` means blocked.
# Always check.)
#
# **A fully masked row** (a query that may attend to nothing) has no sensible weights: with every score
# $-\infty$, the softmax computes $0/0$, which is NaN. In this course such a row gets **all-zero weights
# and an all-zero output**, never NaN: a NaN would spread through every later layer and, in training,
# into every weight. PyTorch has not always agreed. `F.scaled_dot_product_attention` returns zeros for
# such rows only since PyTorch 2.5 (2024; releases before it returned NaN), and other PyTorch functions
# still return NaN. The second cell below asks the PyTorch installed here.

# %%
T = 5
causal = np.tril(np.ones((T, T), dtype=bool))  # True on and below the diagonal
print("causal mask for 5 tokens (1 = may attend):")
print(causal.astype(int))
print(f"allowed entries: {causal.sum()} of {causal.size} = T(T+1)/2 = {T * (T + 1) // 2}")

# %%
# A query that may attend to nothing: what does the PyTorch installed here give?
_rng = data.rng(3)
q, k, v = (torch.from_numpy(_rng.standard_normal(shape)) for shape in ((3, 4), (5, 4), (5, 4)))
may_attend = torch.ones(3, 5, dtype=torch.bool)
may_attend[1] = False  # query 1 may attend to no key
print(f"PyTorch {torch.__version__}, query 1 fully masked:")
print(
    "  F.scaled_dot_product_attention, output of query 1:",
    F.scaled_dot_product_attention(q, k, v, attn_mask=may_attend)[1].numpy(),
)
blocked_scores = (q @ k.T / 2).masked_fill(~may_attend, float("-inf"))
print("  torch.softmax of its row of -inf scores:          ", torch.softmax(blocked_scores, dim=-1)[1].numpy())
mha = torch.nn.MultiheadAttention(embed_dim=4, num_heads=1, batch_first=True, dtype=torch.float64)
mha_out, _ = mha(q[None], k[None], v[None], attn_mask=~may_attend)  # its boolean mask: True = blocked
print("  nn.MultiheadAttention, output of query 1:         ", mha_out[0, 1].detach().numpy())


# %% [markdown]
# ### Exercise 4.2 — `scaled_dot_product_attention` (4 points)
#
# Implement `scaled_dot_product_attention(Q, K, V, mask=None)` returning the tuple `(output, weights)`,
# output first, with shapes `(..., T_q, d_v)` and `(..., T_q, T_k)`, for any number of leading batch axes.
# * The scores are divided by $\sqrt{d_k}$, where $d_k$ is the width of the queries and keys (the last
#   axis of `Q`).
# * Each query's weights over the keys sum to 1; the output is the weights times `V`.
# * `mask=None` (the default) means every query may attend to every key. Otherwise `mask` is boolean,
#   `True` = may attend, of any shape that broadcasts against the scores (e.g. one `(T_q, T_k)` mask
#   for a whole batch, or a `(B, 1, 1, T_k)` padding mask for a batch of heads).
# * Blocked positions get weight exactly 0; a query whose keys are all blocked gets zero weights and a
#   zero output, without NaN.
#
# You may call your `softmax` from exercise 4.1. The checks call your function with PyTorch's softmax in
# place of yours, so a mistake in exercise 4.1 costs points only there.
#
# <details><summary>Hint</summary>
#
# `np.where(mask, scores, -np.inf)` blocks positions. To find the fully masked rows, give the mask the
# scores' full shape with `np.broadcast_to(mask, scores.shape)`; then `mask.any(axis=-1, keepdims=True)`
# is `False` exactly for those rows. Make sure the softmax never sees a row that is entirely `-inf`
# (give such rows any finite scores, and set their weights to 0 afterwards).
# </details>


# %% answer="sdpa"
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Scaled dot-product attention.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v)
    mask: None, or a boolean array broadcastable to (..., T_q, T_k); True = may attend, False = blocked
    returns (output (..., T_q, d_v), weights (..., T_q, T_k)); fully masked rows give zeros
    """
    ### BEGIN SOLUTION
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., T_q, T_k)
    if mask is None:
        weights = softmax(scores, axis=-1)
    else:
        mask = np.broadcast_to(mask, scores.shape)
        empty = ~mask.any(axis=-1, keepdims=True)  # rows with no allowed key
        scores = np.where(mask, scores, -np.inf)
        scores = np.where(empty, 0.0, scores)  # keep the softmax away from 0/0
        weights = np.where(empty, 0.0, softmax(scores, axis=-1))
    return weights @ V, weights
    ### END SOLUTION


# %% tests="sdpa-tests" points=4
# Visible checks. These call your function with PyTorch's softmax in place of your `softmax`, so that a
# mistake in exercise 4.1 costs points only there (your softmax was checked above).
def _reference_softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(np.asarray(x)), dim=axis).numpy()


_sdpa = checks.with_references(scaled_dot_product_attention, softmax=_reference_softmax)

# Worked example: T_q = 2 queries, T_k = 3 keys, d_k = 4 (so the scores are Q Kᵀ / 2) and d_v = 5.
_Q = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
_K = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [-1.0, -1.0, -1.0, -1.0]])
_V = np.array([[1.0, 0.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, 2.0, -1.0], [1.0, 1.0, 1.0, 0.0, 0.0]])
# scores = [[2, 0, -2], [0, 0, 0]]; weights = softmax of each row; output = weights @ V
_result = checks.call(_sdpa, _Q, _K, _V)
checks.expect(
    isinstance(_result, tuple) and len(_result) == 2,
    "scaled_dot_product_attention must return a tuple (output, weights).",
)
_out, _w = _result
checks.expect(
    not (checks.to_numpy(_out).shape == (2, 3) and checks.to_numpy(_w).shape == (2, 5)),
    "the tuple is the wrong way round: you returned (weights, output); return (output, weights), output first.",
)
checks.expect(
    checks.to_numpy(_out).shape != (2, 4),
    "the output has d_k = 4 columns: it must be the weights times V (d_v = 5 columns), not times K.",
)
checks.expect_close(
    _w,
    [[0.86681333, 0.11731043, 0.01587624], [1 / 3, 1 / 3, 1 / 3]],
    "the weights on the worked example",
    mistakes={
        "the scores are not scaled: divide by √d_k.": [[0.98169039, 0.01798029, 0.00032932], [1 / 3, 1 / 3, 1 / 3]],
        "you divided by d_k; divide by √d_k.": [[0.66524096, 0.24472847, 0.09003057], [1 / 3, 1 / 3, 1 / 3]],
        "you divided by √T_q, the number of queries (Q.shape[-2]); d_k is the width of the queries, Q.shape[-1].": [
            [0.94108857, 0.05562374, 0.00328768],
            [1 / 3, 1 / 3, 1 / 3],
        ],
        "the softmax runs over the queries (axis -2); each query's weights over the keys must sum to 1 (axis -1).": [
            [0.88079708, 0.5, 0.11920292],
            [0.11920292, 0.5, 0.88079708],
        ],
    },
)
checks.expect_close(
    _out,
    [[0.88268957, 0.13318667, 0.01587624, 1.96824752, 0.7495029], [2 / 3, 2 / 3, 1 / 3, 4 / 3, 0.0]],
    "the output on the worked example",
)

# Masks: query 0 may see every key, query 1 only key 1, query 2 nothing at all, query 3 keys 0 and 2.
_mask = np.array([[True, True, True], [False, True, False], [False, False, False], [True, False, True]])
_Q4 = np.repeat(_Q[:1], 4, axis=0)
_out, _w = _sdpa(_Q4, _K, _V, _mask)
checks.expect_finite(
    _w,
    "the weights with a fully masked row (query 2)",
    "A fully masked row must give zero weights and a zero output, not NaN: the softmax of a row "
    "that is entirely -inf is 0/0, so treat such rows separately.",
)
_w1 = checks.to_numpy(_w)[1]
checks.expect(
    not (abs(float(_w1[1])) < 1e-9 and abs(float(_w1.sum()) - 1) < 1e-6),
    "True in the mask means 'may attend' (as in F.scaled_dot_product_attention): you blocked the True "
    "positions instead of the False ones.",
)
checks.expect_close(_w[0], [0.86681333, 0.11731043, 0.01587624], "the weights of query 0 (nothing masked)")
checks.expect_close(
    _w[1],
    [0.0, 1.0, 0.0],
    "the weights of query 1 (only key 1 allowed)",
    mistakes={
        "the mask was ignored: blocked keys (False) must get weight 0.": [0.86681333, 0.11731043, 0.01587624],
        "blocked scores were set to 0 instead of -inf, so blocked keys still get weight.": [1 / 3, 1 / 3, 1 / 3],
        "the weights were masked after the softmax without renormalising: block the scores (set them to -inf) "
        "before the softmax.": [0.0, 0.11731043, 0.0],
    },
)
checks.expect_close(
    _w[2],
    [0.0, 0.0, 0.0],
    "the weights of query 2 (fully masked)",
    mistakes={
        "a fully masked row spreads its weight uniformly (as a large negative number like -1e9 does); it must "
        "give zero weights and a zero output.": [1 / 3, 1 / 3, 1 / 3],
    },
)
checks.expect_close(_w[3], [0.98201379, 0.0, 0.01798621], "the weights of query 3 (keys 0 and 2 allowed)")
checks.expect_close(
    _out[:3],
    [
        [0.88268957, 0.13318667, 0.01587624, 1.96824752, 0.7495029],
        [0.0, 1.0, 0.0, 2.0, -1.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
    ],
    "the output of queries 0-2 with the mask",
)

# A causal mask on 4 tokens (d_k = 6, values of width 3): nothing above the diagonal, every row sums to 1.
_rng = np.random.default_rng(0)
_X, _Vx = _rng.standard_normal((4, 6)), _rng.standard_normal((4, 3))
_out, _w = _sdpa(_X, _X, _Vx, np.tril(np.ones((4, 4), dtype=bool)))
checks.expect_close(np.triu(checks.to_numpy(_w), k=1), np.zeros((4, 4)), "the weights above the diagonal (causal mask)")
checks.expect_close(checks.to_numpy(_w).sum(-1), np.ones(4), "the row sums of the causal weights")
checks.expect_close(_out[0], _Vx[0], "the output of token 0 under a causal mask (it can only see itself)")


### BEGIN HIDDEN TESTS
def _sdpa_hidden():
    rng = np.random.default_rng(42)
    B, H, T_q, T_k, d_k, d_v = 2, 3, 5, 7, 16, 6  # all distinct; √16 = 4 ≠ 16 / 2
    Q, K, V = (rng.standard_normal((B, H, T, d)) for T, d in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
    tQ, tK, tV = (torch.from_numpy(a) for a in (Q, K, V))

    def reference(mask=None, divisor=4.0, dim=-1, fill=float("-inf"), after=False):
        s = tQ @ tK.transpose(-1, -2) / divisor
        if mask is not None and not after:
            s = s.masked_fill(~torch.from_numpy(np.broadcast_to(mask, s.shape).copy()), fill)
        w = torch.softmax(s, dim=dim).nan_to_num(0.0)
        if mask is not None and after:
            w = w * torch.from_numpy(np.broadcast_to(mask, s.shape).copy())
        return (w @ tV).numpy(), w.numpy()

    def run(*args, what, **kwargs):
        result = _sdpa(*args, **kwargs)
        checks.expect(
            isinstance(result, tuple) and len(result) == 2,
            f"{what}: scaled_dot_product_attention must return a tuple (output, weights).",
        )
        out, w = result
        T_keys, d_values = args[1].shape[-2], args[2].shape[-1]
        checks.expect(
            not (checks.to_numpy(out).shape[-1:] == (T_keys,) and checks.to_numpy(w).shape[-1:] == (d_values,)),
            f"{what}: the tuple is the wrong way round: you returned (weights, output); "
            "return (output, weights), output first.",
        )
        return out, w

    scale_mistakes = {
        "the scores are not scaled: divide by √d_k.": reference(divisor=1.0),
        "you divided by d_k; divide by √d_k.": reference(divisor=16.0),
        "you divided by √T_q, the number of queries (Q.shape[-2]); d_k is Q.shape[-1].": reference(
            divisor=np.sqrt(T_q)
        ),
        "the softmax runs over the queries (axis -2); it must run over the keys (axis -1).": reference(dim=-2),
    }
    # 1. no mask, batch of (2, 3)
    out, w = run(Q, K, V, what="no mask")
    checks.expect_close(
        w,
        reference()[1],
        "the weights for a (2, 3) batch, T_q = 5, T_k = 7, d_k = 16",
        mistakes={k: v[1] for k, v in scale_mistakes.items()},
    )
    checks.expect_close(
        out,
        F.scaled_dot_product_attention(tQ, tK, tV).numpy(),
        "the output for a (2, 3) batch, compared with F.scaled_dot_product_attention",
        mistakes={k: v[0] for k, v in scale_mistakes.items()},
    )
    # 2. one (T_q, T_k) mask for the whole batch, passed by name: a row with a single allowed key and a fully masked row
    mask = rng.random((T_q, T_k)) < 0.5
    mask[:, 0] = True
    mask[2] = False
    mask[2, 5] = True  # query 2 may only see key 5
    mask[4] = False  # query 4 may see nothing
    out, w = run(Q, K, V, mask=mask, what="with a mask")
    checks.expect_finite(
        w,
        "the weights with a fully masked row",
        "a fully masked row must give zero weights and a zero output, not NaN.",
    )
    checks.expect_finite(
        out,
        "the output with a fully masked row",
        "a fully masked row must give zero weights and a zero output, not NaN.",
    )
    mistakes = {
        "True in the mask means 'may attend': you blocked the True positions instead of the False ones.": reference(
            ~mask
        ),
        "blocked scores were set to 0 instead of -inf, so blocked keys still get weight.": reference(mask, fill=0.0),
        "a fully masked row spreads its weight uniformly (as a large negative number like -1e9 does); it must "
        "give zero weights and a zero output.": reference(mask, fill=-1e9),
        "the weights were masked after the softmax without renormalising: block the scores (set them to -inf) "
        "before the softmax.": reference(mask, after=True),
        "the mask was ignored.": reference(),
    }
    checks.expect_close(
        w,
        reference(mask)[1],
        "the weights with a (5, 7) mask on a (2, 3) batch",
        mistakes={k: v[1] for k, v in mistakes.items()},
    )
    checks.expect_close(
        out,
        F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(mask)).numpy(),
        "the output with a mask, compared with F.scaled_dot_product_attention",
        mistakes={k: v[0] for k, v in mistakes.items()},
    )
    checks.expect_close(checks.to_numpy(out)[..., 4, :], np.zeros((B, H, d_v)), "the output of the fully masked query")
    checks.expect_close(checks.to_numpy(out)[..., 2, :], V[..., 5, :], "the output of a query that may only see key 5")
    # 3. a padding mask of shape (B, 1, 1, T_k): sequence 1 has only 4 real keys
    padding = np.ones((B, 1, 1, T_k), dtype=bool)
    padding[1, ..., 4:] = False
    out, w = run(Q, K, V, padding, what="with a (B, 1, 1, T_k) padding mask")
    checks.expect_close(
        out,
        F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(padding)).numpy(),
        "the output with a (2, 1, 1, 7) padding mask, compared with F.scaled_dot_product_attention",
    )
    checks.expect_close(checks.to_numpy(w)[1, ..., 4:], np.zeros((H, T_q, 3)), "the weights on the padded keys")
    # 4. causal attention of a sequence to itself, mask with the full batch shape, values different from the keys
    X = rng.standard_normal((3, 6, 16))
    Vx = rng.standard_normal((3, 6, 5))
    causal = np.broadcast_to(np.tril(np.ones((6, 6), dtype=bool)), (3, 6, 6))
    out, w = run(X, X, Vx, causal, what="causal")
    tX, tVx = torch.from_numpy(X), torch.from_numpy(Vx)
    checks.expect_close(
        out,
        F.scaled_dot_product_attention(tX, tX, tVx, is_causal=True).numpy(),
        "causal attention of X to itself, compared with F.scaled_dot_product_attention(is_causal=True)",
    )
    checks.expect_close(np.triu(checks.to_numpy(w), k=1), np.zeros((3, 6, 6)), "the causal weights above the diagonal")
    # 5. no batch axes, extreme scores, mask=None passed by name: stays finite
    q, k, v = 40 * rng.standard_normal((3, 16)), 40 * rng.standard_normal((4, 16)), rng.standard_normal((4, 2))
    out, w = run(q, k, v, mask=None, what="large scores")
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))).numpy()
    checks.expect_finite(out, "the output for very large scores", "subtract the maximum before exponentiating.")
    checks.expect_close(out, want, "the output for large scores without batch axes")


_sdpa_hidden()
### END HIDDEN TESTS
checks.passed("scaled_dot_product_attention")

# %% [markdown]
# Your function on a causal example: four tokens attending to themselves and to earlier tokens only.
# Here the queries, the keys and the values are all the same four embeddings, `X`: the sequence attends
# to itself. That is called **self-attention**. Lesson 5 gives it learned projections (queries, keys and
# values become three different views of `X`) and also shows **cross-attention**, where the queries come
# from one sequence and the keys and values from another.

# %%
tokens = "the cat sat down".split()
X = data.embed(tokens, 8)
with ac.student_code("scaled_dot_product_attention"):
    out, weights = scaled_dot_product_attention(X, X, X, np.tril(np.ones((4, 4), dtype=bool)))
    fig, ax = plt.subplots(figsize=(4.6, 3.4), layout="constrained")
    plots.attention_heatmap(weights, tokens, ax=ax, title="Causal self-attention, d_k = 8 (your function)")
    plots.show(
        fig,
        name="04_causal_self_attention",
        alt=f"Heatmap of causal self-attention weights of '{' '.join(tokens)}' (queries down, keys across): "
        f"zero above the diagonal; the first row puts {weights[0, 0]:.2f} on itself; the last row "
        f"spreads {', '.join(f'{x:.2f}' for x in weights[-1])} over the four tokens.",
    )
    print("row sums:", weights.sum(axis=-1), "— the first token can only attend to itself:", weights[0])

# %% [markdown]
# ## 4. Explore: $d_k$ and temperature
#
# The explorer runs **your** `scaled_dot_product_attention` on a six-word sentence. Queries and keys
# are random projections of fixed word embeddings with $d_k$ entries of unit variance; the queries are
# divided by the temperature $\tau$ (which divides every score by $\tau$). Left: the attention weights,
# queries down, keys across. Right: the entropy of each query's row (the black ticks mark the
# largest possible value, $\log_2$ of the number of keys the query may see).
#
# * Move **d_k** at $\tau = 1$: thanks to the $\sqrt{d_k}$, the rows change little as $d_k$ grows from 2 to
#   512. The cell after the explorer measures this, and what the same scores would do without the scaling.
# * Lower the **temperature**: every row's entropy falls and its largest weight grows. As $\tau \to 0$ a
#   row puts all its weight on its highest-scoring key (section 2), or splits it evenly between the two
#   copies of "the", which have the same key (at $d_k = 16$, $\tau = 0.1$ two rows do). Raise it to 5: every row
#   comes close to uniform, its bar close to its tick.
# * Switch the **mask** to causal: the upper triangle is blocked, and the first row, which may see
#   only itself, has entropy 0.

# %%
sentence = data.SHORT_SENTENCE
n_tokens = len(sentence)


def explorer_inputs(d_k, temperature):
    """Queries (divided by the temperature), keys and values for the sentence: random projections."""
    rng = data.rng(7)
    X = data.embed(sentence, d_k)  # (6, d_k), unit variance
    W_Q, W_K = rng.standard_normal((2, d_k, d_k)) / np.sqrt(d_k)
    return X @ W_Q / temperature, X @ W_K, X


class TemperatureView(widgets.View):
    """Left: your attention weights; right: the entropy of each row. Built once, updated in place."""

    def build(self, d_k, temperature, mask):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [1.5, 1]})
        # a heatmap as in plots.attention_heatmap, drawn as a mesh (much faster to redraw than an image)
        self.mesh = ax1.pcolormesh(np.zeros((n_tokens, n_tokens)), cmap=plots.SEQUENTIAL, vmin=0, vmax=1)
        ax1.set_xticks(np.arange(n_tokens) + 0.5, sentence, rotation=60, ha="right")
        ax1.set_yticks(np.arange(n_tokens) + 0.5, sentence)
        ax1.invert_yaxis()
        ax1.set_xlabel("key (token attended to)")
        ax1.set_ylabel("query (token attending)")
        self.title = ax1.set_title(" ")
        fig.colorbar(self.mesh, ax=ax1, fraction=0.046, pad=0.04, label="weight")
        self.bars = ax2.barh(range(n_tokens), np.zeros(n_tokens), color=plots.COLORS[0])
        (self.ticks,) = ax2.plot(np.zeros(n_tokens), range(n_tokens), "|", color="black", ms=14, mew=2)
        ax2.set_yticks(range(n_tokens), sentence)
        ax2.invert_yaxis()
        ax2.set_xlim(0, np.log2(n_tokens) + 0.2)
        ax2.set_xlabel("row entropy in bits (| = largest possible)")
        self.entropy_title = ax2.set_title(" ")
        fig.subplots_adjust(left=0.09, right=0.96, bottom=0.22, top=0.9, wspace=0.45)
        self.dynamic = [self.mesh, *self.bars, self.ticks, self.title, self.entropy_title]
        return fig

    def update(self, d_k, temperature, mask):
        Q, K, X = explorer_inputs(d_k, temperature)
        allowed = np.tril(np.ones((n_tokens, n_tokens), dtype=bool)) if mask == "causal" else None
        _, weights = scaled_dot_product_attention(Q, K, X, allowed)  # yours
        self.weights = np.asarray(weights, dtype=float).reshape(n_tokens, n_tokens)
        self.H = entropy_bits(self.weights)
        self.H_max = np.log2(np.arange(1, n_tokens + 1)) if mask == "causal" else np.full(n_tokens, np.log2(n_tokens))
        self.mesh.set_array(self.weights.ravel())
        for bar, h in zip(self.bars, self.H):
            bar.set_width(h)
        self.ticks.set_xdata(self.H_max)
        self.title.set_text(f"your weights: d_k = {d_k}, τ = {temperature:.2f}, mask: {mask}")
        self.entropy_title.set_text(f"mean entropy {self.H.mean():.2f} bits")

    def alt(self, d_k, temperature, mask):
        peaks = ", ".join(
            f"{t} → {sentence[j]} {w:.2f}"
            for t, j, w in zip(sentence, self.weights.argmax(axis=1), self.weights.max(axis=1))
        )
        return (
            f"Heatmap of your attention weights on '{' '.join(sentence)}' with d_k = {d_k}, τ = {temperature:.2f}, "
            f"mask {mask}, and a bar chart of each row's entropy: mean {self.H.mean():.2f} bits of at most "
            f"{self.H_max.mean():.2f}. Largest weight of each row: {peaks}."
        )


widgets.explore(
    TemperatureView(),
    needs=["softmax", "scaled_dot_product_attention"],
    d_k=widgets.choice_slider("d_k", [2**i for i in range(1, 10)], 16),
    temperature=widgets.float_slider("temperature τ", 0.1, 5.0, 1.0, step=0.1),
    mask=widgets.dropdown("mask", ["none", "causal"]),
)

# %% [markdown]
# What moving **d_k** does at $\tau = 1$, measured with your function: the mean entropy of the six rows
# (no mask; at most $\log_2 6 \approx 2.58$ bits), with the scaling and, for comparison, for the same
# queries and keys without it (multiplying the queries by $\sqrt{d_k}$ undoes your division).

# %%
with ac.student_code("scaled_dot_product_attention"):
    mean_entropy = {}
    for d_k in (2, 8, 32, 128, 512):
        Q, K, X = explorer_inputs(d_k, 1.0)
        scaled = entropy_bits(scaled_dot_product_attention(Q, K, X)[1]).mean()
        unscaled = entropy_bits(scaled_dot_product_attention(Q * np.sqrt(d_k), K, X)[1]).mean()
        mean_entropy[d_k] = scaled, unscaled
        print(f"d_k = {d_k:3d}: mean row entropy {scaled:.2f} bits scaled, {unscaled:.2f} bits without the scaling")
    (s2, u2), (s512, u512) = mean_entropy[2], mean_entropy[512]
    print(
        f"from d_k = 2 to 512 the mean entropy falls by {s2 - s512:.2f} bits with the scaling "
        f"and by {u2 - u512:.2f} bits without it"
    )

# %% [markdown]
# With the scaling the rows stay spread over several keys at every $d_k$; without it the same queries and
# keys give rows that are close to one-hot at large $d_k$ (mean entropy near 0 bits): the saturated
# softmax of lesson 3.

# %% [markdown]
# ## 5. Experiment: your attention equals PyTorch's, and the formula as written overflows
#
# **Claim 1.** Your functions compute the same numbers as PyTorch's `torch.softmax` and
# `F.scaled_dot_product_attention` (which we use from lesson 5 on). We compare them on a batch of
# 2 sentences × 4 heads × 9 tokens with $d_k = 16$ in float64 — without a mask, with a causal mask and
# with a random padding-style mask — and print the largest absolute difference. Anything at the level of
# $10^{-15}$ is rounding; the course requires at most $10^{-6}$.

# %%
rng = data.rng(8)
Qb, Kb, Vb = (rng.standard_normal((2, 4, 9, 16)) for _ in range(3))
tQb, tKb, tVb = (torch.from_numpy(a) for a in (Qb, Kb, Vb))
padding = np.ones((2, 1, 9, 9), dtype=bool)
padding[1, ..., 6:] = False  # sentence 2 is 6 tokens long: keys 6–8 are padding
cases = {"no mask": None, "causal mask": np.tril(np.ones((9, 9), dtype=bool)), "padding mask": padding}
with ac.student_code("scaled_dot_product_attention"):
    logits = 30 * rng.standard_normal((2, 4, 9, 9))
    d_softmax = np.abs(softmax(logits) - torch.softmax(torch.from_numpy(logits), dim=-1).numpy()).max()
    print(f"softmax vs torch.softmax: max abs difference {d_softmax:.1e}")
    for name, m in cases.items():
        out, _ = scaled_dot_product_attention(Qb, Kb, Vb, m)
        ref = F.scaled_dot_product_attention(tQb, tKb, tVb, attn_mask=None if m is None else torch.from_numpy(m))
        diff = np.abs(np.asarray(out) - ref.numpy()).max()
        print(
            f"attention, {name:12s} vs F.scaled_dot_product_attention: max abs difference {diff:.1e} "
            f"({'within' if diff <= 1e-6 else 'NOT within'} 1e-6)"
        )

# %% [markdown]
# **Claim 2.** The formula as written fails as soon as a logit passes $\ln(\text{largest number})$,
# while a stable softmax never does. We feed rows of logits $s\cdot u$ — a fixed pattern $u$ with
# entries in $[-1, 1]$ and largest entry 1, scaled by $s$ from 1 to 10,000 — to the formula as written and to
# `torch.softmax` (which subtracts the maximum, like yours), in float32 and float64, and measure the error
# against a float64 stable reference. A NaN result is drawn as error 1 (the largest error two
# probability distributions can have per entry).

# %%
u = np.array([1.0, 0.6, 0.1, -0.3, -1.0])
s_values = np.logspace(0, 4, 401)
reference = torch.softmax(torch.from_numpy(s_values[:, None] * u), dim=-1).numpy()  # (401, 5)

fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
first_failure, stable_error = {}, {}
for dtype, colour in ((np.float32, plots.COLORS[5]), (np.float64, plots.COLORS[0])):
    name = np.dtype(dtype).name
    logits = (s_values[:, None] * u).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    stable = torch.softmax(torch.from_numpy(logits), dim=-1).numpy()
    for values, style, label in (
        (stable, dict(ls="--", lw=3, alpha=0.5), "stable (max subtracted)"),
        (naive, dict(ls="-", lw=1.2), "formula as written"),
    ):
        err = np.abs(values.astype(np.float64) - reference).max(axis=-1)
        err = np.where(np.isfinite(err), err, 1.0)
        ax.loglog(s_values, np.maximum(err, 1e-18), color=colour, label=f"{label}, {name}", **style)
    first_failure[name] = s_values[~np.isfinite(naive).all(axis=-1)].min()
    stable_error[name] = np.abs(stable.astype(np.float64) - reference).max()  # NaN if not finite
    ax.axvline(np.log(np.finfo(dtype).max), color=colour, lw=0.8, ls=":")
ax.set_xlabel("logit scale s (largest logit)")
ax.set_ylabel("max abs error (NaN as 1, exact as 1e-18)")
ax.set_title("Softmax of s·u, s from 1 to 10,000: formula as written vs stable")
ax.legend(loc="upper left")
plots.show(
    fig,
    name="04_naive_vs_stable",
    alt="Log-log plot of the largest error of softmax(s·u) against the logit scale s from 1 to 10,000. "
    + "; ".join(
        f"{name}: the formula as written jumps to NaN (drawn as error 1) at s = {s_fail:.1f}, "
        f"just past the dotted line at ln(max) = {np.log(np.finfo(name).max):.1f}, while the "
        f"stable softmax's error stays at most {stable_error[name]:.1g}"
        + (" (it is the reference itself)" if stable_error[name] == 0 else "")
        for name, s_fail in first_failure.items()
    )
    + ".",
)
print(
    f"the grid of s has {len(s_values)} points, each {100 * (s_values[1] / s_values[0] - 1):.1f} % above the previous"
)
for name, s_fail in first_failure.items():
    print(
        f"{name}: the formula as written first returns NaN at s = {s_fail:.1f} "
        f"(ln of the largest {name} is {np.log(np.finfo(name).max):.1f}, the dotted line); "
        f"the stable softmax's largest error for s up to {s_values.max():.0f} is {stable_error[name]:.1g}"
        + (" (float64 torch.softmax is the reference itself)." if stable_error[name] == 0 else ".")
    )

# %% [markdown]
# The dotted lines mark $\ln(\text{max})$ for each type: each naive curve jumps to "NaN" at the first $s$
# of the grid past its line (float32 fails first), while the stable versions stay at rounding level
# (the largest errors printed above) all the way to $s = 10{,}000$. Your attention agrees with
# PyTorch's to rounding error with and without masks, so from lesson 5 on we use `torch.softmax` and
# `F.scaled_dot_product_attention` and build on top of them.

# %% [markdown]
# ## 6. Let's review
#
# * Softmax turns a row of scores into positive weights that sum to 1 and keep the scores' order.
#   Adding a constant to every score changes nothing.
# * The formula as written overflows once a logit exceeds $\ln(\text{max})$ of its floating-point type
#   (printed in section 1 for float32 and float64). Subtracting the row maximum first makes every exponent $\le 0$ — the stable softmax.
# * A temperature $\tau$ divides the scores: $\tau<1$ sharpens the weights (entropy → 0 as $\tau \to 0$ when
#   one score is the largest), $\tau>1$ flattens them (entropy → $\log_2 n$ as $\tau \to \infty$).
#   $\sqrt{d_k}$ is a temperature fixed by the statistics of lesson 3: in section 4 the mean entropy moved
#   by about half a bit from $d_k = 2$ to 512 with it, and by more than 2 bits without it.
# * Scaled dot-product attention: $\operatorname{softmax}(QK^\top/\sqrt{d_k})\,V$, softmax over the **keys**
#   (last axis), returning the output and the weights.
# * A boolean mask with `True` = may attend blocks positions by setting their scores to $-\infty$; a
#   causal mask allows $T(T+1)/2$ of the $T^2$ pairs. In this course a fully masked row gives zeros, not
#   NaN, as `F.scaled_dot_product_attention` does since PyTorch 2.5 (`torch.softmax` and
#   `nn.MultiheadAttention` give NaN in the PyTorch installed here, as printed in section 3).
# * When the queries, keys and values all come from one sequence, attention is *self-attention*.
# * Your implementation matches `F.scaled_dot_product_attention` to rounding error.
#
# Next lesson: where $Q$, $K$ and $V$ come from — learned projections of the token embeddings.

# %% [markdown]
# ## 7. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format only; the
# answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** The attention weights of one sentence have shape `(T_q, T_k)`. Along which axis
# does the softmax normalise?
#
# * **a** — axis 0: for each key, the weights over the queries sum to 1
# * **b** — the last axis: for each query, the weights over the keys sum to 1
# * **c** — both axes: the whole matrix sums to 1
# * **d** — none: softmax does not normalise

# %% quiz="quiz-softmax-axis" choices="abcd" key="b" points=1

# %% [markdown]
# **Q2 (1 point).** A causal mask for a sequence of $T = 6$ tokens: how many (query, key) pairs are
# allowed (`True`)?

# %% quiz="quiz-causal-count" key="6 * 7 // 2" points=1
q2_answer = 6 * (6 + 1) // 2  # T(T+1)/2 for T = 6

# %% [markdown]
# **Q3 (1 point).** What is the first entry of $\operatorname{softmax}([1000, 1000, 1000, 1000])$
# (computed correctly)?

# %% quiz="quiz-equal-logits" key="1 / 4" points=1
q3_answer = 1 / 4  # four equal logits: uniform weights

# %% [markdown]
# **Q4 (1 point).** What happens to the softmax of fixed scores as the temperature $\tau$ goes towards 0?
#
# * **a** — the weights become uniform
# * **b** — the weights become NaN
# * **c** — all the weight moves to the largest score (a hard $\arg\max$)
# * **d** — the order of the weights reverses

# %% quiz="quiz-temperature" choices="abcd" key="c" points=1

# %% [markdown]
# **Q5 (1 point).** A query may attend to 8 keys. What is the largest possible entropy of its row of
# weights, in bits?

# %% quiz="quiz-max-entropy" key="np.log2(8)" points=1
q5_answer = np.log2(8)  # uniform over 8 keys

# %% [markdown]
# **Q6 (1 point).** In your `scaled_dot_product_attention` (whose boolean mask means the same as the
# `attn_mask` of `F.scaled_dot_product_attention`), what does a `False` entry at `mask[i, j]` mean, and
# what does a row of all `False` give?
#
# * **a** — query $i$ may attend to key $j$; an all-`False` row gives uniform weights
# * **b** — query $i$ may not attend to key $j$; an all-`False` row gives NaN
# * **c** — query $i$ may not attend to key $j$; an all-`False` row gives zero weights and a zero output
# * **d** — key $j$ is removed from every row of the batch

# %% quiz="quiz-mask-convention" choices="abcd" key="c" points=1

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** A classmate's softmax is
# `np.exp(x) / np.exp(x).sum(-1, keepdims=True)`. It passed all their tests on small random numbers.
# In 3–5 sentences, explain when and why it fails, why subtracting the row maximum fixes it without
# changing the result, and why the maximum must be taken per row rather than over the whole array.

# %% [markdown] manual="quiz-free-stable-softmax" points=3
# ### BEGIN SOLUTION
# *Model answer.* $e^{x}$ overflows to `inf` once $x$ exceeds the log of the largest representable
# number (about 89 in float32, 710 in float64, as measured here), and `inf / inf` is NaN; very negative
# rows underflow to $0/0$. Small random test inputs never get near these limits, so the bug stays
# hidden until large (e.g. unscaled, or trained) scores appear. Subtracting a constant from every
# entry of a row multiplies numerator and denominator by the same $e^{-c}$, which cancels, so the
# result is unchanged; with $c$ the row maximum every exponent is $\le 0$ (no overflow) and one term is
# $e^0 = 1$ (the denominator is at least 1, never 0). The maximum must be per row because each row is
# its own distribution: with a global maximum, a row whose scores are all far below it (e.g. around
# −1000 next to a row around +1000) underflows to $0/0$ again.
#
# *Rubric (3 points).* 1 point: names overflow (inf/inf → NaN, or underflow to 0/0) for large
# magnitude logits, with the rough threshold or the reason small tests miss it. 1 point: shift
# invariance — the common factor $e^{-c}$ cancels, so the result is the same — and why the max makes
# exponents ≤ 0 and the denominator ≥ 1. 1 point: per-row maximum, because rows are independent
# distributions and a global maximum lets other rows underflow. No point for restating the question.
# ### END SOLUTION
