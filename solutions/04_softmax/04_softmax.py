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
# **Attention, from the dot product up** · lesson 4 · about 80 minutes
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
#    and fully masked rows, and check it against `torch.nn.functional.scaled_dot_product_attention`;
# 5. write the average of each token's past as a matrix product and as a masked softmax, the first step
#    from averaging to causal attention.
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
from decimal import Decimal, localcontext

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
# * every output is **positive** in exact arithmetic (an exponential is never negative or zero);
# * the outputs **sum to 1** (we divide by their total), so they form a probability distribution,
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
# Your `soft_lookup` in lesson 2 used the formula exactly as written, which is fine for the small scores
# of the video library. But a floating-point number has a largest value: $e^{z}$ exceeds it as soon as $z$
# is larger than $\ln(\text{largest number})$, and then numpy returns `inf`; `inf / inf` is `nan`. It also
# has a smallest positive value: $e^{z}$ for a very negative $z$ rounds to exactly 0, and when every
# $e^{z_j}$ of a row does, the division becomes $0/0$. The cell below computes both limits and tries the
# formula as written on scores of about ±1000.

# %%
for dtype in (np.float32, np.float64):
    info = np.finfo(dtype)
    underflow = np.log(float(info.smallest_subnormal)) - np.log(2)  # below this, e^z rounds to exactly 0
    print(
        f"{info.dtype}: e^z overflows for z > ln(max) = {np.log(info.max):.2f} "
        f"and rounds to exactly 0 for z < {underflow:.2f}"
    )

print(f"unscaled scores of a d_k = 512 head have a standard deviation of about √512 = {np.sqrt(512):.1f} (lesson 3)")

z_big = np.array([1000.0, 999.0, 998.0])
with np.errstate(over="ignore", invalid="ignore"):  # silence numpy's overflow warnings here
    naive_big = np.exp(z_big) / np.exp(z_big).sum()
    naive_small = np.exp(-z_big) / np.exp(-z_big).sum()
print("formula as written on", z_big, "->", naive_big)
print("formula as written on", -z_big, "->", naive_small)


# %% [markdown]
# Scores of 1000 are not exotic: the *unscaled* scores of a $d_k = 512$ head already spread about
# $\sqrt{512} \approx 23$ either side of 0 (lesson 3), a trained model's logits can be far larger, and in
# float32 (PyTorch's default type) the limit is below 89 (both printed above). The fix uses the shift
# property (your `kernel_lookup` of lesson 2 used it against underflow): subtract the **largest** score
# $m = \max_j z_j$ first,
#
# $$\operatorname{softmax}(z)_i = \frac{e^{z_i - m}}{\sum_j e^{z_j - m}} .$$
#
# Now every exponent is $\le 0$, so no $e^{\cdot}$ can overflow, and the largest one is exactly
# $e^0 = 1$, so the denominator is at least 1 and can never be 0. The result is mathematically identical.
#
# Underflow does not go away, and it need not: a score more than about 104 below its row's largest
# (float32; about 745 in float64, printed above) gets a weight that rounds to exactly 0. So in floating
# point a softmax *can* give exactly 0, for scores that would get a weight far too small to matter.

# %% [markdown]
# ### Exercise 4.1 — a stable softmax (3 points)
#
# Implement `softmax(x, axis=-1)` for a numpy array of any shape, normalising along `axis`
# (each slice along that axis sums to 1; by default the last axis). It must return finite values, within
# about $10^{-6}$ of the exact softmax of the numbers it is given, for logits around ±1000, in float32 and
# in float64 (so compute in the type of `x`, or a wider one), and give weight exactly 0 to a score of
# `-np.inf` (a blocked position, used in section 3) as long as the slice has at least one finite score.
# (A slice that is entirely `-np.inf` has no meaningful answer; exercise 4.2 deals with it.) It must leave
# `x` unchanged, because the caller may still need its scores after the softmax: compute `x - m` into a
# new array (`x -= m` would overwrite the caller's array).
#
# <details><summary>Hint 1: the idea</summary>
#
# Use the shift property: subtract a constant from every score of a slice so that the largest exponent
# is 0. Each slice along `axis` is its own distribution, so each needs its own constant.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The constant of each slice is its maximum, taken along `axis` only, not over the whole array:
# `m = x.max(axis=axis, keepdims=True)`. `keepdims=True` keeps the reduced axis with size 1, so that
# `x - m` broadcasts slice by slice.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.exp(x - m)`, then divide by its sum along the same axis, again with `keepdims=True`.
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
# Visible checks: a worked example, rows summing to 1, the axis argument, logits of ±1000, and x left unchanged.
checks.expect_close(
    checks.call(softmax, np.array([1.0, 2.0, 3.0])),
    [0.09003057, 0.24472847, 0.66524096],
    "softmax([1, 2, 3])",
    mistakes={
        "the exponentials are not divided by their sum.": np.exp([1.0, 2.0, 3.0]),
        "the scores are divided by their sum without the exponential.": [1 / 6, 2 / 6, 3 / 6],
    },
)
_x = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
_whole = {"the whole array sums to 1, not each row: normalise along `axis` only.": [0.78734471, 0.21265529]}
_keep = "Take the maximum and the sum along `axis` with keepdims=True, so that they broadcast against x."
_sums = checks.to_numpy(checks.attempt(softmax, _x, what="softmax(x) of a (2, 3) array", hint=_keep)).sum(-1)
checks.expect_close(_sums, [1.0, 1.0], "the row sums of softmax(x)", mistakes=_whole)
_rows = {"softmax(x, axis=0) normalised the rows: use the `axis` argument.": [0.42336391, 0.5780618, 0.99857429]}
_cols = checks.attempt(softmax, _x, axis=0, what="softmax(x, axis=0)", hint=_keep)
checks.expect_close(checks.to_numpy(_cols).sum(0), [1, 1, 1], "the column sums of softmax(x, axis=0)", mistakes=_rows)
_hint = "subtract the maximum of each row (along `axis`, with keepdims=True) before exponentiating."
for _dtype in (np.float32, np.float64):
    _what = f"softmax of logits around ±1000 in {np.dtype(_dtype).name}"
    _out = softmax(np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, -1000.0]], dtype=_dtype))
    checks.expect_finite(_out, _what, "exp(1000) overflows to inf and exp(-1000) rounds to 0: " + _hint)
    checks.expect_close(_out, [[0.66524096, 0.24472847, 0.09003057], [0.21194156, 0.57611688, 0.21194156]], _what)
