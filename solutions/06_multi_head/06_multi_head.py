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
# **Attention, from the dot product up** · lesson 6
#
# A self-attention head gives every query *one* softmax: one weight distribution over the keys, and
# one blend of values, all in one value space. But a word takes part in several relations at once:
# in *"The dog, which was chasing a squirrel, barked loudly"*, **dog** is the subject of *barked* and
# the noun that *which* refers to. Multi-head attention runs several smaller attentions side by side,
# each with its own weights and its own value subspace, and mixes their results. In this lesson you
# build it in numpy and in PyTorch, prove that your module computes exactly what
# `torch.nn.MultiheadAttention` computes, and measure what heads cost.
#
# **Learning goals.** By the end you can
# 1. split a $d_{\text{model}}$-wide projection into $H$ heads $h = 1, \dots, H$ of width
#    $d_k = d_{\text{model}}/H$ and merge them back;
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
# `raise NotImplementedError()`: replace it with your code. The cell after each exercise runs
# visible checks; hidden checks with other shapes run when your work is graded.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn

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

a = softmax(np.array([4.0, 4.0, 0.0, 0.0]))  # one head: the query matches keys 1 and 2 equally
print(f"one head : weights {a.round(3)}; verb + pronoun get {a[0] + a[1]:.3f} of the weight together")
print(
    f"           output {(a @ values).round(3)}, with the two values swapped {(a @ swapped).round(3)} "
    f"(difference {np.abs(a @ values - a @ swapped).max():.1e})"
)

a1 = softmax(np.array([6.0, 0.0, 0.0, 0.0]))  # head 1 looks for the verb ...
a2 = softmax(np.array([0.0, 6.0, 0.0, 0.0]))  # ... head 2 for the pronoun
two = lambda v: np.array([a1 @ v[:, 0], a2 @ v[:, 1]])  # head 1 reads coordinate 1 of the values, head 2 coordinate 2
print(f"two heads: head 1 puts {a1[0]:.3f} on the verb, head 2 puts {a2[1]:.3f} on the pronoun")
print(f"           output {two(values).round(3)}, with the two values swapped {two(swapped).round(3)}")


# %% [markdown]
# One head hands over half of each value, summed, and the result is the same whichever token carried
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
# Implement `split_heads(X, num_heads)`: `X` of shape `(…, T, d_model)` (any number of leading axes)
# → shape `(…, num_heads, T, d_k)` with `d_k = d_model // num_heads`, where `[..., i, t, :]` holds
# columns `i*d_k` to `(i+1)*d_k - 1` of token `t` (that is head `i + 1`).
#
# <details><summary>Hint</summary>
#
# `X.reshape(*X.shape[:-1], num_heads, d_k)` cuts each row into `num_heads` consecutive blocks, giving
# `(…, T, num_heads, d_k)`; then the axes `T` and heads must change places: `np.swapaxes(…, -2, -3)`.
# A plain reshape straight to `(…, num_heads, T, d_k)` has the right shape but mixes tokens up.
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
# Visible checks: a worked example with T = 2 tokens, d_model = 12, 3 heads (so d_k = 4).
_X = np.arange(24).reshape(2, 12)
# head 1 owns columns 0-3 of both tokens, head 2 columns 4-7, head 3 columns 8-11
_want = np.array(
    [[[0, 1, 2, 3], [12, 13, 14, 15]], [[4, 5, 6, 7], [16, 17, 18, 19]], [[8, 9, 10, 11], [20, 21, 22, 23]]]
)
_mistakes = {
    "a plain reshape to (num_heads, T, d_k) mixes tokens: reshape to (..., T, num_heads, d_k), then swap the T "
    "and heads axes.": _X.reshape(3, 2, 4),
    "the columns are dealt out in turn (head 1 gets columns 0, 3, 6, 9, ...): each head must own a block of "
    "d_k consecutive columns.": np.stack([_X[:, i::3] for i in range(3)]),
}
checks.expect_close(
    checks.call(split_heads, _X, 3), _want, "split_heads on the worked example (2, 12) with 3 heads", mistakes=_mistakes
)
checks.expect_shape(
    split_heads(np.zeros((2, 5, 12)), 4), (2, 4, 5, 3), "split_heads of a (2, 5, 12) batch with 4 heads"
)


### BEGIN HIDDEN TESTS
def _split_heads_hidden():
    rng = np.random.default_rng(31)
    for shape, H in (((2, 5, 12), 3), ((7, 48), 3), ((2, 3, 5, 16), 4), ((5, 6), 1), ((5, 6), 6)):
        X = rng.standard_normal(shape)
        dk = shape[-1] // H
        want = np.stack([X[..., i * dk : (i + 1) * dk] for i in range(H)], axis=-3)
        T = shape[-2]
        mistakes = {
            "a plain reshape to (num_heads, T, d_k) mixes tokens: reshape to (..., T, num_heads, d_k), then swap "
            "the T and heads axes.": X.reshape(*shape[:-2], H, T, dk),
            "the columns are dealt out in turn (head 1 gets columns 0, H, 2H, ...): each head must own a block of "
            "d_k consecutive columns.": np.stack([X[..., i::H] for i in range(H)], axis=-3),
        }
        checks.expect_close(split_heads(X, H), want, f"split_heads of shape {shape} with {H} heads", mistakes=mistakes)


