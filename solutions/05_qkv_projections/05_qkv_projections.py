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
# # Lesson 5 — Queries, keys and values from learned projections
#
# **Attention, from the dot product up** · lesson 5
#
# Until now somebody handed us the queries, keys and values. In a Transformer nobody does: every
# token has a single embedding vector, and the network itself must turn it into a query, a key and
# a value. It does so with three matrices that it learns. This lesson builds that step, wraps it
# into a *self-attention layer* in numpy and in PyTorch, and trains the layer to find one specific
# relation between tokens.
#
# **Learning goals.** By the end you can
# 1. compute $Q = XW^Q$, $K = XW^K$, $V = XW^V$ for a whole sequence and say what each shape is;
# 2. explain why queries and keys need *different* matrices (relations are not symmetric);
# 3. write single-head self-attention as a numpy function and as a `torch.nn.Module` built from
#    `nn.Linear` layers;
# 4. train that layer on a toy task and read what it learned from its attention map.
#
# **You need from lesson 4:** scaled dot-product attention,
# $\operatorname{softmax}\!\big(QK^\top/\sqrt{d_k}\big)\,V$. You built `softmax` there and showed that
# it equals `torch.softmax`; from here on we use PyTorch's (the `softmax` helper below wraps it for
# numpy arrays). **From `00_pytorch_primer`:** tensors and autograd (`loss.backward()`), a module
# (`nn.Module`) built from `nn.Linear` layers, and a training step with an optimiser (`torch.optim.Adam`).
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
# ## 1. One embedding, three roles
#
# Stack the embeddings of a sentence's $T$ tokens as the rows of a matrix
# $X \in \mathbb{R}^{T \times d_{\text{model}}}$. **Self-attention** lets the tokens of one sequence attend
# to each other: the queries, the keys and the values all come from the same $X$, as three new matrices:
#
# $$Q = X W^Q,\qquad K = X W^K,\qquad V = X W^V,$$
#
# with $W^Q, W^K \in \mathbb{R}^{d_{\text{model}} \times d_k}$ and $W^V \in \mathbb{R}^{d_{\text{model}} \times d_v}$.
# Row $t$ of $Q$ is token $t$'s query, row $t$ of $K$ its key, row $t$ of $V$ its value. The three
# matrices are ordinary parameters: they start random and are learned by gradient descent.
#
# Why three? Entry $j$ of a token's query is the dot product of its embedding with **column** $j$ of
# $W^Q$: each column reads one direction of the embedding. So $W^Q$ keeps $d_k$ directions of the token,
# usually fewer than the embedding has ($d_k < d_{\text{model}}$) — a projection into a smaller
# *subspace* — and each of the three matrices keeps a different *view* of the token:
#
# * the **query** view says what the token is looking for ("I am a verb: where is my subject?");
# * the **key** view says what the token can be found by ("I am a noun that can be a subject");
# * the **value** view says what the token hands over once it is found (its meaning, number, …).
#
# In lesson 2's video search, the tags (keys) and the video file (value) were two different
# descriptions of the same video, and your search words (query) had to be written in the language
# of the tags. Here the network learns all three descriptions from one embedding.
#
# **Shapes.** `X` is `(T, d_model)`, or `(B, T, d_model)` for a batch of $B$ sentences. Because
# `@` multiplies over the last axis, `X @ W_Q` works for both and gives `(…, T, d_k)`.

# %%
sentence = data.DOG_SENTENCE
d_model, d_k = 8, 3  # the sizes of this lesson's demos (not of the exercises)
X = data.embed(sentence, d_model)  # (T, d_model): one row per token
_rng = np.random.default_rng(5)
W_Q, W_K, W_V = (_rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(3))
print(f"{len(sentence)} tokens: {sentence}")
print(f"X: {X.shape}, each of W_Q, W_K, W_V: {W_Q.shape}  ->  Q, K, V: {(len(sentence), d_k)} each")
print(f"parameters in the three matrices: 3 × {d_model} × {d_k} = {3 * W_Q.size}")
print(
    f"entry 0 of the query of '{sentence[1]}' = its embedding · column 0 of W_Q = {X[1] @ W_Q[:, 0]:.4f} "
    f"= (X @ W_Q)[1, 0] = {(X @ W_Q)[1, 0]:.4f}"
)


# %% [markdown]
# ### Exercise 5.1 — project a sequence into queries, keys and values (2 points)
#
# Implement `project_qkv(X, W_Q, W_K, W_V)` returning the tuple `(Q, K, V)`, in this order. `X` has shape
# `(…, T, d_model)` (any number of leading batch axes), `W_Q` and `W_K` have shape
# `(d_model, d_k)`, and `W_V` has shape `(d_model, d_v)`; $d_v$ may differ from $d_k$. `Q` and `K` have
# shape `(…, T, d_k)` and `V` has shape `(…, T, d_v)`.


# %% answer="project-qkv"
def project_qkv(X, W_Q, W_K, W_V):
    """Queries, keys and values of a sequence.

    X: (..., T, d_model); W_Q, W_K: (d_model, d_k); W_V: (d_model, d_v)
    returns (Q, K, V) with shapes (..., T, d_k), (..., T, d_k), (..., T, d_v)
    """
    ### BEGIN SOLUTION
    return X @ W_Q, X @ W_K, X @ W_V
    ### END SOLUTION


# %% tests="project-qkv-tests" points=2
# Visible checks: a worked example (T = 4, d_model = 3, d_k = 2, d_v = 1), then a batch.
_X = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
_W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_W_K = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0]])
_W_V = np.array([[2.0], [0.0], [1.0]])
# row 0 of X: 1·[1,0] + 2·[1,1] = [3, 2] for Q;  1·[0,1] + 2·[0,2] = [0, 5] for K;  1·2 + 2·1 = 4 for V
_out = checks.call(project_qkv, _X, _W_Q, _W_K, _W_V)
checks.expect(isinstance(_out, tuple) and len(_out) == 3, "project_qkv must return a tuple (Q, K, V).")
_Q, _K, _V = _out
checks.expect(
    checks.to_numpy(_Q).shape != (4, 1),
    "the first element has the shape of V: return the tuple in the order (Q, K, V).",
)
checks.expect_shape(_V, (4, 1), "V (the values use W_V, of shape (d_model, d_v) = (3, 1))")
_Q_want, _K_want = [[3.0, 2.0], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0]], [[0.0, 5.0], [1.0, 2.0], [1.0, 1.0], [0.0, 2.0]]
checks.expect_close(
    _Q, _Q_want, "Q on the worked example", mistakes={"Q and K are swapped: Q = X @ W_Q, K = X @ W_K.": _K_want}
)
checks.expect_close(
    _K, _K_want, "K on the worked example", mistakes={"K uses W_Q: every projection has its own matrix.": _Q_want}
)
checks.expect_close(_V, [[4.0], [1.0], [2.0], [1.0]], "V on the worked example")
_Qb, _Kb, _Vb = project_qkv(np.ones((5, 4, 3)), _W_Q, _W_K, _W_V)
checks.expect_shape(_Qb, (5, 4, 2), "Q for a batch of 5 sequences of 4 tokens")
checks.expect_shape(_Vb, (5, 4, 1), "V for a batch of 5 sequences of 4 tokens")