_blocked = "-inf is a blocked position: subtract the maximum of each row (not its mean or minimum): exp(-inf) = 0."
_z = softmax(np.array([0.0, -np.inf, np.log(3.0)]))
checks.expect_finite(_z, "softmax of [0, -inf, ln 3] (a blocked position)", _blocked)
checks.expect_close(_z, [0.25, 0.0, 0.75], "softmax of [0, -inf, ln 3] (a blocked position)")
_in_place = "softmax changed the array it was given (`x -= ...` works in place): compute `x - m` into a new array."
_x = np.array([[1000.0, 999.0, 998.0], [-1.0, 0.0, 2.0]])
_before = _x.copy()
checks.call(softmax, _x)
checks.expect(np.array_equal(_x, _before), _in_place)


### BEGIN HIDDEN TESTS
def _softmax_hidden():
    rng = np.random.default_rng(21)
    ref = lambda a, axis=-1: torch.softmax(torch.from_numpy(np.asarray(a, np.float64)), dim=axis).numpy()
    x = 30 * rng.standard_normal((3, 4, 5))
    for axis in (-1, 0, 1, -2):
        what, out = f"softmax of a (3, 4, 5) array along axis {axis}", softmax(x, axis=axis)
        checks.expect_finite(out, what, _hint)
        last = {f"softmax(x, axis={axis}) normalised along the last axis: use the `axis` argument.": ref(x)}
        checks.expect_close(out, ref(x, axis), what, mistakes=last if axis != -1 else None)
    s = 50 * rng.standard_normal((4, 4))  # square: row maxima taken without keepdims broadcast along the wrong axis
    e = np.exp(s - s.max(axis=-1))
    no_keepdims = {"the row maxima were subtracted without keepdims=True.": e / e.sum(-1, keepdims=True)}
    checks.expect_close(softmax(s), ref(s), "softmax of a (4, 4) matrix", mistakes=no_keepdims)
    for dtype in (np.float32, np.float64):  # rows on very different scales
        big = (1000 * rng.uniform(-1, 1, (6, 7))).astype(dtype)
        big[0], big[1], big[2, :3] = 1000.0, -1000.0, [1000.0, -1000.0, 0.0]
        what = f"softmax of logits in [-1000, 1000] ({np.dtype(dtype).name})"
        checks.expect_finite(softmax(big), what, _hint)
        checks.expect_close(softmax(big), ref(big), what)
        checks.expect_close(softmax(big.T, axis=0), ref(big).T, what + " along axis 0")
    z = np.array([[0.0, -np.inf, 1.0, -np.inf], [-np.inf, 2.0, -np.inf, -np.inf]])  # -inf: blocked positions
    blocked = "-inf is a blocked position: subtract the row MAXIMUM (not the minimum) so that exp(-inf) = 0."
    checks.expect_finite(softmax(z), "softmax of scores with -inf entries", blocked)
    want = np.array([[1, 0, np.e, 0], [0, 1 + np.e, 0, 0]]) / (1 + np.e)
    checks.expect_close(softmax(z), want, "softmax of scores with -inf entries")
    checks.expect_close(softmax(np.array([5.0])), [1.0], "softmax of a single score")
    for dtype, axis in ((np.float32, 0), (np.float64, -1)):  # the caller's array, unchanged along any axis
        x = (30 * rng.standard_normal((4, 5))).astype(dtype)
        before = x.copy()
        softmax(x, axis=axis)
        checks.expect(np.array_equal(x, before), _in_place)


_softmax_hidden()
### END HIDDEN TESTS
checks.passed("softmax")