_split_heads_hidden()
### END HIDDEN TESTS
checks.passed("split_heads")


# %% [markdown]
# ### Exercise 6.2 — merge the heads back (2 points)
#
# Implement `merge_heads(heads)`, the inverse: `heads` of shape `(…, H, T, d_k)` → `(…, T, H·d_k)`,
# with `heads[..., i, :, :]` (head `i + 1`) in columns `i*d_k` to `(i+1)*d_k - 1`: the concatenation
# $\operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)$. A round trip
# `merge_heads(split_heads(X, num_heads))` must give `X` back exactly.


# %% answer="merge-heads"
def merge_heads(heads):
    """(..., H, T, d_k) -> (..., T, H * d_k): the concatenation of the heads along the last axis."""
    ### BEGIN SOLUTION
    *batch, H, T, d_k = heads.shape
    return np.swapaxes(heads, -2, -3).reshape(*batch, T, H * d_k)
    ### END SOLUTION


# %% tests="merge-heads-tests" points=2
# Visible checks: the worked example of 6.1 backwards (3 heads, T = 2, d_k = 4), then a round trip.
_heads = np.array(
    [[[0, 1, 2, 3], [12, 13, 14, 15]], [[4, 5, 6, 7], [16, 17, 18, 19]], [[8, 9, 10, 11], [20, 21, 22, 23]]]
)
_mistakes = {
    "a plain reshape of (H, T, d_k) to (T, H*d_k) mixes tokens: swap the heads and T axes first, then reshape.": _heads.reshape(
        2, 12
    ),
    "the heads' columns are interleaved: head i must fill the block [i*d_k, (i+1)*d_k), i.e. concatenate the heads.": np.moveaxis(
        _heads, 0, -1
    ).reshape(2, 12),
}
checks.expect_close(
    checks.call(merge_heads, _heads),
    np.arange(24).reshape(2, 12),
    "merge_heads on the worked example (3, 2, 4)",
    mistakes=_mistakes,
)
_X = np.random.default_rng(0).standard_normal((2, 5, 12))
_X_heads = np.stack(np.split(_X, 4, axis=-1), axis=-3)  # X split into 4 heads without your split_heads (6.1)
checks.expect_close(merge_heads(_X_heads), _X, "merge_heads of X split into 4 heads (a round trip)")


### BEGIN HIDDEN TESTS
def _merge_heads_hidden():
    rng = np.random.default_rng(32)
    for shape in ((2, 3, 5, 4), (3, 7, 16), (2, 2, 4, 3, 5), (1, 5, 6), (6, 5, 1)):
        heads = rng.standard_normal(shape)
        want = np.concatenate([heads[..., i, :, :] for i in range(shape[-3])], axis=-1)
        T, H, dk = shape[-2], shape[-3], shape[-1]
        mistakes = {
            "a plain reshape of (H, T, d_k) to (T, H*d_k) mixes tokens: swap the heads and T axes first, then "
            "reshape.": heads.reshape(*shape[:-3], T, H * dk),
            "the heads' columns are interleaved: head i must fill the block [i*d_k, (i+1)*d_k), i.e. concatenate "
            "the heads.": np.moveaxis(heads, -3, -1).reshape(*shape[:-3], T, H * dk),
        }
        checks.expect_close(merge_heads(heads), want, f"merge_heads of shape {shape}", mistakes=mistakes)
    X = rng.standard_normal((2, 5, 48))
    checks.expect_close(merge_heads(np.stack(np.split(X, 3, axis=-1), axis=-3)), X, "a round trip with 3 heads")


_merge_heads_hidden()
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
# `(…, T, d_model)`. `W_Q`, `W_K`, `W_V` are `(d_model, d_model)` matrices holding all heads'
# projections side by side (section 2), used as `X @ W_Q`; `W_O` is $W^O$, `(d_model, d_model)`; there
# are no biases here. Return the tuple `(output, weights)`: `output` of shape `(…, T, d_model)` and
# the weights of every head, shape `(…, num_heads, T, T)`, each row summing to 1. Use your
# `split_heads`, `merge_heads` and the `softmax` helper.
#
# When your work is graded, this exercise's checks run with correct versions of `split_heads` and
# `merge_heads`, so a mistake in 6.1 or 6.2 costs points there only. The visible checks below use yours.
#
# <details><summary>Hint</summary>
#
# `Q = split_heads(X @ W_Q, num_heads)` (likewise `K`, `V`) has shape `(…, H, T, d_k)`; the scores are
# `Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)`; mask with `np.where(mask, scores, -np.inf)`; then
# `softmax(scores, axis=-1)`, `weights @ V`, `merge_heads(…)` and `@ W_O`.
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
# Graded with correct split_heads and merge_heads (a mistake there costs points in 6.1 / 6.2 only).
def _reference_split_heads(X, num_heads):
    return np.stack(np.split(X, num_heads, axis=-1), axis=-3)


