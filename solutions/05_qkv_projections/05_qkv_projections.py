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
# **Attention, from the dot product up** · lesson 5 · about 75 minutes
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
# 4. train that layer on a toy task and read what it learned from its attention map and from its QK and
#    OV circuits, and measure how few directions ($d_k$) are too few.
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
#
# <details><summary>Hint 1: the idea</summary>
#
# Each of the three is the same operation: every token's embedding (a row of `X`) times one matrix.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `X @ W_Q` multiplies over the last axis of `X`, so it works for `(T, d_model)` and for `(B, T, d_model)`
# alike and gives `(…, T, d_k)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Three products with `@`, returned as a tuple in the order `(Q, K, V)`.
# </details>


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
_shapes = "X (…, T, d_model) times W_Q (d_model, d_k) is X @ W_Q, with no transpose."
_out = checks.attempt(project_qkv, _X, _W_Q, _W_K, _W_V, what="project_qkv on the worked example", hint=_shapes)
checks.expect(isinstance(_out, tuple) and len(_out) == 3, "project_qkv must return a tuple (Q, K, V).")
_Q, _K, _V = _out
checks.expect(np.shape(_Q) != (4, 1), "the first element has the shape of V: return the tuple in the order (Q, K, V).")
checks.expect_shape(_V, (4, 1), "V (the values use W_V, of shape (d_model, d_v) = (3, 1))")
_Q_want, _K_want = [[3.0, 2.0], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0]], [[0.0, 5.0], [1.0, 2.0], [1.0, 1.0], [0.0, 2.0]]
_swapped, _shared = "Q and K are swapped: Q = X @ W_Q, K = X @ W_K.", "K uses W_Q: every projection has its own matrix."
checks.expect_close(_Q, _Q_want, "Q on the worked example", mistakes={_swapped: _K_want})
checks.expect_close(_K, _K_want, "K on the worked example", mistakes={_shared: _Q_want})
checks.expect_close(_V, [[4.0], [1.0], [2.0], [1.0]], "V on the worked example")
_batch = "project_qkv must accept any number of leading batch axes: X @ W acts on the last axis of X."
_what = "project_qkv on a batch of shape (5, 4, 3)"
_Qb, _Kb, _Vb = checks.attempt(project_qkv, np.ones((5, 4, 3)), _W_Q, _W_K, _W_V, what=_what, hint=_batch)
checks.expect_shape(_Qb, (5, 4, 2), "Q for a batch of 5 sequences of 4 tokens")
checks.expect_shape(_Vb, (5, 4, 1), "V for a batch of 5 sequences of 4 tokens")


### BEGIN HIDDEN TESTS
def _project_qkv_hidden():
    rng = np.random.default_rng(21)
    B, T, dm, dk, dv = 3, 5, 7, 16, 4  # all sizes distinct
    X = rng.standard_normal((B, T, dm))
    W_Q, W_K, W_V = rng.standard_normal((dm, dk)), rng.standard_normal((dm, dk)), rng.standard_normal((dm, dv))
    Q, K, V = project_qkv(X, W_Q, W_K, W_V)
    want = [torch.nn.functional.linear(torch.from_numpy(X), torch.from_numpy(W.T)).numpy() for W in (W_Q, W_K, W_V)]
    checks.expect_close(Q, want[0], "Q for a batch", mistakes={_swapped: want[1]})
    checks.expect_close(K, want[1], "K for a batch", mistakes={_swapped: want[0]})
    checks.expect_close(V, want[2], "V for a batch (d_v differs from d_k)")
    checks.expect_close(project_qkv(X[0], W_Q, W_K, W_V)[2], want[2][0], "V for a single sequence")


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
# through the $d_k$ directions that $W^K$ reads; the rest of both embeddings is invisible to it. That is the
# price of $d_k < d_{\text{model}}$ (in exchange, $W^Q$ and $W^K$ hold $2\,d_{\text{model}}\,d_k$ numbers
# instead of $d_{\text{model}}^2$: fewer whenever $d_k < d_{\text{model}}/2$, as printed below). One head can
# only compare tokens through $d_k$ directions (section 6 measures what too few cost on a lookup task);
# lesson 6 runs several heads, each with its own subspace.

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
# Nothing in the formula knows where a token sits in the sequence. Reorder the rows of $X$ and the
# queries, keys and values are reordered with them; each token's output is the same as before, only in
# its new place. Self-attention is **permutation-equivariant** (lesson 7 uses this and then breaks it on
# purpose).
#
# ### Exercise 5.2 — single-head self-attention in numpy (3 points)
#
# Implement `self_attention(X, W_Q, W_K, W_V)` returning the tuple `(output, weights)`, output first:
# `weights` of shape `(…, T, T)` (row $i$ = query token $i$, each row sums to 1) and `output` of shape
# `(…, T, d_v)`, for `X` of shape `(…, T, d_model)` with any number of leading batch axes.
# * The scores are divided by $\sqrt{d_k}$, where $d_k$ is the width of *these* queries and keys (read it
#   from the arrays, not from the notebook's variable `d_k` of section 1).
# * Large scores (hundreds or more) give finite results: the `softmax` helper defined at the top
#   subtracts the maximum, as yours did in lesson 4.
# * The function is permutation-equivariant: reordering the tokens of `X` reorders the rows of the
#   output, and the rows and the columns of the weights, in the same way (it is, if it computes only
#   the formula).
#
# You may call your `project_qkv` and the `softmax` helper. The checks call your function with a
# reference `project_qkv` in place of yours, so a mistake in exercise 5.1 costs points only there.
#
# <details><summary>Hint 1: the idea</summary>
#
# Project first, then do exactly what lesson 4's attention did with the queries, keys and values you got.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `Q, K, V = project_qkv(X, W_Q, W_K, W_V)`; `d_k` is `Q.shape[-1]`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# To transpose `K` when it has batch axes, swap only its last two axes: `np.swapaxes(K, -1, -2)`. Then
# `softmax(scores, axis=-1)` normalises over the keys, and `weights @ V` averages the values.
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
# Visible checks, with a reference project_qkv in place of yours (a mistake in exercise 5.1 costs points only there).
_project = lambda X, *Ws: tuple(np.asarray(X, dtype=float) @ np.asarray(W, dtype=float) for W in Ws)
_self_attention = checks.with_references(self_attention, project_qkv=_project)
_sm = lambda s, axis=-1: torch.softmax(torch.as_tensor(s), dim=axis).numpy()
# Worked example: T = 3 tokens, d_model = 2, d_k = 4 (so sqrt(d_k) = 2), d_v = 5 (every size differs from d_k).
_X, _W_Q, _W_K, _W_V = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), np.eye(2, 4), np.eye(2, 4, k=1), np.eye(2, 5)
_S = np.array([[0.0, 0, 0], [4, 0, 2], [2, 0, 1]])  # Q K^T, divided by sqrt(4) = 2 below
_want, _V = _sm(_S / 2), _X @ _W_V  # V: rows (2, 0, 0, 0, 0), (0, 2, 0, 0, 0), (1, 1, 0, 0, 0)
_mistakes = {
    "the scores are not scaled: divide Q K^T by sqrt(d_k).": _sm(_S),
    "the scores are divided by d_k instead of sqrt(d_k).": _sm(_S / 4),
    "the scores are divided by sqrt(d_model): use the width of the queries and keys, d_k.": _sm(_S / np.sqrt(2)),
    "the scores are divided by sqrt(d_v), the width of the values: use the width of the queries and keys, "
    "d_k = Q.shape[-1].": _sm(_S / np.sqrt(5)),
    "softmax runs over the queries (axis -2): each row (one query) must sum to 1, so use axis=-1.": _sm(_S / 2, 0),
    "the weights are transposed: row i must be query token i.": _want.T,
    "the scores are K Q^T: row i must hold query i's scores, so compute Q K^T.": _sm(_S.T / 2),
}
_roots = {3: "the number of tokens T"}  # and the notebook's variable d_k, unless the student changed it
if isinstance(globals().get("d_k"), int) and d_k not in (1, 2, 4):
    _roots[d_k] = _roots.get(d_k, "") + " or " * (d_k in _roots) + "the notebook's variable d_k from section 1"
