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
# # Lesson 10 — A causal decoder: generating text
#
# **Attention, from the dot product up** · lesson 10 · about 100 minutes (minimal path: about 90)
#
# Lessons 1–9 built an **encoder**, which labels what it reads. A **language model** reads left to right and
# predicts the *next* token; to write, it picks one, appends it and predicts again. Here your attention becomes
# such a **decoder**, trained on nursery rhymes in seconds.
#
# **Learning goals.** By the end you can
# 1. explain why training every position at once needs a **causal mask**, and build it;
# 2. extend your multi-head attention to **cross-attention** and say where the encoder–decoder Transformer uses it;
# 3. train a decoder-only language model and compare it with baselines on unseen rhymes;
# 4. choose the next token greedily or with a **temperature** and **top-k**;
# 5. implement a **KV cache**, show it gives recomputation's outputs (up to rounding), and measure what it saves.
#
# > **Minimal path: about 90 minutes** (the whole lesson: about 100; counted as README, "Lessons", says). Do
# > exercises 10.1–10.4 and the quiz, run every cell from the top, and skim section 6 and the parts marked
# > *Skim on a first pass*.
#
# **You need:**
#
# | what | from lesson |
# |---|---|
# | softmax, temperature, boolean masks (**True = may attend**), `scaled_dot_product_attention` | 4 |
# | the `MultiHeadAttention` module; `load_from_torch`; `nn.MultiheadAttention`'s opposite mask convention | 6 |
# | positions added to token embeddings (here a learned table) | 7 |
# | residual connections and layer norm; the pre-LN block | 8 |
# | token embeddings, an output head, cross-entropy training with Adam | 9 |
#
# Demonstrations use **your own** lesson 4 and 6 code when those notebooks are next to this one and finished
# (never for grading), PyTorch's otherwise.

# %%
import contextlib
import copy
import math
import re
import time
from pathlib import Path

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.patches import Patch
from torch import nn

import attention_course as ac
from attention_course import checks, data, plots, reuse, widgets

ac.setup()


# %% [markdown]
# ## 1. Predicting the next token, and why it needs a mask
#
# A language model gives every text $x_0, x_1, \dots, x_{T-1}$ a probability, one token at a time
# (the chain rule of probability):
#
# $$p(x_0, \dots, x_{T-1}) = p(x_0)\; p(x_1 \mid x_0)\; p(x_2 \mid x_0, x_1) \cdots
#   = \prod_{t=0}^{T-1} p(x_t \mid x_0, \dots, x_{t-1}) .$$
#
# So the model only ever answers one question: *given the text so far, what comes next?*
#
# **Training all positions at once.** The output at position $t$ guesses token $t+1$: the targets are the
# inputs shifted by one, and one forward pass trains $T$ predictions:
#
# | position $t$ | 0 | 1 | 2 | 3 |
# |---|---|---|---|---|
# | input | `h` | `u` | `m` | `p` |
# | target (next character) | `u` | `m` | `p` | `t` |
#
# This is only fair if the output at position $t$ depends on $x_0, \dots, x_t$ and **nothing later**; in an
# encoder, position 0 could simply read token 1, the very answer it is asked for (section 3 measures what a
# model learns then). The cure is lesson 4's **causal mask**: query $i$ may attend to key $j$ only if $j \le i$.
#
# **Queries that are only the newest tokens.** While generating (section 5) we compute queries for the newest
# $T_q$ tokens only, against the keys of all $T_k$ tokens so far. Query $i$ is then the token at position
# $T_k - T_q + i$ and may attend to key $j$ exactly when $j \le T_k - T_q + i$: the allowed region ends at
# the **bottom-right** corner. For $T_q = 2$, $T_k = 5$:
#
# $$\begin{pmatrix} 1 & 1 & 1 & 1 & 0 \\ 1 & 1 & 1 & 1 & 1 \end{pmatrix}
# \qquad\text{(query 0 is token 3, query 1 is token 4).}$$
#
# ### Exercise 10.1 — the causal mask (2 points)
#
# Implement `causal_mask(T_q, T_k=None)`: a **`torch.bool` tensor** of shape `(T_q, T_k)`, `True` where
# $j \le T_k - T_q + i$ (query $i$ may attend to key $j$). `T_k=None` means $T_k = T_q$; you may assume
# $T_q \le T_k$.
#
# <details><summary>Hint 1: the idea</summary>
#
# Think in positions, not row numbers: query row $i$ is the token at position $T_k - T_q + i$.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# For $T_q = T_k$ the answer is the lower triangle with its diagonal. With fewer queries, the boundary
# between True and False moves $T_k - T_q$ columns to the right.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=k)` keeps the entries with $j - i \le k$; or compare
# two `torch.arange` vectors with broadcasting, `[None, :]` against `[:, None]`.
# </details>


# %% answer="causal-mask"
def causal_mask(T_q, T_k=None):
    """Boolean (T_q, T_k) tensor, True where query i (the token at position T_k - T_q + i) may attend to key j."""
    ### BEGIN SOLUTION
    T_k = T_q if T_k is None else T_k
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_k - T_q)
    ### END SOLUTION


# %% tests="causal-mask-tests" points=2
# Visible checks: the type, the square mask of 4 tokens, and the newest 2 of 5 tokens.
def _mask_mistakes(T_q, T_k):
    """What the usual mistakes give for causal_mask(T_q, T_k), named."""
    i, j = torch.arange(T_q)[:, None] + (T_k - T_q), torch.arange(T_k)[None, :]
    named = {
        "the diagonal is blocked: every token may attend to itself (key j ≤ i, not j < i).": j < i,
        "each query also sees the next token: allow keys j ≤ i only.": j <= i + 1,
        "the mask is inverted: True means 'may attend', so True goes on and below the diagonal.": j > i,
    }
    if T_q != T_k:
        named[
            "the queries are the newest T_q tokens: query i is the token at position T_k - T_q + i, so the allowed "
            "region ends at the bottom-right corner (this mask is aligned top-left)."
        ] = j <= i - (T_k - T_q)
    return j <= i, named


def _check_mask(T_q, T_k=None):
    got = checks.call(causal_mask, T_q) if T_k is None else checks.call(causal_mask, T_q, T_k)
    what = f"causal_mask({T_q}{'' if T_k is None else f', {T_k}'})"
    checks.expect(
        isinstance(got, torch.Tensor) and got.dtype == torch.bool,
        f"{what} must return a torch.bool tensor, not {type(got).__name__} {getattr(got, 'dtype', '')}: "
        "the model uses it with masked_fill.",
    )
    want, mistakes = _mask_mistakes(T_q, T_q if T_k is None else T_k)
    checks.expect_close(got, want, f"{what} (1 = may attend)", mistakes=mistakes)


_check_mask(4)  # [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
_check_mask(2, 5)  # [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
### BEGIN HIDDEN TESTS
for _T_q, _T_k in ((1, 1), (6, 6), (3, 7), (1, 9), (5, 8), (9, 9), (2, 2)):
    _check_mask(_T_q, _T_k)
    if _T_q == _T_k:
        _check_mask(_T_q)  # T_k defaults to T_q
### END HIDDEN TESTS
checks.passed("causal_mask")


# %% [markdown]
# ### Causal self-attention with your lesson-4 function
#
# *Skim on a first pass.*
#
# The mask goes straight into the `scaled_dot_product_attention(Q, K, V, mask)` you wrote in lesson 4
# (numpy, `True` = may attend). The next cell loads **your** function from
# `../04_softmax/04_softmax.ipynb` if it is there and agrees with PyTorch, and falls back to PyTorch's
# otherwise. It then runs causal self-attention on six words, changes the embedding of the fourth
# word (*on*), and measures how much each position's output moves — with the mask and without it.


# %%
def reference_attention(Q, K, V, mask=None):
    """PyTorch's scaled dot-product attention on numpy arrays, returning (output, weights) like lesson 4's."""
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask)), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).numpy(), weights.numpy()


def from_earlier(lesson, name, reference, *probe):
    """Your `name` from an earlier lesson if it runs and agrees with `reference` on `probe`; else `reference`."""
    try:
        (yours,) = reuse.from_lesson(lesson, name)
        got, want = yours(*probe), reference(*probe)
        if checks.is_close(got[0], want[0], atol=1e-6):
            print(f"Using your {name} from lesson {lesson}.")
            return yours
        print(
            f"Your {name} from lesson {lesson} disagrees with PyTorch's: this lesson uses PyTorch's "
            "(fix it in that lesson to use yours)."
        )
    except NotImplementedError:
        print(f"Your {name} in lesson {lesson} is not implemented yet: this lesson uses PyTorch's.")
    except reuse.NotAvailable as why:
        print(f"{why} This lesson uses PyTorch's {name}.")
    except Exception as error:
        print(f"Your {name} from lesson {lesson} raised {type(error).__name__}: {error}. This lesson uses PyTorch's.")
    return reference


_probe = data.rng(3).standard_normal((3, 5, 4))
lesson4_attention = from_earlier(
    "04_softmax", "scaled_dot_product_attention", reference_attention, *_probe, np.tril(np.ones((5, 5), dtype=bool))
)

# %%
words = data.SHORT_SENTENCE  # "the cat sat on the mat"
X = data.embed(words, 8)  # (6, 8): one fixed vector per word
with ac.student_code("causal_mask"):
    mask6 = causal_mask(len(words)).numpy()  # yours, as a numpy array for lesson 4's function
    out, weights = lesson4_attention(X, X, X, mask6)
    X_changed = X.copy()
    X_changed[3] += data.rng(4).standard_normal(8)  # a different word at position 3 ("on")
    out_changed, _ = lesson4_attention(X_changed, X_changed, X_changed, mask6)
    out_open, _ = lesson4_attention(X, X, X)  # no mask: every query sees every key
    out_open_changed, _ = lesson4_attention(X_changed, X_changed, X_changed)
    moved = np.abs(out_changed - out).max(axis=-1)
    moved_open = np.abs(out_open_changed - out_open).max(axis=-1)

    source = "your lesson-4 function" if lesson4_attention is not reference_attention else "PyTorch's"
    ax = plots.attention_heatmap(
        weights, words, allowed=mask6, title=f"Causal self-attention: no word sees a later one (d_k = 8, {source})"
    )
    plots.show(
        ax.figure,
        alt="No word attends to a later one: every cell above the diagonal is masked (hatched, as the key at the top "
        f"right says). Causal attention weights of the six words of '{' '.join(words)}'; the first word puts all its "
        "weight on itself.",
        name="10_causal_map",
    )
    print("how far each position's output moves when only word 3 ('on') changes:")
    print("  with the causal mask:", np.array2string(moved, precision=3))
    print("  without a mask:      ", np.array2string(moved_open, precision=3))
    print(
        f"With the mask, positions 0–2 move by exactly {moved[:3].max():.1f}: they cannot see position 3. "
        f"Without it, all {int((moved_open > 1e-9).sum())} positions move."
    )

# %% [markdown]
# *Skim on a first pass.*
#
# **A trap in PyTorch.** `F.scaled_dot_product_attention(q, k, v, is_causal=True)` builds its own causal
# mask, but when $T_q \ne T_k$ it aligns that mask with the **top-left** corner: query $i$ sees keys
# $0, \dots, i$. That is right for training ($T_q = T_k$) and wrong for the newest-tokens case above.
# PyTorch has the bottom-right version too, under its own name: `causal_lower_right(T_q, T_k)` from
# `torch.nn.attention.bias`, passed as `attn_mask` (this notebook does not import it: that module loads
# PyTorch's compiler, which is slow to start). The cell compares `is_causal=True` with your mask. Its values
# are one-hot, so each output row *is* that query's attention weights, and the keys with a non-zero weight
# are the keys it sees.

# %%
q2, k5 = torch.randn(1, 2, 4, dtype=torch.float64), torch.randn(1, 5, 4, dtype=torch.float64)
one_hot_values = torch.eye(5, dtype=torch.float64)[None]


def keys_seen(output):
    return [torch.nonzero(row > 0).ravel().tolist() for row in output[0]]


with ac.student_code("causal_mask"):
    for label, kwargs in (
        ("is_causal=True", dict(is_causal=True)),
        ("your causal_mask(2, 5)", dict(attn_mask=causal_mask(2, 5))),
    ):
        seen = keys_seen(F.scaled_dot_product_attention(q2, k5, one_hot_values, **kwargs))
        print(f"{label:>25}, T_q = 2, T_k = 5: keys each query sees: {seen}")