def _reference_merge_heads(heads):
    return np.concatenate([heads[..., i, :, :] for i in range(heads.shape[-3])], axis=-1)


_students_split_merge = (split_heads, merge_heads)
split_heads, merge_heads = _reference_split_heads, _reference_merge_heads
### END HIDDEN TESTS
# Visible checks: B = 3 sequences of T = 5 tokens, d_model = 8, 2 heads (d_k = 4); a mask; one head.
_rng = np.random.default_rng(0)
_X = _rng.standard_normal((3, 5, 8))
checks.expect_close(
    merge_heads(split_heads(_X, 2)),
    _X,
    "merge_heads(split_heads(X, 2)) (this exercise uses your "
    "split_heads and merge_heads: make exercises 6.1 and 6.2 pass first)",
)
_Ws = [_rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(4)]
_out = checks.call(multi_head_attention, _X, *_Ws, 2)
checks.expect(
    isinstance(_out, tuple) and len(_out) == 2, "multi_head_attention must return the tuple (output, weights)."
)
checks.expect(
    not (np.shape(_out[0]) == (3, 2, 5, 5) and np.shape(_out[1]) == (3, 5, 8)),
    "multi_head_attention returned (weights, output): return (output, weights), in that order.",
)
checks.expect_shape(_out[0], (3, 5, 8), "the output for X of shape (3, 5, 8) with 2 heads")
checks.expect_shape(_out[1], (3, 2, 5, 5), "the weights for X of shape (3, 5, 8) with 2 heads")
checks.expect_close(_out[1].sum(axis=-1), np.ones((3, 2, 5)), "the sum of every row of the weights")
_causal = np.tril(np.ones((5, 5), dtype=bool))  # True on and below the diagonal: no looking ahead
_w_masked = multi_head_attention(_X, *_Ws, 2, mask=_causal)[1]
checks.expect(
    float(np.abs(_w_masked[..., ~_causal]).max()) == 0.0,
    "with a causal mask, the weights of blocked positions (mask False) must be exactly 0: "
    "True means 'may attend', as in lesson 4.",
)
# with one head, multi-head attention is single-head attention followed by W_O
_Q, _K, _V = (torch.from_numpy(_X @ _W) for _W in _Ws[:3])
_one = torch.nn.functional.scaled_dot_product_attention(_Q, _K, _V).numpy() @ _Ws[3]
checks.expect_close(
    multi_head_attention(_X, *_Ws, 1)[0],
    _one,
    "the output with 1 head",
    mistakes={"W_O is missing: multiply the merged heads by W_O.": _one @ np.linalg.inv(_Ws[3])},
)


### BEGIN HIDDEN TESTS
def _mha_numpy_hidden():
    rng = np.random.default_rng(33)
    B, T, d, H = 2, 5, 48, 3  # d_k = 16
    X = rng.standard_normal((B, T, d))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) * 1.5 for _ in range(4))
    mha = nn.MultiheadAttention(d, H, bias=False, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_Q.T, W_K.T, W_V.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(W_O.T))
    causal = np.tril(np.ones((T, T), dtype=bool))  # True = may attend
    causal[0, 0], causal[0, 3] = False, True  # a row whose only allowed key is not the first
    dk = d // H

    def variant(kind, mask):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        if kind == "shared":
            Q, K, V = (np.concatenate([M[..., :dk]] * H, axis=-1) for M in (Q, K, V))
        sp = lambda M: np.swapaxes(M.reshape(B, T, H, dk), 1, 2)
        Qh, Kh, Vh = (sp(M) for M in (Q, K, V))
        s = Qh @ np.swapaxes(Kh, -1, -2) / (np.sqrt(d) if kind == "scale" else np.sqrt(dk))
        if mask is not None:
            s = np.where(~mask if kind == "inverted" else mask, s, -np.inf)
        w = softmax(s)
        o = w @ Vh
        merged = o.reshape(B, T, d) if kind == "merge" else np.swapaxes(o, 1, 2).reshape(B, T, d)
        return merged if kind == "no W_O" else merged @ W_O

    names = {
        "merge": "the heads are merged without swapping the heads and T axes first (use your merge_heads).",
        "shared": "every head uses the same columns: head i must use its own block of d_k columns of Q, K and V.",
        "scale": "the scores are divided by sqrt(d_model): each head uses width d_k = d_model / H, divide by sqrt(d_k).",
        "no W_O": "W_O is missing: multiply the merged heads by W_O.",
    }
    for mask in (None, causal):
        # average_attn_weights=False: PyTorch returns every head's weights (B, H, T, T), not their mean over the heads
        want, want_w = mha(
            *(torch.from_numpy(X),) * 3,
            attn_mask=None if mask is None else torch.from_numpy(~mask),
            need_weights=True,
            average_attn_weights=False,
        )
        mistakes = {text: variant(kind, mask) for kind, text in names.items()}
        what = "with a mask" if mask is not None else "without a mask"
        out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, H, mask=mask)
        checks.expect_close(
            out,
            want.detach().numpy(),
            f"the output {what} (d_model = 48, 3 heads), compared with nn.MultiheadAttention",
            mistakes=mistakes,
        )
        checks.expect_close(w, want_w.detach().numpy(), f"the weights of every head {what}")
    out1 = multi_head_attention(X[1], W_Q, W_K, W_V, W_O, H)[0]
    checks.expect_close(
        out1, multi_head_attention(X, W_Q, W_K, W_V, W_O, H)[0][1], "the output for one sequence (T, d_model)"
    )
    out4 = multi_head_attention(X[None], W_Q, W_K, W_V, W_O, H, mask=causal)[0]
    checks.expect_shape(out4, (1, B, T, d), "the output for X with two leading axes (1, 2, 5, 48)")