### BEGIN HIDDEN TESTS
def _project_qkv_hidden():
    rng = np.random.default_rng(21)
    B, T, dm, dk, dv = 3, 5, 7, 16, 4  # all sizes distinct
    X = rng.standard_normal((B, T, dm))
    W_Q, W_K, W_V = rng.standard_normal((dm, dk)), rng.standard_normal((dm, dk)), rng.standard_normal((dm, dv))
    out = project_qkv(X, W_Q, W_K, W_V)
    checks.expect(isinstance(out, tuple) and len(out) == 3, "project_qkv must return a tuple (Q, K, V).")
    Q, K, V = out
    want = [torch.nn.functional.linear(torch.from_numpy(X), torch.from_numpy(W.T)).numpy() for W in (W_Q, W_K, W_V)]
    swapped = "Q and K are swapped: Q = X @ W_Q, K = X @ W_K."
    checks.expect_close(Q, want[0], "Q for a batch", mistakes={swapped: want[1]})
    checks.expect_close(K, want[1], "K for a batch", mistakes={swapped: want[0]})
    checks.expect_close(V, want[2], "V for a batch (d_v differs from d_k)")
    Q1, K1, V1 = project_qkv(X[0], W_Q, W_K, W_V)
    checks.expect_close(V1, want[2][0], "V for a single sequence")


_project_qkv_hidden()
### END HIDDEN TESTS
checks.passed("project_qkv")

# %% [markdown]
# ## 2. Why queries and keys need different matrices
#
# The score of query token $i$ for key token $j$ is
#
# $$s_{ij} = q_i \cdot k_j = x_i^\top \, W^Q (W^K)^\top \, x_j .$$
#
# Suppose we saved parameters and used one matrix for both, $W^K = W^Q = W$. Then
# $s_{ij} = x_i^\top W W^\top x_j$ and, because $WW^\top$ is symmetric, $s_{ij} = s_{ji}$: if *barked*
# gives *dog* a high score, then *dog* must give *barked* exactly the same score. Worse, a token's
# score with itself is $s_{ii} = \lVert q_i\rVert^2$, and by the Cauchy–Schwarz inequality
# $s_{ij} \le \lVert q_i\rVert\,\lVert q_j\rVert$, so unless another token has a longer query, each
# token likes *itself* best.
#
# Language is full of one-way relations. A verb looks for its subject; the subject has no reason to
# look for that particular verb. A pronoun looks back for the noun it stands for, not the other way
# round. With separate $W^Q$ and $W^K$, the matrix $W^Q (W^K)^\top$ need not be symmetric, so $s_{ij}$
# and $s_{ji}$ are free to differ. The cell below measures both effects with your `project_qkv`.
#
# It is not an *arbitrary* matrix, though. $W^Q (W^K)^\top$ is $d_{\text{model}} \times d_{\text{model}}$,
# but it is the product of two matrices with only $d_k$ columns, so its **rank is at most $d_k$**: the
# score sees the query token only through the $d_k$ directions that $W^Q$ reads, and the key token only
# through the $d_k$ directions that $W^K$ reads; the rest of both embeddings is invisible to it. That is the price of
# $d_k < d_{\text{model}}$ (and it buys parameters: $2\,d_{\text{model}}\,d_k$ instead of
# $d_{\text{model}}^2$). One head can only compare tokens through $d_k$ directions; lesson 6 runs
# several heads, each with its own subspace.

# %%
with ac.student_code("project_qkv"):
    for label, W_key in (("separate W_Q, W_K", W_K), ("tied W_K = W_Q", W_Q)):
        Q, K, _ = project_qkv(X, W_Q, W_key, W_V)
        S = Q @ K.T  # (T, T) raw scores
        asymmetry = np.abs(S - S.T).max()
        self_best = np.mean(S.diagonal() >= S.max(axis=1) - 1e-9)  # own score is the largest (ties count)
        print(
            f"{label:>18}: max |s_ij - s_ji| = {asymmetry:.3f}; "
            f"tokens whose highest score is for themselves: {self_best:.0%}"
        )

M = W_Q @ W_K.T  # (d_model, d_model): s_ij = x_i M x_j
singular = np.linalg.svd(M, compute_uv=False)
print(
    f"W_Q W_K^T is {M.shape[0]} × {M.shape[1]} with rank {np.linalg.matrix_rank(M)} (d_k = {d_k}); "
    f"its singular values: {np.array2string(singular, precision=2)}"
)
print(
    f"parameters: W_Q and W_K hold 2 × {d_model} × {d_k} = {W_Q.size + W_K.size} numbers, "
    f"a full {d_model} × {d_model} matrix would hold {d_model**2}"
)


# %% [markdown]
# The values get a third matrix for the same reason: what makes a token easy to *find* (its key)
# is usually not what the asking token needs to *receive* (its value).

# %% [markdown]
# ## 3. Self-attention as one function
#
# Put the projections in front of lesson 4's attention and you have a **self-attention layer**: the
# queries, keys and values all come from the same sequence $X$,
#
# $$\operatorname{SelfAttention}(X) = \operatorname{softmax}\!\left(\frac{(XW^Q)(XW^K)^\top}{\sqrt{d_k}}\right) XW^V .$$
#
# Row $i$ of the output is a blend of the values of all tokens, weighted by how well token $i$'s
# query matches their keys. Careful with the scale: it is $\sqrt{d_k}$, the width of the queries and
# keys *after* projection, not $\sqrt{d_{\text{model}}}$.
#
# ### Exercise 5.2 — single-head self-attention in numpy (3 points)
#
# Implement `self_attention(X, W_Q, W_K, W_V)` returning the tuple `(output, weights)`, output first:
# `weights` of shape `(…, T, T)` (row $i$ = query token $i$, each row sums to 1) and `output` of shape
# `(…, T, d_v)`, for `X` of shape `(…, T, d_model)` with any number of leading batch axes. The scores are
# divided by $\sqrt{d_k}$, where $d_k$ is the width of *these* queries and keys (read it from the arrays,
# not from the notebook's variable `d_k` of section 1).
#
# You may call your `project_qkv` and the `softmax` helper defined at the top. The checks call your
# function with a reference `project_qkv` in place of yours, so a mistake in exercise 5.1 costs points
# only there.
#
# <details><summary>Hint</summary>
#
# Project with `project_qkv`, then do what lesson 4's attention did. To transpose `K` when it has batch
# axes, swap only its last two axes: `np.swapaxes(K, -1, -2)`. Softmax over the last axis (the keys).
# </details>


# %% answer="self-attention"
def self_attention(X, W_Q, W_K, W_V):
    """Single-head self-attention.

    X: (..., T, d_model); W_Q, W_K: (d_model, d_k); W_V: (d_model, d_v)
    returns (output (..., T, d_v), weights (..., T, T))
    """
    ### BEGIN SOLUTION
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
    ### END SOLUTION