# %% [markdown]
# ## 2. Temperature: sharper or flatter
#
# Dividing all scores by a positive number $\tau$ (tau), the **temperature**, before the softmax changes how
# peaked the weights are, without changing their order:
#
# $$p_i(\tau) = \frac{e^{z_i/\tau}}{\sum_j e^{z_j/\tau}} .$$
#
# * $\tau < 1$ stretches the differences between scores: the weights get **sharper**; as $\tau \to 0$ all
#   weight goes to the largest score (a hard $\arg\max$ lookup, as in lesson 2), or is shared equally
#   by the scores tied for the largest.
# * $\tau > 1$ shrinks the differences: the weights get **flatter**; as $\tau \to \infty$ they become uniform.
#
# The $\sqrt{d_k}$ of lesson 3 *is* a temperature, chosen so that the scores of random, independent
# queries and keys with entries of unit variance have unit variance too.
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
    tempered = {tau: softmax(scores / tau) for tau in temperatures}  # yours
    H = {tau: entropy_bits(p) for tau, p in tempered.items()}
    fig, axes = plt.subplots(1, 3, figsize=(6.5, 3.3), sharey=True, layout="constrained")
    for ax, (tau, p) in zip(axes, tempered.items()):
        ax.bar(range(len(keys)), p, color=plots.color("yours"))
        ax.set_xticks(range(len(keys)), [f"{i}:{t}" for i, t in enumerate(keys)], rotation=45)
        ax.set_title(f"τ = {tau}:\nentropy {H[tau]:.2f} bits")
        ax.set_xlabel("key")
    axes[0].set_ylabel("weight (your softmax)")
    fig.suptitle(
        f"Lower τ sharpens, higher τ flattens: the entropy rises\nfrom {H[0.25]:.2f} to {H[4.0]:.2f} bits "
        f"(at most {np.log2(len(keys)):.2f})"
    )
    plots.show(
        fig,
        name="04_temperature",
        alt=f"Lower τ sharpens the weights and higher τ flattens them: the entropy rises from {H[0.25]:.2f} to "
        f"{H[4.0]:.2f} bits (at most {np.log2(len(keys)):.2f}). "
        f"Three bar charts of softmax(scores / τ) over the 6 keys of '{' '.join(keys)}'; "
        + "; ".join(
            f"τ = {tau}: largest weight {p.max():.2f} on '{keys[int(np.argmax(p))]}', entropy {H[tau]:.2f} bits"
            for tau, p in tempered.items()
        )
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
# 2. weights $A = \operatorname{softmax}(S)$ along the **last** axis: each query's weights over the keys sum to 1;
# 3. output $O = AV$, shape `(..., T_q, d_v)`: row $i$ is the weighted average of the value rows.
#
# ### Masks
#
# Often a query must **not** look at some keys:
# * a *causal* mask in a model that writes text left to right: token $i$ may look at tokens $0,\dots,i$ but
#   not at later ones (they have not been written yet), a lower-triangular pattern;
# * a *padding* mask: sentences in a batch are padded to the same length, and nobody should attend to the padding.
#
# **Our convention (the same as the boolean `attn_mask` of PyTorch's `F.scaled_dot_product_attention`).**
# `mask` is a boolean array that broadcasts against the scores `(..., T_q, T_k)`;
# **`True` means "query $i$ may attend to key $j$"**, `False` means the position is **blocked**.
# A blocked score is replaced by $-\infty$ *before* the softmax, so it gets weight $e^{-\infty} = 0$ and the
# remaining weights still sum to 1. (Careful when you read other code: the boolean `attn_mask` and
# `key_padding_mask` of `torch.nn.MultiheadAttention` mean the *opposite*: there `True` means blocked.
# Always check.)
#
# Why $-\infty$ and not a large negative number such as $-10^9$, which many code bases use? A finite
# stand-in only works while the allowed scores of the row are far above it; if they are not, the blocked
# keys take the weight instead. $-\infty$ is below every score, so a blocked key gets weight exactly 0
# whatever the allowed scores are.
#
# **A fully masked row** (a query that may attend to nothing) has no sensible weights: with every score
# $-\infty$, the softmax computes $0/0$, which is NaN. In this course such a row gets **all-zero weights
# and an all-zero output**, never NaN: a NaN would spread through every later layer and, in training,
# into every weight. PyTorch does not agree with itself here. `F.scaled_dot_product_attention` returns
# zeros for such rows (since PyTorch 2.5; earlier releases returned NaN), `torch.softmax` of a row of
# $-\infty$ is NaN, and `nn.MultiheadAttention` gives NaN when it also returns its weights
# (`need_weights=True`, the default) but zeros when it does not (`need_weights=False`, where it calls
# `F.scaled_dot_product_attention` itself; the zeros then pass through its output projection, whose bias
# starts at 0). The second cell below asks the PyTorch installed here.

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
blocked_scores = (q @ k.T / 2).masked_fill(~may_attend, float("-inf"))
mha = torch.nn.MultiheadAttention(embed_dim=4, num_heads=1, batch_first=True, dtype=torch.float64)
fully_masked = {
    "F.scaled_dot_product_attention, output": F.scaled_dot_product_attention(q, k, v, attn_mask=may_attend)[1],
    "torch.softmax of its row of -inf scores": torch.softmax(blocked_scores, dim=-1)[1],
}
for need_weights in (True, False):  # nn.MultiheadAttention's boolean mask means the opposite: True = blocked
    out, _ = mha(q[None], k[None], v[None], attn_mask=~may_attend, need_weights=need_weights)
    fully_masked[f"nn.MultiheadAttention(need_weights={need_weights}), output"] = out[0, 1].detach()
print(f"PyTorch {torch.__version__}, query 1 fully masked:")
for name, row in fully_masked.items():
    print(f"  {name + ':':58s} {row.numpy()}")


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
# * Blocked positions get weight exactly 0 **whatever the allowed scores are**, even allowed scores far
#   below $-10^9$ (so a large negative number in place of $-\infty$ is not enough); a query whose keys are
#   all blocked gets zero weights and a zero output, without NaN.
# * Large scores (hundreds or more) give finite results.
# * The checks pass float64 arrays and compare your results with PyTorch's to about $10^{-6}$: compute in
#   float64 (float32 cannot even hold some of the scores they use).
#
# You may call your `softmax` from exercise 4.1. The checks call your function with PyTorch's softmax in
# place of yours, so a mistake in exercise 4.1 costs points only there.
#
# <details><summary>Hint 1: the idea</summary>
#
# Compute the scores, then block the positions the mask forbids by giving them the score $-\infty$
# before the softmax. A row whose scores are all $-\infty$ needs separate care: the softmax of such a
# row is $0/0$.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# Give the mask the scores' full shape first, `mask = np.broadcast_to(mask, scores.shape)`. Then
# `mask.any(axis=-1, keepdims=True)` is `False` exactly for the fully masked rows.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.where(mask, scores, -np.inf)` blocks positions. Make sure the softmax never sees a row that is
# entirely `-inf` (give such rows any finite scores with another `np.where`), and set their weights to 0
# afterwards.
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
# Visible checks, with PyTorch's softmax in place of yours (a mistake in exercise 4.1 costs points only there).
_sm = lambda x, axis=-1: torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis).numpy()
_sdpa = checks.with_references(scaled_dot_product_attention, softmax=_sm)
_axes = "Swap only the last two axes of K (np.swapaxes(K, -1, -2)) and let the mask broadcast against the scores."
_attention = lambda *a, what, **kw: checks.output_and_weights(  # the checked (output, weights) of your function
    checks.attempt(_sdpa, *a, what=what, hint=_axes, **kw), what, a[2].shape[-1], a[1].shape[-2], "it"
)
# Worked example: T_q = 2 queries, T_k = 3 keys, d_k = 4 (so the scores are Q Kᵀ / 2) and d_v = 5.
_Q, _K = np.array([[1.0] * 4, [0.0] * 4]), np.array([[1.0] * 4, [0.0] * 4, [-1.0] * 4])
_V = np.array([[1.0, 0, 0, 2, 1], [0, 1, 0, 2, -1], [1, 1, 1, 0, 0]])
_QK = np.array([[4.0, 0, -4], [0, 0, 0]])  # Q Kᵀ
_out, _w = _attention(_Q, _K, _V, what="the worked example")
checks.expect(np.shape(_out)[-1] != 4, "the output has d_k = 4 columns: it must be the weights times V, not times K.")
_scale_mistakes = {
    "the scores are not scaled: divide by √d_k.": _sm(_QK),
    "you divided by d_k; divide by √d_k.": _sm(_QK / 4),
    "you divided by √T_q, the number of queries (Q.shape[-2]); d_k is Q.shape[-1].": _sm(_QK / np.sqrt(2)),
    "the softmax runs over the queries (axis -2); each query's weights over the keys must sum to 1.": _sm(_QK / 2, 0),
}
checks.expect_close(_w, _sm(_QK / 2), "the weights on the worked example", mistakes=_scale_mistakes)
checks.expect_close(_out, _sm(_QK / 2) @ _V, "the output on the worked example")
# Masks: query 0 may see every key, query 1 only key 1, query 2 nothing at all, query 3 keys 0 and 2.
_mask = np.array([[1, 1, 1], [0, 1, 0], [0, 0, 0], [1, 0, 1]], dtype=bool)
_S = np.repeat(_QK[:1] / 2, 4, axis=0)  # the scores of the four queries (all equal to query 0 of the example)
_out, _w = _attention(np.repeat(_Q[:1], 4, axis=0), _K, _V, _mask, what="the example with a mask")
_nan = "a fully masked row must give zero weights and a zero output, not NaN: the softmax of a row that is all -inf is 0/0."
checks.expect_finite(_w, "the weights with a fully masked row (query 2)", _nan)
_want, _ok = np.nan_to_num(_sm(np.where(_mask, _S, -np.inf))), [0, 1, 3]  # _ok: the rows with an allowed key
_mask_mistakes = {
    "True in the mask means 'may attend' (as in F.scaled_dot_product_attention): you blocked the True positions "
    "instead of the False ones.": np.nan_to_num(_sm(np.where(_mask, -np.inf, _S)))[_ok],
    "the mask was ignored: blocked keys (False) must get weight 0.": _sm(_S)[_ok],
    "blocked scores were set to 0 instead of -inf, so blocked keys still get weight.": _sm(_S * _mask)[_ok],
    "the weights were masked after the softmax without renormalising: block the scores (set them to -inf) before "
    "the softmax.": (_sm(_S) * _mask)[_ok],
}
checks.expect_close(_w[_ok], _want[_ok], "the weights of queries 0, 1 and 3", mistakes=_mask_mistakes)
_uniform = {"a fully masked row spreads its weight uniformly (as a large negative number like -1e9 does).": [1 / 3] * 3}
checks.expect_close(_w[2], [0, 0, 0], "the weights of query 2 (fully masked)", mistakes=_uniform)
checks.expect_close(_out, _want @ _V, "the output with the mask")
# The spec's other rules, each once here (the hidden checks test them more widely): a batch with a padding mask,
# allowed scores far below -1e9 (in float64), and large scores.
_pad = np.array([True, True, False]).reshape(1, 1, 3)  # (B, 1, T_k): key 2 is padding in both sequences
_out, _w = _attention(*(np.stack([_a, _a]) for _a in (_Q, _K, _V)), _pad, what="a batch of 2 with a padding mask")
checks.expect_shape(_w, (2, 2, 3), "the weights for a batch of 2 (T_q = 2, T_k = 3)")
checks.expect_close(_w, np.broadcast_to(_sm(np.where(_pad[0], _QK / 2, -np.inf)), (2, 2, 3)), "the batch's weights")
_q, _k = np.array([[1e50, 0, 0, 0]]), np.column_stack([np.full(3, -2e50), np.zeros((3, 3))])  # scores of -1e100
_allowed = np.array([True, False, True])
_w = _attention(_q, _k, _V, _allowed, what="allowed scores of -1e100")[1]
_float64 = "compute in float64, the type of the inputs: float32 cannot hold scores of -1e100."
checks.expect_finite(_w, "the weights with allowed scores of -1e100", _float64)
checks.blocked_weights_zero(_w, _allowed, "allowed scores of -1e100")
checks.expect_close(_w, [[0.5, 0, 0.5]], "the weights with allowed scores of -1e100")
_big = _attention(500 * _Q, _K, _V, what="scores of ±1000")[0]
checks.expect_finite(_big, "the output for scores of ±1000", "use your softmax (it subtracts the maximum).")