_mha_numpy_hidden()
split_heads, merge_heads = _students_split_merge
### END HIDDEN TESTS
checks.passed("multi_head_attention")


# %% [markdown]
# ## 4. A `MultiHeadAttention` module that PyTorch can check
#
# PyTorch's `nn.MultiheadAttention(d_model, num_heads, batch_first=True)` stores the three input
# projections stacked in one tensor `in_proj_weight` of shape `(3·d_model, d_model)`: rows
# $0 \dots d_{\text{model}}-1$ hold $W^Q$, then $W^K$, then $W^V$, each in `nn.Linear`'s `(d_out, d_in)`
# layout, i.e. transposed, so $W^Q$ = `in_proj_weight[:d_model].T`. Their biases sit in
# `in_proj_bias`, and $W^O$ is an `nn.Linear` called `out_proj`. Your module keeps four separate
# `nn.Linear` layers with biases (PyTorch's default) so that these weights can be copied in; the
# course's `load_from_torch` (imported below from `attention_course/reuse.py`; `load_from_torch??` shows its
# dozen lines) does the copying: it slices `in_proj_weight` into your three layers and copies `out_proj`.
#
# **Two PyTorch conventions to know.** Its boolean `attn_mask` means `True` = *ignore* (the opposite
# of ours), so it gets `~mask`. And by default it returns the attention weights **averaged over the
# heads**, one `(B, T, T)` map; with `average_attn_weights=False` it returns every head's weights,
# `(B, H, T, T)`, which is what your module returns and what the checks compare.
#
# ### Exercise 6.4 — `MultiHeadAttention` (4 points)
#
# Complete the class (`nn.Module`, `nn.Linear` and `super().__init__()` are introduced in lesson 0). The
# tests rely on this exact interface:
# * `MultiHeadAttention(d_model, num_heads, bias=True)`; store `self.num_heads` and
#   `self.d_k = d_model // num_heads`;
# * four attributes `self.W_q`, `self.W_k`, `self.W_v`, `self.W_o`, each
#   `nn.Linear(d_model, d_model, bias=bias)`, and no other parameters;
# * `forward(x, mask=None)` with `x` of shape `(B, T, d_model)` and `mask` `None` or a boolean tensor of
#   shape `(T, T)`, **True = may attend** (lesson 4's convention); it returns the tuple
#   `(output, weights)` of shapes `(B, T, d_model)` and `(B, num_heads, T, T)`, computed with torch
#   operations only, so that gradients reach all four layers.
#
# <details><summary>Hint</summary>
#
# `t.view(B, T, num_heads, d_k).transpose(1, 2)` splits a `(B, T, d_model)` tensor into heads;
# `.transpose(1, 2).reshape(B, T, d_model)` merges them back; `scores.masked_fill(~mask, float("-inf"))`
# masks; `torch.softmax(scores, dim=-1)` normalises over the keys.
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
# Visible checks: the interface, then (at the end) your module against nn.MultiheadAttention with the same weights.
_mine = checks.call(MultiHeadAttention, 8, 2)
for _name in ("W_q", "W_k", "W_v", "W_o"):
    checks.expect(isinstance(getattr(_mine, _name, None), nn.Linear), f"self.{_name} must be an nn.Linear layer.")
    checks.expect_shape(getattr(_mine, _name).weight, (8, 8), f"self.{_name}.weight for d_model = 8")
    checks.expect(getattr(_mine, _name).bias is not None, f"self.{_name} needs a bias (bias=True is the default).")
checks.expect(
    getattr(_mine, "num_heads", None) == 2 and getattr(_mine, "d_k", None) == 4,
    "store self.num_heads and self.d_k = d_model // num_heads.",
)