# %% tests="self-attention-tests" points=3
# Visible checks. These call your function with a reference project_qkv in place of yours, so that a
# mistake in exercise 5.1 costs points only there (your project_qkv was checked above).
def _reference_project_qkv(X, W_Q, W_K, W_V):
    return tuple(torch.nn.functional.linear(torch.as_tensor(X), torch.as_tensor(W).T).numpy() for W in (W_Q, W_K, W_V))


_self_attention = checks.with_references(self_attention, project_qkv=_reference_project_qkv)

# Worked example: T = 3 tokens, d_model = 2, d_k = 4 (so sqrt(d_k) = 2), d_v = 1.
_X = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
_W_Q = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
_W_K = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
_W_V = np.array([[1.0], [0.0]])
# Q = [[2,0,0,0],[0,2,0,0],[1,1,0,0]], K = [[0,2,0,0],[0,0,2,0],[0,1,1,0]], V = [[2],[0],[1]]
_S = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 2.0], [2.0, 0.0, 1.0]])  # Q K^T, divided by sqrt(4) = 2 below
_rows = lambda s: np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
_want = _rows(_S / 2)
_mistakes = {
    "the scores are not scaled: divide Q K^T by sqrt(d_k).": _rows(_S),
    "the scores are divided by d_k instead of sqrt(d_k).": _rows(_S / 4),
    "the scores are divided by sqrt(d_model): use the width of the queries and keys, d_k.": _rows(_S / np.sqrt(2)),
    "softmax runs over the queries (axis -2): each *row* (one query) must sum to 1, so use axis=-1.": np.exp(_S / 2)
    / np.exp(_S / 2).sum(axis=0, keepdims=True),
    "the weights are transposed: row i must be query token i.": _want.T,
    "the scores are K Q^T: row i must hold query i's scores, so compute Q K^T.": _rows(_S.T / 2),
}
_global_d_k = globals().get("d_k")
if isinstance(_global_d_k, (int, float)) and _global_d_k not in (1, 2, 4):
    _mistakes[
        f"the scores are divided by sqrt({_global_d_k}): that is the notebook's variable d_k = {_global_d_k} "
        "from section 1, not the width of these queries and keys. Read d_k from the arrays (Q.shape[-1])."
    ] = _rows(_S / np.sqrt(_global_d_k))
_out = checks.call(_self_attention, _X, _W_Q, _W_K, _W_V)
checks.expect(isinstance(_out, tuple) and len(_out) == 2, "self_attention must return a tuple (output, weights).")
checks.expect(
    not (checks.to_numpy(_out[0]).shape == (3, 3) and checks.to_numpy(_out[1]).shape == (3, 1)),
    "the tuple is the wrong way round: you returned (weights, output); return (output, weights), output first.",
)
checks.expect(
    checks.to_numpy(_out[0]).shape != (3, 4),
    "the output has d_k = 4 columns: it must be the weights times V = X W_V (d_v = 1 column), not times K.",
)
checks.expect_close(_out[1], _want, "the attention weights on the worked example", mistakes=_mistakes)
checks.expect_close(
    _out[0],
    _want @ np.array([[2.0], [0.0], [1.0]]),
    "the output on the worked example (weights @ V)",
    mistakes={"the output is weights.T @ V: use weights @ V.": _want.T @ np.array([[2.0], [0.0], [1.0]])},
)
_o, _w = _self_attention(np.random.default_rng(0).standard_normal((3, 5, 2)), _W_Q, _W_K, _W_V)
checks.expect_shape(_w, (3, 5, 5), "weights for a batch of 3 sequences of 5 tokens")
checks.expect_shape(_o, (3, 5, 1), "output for a batch of 3 sequences of 5 tokens")
checks.expect_close(checks.to_numpy(_w).sum(axis=-1), np.ones((3, 5)), "the sum of every row of the weights")


### BEGIN HIDDEN TESTS
def _self_attention_hidden():
    rng = np.random.default_rng(22)
    B, T, dm, dk, dv = 3, 5, 10, 16, 7
    X = rng.standard_normal((B, T, dm))
    W_Q, W_K, W_V = (rng.standard_normal((dm, n)) / np.sqrt(dm) * 2 for n in (dk, dk, dv))
    Q, K, V = (torch.from_numpy(X @ W) for W in (W_Q, W_K, W_V))
    want_out = torch.nn.functional.scaled_dot_product_attention(Q, K, V).numpy()
    raw = (Q @ K.transpose(-1, -2)).numpy()
    sm = lambda s, axis=-1: torch.softmax(torch.from_numpy(s), dim=axis).numpy()
    want_w = sm(raw / 4.0)
    mistakes = {
        "the scores are not scaled: divide Q K^T by sqrt(d_k).": sm(raw),
        "the scores are divided by d_k instead of sqrt(d_k).": sm(raw / 16.0),
        "the scores are divided by sqrt(d_model): use the width of the queries and keys, d_k.": sm(raw / np.sqrt(dm)),
        "softmax runs over the queries (axis -2): each row (one query) must sum to 1, so use axis=-1.": sm(
            raw / 4.0, -2
        ),
        "the weights are transposed: row i must be query token i.": np.swapaxes(want_w, -1, -2),
        "the scores are K Q^T: row i must hold query i's scores, so compute Q K^T.": sm(np.swapaxes(raw, -1, -2) / 4.0),
    }
    if isinstance(_global_d_k, (int, float)) and _global_d_k not in (1, 4, 16):
        mistakes[
            f"the scores are divided by sqrt({_global_d_k}): that is the notebook's variable d_k = {_global_d_k} "
            "from section 1, not the width of these queries and keys. Read d_k from the arrays (Q.shape[-1])."
        ] = sm(raw / np.sqrt(_global_d_k))
    out = _self_attention(X, W_Q, W_K, W_V)
    checks.expect(isinstance(out, tuple) and len(out) == 2, "self_attention must return a tuple (output, weights).")
    checks.expect(
        not (checks.to_numpy(out[0]).shape == (B, T, T) and checks.to_numpy(out[1]).shape == (B, T, dv)),
        "the tuple is the wrong way round: you returned (weights, output); return (output, weights).",
    )
    checks.expect_close(out[1], want_w, "the attention weights for a batch (d_k = 16, d_model = 10)", mistakes=mistakes)
    checks.expect_close(
        out[0],
        want_out,
        "the output for a batch (d_v = 7)",
        mistakes={"the output is weights.T @ V: use weights @ V.": np.swapaxes(want_w, -1, -2) @ V.numpy()},
    )
    o1, w1 = _self_attention(X[1], W_Q, W_K, W_V)
    checks.expect_close(o1, want_out[1], "the output for a single sequence")
    big = _self_attention(40 * X[:1], W_Q, W_K, W_V)  # large scores: softmax must stay finite
    checks.expect_finite(big[0], "the output for large scores", "use the softmax helper (it subtracts the maximum).")


_self_attention_hidden()
### END HIDDEN TESTS
checks.passed("self_attention")

