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
# # Lesson 6 — Multi-head attention
#
# **Attention, from the dot product up** · lesson 6 · about 85 minutes
#
# A self-attention head gives every query *one* softmax: one weight distribution over the keys, and
# one blend of values, all in one value space. But a word takes part in several relations at once:
# in *"The dog, which was chasing a squirrel, barked loudly"*, **dog** is the subject of *barked* and
# the noun that *which* refers to. Multi-head attention runs several smaller attentions side by side,
# each with its own weights and its own value subspace, and mixes their results. In this lesson you
# build it in numpy and in PyTorch, check that your module computes what `torch.nn.MultiheadAttention`
# computes (to rounding), and measure what heads cost.
#
# **Learning goals.** By the end you can
# 1. split a $d_{\text{model}}$-wide projection into $H$ heads $h = 1, \dots, H$ of width
#    $d_k = d_{\text{model}}/H$ and merge them back, and follow one query through the heads;
# 2. write multi-head attention, $\operatorname{Concat}(\text{head}_1,\dots,\text{head}_H)\,W^O$, in numpy and as a `torch.nn.Module`;
# 3. load the weights of `nn.MultiheadAttention` into your module and get the same output and weights;
# 4. say what heads cost: $H\cdot T^2$ attention weights per sequence, and a parameter count that does not depend on $H$.
#
# **You need from lesson 5:** the projections $Q = X W^Q$, $K = X W^K$, $V = X W^V$ with
# $W^Q, W^K \in \mathbb{R}^{d_{\text{model}} \times d_k}$ and $W^V \in \mathbb{R}^{d_{\text{model}} \times d_v}$,
# and single-head self-attention $\operatorname{softmax}(QK^\top/\sqrt{d_k})\,V$. You built softmax in
# lesson 4 and proved it equals PyTorch's; the `softmax` helper below uses PyTorch's. **From lesson 0**
# (`00_pytorch_primer`): tensors and their shapes (`view`, `reshape`, `transpose`), `nn.Module` and
# `nn.Linear`, whose `weight` is stored as `(d_out, d_in)`.
#
# **How the notebook works.** Run the cells from top to bottom. Exercise cells contain
# `raise NotImplementedError()`: replace it with your code. Under each exercise, hints open one at a
# time: first the idea, then a first step, then the calls to use. The cell after each exercise runs
# visible checks; hidden checks with other shapes run when your work is graded.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()


def softmax(x, axis=-1):
    """Softmax of a numpy array along `axis` (you built this in lesson 4; here we use PyTorch's)."""
    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()


# %% [markdown]
# ## 1. One head: one weight distribution per query
#
# A head computes, for every query, one set of weights $a_1, \dots, a_T$ (a softmax: they are
# positive and sum to 1) and returns $\sum_j a_j v_j$: a blend of the values, which all live in the
# same $d_v$ coordinates. Suppose a query needs two things at once, the verb's value *and* the
# pronoun's value. Two limits follow:
# * **one distribution:** whatever weight goes to the verb is taken from the pronoun,
#   $a_\text{verb} + a_\text{pronoun} \le 1$;
# * **one value space:** the two values are added into the same coordinates, where they can no longer be
#   told apart. When the query weighs the two tokens equally, swapping their values does not change the
#   output at all.
#
# Multi-head attention also returns one vector per query. What changes is what that vector is made
# of: $H$ blends, each with *its own* weight distribution and *its own* value subspace, side by side.
# The cell computes both for a query that matches the verb (key 1) and the pronoun (key 2) equally
# well. The one-head values are 2-dimensional; each of the two heads reads one of those two
# coordinates ($d_v = 1$ per head), so both versions deliver 2 numbers.

# %%
values = np.array(
    [
        [1.0, 0.0],  # key 1: the verb's value
        [0.0, 1.0],  # key 2: the pronoun's value
        [0.0, 0.0],
        [0.0, 0.0],
    ]
)  # keys 3, 4: other tokens
swapped = values[[1, 0, 2, 3]]  # the verb and the pronoun trade values

a_one = softmax(np.array([4.0, 4.0, 0.0, 0.0]))  # one head: the query matches keys 1 and 2 equally
print(f"one head : weights {a_one.round(3)}; verb + pronoun get {a_one[0] + a_one[1]:.3f} of the weight together")
print(
    f"           output {(a_one @ values).round(3)}, with the two values swapped {(a_one @ swapped).round(3)} "
    f"(difference {np.abs(a_one @ values - a_one @ swapped).max():.1e})"
)

a1 = softmax(np.array([6.0, 0.0, 0.0, 0.0]))  # head 1 looks for the verb ...
a2 = softmax(np.array([0.0, 6.0, 0.0, 0.0]))  # ... head 2 for the pronoun
two = lambda v: np.array([a1 @ v[:, 0], a2 @ v[:, 1]])  # head 1 reads coordinate 1 of the values, head 2 coordinate 2
print(f"two heads: head 1 puts {a1[0]:.3f} on the verb, head 2 puts {a2[1]:.3f} on the pronoun")
print(f"           output {two(values).round(3)}, with the two values swapped {two(swapped).round(3)}")


# %% [markdown]
# One head hands over just under half of each value, summed, and the result is the same whichever token carried
# which value. Two heads hand over almost all of each value, in separate coordinates, and the swap shows
# up in the output. A later layer (here, $W^O$) can use both.

# %% [markdown]
# ## 2. Heads: several attentions on smaller subspaces
#
# Give each head $h = 1, \dots, H$ its own lesson-5 projections
# $W_h^Q, W_h^K \in \mathbb{R}^{d_{\text{model}} \times d_k}$ and $W_h^V \in \mathbb{R}^{d_{\text{model}} \times d_v}$,
# usually with $d_k = d_v = d_{\text{model}}/H$, and its own softmax:
#
# $$\text{head}_h = \operatorname{softmax}\!\left(\frac{(X W_h^Q)(X W_h^K)^\top}{\sqrt{d_k}}\right) X W_h^V ,
# \qquad h = 1, \dots, H .$$
#
# The heads' outputs ($T \times d_v$ each) are concatenated side by side and mixed by a final learned
# projection $W^O \in \mathbb{R}^{H d_v \times d_{\text{model}}}$:
#
# $$\operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)\, W^O .$$
#
# **All heads in one product.** Put the $H$ matrices side by side,
# $W^Q = [\,W_1^Q \mid W_2^Q \mid \dots \mid W_H^Q\,]$, a $d_{\text{model}} \times H d_k$ matrix
# ($d_{\text{model}} \times d_{\text{model}}$ when $H d_k = d_{\text{model}}$). Then one product $X W^Q$ computes
# the queries of every head: head $h$'s queries are the block of $d_k$ columns from $(h-1)\,d_k$ to
# $h\,d_k - 1$ (counting columns from 0, as numpy does). The same holds for $W^K$ and $W^V$.
#
# In code the heads live on an extra axis: `(…, T, d_model)` becomes `(…, H, T, d_k)`, position 0 of
# the new axis holding head 1. Attention then runs on the last two axes for all heads at once, and the
# result goes back to `(…, T, d_model)`.
#
# ### Exercise 6.1 — split into heads (2 points)
#
# Implement `split_heads(X, num_heads)`: `X` of shape `(…, T, d_model)`, with any number of leading
# axes (none, as in `(T, d_model)`, or several) → shape `(…, num_heads, T, d_k)` with
# `d_k = d_model // num_heads`, where `[..., i, t, :]` holds columns `i*d_k` to `(i+1)*d_k - 1` of token
# `t` (that is head `i + 1`). `num_heads` divides `d_model`; it may be 1, and `d_k` may be 1.
#
# <details><summary>Hint 1: the idea</summary>
#
# Head `i + 1`'s part of a token is a stretch of consecutive numbers in that token's row. Cutting every
# row into `num_heads` equal pieces gives the heads an axis of their own, but that axis then comes
# *after* the `T` axis, and the spec wants it before.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# A reshape to `(…, T, num_heads, d_k)` cuts the rows: entry `[..., t, i, :]` is then head `i + 1`'s
# block of token `t`. A reshape straight to `(…, num_heads, T, d_k)` has the right shape, but it mixes
# the tokens up.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `X.reshape(*X.shape[:-1], …)` keeps any leading axes, whatever their number; `np.swapaxes(a, axis1, axis2)`
# exchanges two axes, and negative axis numbers count from the end (`-1` is the last axis).
# </details>