### BEGIN HIDDEN TESTS
def _sdpa_hidden():
    rng = np.random.default_rng(42)
    B, H, T_q, T_k, d_k, d_v = 2, 3, 5, 7, 16, 6  # all distinct; √16 = 4 ≠ 16 / 2
    Q, K, V = (rng.standard_normal((B, H, T, d)) for T, d in ((T_q, d_k), (T_k, d_k), (T_k, d_v)))

    def compare(args, what, mistakes=(), nan="a fully masked row must give zero weights, not NaN.", **kwargs):
        t = lambda a: None if a is None else torch.from_numpy(np.ascontiguousarray(a))
        q, k, v, m = (t(a) for a in (*args, kwargs.get("mask"))[:4])
        eye = torch.eye(k.shape[-2], dtype=k.dtype).expand(*k.shape[:-1], k.shape[-2])  # PyTorch's weights: V = I
        want = [F.scaled_dot_product_attention(q, k, u, attn_mask=m).numpy() for u in (v, eye)]
        got = _attention(*args, **kwargs, what=what)
        checks.expect_finite(got[1], f"the weights {what}", nan)
        for i, part in enumerate(("output", "weights")):
            named = {message: wrong[i] for message, wrong in dict(mistakes).items()}
            checks.expect_close(got[i], want[i], f"the {part} {what}", mistakes=named)

    compare((Q, K, V), "for a (2, 3) batch, T_q = 5, T_k = 7, d_k = 16")
    mask = rng.random((T_q, T_k)) < 0.5  # one mask for the whole batch, passed by name
    mask[:, 0], mask[2], mask[4] = True, np.arange(T_k) == 5, False  # query 2 may only see key 5, query 4 nothing
    compare((Q, K, V), "with a (5, 7) mask on a (2, 3) batch", mask=mask)
    padding = np.arange(T_k) < np.array([T_k, 4]).reshape(B, 1, 1, 1)  # sequence 1 has only 4 real keys
    compare((Q, K, V, padding), "with a (2, 1, 1, 7) padding mask")
    X, Vx = rng.standard_normal((3, 6, 16)), rng.standard_normal((3, 6, 5))
    causal = np.broadcast_to(np.tril(np.ones((6, 6), dtype=bool)), (3, 6, 6))  # a mask of the full batch shape
    compare((X, X, Vx, causal), "of causal self-attention")
    q, k = np.array([[1e50, 0, 0, 0]]), np.column_stack([np.full(5, -2e50), np.zeros((5, 3))])  # scores of -1e100
    allowed, v, w_finite = np.array([1, 0, 1, 0, 1], bool), rng.standard_normal((5, 3)), np.array([[0, 0.5, 0, 0.5, 0]])
    finite = "blocked keys must get weight exactly 0 whatever the allowed scores are: -1e9 in place of -inf loses to allowed scores below it."
    float64 = "compute in float64, the type of the inputs: float32 cannot hold scores of -1e100."
    compare((q, k, v, allowed), "with allowed scores of -1e100", {finite: (w_finite @ v, w_finite)}, nan=float64)
    q, k, v = 40 * rng.standard_normal((3, 16)), 40 * rng.standard_normal((4, 16)), rng.standard_normal((4, 2))
    compare((q, k, v), "for large scores, without batch axes", nan="use your softmax.", mask=None)  # mask by name


_sdpa_hidden()
### END HIDDEN TESTS
checks.passed("scaled_dot_product_attention")