# %% [markdown]
# ### Self-attention and cross-attention
#
# Nothing in the attention formula requires the queries and the keys to come from the same sequence.
# In **cross-attention** the queries come from one sequence and the keys and values from another: a
# translation model's decoder, for example, lets each word it writes (queries) look at the words of the
# source sentence (keys and values). The weight matrix is then $T_q \times T_k$, one row per token of the
# first sequence and one column per token of the second, and the output has one row per query. Your
# `project_qkv` already does the projections; the cell below calls it on two different sentences
# (lesson 10 builds cross-attention into a decoder).

# %%
queries_from, keys_from = data.SHORT_SENTENCE, data.CAT_CHASES_DOG
X_a, X_b = data.embed(queries_from, d_model), data.embed(keys_from, d_model)
with ac.student_code("project_qkv"):
    Q_a, _, _ = project_qkv(X_a, W_Q, W_K, W_V)  # queries from "the cat sat on the mat"
    _, K_b, V_b = project_qkv(X_b, W_Q, W_K, W_V)  # keys and values from "The cat chased the dog"
    cross_weights = softmax(Q_a @ K_b.T / np.sqrt(W_K.shape[1]))
    cross_output = cross_weights @ V_b
    print(f"queries: {len(queries_from)} tokens {queries_from}; keys and values: {len(keys_from)} tokens {keys_from}")
    print(
        f"weights {cross_weights.shape} (one row per query, rows sum to {cross_weights.sum(axis=-1).min():.3f}), "
        f"output {cross_output.shape}"
    )
    best = cross_weights.argmax(axis=1)
    print("each query's most-weighted key:", ", ".join(f"{q} → {keys_from[j]}" for q, j in zip(queries_from, best)))


# %% [markdown]
# ## 4. The same layer as a PyTorch module
#
# To train the layer we write it as a `torch.nn.Module` whose projections are `nn.Linear` layers
# (`00_pytorch_primer` introduced both). One detail to know: `nn.Linear(d_in, d_out)` stores its weight
# with shape `(d_out, d_in)` and computes `x @ weight.T (+ bias)`. So our $W^Q$ is `W_q.weight.T`, and
# in `nn.Linear`'s own weight it is each **row** that reads one direction of the embedding (a row of
# `weight` is a column of $W^Q$). The original Transformer's projections have no bias, so ours have
# none either (lesson 6 switches the biases on, as PyTorch does by default).
#
# ### Exercise 5.3 — `SelfAttention` as a module (3 points)
#
# Complete the class `SelfAttention(d_model, d_k, d_v=None)`. The tests rely on this interface:
# * `d_v=None`, the default, means $d_v = d_k$;
# * the layer's only parameters are three projections without bias, stored as the attributes `W_q`,
#   `W_k` and `W_v`, each an `nn.Linear` from $d_{\text{model}}$ to $d_k$, $d_k$ and $d_v$ features (the
#   tests copy weights into them);
# * `forward(x)` takes `x` of shape `(B, T, d_model)` or `(T, d_model)` and returns the tuple
#   `(output, weights)`, output first, of shapes `(…, T, d_v)` and `(…, T, T)`: the self-attention of
#   exercise 5.2 with $W^Q$ = `W_q.weight.T`, $W^K$ = `W_k.weight.T`, $W^V$ = `W_v.weight.T`;
# * gradients reach all three projections (section 6 trains the layer).
#
# <details><summary>Hint</summary>
#
# In `__init__`: `nn.Linear(d_model, d_k, bias=False)` and so on, after replacing a `None` `d_v`;
# keep `d_k` (e.g. as `self.d_k`) for the scaling. In `forward`, stay in torch so that autograd can
# follow: `self.W_q(x)` projects, `k.transpose(-2, -1)` transposes the last two axes, and
# `torch.softmax(scores, dim=-1)` normalises over the keys. No numpy and no `.detach()`.
# </details>


# %% answer="self-attention-module"
class SelfAttention(nn.Module):
    """Single-head self-attention with learned projections W_q, W_k, W_v (nn.Linear, no bias)."""

    def __init__(self, d_model, d_k, d_v=None):
        super().__init__()
        ### BEGIN SOLUTION
        d_v = d_k if d_v is None else d_v
        self.d_k = d_k
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_v, bias=False)
        ### END SOLUTION

    def forward(self, x):
        """x: (..., T, d_model) -> (output (..., T, d_v), weights (..., T, T))"""
        ### BEGIN SOLUTION
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1) / self.d_k**0.5
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights
        ### END SOLUTION


# %% tests="self-attention-module-tests" points=3
# Visible checks: the interface (with and without d_v), then the worked example of exercise 5.2 loaded
# into the module. (These checks use no function from the earlier exercises.)
def _new_layer(*args):
    try:
        return checks.call(SelfAttention, *args)
    except NotImplementedError:
        raise
    except (TypeError, ValueError, RuntimeError) as error:
        raise AssertionError(
            f"SelfAttention{args} failed ({type(error).__name__}: {error}). "
            + ("d_v=None (the default) must mean d_v = d_k." if len(args) == 2 else "")
        ) from None


_layer = _new_layer(6, 4, 3)
for _name, _shape in (("W_q", (4, 6)), ("W_k", (4, 6)), ("W_v", (3, 6))):
    checks.expect(isinstance(getattr(_layer, _name, None), nn.Linear), f"self.{_name} must be an nn.Linear layer.")
    checks.expect_shape(getattr(_layer, _name).weight, _shape, f"self.{_name}.weight (nn.Linear stores (d_out, d_in))")
    checks.expect(getattr(_layer, _name).bias is None, f"self.{_name} must have no bias: nn.Linear(..., bias=False).")
_out = _layer(torch.randn(2, 5, 6, generator=torch.Generator().manual_seed(0)))
checks.expect(isinstance(_out, tuple) and len(_out) == 2, "forward must return a tuple (output, weights).")
checks.expect(
    not (tuple(_out[0].shape) == (2, 5, 5) and tuple(_out[1].shape) == (2, 5, 3)),
    "the tuple is the wrong way round: you returned (weights, output); return (output, weights), output first.",
)
checks.expect_shape(_out[0], (2, 5, 3), "the output for x of shape (2, 5, 6) with d_v = 3")
checks.expect_shape(_out[1], (2, 5, 5), "the weights for x of shape (2, 5, 6)")
_out = _layer(torch.randn(5, 6, generator=torch.Generator().manual_seed(1)))
checks.expect_shape(_out[0], (5, 3), "the output for x of shape (5, 6), a single sequence without a batch axis")
_layer = _new_layer(6, 4)
checks.expect_shape(
    _layer.W_v.weight, (4, 6), "self.W_v.weight of SelfAttention(6, 4): d_v=None (the default) means d_v = d_k = 4, so"
)
checks.expect_shape(_layer(torch.randn(2, 5, 6))[0], (2, 5, 4), "the output of SelfAttention(6, 4) (d_v = d_k = 4)")
# The worked example of exercise 5.2: T = 3, d_model = 2, d_k = 4, d_v = 1; nn.Linear's weight is our W transposed.
_X = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
_W_Q = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
_W_K = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
_W_V = np.array([[1.0], [0.0]])
_S = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 2.0], [2.0, 0.0, 1.0]])  # Q K^T, divided by sqrt(4) = 2 below
_rows = lambda s: np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
_want = _rows(_S / 2)
_mistakes = {
    "the scores are not scaled: divide Q K^T by sqrt(d_k).": _rows(_S),
    "the scores are divided by d_k instead of sqrt(d_k).": _rows(_S / 4),
    "the scores are divided by sqrt(d_model): use the width of the queries and keys, d_k.": _rows(_S / np.sqrt(2)),
    "softmax runs over the queries (dim -2): each *row* (one query) must sum to 1, so use dim=-1.": np.exp(_S / 2)
    / np.exp(_S / 2).sum(axis=0, keepdims=True),
    "the weights are transposed: row i must be query token i.": _want.T,
    "the scores are K Q^T: row i must hold query i's scores, so compute Q K^T.": _rows(_S.T / 2),
}
_global_d_k = globals().get("d_k")
if isinstance(_global_d_k, (int, float)) and _global_d_k not in (1, 2, 4):
    _mistakes[
        f"the scores are divided by sqrt({_global_d_k}): that is the notebook's variable d_k = {_global_d_k} "
        "from section 1, not this layer's d_k. Keep the constructor's d_k (e.g. self.d_k) and use it."
    ] = _rows(_S / np.sqrt(_global_d_k))