# %% answer="split-heads"
def split_heads(X, num_heads):
    """(..., T, d_model) -> (..., num_heads, T, d_k) with d_k = d_model // num_heads;
    index i of the new axis (head i + 1) owns columns [i*d_k, (i+1)*d_k)."""
    ### BEGIN SOLUTION
    *batch, T, d_model = X.shape
    return np.swapaxes(X.reshape(*batch, T, num_heads, d_model // num_heads), -2, -3)
    ### END SOLUTION


# %% tests="split-heads-tests" points=2
# Visible checks: a worked example with T = 2 tokens, d_model = 12, 3 heads (so d_k = 4), then a batch's shape.
def _split_mistakes(X, H):
    plain = X.reshape(*X.shape[:-2], H, X.shape[-2], X.shape[-1] // H)
    dealt = np.stack([X[..., i::H] for i in range(H)], axis=-3)
    return {
        "a plain reshape to (num_heads, T, d_k) mixes tokens: reshape to (..., T, num_heads, d_k), then swap.": plain,
        "the columns are dealt out in turn (head 1 gets 0, H, 2H, ...): each head owns d_k consecutive columns.": dealt,
    }


_X = np.arange(24).reshape(2, 12)
# head 1 owns columns 0-3 of both tokens, head 2 columns 4-7, head 3 columns 8-11
_want = [[[0, 1, 2, 3], [12, 13, 14, 15]], [[4, 5, 6, 7], [16, 17, 18, 19]], [[8, 9, 10, 11], [20, 21, 22, 23]]]
_got = checks.call(split_heads, _X, 3)
checks.expect_close(_got, _want, "split_heads on the worked example (2, 12)", mistakes=_split_mistakes(_X, 3))
_batch = "split_heads must accept any number of leading axes: read only the last two sizes, e.g. X.shape[-2:]."
_got = checks.attempt(split_heads, np.zeros((2, 5, 12)), 4, what="split_heads of a (2, 5, 12) batch", hint=_batch)
checks.expect_shape(_got, (2, 4, 5, 3), "split_heads of a (2, 5, 12) batch with 4 heads")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(31)
for _shape, _H in (((2, 5, 12), 3), ((7, 48), 3), ((2, 3, 5, 16), 4), ((5, 6), 1), ((5, 6), 6)):
    _X = _rng.standard_normal(_shape)
    _want = np.stack(np.split(_X, _H, axis=-1), axis=-3)
    _what = f"split_heads of shape {_shape} with {_H} heads"
    checks.expect_close(split_heads(_X, _H), _want, _what, mistakes=_split_mistakes(_X, _H))
### END HIDDEN TESTS
checks.passed("split_heads")


# %% [markdown]
# ### Exercise 6.2 — merge the heads back (2 points)
#
# Implement `merge_heads(heads)`, the inverse: `heads` of shape `(…, H, T, d_k)`, with any number of
# leading axes → `(…, T, H·d_k)`, with `heads[..., i, :, :]` (head `i + 1`) in columns `i*d_k` to
# `(i+1)*d_k - 1`: the concatenation $\operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)$. A round
# trip `merge_heads(split_heads(X, num_heads))` must give `X` back exactly.
#
# <details><summary>Hint 1: the idea</summary>
#
# Undo the two steps of `split_heads` in the opposite order.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# First bring `T` back in front of the heads: `(…, H, T, d_k)` → `(…, T, H, d_k)`. Each token's `H`
# blocks then sit next to each other, in head order, ready to become one row.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.swapaxes` and `.reshape`; `*batch, H, T, d_k = heads.shape` names the sizes whatever the number of
# leading axes.
# </details>


# %% answer="merge-heads"
def merge_heads(heads):
    """(..., H, T, d_k) -> (..., T, H * d_k): the concatenation of the heads along the last axis."""
    ### BEGIN SOLUTION
    *batch, H, T, d_k = heads.shape
    return np.swapaxes(heads, -2, -3).reshape(*batch, T, H * d_k)
    ### END SOLUTION


# %% tests="merge-heads-tests" points=2
# Visible checks: the worked example of 6.1 backwards (3 heads, T = 2, d_k = 4), then a round trip.
def _merge_mistakes(heads):
    *batch, H, T, d_k = heads.shape
    plain, interleaved = heads.reshape(*batch, T, H * d_k), np.moveaxis(heads, -3, -1).reshape(*batch, T, H * d_k)
    return {
        "a plain reshape of (H, T, d_k) to (T, H*d_k) mixes tokens: swap the heads and T axes first.": plain,
        "the heads' columns are interleaved: head i must fill the block [i*d_k, (i+1)*d_k).": interleaved,
    }


_heads = np.array(
    [[[0, 1, 2, 3], [12, 13, 14, 15]], [[4, 5, 6, 7], [16, 17, 18, 19]], [[8, 9, 10, 11], [20, 21, 22, 23]]]
)
_want, _what = np.arange(24).reshape(2, 12), "merge_heads on the worked example (3, 2, 4)"
checks.expect_close(checks.call(merge_heads, _heads), _want, _what, mistakes=_merge_mistakes(_heads))
_X = np.random.default_rng(0).standard_normal((2, 5, 12))
_X_heads = np.stack(np.split(_X, 4, axis=-1), axis=-3)  # X split into 4 heads without your split_heads (6.1)
checks.expect_close(merge_heads(_X_heads), _X, "merge_heads of X split into 4 heads (a round trip)")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(32)
for _shape in ((2, 3, 5, 4), (3, 7, 16), (2, 2, 4, 3, 5), (1, 5, 6), (6, 5, 1)):
    _heads = _rng.standard_normal(_shape)
    _want = np.concatenate(list(np.moveaxis(_heads, -3, 0)), axis=-1)
    checks.expect_close(merge_heads(_heads), _want, f"merge_heads of shape {_shape}", mistakes=_merge_mistakes(_heads))
_X = _rng.standard_normal((2, 5, 48))
checks.expect_close(merge_heads(np.stack(np.split(_X, 3, axis=-1), axis=-3)), _X, "a round trip with 3 heads")
### END HIDDEN TESTS
checks.passed("merge_heads")

# %% [markdown]
# ## 3. Multi-head attention in numpy
#
# Everything is in place: project, split, attend in every head at once, merge, project with $W^O$.
# The scale is $\sqrt{d_k}$ with $d_k = d_{\text{model}}/H$, the width each head actually uses, not
# $\sqrt{d_{\text{model}}}$.
#
# **Masks.** As in lesson 4, a mask is a boolean array broadcastable to `(…, H, T, T)` (usually
# `(T, T)`) that is **`True` where a query may attend** to a key and `False` where it is blocked.
# Blocked scores become $-\infty$ before the softmax, so one `(T, T)` mask applies to every head. (We
# never block a whole row here.) Watch out when you compare with PyTorch: `nn.MultiheadAttention`'s
# boolean `attn_mask` uses the *opposite* convention (`True` = ignore), so we hand it `~mask`.
#
# ### Exercise 6.3 — multi-head attention (3 points)
#
# Implement `multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None)` for `X` of shape
# `(…, T, d_model)`: one sequence `(T, d_model)` or a batch with any number of leading axes. `W_Q`, `W_K`,
# `W_V` are `(d_model, d_model)` matrices holding all heads' projections side by side (section 2), used as
# `X @ W_Q`, with head `i + 1` using column block `i`; `W_O` is $W^O$, `(d_model, d_model)`; there are no
# biases here. Return the tuple `(output, weights)`, output first: `output` of shape `(…, T, d_model)` and
# the weights of every head, shape `(…, num_heads, T, T)`, each row summing to 1 and exactly 0 at blocked
# positions, whatever the allowed scores are: set blocked scores to $-\infty$ before the softmax, as in lesson 4
# (a large negative number such as $-10^9$ in its place is not enough). Use your `split_heads`, `merge_heads` and
# the `softmax` helper.
#
# When your work is graded, this exercise's checks run with correct versions of `split_heads` and
# `merge_heads`, so a mistake in exercise 6.1 or 6.2 costs points there only. The visible checks below use
# yours. The hidden checks compare with `nn.MultiheadAttention` (weights copied in, with and without a mask)
# at other sizes, on one sequence and on two leading axes, and run a mask with every score far below $-10^9$.
#
# <details><summary>Hint 1: the idea</summary>
#
# Each head is lesson 4's scaled dot-product attention on its own block of columns. Once the heads have
# an axis of their own, the matrix products you know run for every head at once, because `@` works on
# the last two axes and treats the others as a batch.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `Q = split_heads(X @ W_Q, num_heads)` has shape `(…, H, T, d_k)`, and so do `K` and `V`. The scores,
# `(…, H, T, T)`, are `Q` times `K` transposed on its last two axes, divided by $\sqrt{d_k}$, where
# $d_k$ = `Q.shape[-1]`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.swapaxes(K, -1, -2)`, `np.where(mask, scores, -np.inf)`, `softmax(scores, axis=-1)`, then
# `weights @ V`, `merge_heads` and `@ W_O`.
# </details>


# %% answer="mha-numpy"
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Multi-head self-attention.

    X: (..., T, d_model); W_Q, W_K, W_V, W_O: (d_model, d_model); num_heads divides d_model
    mask: None or boolean, broadcastable to (..., num_heads, T, T); True = may attend, False = blocked
    returns (output (..., T, d_model), weights (..., num_heads, T, T))
    """
    ### BEGIN SOLUTION
    Q, K, V = (split_heads(X @ W, num_heads) for W in (W_Q, W_K, W_V))  # (..., H, T, d_k)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return merge_heads(weights @ V) @ W_O, weights
    ### END SOLUTION


# %% tests="mha-numpy-tests" points=3
### BEGIN HIDDEN TESTS
# Graded with correct split_heads and merge_heads (a mistake there costs points in exercise 6.1 or 6.2 only).
_students_split_merge = (split_heads, merge_heads)
split_heads = lambda X, num_heads: np.stack(np.split(X, num_heads, axis=-1), axis=-3)  # noqa: E731
merge_heads = lambda heads: np.concatenate(list(np.moveaxis(heads, -3, 0)), axis=-1)  # noqa: E731
# yours calls them from the notebook's globals: reach them through the function (also in the grader)
_students_mha = multi_head_attention
multi_head_attention = checks.with_references(multi_head_attention, split_heads=split_heads, merge_heads=merge_heads)
### END HIDDEN TESTS
# Visible checks: B = 3 sequences of T = 5 tokens, d_model = 8, 2 heads (d_k = 4); a mask; one head.
_rng = np.random.default_rng(0)
_X, _Ws = _rng.standard_normal((3, 5, 8)), [_rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(4)]
_what = "merge_heads(split_heads(X, 2)) (this exercise uses your split_heads and merge_heads: do 6.1 and 6.2 first)"
checks.expect_close(merge_heads(split_heads(_X, 2)), _X, _what)
_result = checks.call(multi_head_attention, _X, *_Ws, 2)
_out, _w = checks.output_and_weights(_result, "X of shape (3, 5, 8), 2 heads", d_v=8, T_k=5)
checks.expect_shape(_out, (3, 5, 8), "the output for X of shape (3, 5, 8) with 2 heads")
checks.expect_shape(_w, (3, 2, 5, 5), "the weights for X of shape (3, 5, 8) with 2 heads")
_heads = lambda A: np.stack(np.split(A, 2, axis=-1), axis=-3)  # 2 heads of d_k = 4 columns each
_s = _heads(_X @ _Ws[0]) @ np.swapaxes(_heads(_X @ _Ws[1]), -1, -2)  # every head's Q K^T, (3, 2, 5, 5)
_sm = lambda s, axis=-1: torch.softmax(torch.from_numpy(s), dim=axis).numpy()
_wrong_weights = {
    "softmax runs over the queries (axis -2): each row (one query) must sum to 1, so use axis=-1.": _sm(_s / 2, -2),
    "the scores are divided by sqrt(d_model): divide by sqrt(d_k), the width of one head.": _sm(_s / np.sqrt(8)),
    "the scores are not scaled: divide them by sqrt(d_k), the width of one head.": _sm(_s),
    "every head uses the same columns: head i must use its own block of d_k columns of Q, K and V.": _sm(
        np.repeat(_s[:, :1] / 2, 2, axis=1)
    ),
}
_what = "the matrix of every head's weights for X of shape (3, 5, 8), 2 heads (with your split_heads)"
checks.expect_close(_w, _sm(_s / 2), _what, mistakes=_wrong_weights)
checks.expect_close(_w.sum(axis=-1), np.ones((3, 2, 5)), "the sum of every row of the weights")
_causal = np.tril(np.ones((5, 5), dtype=bool))  # True on and below the diagonal: no looking ahead
checks.expect(
    float(np.abs(multi_head_attention(_X, *_Ws, 2, mask=_causal)[1][..., ~_causal]).max()) == 0.0,
    "with a causal mask, the weights of blocked positions (mask False) must be exactly 0: True means 'may attend'.",
)
# with one head, multi-head attention is single-head attention followed by W_O
_one = torch.nn.functional.scaled_dot_product_attention(*(torch.from_numpy(_X @ _W) for _W in _Ws[:3])).numpy()
_mistake = {"W_O is missing: multiply the merged heads by W_O.": _one}
checks.expect_close(multi_head_attention(_X, *_Ws, 1)[0], _one @ _Ws[3], "the output with 1 head", mistakes=_mistake)
_far, _big = np.abs(_X) + 1, 1e5 * np.eye(8)  # entries >= 1 and W_K = -W_Q: every score is below -1e10
_w_far = multi_head_attention(_far, _big, -_big, np.eye(8), np.eye(8), 2, mask=_causal)[1]
checks.blocked_weights_zero(_w_far, _causal, "the weights when every score is below -1e10 (2 heads)")


### BEGIN HIDDEN TESTS
def _mha_numpy_hidden():
    rng = np.random.default_rng(33)
    B, T, d, H = 2, 5, 48, 3  # d_k = 16
    d_k, X = d // H, rng.standard_normal((B, T, d))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) * 1.5 for _ in range(4))
    allowed = np.tril(np.ones((T, T), dtype=bool))  # True = may attend
    allowed[0, 0], allowed[0, 3] = False, True  # a row whose only allowed key is not the first

    def torch_mha(W_Q, W_K, W_V, W_O, mask):
        """nn.MultiheadAttention with these weights copied in: (output, every head's weights)."""
        reference, x = nn.MultiheadAttention(d, H, bias=False, batch_first=True).double(), torch.from_numpy(X)
        with torch.no_grad():
            reference.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_Q.T, W_K.T, W_V.T])))
            reference.out_proj.weight.copy_(torch.from_numpy(W_O.T))
            blocked = None if mask is None else torch.from_numpy(~mask)  # PyTorch: True = blocked
            out, w = reference(x, x, x, attn_mask=blocked, average_attn_weights=False)  # every head's weights
        return out.numpy(), w.numpy()

    for mask in (None, allowed):
        want, want_w = torch_mha(W_Q, W_K, W_V, W_O, mask)
        merged = torch_mha(W_Q, W_K, W_V, np.eye(d), mask)[0]  # the heads, merged, before W_O
        unswapped = np.swapaxes(merged.reshape(B, T, H, d_k), 1, 2).reshape(B, T, d) @ W_O
        shared = torch_mha(*(np.tile(W[:, :d_k], H) for W in (W_Q, W_K, W_V)), W_O, mask)[0]  # head 1's columns
        wide = torch_mha(W_Q * np.sqrt(d_k / d), W_K, W_V, W_O, mask)[0]  # scores divided by sqrt(d_model)
        mistakes = {
            "the heads are merged without swapping the heads and T axes first (use your merge_heads).": unswapped,
            "every head uses the same columns: head i must use its own block of d_k columns of Q, K and V.": shared,
            "the scores are divided by sqrt(d_model): divide by sqrt(d_k), the width of one head.": wide,
            "W_O is missing: multiply the merged heads by W_O.": merged,
        }
        what = f"{'with' if mask is not None else 'without'} a mask (d_model = 48, 3 heads)"
        out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, H, mask=mask)
        checks.expect_close(out, want, f"the output {what}, compared with nn.MultiheadAttention", mistakes=mistakes)
        checks.expect_close(w, want_w, f"the weights of every head {what}")
    one = multi_head_attention(X[1], W_Q, W_K, W_V, W_O, H, mask=allowed)[0]
    checks.expect_close(one, want[1], "the output for one sequence X[1] of shape (T, d_model)")
    two = multi_head_attention(X[None], W_Q, W_K, W_V, W_O, H, mask=allowed)[0]
    checks.expect_close(two, want[None], "the output for X with two leading axes, shape (1, 2, 5, 48)")
    far, big = np.abs(X) + 1, 1e5 * np.eye(d)  # entries >= 1 and W_K = -W_Q: every score is below -1e10
    w_far = multi_head_attention(far, big, -big, np.eye(d), np.eye(d), H, mask=allowed)[1]
    checks.blocked_weights_zero(w_far, allowed, "the weights when every score is below -1e10 (3 heads)")