# %% [markdown]
# ## 2. Cross-attention: queries from one sequence, keys and values from another
#
# In **cross-attention** the queries come from one sequence $X_q \in \mathbb{R}^{T_q \times d_{\text{model}}}$, the keys and values from another,
# $X_{kv} \in \mathbb{R}^{T_k \times d_{\text{model}}}$:
#
# $$Q = X_q W^Q,\quad K = X_{kv} W^K,\quad V = X_{kv} W^V,\qquad
#   A = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{T_q \times T_k},\qquad
#   \text{output} = A V \in \mathbb{R}^{T_q \times d_v} .$$
#
# Row $i$ of $A$ spreads query $i$'s attention over the $T_k$ tokens of the *other* sequence, so $A$ is no
# longer square. Self-attention is the case $X_{kv} = X_q$; heads work as in lesson 6.
#
# **Where the encoder–decoder Transformer uses it.** The original Transformer translates. Its **encoder**
# reads the source sentence with unmasked self-attention; each block of its **decoder**, which writes the
# translation, has three sublayers (each with a residual connection and a layer norm):
# 1. **causal self-attention** over the translation so far (section 1's mask);
# 2. **cross-attention**: queries from the decoder, keys and values from the encoder's final output, with no
#    causal mask (the whole source is known before writing starts; only padding is masked);
# 3. the feed-forward network.
#
# T5 and the speech recogniser Whisper are built this way. **Decoder-only** models, such as GPT and the model
# of section 3, drop the encoder and sublayer 2.
#
# ### Exercise 10.2 — multi-head attention with a `(x_q, x_kv)` form (3 points)
#
# Grow your lesson-6 module into one that does both. Its constructor is given: lesson 6's, unchanged (keep it so).
# Write `forward(x_q, x_kv=None, mask=None)`: queries from `x_q` `(B, T_q, d_model)`, keys and values from
# `x_kv` `(B, T_k, d_model)`; `x_kv=None` means self-attention. `mask` is `None` or a boolean `(T_q, T_k)`
# tensor, **True = may attend**. Return `(output, weights)` of shapes `(B, T_q, d_model)` and
# `(B, num_heads, T_q, T_k)`. Torch operations only, so that gradients reach every layer and both inputs.
# A blocked entry gets weight exactly 0, even where the allowed scores are about $-10^{10}$.
#
# <details><summary>Hint 1: the idea</summary>
#
# Only the inputs change: $Q$ from `x_q`, $K$ and $V$ from `x_kv`. Split each into heads with its own length.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `q` is `(B, h, T_q, d_k)` and `k`, `v` are `(B, h, T_k, d_k)`: the scores are `(B, h, T_q, T_k)`, like the mask.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `t.view(B, T, h, d_k).transpose(1, 2)` splits; `scores.masked_fill(~mask, float("-inf"))` blocks;
# `.transpose(1, 2).reshape(B, T_q, d_model)` merges.
# </details>
#
# The checks compare your module with `nn.MultiheadAttention`, whose `attn_mask` means **True = blocked**; they
# pass it `~mask`. Yours keeps **True = may attend**.


# %%
from attention_course.reuse import load_from_torch  # noqa: E402


# %% answer="mha-cross"
class MultiHeadAttention(nn.Module):
    """Multi-head attention: queries from x_q, keys and values from x_kv (self-attention when x_kv is None)."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()  # given: lesson 6's constructor
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x_q, x_kv=None, mask=None):
        """x_q: (B, T_q, d_model); x_kv: (B, T_k, d_model) or None (= x_q); mask: None or bool (T_q, T_k),
        True = may attend. Returns (output (B, T_q, d_model), weights (B, num_heads, T_q, T_k))."""
        ### BEGIN SOLUTION
        x_kv = x_q if x_kv is None else x_kv
        B, T_q, d_model = x_q.shape
        T_k = x_kv.shape[1]
        q = self.W_q(x_q).view(B, T_q, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T_q, d_k)
        k = self.W_k(x_kv).view(B, T_k, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T_k, d_k)
        v = self.W_v(x_kv).view(B, T_k, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T_k, d_k)
        scores = q @ k.transpose(-2, -1) / self.d_k**0.5  # (B, h, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        merged = (weights @ v).transpose(1, 2).reshape(B, T_q, d_model)
        return self.W_o(merged), weights
        ### END SOLUTION


# %% tests="mha-cross-tests" points=3
# Visible checks: the interface, then cross-attention and causal self-attention against nn.MultiheadAttention.
ac.reseed(102)  # the same random inputs whatever ran before (grading may leave out the experiments)


def _torch_mha(d, h, bias=True, dtype=torch.float32, seed=1):
    g, theirs = torch.Generator().manual_seed(seed), nn.MultiheadAttention(d, h, bias=bias, batch_first=True).to(dtype)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=dtype) * (1.5 / d**0.5 if p.dim() == 2 else 0.5))
    return theirs


def _check_mha(theirs, x_q, x_kv, mask, what, atol):  # your module with theirs' weights, against theirs
    d, h, T_q, T_k, same = theirs.embed_dim, theirs.num_heads, x_q.shape[1], x_kv.shape[1], x_q.shape == x_kv.shape
    b = torch.zeros(3 * d, dtype=x_q.dtype) if theirs.in_proj_bias is None else theirs.in_proj_bias

    def ref(q_in=x_q, k_in=x_kv, v_in=x_kv, scale=(d // h) ** 0.5, blocked=None if mask is None else ~mask, fill=None):
        projected = (t @ w.T + c for t, w, c in zip((q_in, k_in, v_in), theirs.in_proj_weight.split(d), b.split(d)))
        q, k, v = (t.unflatten(-1, (h, d // h)).transpose(1, 2) for t in projected)
        s = q @ k.transpose(-1, -2) / scale
        s = s if blocked is None else s.masked_fill(blocked, float("-inf") if fill is None else fill)
        return (s.softmax(-1) @ v).transpose(1, 2).flatten(2)

    mine = load_from_torch(checks.call(MultiHeadAttention, d, h, theirs.in_proj_bias is not None).to(x_q.dtype), theirs)
    try:
        with torch.no_grad():
            result = mine(*((x_q,) if x_kv is x_q else (x_q, x_kv)), mask=mask)
    except (RuntimeError, TypeError) as error:
        view = "view size is not compatible" in str(error)  # .view after .transpose: not contiguous
        raise AssertionError(f"{what}: forward raised {type(error).__name__} ({str(error)[:100]}): " + ("`.view` after `.transpose` fails (not contiguous): merge the heads with `.reshape`." if view else "queries, keys or values from the wrong input? (queries from x_q; keys and values from x_kv; forward(x_q, x_kv=None, mask=None))")) from None  # fmt: skip
    out, w = checks.output_and_weights(result, what, d, T_k, "forward")
    for rows, wrong in ((T_q, "the keys and values come from x_q"), (T_k, "the queries come from x_kv")):
        checks.expect(same or tuple(w.shape[-2:]) != (rows, rows), f"{what}: the weights are square: {wrong}.")
    checks.expect_shape(w, (x_q.shape[0], h, T_q, T_k), f"the weights for {what}")
    named = {
        "the keys and values come from x_q: they come from x_kv.": (same or mask is None) and dict(k_in=x_q, v_in=x_q),
        "the values come from x_q: values (like keys) come from x_kv.": same and dict(v_in=x_q),
        "the queries come from x_kv: queries come from x_q.": same and dict(q_in=x_kv),
        "the scores are divided by sqrt(d_model): divide by sqrt(d_k), d_k = d_model / h.": dict(scale=d**0.5),
        "the mask is inverted: True means 'may attend'.": mask is not None and dict(blocked=mask),
        "blocked scores are filled with a large finite number: here the allowed scores are lower still (about -1e10), "
        "so the blocked keys win. Fill with float('-inf').": mask is not None and dict(fill=-1e9),
    }
    with torch.no_grad():
        want, want_w = theirs(x_q, x_kv, x_kv, attn_mask=None if mask is None else ~mask, average_attn_weights=False)
        mistakes = {text: theirs.out_proj(ref(**kw)) for text, kw in named.items() if kw}
        mistakes["the output projection W_o is not applied."] = ref()
    checks.expect_close(out, want, f"your output for {what} (vs nn.MultiheadAttention)", atol, mistakes=mistakes)
    checks.expect_close(w, want_w, f"your weights for {what} (vs nn.MultiheadAttention)", atol)


_mine = checks.call(MultiHeadAttention, 8, 2)
_ok = all(isinstance(getattr(_mine, n, None), nn.Linear) for n in ("W_q", "W_k", "W_v", "W_o"))
_ok = _ok and (getattr(_mine, "num_heads", None), getattr(_mine, "d_k", None)) == (2, 4)
checks.expect(
    _ok,
    "the given constructor was changed: restore lesson 6's (self.W_q, self.W_k, self.W_v, self.W_o, self.num_heads, self.d_k).",
)
_x_q, _x_kv, _theirs = torch.randn(3, 4, 8), torch.randn(3, 6, 8), _torch_mha(8, 2)
_pattern = (torch.arange(4)[:, None] + torch.arange(6)[None, :]) % 3 != 0  # every row keeps some keys, blocks some
_check_mha(_theirs, _x_q, _x_kv, None, "cross-attention (T_q = 4, T_k = 6)", 1e-5)
_check_mha(_theirs, _x_q, _x_kv, _pattern, "cross-attention with a mask", 1e-5)
_check_mha(_theirs, _x_q, _x_q, torch.ones(4, 4, dtype=torch.bool).tril(), "causal self-attention (x_kv=None)", 1e-5)
_n = sum(p.numel() for p in MultiHeadAttention(8, 2, bias=False).parameters())
checks.expect(
    _n == 4 * 8 * 8, "the given constructor was changed: restore it (four nn.Linear layers, no other parameters)."
)
_g, _theirs = torch.Generator().manual_seed(102), _torch_mha(8, 2, False, torch.float64)
with torch.no_grad():  # allowed scores near -1e10: blocked keys must still get weight exactly 0
    _theirs.in_proj_weight[:8], _theirs.in_proj_weight[8:16] = -1e5 * torch.eye(8), 1e5 * torch.eye(8)
_x_q, _x_kv = (1 + torch.rand(2, n, 8, generator=_g, dtype=torch.float64) for n in (4, 6))
_check_mha(_theirs, _x_q, _x_kv, _pattern, "scores around -1e10 with a mask", 1e-8)
_mine = load_from_torch(MultiHeadAttention(8, 2).double(), _torch_mha(8, 2, dtype=torch.float64))
_x_q, _x_kv = (torch.randn(2, n, 8, dtype=torch.float64, requires_grad=True) for n in (3, 5))
_mine(_x_q, _x_kv)[0].pow(2).sum().backward()
for _t, _name in [(getattr(_mine, n).weight, f"self.{n}") for n in ("W_q", "W_k", "W_v", "W_o")] + [(_x_kv, "x_kv")]:
    checks.expect(_t.grad is not None and float(_t.grad.abs().sum()) > 0, f"no gradient reaches {_name}: torch only.")
### BEGIN HIDDEN TESTS
for _bias in (True, False):  # d_model = 48, 3 heads: d_k = 16; T_q = T_k with two inputs names every mix-up
    _theirs = _torch_mha(48, 3, _bias, torch.float64, seed=int(_bias))
    _n = sum(p.numel() for p in MultiHeadAttention(48, 3, bias=_bias).parameters())
    checks.expect(
        _n == sum(p.numel() for p in _theirs.parameters()),
        f"bias={_bias}: the given constructor was changed; restore it.",
    )
    for _T_k, _mask in ((5, None), (5, (torch.arange(5)[:, None] + 2 * torch.arange(5)) % 3 != 0), (7, None)):
        _x_q, _x_kv = (torch.randn(2, n, 48, generator=_g, dtype=torch.float64) for n in (5, _T_k))
        _check_mha(_theirs, _x_q, _x_kv, _mask, f"d_model = 48, 3 heads, bias={_bias}, T_k = {_T_k}", 1e-8)
### END HIDDEN TESTS
checks.passed("MultiHeadAttention")

# %% [markdown]
# *Skim on a first pass.*
#
# **Your lesson-6 module is the self-attention special case.** The cell below loads your lesson-6
# `MultiHeadAttention` (if it is there and finished), copies the new module's weights into it (both have the
# same attribute names), and compares the two on causal self-attention.

# %%
with ac.student_code("MultiHeadAttention"):
    torch.manual_seed(2)
    new = MultiHeadAttention(16, 4)
    x16 = torch.randn(2, 7, 16)
    try:
        (Lesson6MHA,) = reuse.from_lesson("06_multi_head", "MultiHeadAttention")
        old = Lesson6MHA(16, 4)
        old.load_state_dict(new.state_dict())  # same attribute names: W_q, W_k, W_v, W_o
        with torch.no_grad():
            gap = (old(x16, causal_mask(7))[0] - new(x16, mask=causal_mask(7))[0]).abs().max().item()
        print(
            f"your lesson-6 module and your new module, same weights, causal self-attention on 7 tokens: "
            f"largest difference {gap:.1e}"
        )
    except NotImplementedError:
        print("Your lesson-6 MultiHeadAttention is not finished, so there is nothing to compare with.")
    except reuse.NotAvailable as why:
        print(f"{why} (Nothing to compare with.)")
    except Exception as error:
        print(f"Your lesson-6 MultiHeadAttention raised {type(error).__name__}: {error}")

# %% [markdown]
# *Skim on a first pass.*
#
# **Cross-attention at work.** To see what a cross-attention map looks like, we build one by hand — a
# stand-in for what a trained translation model learns. The decoder has written the French
# *le chat noir dort*; the encoder has read the English *the black cat is sleeping*. We give every
# French word the embedding of its English translation ($d_{\text{model}} = 16$), and use your module
# with one head and $W^Q = W^K = W^V = W^O = I$ (no biases), so a score is the dot product of the two
# embeddings divided by $\sqrt{16}$.

# %%
french = "le chat noir dort".split()
english = "the black cat is sleeping".split()
translation = {"le": "the", "chat": "cat", "noir": "black", "dort": "sleeping"}
x_french = torch.tensor(data.embed([translation[w] for w in french], 16), dtype=torch.float32)[None]  # (1, 4, 16)
x_english = torch.tensor(data.embed(english, 16), dtype=torch.float32)[None]  # (1, 5, 16)

with ac.student_code("MultiHeadAttention"):
    cross = MultiHeadAttention(16, 1)
    with torch.no_grad():
        for layer in (cross.W_q, cross.W_k, cross.W_v, cross.W_o):
            layer.weight.copy_(torch.eye(16))
            layer.bias.zero_()
        _, cross_weights = cross(x_french, x_english)  # queries: French; keys and values: English
    cross_weights = cross_weights[0, 0]  # (4, 5): not square
    ax = plots.attention_heatmap(
        cross_weights, french, english, title="Cross-attention (hand-built): each French word finds its translation"
    )
    ax.set_xlabel("key: English word (encoder)")
    ax.set_ylabel("query: French word (decoder)")
    best = [english[j] for j in cross_weights.argmax(-1).tolist()]
    plots.show(
        ax.figure,
        alt="Each French word puts most of its weight on its translation: "
        + ", ".join(f"{f} → {e}" for f, e in zip(french, best, strict=True))
        + ". Cross-attention weights, 4 French words (rows) over 5 English words (columns).",
        name="10_cross_attention",
    )
    print(f"weights shape {tuple(cross_weights.shape)} (T_q × T_k); row sums {cross_weights.sum(-1).numpy().round(6)}")
    for i, f in enumerate(french):
        j = int(cross_weights[i].argmax())
        print(f"'{f}' puts {cross_weights[i, j]:.0%} of its attention on '{english[j]}'")
    print(
        "every French word's largest weight is on its translation:",
        all(translation[f] == e for f, e in zip(french, best, strict=True)),
    )

# %% [markdown]
# *Skim on a first pass.*
#
# The map is $4 \times 5$: one row per French word, one column per English word. The word order
# differs between the languages (*chat noir* but *black cat*), and cross-attention does not care: each
# query finds its key wherever it is. No mask was needed, because the whole English sentence exists
# before the first French word is written.

# %% [markdown]
# ## 3. A tiny language model that writes nursery rhymes
#
# ### The text, and rhymes kept apart for testing
#
# *Skim on a first pass.*
#
# The course ships a small public-domain text next to this notebook: traditional English nursery
# rhymes, in `nursery_rhymes.txt`. We lowercase it and treat every **character** as a token — a
# vocabulary of a few dozen symbols, so the model stays tiny.
#
# A model with tens of thousands of parameters can memorise a few thousand characters, so its loss on the
# text it learned from says little about how well it predicts text. So we set every sixth rhyme aside — the
# **held-out** rhymes — train on the others, and measure on the held-out ones, which the model never sees
# while it learns. The cell prints the sizes.

# %%
text = Path("nursery_rhymes.txt").read_text(encoding="utf-8").lower()
vocab = sorted(set(text))  # every distinct character
V = len(vocab)
char_to_id = {c: i for i, c in enumerate(vocab)}
SHOWN = {" ": "␣", "\n": "⏎"}  # how spaces and line breaks are drawn in figures


def encode(s):
    """A string (lowercase, characters of the text only) -> int64 tensor of token ids."""
    return torch.tensor([char_to_id[c] for c in s], dtype=torch.long)


def decode(ids):
    """Token ids -> the string."""
    return "".join(vocab[i] for i in ids.tolist())


def shown(c):
    return SHOWN.get(c, c)


rhymes = text.split("\n\n")
held_out_rhymes = rhymes[5::6]  # every sixth rhyme, kept apart
train_text = "\n\n".join(r for i, r in enumerate(rhymes) if i % 6 != 5)
held_out_text = "\n\n".join(held_out_rhymes)
ids, held_out_ids = encode(train_text), encode(held_out_text)
print(f"{len(text):,} characters, {len(rhymes)} rhymes, {len(text.split()):,} words; vocabulary of V = {V} characters:")
print("".join(shown(c) for c in vocab))
print(f"encode('humpty') = {encode('humpty').tolist()}  ->  decode(...) = {decode(encode('humpty'))!r}")
print(
    f"training: {len(rhymes) - len(held_out_rhymes)} rhymes, {len(ids):,} characters; held out: "
    f"{len(held_out_rhymes)} rhymes, {len(held_out_ids):,} characters, the first beginning {held_out_rhymes[0][:24]!r}"
)

# %% [markdown]
# ### Baselines: how surprised is a model that ignores context?
#
# *Skim on a first pass.*
#
# A language model is scored by its **cross-entropy**, the average of $-\ln p(\text{correct next
# character})$ in nats (the loss of lesson 9). $e^{\text{loss}}$, the **perplexity**, reads as "as unsure
# as a uniform choice among this many characters". Three yardsticks, each counted on the training rhymes
# and measured on the held-out ones:
# * **uniform**: every character equally likely, loss $\ln V$;
# * **unigram**: each character with its frequency in the training rhymes, ignoring context;
# * **bigram**: the next character given only the previous one, $P(b \mid a) = $ (how often $a$ is followed
#   by $b$) / (how often $a$ occurs), counted on the training rhymes.
#
# A pair that never occurs in the training rhymes would get probability 0, and a single such pair in the
# held-out text would make the loss infinite. So every count gets a small number $\alpha$ added
# (**add-$\alpha$ smoothing**). To give the baselines every advantage, we use the $\alpha$ that does best
# on the held-out rhymes themselves — a choice a fair test would not allow the model.

# %%
ALPHAS = [0.01, 0.03, 0.1, 0.3, 1.0]  # add-α smoothing: the baselines get the best of these on held-out text


def counted_loss(counts, context, targets):
    """(loss, α): held-out cross-entropy of P(target | context) = (count + α) / (row total + V·α), best α."""
    losses = {
        a: float(-((counts + a) / (counts + a).sum(-1, keepdim=True))[context, targets].log().mean()) for a in ALPHAS
    }
    best = min(losses, key=losses.get)
    return losses[best], best


unigram_counts = torch.bincount(ids, minlength=V).double()[None]  # (1, V): one row, no context
bigram_counts = torch.zeros(V, V, dtype=torch.float64)
bigram_counts.index_put_((ids[:-1], ids[1:]), torch.ones(len(ids) - 1, dtype=torch.float64), accumulate=True)
uniform_loss = math.log(V)
unigram_loss, _ = counted_loss(unigram_counts, torch.zeros_like(held_out_ids), held_out_ids)
for name, (loss, alpha) in (
    ("uniform", (uniform_loss, None)),
    ("unigram", (unigram_loss, _)),
    ("bigram", counted_loss(bigram_counts, held_out_ids[:-1], held_out_ids[1:])),
):
    smoothing = "" if alpha is None else f" (α = {alpha:g})"
    print(f"{name:>8}: {loss:.3f} nats per held-out character, perplexity {math.exp(loss):5.1f}{smoothing}")


# %% [markdown]
# ### The model
#
# *Skim on a first pass.*
#
# A decoder-only Transformer, like GPT but tiny. Everything in it is from earlier lessons, except that
# the attention is **yours, with your causal mask**:
#
# $$x^{(0)}_t = E_{\text{token}}[x_t] + E_{\text{pos}}[t], \qquad
#   h = x + \operatorname{MHA}\big(\mathrm{LN}_1(x), \text{mask} = \text{causal}\big), \qquad
#   x' = h + \operatorname{FFN}\big(\mathrm{LN}_2(h)\big),$$
#
# then a final layer norm and a linear head that gives $V$ logits at every position. The blocks are
# **pre-LN** (lesson 8), as in GPT-2. The positions are a *learned* table $E_{\text{pos}}$ with one row
# for each of `max_len` positions, so this model can read at most `max_len` characters at once.
#
# The class below is given. `forward(tokens, caches=None)` is the full computation; the `caches`
# argument is for section 5 — ignore it until then.


# %%
class DecoderBlock(nn.Module):
    """Pre-LN decoder block: x + MHA(LN(x)) with a causal mask, then x + FFN(LN(x))."""

    def __init__(self, d_model, n_heads, d_ff, causal=True):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)  # yours (exercise 10.2)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.causal, self.last_weights = causal, None

    def forward(self, x, cache=None):
        h = self.ln1(x)
        if cache is None:  # everything at once
            mask = causal_mask(x.shape[1]) if self.causal else None  # yours (exercise 10.1)
            a, weights = self.attn(h, mask=mask)
        else:  # section 5: the newest tokens only
            past = cache["k"].shape[2] if "k" in cache else 0
            mask = causal_mask(x.shape[1], past + x.shape[1]) if x.shape[1] > 1 else None
            a, weights = attend_with_cache(self.attn, h, cache, mask)  # yours (exercise 10.4)
        self.last_weights = weights.detach()  # (B, n_heads, T_new, T_total)
        x = x + a
        return x + self.ff(self.ln2(x))


class TinyDecoder(nn.Module):
    """Token + position embeddings, n_layers decoder blocks, a final layer norm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, max_len, causal=True):
        super().__init__()
        self.max_len = max_len
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)  # one learned vector per position
        self.blocks = nn.ModuleList([DecoderBlock(d_model, n_heads, 4 * d_model, causal) for _ in range(n_layers)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, caches=None):
        """tokens: int64 (B, T) -> logits (B, T, vocab_size). With `caches` (one dict per block), `tokens`
        are the newest tokens, which follow the ones already in the caches."""
        past = caches[0]["k"].shape[2] if caches and "k" in caches[0] else 0
        T = tokens.shape[1]
        if past + T > self.max_len:
            raise ValueError(f"this model knows {self.max_len} positions; {past} + {T} tokens do not fit")
        x = self.tok(tokens) + self.pos(torch.arange(past, past + T))
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i])
        return self.head(self.ln(x))