_layer = _new_layer(2, 4, 1)
with torch.no_grad():
    _layer.W_q.weight.copy_(torch.tensor(_W_Q.T))
    _layer.W_k.weight.copy_(torch.tensor(_W_K.T))
    _layer.W_v.weight.copy_(torch.tensor(_W_V.T))
_o, _w = _layer(torch.tensor(_X, dtype=torch.float32)[None])  # a batch of one sequence
checks.expect_close(_w[0], _want, "the module's weights on the worked example", atol=1e-5, mistakes=_mistakes)
checks.expect_close(
    _o[0], _want @ np.array([[2.0], [0.0], [1.0]]), "the module's output on the worked example", atol=1e-5
)


### BEGIN HIDDEN TESTS
def _module_hidden():
    g = torch.Generator().manual_seed(23)
    B, T, dm, dk, dv = 3, 5, 10, 16, 7
    for d_v in (dv, None):  # an explicit d_v, then the default
        layer = _new_layer(dm, dk) if d_v is None else _new_layer(dm, dk, d_v)
        d_v = dk if d_v is None else d_v
        what = f"SelfAttention({dm}, {dk}{'' if d_v == dk else f', {d_v}'})"
        n_params = sum(p.numel() for p in layer.parameters())
        checks.expect(
            n_params == 2 * dm * dk + dm * d_v,
            f"{what} has {n_params} parameters, expected {2 * dm * dk + dm * d_v}: three bias-free "
            "projections only" + (" (d_v=None means d_v = d_k)." if d_v == dk else "."),
        )
        Wq, Wk, Wv = (torch.randn(n, dm, generator=g) / dm**0.5 * 2 for n in (dk, dk, d_v))
        with torch.no_grad():
            layer.W_q.weight.copy_(Wq)
            layer.W_k.weight.copy_(Wk)
            layer.W_v.weight.copy_(Wv)
        x = torch.randn(B, T, dm, generator=g)
        q, k, v = x @ Wq.T, x @ Wk.T, x @ Wv.T
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        raw = q @ k.transpose(-1, -2)
        want_w = torch.softmax(raw / 4.0, dim=-1)
        mistakes = {
            "the scores are not scaled: divide by sqrt(d_k).": torch.softmax(raw, -1),
            "the scores are divided by d_k instead of sqrt(d_k).": torch.softmax(raw / 16.0, -1),
            "the scores are divided by sqrt(d_model): use d_k, the width of q and k.": torch.softmax(raw / dm**0.5, -1),
            "softmax runs over dim -2 (the queries): each row must sum to 1, so use dim=-1.": torch.softmax(
                raw / 4.0, -2
            ),
            "the weights are transposed: row i must be query token i.": want_w.transpose(-1, -2),
        }
        if isinstance(_global_d_k, (int, float)) and _global_d_k not in (1, 4, 16):
            mistakes[
                f"the scores are divided by sqrt({_global_d_k}): that is the notebook's variable d_k = "
                f"{_global_d_k} from section 1, not this layer's d_k."
            ] = torch.softmax(raw / _global_d_k**0.5, -1)
        out, w = layer(x)
        checks.expect(
            not (tuple(out.shape) == (B, T, T) and tuple(w.shape) == (B, T, d_v)),
            "the tuple is the wrong way round: you returned (weights, output); return (output, weights).",
        )
        checks.expect_close(w, want_w, f"the weights of {what}", atol=1e-5, mistakes=mistakes)
        checks.expect_close(out, want, f"the output of {what}", atol=1e-5)
        out1, _ = layer(x[0])
        checks.expect_close(out1, want[0], f"the output of {what} for one sequence of shape (T, d_model)", atol=1e-5)
        layer.zero_grad()
        layer(x)[0].pow(2).sum().backward()
        for name in ("W_q", "W_k", "W_v"):
            grad = getattr(layer, name).weight.grad
            checks.expect(
                grad is not None and float(grad.abs().sum()) > 0,
                f"no gradient reaches self.{name}: compute with torch operations (no .detach(), no numpy).",
            )


_module_hidden()
### END HIDDEN TESTS
checks.passed("SelfAttention")

# %% [markdown]
# A quick look at the module, built without `d_v` (so $d_v = d_k$): its parameters are exactly the three
# matrices, and with its weights (transposed) handed to your numpy function, the two agree.

# %%
with ac.student_code("SelfAttention"):
    torch.manual_seed(0)
    layer = SelfAttention(d_model, d_k)  # d_v left out: d_v = d_k
    for name, p in layer.named_parameters():
        print(f"{name:10s} {tuple(p.shape)}")
    print("parameters:", sum(p.numel() for p in layer.parameters()), f"= 3 × {d_model} × {d_k}")
    out_torch, w_torch = layer(torch.from_numpy(X).float())
    out_np, w_np = self_attention(
        X, *(getattr(layer, n).weight.detach().double().numpy().T for n in ("W_q", "W_k", "W_v"))
    )
    print(
        f"largest difference between the module (float32) and your numpy function (float64): "
        f"weights {np.abs(w_torch.detach().numpy() - w_np).max():.1e}, "
        f"outputs {np.abs(out_torch.detach().numpy() - out_np).max():.1e}"
    )

# %% [markdown]
# ## 5. Explore: one token's query against every key
#
# Pick a token. The explorer runs **your** `project_qkv` and `self_attention` on the sentence with
# random projections ($d_{\text{model}} = 8$, $d_v = 4$, and $d_k$ from the slider) and shows, for that token,
# 1. its scaled scores $q_i \cdot k_j / \sqrt{d_k}$ against every key (its own score in orange), on one
#    axis for every setting: a symmetric log scale, linear between −1 and 1, so that scores of a few tenths
#    and of tens both show,
# 2. the attention weights (the softmax of those scores; the largest in orange), and
# 3. the output: the weighted sum of the values, one bar per dimension, next to the value of the token
#    that gets the largest weight.
#
# The title counts how many of the 11 tokens give *themselves* their largest score. Change $d_k$, and
# switch the projections between *separate* and *tied* ($W^K = W^Q$).