_mha_numpy_hidden()
split_heads, merge_heads = _students_split_merge
multi_head_attention = _students_mha
### END HIDDEN TESTS
checks.passed("multi_head_attention")

# %% [markdown]
# ### One query through the heads
#
# Now follow the numbers. The figure below is drawn from **your** `multi_head_attention` (the weights and
# the output), `split_heads` and `merge_heads` (the pieces in between), on three tokens, *The dog barked*,
# with $d_{\text{model}} = 4$ and two heads of $d_k = 2$ (fixed random embeddings and weight matrices).
# Read it from top to bottom:
# * one product per projection computes every head's queries, keys and values at once; the tint shows
#   which columns belong to which head (green: head 1, pink: head 2);
# * `split_heads` hands each head its own columns, and each head runs lesson 4's attention on them: its
#   own scores, its own softmax, its own weights $A_h$;
# * `merge_heads` puts the heads' outputs side by side, and $W^O$ mixes them: the rows of $W^O$ that
#   multiply head 1's columns are tinted like head 1.
#
# The query of *dog* is outlined in orange all the way through.

# %%
CELL_W, CELL_H = 0.33, 0.27  # inches per matrix entry in the data-flow figure (6.4 in wide: fits 1024 px)
HEAD_TINTS = [0.3 * np.array(to_rgb(plots.color(m))) + 0.7 for m in ("other", "other2")]  # light: dark text


def draw_matrix(ax, M, x, y, title, fills=None, row=None, labels=(), digits=1):
    """Matrix M with its numbers (plots.number_grid), top-left corner at (x, y) inches, framed and titled; returns its
    right edge. fills: a colour per entry (white if None); row: the traced query's row, outlined; labels: row names."""
    right, bottom = plots.number_grid(ax, M, x, y, CELL_W, CELL_H, fills, digits, edge="white"), y + len(M) * CELL_H
    ax.add_patch(Rectangle((x, y), right - x, bottom - y, fc="none", ec=plots.TEXT, lw=0.8))
    if row is not None:
        outline = Rectangle((x, y + row * CELL_H), right - x, CELL_H, fc="none", lw=2.2)
        ax.add_patch(outline).set_edgecolor(plots.color("highlight"))
    for i, label in enumerate(labels):
        ax.text(x - 0.06, y + (i + 0.5) * CELL_H, label, ha="right", va="center", fontsize=9, color=plots.TEXT)
    ax.text((x + right) / 2, y - 0.06, title, ha="center", va="bottom", fontsize=9.5, color=plots.TEXT)
    return right