# %% [markdown]
# ### Training
#
# *Skim on a first pass.*
#
# Every step draws 16 random windows of `MAX_LEN + 1` characters from the training rhymes; the first
# `MAX_LEN` are the input and the last `MAX_LEN` (shifted by one) are the targets — `MAX_LEN` predictions per
# window, trained in one pass, which the causal mask makes honest. Adam with weight decay (`AdamW`) does the
# updates, with a learning rate that falls linearly to 0 over the training. Every 50 steps, and at the end, we
# measure the loss on the held-out rhymes, cut into consecutive windows.

# %%
D_MODEL, N_HEADS, N_LAYERS, MAX_LEN = 48, 4, 2, 32  # d_k = 12; the model reads at most 32 characters
BATCH, STEPS, LEARNING_RATE, EVALUATE_EVERY = 16, 400, 1e-2, 50


def random_windows(generator, batch=BATCH, length=MAX_LEN):
    """(inputs, targets), two int64 tensors (batch, length): random windows of the training rhymes, targets shifted by one."""
    start = torch.randint(0, len(ids) - length - 1, (batch,), generator=generator)
    windows = torch.stack([ids[s : s + length + 1] for s in start.tolist()])
    return windows[:, :-1], windows[:, 1:]


def consecutive_windows(token_ids, length=MAX_LEN):
    """(inputs, targets): the whole text cut into windows of `length`, targets shifted by one."""
    n = (len(token_ids) - 1) // length
    return token_ids[: n * length].view(n, length), token_ids[1 : n * length + 1].view(n, length)


held_inputs, held_targets = consecutive_windows(held_out_ids)
train_inputs, train_targets = consecutive_windows(ids)
# the baselines again, on exactly the model's held-out predictions (the whole windows; the table above used every pair)
unigram_loss, _ = counted_loss(unigram_counts, torch.zeros_like(held_targets), held_targets)
bigram_loss, _ = counted_loss(bigram_counts, held_inputs, held_targets)


def text_loss(net, inputs=held_inputs, targets=held_targets):
    """Cross-entropy (nats per character) of `net` on windows of a text (the held-out rhymes by default)."""
    with torch.no_grad():
        return F.cross_entropy(net(inputs).reshape(-1, V), targets.reshape(-1)).item()