# %%
_token_options = [(f"{i}: {t}", i) for i, t in enumerate(sentence)]
_labels = [f"{i}: {t}" for i, t in enumerate(sentence)]
D_V_EXPLORE = 4
D_K_CHOICES = [2, 4, 8, 16]


def explorer_weights(d_k, projections):
    """W_Q, W_K (the same matrix when tied) and W_V for the explorer; W_V does not depend on d_k."""
    rng = np.random.default_rng(7)
    W_Q = 1.5 * rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
    W_K = W_Q if projections.startswith("tied") else 1.5 * rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
    W_V = np.random.default_rng(8).standard_normal((d_model, D_V_EXPLORE)) / np.sqrt(d_model)
    return W_Q, W_K, W_V


class QueryView(widgets.View):
    """Scores, weights and output of one token. Built once; update() moves bars and texts."""

    def build(self, token, d_k, projections):
        n = len(sentence)
        fig, axes = plt.subplots(1, 3, figsize=(10, 3.3), gridspec_kw={"width_ratios": [1, 1, 1.1]})
        self.score_bars = axes[0].barh(range(n), np.zeros(n), color=plots.COLORS[0])
        self.zero_line = axes[0].axvline(0, color="black", lw=0.6)
        self.weight_bars = axes[1].barh(range(n), np.zeros(n), color=plots.COLORS[2])
        for ax in axes[:2]:
            ax.set_yticks(range(n), _labels)
            ax.invert_yaxis()
        # one score axis for every setting, drawn once: symmetric-log (linear within ±1), so that scores of
        # a few tenths and of tens fit side by side; its reach comes from the formula here (never from your
        # code), on the same weights the update uses
        largest = max(
            np.abs((X @ W_Q) @ (X @ W_K).T).max() / np.sqrt(d)
            for d in D_K_CHOICES
            for kind in ("separate", "tied")
            for W_Q, W_K, _ in [explorer_weights(d, kind)]
        )
        reach = next(r for r in (1, 2, 5, 10, 20, 50, 100) if r >= 1.05 * largest)
        axes[0].set_xscale("symlog", linthresh=1)
        axes[0].set_xlim(-reach, reach)
        ticks = [t for t in (-100, -10, -1, 0, 1, 10, 100) if abs(t) <= reach]
        axes[0].set_xticks(ticks, [f"{t:g}".replace("-", "−") for t in ticks])
        axes[0].set_xlabel("q·k / √d_k (symmetric log scale)")
        axes[1].set_xlabel("weight")
        axes[1].set_xlim(0, 1)
        axes[1].set_title("attention weights (sum 1)")
        # the values do not depend on d_k: the output (a blend of them) stays inside their range
        V_all = X @ explorer_weights(2, "separate")[2]
        pos = np.arange(D_V_EXPLORE)
        self.output_bars = axes[2].barh(pos - 0.2, np.zeros(D_V_EXPLORE), height=0.4, color=plots.COLORS[0])
        self.value_bars = axes[2].barh(pos + 0.2, np.zeros(D_V_EXPLORE), height=0.4, color=plots.COLORS[1])
        axes[2].set_yticks(pos, [f"dim {j}" for j in pos])
        axes[2].invert_yaxis()
        axes[2].axvline(0, color="black", lw=0.6)
        axes[2].set_xlim(1.1 * min(V_all.min(), 0), 1.1 * max(V_all.max(), 0))
        axes[2].set_xlabel("value")
        axes[2].set_title("blue: the picked token's output\norange: the value it weighs most", fontsize=9)
        self.score_title = axes[0].set_title(" ")
        self.suptitle = fig.suptitle(" ")
        fig.subplots_adjust(left=0.09, right=0.98, top=0.78, bottom=0.16, wspace=0.5)
        self.dynamic = [
            *self.score_bars,
            *self.weight_bars,
            *self.output_bars,
            *self.value_bars,
            self.score_title,
            self.suptitle,
        ]
        return fig

    def update(self, token, d_k, projections):
        W_Q, W_K, W_V = explorer_weights(d_k, projections)
        Q, K, V = (np.asarray(a, dtype=float) for a in project_qkv(X, W_Q, W_K, W_V))  # yours
        output, weights = (np.asarray(a, dtype=float) for a in self_attention(X, W_Q, W_K, W_V))  # yours
        S = Q @ K.T / np.sqrt(d_k)
        self.scores, self.weights, self.best = S[token], weights[token], int(np.argmax(weights[token]))
        # a token "favours itself" when its own score is its largest (the two commas tie with each other)
        self.n_self = int(np.sum(S.diagonal() >= S.max(axis=1) - 1e-9))
        for i, (bar, s, w_) in enumerate(zip(self.score_bars, self.scores, self.weight_bars)):
            bar.set_width(s)
            bar.set_color(plots.COLORS[1] if i == token else plots.COLORS[0])
            w_.set_width(self.weights[i])
            w_.set_color(plots.COLORS[1] if i == self.best else plots.COLORS[2])
        for bar, o in zip(self.output_bars, output[token]):
            bar.set_width(o)
        for bar, v in zip(self.value_bars, V[self.best]):
            bar.set_width(v)
        self.score_title.set_text(f"scores of '{sentence[token]}' (÷√{d_k})")
        tied = "tied" if projections.startswith("tied") else "separate"
        self.suptitle.set_text(
            f"d_k = {d_k}, {tied} W_Q, W_K: {self.n_self} of {len(sentence)} tokens score themselves highest"
        )

    def alt(self, token, d_k, projections):
        top = int(np.argmax(self.scores))
        return (
            f"Three bar charts for the token '{sentence[token]}' with d_model = {d_model}, d_k = {d_k}, "
            f"d_v = {D_V_EXPLORE}, {projections}: its scaled scores against the {len(sentence)} tokens "
            f"(largest {self.scores[top]:.2f}, for '{sentence[top]}'; its own {self.scores[token]:.2f}); its "
            f"attention weights (largest {self.weights[self.best]:.2f}, on '{sentence[self.best]}'); its output "
            f"next to the value of '{sentence[self.best]}'. {self.n_self} of {len(sentence)} tokens give "
            "themselves their largest score."
        )


widgets.explore(
    QueryView(),
    needs=["project_qkv", "self_attention"],
    token=widgets.dropdown("token", _token_options, value=1),
    d_k=widgets.choice_slider("d_k", D_K_CHOICES, 4),
    projections=widgets.dropdown("projections", ["separate W_Q, W_K", "tied: W_K = W_Q"]),
)