### BEGIN HIDDEN TESTS
def _mha_module_hidden():
    g = torch.Generator().manual_seed(34)
    B, T, d, H = 2, 6, 48, 3  # d_k = 16
    x = torch.randn(B, T, d, generator=g)
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # True = may attend
    pattern = (torch.arange(T)[:, None] + torch.arange(T)[None, :]) % 3 != 0  # every row keeps and blocks some keys
    for bias in (True, False):
        theirs = nn.MultiheadAttention(d, H, bias=bias, batch_first=True)
        with torch.no_grad():
            for p in theirs.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (1.5 / d**0.5 if p.dim() == 2 else 0.5))
        mine = MultiHeadAttention(d, H, bias=bias)
        n_mine, n_theirs = sum(p.numel() for p in mine.parameters()), sum(p.numel() for p in theirs.parameters())
        checks.expect(
            n_mine == n_theirs,
            f"with bias={bias} your module has {n_mine} parameters, "
            f"nn.MultiheadAttention has {n_theirs}: four nn.Linear(d_model, d_model, bias=bias) layers only.",
        )
        load_from_torch(mine, theirs)
        Wq, Wk, Wv = (theirs.in_proj_weight[i * d : (i + 1) * d] for i in range(3))
        bq, bk, bv = (theirs.in_proj_bias[i * d : (i + 1) * d] if bias else torch.zeros(d) for i in range(3))
        Wo, bo = theirs.out_proj.weight, theirs.out_proj.bias if bias else torch.zeros(d)
        dk = d // H

        def variant(kind, mask):
            q, k, v = x @ Wq.T + bq, x @ Wk.T + bk, x @ Wv.T + bv
            if kind == "shared":
                q, k, v = (torch.cat([t[..., :dk]] * H, dim=-1) for t in (q, k, v))
            sp = lambda t: t.reshape(B, H, T, dk) if kind == "split" else t.reshape(B, T, H, dk).transpose(1, 2)
            s = sp(q) @ sp(k).transpose(-1, -2) / (d**0.5 if kind == "scale" else dk**0.5)
            if mask is not None:
                s = s.masked_fill(mask if kind == "inverted" else ~mask, float("-inf"))
            o = torch.softmax(s, -1) @ sp(v)
            merged = o.reshape(B, T, d) if kind == "merge" else o.transpose(1, 2).reshape(B, T, d)
            return merged if kind == "no W_O" else merged @ Wo.T + bo

        names = {
            "merge": "the heads are merged without the transpose: (B, H, T, d_k) must become (B, T, H, d_k) before the reshape.",
            "split": "the heads are split without the transpose: view as (B, T, H, d_k), then transpose(1, 2).",
            "shared": "every head uses the same projection (the first d_k columns): head i must use its own block of columns.",
            "scale": "the scores are divided by sqrt(d_model): each head has width d_k = d_model / H, divide by sqrt(d_k).",
            "no W_O": "the output projection W_o is not applied.",
        }
        for mask in (None, pattern, causal):
            with torch.no_grad():
                # average_attn_weights=False: every head's weights (B, H, T, T), not their mean over the heads
                want, want_w = theirs(
                    x, x, x, attn_mask=None if mask is None else ~mask, need_weights=True, average_attn_weights=False
                )
                mistakes = {text: variant(kind, mask) for kind, text in names.items()}
                if mask is pattern:
                    mistakes[
                        "the mask is inverted: True means 'may attend' (lesson 4), so fill -inf where the mask is False."
                    ] = variant("inverted", mask)
                result = mine(x, mask=mask)
            checks.expect(
                isinstance(result, tuple) and len(result) == 2, "forward must return the tuple (output, weights)."
            )
            out, w = result
            checks.expect(
                not (tuple(out.shape) == (B, H, T, T) and tuple(w.shape) == (B, T, d)),
                "forward returned (weights, output): return (output, weights), in that order.",
            )
            what = f"(d_model = 48, 3 heads, bias={bias}, {'no' if mask is None else 'causal' if mask is causal else 'a'} mask)"
            checks.expect_close(
                out, want, f"your output compared with nn.MultiheadAttention's {what}", atol=1e-5, mistakes=mistakes
            )
            checks.expect_close(w, want_w, f"your weights compared with nn.MultiheadAttention's {what}", atol=1e-5)
    mine.zero_grad()
    mine(x)[0].pow(2).sum().backward()
    for name in ("W_q", "W_k", "W_v", "W_o"):
        grad = getattr(mine, name).weight.grad
        checks.expect(
            grad is not None and float(grad.abs().sum()) > 0,
            f"no gradient reaches self.{name}: use torch operations only (no numpy, no .detach()).",
        )