def train(net, steps, seed=0):
    """Train `net` with AdamW on random windows, learning rate falling linearly to 0. Returns the loss of every
    step and {step: held-out loss} every EVALUATE_EVERY steps."""
    optimizer = torch.optim.AdamW(net.parameters(), lr=LEARNING_RATE)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - step / steps)
    generator, losses, held_out = torch.Generator().manual_seed(seed), [], {}
    for step in range(1, steps + 1):
        inputs, targets = random_windows(generator)
        loss = F.cross_entropy(net(inputs).reshape(-1, V), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if step % EVALUATE_EVERY == 0 or step == steps:
            held_out[step] = text_loss(net)
    return losses, held_out


model, trained = None, False  # set below: the model, from your classes, and whether its training finished
with ac.student_code("causal_mask and MultiHeadAttention"):
    torch.manual_seed(0)
    net = TinyDecoder(V, D_MODEL, N_HEADS, N_LAYERS, MAX_LEN)
    net(train_inputs[:1])  # your causal_mask and MultiHeadAttention run (no randomness: the training is unchanged)
    model = net
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"TinyDecoder: {N_LAYERS} blocks, d_model = {D_MODEL}, {N_HEADS} heads (d_k = {D_MODEL // N_HEADS}), "
        f"d_ff = {4 * D_MODEL}, max_len = {MAX_LEN}, vocabulary {V}: {n_params:,} parameters."
    )
    start = time.perf_counter()
    losses, held_out_curve = train(model, STEPS)
    train_seconds = time.perf_counter() - start
    model_loss, fit_loss = text_loss(model), text_loss(model, train_inputs, train_targets)
    trained = True  # the later cells use the model, its losses and its held-out curve

    fig, ax = plt.subplots(figsize=(6.6, 4.8), layout="constrained")
    ax.plot(np.arange(1, STEPS + 1), losses, color=plots.color("yours"), lw=0.8, alpha=0.35)
    ax.plot(
        np.arange(20, STEPS + 1) - 9.5,  # each mean drawn at the middle of its 20 steps
        np.convolve(losses, np.ones(20) / 20, mode="valid"),
        color=plots.color("yours"),
        lw=2.5,
        label="training (mean of 20 steps, centred)",
    )
    ax.plot(*zip(*held_out_curve.items()), "o-", color=plots.color("other"), lw=2, label="held-out rhymes")
    for loss, label, meaning, style in (
        (uniform_loss, "uniform", "chance", ":"),
        (unigram_loss, "unigram", "other2", "--"),
        (bigram_loss, "bigram", "baseline", "-."),
    ):
        held = "" if label == "uniform" else ", held out"
        ax.axhline(loss, color=plots.color(meaning), ls=style, lw=1.5, label=f"{label}{held}: {loss:.2f}")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.set_title(
        f"On held-out rhymes the model beats the bigram (previous character only):\n{model_loss:.2f} against "
        f"{bigram_loss:.2f} nats per character"
    )
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    plots.show(
        fig,
        alt=f"On held-out rhymes the model beats the bigram baseline: {model_loss:.2f} against {bigram_loss:.2f} "
        f"nats per character. Loss of the tiny decoder over {STEPS} training steps. On training batches it falls from about "
        f"{losses[0]:.1f} to {np.mean(losses[-20:]):.2f} nats per character; on the held-out rhymes it falls to "
        f"{model_loss:.2f} and levels off, below the bigram ({bigram_loss:.2f}) and unigram ({unigram_loss:.2f}) "
        "baselines measured on the same rhymes.",
        name="10_training",
    )
    print(
        f"{STEPS} steps in {train_seconds:.1f} s. Held-out rhymes: {model_loss:.3f} nats per character "
        f"(perplexity {math.exp(model_loss):.1f}); on the same {held_targets.numel():,} predictions the bigram gives "
        f"{bigram_loss:.3f} (perplexity {math.exp(bigram_loss):.1f}), the unigram {unigram_loss:.3f} "
        f"(perplexity {math.exp(unigram_loss):.1f})."
    )
    best_step = min(held_out_curve, key=held_out_curve.get)
    print(
        f"On its own training rhymes: {fit_loss:.3f} nats per character. Lowest held-out loss "
        f"{held_out_curve[best_step]:.3f}, at step {best_step}."
    )


# %% [markdown]
# On rhymes it never saw, the model's loss is clearly below the bigram's (whose smoothing was picked on those
# very rhymes), so it uses more than the previous character. It fits its training rhymes better still: its
# 61,668 parameters have memorised part of the 7,792 training characters, and the held-out curve flattens while
# the training loss keeps falling. (The loss averages every position of a window: the first sees only its own
# character (the bigram's context), the last sees 32.)
#
# What does the model expect after *"humpty dumpty sat on a w"*? Its five most likely next characters:


# %%
class ModelNotTrained(NotImplementedError):
    """The training cell above was stopped before it finished."""


def needs_model():
    if model is None:  # the model could not be built from your classes yet
        raise NotImplementedError()
    if not trained:
        raise ModelNotTrained()


@contextlib.contextmanager
def model_code(name):
    """Like ac.student_code(name), for a cell that uses the trained model: if the training cell of section 3 was
    stopped before it finished, say so (instead of an error about a name that cell had not defined yet)."""
    with ac.student_code(name):
        try:
            yield
        except ModelNotTrained:
            print(
                "(The training cell of section 3, the one that prints 'TinyDecoder: …', was stopped before it "
                "finished: run it again to the end, then this cell.)"
            )


with model_code("causal_mask and MultiHeadAttention"):
    needs_model()
    with torch.no_grad():
        p_next = torch.softmax(model(encode("humpty dumpty sat on a w")[None])[0, -1], dim=-1)
    top = p_next.topk(5)
    print(
        ", ".join(
            f"{shown(vocab[i])!r}: {p:.1%}" for p, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        )
    )


# %% [markdown]
# ### What if we forget the mask?
#
# *Skim on a first pass.*
#
# The same model, trained the same way for fewer steps but **without** the causal mask
# (`causal=False`): every position may now read the character it is supposed to predict. We measure its
# training loss, then its loss on the held-out rhymes when it must predict honestly — with the mask, as
# during generation, when the next character does not exist yet — and let it continue *"humpty dumpty sat"*
# by always taking its most likely character.


# %%
def greedy_continue(net, prompt, n):
    """Append the most likely next character n times (recomputing everything, sliding over the last max_len)."""
    tokens = encode(prompt)[None]
    with torch.no_grad():
        for _ in range(n):
            logits = net(tokens[:, -net.max_len :])[:, -1]
            tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    return decode(tokens[0])


CHEAT_STEPS = 100
with model_code("causal_mask and MultiHeadAttention"):
    needs_model()
    torch.manual_seed(0)
    cheater = TinyDecoder(V, D_MODEL, N_HEADS, N_LAYERS, MAX_LEN, causal=False)
    cheat_losses, _ = train(cheater, CHEAT_STEPS)
    cheat_train = float(np.mean(cheat_losses[-20:]))
    for block in cheater.blocks:
        block.causal = True  # the honest test: no peeking at the answer
    cheat_honest = text_loss(cheater)
    print(
        f"without the mask: training loss {cheat_train:.3f} after {CHEAT_STEPS} steps "
        f"(the masked model: {np.mean(losses[:CHEAT_STEPS][-20:]):.3f} after the same steps, {np.mean(losses[-20:]):.3f} at the end)"
    )
    print(
        f"the same unmasked model predicting the held-out rhymes honestly: {cheat_honest:.3f} nats per character "
        f"(unigram {unigram_loss:.3f}, your masked model {model_loss:.3f})"
    )
    print("unmasked model, greedy: ", repr(greedy_continue(cheater, "humpty dumpty sat", 40)))
    print("your model, greedy:     ", repr(greedy_continue(model, "humpty dumpty sat", 40)))


# %% [markdown]
# Without the mask the training loss drops far below the honest model's: the model learned to **copy**
# the next character, which it could see. Asked to predict honestly, it is worse than the unigram
# model, which ignores context altogether, and its continuation is not text. The causal mask is what
# makes "predict every position in one pass" a fair training task.

# %% [markdown]
# ## 4. Choosing the next character: greedy, temperature, top-k
#
# At every step the model gives logits $z \in \mathbb{R}^{V}$ for the next character. To choose:
# * **Greedy**: take $\arg\max_i z_i$. Deterministic, and prone to loops.
# * **Sampling**: draw the next character from $p = \operatorname{softmax}(z)$.
# * **Temperature** $\tau$ (lesson 4; $T$ stays a length here): draw from $\operatorname{softmax}(z / \tau)$.
#   $\tau < 1$ sharpens, $\tau > 1$ flattens, and greedy is the limit $\tau \to 0$. It divides the **logits,
#   before the softmax**: dividing the probabilities does nothing once they are renormalised.
# * **Top-k**: keep the $k$ largest logits, set the others to $-\infty$, then softmax. This cuts the long tail of
#   unlikely characters, which together derail many samples.
#
# ### Exercise 10.3 — temperature, top-k and greedy (4 points)
#
# `next_token_probs(logits, temperature=1.0, top_k=None)`: `logits` is a float tensor `(..., V)`; return the
# next-token probabilities, same shape, rows summing to 1, as a new tensor (leave `logits` unchanged).
# * `top_k=None` keeps every token; $k \ge 1$ keeps the $k$ largest logits of each row and gives the others
#   probability exactly 0 ($k \ge V$ keeps all). The tests never put a tie at the $k$-th place.
# * `temperature > 0`: the softmax of the kept logits divided by `temperature`; `temperature == 0`: greedy,
#   probability 1 on each row's largest logit.
#
# `sample_next(logits, temperature=1.0, top_k=None, generator=None)`: `logits` is `(B, V)`; return an int64
# tensor `(B,)`, also for one row (shape `(1,)`, not 0-d).
# * At `temperature == 0`: each row's arg max, with no randomness (the checks compare 1,000 rows).
# * Otherwise draw from `next_token_probs(logits, temperature, top_k)`, every random number from `generator`:
#   generators seeded alike give the same tokens, seeded differently other ones, and successive calls go on
#   drawing from it (no seed and no generator of your own inside).
#
# <details><summary>Hint 1: the idea</summary>
#
# Filter, then scale, then normalise: top-k picks the surviving logits (the others become $-\infty$), the
# temperature divides them, the softmax normalises. Greedy needs no softmax.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# Each row's $k$-th largest logit, as a column `(..., 1)`, is the threshold: a logit below it is dropped.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `torch.topk(logits, k, dim=-1).values[..., -1:]`; `logits.masked_fill(logits < kth, float("-inf"))`;
# `F.one_hot(logits.argmax(-1), V).to(logits.dtype)` for greedy; `torch.multinomial(probs, 1, generator=generator)`
# draws one token per row.
# </details>


# %% answer="sampling"
def next_token_probs(logits, temperature=1.0, top_k=None):
    """Probabilities (..., V) for the next token: top-k filter, then softmax(logits / temperature); greedy at 0."""
    ### BEGIN SOLUTION
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # the k-th largest logit of each row
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return torch.softmax(logits / temperature, dim=-1)
    ### END SOLUTION


def sample_next(logits, temperature=1.0, top_k=None, generator=None):
    """One token id per row of logits (B, V) -> int64 (B,): the arg max at temperature 0, else a sample."""
    ### BEGIN SOLUTION
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = next_token_probs(logits, temperature, top_k)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    ### END SOLUTION


# %% tests="sampling-tests" points=4
# Visible checks: a worked example for every setting of next_token_probs, then sample_next.
ac.reseed(103)  # the same random inputs whatever ran before (grading may leave out the experiments)
_z = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
_p = checks.call(next_token_probs, _z)
checks.expect_shape(_p, (1, 4), "next_token_probs of logits of shape (1, 4)")
checks.expect_close(_p, [[0.64391426, 0.23688282, 0.08714432, 0.0320586]], "next_token_probs([2, 1, 0, -1])")
_TEMPERATURE_MISTAKES = {  # what each mistake gives for the (kept) logits z and the temperature t
    "the logits are multiplied by the temperature: divide them by it.": lambda z, t: (z * t).softmax(-1),
    "the temperature divides the probabilities: divide the logits, before the softmax.": lambda z, t: z.softmax(-1) / t,
    "the temperature has no effect: divide the logits by it before the softmax.": lambda z, t: z.softmax(-1),
}
_mistakes = {text: wrong(_z, 0.5) for text, wrong in _TEMPERATURE_MISTAKES.items()}
_want = [[0.86495488, 0.11705891, 0.0158422, 0.00214401]]
checks.expect_close(next_token_probs(_z, temperature=0.5), _want, "temperature=0.5", mistakes=_mistakes)
_mistakes = {
    "top-k keeps k + 1 tokens: keep exactly the k largest logits.": [_z[0, :3].softmax(-1).tolist() + [0.0]],
    "the tokens outside the top k were zeroed after the softmax without renormalising: set their logits to "
    "-inf before the softmax.": _p * torch.tensor([1.0, 1, 0, 0]),
    "top-k keeps the smallest logits: keep the k largest.": [[0.0, 0.0, 0.73105858, 0.26894142]],
}
checks.expect_close(next_token_probs(_z, top_k=2), [[0.73105858, 0.26894142, 0, 0]], "top_k=2", mistakes=_mistakes)
checks.expect_close(next_token_probs(_z, temperature=0), [[1.0, 0, 0, 0]], "next_token_probs(…, temperature=0)")
checks.expect(torch.equal(_z, torch.tensor([[2.0, 1.0, 0.0, -1.0]])), "next_token_probs changed the logits it was given (an in-place masked_fill_?): return a new tensor.")  # fmt: skip
checks.expect_close(next_token_probs(_z[0], top_k=4), _p[0], "next_token_probs of one row (4,), top_k=4 = V keeps all")
# sampling: greedy is the arg max of every row, without randomness; generators seeded alike give the same samples
torch.manual_seed(0)
_rows = torch.randn(1000, 9) * 0.3  # nearly flat rows: a sample would often miss the arg max
_t = checks.call(sample_next, _rows, temperature=0)
checks.expect(isinstance(_t, torch.Tensor) and _t.dtype == torch.long and tuple(_t.shape) == (1000,), "sample_next must return an int64 tensor of shape (B,), one token id per row.")  # fmt: skip
_misses = int((_t != _rows.argmax(-1)).sum())
checks.expect(_misses == 0, f"temperature 0: {_misses} of 1000 tokens are not their row's arg max; greedy never samples.")  # fmt: skip
_a, _b, _c = (sample_next(_z.expand(4000, 4), generator=torch.Generator().manual_seed(s)) for s in (0, 0, 1))
checks.expect(torch.equal(_a, _b), "two calls with generators seeded alike gave different samples: use the generator.")
checks.expect(not torch.equal(_a, _c), "generators seeded differently gave the same samples: take every random number from `generator`, not from a seed or a generator of your own.")  # fmt: skip
_freq = torch.bincount(_a, minlength=4).double() / len(_a)
checks.expect_close(_freq, _p[0], "the frequencies of 4000 samples of [2, 1, 0, -1]", atol=0.04)
_top2 = set(sample_next(_z.expand(500, 4), 1.0, 2, torch.Generator().manual_seed(3)).tolist())
checks.expect(_top2 <= {0, 1}, "sample_next with top_k=2 drew a token outside the 2 most likely.")
_g = torch.Generator().manual_seed(2)  # one row at a time with one generator, as generate calls it
_one = [checks.call(sample_next, _z, 1.0, None, _g) for _ in range(200)]
checks.expect(all(isinstance(t, torch.Tensor) and tuple(t.shape) == (1,) for t in _one), "one row of logits (1, V) must give shape (1,), not a 0-d tensor: squeeze only the last axis, .squeeze(-1).")  # fmt: skip
checks.expect(len({int(t) for t in _one}) > 1, "200 calls with one generator drew the same token every time: each call must go on drawing from `generator` (no seed of your own).")  # fmt: skip