def between(ax, x, y, symbol):
    """An operator (× or →) centred at (x, y) inches, between two matrices."""
    ax.text(x, y, symbol, ha="center", va="center", fontsize=12, color=plots.TEXT)


def head_tints(shape, H, axis=1):
    """Fills of a (rows, cols) matrix with block h of its columns (axis=1) or rows (axis=0) in head h's tint."""
    fills, size = np.ones((*shape, 3)), shape[axis] // H
    for h in range(H):
        block = np.s_[:, h * size : (h + 1) * size] if axis == 1 else np.s_[h * size : (h + 1) * size]
        fills[block] = HEAD_TINTS[h]
    return fills


flow_tokens, flow_H, traced = ["The", "dog", "barked"], 2, 1  # the query of 'dog' is traced
X_flow = data.embed(flow_tokens, 4)  # (3, 4)
W_flow = list(np.random.default_rng(11).standard_normal((4, 4, 4)))  # four (4, 4) matrices: W^Q, W^K, W^V, W^O
with ac.student_code("multi_head_attention"):
    out_flow, A_flow = multi_head_attention(X_flow, *W_flow, flow_H)  # yours: (3, 4) and (2, 3, 3)
    Q_flow, K_flow, V_flow = (X_flow @ W for W in W_flow[:3])  # (3, 4): every head's columns
    Qh, Kh, Vh = (split_heads(M, flow_H) for M in (Q_flow, K_flow, V_flow))  # yours: (2, 3, 2)
    heads_flow = A_flow @ Vh  # (2, 3, 2): each head's output
    concat_flow = merge_heads(heads_flow)  # yours: (3, 4)

    fig = plt.figure(figsize=(6.4, 6.3))
    ax = fig.add_axes([0, 0, 1, 1], xlim=(0, 6.4), ylim=(6.1, -0.2))  # room for a two-line title
    ax.axis("off")
    middle = 1.5 * CELL_H  # half the height of a 3-row matrix
    left = draw_matrix(ax, X_flow, 0.65, 0.8, "X (one row per token)", row=traced, labels=flow_tokens)
    between(ax, left + 0.18, 0.8 + middle, "→")
    left += 0.3
    for M, name in ((Q_flow, "$Q = XW^Q$"), (K_flow, "$K = XW^K$"), (V_flow, "$V = XW^V$")):
        left = draw_matrix(ax, M, left, 0.8, name, head_tints(M.shape, flow_H), traced if M is Q_flow else None) + 0.07
    for h in range(flow_H):
        y, tint, n = 2.15 + 1.3 * h, HEAD_TINTS[h], h + 1
        ax.text(0.05, y - 0.33, f"head {n}: columns {2 * h}–{2 * h + 1} (split_heads)", fontsize=9.5, weight="bold")
        left = draw_matrix(ax, Qh[h], 0.65, y, f"$Q_{n}$", tint, traced, labels=flow_tokens) + 0.2
        left = draw_matrix(ax, Kh[h], left, y, f"$K_{n}$", tint)
        between(ax, left + 0.25, y + middle, "→")
        title = rf"$A_{n} = \mathrm{{softmax}}(Q_{n}K_{n}^\top/\sqrt{{2}})$"
        left = draw_matrix(
            ax, A_flow[h], left + 0.5, y, title, plt.get_cmap(plots.SEQUENTIAL)(A_flow[h])[..., :3], traced, digits=2
        )
        between(ax, left + 0.25, y + middle, "×")
        left = draw_matrix(ax, Vh[h], left + 0.5, y, f"$V_{n}$", tint)
        between(ax, left + 0.25, y + middle, "=")
        draw_matrix(ax, heads_flow[h], left + 0.5, y, f"head {n} = $A_{n}V_{n}$", tint, traced)
    y = 4.95
    ax.text(0.05, y - 0.33, "merge_heads, then $W^O$", fontsize=9.5, weight="bold")
    left = draw_matrix(
        ax, concat_flow, 0.65, y, "Concat(head 1, head 2)", head_tints((3, 4), flow_H), traced, flow_tokens
    )
    between(ax, left + 0.25, y + middle, "×")
    left = draw_matrix(ax, W_flow[3], left + 0.5, y, "$W^O$", head_tints((4, 4), flow_H, axis=0))
    between(ax, left + 0.25, y + middle, "=")
    draw_matrix(ax, out_flow, left + 0.5, y, "output", row=traced)
    favourite = [flow_tokens[int(np.argmax(A_flow[h, traced]))] for h in range(flow_H)]
    fig.suptitle(
        f"The query of 'dog' through two heads:\nhead 1 weighs '{favourite[0]}' most, head 2 '{favourite[1]}'",
        y=0.995,
    )
    plots.show(
        fig,
        name="06_data_flow",
        alt=f"Each head gives 'dog' its own weights, head 1 most on '{favourite[0]}' and head 2 on "
        f"'{favourite[1]}', and merge_heads with W^O mixes their outputs into one. Data-flow diagram with every "
        f"number printed, for the tokens The, dog, barked, d_model = 4 and two heads. X times W^Q, W^K, W^V gives Q, K and V, whose columns 0–1 belong to head 1 and 2–3 to head 2. "
        f"Per head: Q_h, K_h, the weights A_h (the row of 'dog': head 1 {A_flow[0, traced].round(2)}, head 2 "
        f"{A_flow[1, traced].round(2)}), V_h and the head's output A_h V_h. Last row: merge_heads puts the two "
        f"outputs side by side and W^O turns them into the output; the row of 'dog' is outlined throughout.",
    )
    for h in range(flow_H):
        print(f"head {h + 1}: the weights of 'dog' over {flow_tokens} are {A_flow[h, traced].round(3)}")
    print(
        f"the output of your multi_head_attention against Concat(head 1, head 2) · W^O from your merge_heads: "
        f"largest difference {np.abs(out_flow - concat_flow @ W_flow[3]).max():.1e}"
    )

# %% [markdown]
# ## 4. A `MultiHeadAttention` module that PyTorch can check
#
# PyTorch's `nn.MultiheadAttention(d_model, num_heads, batch_first=True)` stores the three input
# projections stacked in one tensor `in_proj_weight` of shape `(3·d_model, d_model)`: rows
# $0 \dots d_{\text{model}}-1$ hold $W^Q$, then $W^K$, then $W^V$, each in `nn.Linear`'s `(d_out, d_in)`
# layout, i.e. transposed, so $W^Q$ = `in_proj_weight[:d_model].T`. Their biases sit in
# `in_proj_bias`, and $W^O$ is an `nn.Linear` called `out_proj`. Your module keeps four separate
# `nn.Linear` layers with biases (PyTorch's default), so that these weights can be copied in.
#
# The copying is done by the course's `load_from_torch(mine, theirs)`, which the next cell imports from
# `attention_course.reuse` (lesson 10 uses it too). It slices `in_proj_weight` and `in_proj_bias` into
# your `W_q`, `W_k` and `W_v` and copies `out_proj` into `W_o`, so it needs the attribute names of the
# spec below. It is a dozen lines: run `load_from_torch??` in a cell to read them.
#
# **Two PyTorch conventions to know.** Its boolean `attn_mask` means `True` = *ignore* (the opposite
# of ours), so it gets `~mask`. And by default it returns the attention weights **averaged over the
# heads**, one `(B, T, T)` map; with `average_attn_weights=False` it returns every head's weights,
# `(B, H, T, T)`, which is what your module returns and what the checks compare.
#
# ### Exercise 6.4 — `MultiHeadAttention` (4 points)
#
# Complete the class (`nn.Module`, `nn.Linear` and `super().__init__()` are introduced in lesson 0). The
# checks rely on this exact interface:
# * `MultiHeadAttention(d_model, num_heads, bias=True)`; store `self.num_heads` and
#   `self.d_k = d_model // num_heads`;
# * four attributes `self.W_q`, `self.W_k`, `self.W_v`, `self.W_o`, each
#   `nn.Linear(d_model, d_model, bias=bias)`, and no other parameters or buffers;
# * `forward(x, mask=None)` with `x` of shape `(B, T, d_model)` and `mask` `None` or a boolean tensor of
#   shape `(T, T)`, **True = may attend** (lesson 4's convention); it returns the tuple
#   `(output, weights)` of shapes `(B, T, d_model)` and `(B, num_heads, T, T)`, computed with torch
#   operations only, so that gradients reach all four layers. Head `i + 1` uses column block `i` of each
#   projection, as in exercise 6.1 (and in `nn.MultiheadAttention`). Blocked keys get weight exactly 0 whatever
#   the allowed scores are ($-\infty$ before the softmax, as in exercise 6.3).
#
# **Lessons 10 and 11 load this class from your notebook**, so the checks also test what they rely on:
# * the mask may be passed by position, `mha(x, mask)`, or by name, `mha(x, mask=mask)`;
# * `bias=False` gives a module without biases, and after `.double()` the module computes in float64
#   and returns float64 (a tensor you create inside `forward`, with `torch.zeros` for example, must take
#   the dtype of `x`);
# * `state_dict()` holds the four layers' weights and biases and nothing else: lesson 10 copies weights
#   between two such modules with `load_state_dict`.
#
# The hidden checks compare your module with `nn.MultiheadAttention` (weights copied in with
# `load_from_torch`) at another size, in float64 (to about $10^{-9}$), with and without biases and masks, and
# run a mask with every score far below $-10^9$.
#
# <details><summary>Hint 1: the idea</summary>
#
# This is exercise 6.3 in torch, with `nn.Linear` layers in place of the matrices: `self.W_q(x)` computes
# $xW^Q + b$ for every head at once. Split, attend in every head, merge, then `self.W_o`.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# In `forward`, name the sizes with `B, T, d_model = x.shape`. A `(B, T, d_model)` tensor `t` becomes
# `(B, num_heads, T, d_k)` with `t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `k.transpose(-2, -1)`, `scores.masked_fill(~mask, float("-inf"))`, `torch.softmax(scores, dim=-1)`,
# and `.transpose(1, 2).reshape(B, T, d_model)` to merge.
# </details>