for _n, _name in _roots.items():
    _mistakes[f"the scores are divided by sqrt({_n}), {_name}: use Q.shape[-1]."] = _sm(_S / np.sqrt(_n))
_result = checks.call(_self_attention, _X, _W_Q, _W_K, _W_V)
_out, _w = checks.output_and_weights(_result, "the worked example", 5, 3, "self_attention")
checks.expect(np.shape(_out)[-1] != 4, "the output has d_k = 4 columns: it must be the weights times V, not times K.")
checks.expect_close(_w, _want, "the attention weights on the worked example", mistakes=_mistakes)
_transposed = {"the output is weights.T @ V: use weights @ V.": _want.T @ _V}
checks.expect_close(_out, _want @ _V, "the output on the worked example (weights @ V)", mistakes=_transposed)
_batch, _what = np.random.default_rng(0).standard_normal((3, 5, 2)), "self_attention on a batch of 3 sequences"
_axes = "With batch axes, swap only the last two axes of K (np.swapaxes(K, -1, -2)): K.T reverses all of them."
_o, _w = checks.attempt(_self_attention, _batch, _W_Q, _W_K, _W_V, what=_what, hint=_axes)
checks.expect_shape(_w, (3, 5, 5), "weights for a batch of 3 sequences of 5 tokens")
checks.expect_shape(_o, (3, 5, 5), "output for a batch of 3 sequences of 5 tokens (d_v = 5)")
_order = [2, 0, 1]  # the worked example's tokens in another order: the same outputs and weights, reordered
_o, _w = checks.call(_self_attention, _X[_order], _W_Q, _W_K, _W_V)
checks.expect_close(_w, _want[_order][:, _order], "the weights for the tokens in another order (equivariance)")
checks.expect_close(_o, (_want @ _V)[_order], "the output for the tokens in another order (equivariance)")
_big = checks.call(_self_attention, 40 * _batch, _W_Q, _W_K, _W_V)[0]  # scores in the hundreds
checks.expect_finite(_big, "the output for large scores", "use the softmax helper (it subtracts the maximum).")


### BEGIN HIDDEN TESTS
def _self_attention_hidden():
    rng = np.random.default_rng(22)
    B, T, dm, dk, dv = 3, 5, 10, 16, 7
    X = rng.standard_normal((B, T, dm))
    W_Q, W_K, W_V = (rng.standard_normal((dm, n)) / np.sqrt(dm) * 2 for n in (dk, dk, dv))
    Q, K, V = (torch.from_numpy(X @ W) for W in (W_Q, W_K, W_V))
    eye = torch.eye(T, dtype=Q.dtype).expand(B, T, T)  # PyTorch's weights are its output for V = I
    want_out, want_w = (torch.nn.functional.scaled_dot_product_attention(Q, K, u).numpy() for u in (V, eye))
    out, w = checks.output_and_weights(_self_attention(X, W_Q, W_K, W_V), "a batch", dv, T, "self_attention")
    checks.expect_close(w, want_w, "the attention weights for a batch (d_k = 16, d_model = 10)")
    checks.expect_close(out, want_out, "the output for a batch (d_v = 7)")
    checks.expect_close(_self_attention(X[1], W_Q, W_K, W_V)[0], want_out[1], "the output for a single sequence")
    order = rng.permutation(T)  # the same tokens in another order: the same outputs and weights, reordered
    out_p, w_p = _self_attention(X[:, order], W_Q, W_K, W_V)
    checks.expect_close(out_p, want_out[:, order], "the output for the tokens in another order (equivariance)")
    checks.expect_close(w_p, want_w[:, order][:, :, order], "the weights for the tokens in another order")
    big = _self_attention(40 * X[:1], W_Q, W_K, W_V)  # large scores: softmax must stay finite
    checks.expect_finite(big[0], "the output for large scores", "use the softmax helper (it subtracts the maximum).")