### BEGIN HIDDEN TESTS
def _reference_probs(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.shape[-1]:
        logits = logits.masked_fill(logits < logits.sort(-1, descending=True).values[..., top_k - 1 : top_k], -math.inf)
    return F.one_hot(logits.argmax(-1), logits.shape[-1]).double() if temperature == 0 else (logits / temperature).softmax(-1)  # fmt: skip


_zs = 3 * torch.randn(3, 5, 11, generator=torch.Generator().manual_seed(103), dtype=torch.float64)
for _temperature, _k in [(t, k) for t in (1.0, 0.3, 1.7, 0.0) for k in (None, 1, 4, 11, 20)]:
    _kept = _reference_probs(_zs, 1.0, _k).log()  # the kept logits, shifted
    _mistakes = {text: wrong(_kept, _temperature) for text, wrong in _TEMPERATURE_MISTAKES.items() if _temperature % 1}
    if _k is not None and _k < 10:
        _mistakes["top-k keeps k + 1 tokens: keep exactly the k largest logits."] = _reference_probs(_zs, _temperature, _k + 1)  # fmt: skip
    _what = f"next_token_probs of (3, 5, 11) logits, temperature={_temperature}, top_k={_k}"
    checks.expect_close(next_token_probs(_zs, _temperature, _k), _reference_probs(_zs, _temperature, _k), _what, mistakes=_mistakes)  # fmt: skip
checks.expect_close(next_token_probs(_zs[0, 0], 0.8, 3), _reference_probs(_zs[0, 0], 0.8, 3), "one row of shape (11,)")
_two = torch.tensor([[0.5, 3.0, -2.0], [1.0, 1.5, 2.0]])
checks.expect_close(next_token_probs(_two, top_k=1), [[0.0, 1, 0], [0, 0, 1]], "two rows with top_k=1")
_big = torch.tensor([[1000.0, -1000.0, 999.0], [-500.0, -501.0, -499.0]])
checks.expect_finite(next_token_probs(_big, 0.5, 2), "next_token_probs of logits around ±1000", "use torch.softmax.")
_logits = torch.tensor([[0.2, -1.0, 2.5, 0.0, 1.9, -0.4], [3.0, 2.2, -1.0, 0.5, 0.0, 2.9]])
checks.expect(sample_next(_logits, 1.3, 1, torch.Generator().manual_seed(1)).tolist() == [2, 0], "top_k=1 is greedy.")
_draws = sample_next(_logits[1].expand(20000, 6), 0.9, 3, torch.Generator().manual_seed(2))
checks.expect(set(_draws.tolist()) <= {0, 1, 5}, "sample_next with top_k=3 drew a token outside the 3 most likely.")
_mistakes = {"the samples ignore the temperature or top-k.": _reference_probs(_logits[1].double(), 1.0)}
_freq, _want = torch.bincount(_draws, minlength=6).double() / 20000, _reference_probs(_logits[1].double(), 0.9, 3)
checks.expect_close(_freq, _want, "the frequencies of 20000 samples (temperature 0.9, top_k 3)", 0.02, mistakes=_mistakes)  # fmt: skip
_free = sample_next(_logits, 1.0)
checks.expect(tuple(_free.shape) == (2,) and _free.dtype == torch.long, "without a generator: int64 of shape (B,).")
### END HIDDEN TESTS
checks.passed("next_token_probs and sample_next")


# %% [markdown]
# *Skim on a first pass.*
#
# **Temperature and top-k on your model.** The distributions of the next character after
# *"humpty dumpty sat on a w"* for three temperatures and for top-k = 5, computed by your
# `next_token_probs`; the title of each panel gives the entropy in bits (lesson 4).


# %%
def entropy_bits(p):
    p = p[p > 0]
    return max(0.0, float(-(p * p.log2()).sum()))  # never "-0.00" when one character takes all


prompt_w = "humpty dumpty sat on a w"
settings = [(0.5, None), (1.0, None), (2.0, None), (1.0, 5)]
with model_code("next_token_probs"):
    needs_model()
    with torch.no_grad():
        logits_w = model(encode(prompt_w)[None])[0, -1]
    fig, axes = plt.subplots(4, 1, figsize=(6.6, 7.8), sharex=True, sharey=True, layout="constrained")
    entropies = []
    for ax, (temperature, top_k) in zip(axes, settings, strict=True):
        p = next_token_probs(logits_w, temperature, top_k)  # yours
        entropies.append(entropy_bits(p))
        ax.bar(range(V), p.numpy(), color=plots.color("yours"))
        ax.set_ylabel("probability")
        ax.set_title(
            f"temperature {temperature}, top-k = {top_k or 'all'}: entropy {entropies[-1]:.2f} bits", loc="left"
        )
    axes[-1].set_xticks(range(V), [shown(c) for c in vocab])
    axes[-1].set_xlim(-0.7, V - 0.3)
    axes[-1].set_xlabel("next character")
    fig.suptitle(f"After {prompt_w!r}:\na low temperature or a small top-k concentrates the probability")
    plots.show(
        fig,
        alt="A low temperature or a small top-k concentrates the probability of the next character: the entropy is "
        f"{entropies[0]:.2f} bits at temperature 0.5 and {entropies[2]:.2f} bits at 2.0. "
        "Four bar charts of the next-character distribution after 'humpty dumpty sat on a w': "
        + "; ".join(
            f"temperature {t}, top-k {k or 'all'}: entropy {h:.2f} bits"
            for (t, k), h in zip(settings, entropies, strict=True)
        ),
        name="10_temperature",
    )
    print(f"largest possible entropy over {V} characters: log2({V}) = {math.log2(V):.2f} bits")
    plain = next_token_probs(logits_w)
    tail = 1 - float(plain.topk(5).values.sum())
    print(
        f"at temperature 1 the {V - 5} characters outside the top 5 have probability {plain.topk(V).values[5]:.3f} or less "
        f"each, but {tail:.0%} together: about one sampled character in {1 / tail:.0f} comes from that tail."
    )


# %% [markdown]
# *Skim on a first pass.*
#
# **Three ways to write.** Each line continues the same prompt for 150 characters with your
# `sample_next` (fixed seed). The model reads at most `MAX_LEN` characters, so we slide over the last
# `MAX_LEN` and recompute everything at every step (section 5 does better). Under each sample: the share of
# its words that occur somewhere in the rhymes, and how many distinct words it uses.


# %%
def generate(net, prompt, n_new, temperature=1.0, top_k=None, use_cache=False, seed=0):
    """The prompt followed by n_new characters chosen by your sample_next.

    use_cache=False recomputes the last max_len characters at every step; use_cache=True (section 5)
    feeds only the newest character through the model and keeps keys and values in caches."""
    generator = torch.Generator().manual_seed(seed)
    tokens = encode(prompt)[None]
    caches = [{} for _ in net.blocks] if use_cache else None
    with torch.no_grad():
        logits = net(tokens, caches)
        for _ in range(n_new):
            nxt = sample_next(logits[:, -1], temperature, top_k, generator)  # yours, (1,)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            logits = net(nxt[:, None], caches) if use_cache else net(tokens[:, -net.max_len :])
    return decode(tokens[0])


known_words = set(re.findall(r"[a-z']+", text))
sample_settings = [("greedy", 0, None), ("temperature 0.8, top-k = 10", 0.8, 10), ("temperature 1.5", 1.5, None)]
SEEDS = 4  # the sampled settings are measured over seeds 0-3; greedy does not depend on the seed
with model_code("sample_next"):
    needs_model()
    word_stats = {}  # label -> (share of the words that occur in the rhymes, distinct words): means over the seeds
    for label, temperature, top_k in sample_settings:
        shares, distinct = [], []
        for seed in range(1 if temperature == 0 else SEEDS):
            sample = generate(model, "mary had a ", 150, temperature, top_k, seed=seed)
            new_words = re.findall(r"[a-z']+", sample[len("mary had a ") :])
            shares.append(np.mean([w in known_words for w in new_words]))
            distinct.append(len(set(new_words)))
            if seed == 0:
                print(f"--- {label} ---\n{sample}")
        word_stats[label] = (np.mean(shares), np.mean(distinct))
        seeds = "" if temperature == 0 else f"; mean over {SEEDS} seeds: {np.mean(shares):.0%}, {np.mean(distinct):.1f}"
        print(
            f"[{shares[0]:.0%} of its {len(new_words)} words occur in the rhymes, {distinct[0]} distinct words{seeds}]\n"
        )
    fewest = min(word_stats, key=lambda k: word_stats[k][1])
    least_real = min(word_stats, key=lambda k: word_stats[k][0])
    print(
        f"Fewest distinct words: {fewest}; smallest share of words that occur in the rhymes: {least_real} "
        f"(greedy, and the means over {SEEDS} seeds of the others)."
    )


# %% [markdown]
# *Skim on a first pass.*
#
# Read the three samples and the lines under them. Greedy always takes the most likely path, so once a
# phrase leads back to itself it goes round in a loop, with few distinct words. Sampling at temperature $1.5$
# flattens the distribution, so unlikely characters get picked and the words drift away from the rhymes'
# vocabulary. The middle setting is a compromise between the two: it uses clearly more distinct words than greedy,
# and at least twice the share of words found in the rhymes that temperature $1.5$ has. Whether greedy's share of
# words found in the rhymes is above or below the middle setting's depends on which loop greedy falls into, and that
# changes from machine to machine. (The texts are seed 0's; the sampled settings' numbers are means over four seeds,
# greedy's come from its one text. Other seeds, and another machine, give other texts: what holds is which setting
# has the fewest distinct words and which the smallest share of words found in the rhymes, not the exact numbers.)

# %% [markdown]
# ## 5. The KV cache: do not recompute the past
#
# Generating runs the model on the whole text so far (at most its last `MAX_LEN` characters) for every new
# character: mostly repeated work. In each layer, the
# key and value of position $j$ come from the layer's input at $j$, which — **because of the causal mask** — depends only on tokens $0, \dots, j$. Appending a token
# changes nothing at earlier positions, so their keys and values can be computed once and **stored**: the
# **KV cache**. The cell compares your model's keys for a prompt and for the prompt with one more character.


# %%
def layer_keys(net, tokens):
    """The keys (B, h, T, d_k) of every block for `tokens`, from a full forward pass."""
    found = []
    hooks = [block.attn.W_k.register_forward_hook(lambda mod, inp, out: found.append(out)) for block in net.blocks]
    with torch.no_grad():
        net(tokens)
    for hook in hooks:
        hook.remove()
    B, T, _ = found[0].shape
    return [k.view(B, T, N_HEADS, -1).transpose(1, 2) for k in found]


with model_code("causal_mask and MultiHeadAttention"):
    needs_model()
    short, longer = encode("twinkle, twinkle")[None], encode("twinkle, twinkle,")[None]
    for layer, (k_short, k_long) in enumerate(zip(layer_keys(model, short), layer_keys(model, longer), strict=True)):
        T = k_short.shape[2]
        print(
            f"block {layer}: keys of the first {T} positions, {T} vs {T + 1} characters: "
            f"largest difference {(k_long[:, :, :T] - k_short).abs().max().item():.1e}"
        )


# %% [markdown]
# The earlier keys do not change (up to rounding, if any). With a cache, each layer handles a new token at
# position $t$ in four steps: compute its $q, k, v$ (**this token only**); append $k$ and $v$ to the cache; attend
# with $q$ over all $t+1$ cached keys (no mask needed); then $W^O$ and the rest of the block, for this token only.
#
# **Work per new token.** At length $T$, recomputing pushes all $T$ tokens through every layer and computes
# $T \times T$ scores per head: work like $T^2$ per new token. The cache pushes **one** token through and
# computes $T$ scores per head: work like $T$ (section 7 measures what that buys).
#
# **The prompt** goes through in one call with an empty cache; its tokens need the bottom-right mask
# `causal_mask(T_new, T_past + T_new)` of exercise 10.1, which the model's `DecoderBlock` passes to your function.
#
# **Memory.** A key and a value of $d_{\text{model}}$ numbers per token and block: $2 \cdot n_{\text{layers}}
# \cdot d_{\text{model}}$ numbers per token and sequence (lesson 11 shrinks it with grouped-query attention).
#
# ### Exercise 10.4 — attention with a KV cache (4 points)
#
# Implement `attend_with_cache(mha, x_new, cache, mask=None)`.
# * `mha` holds `num_heads`, `d_k` and the layers `W_q`, `W_k`, `W_v`, `W_o` (your `MultiHeadAttention`). Call
#   the layers, never `mha(...)` (the checks' `forward` refuses to run), and project **only the new tokens**: the
#   checks count the rows each layer projects, so a cache that recomputes every key and value loses the points.
# * `x_new` `(B, T_new, d_model)`: the newest tokens (the whole prompt at first, then one token per step).
# * `cache`: a dict, empty `{}` at first; `cache["k"]` and `cache["v"]` hold the keys and values of every token
#   so far, split into heads, `(B, num_heads, T_past, d_k)`. **Append** the new ones along the time axis and
#   store the result back in `cache`.
# * `mask`: `None` (every new token sees every cached key), or a boolean `(T_new, T_past + T_new)` tensor,
#   `True` = may attend; a blocked entry gets weight exactly 0, as in exercise 10.2.
# * Return `(output, weights)`: `(B, T_new, d_model)` after `W_o`, and `(B, num_heads, T_new, T_past + T_new)`.
# * Keep the model's number type: in a float64 model the cache, output and weights are float64 (checked).
#
# <details><summary>Hint 1: the idea</summary>
#
# Only the new tokens go through the projections; their keys and values join the cached ones, and the new
# queries attend over all of them as in exercise 10.2.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The new keys are `(B, h, T_new, d_k)`; the keys to attend over are the cached ones followed by these, along
# axis 2 (time).
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `mha.W_k(x_new).view(B, T_new, mha.num_heads, mha.d_k).transpose(1, 2)`; `"k" in cache`;
# `torch.cat([cache["k"], k], dim=2)`.
# </details>


# %% answer="kv-cache"
def attend_with_cache(mha, x_new, cache, mask=None):
    """Multi-head attention of the newest tokens x_new (B, T_new, d_model) over every token so far.

    Appends their keys and values (B, h, T_new, d_k) to cache["k"] / cache["v"] (created when the cache is
    empty). mask: None or bool (T_new, T_past + T_new), True = may attend.
    Returns (output (B, T_new, d_model), weights (B, h, T_new, T_past + T_new))."""
    ### BEGIN SOLUTION
    B, T_new, d_model = x_new.shape

    def split(t):  # -> (B, h, T_new, d_k)
        return t.view(B, T_new, mha.num_heads, mha.d_k).transpose(1, 2)

    q, k, v = split(mha.W_q(x_new)), split(mha.W_k(x_new)), split(mha.W_v(x_new))
    if "k" in cache:
        k = torch.cat([cache["k"], k], dim=2)  # (B, h, T_past + T_new, d_k)
        v = torch.cat([cache["v"], v], dim=2)
    cache["k"], cache["v"] = k, v
    scores = q @ k.transpose(-2, -1) / mha.d_k**0.5  # (B, h, T_new, T_past + T_new)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    merged = (weights @ v).transpose(1, 2).reshape(B, T_new, d_model)
    return mha.W_o(merged), weights
    ### END SOLUTION


# %% tests="kv-cache-tests" points=4
# Visible checks: prompt, 1 token, 2 at once (bottom-right mask); float64, batch of 2, scores near -1e10; rows counted.
ac.reseed(104)  # the same random inputs whatever ran before (grading may leave out the experiments)


def _count_rows(layer, args):  # a forward pre-hook: the rows (tokens) the layer is about to project
    layer.rows += args[0].numel() // layer.in_features


class _Projections(nn.Module):
    """num_heads, d_k, W_q, W_k, W_v (each counts the rows it projects), W_o; huge: W_q = -1e5 I, W_k = 1e5 I."""

    def __init__(self, d_model, num_heads, seed, dtype=torch.float64, huge=False):
        super().__init__()
        torch.manual_seed(seed)
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model, dtype=dtype) for _ in range(4))
        for layer, scale in ((self.W_q, -1e5), (self.W_k, 1e5), (self.W_v, None)):
            layer.rows = 0
            layer.register_forward_pre_hook(_count_rows)
            if huge and scale:
                layer.weight.data.copy_(scale * torch.eye(d_model)), layer.bias.data.zero_()

    def forward(self, *args, **kwargs):
        raise AssertionError("attend_with_cache called mha(...): use its layers mha.W_q, mha.W_k, mha.W_v and mha.W_o instead (forward would compute keys and values for the new tokens only, and this test object has none).")  # fmt: skip