# %% [markdown]
# ## 4. Causal attention starts as an average
#
# A model that writes text left to right may use, at position $t$, only the tokens $0, \dots, t$. The
# simplest way to collect that context is to **average the past**: replace each row $x_t$ of a sequence
# $X$ by
#
# $$\bar x_t = \frac{1}{t+1} \sum_{s=0}^{t} x_s .$$
#
# A Python loop over $t$ computes it, but the same averages come out of **one matrix product**,
# $\bar X = AX$, with the lower-triangular matrix
#
# $$A_{ts} = \begin{cases} \frac{1}{t+1} & s \le t \\ 0 & s > t \end{cases}
# \qquad\text{e.g. for } T = 3:\quad A = \begin{pmatrix} 1 & 0 & 0 \\ \tfrac12 & \tfrac12 & 0 \\ \tfrac13 & \tfrac13 & \tfrac13 \end{pmatrix}.$$
#
# Each row of $A$ is non-negative and sums to 1: it is a row of attention weights. And $A$ *is* a softmax:
# take a score matrix of **zeros**, block the future with the causal mask (scores $-\infty$ above the
# diagonal), and apply the softmax to each row. Row $t$ then has $t+1$ equal scores, so each gets weight
# $1/(t+1)$. Scores that are all zero are what queries that are all zero produce, so averaging the past is
# scaled dot-product attention with $Q = 0$, any keys, $V = X$ and a causal mask.
#
# Attention proper changes one thing: the scores become $q_t \cdot k_s / \sqrt{d_k}$ instead of 0. The mask
# and the softmax stay; each position now *chooses* how much each earlier token counts, instead of
# counting them all the same.
#
# ### Exercise 4.3 — averaging the past (2 points)
#
# Implement `causal_average(X)` for `X` of shape `(..., T, d)` (any number of leading batch axes),
# returning the tuple `(output, weights)`:
# * `output` has the shape of `X`; its row $t$ is the mean of rows $0, \dots, t$ of the same sequence;
# * `weights` is the `(T, T)` matrix $A$ above, so that `output` equals `weights @ X` (a `(..., T, T)`
#   array holding $A$ for every sequence is accepted too);
# * no NaN, for any $T \ge 1$.
#
# Use any of the ways above: the matrix product, or the softmax of masked zero scores. You may call your
# `softmax` and your `scaled_dot_product_attention`; the checks call your function with PyTorch's
# versions in their place, so a mistake in exercises 4.1 or 4.2 costs points only there.
#
# <details><summary>Hint 1: the idea</summary>
#
# Build the `(T, T)` weights once; then one matrix product averages every sequence of the batch. Row $t$
# of the weights must put equal weight on columns $0, \dots, t$ (itself included) and 0 on the rest.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `T = X.shape[-2]` and `allowed = np.tril(np.ones((T, T), dtype=bool))` is the causal mask: `True` on and
# below the diagonal.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Row $t$ of `allowed` has $t + 1$ entries `True`: its sum along the last axis (`keepdims=True`) is the
# divisor of that row. Or give `np.where` the scores 0 where allowed and `-np.inf` elsewhere, and let your
# `softmax` do the division. `weights @ X` then multiplies every sequence of the batch.
# </details>


# %% answer="causal-average"
def causal_average(X):
    """The average of each token's past, itself included.

    X: (..., T, d) -> (output (..., T, d), weights (T, T)); output[..., t, :] = mean of X[..., :t+1, :]
    """
    ### BEGIN SOLUTION
    T = X.shape[-2]
    allowed = np.tril(np.ones((T, T), dtype=bool))  # the causal mask
    weights = softmax(np.where(allowed, 0.0, -np.inf))  # zero scores, the future blocked: 1/(t+1) each
    return weights @ X, weights
    ### END SOLUTION


# %% tests="causal-average-tests" points=2
# Visible checks: a worked example (T = 3 tokens of width d = 2), then a batch. They call your function with
# PyTorch's softmax and attention in place of yours, so mistakes in exercises 4.1 and 4.2 cost points only there.
def _torch_attention(Q, K, V, mask=None):  # (output, weights); the weights are the output for V = identity
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    m = None if mask is None else torch.as_tensor(np.asarray(mask))
    eye = torch.eye(k.shape[-2], dtype=q.dtype).expand(*k.shape[:-1], k.shape[-2])
    return tuple(F.scaled_dot_product_attention(q, k, u, attn_mask=m).numpy() for u in (v, eye))


_sm = lambda x, axis=-1: torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis).numpy()
_average = checks.with_references(causal_average, softmax=_sm, scaled_dot_product_attention=_torch_attention)
_X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 0.0]])
_out, _w = checks.output_and_weights(checks.call(_average, _X), "causal_average(X)", d_v=2, T_k=3, fn="causal_average")
_A = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])
checks.expect_finite(_out, "causal_average(X)", "row 0 averages one token, itself: include the token itself.")
_want = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 2.0]])
checks.expect_close(_out, _want, "causal_average(X) on the worked example", mistakes={
    "every row is the mean of all T tokens: the future must be left out.": [[3.0, 2.0]] * 3,
    "row t averages the future (tokens t to T-1), not the past: the weights must be lower-triangular.": [[3.0, 2.0], [4.0, 2.0], [5.0, 0.0]],
    "row t is the sum of the past, not its mean: divide by t + 1.": [[1.0, 2.0], [4.0, 6.0], [9.0, 6.0]],
    "row t is divided by T, not by the t + 1 tokens it averages.": [[1 / 3, 2 / 3], [4 / 3, 2.0], [3.0, 2.0]],
    "row t leaves out token t itself: the past includes the present token.": [[0.0, 0.0], [1.0, 2.0], [2.0, 3.0]],
    "the columns of the weights sum to 1, not the rows: normalise each row.": [[1 / 3, 2 / 3], [11 / 6, 8 / 3], [41 / 6, 8 / 3]],
})  # fmt: skip
checks.expect_close(np.broadcast_to(checks.to_numpy(_w), (3, 3)), _A, "the weights on the worked example")
_batch = "T is X.shape[-2], the token axis, and `weights @ X` multiplies every sequence of the batch."
_out = checks.attempt(_average, np.stack([_X, -2 * _X]), what="causal_average of a batch of 2 sequences", hint=_batch)
checks.expect_close(_out[0], [_want, -2 * _want], "the output for a batch of 2 sequences")
_one = checks.attempt(_average, np.array([[2.0, -1.0]]), what="causal_average of a single token (T = 1)")
checks.expect_close(_one[0], [[2.0, -1.0]], "the output for a single token (T = 1)")


### BEGIN HIDDEN TESTS
def _average_hidden():
    rng = np.random.default_rng(43)
    for shape in ((2, 3, 6, 5), (1, 4), (7, 2)):  # batch axes, T = 1, a single sequence
        X = 100 * rng.standard_normal(shape)
        out, w = checks.output_and_weights(_average(X), f"X of shape {shape}", shape[-1], shape[-2], "causal_average")
        x = torch.from_numpy(X)
        want = F.scaled_dot_product_attention(torch.zeros_like(x), x, x, is_causal=True).numpy()  # zero queries
        checks.expect_close(out, want, f"the output for X of shape {shape}", atol=1e-9)
        T = shape[-2]
        A = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
        checks.expect_close(
            np.broadcast_to(checks.to_numpy(w), shape[:-1] + (T,)),
            np.broadcast_to(A, shape[:-1] + (T,)),
            f"the weights for T = {T}",
        )