_self_attention_hidden()
### END HIDDEN TESTS
checks.passed("self_attention")

# %% [markdown]
# ### One query, traced
#
# The figure below follows one token through **your** `project_qkv` and `self_attention`, with every
# number, on the sentence "the dog chased a cat" (with $d_{\text{model}} = 4$, $d_k = 2$ and $d_v = 2$, so
# that every number fits, and random projections: which key wins means nothing yet). The token's
# embedding, a row of $X$, becomes its query (the orange row of $Q$, copied above $K$); the query meets
# every key, one score per key; the softmax turns the scores into weights; and the weights average the
# rows of $V$ into the token's output (blue). Each key's score and weight stand on
# that key's row, next to its row of $K$ and of $V$.

# %%
flow_tokens = "the dog chased a cat".split()
X_flow = data.embed(flow_tokens, 4)  # (5, 4)
_rng = np.random.default_rng(6)
W_flow = [_rng.standard_normal((4, n)) for n in (2, 2, 2)]  # W_Q, W_K, W_V
flow_query = 2  # "chased"
with ac.student_code("project_qkv and self_attention"):
    Q_f, K_f, V_f = project_qkv(X_flow, *W_flow)  # yours
    out_f, w_f = self_attention(X_flow, *W_flow)  # yours
    scores_f = Q_f[flow_query] @ K_f.T / np.sqrt(K_f.shape[-1])
    top = int(np.argmax(w_f[flow_query]))
    ax = plots.qkv_flow(
        flow_tokens, X_flow, Q_f, K_f, V_f, scores_f, w_f, out_f, flow_query, digits=1,
        title=f"'{flow_tokens[flow_query]}' gives '{flow_tokens[top]}' the largest weight, "
        f"{w_f[flow_query, top]:.2f}:\nits output leans towards that row of V",
    )  # fmt: skip
    plots.show(
        ax.figure,
        name="05_qkv_flow",
        alt=f"'{flow_tokens[flow_query]}' gives '{flow_tokens[top]}' the largest weight, {w_f[flow_query, top]:.2f}, "
        "so its output leans towards that row of V. "
        f"One query traced through self-attention on '{' '.join(flow_tokens)}': the embeddings X (5 × 4), "
        f"Q, K (5 × 2) and V (5 × 2) with every number, to one decimal; the query of '{flow_tokens[flow_query]}' "
        f"({', '.join(f'{x:.2f}' for x in Q_f[flow_query])}) is copied above K; its scores "
        f"{', '.join(f'{x:.2f}' for x in scores_f)} and weights {', '.join(f'{x:.2f}' for x in w_f[flow_query])} "
        f"stand beside the keys; its output is {', '.join(f'{x:.2f}' for x in out_f[flow_query])}.",
    )
    recomputed = w_f[flow_query] @ V_f
    print(
        f"output of '{flow_tokens[flow_query]}' = Σ weight × row of V = {np.round(recomputed, 4)} "
        f"(your self_attention: {np.round(out_f[flow_query], 4)})"
    )

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
# <details><summary>Hint 1: the idea</summary>
#
# `__init__` creates the three projections and remembers $d_k$ for the scaling; `forward` is exercise
# 5.2 written with torch operations, so that autograd can follow every step.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# In `__init__`, first replace a `None` `d_v` by `d_k`; then `self.W_q = nn.Linear(d_model, d_k, bias=False)`,
# and so on for `W_k` and `W_v`; keep `d_k`, e.g. as `self.d_k`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# In `forward`: `self.W_q(x)` projects, `k.transpose(-2, -1)` transposes the last two axes (with or without
# a batch axis), and `torch.softmax(scores, dim=-1)` normalises over the keys. No numpy and no `.detach()`.
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
# Visible checks: the interface, then exercise 5.2's worked example in the module (no earlier function is used).
def _new_layer(*args):
    default = "d_v=None (the default) must mean d_v = d_k." if len(args) == 2 else ""
    return checks.attempt(SelfAttention, *args, what=f"SelfAttention{args}", hint=default)


_axes = "Transpose only the last two axes of k, k.transpose(-2, -1), with or without a batch axis (k.T reverses all)."
_layer = _new_layer(6, 4, 3)
for _name, _shape in (("W_q", (4, 6)), ("W_k", (4, 6)), ("W_v", (3, 6))):
    checks.expect(isinstance(getattr(_layer, _name, None), nn.Linear), f"self.{_name} must be an nn.Linear layer.")
    checks.expect_shape(getattr(_layer, _name).weight, _shape, f"self.{_name}.weight (nn.Linear stores (d_out, d_in))")
    checks.expect(getattr(_layer, _name).bias is None, f"self.{_name} must have no bias: nn.Linear(..., bias=False).")