_mha_module_hidden()
### END HIDDEN TESTS
torch.manual_seed(1)
_theirs = nn.MultiheadAttention(8, 2, batch_first=True)
with torch.no_grad():
    _theirs.in_proj_bias.normal_()
    _theirs.out_proj.bias.normal_()  # PyTorch starts biases at 0: make them count
load_from_torch(_mine, _theirs)
_x = torch.randn(3, 5, 8)  # B = 3, T = 5, d_model = 8, 2 heads of d_k = 4
# average_attn_weights=False: PyTorch returns every head's weights (3, 2, 5, 5) instead of their mean (3, 5, 5)
_want, _want_w = _theirs(_x, _x, _x, need_weights=True, average_attn_weights=False)
_result = _mine(_x)
checks.expect(isinstance(_result, tuple) and len(_result) == 2, "forward must return the tuple (output, weights).")
_out, _w = _result
checks.expect(
    not (tuple(_out.shape) == (3, 2, 5, 5) and tuple(_w.shape) == (3, 5, 8)),
    "forward returned (weights, output): return (output, weights), in that order.",
)
checks.expect_shape(_out, (3, 5, 8), "the output for x of shape (3, 5, 8)")
checks.expect_shape(_w, (3, 2, 5, 5), "the weights for x of shape (3, 5, 8) with 2 heads")
try:
    checks.expect_close(
        _out, _want, "your output compared with nn.MultiheadAttention's (d_model = 8, 2 heads)", atol=1e-5
    )
    checks.expect_close(_w, _want_w, "your weights compared with nn.MultiheadAttention's", atol=1e-5)
except AssertionError as _error:
    raise AssertionError(
        f"{_error} Usual causes: merging (or splitting) the heads without the transpose, one "
        "shared projection for all heads, dividing by sqrt(d_model) instead of sqrt(d_k), "
        "a missing W_o."
    ) from None
checks.passed("MultiHeadAttention")

# %% [markdown]
# ## 5. Explore: the number of heads
#
# The explorer runs **your** `multi_head_attention` on the dog sentence with fixed random projections
# ($d_{\text{model}} = 8$, so $W^Q, W^K, W^V, W^O$ are $8 \times 8$). On the left, one map per head
# (rows: queries, columns: keys; grey slots: heads that do not exist for this $H$). On the right, the
# weights of the query you pick, one curve per head, in the colour of its title; its row is marked ▶
# in the maps.
#
# Move the **heads H** slider: the projection matrices stay the same, only the way their columns are
# grouped into heads changes, from one head of $d_k = 8$ to eight heads of $d_k = 1$.

# %%
dog = data.DOG_SENTENCE
HEAD_COLOURS = [plots.COLORS[i] for i in (0, 1, 2, 3, 4, 5, 7)] + ["#7F7F7F"]  # no yellow text on white