_RUNTIME_CAUSES = {  # what a RuntimeError says -> the slip that usually causes it
    "view size is not compatible": "`.view` after `.transpose` fails (the transposed tensor is not contiguous): merge the heads with `.reshape`.",
    "batch2 tensor": "The weights and the values differ in length: append both the keys and the values to the cache.",
    "Sizes of tensors must match": "torch.cat of the cached and the new keys or values failed: append along the time axis, dim=2.",
}  # fmt: skip


def _check_cache(mha, x, plan, atol, what):  # x (B, T, d) fed in the chunks [start, stop) of `plan`, checked
    (B, T, d), h, dk, cache, projections = x.shape, mha.num_heads, mha.d_k, {}, (mha.W_q, mha.W_k, mha.W_v)
    with torch.no_grad():
        Q, K, Vv = (m(x).view(B, T, h, dk).transpose(1, 2) for m in projections)

        def attend(rows, keys, allowed, fill=-math.inf):  # queries `rows` over the keys `keys` (two slices)
            s = (Q[:, :, rows] @ K[:, :, keys].transpose(-1, -2) / dk**0.5).masked_fill(~allowed, fill)
            return mha.W_o((s.softmax(-1) @ Vv[:, :, keys]).transpose(1, 2).flatten(2))

        for start, stop in plan:
            n, new, before = stop - start, slice(start, stop), [layer.rows for layer in projections]
            causal, tokens = torch.ones(n, stop, dtype=torch.bool).tril(start), f"tokens {start}–{stop - 1} ({what})"
            try:
                result = checks.call(attend_with_cache, mha, x[:, new], cache, causal if n > 1 else None)
            except RuntimeError as error:
                text = str(error)
                cause = next((why for key, why in _RUNTIME_CAUSES.items() if key in text), "")
                raise AssertionError(f"{tokens}: attend_with_cache raised RuntimeError ({text[:120]}). {cause}") from None  # fmt: skip
            rows = [layer.rows - count for layer, count in zip(projections, before)]
            checks.expect(0 < min(rows) and max(rows) <= B * n, f"{tokens}: call the layers mha.W_q, mha.W_k and mha.W_v on the new tokens, mha.W_k(x_new) (the checks count the rows they project)." if min(rows) == 0 else f"{tokens}: W_q, W_k, W_v projected {rows} rows for {B * n} new ones: the cache recomputes the earlier tokens' keys and values. Project only the new tokens; keep their keys and values.")  # fmt: skip
            out, w = checks.output_and_weights(result, tokens, d, stop, "attend_with_cache")
            dtypes = {getattr(t, "dtype", None) for t in (cache.get("k"), cache.get("v"), out, w)}
            checks.expect(dtypes == {x.dtype}, f"{tokens}: cache['k'], cache['v'], the output and the weights must be {x.dtype} tensors, the model's number type.")  # fmt: skip
            everything = slice(0, stop)
            named = [
                ("the new tokens attend only to themselves: the cache must keep the keys and values of the earlier calls.", start > 0, lambda: attend(new, new, causal[:, new])),
                ("the new token does not attend to itself: append its key and value to the cache before computing the scores.", start > 0 and n == 1, lambda: attend(new, slice(0, start), causal[:, :start])),
                ("the mask is ignored: the new tokens see each other's future; apply the mask to the scores.", n > 1, lambda: attend(new, everything, torch.ones_like(causal))),
                ("the mask is inverted: True means 'may attend'.", start > 0 and n > 1, lambda: attend(new, everything, ~causal)),
                ("the new tokens' mask is aligned top-left (is_causal=True?): they are the newest tokens, use the bottom-right mask you are given.", start > 0 and n > 1, lambda: attend(new, everything, causal.tril(0))),
                ("blocked scores are filled with a large finite number: here the allowed scores are lower still (about -1e10), so the blocked keys win. Fill with float('-inf').", n > 1, lambda: attend(new, everything, causal, -1e9)),
            ]  # fmt: skip
            mistakes = {text: wrong() for text, applies, wrong in named if applies}
            checks.expect_close(out, attend(new, everything, causal), f"the output, {tokens}", atol, mistakes=mistakes)
            want_w = (Q[:, :, new] @ K[:, :, everything].transpose(-1, -2) / dk**0.5).masked_fill(~causal, -math.inf)
            checks.expect_close(w, want_w.softmax(-1), f"the weights for {tokens}", atol)
            checks.expect_shape(cache["k"], (B, h, stop, dk), f"cache['k'] after {tokens}")
        checks.expect_close(cache["k"], K, f"cache['k'] at the end ({what})", atol)
        checks.expect_close(cache["v"], Vv, "cache['v'] at the end", atol, mistakes={"cache['v'] holds the keys.": K})


_x = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(4))
_check_cache(_Projections(8, 2, 3, torch.float32), _x, [(0, 2), (2, 3), (3, 5)], 1e-5, "d_model = 8, 2 heads")
_x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
_check_cache(_Projections(8, 2, seed=6), _x, [(0, 3), (3, 4), (4, 5)], 1e-10, "float64, a batch of 2")
_check_cache(_Projections(8, 2, 7, huge=True), 1 + _x.abs().clamp(max=1), [(0, 3), (3, 5)], 1e-10, "scores near -1e10")
### BEGIN HIDDEN TESTS
_x = torch.randn(2, 10, 48, generator=torch.Generator().manual_seed(104), dtype=torch.float64)  # d_k = 16
_plan = [(0, 4), (4, 5), (5, 6), (6, 9), (9, 10)]  # a prompt, two single tokens, a chunk of 3 (bottom-right mask), one
_check_cache(_Projections(48, 3, seed=5), _x, _plan, 1e-8, "float64, d_model = 48, 3 heads, batch of 2")
_check_cache(_Projections(48, 3, 5, huge=True), 1 + torch.rand_like(_x), _plan, 1e-8, "scores near -1e10, d_model = 48")
### END HIDDEN TESTS
checks.passed("attend_with_cache")

# %% [markdown]
# *Skim on a first pass.*
#
# **Same text, same numbers.** Your model can now generate either way. First, the same greedy text with
# and without the cache. Then the strict check: a float64 copy of the model reads one text once step by
# step with the cache and once recomputing everything at every step, and we compare all the logits.

# %%
with model_code("attend_with_cache"):
    needs_model()
    n_check = MAX_LEN - len("twinkle, ")
    with_cache = generate(model, "twinkle, ", n_check, temperature=0, use_cache=True)
    without = generate(model, "twinkle, ", n_check, temperature=0, use_cache=False)
    print(f"greedy, {n_check} new characters, with the cache:    {with_cache!r}")
    print(f"greedy, {n_check} new characters, recomputing:       {without!r}   same text: {with_cache == without}")

    def logits_both_ways(net, tokens):
        """Logits for every position of `tokens` (1, T): step by step with a cache, and recomputed from scratch."""
        caches = [{} for _ in net.blocks]
        with torch.no_grad():
            cached = torch.cat([net(tokens[:, t : t + 1], caches)[:, -1] for t in range(tokens.shape[1])])
            recomputed = torch.cat([net(tokens[:, : t + 1])[:, -1] for t in range(tokens.shape[1])])
        return cached, recomputed

    probe_tokens = encode(text[:MAX_LEN])[None]
    gaps = {}
    for dtype in (torch.float64, torch.float32):
        cached, recomputed = logits_both_ways(copy.deepcopy(model).to(dtype), probe_tokens)
        gaps[dtype] = (cached - recomputed).abs().max().item()
        print(
            f"{str(dtype):>13}: largest difference between cached and recomputed logits over {MAX_LEN} steps: "
            f"{gaps[dtype]:.1e}"
        )
    print(f"float64 within 1e-6: {gaps[torch.float64] <= 1e-6}")
    cache_numbers = 2 * N_LAYERS * D_MODEL
    print(
        f"the cache holds 2 × {N_LAYERS} blocks × {D_MODEL} = {cache_numbers} numbers per character; "
        f"{cache_numbers * MAX_LEN:,} for a full window of {MAX_LEN}"
    )