_out = checks.attempt(_layer, torch.randn(2, 5, 6), what="forward on x of shape (2, 5, 6)", hint=_axes)
_out = checks.output_and_weights(_out, "x of shape (2, 5, 6)", 3, 5, "forward")
checks.expect_shape(_out[0], (2, 5, 3), "the output for x of shape (2, 5, 6) with d_v = 3")
_out = checks.attempt(_layer, torch.randn(5, 6), what="forward on x of shape (5, 6), without a batch axis", hint=_axes)
checks.expect_shape(_out[0], (5, 3), "the output for x of shape (5, 6), without a batch axis")
checks.expect_shape(_new_layer(6, 4).W_v.weight, (4, 6), "W_v.weight of SelfAttention(6, 4) (d_v=None means d_v = d_k)")
# The worked example of exercise 5.2: T = 3, d_model = 2, d_k = 4, d_v = 5.
_X, _S = torch.tensor([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), torch.tensor([[0.0, 0, 0], [4, 0, 2], [2, 0, 1]])
_sm = lambda s, dim=-1: torch.softmax(s, dim=dim)
_want = _sm(_S / 2)  # the scores Q K^T = _S, divided by sqrt(4) = 2
_mistakes = {
    "the scores are not scaled: divide Q K^T by sqrt(d_k).": _sm(_S),
    "the scores are divided by d_k instead of sqrt(d_k).": _sm(_S / 4),
    "the scores are divided by sqrt(d_model): use the width of the queries and keys, d_k.": _sm(_S / 2**0.5),
    "the scores are divided by sqrt(d_v), the width of the values: use the width of the queries and keys, d_k.": _sm(
        _S / 5**0.5
    ),
    "softmax runs over the queries (dim -2): each row (one query) must sum to 1, so use dim=-1.": _sm(_S / 2, 0),
    "the weights are transposed: row i must be query token i.": _want.T,
}
_roots = {3: "the number of tokens T"}  # and the notebook's variable d_k, unless the student changed it
if isinstance(globals().get("d_k"), int) and d_k not in (1, 2, 4):
    _roots[d_k] = _roots.get(d_k, "") + " or " * (d_k in _roots) + "the notebook's variable d_k from section 1"
for _n, _name in _roots.items():
    _mistakes[f"the scores are divided by sqrt({_n}), {_name}: use the constructor's d_k."] = _sm(_S / _n**0.5)
_layer = _new_layer(2, 4, 5)
# nn.Linear's weight is W transposed: W_Q = eye(2, 4), W_K = eye(2, 4) shifted right by one column, W_V = eye(2, 5)
with torch.no_grad():
    _layer.W_q.weight.copy_(torch.eye(4, 2))
    _layer.W_k.weight.copy_(torch.eye(4, 2).roll(1, 0))
    _layer.W_v.weight.copy_(torch.eye(5, 2))
_o, _w = _layer(_X[None])  # a batch of one sequence
checks.expect_close(_w[0], _want, "the module's weights on the worked example", atol=1e-5, mistakes=_mistakes)
_V = _X @ torch.eye(2, 5)  # rows (2, 0, 0, 0, 0), (0, 2, 0, 0, 0), (1, 1, 0, 0, 0)
checks.expect_close(_o[0], _want @ _V, "the module's output on the example", atol=1e-5)


### BEGIN HIDDEN TESTS
def _module_hidden():
    g = torch.Generator().manual_seed(23)
    B, T, dm, dk = 3, 5, 10, 16
    for d_v in (7, None):  # an explicit d_v, then the default
        layer = _new_layer(dm, dk) if d_v is None else _new_layer(dm, dk, d_v)
        what, d_v = f"SelfAttention({dm}, {dk}{'' if d_v is None else f', {d_v}'})", d_v or dk
        n_params, expected = sum(p.numel() for p in layer.parameters()), 2 * dm * dk + dm * d_v
        checks.expect(n_params == expected, f"{what} has {n_params} parameters, not {expected}: no bias.")
        Ws = [torch.randn(n, dm, generator=g) / dm**0.5 * 2 for n in (dk, dk, d_v)]
        with torch.no_grad():
            for linear, W in zip((layer.W_q, layer.W_k, layer.W_v), Ws):
                linear.weight.copy_(W)
        x = torch.randn(B, T, dm, generator=g)
        q, k, v = (x @ W.T for W in Ws)
        eye = torch.eye(T).expand(B, T, T)  # PyTorch's weights are its output for V = I
        want_out, want_w = (torch.nn.functional.scaled_dot_product_attention(q, k, u) for u in (v, eye))
        out, w = checks.output_and_weights(layer(x), what, d_v, T, "forward")
        checks.expect_close(w, want_w, f"the weights of {what}", atol=1e-5)
        checks.expect_close(out, want_out, f"the output of {what}", atol=1e-5)
        checks.expect_close(
            layer(x[0])[0], want_out[0], f"the output of {what} for one (T, d_model) sequence", atol=1e-5
        )
        layer.zero_grad()
        layer(x)[0].pow(2).sum().backward()
        for name in ("W_q", "W_k", "W_v"):
            grad = getattr(layer, name).weight.grad
            no_grad = f"no gradient reaches self.{name}: compute with torch operations (no .detach(), no numpy)."
            checks.expect(grad is not None and float(grad.abs().sum()) > 0, no_grad)


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
# 1. its scaled scores $q_i \cdot k_j / \sqrt{d_k}$ against every key, as dots on one axis for every
#    setting: a symmetric log scale, linear between −1 and 1, so that scores of a few tenths and of tens
#    both show ("◀ itself" marks the token's own key),
# 2. the attention weights (the softmax of those scores), and
# 3. the output: the weighted sum of the values, one bar per dimension, next to the value of the key
#    that gets the largest weight.
#
# Orange marks that most-weighted key in all three panels. The title counts how many of the 11 tokens
# give *themselves* their largest score. Change $d_k$, and switch the projections between *separate* and
# *tied* ($W^K = W^Q$).

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
    """Scores, weights and output of one token. Built once; update() moves dots, bars and texts."""

    def build(self, token, d_k, projections):
        n, yours, top = len(sentence), plots.color("yours"), plots.color("highlight")
        fig, axes = plt.subplots(1, 3, figsize=(6.6, 3.9), gridspec_kw={"width_ratios": [1, 0.8, 1]})
        # scores: dots only (on a log axis a bar or a stem from 0 has no length to compare), the most-weighted
        # key's in orange
        (self.dots,) = axes[0].plot(np.zeros(n), range(n), "o", color=yours, ms=6)
        (self.top_dot,) = axes[0].plot([0], [0], "o", color=top, ms=7)
        self.itself = axes[0].text(0, 0, "◀ itself", va="center", ha="left", fontsize=9, color=plots.TEXT)
        self.weight_bars = axes[1].barh(range(n), np.zeros(n), color=yours)
        axes[0].set_yticks(range(n), _labels)
        axes[1].set_yticks(range(n), [])
        for ax in axes[:2]:
            ax.set_ylim(n - 0.5, -0.5)
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
        axes[0].set_xlim(-reach, 3 * reach)  # room on the right for "◀ itself"
        ticks = [t for t in (-100, -10, -1, 0, 1, 10, 100) if abs(t) <= reach]
        axes[0].set_xticks(ticks, [f"{t:g}".replace("-", "−") for t in ticks])
        axes[0].axvline(0, color=plots.color("reference"), lw=0.6, alpha=0.3)  # a light zero line
        axes[0].grid(axis="y", color=plots.color("reference"), lw=0.4, alpha=0.15)  # leads the eye from token to dot
        axes[0].set_xlabel(r"$q \cdot k\,/\sqrt{d_k}$ (symmetric log)")
        axes[1].set_xlabel("weight")
        axes[1].set_xlim(0, 1)
        axes[1].set_title("weights (sum 1)")
        # the values do not depend on d_k: the output (a blend of them) stays inside their range
        V_all = X @ explorer_weights(2, "separate")[2]
        pos = np.arange(D_V_EXPLORE)
        self.output_bars = axes[2].barh(pos - 0.2, np.zeros(D_V_EXPLORE), height=0.4, color=yours, label="output")
        self.value_bars = axes[2].barh(pos + 0.2, np.zeros(D_V_EXPLORE), height=0.4, color=top, label="value, top key")
        axes[2].set_yticks(pos, [f"dim {j}" for j in pos])
        axes[2].invert_yaxis()
        axes[2].axvline(0, color=plots.color("reference"), lw=0.6)
        axes[2].set_xlim(1.1 * min(V_all.min(), 0), 1.1 * max(V_all.max(), 0))
        axes[2].set_xlabel("value")
        axes[2].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1, frameon=False)
        axes[2].set_title("its output")
        self.score_title = axes[0].set_title(" ")
        self.suptitle = fig.suptitle(" ")
        fig.subplots_adjust(left=0.17, right=0.98, top=0.78, bottom=0.3, wspace=0.4)
        self.dynamic = [self.dots, self.top_dot, self.itself, *self.weight_bars, *self.output_bars]
        self.dynamic += [*self.value_bars, self.score_title, self.suptitle]
        return fig

    def update(self, token, d_k, projections):
        W_Q, W_K, W_V = explorer_weights(d_k, projections)
        Q, K, V = (np.asarray(a, dtype=float) for a in project_qkv(X, W_Q, W_K, W_V))  # yours
        output, weights = (np.asarray(a, dtype=float) for a in self_attention(X, W_Q, W_K, W_V))  # yours
        S = Q @ K.T / np.sqrt(d_k)
        self.scores, self.weights, self.best = S[token], weights[token], int(np.argmax(weights[token]))
        # a token "favours itself" when its own score is its largest (the two commas tie with each other)
        self.n_self = int(np.sum(S.diagonal() >= S.max(axis=1) - 1e-9))
        rows = np.arange(len(sentence))
        self.dots.set_data(self.scores, rows)
        self.top_dot.set_data([self.scores[self.best]], [self.best])
        self.itself.set_position((max(self.scores[token], 0) * 1.6 + 0.3, token))
        for i, (bar, w) in enumerate(zip(self.weight_bars, self.weights)):
            bar.set_width(w)
            bar.set_color(plots.color("highlight" if i == self.best else "yours"))
        for bar, o in zip(self.output_bars, output[token]):
            bar.set_width(o)
        for bar, v in zip(self.value_bars, V[self.best]):
            bar.set_width(v)
        self.score_title.set_text(f"scores of '{sentence[token]}' (÷√{d_k})")
        tied = "tied" if projections.startswith("tied") else "separate"
        self.suptitle.set_text(
            f"$d_k$ = {d_k}, {tied} $W^Q, W^K$:\n{self.n_self} of {len(sentence)} tokens score themselves highest"
        )

    def alt(self, token, d_k, projections):
        top = int(np.argmax(self.scores))
        return (
            f"'{sentence[token]}' gives the largest weight, {self.weights[self.best]:.2f}, to "
            f"'{sentence[self.best]}', and {self.n_self} of {len(sentence)} tokens give themselves their largest score. "
            f"Three panels for the token '{sentence[token]}' with d_model = {d_model}, d_k = {d_k}, "
            f"d_v = {D_V_EXPLORE}, {projections}: its scaled scores against the {len(sentence)} tokens as dots "
            f"(largest {self.scores[top]:.2f}, for '{sentence[top]}'; its own {self.scores[token]:.2f}); its "
            f"attention weights as bars (largest {self.weights[self.best]:.2f}, on '{sentence[self.best]}', in "
            f"orange); its output next to the value of '{sentence[self.best]}'. {self.n_self} of {len(sentence)} "
            "tokens give themselves their largest score."
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
# $\lVert q_i\rVert^2/\sqrt{d_k}$. The output bar chart is always a *blend*: it equals the top key's
# value only when that key takes almost all the weight.

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
# before and after 80 steps of Adam (the optimiser of `00_pytorch_primer`, written out in `adam_step`
# below, as in lesson 3) on batches of 128 sequences.

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


def init_layer(layer, seed):
    """The same start whatever order your __init__ creates the layers in (nn.Linear's default range, ±1/√d_model)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for projection in (layer.W_q, layer.W_k, layer.W_v):
            projection.weight.copy_((2 * torch.rand(projection.weight.shape, generator=generator) - 1) / d_toy**0.5)
    return layer


def adam_step(params, moments, step, lr, betas=(0.9, 0.999), eps=1e-8):
    """One step of Adam, the update torch.optim.Adam(params, lr=lr) makes, written out as in lesson 3 (torch.optim's
    first use also loads PyTorch's compiler, about a second that this notebook does not need)."""
    with torch.no_grad():
        for p, (m, v) in zip(params, moments):
            m.lerp_(p.grad, 1 - betas[0])  # running mean of the gradient
            v.lerp_(p.grad**2, 1 - betas[1])  # running mean of its square
            m_hat, v_hat = m / (1 - betas[0] ** step), v / (1 - betas[1] ** step)  # corrected for starting at 0
            p -= lr * m_hat / (v_hat.sqrt() + eps)
            p.grad = None


def train(layers, steps, generator, lr=0.03):
    """Adam on several layers side by side, on the same batches of 128; each layer only learns from its own loss.
    Returns the losses, (steps, layers)."""
    params = [p for layer in layers for p in layer.parameters()]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    losses = []
    for step in range(1, steps + 1):
        x, y, _, _ = colour_batch(128, generator)
        per_layer = [nn.functional.cross_entropy(layer(x)[0][:, -1], y) for layer in layers]
        sum(per_layer).backward()
        adam_step(params, moments, step, lr)
        losses.append([loss.item() for loss in per_layer])
    return np.array(losses)


toy = None  # the trained layer, once your SelfAttention works
with ac.student_code("SelfAttention"):
    toy = init_layer(SelfAttention(d_toy, 8, len(ANIMALS)), seed=0)
    data_gen = torch.Generator().manual_seed(1)
    x_test, y_test, m_test, ids_test = colour_batch(1000, data_gen)
    before = evaluate(toy, x_test, y_test, m_test)
    losses = train([toy], 80, data_gen)[:, 0]
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
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 4.2), gridspec_kw={"width_ratios": [1, 1.25]})
    axes[0].plot(losses, color=plots.color("yours"))
    axes[0].set_xlabel("training step")
    axes[0].set_ylabel("cross-entropy loss")
    axes[0].set_title(f"loss; accuracy\n{before['accuracy']:.0%} → {after['accuracy']:.0%}")
    plots.attention_heatmap(weights, labels, ax=axes[1], colorbar=False, title="learned weights,\ntest sequence 0")
    fig.suptitle(f"The question learns to find the item of its colour:\nit puts {weights[-1, m_test[k]]:.2f} on it")
    fig.subplots_adjust(left=0.11, right=0.98, bottom=0.33, top=0.78, wspace=0.75)
    plots.show(
        fig,
        name="05_colour_lookup",
        alt="The question learns to find the item of its colour: it puts almost all of its weight on it. "
        f"Left: the training loss of SelfAttention(16, 8, 6) falling from {losses[0]:.2f} to {losses[-1]:.3f} "
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
# * The question ignores its own key, although that key has the asked colour as well. The next cell
#   shows why.
#
# The relation is one-way: the question gives the matching item almost all of its weight, while that
# item gives the question only a small share back.
#
# The last three printed lines look at the subspaces: how strongly each learned projection responds to
# the colour part of an embedding compared with the animal part. The query and the key keep more colour
# than animal (ratio above 1) and the value more animal than colour (ratio below 1). (Compare the numbers
# within a line, not across lines: a query only matters through its dot products with keys.)
#
# ### Reading the learned head: the QK and OV circuits
#
# Every token here is a sum of two parts: an item is colour + animal, the question is colour + "?".
# Queries, keys and values are linear in the embedding, so every score splits into the scores of the
# parts: part $a$ of a query gives part $b$ of a key the score $a\,W^Q (W^K)^\top b^\top/\sqrt{d_k}$. That
# matrix, read on the 11 parts (4 colours, 6 animals, "?"), is the head's **QK circuit**: *who finds whom*.
# Likewise part $b$ of an attended token adds $b\,W^V$, times that token's attention weight, to the output:
# the **OV circuit**, *what is handed over*; in this layer the output is the 6 animal scores. (Both names
# come from Elhage et al., 2021, *A Mathematical Framework for Transformer Circuits*.) The cell below draws
# both for the trained layer and prints the entries that explain its behaviour.

# %%
parts = torch.cat([E_colour, E_animal, E_question[None]])  # (11, 16): the 4 colours, the 6 animals and "?"
part_names = COLOURS + ANIMALS + ["?"]
with ac.student_code("SelfAttention"), torch.no_grad():
    if toy is None:
        raise NotImplementedError  # the cell above trains your SelfAttention first
    QK = (toy.W_q(parts) @ toy.W_k(parts).T / 8**0.5).numpy()  # (11, 11): query part → key part
    OV = toy.W_v(parts).numpy()  # (11, 6): attended part → the 6 animal scores
    colour_block, animal_block = QK[:4, :4], OV[4:10]
    same_colour, other_colour = np.diag(colour_block).mean(), colour_block[~np.eye(4, dtype=bool)].mean()
    own_animal, other_animal = np.diag(animal_block).mean(), animal_block[~np.eye(6, dtype=bool)].mean()
    print(f"QK: a colour scores its own colour {same_colour:.1f} on average, the other colours {other_colour:.1f}")
    print(
        f"QK: the '?' part of a query scores the '?' part of a key {QK[10, 10]:.1f}; "
        f"a colour scores it {QK[:4, 10].mean():.1f} on average"
    )
    q = toy.W_q(x_test[:, 4])  # the question's query in each test sequence
    s = (q[:, None, :] * toy.W_k(x_test)).sum(-1).numpy() / 8**0.5  # its scores for the 5 keys
    own_minus_match = s[:, 4] - s[np.arange(len(s)), m_test.numpy()]
    question_part = (q @ toy.W_k(E_question).T).numpy() / 8**0.5  # what the "?" part of its own key adds
    untrained = init_layer(SelfAttention(d_toy, 8, len(ANIMALS)), seed=0)  # the same layer before training
    question_part_before = (untrained.W_q(x_test[:, 4]) @ untrained.W_k(E_question).T).numpy() / 8**0.5
    print(
        f"on the test sequences the question scores its own key {-own_minus_match.mean():.1f} below the matching "
        f"item on average; the '?' part of that key alone adds {question_part.mean():.1f} "
        f"({question_part_before.mean():.1f} before training)"
    )
    print(
        f"OV: an animal adds {own_animal:.1f} to its own score on average, {other_animal:.1f} to the others; "
        f"the largest entry of a colour or of '?' is {np.abs(OV[[0, 1, 2, 3, 10]]).max():.1f}"
    )
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 4.0), gridspec_kw={"width_ratios": [11, 6]}, layout="constrained")
    for ax, M, title, cols, label in (
        (axes[0], QK, "QK: query part (row)\n→ key part", part_names, "score"),
        (axes[1], OV, "OV: part →\nanimal score", ANIMALS, "added to the animal's score"),
    ):
        limit = np.abs(M).max()
        image = ax.imshow(M, cmap=plots.DIVERGING, vmin=-limit, vmax=limit)
        ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right")
        ax.set_yticks(range(len(part_names)), part_names)
        ax.set_title(title)
        fig.colorbar(image, ax=ax, shrink=0.8, label=label)
    fig.suptitle("The head matches colours with colours (QK)\nand hands over animals (OV)")
    plots.show(
        fig,
        name="05_qk_ov_circuits",
        alt="The head matches colours with colours (QK) and hands over animals (OV). "
        f"Two heatmaps of the trained colour layer. Left, the QK circuit: the score each part of a query "
        f"(4 colours, 6 animals, '?') gives each part of a key; the colour block has a strong diagonal (mean "
        f"{same_colour:.1f} against {other_colour:.1f} off it) and '?' gives '?' {QK[10, 10]:.1f}. Right, the OV "
        f"circuit: what each part adds to the 6 animal scores; the animal block has a strong diagonal (mean "
        f"{own_animal:.1f} against {other_animal:.1f}).",
    )