_average_hidden()
### END HIDDEN TESTS
checks.passed("causal_average")

# %% [markdown]
# The cell below computes the average of the past of a random sequence in every way this section named
# and prints how far each is from your `causal_average`: a loop, the lower-triangular matrix product,
# your softmax of masked zero scores, your `scaled_dot_product_attention` with zero queries and a causal
# mask, and PyTorch's with `is_causal=True`.

# %%
X_demo = data.rng(11).standard_normal((6, 4))
T_demo = len(X_demo)
allowed_demo = np.tril(np.ones((T_demo, T_demo), dtype=bool))
with ac.student_code("causal_average"):
    averaged, A_demo = causal_average(X_demo)  # yours
    ways = {
        "a loop over t": np.stack([X_demo[: t + 1].mean(axis=0) for t in range(T_demo)]),
        "lower-triangular matrix product": (allowed_demo / allowed_demo.sum(axis=1, keepdims=True)) @ X_demo,
        "your softmax of masked zero scores": softmax(np.where(allowed_demo, 0.0, -np.inf)) @ X_demo,
        "your attention with Q = 0": scaled_dot_product_attention(np.zeros_like(X_demo), X_demo, X_demo, allowed_demo)[
            0
        ],
        "PyTorch's, Q = 0, is_causal=True": F.scaled_dot_product_attention(
            torch.zeros(T_demo, 4, dtype=torch.float64),
            torch.from_numpy(X_demo),
            torch.from_numpy(X_demo),
            is_causal=True,
        ).numpy(),
    }
    for name, result in ways.items():
        print(f"{name:35s} max |difference| from your causal_average: {np.abs(result - averaged).max():.1e}")

# %% [markdown]
# Now give real scores to four real tokens. Below, on the left, are the weights of your
# `causal_average` on "the cat sat down"; on the right, your `scaled_dot_product_attention` with the
# causal mask, where the queries, the keys and the values are all the same four embeddings `X`: the
# sequence attends to itself. That is called **self-attention**. Lesson 5 gives it learned projections
# (queries, keys and values become three different views of `X`) and also shows **cross-attention**,
# where the queries come from one sequence and the keys and values from another. Hatched cells are
# blocked by the mask: they are not small weights, they are not there at all.

# %%
tokens = "the cat sat down".split()
X = data.embed(tokens, 8)
mask4 = np.tril(np.ones((4, 4), dtype=bool))
with ac.student_code("causal_average and scaled_dot_product_attention"):
    _, averaging = causal_average(X)  # yours
    out, weights = scaled_dot_product_attention(X, X, X, mask4)  # yours
    averaging = np.broadcast_to(averaging, (4, 4))
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.7), layout="constrained")
    plots.attention_heatmap(
        averaging, tokens, ax=axes[0], allowed=mask4, mask_key=False, colorbar=False,
        title="zero scores:\nthe average of the past",
    )  # fmt: skip
    plots.attention_heatmap(
        weights, tokens, ax=axes[1], allowed=mask4, mask_key=False, title="scores $XX^T/\\sqrt{8}$:\nself-attention"
    )
    axes[1].set_ylabel("")
    fig.legend(handles=[plots.masked_patch("masked (blocked)")], loc="outside lower center", frameon=False)
    fig.suptitle("Same mask, same softmax: zero scores weigh the past equally,\nreal scores choose from it")
    plots.show(
        fig,
        name="04_causal_average_vs_attention",
        alt="With the same mask and the same softmax, zero scores weigh the past equally, while real scores choose "
        "from it. "
        f"Two heatmaps of causal weights on '{' '.join(tokens)}' (queries down, keys across), with the cells "
        f"above the diagonal hatched as blocked. Left, the average of the past: row t puts 1/(t+1) on each "
        f"visible token, so the last row is {', '.join(f'{x:.2f}' for x in averaging[-1])}. Right, causal "
        f"self-attention: the first row puts {weights[0, 0]:.2f} on itself; the last row spreads "
        f"{', '.join(f'{x:.2f}' for x in weights[-1])} over the four tokens.",
    )
    print(
        "row sums of the self-attention weights:",
        weights.sum(axis=-1),
        "— token 0 can only attend to itself:",
        weights[0],
    )