# %%
from attention_course.reuse import load_from_torch  # noqa: E402


# %% answer="mha-module"
class MultiHeadAttention(nn.Module):
    """Multi-head self-attention with projections W_q, W_k, W_v, W_o (nn.Linear(d_model, d_model))."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        ### BEGIN SOLUTION
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        ### END SOLUTION

    def forward(self, x, mask=None):
        """x: (B, T, d_model); mask: None or bool (T, T), True = may attend.
        Returns (output (B, T, d_model), weights (B, num_heads, T, T))."""
        ### BEGIN SOLUTION
        B, T, d_model = x.shape
        split = lambda t: t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, T, d_k)
        q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        scores = q @ k.transpose(-2, -1) / self.d_k**0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        merged = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        return self.W_o(merged), weights
        ### END SOLUTION


# %% tests="mha-module-tests" points=4
# Visible checks: the interface that lessons 10 and 11 rely on, then your module against nn.MultiheadAttention.
_mine = checks.call(MultiHeadAttention, 8, 2)
_layers = [getattr(_mine, f"W_{_n}", None) for _n in "qkvo"]
checks.expect(
    (getattr(_mine, "num_heads", None), getattr(_mine, "d_k", None)) == (2, 4)
    and all(isinstance(_l, nn.Linear) and _l.weight.shape == (8, 8) and _l.bias is not None for _l in _layers),
    "store self.num_heads, self.d_k = d_model // num_heads and four layers self.W_q, self.W_k, self.W_v, self.W_o, "
    "each nn.Linear(d_model, d_model, bias=bias), with a bias by default.",
)
_keys = sorted(_mine.state_dict())
checks.expect(
    _keys == sorted(f"W_{_n}.{_p}" for _n in "qkvo" for _p in ("weight", "bias")),
    f"state_dict() must hold the four layers' weights and biases only (lesson 10 copies it); yours holds {_keys}.",
)
_plain = checks.attempt(MultiHeadAttention, 8, 2, bias=False, what="MultiHeadAttention(8, 2, bias=False)")
checks.expect(
    all(getattr(_plain, f"W_{_n}").bias is None for _n in "qkvo"),
    "the layers have a bias even with bias=False: pass bias=bias to each nn.Linear.",
)
_MISTAKES = {
    "merge": "the heads are merged without the transpose: (B, H, T, d_k) must become (B, T, H, d_k) first.",
    "split": "the heads are split without the transpose: view as (B, T, H, d_k), then transpose(1, 2).",
    "shared": "every head uses the same projection (the first d_k columns): head i must use its own block.",
    "scale": "the scores are divided by sqrt(d_model): each head has width d_k = d_model / H, divide by sqrt(d_k).",
    "queries": "softmax runs over the queries (dim -2): each row (one query) must sum to 1, so use dim=-1.",
    "no W_O": "the output projection W_o is not applied.",
    "inverted": "the mask is inverted: True means 'may attend' (lesson 4), so fill -inf where the mask is False.",
}


def _mistaken(kind, theirs, x, mask):
    """What a known mistake `kind` computes with the weights of `theirs` (nn.MultiheadAttention, batch_first)."""
    (B, T, d), H = x.shape, theirs.num_heads
    d_k = d // H
    q, k, v = torch.nn.functional.linear(x, theirs.in_proj_weight, theirs.in_proj_bias).chunk(3, dim=-1)
    if kind == "shared":
        q, k, v = (t[..., :d_k].repeat(1, 1, H) for t in (q, k, v))
    split = lambda t: t.reshape(B, H, T, d_k) if kind == "split" else t.reshape(B, T, H, d_k).transpose(1, 2)
    s = split(q) @ split(k).transpose(-1, -2) / (d if kind == "scale" else d_k) ** 0.5
    if mask is not None:
        s = s.masked_fill(mask if kind == "inverted" else ~mask, float("-inf"))
    o = torch.softmax(s, -2 if kind == "queries" else -1) @ split(v)
    o = o.reshape(B, T, d) if kind == "merge" else o.transpose(1, 2).reshape(B, T, d)
    return o if kind == "no W_O" else theirs.out_proj(o)


def _mistakes_for(theirs, x, mask):
    """{message: output} for every known mistake (an inverted mask only when there is a mask)."""
    with torch.no_grad():
        return {
            text: _mistaken(kind, theirs, x, mask)
            for kind, text in _MISTAKES.items()
            if kind != "inverted" or mask is not None
        }


### BEGIN HIDDEN TESTS
def _mha_module_hidden():
    g = torch.Generator().manual_seed(34)
    B, T, d, H = 2, 6, 48, 3  # d_k = 16; in float64, as lesson 11 runs it
    x = torch.randn(B, T, d, generator=g, dtype=torch.float64)
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # True = may attend
    pattern = (torch.arange(T)[:, None] + torch.arange(T)) % 3 != 0  # every row keeps and blocks some keys

    for bias in (True, False):
        theirs = nn.MultiheadAttention(d, H, bias=bias, batch_first=True).double()
        for p in theirs.parameters():
            nn.init.normal_(p, std=1.5 / d**0.5 if p.dim() == 2 else 0.5, generator=g)
        mine = MultiHeadAttention(d, H, bias=bias)
        sizes = [sum(p.numel() for p in module.parameters()) for module in (mine, theirs)]
        checks.expect(sizes[0] == sizes[1], f"with bias={bias} your module has {sizes[0]} parameters, not {sizes[1]}.")
        load_from_torch(mine.double(), theirs)
        for mask in (None, pattern, causal):
            what = f"mha(x, mask) after .double() (d_model = 48, 3 heads, bias={bias}, a mask: {mask is not None})"
            mistakes = _mistakes_for(theirs, x, mask)
            with torch.no_grad():  # the mask passed by position, as lessons 10 and 11 pass it
                checks.same_as_torch_attention(lambda: mine(x, mask), theirs, x, mask, what, mistakes, atol=1e-9)
    mine(x, mask=causal)[0].pow(2).sum().backward()  # the mask by name works too
    grads = {n: getattr(mine, n).weight.grad for n in ("W_q", "W_k", "W_v", "W_o")}
    stuck = [n for n, grad in grads.items() if grad is None or not grad.any()]
    checks.expect(not stuck, f"no gradient reaches {stuck}: use torch operations only (no numpy, no .detach()).")
    with torch.no_grad():  # bias=False here; entries >= 1 and W_k = -W_q: every score is below -1e10
        mine.W_q.weight.copy_(1e5 * torch.eye(d)), mine.W_k.weight.copy_(-1e5 * torch.eye(d))
        checks.blocked_weights_zero(mine(x.abs() + 1, causal)[1], causal, "mha(x, causal), all scores < -1e10")


_mha_module_hidden()
### END HIDDEN TESTS
torch.manual_seed(1)
_theirs = nn.MultiheadAttention(8, 2, batch_first=True)
for _bias in (_theirs.in_proj_bias, _theirs.out_proj.bias):
    nn.init.normal_(_bias)  # PyTorch starts biases at 0: make them count
load_from_torch(_mine, _theirs)
_x, _causal = torch.randn(3, 5, 8), torch.ones(5, 5, dtype=torch.bool).tril()  # B = 3, T = 5, d_model = 8
_what, _m = "mha(x), x of shape (3, 5, 8)", _mistakes_for(_theirs, _x, None)
checks.same_as_torch_attention(lambda: _mine(_x), _theirs, _x, None, _what, _m)
_m = _mistakes_for(_theirs, _x, _causal)
checks.same_as_torch_attention(lambda: _mine(_x, _causal), _theirs, _x, _causal, "mha(x, causal_mask)", _m)
_x64 = _x.double()  # lessons 10 and 11 run the module in float64, with the mask passed by name
_keep = (torch.arange(5)[:, None] + torch.arange(5)) % 3 != 0  # every row keeps some keys and blocks others
_what = "mha(x, mask=mask) after .double(), x in float64, a mask that blocks some keys in every row"
_m = _mistakes_for(_theirs.double(), _x64, _keep)
checks.same_as_torch_attention(lambda: _mine.double()(_x64, mask=_keep), _theirs, _x64, _keep, _what, _m)
_far = MultiHeadAttention(8, 2, bias=False)
with torch.no_grad():  # entries >= 1 and W_k = -W_q: every score is below -1e10
    _far.W_q.weight.copy_(1e5 * torch.eye(8)), _far.W_k.weight.copy_(-1e5 * torch.eye(8))
_w_far = checks.attempt(_far, _x.abs() + 1, _causal, what="mha(x, causal_mask) with every score below -1e10")[1]
checks.blocked_weights_zero(_w_far, _causal, "mha(x, causal_mask), every score below -1e10")
checks.passed("MultiHeadAttention")

# %% [markdown]
# ## 5. Explore: the number of heads
#
# The explorer runs **your** `multi_head_attention` on the dog sentence with fixed random projections
# ($d_{\text{model}} = 8$, so $W^Q, W^K, W^V, W^O$ are $8 \times 8$) and draws one attention map per head
# (rows: queries, columns: keys, in the same order in every map). The row of the query you pick is
# outlined in every map, and each map's title names the key that this query weighs most in that head,
# with its weight.
#
# Move the **heads H** slider: the projection matrices stay the same, only the way their columns are
# grouped into heads changes, from one head of $d_k = 8$ to eight heads of $d_k = 1$.

# %%
dog = data.DOG_SENTENCE


class HeadsView(widgets.View):
    """Your multi_head_attention on the dog sentence: one attention map per head, four to a row; each map's title
    names the key that the picked query weighs most in that head."""

    def __init__(self, d_model=8, seed=1):
        rng = np.random.default_rng(seed)
        self.d_model, self.T = d_model, len(dog)
        self.X = data.embed(dog, d_model)  # (11, 8)
        self.W = [2.0 * rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        self.figures = {}  # number of heads -> its figure and artists, all built when the explorer starts

    def key(self, heads, query):
        return heads  # one layout per number of heads

    COLUMNS = {1: 1, 2: 2, 4: 2, 8: 3}  # maps side by side, per number of heads (the figure fits 1024 px)
    CELL = {1: 0.3, 2: 0.2, 4: 0.18, 8: 0.13}  # inches per weight: smaller maps when there are more

    def corner(self, h, heads):
        """Top-left cell of head h's map in the one image that holds all maps (white cells between them)."""
        row, col = divmod(h, self.COLUMNS[heads])
        return row * (self.T + 3), col * (self.T + 1)

    def build(self, heads, query):
        if not self.figures:  # a change of H then costs a redraw of the labels, not a new figure
            self.figures = {h: self.make_figure(h) for h in (1, 2, 4, 8)}
        self.parts = self.figures[heads]
        self.dynamic = [self.parts["image"], *self.parts["titles"], *self.parts["outlines"], self.parts["finding"]]
        return self.parts["figure"]

    def make_figure(self, heads):
        T, cols, cell = self.T, self.COLUMNS[heads], self.CELL[heads]
        rows = -(-heads // cols)
        mosaic = np.full((rows * (T + 3) - 3, cols * (T + 1) - 1), np.nan)  # NaN cells between the maps: white
        maps_w, maps_h = mosaic.shape[1] * cell, mosaic.shape[0] * cell
        fig = plt.figure(figsize=(maps_w + 1.9, maps_h + 1.8))
        width, height = fig.get_size_inches()
        ax = fig.add_axes([1.0 / width, 1.05 / height, maps_w / width, maps_h / height])
        cmap = plt.get_cmap(plots.SEQUENTIAL).with_extremes(bad="white")
        image = ax.imshow(mosaic, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
        corners = [self.corner(h, heads) for h in range(heads)]
        label_cols = sorted({c for _, c in corners})[: 1 if cols > 2 else cols]  # four maps: keys under the first only
        ax.set_xticks([c + t for c in label_cols for t in range(T)], dog * len(label_cols), rotation=90)
        ax.set_yticks([r + t for r in sorted({r for r, _ in corners}) for t in range(T)], dog * rows)
        ax.tick_params(length=0, labelsize=9 if cell < 0.15 else 10)  # one token label per row of weights
        ax.set_frame_on(False)
        ax.set_xlabel("key (column; the same order in every map)")
        ax.set_ylabel("query (row)")
        titles = [ax.text(c + (T - 1) / 2, r - 0.7, "", ha="center", va="bottom", fontsize=9) for r, c in corners]
        outlines = [Rectangle((c - 0.5, r - 0.5), T, 1, fill=False, lw=2) for r, c in corners]
        for outline in outlines:
            ax.add_patch(outline).set_edgecolor(plots.color("highlight"))
        bar = fig.add_axes([(maps_w + 1.2) / width, 1.05 / height, 0.12 / width, min(maps_h, 3) / height])
        fig.colorbar(plt.cm.ScalarMappable(plt.Normalize(0, 1), cmap), cax=bar, label="weight")
        s = "s" if heads > 1 else ""
        heading = f"Your multi_head_attention, H = {heads} head{s} of $d_k$ = {self.d_model // heads}"
        fig.text(0.5, 1 - 0.08 / height, heading, ha="center", va="top", fontsize=10)
        finding = fig.text(0.5, 1 - 0.3 / height, "", ha="center", va="top", fontsize=10)
        plt.close(fig)  # out of pyplot's list, so that the notebook does not show it: the explorer does
        return dict(figure=fig, image=image, mosaic=mosaic, titles=titles, outlines=outlines, finding=finding)

    def update(self, heads, query):
        _, self.weights = multi_head_attention(self.X, *self.W, heads)  # your code: (heads, 11, 11)
        favourite = [dog[i] for i in self.weights[:, query].argmax(axis=-1)]
        for h in range(heads):
            r, c = self.corner(h, heads)
            self.parts["mosaic"][r : r + self.T, c : c + self.T] = self.weights[h]
            self.parts["outlines"][h].set_y(r + query - 0.5)
            self.parts["titles"][h].set_text(f"head {h + 1}: {favourite[h]} {self.weights[h, query].max():.0%}")
        self.parts["image"].set_data(self.parts["mosaic"])
        n = len(set(favourite))
        self.parts["finding"].set_text(
            f"'{dog[query]}' (outlined) weighs '{favourite[0]}' most"
            if heads == 1
            else f"'{dog[query]}' (outlined): {n} different favourite keys in {heads} heads"
        )

    def alt(self, heads, query):
        favourite = [
            f"head {h + 1}: '{dog[int(np.argmax(self.weights[h, query]))]}' ({self.weights[h, query].max():.0%})"
            for h in range(heads)
        ]
        n = len({text.split("'")[1] for text in favourite})
        found = (
            f"With one head, '{dog[query]}' weighs one key most"
            if heads == 1
            else f"With {heads} heads, '{dog[query]}' has {n} different favourite keys"
            if n > 1
            else f"With {heads} heads, '{dog[query]}' favours the same key in every head"
        )
        return (
            f"{found}: " + "; ".join(favourite) + f". {heads} attention map(s), one per head of width d_k = "
            f"{self.d_model // heads}, of your multi_head_attention on the dog sentence, with the row of the query "
            f"'{dog[query]}' outlined."
        )


heads_explorer = widgets.explore(
    HeadsView(),
    needs=["split_heads", "merge_heads", "multi_head_attention"],
    heads=widgets.choice_slider("heads H", [1, 2, 4, 8], 2),
    query=widgets.dropdown("query", [(f"{t} ({i + 1})", i) for i, t in enumerate(dog)], 1),
)
heads_explorer

# %% [markdown]
# **Things to try.** Compare $H = 1$ with $H = 2$. The single head's scores are exactly the two heads'
# scores added and divided by $\sqrt{2}$ (its $d_k$ is 8 instead of 4), so its map is one compromise
# between theirs, while the two heads can disagree about where a query should look (the titles name each
# head's favourite key). Then try $H = 8$: every head has $d_k = 1$, so its score is a product of two
# *numbers*, $q\,k$. A query with $q > 0$ prefers the key with the largest $k$, a query with $q < 0$ the key
# with the smallest $k$: each head can only favour one of two keys, so in each of its maps the brightest
# cell of every row sits in one of two columns. The cell below counts both effects with your code on the
# explorer's weights.

# %%
with ac.student_code("multi_head_attention"):
    view = heads_explorer.view
    favourites = {}
    for H in (1, 2, 4, 8):
        favourites[H] = multi_head_attention(view.X, *view.W, H)[1].argmax(axis=-1)  # (H, 11): each query's top key
        disagree = int((favourites[H] != favourites[H][0]).any(axis=0).sum())
        print(
            f"H = {H} (d_k = {view.d_model // H}): distinct favourite keys per head "
            f"{[len(set(row)) for row in favourites[H]]}; queries whose heads disagree on the favourite key: "
            f"{disagree} of {len(dog)}"
        )

# %% [markdown]
# ## 6. Experiment: equal to PyTorch, what heads cost, and heads that specialise
#
# **Equal to PyTorch.** Load random weights from `nn.MultiheadAttention` into your module and compare
# outputs and every head's weights, with and without a causal mask. We ask PyTorch for
# `average_attn_weights=False` to get one map per head; its default (`True`) returns their mean over
# the heads, which the cell also compares.

# %%
with ac.student_code("MultiHeadAttention"):
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(64, 8, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
        theirs.out_proj.bias.normal_()
    mine = load_from_torch(MultiHeadAttention(64, 8), theirs)
    x = torch.randn(4, 20, 64)
    causal = torch.ones(20, 20, dtype=torch.bool).tril()  # True = may attend (lesson 4)
    with torch.no_grad():
        for mask, label in ((None, "no mask"), (causal, "causal mask")):
            theirs_mask = None if mask is None else ~mask  # PyTorch: True = ignore
            out, w = mine(x, mask)
            their_out, their_w = theirs(x, x, x, attn_mask=theirs_mask, average_attn_weights=False)
            mean_w = theirs(x, x, x, attn_mask=theirs_mask)[1]  # default: the mean over the heads
            print(
                f"d_model = 64, 8 heads, {label:>11}: largest difference from nn.MultiheadAttention: "
                f"output {(out - their_out).abs().max().item():.1e}, weights {tuple(w.shape)} "
                f"{(w - their_w).abs().max().item():.1e}, default weights {tuple(mean_w.shape)} vs the mean of "
                f"yours over the heads {(w.mean(dim=1) - mean_w).abs().max().item():.1e}"
            )

# %% [markdown]
# **What heads cost.** Each head computes its own $T \times T$ weight matrix, so one sequence needs
# $H \cdot T^2$ attention weights. Your module returns them all and keeps them for the backward pass, so
# here the memory grows with the number of heads and with the *square* of the length. That holds only
# while the weights are stored: lesson 11 computes the same output block by block without ever holding
# them, and its memory grows only linearly in $T$. The parameters do not grow: $W^Q, W^K, W^V, W^O$ are $d_{\text{model}} \times d_{\text{model}}$
# whatever $H$ is (with $d_k = d_{\text{model}}/H$), so there are $4(d_{\text{model}}^2 + d_{\text{model}})$
# numbers with biases. More heads only cut the same matrices into narrower blocks. We count both on your
# module, with $d_{\text{model}} = 64$.

# %%
with ac.student_code("MultiHeadAttention"):
    d_cost, head_counts, lengths = 64, [1, 2, 4, 8, 16], [16, 32, 64, 128, 256]
    params = {H: sum(p.numel() for p in MultiHeadAttention(d_cost, H).parameters()) for H in head_counts}
    torch_params = {H: sum(p.numel() for p in nn.MultiheadAttention(d_cost, H).parameters()) for H in head_counts}
    formula = 4 * (d_cost**2 + d_cost)
    entries = {}
    with torch.no_grad():
        for H in head_counts[:4]:
            layer = MultiHeadAttention(d_cost, H)
            entries[H] = [layer(torch.randn(1, T, d_cost))[1].numel() for T in lengths]

    fig, (memory, count) = plt.subplots(1, 2, figsize=(6.6, 3.6), layout="constrained")
    for H in entries:
        memory.loglog(lengths, entries[H], "o-", color=plots.color("yours"))
        memory.annotate(
            f"H = {H}", (lengths[-1], entries[H][-1]), xytext=(6, 0), textcoords="offset points", va="center"
        )
    memory.set_xticks(lengths, [str(T) for T in lengths])
    memory.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))  # 1,000, not 10³
    memory.minorticks_off()
    memory.set_xlim(12, 700)  # room for the labels at the right
    memory.set_xlabel("sequence length T")
    memory.set_ylabel("attention weights per sequence")
    memory.set_title("Stored weights grow as H·T²")
    labels = [str(H) for H in head_counts]
    count.bar(labels, [params[H] for H in head_counts], color=plots.color("yours"), label="your module")
    count.plot(labels, [torch_params[H] for H in head_counts], "_", ms=28, mew=2.5, color=plots.color("pytorch"))
    count.lines[-1].set_label("nn.MultiheadAttention")
    count.set_ylim(0, 1.6 * formula)
    count.legend(loc="upper center")
    count.set_xlabel("number of heads H")
    count.set_ylabel("parameters")
    count.set_title(f"Parameters: {params[1]:,} for every H")
    T_long = lengths[-1]
    plots.show(
        fig,
        name="06_cost",
        alt=f"The attention weights stored per sequence grow as H·T², while the parameter count stays "
        f"{params[1]:,} for every H. Left: attention weights per sequence against length T on log axes, one line per number of heads "
        f"H = 1, 2, 4, 8, each growing as H·T² (for T = {T_long}: "
        + ", ".join(f"{entries[H][-1]:,}" for H in entries)
        + "). Right: bars of the parameter count of your module for H = "
        + ", ".join(labels)
        + f", all {params[1]:,}, with nn.MultiheadAttention's counts marked on top of them, the same.",
    )
    print(f"parameters with d_model = {d_cost}, bias included (4·(d² + d) = {formula:,}):")
    for H in head_counts:
        print(f"  H = {H:2d}: your module {params[H]:,}, nn.MultiheadAttention {torch_params[H]:,}")
    print(
        f"attention weights for T = {T_long}: "
        + ", ".join(f"H = {H}: {entries[H][-1]:,}" for H in entries)
        + f"  (H·T² for H = 8: {8 * T_long**2:,})"
    )

# %% [markdown]
# **Heads that specialise.** Studies of trained Transformers (for example Clark et al., 2019, *What does
# BERT look at?*) report heads that follow grammatical relations. Training a model to do that needs far
# more text than this notebook can process in seconds, so here we **construct** a two-head model by hand,
# to see what such a model looks like inside and to run it through your `multi_head_attention`. Each
# token's embedding ($d_{\text{model}} = 16$) holds a one-hot code of its grammatical role (9 roles) plus
# a small part that tells the words apart. We then write the query and key matrices so that
# * **head 1** (subject–verb): the subject's query matches the main verb's key and vice versa
#   (*dog* ↔ *barked*), and the adverb looks for the verb;
# * **head 2** (relative clause): the subject and the relative pronoun find each other
#   (*dog* ↔ *which*), the auxiliary looks for the pronoun, and the clause's verb looks for its object.
#
# Each link $(r_q \to r_k)$ gets one column $c$ of its head's block: $W^Q[r_q, c] = W^K[r_k, c] = a$, so
# with $H = 2$ heads of $d_k = 8$ the score of a linked pair is $a^2/\sqrt{8}$, and every other score is
# 0. Tokens without a link spread their attention evenly. For comparison we run the **same** matrices
# as one head ($H = 1$, $d_k = 16$).

# %%
ROLES = ["det", "subject", "punct", "rel-pronoun", "aux", "rel-verb", "object", "verb", "adverb"]
ROLE_OF = {
    "The": "det",
    "dog": "subject",
    ",": "punct",
    "which": "rel-pronoun",
    "was": "aux",
    "chasing": "rel-verb",
    "a": "det",
    "squirrel": "object",
    "barked": "verb",
    "loudly": "adverb",
}
LINKS = [  # head 1, head 2: (query role, key role) pairs
    [("subject", "verb"), ("verb", "subject"), ("adverb", "verb")],
    [("subject", "rel-pronoun"), ("rel-pronoun", "subject"), ("aux", "rel-pronoun"), ("rel-verb", "object")],
]
d_dog, H_dog = 16, 2
d_k_dog = d_dog // H_dog
X_dog = np.stack(
    [
        np.concatenate([np.eye(len(ROLES))[ROLES.index(ROLE_OF[t])], 0.3 * data.token_embedding(t, d_dog - len(ROLES))])
        for t in dog
    ]
)  # (11, 16)
linked_score = 6.0  # a²/√d_k with two heads
a = np.sqrt(linked_score * np.sqrt(d_k_dog))
W_Q_dog, W_K_dog = np.zeros((d_dog, d_dog)), np.zeros((d_dog, d_dog))
for head, links in enumerate(LINKS):
    for slot, (role_q, role_k) in enumerate(links):
        column = head * d_k_dog + slot
        W_Q_dog[ROLES.index(role_q), column] = a
        W_K_dog[ROLES.index(role_k), column] = a
W_V_dog = W_O_dog = np.eye(d_dog)

with ac.student_code("multi_head_attention"):
    _, w_dog = multi_head_attention(X_dog, W_Q_dog, W_K_dog, W_V_dog, W_O_dog, H_dog)
    _, w_one = multi_head_attention(X_dog, W_Q_dog, W_K_dog, W_V_dog, W_O_dog, 1)  # same matrices, one head
    i_dog, i_barked, i_which = dog.index("dog"), dog.index("barked"), dog.index("which")
    maps = [
        (w_dog[0], f"head 1\n(subject ↔ verb):\n'dog' → 'barked' {w_dog[0, i_dog, i_barked]:.0%}"),
        (w_dog[1], f"head 2\n(relative clause):\n'dog' → 'which' {w_dog[1, i_dog, i_which]:.0%}"),
        (
            w_one[0],
            f"one head ($d_k$ = 16):\n'dog' splits,\n{w_one[0, i_dog, i_barked]:.0%} and {w_one[0, i_dog, i_which]:.0%}",
        ),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(6.6, 4.4), layout="constrained")
    for ax, (weights, title) in zip(axes, maps):
        plots.attention_heatmap(weights, dog, ax=ax, title=title, annotate=False, colorbar=False)
        ax.set_xticks(range(len(dog)), dog, rotation=90, ha="center")  # upright: at 60° the commas ran into the words
        ax.set_xlabel("key")
        ax.add_patch(Rectangle((-0.5, i_dog - 0.5), len(dog), 1, fill=False, lw=2)).set_edgecolor(
            plots.color("highlight")
        )
    for ax in axes[1:]:
        ax.set_ylabel("")
        ax.tick_params(labelleft=False)
    axes[0].set_ylabel("query")
    fig.colorbar(axes[0].images[0], ax=axes, shrink=0.8, label="weight")
    fig.suptitle("Two heads give 'dog' two sharp links;\nthe same matrices as one head split its weight")
    plots.show(
        fig,
        name="06_dog_heads",
        alt=f"Two heads give 'dog' two sharp links, while the same matrices as one head split its weight between "
        f"'barked' and 'which'. Three attention maps of the dog sentence, the row of 'dog' outlined. Head 1: 'dog' puts "
        f"{w_dog[0, i_dog, i_barked]:.0%} on 'barked'. Head 2: it puts {w_dog[1, i_dog, i_which]:.0%} on "
        f"'which'. The same matrices as one head: 'dog' splits its attention, "
        f"{w_one[0, i_dog, i_barked]:.0%} on 'barked' and {w_one[0, i_dog, i_which]:.0%} on 'which'.",
    )
    s_two = (X_dog @ W_Q_dog[:, :d_k_dog])[i_dog] @ (X_dog @ W_K_dog[:, :d_k_dog])[i_barked] / np.sqrt(d_k_dog)
    s_one = (X_dog @ W_Q_dog)[i_dog] @ (X_dog @ W_K_dog).T / np.sqrt(d_dog)
    print(
        f"head 1: 'dog' puts {w_dog[0, i_dog, i_barked]:.0%} of its attention on 'barked', "
        f"{w_dog[0, i_dog, i_which]:.0%} on 'which'"
    )
    print(
        f"head 2: 'dog' puts {w_dog[1, i_dog, i_which]:.0%} of its attention on 'which', "
        f"{w_dog[1, i_dog, i_barked]:.0%} on 'barked'"
    )
    print(
        f"scores of a linked pair: a²/√{d_k_dog} = {s_two:.2f} in a head of d_k = {d_k_dog}; as one head of "
        f"d_k = {d_dog}, 'dog' scores 'barked' {s_one[i_barked]:.2f} and 'which' {s_one[i_which]:.2f} "
        f"(a²/√{d_dog} = {a**2 / np.sqrt(d_dog):.2f}), every other key {np.delete(s_one, [i_barked, i_which]).max():.2f}"
    )
    print(
        f"one head with the same matrices: 'dog' splits its attention, {w_one[0, i_dog, i_barked]:.0%} on 'barked' "
        f"and {w_one[0, i_dog, i_which]:.0%} on 'which' — its output is a blend of the two values"
    )

# %% [markdown]
# With two heads, the row of *dog* is sharp in both maps, towards a different word in each; the two
# results sit side by side in the concatenation, and $W^O$ can use both. Run as one head, the same
# matrices give *dog* two equal scores, $a^2/\sqrt{16} \approx 4.24$ for *barked* and for *which*
# (smaller than the two heads' $a^2/\sqrt{8} = 6$, because the one head divides by $\sqrt{16}$), and both
# compete in one softmax: *dog* splits its attention and gets a blend, as in section 1. Remember that this
# model is hand-made: it shows what specialised heads *can* look like, not that every trained head is
# this clean (many are not).

# %% [markdown]
# ## 7. Let's review
#
# * One attention head gives each query one weight distribution and one blend of values in one value
#   space; a token in several relations has to split its weight, and the values it collects are summed
#   together.
# * Multi-head attention gives each head $h = 1, \dots, H$ its own projections $W_h^Q, W_h^K, W_h^V$ of
#   width $d_k = d_{\text{model}}/H$ (in practice: the $h$-th block of $d_k$ columns of one
#   $d_{\text{model}} \times d_{\text{model}}$ matrix), runs scaled dot-product attention in every head
#   independently (scale by $\sqrt{d_k}$), concatenates the heads and mixes them with $W^O$. It still
#   returns one vector per query, built from $H$ separately weighted blends.
# * `split_heads` / `merge_heads` are a reshape plus a swap of the heads and `T` axes; forgetting the
#   swap keeps the shapes right but mixes tokens.
# * Your module equals `nn.MultiheadAttention` once its weights are copied in (`in_proj_weight` holds
#   $W^Q, W^K, W^V$ stacked and transposed; `out_proj` is $W^O$). Our boolean masks are True where attention
#   is allowed (lesson 4); `nn.MultiheadAttention`'s `attn_mask` means the opposite, so it gets `~mask`.
#   It averages the weights over the heads unless you pass `average_attn_weights=False`.
# * Cost: $H\cdot T^2$ attention weights per sequence, all held in memory when they are stored as here
#   (lesson 11 avoids storing them); $4(d_{\text{model}}^2 + d_{\text{model}})$ parameters whatever $H$ is.
# * Different heads can follow different relations: *dog → barked* in one, *dog → which* in another.
#
# Next lesson: attention ignores word order entirely — positional encodings put it back.

# %% [markdown]
# ## 8. Check your understanding
#
# Each answer cell holds `qN_answer = None` and, under it, `raise NotImplementedError()`: replace `None`
# with your answer and delete the `raise NotImplementedError()` line. Multiple-choice answers are a letter
# in quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format only;
# the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** $d_{\text{model}} = 512$ with $H = 8$ heads. What is the head size $d_k$?

# %% quiz="quiz-head-size" key="64" points=1

# %% [markdown]
# **Q2 (1 point).** How many parameters do the four projections $W^Q, W^K, W^V, W^O$ of a multi-head
# attention layer with $d_{\text{model}} = 512$ and $H = 8$ have, **with** biases (as in
# `nn.MultiheadAttention(512, 8)`)?

# %% quiz="quiz-param-count" key="1050624" points=1
q2_answer = 4 * (512 * 512 + 512)

# %% [markdown]
# **Q3 (1 point).** With $d_{\text{model}} = 512$ and $H = 8$, what is the shape of $W^O$?
#
# * **a** — $64 \times 64$ &nbsp; **b** — $512 \times 512$ &nbsp; **c** — $8 \times 512$ &nbsp; **d** — $512 \times 64$

# %% quiz="quiz-wo-shape" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** A layer with $H = 8$ heads reads one sequence of $T = 1024$ tokens. How many
# attention weights does it compute?

# %% quiz="quiz-memory" key="8388608" points=1
q4_answer = 8 * 1024**2

# %% [markdown]
# **Q5 (1 point).** You double the number of heads and keep $d_{\text{model}}$ fixed. The number of
# parameters of the layer
#
# * **a** — doubles &nbsp; **b** — stays the same &nbsp; **c** — halves &nbsp; **d** — grows with $T^2$

# %% quiz="quiz-params-vs-heads" choices="abcd" key="b" points=1

# %% [markdown]
# **Q6 (1 point).** A classmate merges the heads with `out.reshape(B, T, d_model)` directly on the
# `(B, H, T, d_k)` tensor. What happens?
#
# * **a** — an error, because the shapes do not fit
# * **b** — the same result, because reshape keeps the numbers in order
# * **c** — the right shape, but rows mix values of different tokens, so the output is wrong
# * **d** — the right result, but slower

# %% quiz="quiz-merge-mistake" choices="abcd" key="c" points=1

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** Eight heads of width 64 use exactly as many
# parameters as one head of width 512. Both return one vector per query. In 3–5 sentences, explain
# what the eight heads can do that the single wide head cannot, and what they give up. Use the
# dog-sentence experiment in your answer.
#
# <details><summary>Before you hand in</summary>
#
# * Does your answer say what each head has of its own, beyond "more vectors"?
# * Does it quote what the dog-sentence experiment printed, for two heads and for the same matrices as
#   one head?
# * Does it name at least one thing the eight heads give up?
# * Is it 3–5 sentences, in your own words?
# </details>

# %% [markdown] manual="quiz-free-why-heads" points=3
# ### BEGIN SOLUTION
# *Model answer.* Each head has its own softmax, so each query gets eight separate weight
# distributions instead of one, and each head delivers its blend in its own value subspace: one head
# can put nearly all of *dog*'s weight on *barked* while another puts it on *which*, and both values
# reach the output side by side in the concatenation, where $W^O$ combines them. A single head with the
# same matrices must share one distribution: *dog* gave two equal scores (about 4.24) to *barked* and
# *which*, split its attention between them and received a sum of about half of each value, as the experiment
# printed. What the eight heads give up is width: each head compares queries and keys in only 64
# dimensions (its own subspace), whereas a single head's scores can use all 512 at once. They also
# store eight $T \times T$ weight matrices instead of one.
#
# *Rubric (3 points).* 1 point: several softmaxes / several independent weight distributions per
# query (and separate value subspaces), letting different heads follow different relations; an answer
# that says one head "can only return one vector" gets this point only if it names the real limit (one
# distribution). 1 point: uses the dog experiment (dog → barked in one head, dog → which in another;
# one head splits its weight and blends). 1 point: names a cost: narrower subspace per head
# ($d_k = d_{\text{model}}/H$) or $H\cdot T^2$ memory for the weights when they are stored, as here. No point for restating the question.
# ### END SOLUTION