# %% [markdown]
# In the QK map the colour block has the strong diagonal: a colour in a query gives the same colour in
# a key a large positive score on average (above 10; the printed line gives this run's value) and the other
# colours a negative one. That is the lookup. The last column explains why the question ignores its own key,
# the only key with a "?" part: the "?" part of a query gives it a strongly negative score (below −5), and a
# colour gives it a negative one too. On the test sequences the question scores its own key more than 10
# below the matching item on average, and the "?" part of that key alone contributes most of that gap,
# against close to 0 (within ±1) in the same layer before training: $W^Q$ and $W^K$ learned to use the "?"
# part to keep the question off itself. In the OV map the strong diagonal is in the animal block: an animal
# adds more than 5 to its own score on average and a negative amount to the others, while the largest entry
# of a colour or of "?" stays well below that own-animal mean (under three quarters of it): the colour that
# comes along with the animal does not change the answer (the test accuracy printed above is over 99%).
#
# Your printed numbers differ from these in their later digits, and so would ours on another machine:
# training amplifies the last-digit rounding differences between machines (and between your functions and
# ours), so the text states only what holds with a wide margin.
#
# ### How many directions does the lookup need?
#
# Section 2 showed that a head compares tokens through $d_k$ directions only: $W^Q (W^K)^\top$ has rank at
# most $d_k$. What does that cost on this task? The cell below trains the same layer the same way at
# $d_k = 1, 2, 4$ and 8, from three random starts (seeds) each: twelve layers, trained side by side on the
# same batches.