# %% [markdown]
# *Skim on a first pass.*
#
# The cache skips repeated work; it does not change what is computed. The matrix products have other
# shapes, so the rounding differs a little, but in float64 the logits agree far inside the course's
# $10^{-6}$. (In float32 the rounding is larger, and the numbers above show by how much.)
#
# **A limit of this model.** The learned position table has `MAX_LEN` rows, so the cache can hold at
# most `MAX_LEN` tokens (`TinyDecoder` raises an error beyond). Recomputation can slide over the last
# `MAX_LEN` characters, as `generate` does without a cache — but sliding gives every kept token a new
# position, so every cached key and value would be stale. An encoding whose scores depend only on the
# *distance* between tokens, such as the rotary encoding (RoPE) of lesson 7, removes that reason, but not a
# second one: from the second block on, a cached key was computed from a representation that attended to the
# tokens that have since left the window. Dropping the oldest cache entries therefore gives other numbers than
# recomputing the window, in any model with more than one block. Models that keep a fixed-size cache (with
# the sliding-window attention of lesson 11, section 8) are defined that way: it is a different model, not a
# faster route to the same one.

# %% [markdown]
# ## 6. Explore: your model, a prompt and the dials
#
# Type a prompt (press Enter), and move the **temperature** slider (0 = greedy) and the **top-k** slider
# (its largest value, `V`, keeps every character). Top: the next-character distribution computed by **your**
# `next_token_probs` from **your** model's logits; the black dashes mark the plain softmax (temperature 1,
# no top-k) for comparison. Bottom: the causal attention of the last block, averaged over its heads — rows
# are the prompt's characters as queries, columns the characters they attend to; hatched cells are masked
# (a later character), and the legend beside the map says which characters of your prompt the model read.
#
# The prompt is lowercased and characters that do not occur in the rhymes are dropped. The map has room for
# 24 characters, so only the **last 24** of a longer prompt are used (the figure says so, and shows how many
# it dropped); a shorter prompt fills the map's bottom-right corner. Things to try: *"how i wonder what you "*,
# *"jack and jill went up "*, a prompt that is not in the rhymes; temperature 0 against 2; top-k 1, 3 and `V`.

# %%
PROMPT_CHARS = 24


def clean_prompt(prompt):
    """(the characters used, how many were dropped): lowercase, characters of the vocabulary only, the last
    PROMPT_CHARS of them (a line break if nothing is left)."""
    known = "".join(c for c in prompt.lower() if c in char_to_id)
    return known[-PROMPT_CHARS:] or "\n", max(0, len(known) - PROMPT_CHARS)


class NextCharacterView(widgets.View):
    """Top: the next-character distribution (bars) and the plain softmax (dashes); bottom: last-block attention.

    The figure is rebuilt only when the prompt changes (key): the prompt's characters along the map's axes are then
    part of the background, and a temperature or top-k change redraws only the bars, the dashes, the title and the
    map. The map always has PROMPT_CHARS rows and columns; a shorter prompt fills its bottom-right corner. Masked
    cells are hatched once, in the background; the map's image is transparent there (NaN) and white where no
    character is (-1, below the colour scale)."""

    def key(self, prompt, temperature, top_k):
        return clean_prompt(prompt)

    def build(self, prompt, temperature, top_k):
        n = PROMPT_CHARS
        fig = plt.figure(figsize=(6.6, 6.0))  # fits 1024 px
        ax_p = fig.add_axes([0.1, 0.64, 0.88, 0.27])
        ax_a = fig.add_axes([0.12, 0.1, 0.364, 0.4])  # a square of 2.4 inches
        ax_c = fig.add_axes([0.5, 0.1, 0.019, 0.4])
        bar_width = 0.7 * ax_p.get_position().width * fig.get_figwidth() * 72 / (V + 0.4)  # points per bar
        self.bars = ax_p.vlines(range(V), 0, np.zeros(V), colors=plots.color("yours"), lw=bar_width)
        (self.plain,) = ax_p.plot(range(V), np.zeros(V), "_", color=plots.color("reference"), ms=bar_width * 1.3, mew=2)
        self.bars.set_label("your next_token_probs")
        self.plain.set_label("plain softmax (temperature 1, all kept)")
        ax_p.set_xticks(range(V), [shown(c) for c in vocab])
        ax_p.set_xlim(-0.7, V - 0.3)
        ax_p.set_ylim(0, 1.02)
        ax_p.set_xlabel("next character")
        ax_p.set_ylabel("probability")
        ax_p.legend(loc="lower right", bbox_to_anchor=(1.0, 1.01), frameon=False, borderaxespad=0, fontsize=9)
        self.title = ax_p.set_title(" ", loc="left")
        colours = plt.get_cmap(plots.SEQUENTIAL).with_extremes(bad=(0, 0, 0, 0), under="white")
        self.image = ax_a.imshow(np.full((n, n), -1.0), cmap=colours, vmin=0, vmax=1, interpolation="nearest")
        plots.draw_masked(ax_a, np.tril(np.ones((n, n), dtype=bool)))  # under the image, seen where it is NaN
        ax_a.set_xticks([])
        ax_a.set_yticks([])
        ax_a.set_xlabel("key (character attended to)", labelpad=22)
        ax_a.set_ylabel("query", labelpad=16)
        ax_a.set_title(f"Block {N_LAYERS}, mean of {N_HEADS} heads:\ncausal attention", loc="left")
        fig.colorbar(self.image, cax=ax_c, label="attention weight")
        legend = [
            plots.masked_patch(),
            Patch(facecolor="white", edgecolor=plots.MASK_EDGE, label="no character"),
        ]
        fig.legend(handles=legend, loc="upper left", bbox_to_anchor=(0.62, 0.5), frameon=False)
        self.used = fig.text(0.63, 0.33, " ", va="top", ha="left", family="DejaVu Sans Mono", fontsize=9)
        # The prompt's characters along the map's axes, as two texts (one text draws much faster than 24):
        # a monospaced font whose characters are one column wide (a DejaVu Sans Mono glyph is 0.602 em wide),
        # and one character per line, with the line spacing set to one row.
        cell_pt = ax_a.get_position().width * fig.get_figwidth() * 72 / n
        self.cols = ax_a.text(
            -0.5, n - 0.3, "", ha="left", va="top", family="DejaVu Sans Mono", fontsize=cell_pt / 0.602
        )
        self.rows = ax_a.text(
            -0.8, n - 1, "l\np", ha="right", va="center", family="DejaVu Sans Mono", fontsize=9, linespacing=1.0
        )
        renderer = fig.canvas.get_renderer()
        two_lines = self.rows.get_window_extent(renderer).height
        self.rows.set_text("l")
        line_px = two_lines - self.rows.get_window_extent(renderer).height  # one line step, in pixels
        self.rows.set_linespacing(cell_pt * fig.dpi / 72 / line_px)
        (chars, dropped), n = clean_prompt(prompt), PROMPT_CHARS
        T, labels = len(chars), "".join(shown(c) for c in chars)
        self.cols.set_text(" " * (n - T) + labels)
        self.rows.set_text("\n".join(labels))
        self.rows.set_y(n - 1 - (T - 1) / 2)  # the middle of the rows the prompt fills
        cut = [f"({dropped} earlier character{'s' * (dropped > 1)}", f" dropped: the map holds {n})"] if dropped else []
        self.used.set_text("\n".join([f"the model reads {T} character{'s' * (T > 1)}:", labels, *cut]))
        self.dynamic = [self.bars, self.plain, self.title, self.image]
        return fig

    def forward(self, chars):
        """Your model on the prompt: the next character's logits and the last block's mean attention. Run
        again only when the prompt or the model's weights change (training bumps each tensor's version)."""
        key = (chars, id(model), sum(p._version for p in model.parameters()))
        if getattr(self, "cached", (None,))[0] != key:
            with torch.no_grad():
                logits = model(encode(chars)[None])[0, -1]  # your model
            self.cached = (key, logits, model.blocks[-1].last_weights[0].mean(0).numpy())
        return self.cached[1:]

    def update(self, prompt, temperature, top_k):
        needs_model()
        chars, dropped = clean_prompt(prompt)
        logits, weights = self.forward(chars)
        p = next_token_probs(logits, temperature, None if top_k >= V else top_k)  # yours
        self.bars.set_segments([[(i, 0.0), (i, height)] for i, height in enumerate(p.tolist())])
        self.plain.set_ydata(torch.softmax(logits, -1).numpy())
        n, T = PROMPT_CHARS, len(chars)
        grid = np.full((n, n), -1.0)  # no character
        grid[n - T :, n - T :] = np.where(np.tril(np.ones((T, T), dtype=bool)), weights, np.nan)  # NaN: masked
        self.image.set_data(grid)
        best = int(p.argmax())
        self.summary = f"'{shown(vocab[best])}' ({float(p[best]):.0%}), entropy {entropy_bits(p):.2f} bits"
        self.title.set_text(f"Most likely next: {self.summary}".replace(", entropy", ",\nentropy"))  # beside the key

    def alt(self, prompt, temperature, top_k):
        chars, dropped = clean_prompt(prompt)
        return (
            f"After {chars!r} your model's most likely next character at temperature {temperature:.2f} and top-k "
            f"{min(top_k, V)} is {getattr(self, 'summary', '')}. "
            f"Next-character distribution of your model after the prompt {chars!r}"
            + (f" (its last {PROMPT_CHARS} characters; {dropped} earlier ones dropped)" if dropped else "")
            + f" at temperature {temperature:.2f} and top-k {min(top_k, V)}: most likely {getattr(self, 'summary', '')}; "
            "and the causal attention map of its last block, with the cells above the diagonal masked."
        )


prompt_box = ipywidgets.Text(
    value="humpty dumpty sat on a w",
    description="prompt",
    continuous_update=False,
    style={"description_width": "initial"},
    layout=ipywidgets.Layout(width="24em"),
)
temperature_slider = widgets.float_slider("temperature", 0.0, 2.0, 1.0, step=0.05)
top_k_slider = widgets.slider("top-k", 1, V, V)
for slider in (temperature_slider, top_k_slider):
    slider.layout.width = "26em"  # a track of at least 150 px beside the label and the value
explorer = widgets.explore(
    NextCharacterView(),
    needs=["causal_mask", "MultiHeadAttention", "next_token_probs"],
    prompt=prompt_box,
    temperature=temperature_slider,
    top_k=top_k_slider,
)
explorer

# %% [markdown]
# **Things to notice.** At temperature 0 the distribution is a single bar on the tallest dash, whatever
# top-k is; top-k 1 gives the same bar at any temperature. Low top-k values cut the tail: the bars beyond
# the k-th tallest drop to 0 and the kept ones grow. In the attention map, the first row has a single
# weight — the first character can only attend to itself — and every cell right of the diagonal is masked.

# %% [markdown]
# ## 7. Experiment: what the cache buys, measured
#
# *Skim on a first pass.* Then read the table the next cell prints and **What the measurement shows**: Q7 needs
# them.
#
# **Claim.** The KV cache makes generation faster, and its advantage is largest for the longest texts,
# because a cached step's work grows like $T$ and a recomputing step's like $T^2$. At this model's tiny
# size the measured speed-up stays far below what counting the arithmetic predicts.
#
# We generate up to 256 characters greedily after a one-character prompt, with and without the cache,
# timing every step on one thread (after an untimed warm-up): the best of three runs, then the median over 9 neighbouring
# steps, which removes the moments when other programs on the machine interrupted ours. Our trained model knows only `MAX_LEN` positions, so
# the timing uses an **untrained** model with the same layers and a longer position table: the time of a
# step depends on the shapes of the tensors, not on the values of the weights. Both ways must produce
# the same characters.

# %%
LONGEST = 256
LENGTHS = [16, 32, 64, 128, 256]


def step_seconds(net, n_new, use_cache):
    """Seconds of each of n_new greedy steps after a one-character prompt, and the tokens produced."""
    tokens = encode("\n")[None]
    caches = [{} for _ in net.blocks] if use_cache else None
    seconds = []
    with torch.no_grad():
        logits = net(tokens, caches)
        for _ in range(n_new):
            start = time.perf_counter()
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], dim=1)
            logits = net(nxt, caches) if use_cache else net(tokens)
            seconds.append(time.perf_counter() - start)
    return np.array(seconds), tokens


def multiply_adds(T, cached, d=D_MODEL, d_ff=4 * D_MODEL, layers=N_LAYERS, vocab_size=V):
    """Multiply–adds of one generation step at length T (counted from the shapes, layer norms left out)."""
    rows = 1 if cached else T  # tokens pushed through the projections and the FFN
    pairs = T if cached else T * T  # query–key pairs, all heads together: d_k · h = d per pair
    return layers * (rows * (4 * d * d + 2 * d * d_ff) + 2 * pairs * d) + rows * d * vocab_size