# %% [markdown]
# **Things to try.** For each $d_k$, compare the count in the title with tied and with separate
# projections (section 2 explains the difference); then walk through the tokens with tied projections.
# With tied projections the score of a token with itself is never negative: it is
# $\lVert q_i\rVert^2/\sqrt{d_k}$. The output bar chart is always a *blend*: it equals the top token's
# value only when that token takes almost all the weight.

# %% [markdown]
# ## 6. Experiment: a layer learns one relation
#
# Now train **your** `SelfAttention` on a task that can only be solved by finding one particular
# token. Each sequence lists four coloured animals and ends with a question:
#
# `red cat · blue dog · green owl · yellow dog · which is blue?`  →  answer: **dog**
#
# Every colour appears once; animals are drawn at random (they may repeat). A token's embedding is
# the sum of a colour embedding and an animal embedding (the question token: colour + a "?"
# embedding); the embeddings are fixed, only the layer learns. We read the answer off the question
# token's output, so the layer is `SelfAttention(d_model=16, d_k=8, d_v=6)` and its 6 output numbers
# at the question are the scores of the 6 animals.
#
# To answer, the question's query must match the key of the item with the *same colour* (so $W^Q$
# and $W^K$ must keep the colour part), and that item's value must carry its *animal* (so $W^V$ must
# keep the animal part): different subspaces of the same embedding. An even average over the items
# would mix the asked animal with the three others. We measure the accuracy and where each token looks,
# before and after 80 steps of Adam (the optimiser of `00_pytorch_primer`) on batches of 128 sequences.

# %%
COLOURS, ANIMALS = ["red", "blue", "green", "yellow"], ["dog", "cat", "bird", "fox", "cow", "owl"]
d_toy = 16
E_colour = torch.tensor(data.embed(COLOURS, d_toy), dtype=torch.float32)
E_animal = torch.tensor(data.embed(ANIMALS, d_toy), dtype=torch.float32)
E_question = torch.tensor(data.token_embedding("?", d_toy), dtype=torch.float32)


def colour_batch(n, generator):
    """n sequences of 4 coloured animals + 1 question: (x (n, 5, 16), answer (n,), position of the match (n,), ids)."""
    colours = torch.argsort(torch.rand(n, 4, generator=generator), dim=1)  # each colour once
    animals = torch.randint(0, len(ANIMALS), (n, 4), generator=generator)
    asked = torch.randint(0, 4, (n,), generator=generator)
    items = E_colour[colours] + E_animal[animals]  # (n, 4, 16)
    question = (E_colour[asked] + E_question)[:, None]  # (n, 1, 16)
    match = (colours == asked[:, None]).int().argmax(dim=1)
    return torch.cat([items, question], dim=1), animals[torch.arange(n), match], match, (colours, animals, asked)


def evaluate(layer, x, answer, match):
    """Accuracy of the answer read at the question token, and where the tokens look, averaged over x."""
    with torch.no_grad():
        out, w = layer(x)  # w: (n, 5, 5), the question is token 4
    n = len(x)
    is_match = torch.zeros(n, 4, dtype=torch.bool)
    is_match[torch.arange(n), match] = True  # the item of the asked colour
    own, on_question = torch.diagonal(w[:, :4, :4], dim1=1, dim2=2), w[:, :4, 4]
    return {
        "accuracy": (out[:, -1].argmax(-1) == answer).float().mean().item(),
        "question → matching item": w[torch.arange(n), 4, match].mean().item(),
        "question → itself": w[:, 4, 4].mean().item(),
        "matching item → itself": own[is_match].mean().item(),
        "matching item → question": on_question[is_match].mean().item(),
        "other items → themselves": own[~is_match].mean().item(),
        "other items → question": on_question[~is_match].mean().item(),
    }


with ac.student_code("SelfAttention"):
    toy = SelfAttention(d_toy, 8, len(ANIMALS))
    init = torch.Generator().manual_seed(0)
    with torch.no_grad():  # the same start whatever order your __init__ creates the layers in
        for projection in (toy.W_q, toy.W_k, toy.W_v):  # nn.Linear's default range, ±1/√d_model
            projection.weight.copy_((2 * torch.rand(projection.weight.shape, generator=init) - 1) / d_toy**0.5)
    data_gen = torch.Generator().manual_seed(1)
    x_test, y_test, m_test, ids_test = colour_batch(1000, data_gen)
    before = evaluate(toy, x_test, y_test, m_test)
    optimiser = torch.optim.Adam(toy.parameters(), lr=0.03)
    losses = []
    for step in range(80):
        x, y, _, _ = colour_batch(128, data_gen)
        loss = nn.functional.cross_entropy(toy(x)[0][:, -1], y)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    after = evaluate(toy, x_test, y_test, m_test)
    print(
        f"accuracy on 1000 test sequences: {before['accuracy']:.1%} before training "
        f"(a random guess is right {1 / len(ANIMALS):.1%} of the time), {after['accuracy']:.1%} after "
        f"{len(losses)} steps"
    )
    print(f"mean attention weight (uniform would be {1 / 5:.2f})   before   after")
    for name in list(before)[1:]:
        print(f"  {name:34s} {before[name]:8.3f} {after[name]:7.3f}")

    k = 0  # one test sequence, drawn
    colours, animals, asked = (t[k] for t in ids_test)
    labels = [f"{COLOURS[c]} {ANIMALS[a]}" for c, a in zip(colours, animals)] + [f"which is {COLOURS[asked]}?"]
    with torch.no_grad():
        out_k, weights = toy(x_test[k])
    answer_k = ANIMALS[int(out_k[-1].argmax())]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.9), gridspec_kw={"width_ratios": [1, 1.3]})
    axes[0].plot(losses, color=plots.COLORS[0])
    axes[0].set_xlabel("training step")
    axes[0].set_ylabel("cross-entropy loss")
    axes[0].set_title(f"SelfAttention(16, 8, 6), Adam: accuracy {before['accuracy']:.0%} → {after['accuracy']:.0%}")
    plots.attention_heatmap(
        weights, labels, ax=axes[1], title="learned attention, test sequence 0 (the loss uses only the last row)"
    )
    fig.subplots_adjust(left=0.07, right=0.97, bottom=0.3, wspace=0.45)
    plots.show(
        fig,
        name="05_colour_lookup",
        alt=f"Left: the training loss of SelfAttention(16, 8, 6) falling from {losses[0]:.2f} to {losses[-1]:.3f} "
        f"over {len(losses)} steps, accuracy {before['accuracy']:.0%} to {after['accuracy']:.0%}. Right: the "
        f"learned attention weights of one test sequence, {', '.join(labels)}: the question row puts "
        f"{weights[-1, m_test[k]]:.2f} on '{labels[m_test[k]]}'; the items put "
        f"{', '.join(f'{weights[i, i]:.2f}' for i in range(4))} on themselves.",
    )
    print(
        f"In this sequence the question '{labels[-1]}' puts {weights[-1, m_test[k]]:.0%} of its weight on "
        f"'{labels[m_test[k]]}', and the layer answers '{answer_k}'."
    )

    # Which part of the embedding does each projection keep? (mean length of the projected colour / animal parts)
    with torch.no_grad():
        size = lambda proj, E: proj(E).norm(dim=-1).mean().item()
        for label, proj in (("query", toy.W_q), ("key", toy.W_k), ("value", toy.W_v)):
            c, a = size(proj, E_colour), size(proj, E_animal)
            print(f"{label:>5}: |W·colour| = {c:.2f}, |W·animal| = {a:.2f}  ->  colour/animal ratio {c / a:.2f}")