# %%
DK_SWEEP, SEEDS = [1, 2, 4, 8], [0, 1, 2]
with ac.student_code("SelfAttention"):
    sweep = {
        (dk, seed): init_layer(SelfAttention(d_toy, dk, len(ANIMALS)), 100 * dk + seed)
        for dk in DK_SWEEP
        for seed in SEEDS
    }
    sweep_losses = train(list(sweep.values()), 80, torch.Generator().manual_seed(2))
    asked_test = ids_test[2]
    accuracy, by_colour = {}, {}
    with torch.no_grad():
        for key, layer in sweep.items():
            right = layer(x_test)[0][:, -1].argmax(-1) == y_test
            accuracy[key] = right.float().mean().item()
            by_colour[key] = [right[asked_test == c].float().mean().item() for c in range(4)]
    mean_accuracy = {dk: np.mean([accuracy[dk, s] for s in SEEDS]) for dk in DK_SWEEP}
    found = {s: sum(a == 1.0 for a in by_colour[1, s]) for s in SEEDS}  # colours always answered at d_k = 1
    for dk in DK_SWEEP:
        runs = ", ".join(f"{accuracy[dk, s]:.1%}" for s in SEEDS)
        print(
            f"d_k = {dk}: test accuracy {runs} (seeds {SEEDS}), mean {mean_accuracy[dk]:.1%}, final loss {sweep_losses[-1, [i for i, key in enumerate(sweep) if key[0] == dk]].mean():.3f}"
        )
    for s in SEEDS:
        print(
            f"d_k = 1, seed {s}: accuracy by asked colour "
            + ", ".join(f"{c} {a:.0%}" for c, a in zip(COLOURS, by_colour[1, s]))
            + f"  ({found[s]} of 4 colours always right)"
        )

    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.8), layout="constrained")
    for i, dk in enumerate(DK_SWEEP):
        axes[0].plot(
            [i + 0.06 * (s - 1) for s in SEEDS],
            [accuracy[dk, s] for s in SEEDS],
            "o",
            color=plots.color("yours"),
            ms=6,
            label="one seed" if i == 0 else None,
        )
    axes[0].plot(
        range(len(DK_SWEEP)),
        [mean_accuracy[dk] for dk in DK_SWEEP],
        "-",
        color=plots.color("yours"),
        lw=1,
        label="mean of 3 seeds",
    )
    for c in range(4):
        axes[1].plot(
            [c + 0.08 * (s - 1) for s in SEEDS],
            [by_colour[1, s][c] for s in SEEDS],
            "o",
            color=plots.color("yours"),
            ms=6,
        )
    for ax in axes:
        ax.axhline(1 / len(ANIMALS), color=plots.color("chance"), ls="--", lw=1)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("test accuracy")
    for ax, right in zip(axes, (len(DK_SWEEP) - 1, len(COLOURS) - 1)):
        ax.text(right, 1 / len(ANIMALS) + 0.03, "chance", ha="right", color=plots.color("chance"))
    axes[0].set_xticks(range(len(DK_SWEEP)), [str(dk) for dk in DK_SWEEP])
    axes[0].set_xlabel(r"$d_k$ (rank of $W^Q (W^K)^\top$" "\n" r"at most $d_k$)")
    axes[0].legend(loc="center right")
    axes[0].set_title("accuracy against $d_k$,\n3 seeds")
    axes[1].set_xticks(range(4), COLOURS)
    axes[1].set_xlabel("colour asked")
    axes[1].set_title("$d_k = 1$: accuracy\nper colour, 3 seeds")
    fig.suptitle(
        f"One direction is too few: at $d_k = 1$ a head finds\nat most {max(found.values())} of the 4 colours every time"
    )
    plots.show(
        fig,
        name="05_rank_limit",
        alt="One direction is too few: at d_k = 1 a head finds at most two of the 4 colours every time. "
        "Left: test accuracy of the colour layer against d_k = 1, 2, 4, 8, three seeds each: mean "
        + ", ".join(f"{mean_accuracy[dk]:.0%} at d_k = {dk}" for dk in DK_SWEEP)
        + f". Right: at d_k = 1, accuracy for each asked colour and seed; per seed {', '.join(str(found[s]) for s in SEEDS)} "
        "of the 4 colours are always right, the others far less often. A dashed line marks chance, 1 in 6.",
    )