# %% [markdown]
# ## 5. Explore: $d_k$ and temperature
#
# The explorer runs **your** `scaled_dot_product_attention` on a six-word sentence. Queries and keys
# are random projections of fixed word embeddings with $d_k$ entries of unit variance; the queries are
# divided by the temperature $\tau$ (which divides every score by $\tau$). Left: the attention weights,
# queries down, keys across (hatched cells are blocked by the mask). Right: the entropy of each query's
# row (the black ticks mark the largest possible value, $\log_2$ of the number of keys the query may see).
#
# * Move **d_k** at $\tau = 1$: thanks to the $\sqrt{d_k}$, the rows stay spread over several keys as $d_k$
#   grows from 2 to 512. The cell after the explorer measures this, and what the same scores would do
#   without the scaling.
# * Lower the **temperature**: every row's entropy falls and its largest weight grows. As $\tau \to 0$ a
#   row puts all its weight on its highest-scoring key (section 2), or splits it evenly between the two
#   copies of "the", which have the same key (at $d_k = 16$ and $\tau = 0.1$, two rows do). Raise it to 5:
#   every row comes close to uniform, its bar close to its tick.
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
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6.5, 3.6), gridspec_kw={"width_ratios": [1.5, 1]})
        # a heatmap as in plots.attention_heatmap, drawn as a mesh (much faster to redraw than an image)
        edges = np.arange(n_tokens + 1) - 0.5
        self.mesh = ax1.pcolormesh(edges, edges, np.zeros((n_tokens, n_tokens)), cmap=plots.SEQUENTIAL, vmin=0, vmax=1)
        ax1.set_xticks(range(n_tokens), sentence, rotation=60, ha="right")
        ax1.set_yticks(range(n_tokens), sentence)
        ax1.invert_yaxis()
        ax1.set_xlabel("key (token attended to)")
        ax1.set_ylabel("query (token attending)")
        self.blocked = plots.draw_masked(ax1, np.tril(np.ones((n_tokens, n_tokens), dtype=bool)))  # shown if causal
        # the key of the hatching, over the top right cells, which the causal mask blocks (shown if causal)
        self.mask_key = ax1.legend(handles=[plots.masked_patch()], loc="upper right", fontsize=9, framealpha=1)
        self.title = ax1.set_title(" ")
        fig.colorbar(self.mesh, ax=ax1, fraction=0.046, pad=0.04, label="weight")
        self.bars = ax2.barh(range(n_tokens), np.zeros(n_tokens), color=plots.color("yours"))
        (self.ticks,) = ax2.plot(np.zeros(n_tokens), range(n_tokens), "|", color=plots.color("reference"), ms=14, mew=2)
        ax2.set_yticks(range(n_tokens), sentence)
        ax2.invert_yaxis()
        ax2.set_xlim(0, np.log2(n_tokens) + 0.2)
        ax2.set_xlabel("entropy in bits\n(| = largest possible)")
        self.entropy_title = ax2.set_title(" ")
        fig.subplots_adjust(left=0.1, right=0.95, bottom=0.22, top=0.9, wspace=0.5)
        self.dynamic = [self.mesh, *self.blocked, self.mask_key, *self.bars, self.ticks, self.title, self.entropy_title]
        return fig

    def update(self, d_k, temperature, mask):
        Q, K, X = explorer_inputs(d_k, temperature)
        allowed = np.tril(np.ones((n_tokens, n_tokens), dtype=bool)) if mask == "causal" else None
        _, weights = scaled_dot_product_attention(Q, K, X, allowed)  # yours
        self.weights = np.asarray(weights, dtype=float).reshape(n_tokens, n_tokens)
        self.H = entropy_bits(self.weights)
        self.H_max = np.log2(np.arange(1, n_tokens + 1)) if mask == "causal" else np.full(n_tokens, np.log2(n_tokens))
        self.mesh.set_array(self.weights.ravel())
        for patch in self.blocked:  # hatched over the mesh: blocked cells never look like a small weight
            patch.set_visible(mask == "causal")
        self.mask_key.set_visible(mask == "causal")
        for bar, h in zip(self.bars, self.H):
            bar.set_width(h)
        self.ticks.set_xdata(self.H_max)
        self.title.set_text(f"your weights: $d_k$ = {d_k}, τ = {temperature:.2f}, mask: {mask}")
        self.entropy_title.set_text(f"mean entropy {self.H.mean():.2f} bits")

    def alt(self, d_k, temperature, mask):
        peaks = ", ".join(
            f"{t} → {sentence[j]} {w:.2f}"
            for t, j, w in zip(sentence, self.weights.argmax(axis=1), self.weights.max(axis=1))
        )
        blocked = (
            " Cells above the diagonal are hatched (key: masked): blocked by the causal mask."
            if mask == "causal"
            else ""
        )
        share = self.H.mean() / self.H_max.mean()
        shape = (
            "nearly one-hot" if share < 0.3 else "close to uniform" if share > 0.8 else "between one-hot and uniform"
        )
        return (
            f"At d_k = {d_k} and τ = {temperature:.2f} your attention weights are {shape}: their mean entropy is "
            f"{self.H.mean():.2f} bits of at most {self.H_max.mean():.2f}. "
            f"Heatmap of your attention weights on '{' '.join(sentence)}' with d_k = {d_k}, τ = {temperature:.2f}, "
            f"mask {mask}, and a bar chart of each row's entropy: mean {self.H.mean():.2f} bits of at most "
            f"{self.H_max.mean():.2f}. Largest weight of each row: {peaks}.{blocked}"
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
# ## 6. Experiment: your attention equals PyTorch's, and the formula as written overflows
#
# **Claim 1.** Your functions compute the same numbers as PyTorch's `torch.softmax` and
# `F.scaled_dot_product_attention` (which we use from lesson 5 on). We compare them on a batch of
# 2 sequences × 4 heads × 9 tokens with $d_k = 16$ in float64, without a mask, with a causal mask and
# with a padding mask (the second sequence is 6 tokens long), and print the largest absolute difference. Anything at the level of
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
    d_attention = {}
    for name, m in cases.items():
        out, _ = scaled_dot_product_attention(Qb, Kb, Vb, m)
        ref = F.scaled_dot_product_attention(tQb, tKb, tVb, attn_mask=None if m is None else torch.from_numpy(m))
        d_attention[name] = diff = np.abs(np.asarray(out) - ref.numpy()).max()
        print(
            f"attention, {name:12s} vs F.scaled_dot_product_attention: max abs difference {diff:.1e} "
            f"({'within' if diff <= 1e-6 else 'NOT within'} 1e-6)"
        )

# %% [markdown]
# **Claim 2.** The formula as written fails as soon as a logit passes $\ln(\text{largest number})$,
# while a stable softmax never does. We feed rows of logits $s\cdot u$ (a fixed pattern $u$ with
# entries in $[-1, 1]$ and largest entry 1, scaled by $s$ from 1 to 10,000) to the formula as written and
# to your `softmax`, in float32 and in float64, and measure the largest error against the exact softmax of
# the same logits (computed with 40 significant digits by Python's `decimal` module, so that neither
# float type is compared with itself). A NaN result is drawn as error 1 (the largest error two
# probability distributions can have per entry), and an error below $10^{-18}$ (an exact result included)
# at $10^{-18}$, the bottom of the axis.

# %%
u = np.array([1.0, 0.6, 0.1, -0.3, -1.0])
s_values = np.logspace(0, 4, 401)


def exact_softmax(logits):
    """Softmax of each row with 40 significant digits (Python's decimal module), rounded to float64."""
    with localcontext() as context:
        context.prec = 40
        rows = []
        for row in logits:
            e = [(Decimal(float(z)) - Decimal(float(row.max()))).exp() for z in row]
            rows.append([float(x / sum(e)) for x in e])
    return np.array(rows)


fig, axes = plt.subplots(2, 1, figsize=(6.5, 5.8), sharex=True, layout="constrained")
first_failure, stable_error, error_curves = {}, {}, {}
with ac.student_code("softmax"):
    for ax, dtype in zip(axes, (np.float32, np.float64)):
        name = np.dtype(dtype).name
        logits = (s_values[:, None] * u).astype(dtype)
        exact = exact_softmax(logits)
        with np.errstate(over="ignore", invalid="ignore"):
            naive = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
        stable = np.asarray(softmax(logits), dtype=np.float64)  # yours
        errors = {}
        for label, values in (("formula as written", naive), ("your stable softmax", stable)):
            err = np.abs(values.astype(np.float64) - exact).max(axis=-1)
            errors[label] = np.where(np.isfinite(err), np.maximum(err, 1e-18), 1.0)
        error_curves[name] = errors
        first_failure[name] = s_values[~np.isfinite(naive).all(axis=-1)].min()
        stable_error[name] = np.abs(stable - exact).max()  # NaN if not finite
        limit = np.log(np.finfo(dtype).max)
        ax.loglog(
            s_values, errors["formula as written"], color=plots.color("baseline"), lw=1.5, label="formula as written"
        )
        ax.loglog(
            s_values[::4],
            errors["your stable softmax"][::4],
            "o",
            ms=3,
            color=plots.color("yours"),
            label="your stable softmax",
        )
        ax.axvline(limit, color=plots.color("reference"), lw=0.8, ls=":")
        ax.text(limit * 0.92, 1e-6, f"ln(max {name})\n= {limit:.1f}", ha="right", va="center", color=plots.TEXT)
        ax.set_ylim(3e-19, 5)
        ax.set_yticks(
            [1e-18, 1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 1],
            ["≤ 1e-18", "1e-15", "1e-12", "1e-9", "1e-6", "1e-3", "1 (NaN)"],
        )
        ax.set_ylabel(f"{name}: max abs error")
        ax.set_title(
            f"{name}: the formula as written returns NaN from s = {first_failure[name]:.1f} on;\n"
            f"yours stays within {stable_error[name]:.0e}"
        )
    axes[0].legend(loc="upper left")
    axes[1].set_xlabel("logit scale s (largest logit)")
    plots.show(
        fig,
        name="04_naive_vs_stable",
        alt="The formula as written returns NaN once the largest logit passes ln of the largest number of the type, "
        "while your stable softmax stays accurate at every logit scale. "
        "Two log-log plots, float32 above float64, of the largest error of softmax(s·u) against the logit "
        "scale s from 1 to 10,000, next to a dotted line at ln(max) of the type. "
        + "; ".join(
            f"{name}: the formula as written jumps to NaN (drawn as error 1) at s = {s_fail:.1f}, just past "
            f"ln(max) = {np.log(np.finfo(name).max):.1f}, while your stable softmax's error stays at most "
            f"{stable_error[name]:.0e}"
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
            f"your stable softmax's largest error for s up to {s_values.max():.0f} is {stable_error[name]:.1g}"
        )

# %% [markdown]
# Each naive curve jumps to "NaN" at the first $s$ of the grid past its dotted line (float32 fails first),
# while your stable softmax stays at rounding level (the largest errors printed above: float32 keeps about
# 7 significant digits, float64 about 16) all the way to $s = 10{,}000$. Before the jump, the formula as
# written is just as accurate: the shift changes nothing mathematically, it only keeps the exponentials in
# range. Your
# attention agrees with PyTorch's to rounding error with and without masks, so from lesson 5 on we use
# `torch.softmax` and `F.scaled_dot_product_attention` and build on top of them.

# %% [markdown]
# ## 7. Let's review
#
# * Softmax turns a row of scores into positive weights that sum to 1 and keep the scores' order (in
#   floating point a weight can underflow to exactly 0, for a score far below the row's largest).
#   Adding a constant to every score changes nothing.
# * The formula as written overflows once a logit exceeds $\ln(\text{max})$ of its floating-point type
#   (printed in section 1 for float32 and float64). Subtracting the row maximum first makes every
#   exponent $\le 0$: the stable softmax.
# * A temperature $\tau$ divides the scores: $\tau<1$ sharpens the weights (entropy → 0 as $\tau \to 0$ when
#   one score is the largest), $\tau>1$ flattens them (entropy → $\log_2 n$ as $\tau \to \infty$).
#   $\sqrt{d_k}$ is a temperature fixed by the statistics of lesson 3: in section 5 the mean entropy moved
#   by about half a bit from $d_k = 2$ to 512 with it, and by more than 2 bits without it.
# * Scaled dot-product attention: $\operatorname{softmax}(QK^\top/\sqrt{d_k})\,V$, softmax over the **keys**
#   (last axis), returning the output and the weights.
# * A boolean mask with `True` = may attend blocks positions by setting their scores to $-\infty$ (not a
#   large negative number, which loses to allowed scores below it); a causal mask allows $T(T+1)/2$ of the
#   $T^2$ pairs. In this course a fully masked row gives zeros, not NaN, as `F.scaled_dot_product_attention`
#   does; in the PyTorch installed here `torch.softmax` gives NaN, and `nn.MultiheadAttention` gives NaN with
#   `need_weights=True` and zeros with `need_weights=False` (printed in section 3).
# * Averaging each token's past is a lower-triangular matrix product, and that matrix is the softmax of
#   masked zero scores: attention with zero queries. Causal attention keeps the mask and the softmax and
#   lets the scores choose.
# * When the queries, keys and values all come from one sequence, attention is *self-attention*.
# * Your implementation matches `F.scaled_dot_product_attention` to rounding error.
#
# Next lesson: where $Q$, $K$ and $V$ come from: learned projections of the token embeddings.

# %% [markdown]
# ## 8. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after
# each answer checks the format only; the answer itself is graded when your notebook is graded.
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
#
# <details><summary>Before you hand in</summary>
#
# * Did you say for which inputs it fails, and what it returns then?
# * Did you explain why small random test inputs never show the problem?
# * Did you show why the shift leaves every weight unchanged, and what it guarantees about the exponents
#   and the denominator?
# * Did you give a case where a maximum over the whole array fails although a per-row maximum works?
# </details>

# %% [markdown] manual="quiz-free-stable-softmax" points=3
# ### BEGIN SOLUTION
# *Model answer.* $e^{x}$ overflows to `inf` once $x$ exceeds the log of the largest representable
# number (88.72 in float32, 709.78 in float64, as printed in section 1), and `inf / inf` is NaN; a row of
# very negative scores underflows to $0/0$ (below about −104 in float32 and −745 in float64). Small random
# test inputs never get near these limits, so the bug stays hidden until large (e.g. unscaled, or
# trained) scores appear. Subtracting a constant from every entry of a row multiplies numerator and
# denominator by the same $e^{-c}$, which cancels, so the result is unchanged; with $c$ the row maximum
# every exponent is $\le 0$ (no overflow) and one term is $e^0 = 1$ (the denominator is at least 1, never
# 0). The maximum must be per row because each row is its own distribution: with a global maximum, a row
# whose scores are all far below it (e.g. around −1000 next to a row around +1000) underflows to $0/0$
# again.
#
# *Rubric (3 points).* 1 point: names overflow (inf/inf → NaN, or underflow to 0/0) for large
# magnitude logits, with the rough threshold or the reason small tests miss it. 1 point: shift
# invariance (the common factor $e^{-c}$ cancels, so the result is the same) and why the max makes
# exponents ≤ 0 and the denominator ≥ 1. 1 point: per-row maximum, because rows are independent
# distributions and a global maximum lets other rows underflow. No point for restating the question.
# ### END SOLUTION