class HeadsView(widgets.View):
    """Every head's attention map on the dog sentence (up to 8 heads), and one query's weights in each head."""

    def __init__(self, d_model=8, seed=1):
        rng = np.random.default_rng(seed)
        self.d_model, self.T = d_model, len(dog)
        self.X = data.embed(dog, d_model)  # (11, 8)
        self.W = [2.0 * rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
        self.colour_of = plt.get_cmap(plots.SEQUENTIAL)

    def block(self, i):
        """Rows and columns of head slot i (0..7) in the 2 x 4 mosaic of maps."""
        row, col = divmod(i, 4)
        r, c = row * (self.T + 2), col * (self.T + 1)
        return slice(r, r + self.T), slice(c, c + self.T)

    def build(self, heads, query):
        T = self.T
        fig = plt.figure(figsize=(9.8, 4.7))
        maps = fig.add_axes([0.085, 0.21, 0.55, 0.69])
        self.image = maps.imshow(np.ones((2 * T + 2, 4 * T + 3, 3)), interpolation="nearest")  # an RGB mosaic
        maps.set_yticks([r for row in range(2) for r in range(row * (T + 2), row * (T + 2) + T)], dog * 2)
        maps.set_xticks([c for col in range(4) for c in range(col * (T + 1), col * (T + 1) + T)], dog * 4, rotation=90)
        maps.tick_params(length=0)
        maps.tick_params(axis="y", pad=11)
        for spine in maps.spines.values():
            spine.set_visible(False)
        maps.set_xlim(-0.5, 4 * T + 2.5)
        maps.set_ylim(2 * T + 1.5, -2.0)
        self.titles = [
            maps.text(
                self.block(i)[1].start + (T - 1) / 2,
                self.block(i)[0].start - 0.9,
                "",
                ha="center",
                va="bottom",
                fontsize=10,
                color=HEAD_COLOURS[i],
            )
            for i in range(8)
        ]
        (self.marker,) = maps.plot([], [], ">", color=plots.COLORS[5], ms=7, clip_on=False)
        bar = fig.add_axes([0.648, 0.3, 0.012, 0.5])
        fig.colorbar(plt.cm.ScalarMappable(plt.Normalize(0, 1), self.colour_of), cax=bar)
        bar.set_title("weight", fontsize=9)
        right = fig.add_axes([0.765, 0.21, 0.22, 0.69])
        self.curves = [
            right.plot(range(T), np.full(T, np.nan), "o-" if i < 4 else "s--", ms=4, lw=1.5, color=HEAD_COLOURS[i])[0]
            for i in range(8)
        ]
        right.set_xlim(-0.5, T - 0.5)
        right.set_ylim(0, 1.02)
        right.set_xticks(range(T), dog, rotation=90)
        right.set_xlabel("key")
        right.set_ylabel("weight of the query")
        self.label = right.set_title("", fontsize=10)
        fig.suptitle(
            f"Your multi_head_attention on the dog sentence, d_model = {self.d_model} "
            "(maps: rows = queries ▶, columns = keys; grey = no such head)",
            fontsize=10,
        )
        self.dynamic = [self.image, self.marker, *self.titles, *self.curves, self.label]
        return fig

    def update(self, heads, query):
        _, weights = multi_head_attention(self.X, *self.W, heads)  # your code: (heads, 11, 11)
        mosaic = np.ones((2 * self.T + 2, 4 * self.T + 3, 3))  # white gaps
        for i in range(8):
            present = i < heads
            mosaic[self.block(i)] = self.colour_of(weights[i])[..., :3] if present else 0.88  # grey: no head
            self.curves[i].set_ydata(weights[i, query] if present else np.full(self.T, np.nan))
            self.titles[i].set_text(f"head {i + 1}" if present else "")
        self.image.set_data(mosaic)
        rows = [query] + ([query + self.T + 2] if heads > 4 else [])
        self.marker.set_data([-1.0] * len(rows), rows)
        self.label.set_text(f"H = {heads} head(s) of d_k = {self.d_model // heads}")
        self.weights = weights

    def alt(self, heads, query):
        favourite = [
            f"head {i + 1}: '{dog[int(np.argmax(self.weights[i, query]))]}' ({self.weights[i, query].max():.0%})"
            for i in range(heads)
        ]
        return (
            f"Attention maps of {heads} head(s) of width d_k = {self.d_model // heads} on the dog sentence, "
            f"and the weights of the query '{dog[query]}' in each head. Its largest weight: " + "; ".join(favourite)
        )


heads_explorer = widgets.explore(
    HeadsView(),
    needs=["split_heads", "merge_heads", "multi_head_attention"],
    heads=widgets.choice_slider("heads H", [1, 2, 4, 8], 2),
    query=widgets.dropdown("query", [(f"{t} ({i + 1})", i) for i, t in enumerate(dog)], 1),
)
heads_explorer

# %% [markdown]
# **Things to try.** Compare $H = 1$ with $H = 2$: the single head's map is one compromise; the two
# heads can disagree about where a query should look. Then try $H = 8$: every head has $d_k = 1$, so
# its score is a product of two *numbers*, $q\,k$. A query with $q > 0$ prefers the key with the
# largest $k$, a query with $q < 0$ the key with the smallest $k$: each head can only favour one of two
# keys. The cell below counts both effects with your code on the explorer's weights.

# %%
with ac.student_code("multi_head_attention"):
    view = heads_explorer.view
    for H in (1, 2, 4, 8):
        favourite = multi_head_attention(view.X, *view.W, H)[1].argmax(axis=-1)  # (H, 11): each query's top key
        disagree = int((favourite != favourite[0]).any(axis=0).sum())
        print(
            f"H = {H} (d_k = {view.d_model // H}): distinct favourite keys per head "
            f"{[len(set(row)) for row in favourite]}; queries whose heads disagree on the favourite key: "
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
# **What heads cost.** Each head keeps its own $T \times T$ weight matrix, so one sequence needs
# $H \cdot T^2$ attention weights: the memory grows with the number of heads and with the *square* of
# the length. The parameters do not grow: $W^Q, W^K, W^V, W^O$ are $d_{\text{model}} \times d_{\text{model}}$
# whatever $H$ is (with $d_k = d_{\text{model}}/H$), so there are $4(d_{\text{model}}^2 + d_{\text{model}})$
# numbers with biases. More heads only cut the same matrices into narrower blocks. We count both on your module.

# %%
with ac.student_code("MultiHeadAttention"):
    d_cost, head_counts, lengths = 64, [1, 2, 4, 8, 16], [16, 32, 64, 128, 256]
    params = {H: sum(p.numel() for p in MultiHeadAttention(d_cost, H).parameters()) for H in head_counts}
    torch_params = {H: sum(p.numel() for p in nn.MultiheadAttention(d_cost, H).parameters()) for H in head_counts}
    entries = {}
    with torch.no_grad():
        for H in head_counts[:4]:
            layer = MultiHeadAttention(d_cost, H)
            entries[H] = [layer(torch.randn(1, T, d_cost))[1].numel() for T in lengths]

    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for i, H in enumerate(entries):
        axes[0].loglog(lengths, entries[H], "o-", color=plots.COLORS[i], label=f"H = {H}")
    axes[0].set_xticks(lengths, [str(T) for T in lengths])
    axes[0].minorticks_off()
    axes[0].set_xlabel("sequence length T")
    axes[0].set_ylabel("attention weights per sequence")
    axes[0].set_title(f"memory: H·T² (d_model = {d_cost})")
    axes[0].legend()
    axes[1].bar([str(H) for H in head_counts], [params[H] for H in head_counts], color=plots.COLORS[2])
    axes[1].set_xlabel("number of heads H")
    axes[1].set_ylabel("parameters")
    axes[1].set_title(f"parameters of your module (d_model = {d_cost})")
    fig.tight_layout()
    T_long = lengths[-1]
    plots.show(
        fig,
        name="06_cost",
        alt=f"Left: attention weights per sequence against length T on log axes, one line per number of heads "
        f"H = 1, 2, 4, 8, each growing as H·T² (for T = {T_long}: "
        + ", ".join(f"{entries[H][-1]:,}" for H in entries)
        + "). Right: bars of the parameter count of "
        f"your module for H = {head_counts}, all equal to {params[1]:,}.",
    )
    print(
        f"parameters for H = {head_counts}: {sorted(set(params.values()))} (your module), "
        f"{sorted(set(torch_params.values()))} (nn.MultiheadAttention); 4·(d² + d) = {4 * (d_cost**2 + d_cost)}"
    )
    print(
        f"attention weights for T = {T_long}: "
        + ", ".join(f"H = {H}: {entries[H][-1]:,}" for H in entries)
        + f"  (H·T² for H = 8: {8 * T_long**2:,})"
    )

# %% [markdown]
# **Heads that specialise.** Studies of trained Transformers (for example Clark et al., 2019, *What does
# BERT look at?*) report heads that follow grammatical relations. Training a model to do that needs far
# more text than this notebook can process in seconds,
# so here we **construct** a two-head model by hand, to see what such a model looks like inside and
# to run it through your `multi_head_attention`. Each token's embedding ($d_{\text{model}} = 16$)
# holds a one-hot code of its grammatical role (9 roles) plus a small identity part. We then write
# the query and key matrices so that
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
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    for head, title in ((0, "head 1: subject ↔ verb"), (1, "head 2: relative clause")):
        plots.attention_heatmap(w_dog[head], dog, ax=axes[head], title=title, annotate=False, colorbar=False)
    plots.attention_heatmap(w_one[0], dog, ax=axes[2], title="the same matrices as ONE head (d_k = 16)", annotate=False)
    fig.suptitle("Constructed model on the dog sentence (d_model = 16): rows attend to columns")
    fig.tight_layout()
    i_dog, i_barked, i_which = dog.index("dog"), dog.index("barked"), dog.index("which")
    plots.show(
        fig,
        name="06_dog_heads",
        alt=f"Three attention maps of the dog sentence. Head 1: the row of 'dog' puts "
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
# * Cost: $H\cdot T^2$ attention weights per sequence; $4(d_{\text{model}}^2 + d_{\text{model}})$
#   parameters whatever $H$ is.
# * Different heads can follow different relations: *dog → barked* in one, *dog → which* in another.
#
# Next lesson: attention ignores word order entirely — positional encodings put it back.

# %% [markdown]
# ## 8. Check your understanding
#
# Replace `None` in each answer cell. Multiple-choice answers are a letter in quotes, e.g. `"a"`;
# numeric answers are a number. The cell after each answer checks the format only.
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

# %% [markdown] manual="quiz-free-why-heads" points=3
# ### BEGIN SOLUTION
# *Model answer.* Each head has its own softmax, so each query gets eight separate weight
# distributions instead of one, and each head delivers its blend in its own value subspace: one head
# can put nearly all of *dog*'s weight on *barked* while another puts it on *which*, and both values
# reach the output side by side in the concatenation, where $W^O$ combines them. A single head with the
# same matrices must share one distribution: *dog* gave two equal scores (about 4.24) to *barked* and
# *which*, split its attention between them and received a sum of half of each value, as the experiment
# printed. What the eight heads give up is width: each head compares queries and keys in only 64
# dimensions (its own subspace), whereas a single head's scores can use all 512 at once. They also
# store eight $T \times T$ weight matrices instead of one.
#
# *Rubric (3 points).* 1 point: several softmaxes / several independent weight distributions per
# query (and separate value subspaces), letting different heads follow different relations; an answer
# that says one head "can only return one vector" gets this point only if it names the real limit (one
# distribution). 1 point: uses the dog experiment (dog → barked in one head, dog → which in another;
# one head splits its weight and blends). 1 point: names a cost: narrower subspace per head
# ($d_k = d_{\text{model}}/H$) or $H\cdot T^2$ memory for the weights. No point for restating the question.
# ### END SOLUTION