# timed on one thread: waking a second costs more than these tiny steps (the count is set back after the cell)
with model_code("attend_with_cache"), ac.torch_threads(1):
    needs_model()
    torch.manual_seed(1)
    timing_model = TinyDecoder(V, D_MODEL, N_HEADS, N_LAYERS, LONGEST + 1).eval()
    for use_cache in (False, True):
        step_seconds(timing_model, 16, use_cache)  # warm-up, not timed
    runs = {False: [], True: []}
    for _ in range(3):
        for use_cache in (False, True):
            seconds, produced = step_seconds(timing_model, LONGEST, use_cache)
            runs[use_cache].append(seconds)
            runs.setdefault(("tokens", use_cache), produced)
    assert torch.equal(runs[("tokens", False)], runs[("tokens", True)]), "the cache must not change the text"
    best = {c: np.min(runs[c], axis=0) * 1e3 for c in (False, True)}  # ms, best of three runs per step
    padded = {c: np.pad(best[c], 4, mode="edge") for c in (False, True)}
    per_step = {c: np.array([np.median(padded[c][i : i + 9]) for i in range(LONGEST)]) for c in (False, True)}
    total = {c: np.cumsum(per_step[c]) for c in (False, True)}  # ms to generate the first n tokens
    speedup = {n: total[False][n - 1] / total[True][n - 1] for n in LENGTHS}
    counted = {
        n: sum(multiply_adds(t, False) for t in range(2, n + 2)) / sum(multiply_adds(t, True) for t in range(2, n + 2))
        for n in LENGTHS
    }

    fig, (ax_t, ax_s) = plt.subplots(2, 1, figsize=(6.6, 7.6), layout="constrained")
    positions = np.arange(2, LONGEST + 2)  # sequence length after each step
    for use_cache, meaning, label in ((False, "recompute", "recompute everything"), (True, "cache", "KV cache")):
        ax_t.plot(positions, best[use_cache], color=plots.color(meaning), lw=1, alpha=0.35)
        ax_t.plot(
            positions, per_step[use_cache], color=plots.color(meaning), lw=2.5, label=f"{label} (median of 9 steps)"
        )
    ax_t.set_ylim(0, 1.3 * per_step[False].max())  # rare interruptions go off the top
    cut = max(b.max() for b in best.values()) > ax_t.get_ylim()[1]  # then the label says so
    ax_t.set_xlabel("sequence length T after the step")
    ax_t.set_ylabel("time of one step (ms)\n(light: best of 3 runs" + ("; spikes cut off)" if cut else ")"))
    ax_t.set_title(
        "A recomputing step slows down as the text grows; a cached one far less\n"
        rf"($d_{{\mathrm{{model}}}}$ = {D_MODEL})"
    )
    ax_t.legend(loc="upper left")
    ax_s.semilogy(
        LENGTHS,
        [counted[n] for n in LENGTHS],
        "s--",
        color=plots.color("reference"),
        label="counted multiply–adds ratio",
    )
    ax_s.semilogy(
        LENGTHS, [speedup[n] for n in LENGTHS], "o-", color=plots.color("other"), lw=2, label="measured speed-up"
    )
    ax_s.axhline(1, color=plots.color("chance"), ls=":", lw=1.5, label="1: as fast (below 1 the cache is slower)")
    ax_s.set_xscale("log", base=2)
    ax_s.set_xticks(LENGTHS, [str(n) for n in LENGTHS])
    low, high = min(0.4, 0.7 * min(speedup.values())), 2 * max(counted.values())  # both sides of 1 always show
    ratio_ticks = [t for t in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if low <= t <= high]
    ax_s.set_ylim(low, high)
    ax_s.set_yticks(ratio_ticks, [f"{t:g}" for t in ratio_ticks])
    ax_s.minorticks_off()
    ax_s.set_xlabel("generated characters n")
    ax_s.set_ylabel("recompute time / cache time")
    ax_s.set_title("The measured speed-up is largest for the longest text,\nfar below the counted ratio")
    ax_s.legend(loc="upper left")
    plots.show(
        fig,
        alt="The KV cache keeps each generation step cheap as the text grows, and its measured speed-up is largest for "
        "the longest text, far below the counted ratio. "
        "Top: time per generation step against sequence length; recomputation grows from "
        f"{per_step[False][:16].mean():.2f} to {per_step[False][-16:].mean():.2f} ms, the cache stays near "
        f"{per_step[True][:16].mean():.2f}–{per_step[True][-16:].mean():.2f} ms. Bottom: measured speed-up "
        f"from {speedup[LENGTHS[0]]:.1f}x to {speedup[LENGTHS[-1]]:.1f}x, counted ratio from "
        f"{counted[LENGTHS[0]]:.0f}x to {counted[LENGTHS[-1]]:.0f}x.",
        name="10_kv_speedup",
    )

    print(f"{'n':>5} {'recompute (ms)':>15} {'KV cache (ms)':>14} {'measured speed-up':>18} {'counted ratio':>14}")
    for n in LENGTHS:
        print(
            f"{n:>5} {total[False][n - 1]:>15.1f} {total[True][n - 1]:>14.1f} {speedup[n]:>17.1f}x {counted[n]:>13.0f}x"
        )
    print(
        f"one step at T ≈ 16 and at T ≈ {LONGEST}: recompute {per_step[False][:16].mean():.2f} → "
        f"{per_step[False][-16:].mean():.2f} ms, cache {per_step[True][:16].mean():.2f} → {per_step[True][-16:].mean():.2f} ms"
    )

    # Where does a cached step's time go? Arithmetic rate of one step vs one large matrix product.
    big = torch.randn(256, 256)
    product_seconds = []
    for _ in range(20):
        start = time.perf_counter()
        big @ big
        product_seconds.append(time.perf_counter() - start)
    ns_big = min(product_seconds) / 256**3 * 1e9  # the fastest of 20: an interruption by another program only slows one
    ns_step = per_step[True][:16].mean() * 1e6 / multiply_adds(16, True)
    print(
        f"a cached step spends {ns_step:.1f} ns per multiply–add; a 256 × 256 matrix product on this machine "
        f"{ns_big:.2f} ns: the step's time is mostly the fixed cost of its many small operations, not arithmetic."
    )

# %% [markdown]
# **What the measurement shows.** The table and the top panel back the claim's first half: a recomputing step
# gets several times slower as the text grows, a cached step far less, and the speed-up is largest for the
# longest text (much smaller, and noisy, for short ones). The bottom panel shows the second half: counting
# multiply–adds predicts more than four times the measured advantage. At $d_{\text{model}} = 48$ a step is a
# string of small tensor operations, each with a fixed cost (Python, PyTorch's dispatcher, allocation) that
# does not depend on its size. Two printed numbers show that this cost dominates a cached step: from
# $T \approx 16$ to $T \approx 256$ its time grows far less than its attention's work (16 times), and it runs
# more than ten times slower per multiply–add than one large matrix product. As the model and the text grow,
# the arithmetic takes over and the speed-up approaches the counted one (an argument; we do not measure it
# here). Your timings will differ; the orderings should not.

# %% [markdown]
# ## 8. Let's review
#
# * A language model factorises a text as $\prod_t p(x_t \mid x_{<t})$. Training predicts all positions in one
#   pass, which is fair only with a **causal mask**: without it the model copied the answer.
# * `causal_mask(T_q, T_k)`: query $i$ is token $T_k - T_q + i$ and sees keys $j \le T_k - T_q + i$, bottom-right
#   aligned, unlike PyTorch's `is_causal=True` when $T_q \ne T_k$ (its bottom-right mask is `causal_lower_right`).
# * **Cross-attention**: queries from one sequence, keys and values from another; weights $T_q \times T_k$. Every
#   decoder block of the encoder–decoder Transformer reads the encoder's output this way, with no causal mask.
# * A tiny decoder trained for seconds beats the bigram on unseen rhymes. Held-out text is the honest test: it
#   memorised part of its training rhymes.
# * Greedy = arg max (temperature 0, or top-k = 1); the temperature divides the **logits** before the softmax;
#   top-k keeps the $k$ largest logits and renormalises.
# * The **KV cache** keeps every layer's keys and values, final once computed thanks to the causal mask. A new
#   token costs $T$ scores instead of $T^2$ and one row of every projection instead of $T$, with the same
#   outputs up to rounding, for $2 \cdot n_{\text{layers}} \cdot d_{\text{model}}$ numbers per token. Here the
#   speed-up is largest for the longest text but far below the counted ratio: tiny operations are dominated
#   by fixed costs.
#
# Next lesson, `11_attention_at_scale`: the $T \times T$ weight matrix as a memory wall, the online softmax
# and tiled attention that avoid it, and grouped-query attention that shrinks the KV cache.

# %% [markdown]
# ## 9. Check your understanding
#
# As before: replace `None` (a letter in quotes, or a number) and delete `raise NotImplementedError()`; the cell
# after each answer checks only the format.
#
# **Q1 (1 point).** A model has cached 4 tokens and now processes 3 new tokens in one call, so
# $T_q = 3$ and $T_k = 7$. How many (query, key) pairs does the correct causal mask allow?

# %% quiz="quiz-chunk-mask-count" key="int(sum(1 for i in range(3) for j in range(7) if j <= 7 - 3 + i))" points=1
q1_answer = sum(4 + i + 1 for i in range(3))  # query i is token 4 + i and sees keys 0 … 4 + i

# %% [markdown]
# **Q2 (1 point).** Why may a decoder keep the keys and values of earlier tokens in a cache and never
# recompute them?
#
# * **a** — $W^K$ and $W^V$ do not change during generation
# * **b** — the causal mask makes each position's input to every layer depend only on the tokens up to it
# * **c** — the softmax normalises the weights, so old keys no longer matter
# * **d** — keys and values come from the token embeddings only, never from earlier layers

# %% quiz="quiz-why-cache-exact" choices="abcd" key="b" points=1

# %% [markdown]
# **Q3 (1 point).** In the cross-attention sublayer of an encoder–decoder Transformer (for example for
# translation), where do the queries, keys and values come from?
#
# * **a** — all three from the decoder's previous sublayer, with a causal mask
# * **b** — queries from the encoder's output; keys and values from the decoder
# * **c** — queries from the decoder; keys and values from the encoder's output, with no causal mask
# * **d** — all three from the encoder's output

# %% quiz="quiz-cross-attention-source" choices="abcd" key="c" points=1

# %% [markdown]
# **Q4 (1 point).** The logits for four tokens are $(3, 2, 1.5, 0)$. With temperature $0.5$ and top-k $= 2$,
# what is the probability of the first token? Give at least three decimals.

# %% quiz="quiz-top-k-probability" key="float(np.exp(3.0 / 0.5) / (np.exp(3.0 / 0.5) + np.exp(2.0 / 0.5)))" tol=0.002 points=1
_kept = torch.tensor([3.0, 2.0]) / 0.5  # top-2 logits, divided by the temperature
q4_answer = float(torch.softmax(_kept, dim=0)[0])

# %% [markdown]
# **Q5 (1 point).** A decoder has 12 blocks with $d_{\text{model}} = 768$ and ordinary multi-head
# attention (as in GPT-2 small). How many numbers does its KV cache store **per token** of one sequence?

# %% quiz="quiz-cache-numbers" key="2 * 12 * 768" points=1
q5_answer = 2 * 12 * 768  # a key and a value of d_model numbers, in every block

# %% [markdown]
# **Q6 (1 point).** With a KV cache, 100 tokens are already in the cache and the model computes the
# output for the 101st. How many query–key dot products does **one head of one layer** compute for it?

# %% quiz="quiz-cached-scores" key="101" points=1
q6_answer = 100 + 1  # the 100 cached keys and its own

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** In 4–6 sentences: explain why generating with a KV
# cache gives exactly the same outputs as recomputing everything, and why it would **not** work for an encoder
# without a causal mask (lesson 9). Then: what speed-up did you measure for 256 characters, what does counting
# the arithmetic predict, and why do they differ so much here?
#
# <details><summary>Before you hand in</summary>
#
# * What stays the same for earlier positions when a token is appended, and what guarantees it?
# * What changes in an encoder without a mask, and from which layer on?
# * Two numbers from **your** run (section 7: measured speed-up, counted ratio), and the gap explained?
# </details>

# %% [markdown] manual="quiz-free-kv-cache" points=3
# ### BEGIN SOLUTION
# *Model answer.* With a causal mask, the input of every layer at position $j$ depends only on tokens
# $0, \dots, j$, so the keys and values of earlier positions are already final when a new token arrives;
# the cache stores exactly the numbers recomputation would produce, and the new token's query attends to
# them, so the output is the same (in my float64 run the logits differed only by rounding, far below
# $10^{-6}$). In an encoder without a mask every position attends to every other, so appending a token
# changes the outputs, and therefore the keys and values, of every earlier position in every layer after
# the first: cached values would be stale. In my experiment the cache was faster for 256 characters, but by
# a factor far below the one counting multiply–adds predicts, more than a hundred (section 7 prints both; the
# measured one depends on the machine and on what else runs on it). The difference is fixed
# overhead: at $d_{\text{model}} = 48$ each step runs dozens of tiny operations whose cost (Python, dispatch,
# allocation) does not depend on their size, so the cached step is not much cheaper in time even though it
# does far less arithmetic; for big models and long texts the arithmetic dominates and the gain approaches
# the counted one.
#
# *Rubric (3 points).* 1 point: exactness — the causal mask makes earlier positions' layer inputs, hence
# their keys and values, independent of later tokens (not "the weights are fixed"). 1 point: the encoder
# case — without the mask new tokens change earlier positions' representations from layer 2 on, so cached
# keys/values would be wrong (layer 1's keys alone would still be fine; credit either way if the reasoning
# is right). 1 point: quotes their own measured speed-up and the counted ratio (numbers from their run)
# and explains the gap by per-operation overhead at tiny sizes, or equivalently that the arithmetic is a
# small share of the time. No point for restating the question.
# ### END SOLUTION