# %% [markdown]
# At $d_k = 1$ a token's query and key are single numbers, and a score is their product. Whatever colour
# was asked, the question's largest score therefore goes to the key with the largest number, or, when its
# query is negative, to the key with the smallest: a head of rank 1 can single out only the items at the two
# ends of its one key direction. Every colour appears in every sequence, so at most two colours can sit at
# an end every time. That is what every seed learned: each answers two of the four colours right every
# time, or nearly (above 97%), and the other two far less often (below 70%), about three quarters of the
# test sequences in all (between 65% and 85% on average; the printed lines give each seed). Two directions
# are enough: four keys can sit around a circle, where a query pointing at one of them scores it highest,
# and every seed answers over 99% of the test sequences from $d_k = 2$ on. So "rank at most $d_k$" is a real limit on what one head can
# find, and how many directions are enough depends on the relation; lesson 6 spends the directions on
# several heads instead of one.

# %% [markdown]
# ## 7. Let's review
#
# * Every token's embedding $x$ is turned into a query $xW^Q$, a key $xW^K$ and a value $xW^V$; the
#   three matrices are learned, and each column of a matrix reads one direction of the embedding, so
#   each matrix keeps a different view of the token in a (usually smaller) subspace. For a sequence:
#   $Q = XW^Q$, $K = XW^K$, $V = XW^V$.
# * $W^Q$ and $W^K$ must differ: with one shared matrix the scores are symmetric ($s_{ij} = s_{ji}$)
#   and tokens tend to favour themselves; real relations are one-way. Even separate, $W^Q (W^K)^\top$
#   has rank at most $d_k$: one head compares tokens through $d_k$ directions only, and in section 6 one
#   direction was too few for four colours.
# * A self-attention layer is $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$ with all three from the
#   same $X$; scale by $\sqrt{d_k}$, the projected width. It is permutation-equivariant: reorder the
#   tokens and the outputs are reordered with them. In cross-attention the queries come from one
#   sequence and the keys and values from another, and the weights are $T_q \times T_k$.
# * In PyTorch the projections are `nn.Linear` layers, whose weight is stored as `(d_out, d_in)`,
#   i.e. $W^Q$ = `W_q.weight.T` (in `weight`, each *row* reads one direction of the embedding).
# * Trained on a lookup task, one layer learned to match colours with $W^Q, W^K$ and to carry animals
#   with $W^V$. Its QK circuit ($W^Q (W^K)^\top$ read on the parts of the embedding) shows who finds whom,
#   its OV circuit ($W^V$ on the same parts) what is handed over.
#
# Next lesson: one softmax per query can follow one relation at a time; **several heads** follow
# several.