# %% [markdown]
# The first printed line shows the layer going from about chance to the accuracy printed after training,
# and the heatmap shows how for one test sequence: the question row puts almost all its weight on the
# item of the asked colour. The table of mean weights says the same for all 1000 test sequences, and
# shows what the single heatmap cannot:
#
# * The loss only ever looked at the question's row, yet the item rows changed too, because they use
#   the same $W^Q$ and $W^K$: every item now puts most of its weight on itself, the one item key with
#   its own colour.
# * Not all of it. The question token carries the asked colour too, so for the item of that colour the
#   question's key is a second key with its own colour: that item gives the question a visible share of
#   its weight, many times what the other items give it.
# * The question ignores its own key, although that key has the asked colour as well: $W^Q$ and $W^K$
#   also learned to use the "?" part of the embedding.
#
# The relation is one-way: the question gives the matching item almost all of its weight, while that
# item gives the question only a small share back.
#
# How did three matrices find this? The last three printed lines look at the subspaces: how strongly
# each learned projection responds to the colour part of an embedding compared with the animal part.
# The query and the key keep more colour than animal (ratio above 1) and the value more animal than
# colour (ratio below 1). (Compare the numbers within a line, not across lines: a query only matters
# through its dot products with keys.)

# %% [markdown]
# ## 7. Let's review
#
# * Every token's embedding $x$ is turned into a query $xW^Q$, a key $xW^K$ and a value $xW^V$; the
#   three matrices are learned, and each column of a matrix reads one direction of the embedding, so
#   each matrix keeps a different view of the token in a (usually smaller) subspace. For a sequence:
#   $Q = XW^Q$, $K = XW^K$, $V = XW^V$.
# * $W^Q$ and $W^K$ must differ: with one shared matrix the scores are symmetric ($s_{ij} = s_{ji}$)
#   and tokens tend to favour themselves; real relations are one-way. Even separate, $W^Q (W^K)^\top$
#   has rank at most $d_k$: one head compares tokens through $d_k$ directions only.
# * A self-attention layer is $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$ with all three from the
#   same $X$; scale by $\sqrt{d_k}$, the projected width. In cross-attention the queries come from one
#   sequence and the keys and values from another, and the weights are $T_q \times T_k$.
# * In PyTorch the projections are `nn.Linear` layers, whose weight is stored as `(d_out, d_in)`,
#   i.e. $W^Q$ = `W_q.weight.T` (in `weight`, each *row* reads one direction of the embedding).
# * Trained on a lookup task, one layer learned to match colours with $W^Q, W^K$ and to carry animals
#   with $W^V$; its attention map shows the relation it learned, and the mean weights show where the
#   other tokens look as a side effect.
#
# Next lesson: one softmax per query can follow one relation at a time; **several heads** follow
# several.

# %% [markdown]
# ## 8. Check your understanding
#
# Replace `None` in each answer cell. Multiple-choice answers are a letter in quotes, e.g. `"a"`;
# numeric answers are a number. The cell after each answer checks the format only.
#
# **Q1 (1 point).** $d_{\text{model}} = 512$ and $d_k = 64$. How many learned numbers does $W^Q$ hold?

# %% quiz="quiz-wq-params" key="512 * 64" points=1

# %% [markdown]
# **Q2 (1 point).** A sentence of 10 tokens goes through a self-attention layer with
# $d_{\text{model}} = 512$, $d_k = 64$. How many numbers are in the score matrix $QK^\top$?

# %% quiz="quiz-score-entries" key="10 * 10" points=1
q2_answer = 10 * 10  # (T, T) for T = 10; d_model and d_k do not matter

# %% [markdown]
# **Q3 (1 point).** Why does self-attention use separate matrices $W^Q$ and $W^K$?
#
# * **a** — to make the layer faster
# * **b** — so that the score of token $i$ for token $j$ can differ from the score of $j$ for $i$: with one shared matrix every relation would be symmetric and tokens would tend to attend to themselves
# * **c** — because the softmax needs two different inputs
# * **d** — so that queries and keys can have different lengths $T$

# %% quiz="quiz-why-separate" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** `layer = nn.Linear(512, 64)`. What is the shape of `layer.weight`?
#
# * **a** — `(512, 64)` &nbsp; **b** — `(64, 512)` &nbsp; **c** — `(64,)` &nbsp; **d** — `(512, 512)`

# %% quiz="quiz-linear-shape" choices="abcd" key="b" points=1

# %% [markdown]
# **Q5 (1 point).** In a self-attention layer with $d_{\text{model}} = 512$ and $d_k = 64$, the
# scores are divided by
#
# * **a** — $\sqrt{512}$ &nbsp; **b** — $64$ &nbsp; **c** — $\sqrt{64} = 8$ &nbsp; **d** — the number of tokens

# %% quiz="quiz-scale" choices="abcd" key="c" points=1

# %% [markdown]
# **Q6 (1 point).** In the colour experiment, the question's output is
# $\sum_j \alpha_j v_j$. Which matrix had to learn to carry the *animal* of the matching item into that output?
#
# * **a** — $W^Q$ &nbsp; **b** — $W^K$ &nbsp; **c** — $W^V$ &nbsp; **d** — none: the softmax does it

# %% quiz="quiz-which-matrix" choices="abcd" key="c" points=1

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** A classmate proposes to simplify the layer: "drop
# $W^V$ and use the embeddings themselves as values, $V = X$". In 3–5 sentences, say what the layer
# loses, using the colour experiment as your example, and one thing that would still work.

# %% [markdown] manual="quiz-free-drop-wv" points=3
# ### BEGIN SOLUTION
# *Model answer.* Without $W^V$ the output is a weighted average of the raw embeddings, so every
# token hands over *everything* it contains, in the embedding's own coordinates and width
# $d_{\text{model}}$. In the colour task the matching item would pass on its colour mixed with its
# animal, and no learned projection could select the animal part or map it to the answer (with
# $d_v$ tied to $d_{\text{model}}$ there is also no way to choose the output's size). What is *found*
# (chosen by $W^Q, W^K$) and what is *delivered* would no longer be separate choices. The attention
# pattern itself would still be learned, because the scores depend only on $W^Q$ and $W^K$; a later
# linear layer could partly make up for the missing projection.
#
# *Rubric (3 points).* 1 point: values would be the raw embeddings, so the layer can no longer choose
# which information (subspace) a token passes on. 1 point: a concrete consequence, ideally the colour
# task (the colour part would leak into the answer / the animal cannot be isolated), or that $d_v$ is
# forced to equal $d_{\text{model}}$. 1 point: notes that the attention weights (where to look) are
# still learned through $W^Q, W^K$, or that a following linear layer could compensate. No point for
# restating the question.
# ### END SOLUTION