# %% [markdown]
# ## 8. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after
# each answer checks the format only; the answer itself is graded when your notebook is graded.
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
# $W^V$ and use the embeddings themselves as values, $V = X$". In 3–5 sentences, say what this one layer
# loses, using the colour experiment as your example; whether a linear layer placed after the attention
# could make up for it, and why; and what $W^V$ buys.
#
# <details><summary>Before you hand in</summary>
#
# * Did you say what each token hands over without $W^V$, and what that means in the colour task?
# * Did you decide whether a linear map applied *after* the weighted average can do $W^V$'s job, exactly
#   or only partly, and justify it with the order of the two operations (one mixes tokens, the other
#   features)?
# * Did you name what $W^V$ buys all the same (think of the width of the values, and of several heads)?
# * Did you say what is *not* affected (where the layer looks)?
# </details>

# %% [markdown] manual="quiz-free-drop-wv" points=3
# ### BEGIN SOLUTION
# *Model answer.* Without $W^V$ each token hands over its whole embedding, $d_{\text{model}}$ numbers
# in the embedding's own coordinates: in the colour task the matching item would pass on its colour
# mixed with its animal, and this layer's output could not be the 6 animal scores, since it would be
# 16 numbers in embedding coordinates. A linear layer $W$ after the attention makes up for that
# **exactly**: the weights mix tokens (rows) and $W$ mixes features (columns), so
# $(AX)W = A(XW)$; a read-out $W$ from 16 numbers to the 6 animal scores placed after the average is the
# same as using $W^V = W$ before it. So dropping $W^V$ costs no expressiveness when a linear layer
# follows. What $W^V$ buys is where the projection happens: values that are narrow ($d_v$ numbers, fewer
# to average and to store) and chosen for the task, and, in multi-head attention, a separate low-rank
# value map per head, so that each head hands over its own slice. Where the layer looks is unaffected:
# the weights depend only on $W^Q$ and $W^K$.
#
# *Rubric (3 points).* 1 point: without $W^V$ each token passes on its raw embedding, so this layer alone
# cannot choose what is handed over (the colour leaks into the answer / the output width is forced to
# $d_{\text{model}}$). 1 point: a linear layer after the attention compensates **exactly**, because
# $(AX)W = A(XW)$ (the attention weights act on tokens, $W$ on features); an answer that says it can only
# partly make up for it does not earn this point. 1 point: what $W^V$ buys: narrow, task-specific values
# ($d_v < d_{\text{model}}$, cheaper to average and store), or a per-head low-rank value map in
# multi-head attention; or, for this point too, that the attention pattern is still learned through
# $W^Q, W^K$. No point for restating the question.
# ### END SOLUTION
