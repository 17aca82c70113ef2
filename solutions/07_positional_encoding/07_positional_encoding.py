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
# # Lesson 7 — Positional encoding: telling attention where each word is
#
# **Attention, from the dot product up** · lesson 7 · about 60 minutes
#
# Self-attention compares every token with every other token in one step. That is its strength, and
# it hides a flaw: nothing in the computation says *where* a token sits in the sentence. In this
# lesson you prove that flaw exactly, then fix it the way the original Transformer did — by adding a
# pattern of sines and cosines to every embedding — and you measure what that pattern does and does
# not give a layer, compared with rotary encodings (RoPE), which many recent models use instead.
#
# **Learning goals.** By the end you can
# 1. show that self-attention without position information is *permutation-equivariant*: shuffle the
#    tokens and the outputs are shuffled the same way, nothing else changes;
# 2. build the sinusoidal encoding table and add it to token embeddings;
# 3. show that the dot product of two encodings depends only on the offset between the positions (and
#    not even on its sign), and explain why the attention scores of a layer that reads $x + \mathrm{PE}$
#    still depend on where the pair sits;
# 4. compare fixed (sinusoidal) and learned encodings, including what happens beyond the trained length;
# 5. verify that rotary encodings (RoPE) put the offset inside the score itself: for fixed content the
#    score depends only on the offset, and "two back" differs from "two ahead".
#
# **You need from earlier lessons:** scaled dot-product attention (lesson 4) and the projections
# $Q = X W^Q$, $K = X W^K$, $V = X W^V$ with $W^Q, W^K \in \mathbb{R}^{d_\text{model}\times d_k}$ (lesson 5).
# You built both and showed they equal PyTorch's; here we use PyTorch's
# `F.scaled_dot_product_attention` with random projection matrices. Tensors, `torch.nn.Embedding` and
# `.backward()` are introduced in lesson 0 (`00_pytorch_primer`).
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Exercise cells contain
# `raise NotImplementedError()`: replace it with your code. Under each exercise, hints open one at a time:
# first the idea, then a first step, then the calls to use. The cell right after each exercise runs
# *visible checks*; when grading, hidden checks with other shapes run as well, so make your code general.
# The toolbar's **Validate** button runs every check at once.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. Attention cannot see order
#
# Take the two sentences "The cat chased the dog" and "The dog chased the cat". Same words, opposite
# meaning. Give every word its embedding (the same word always gets the same vector), and run one
# self-attention layer over each sentence:
#
# $$Q = X W^Q,\quad K = X W^K,\quad V = X W^V,\qquad \text{out} = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V .$$
#
# Now reorder the rows of $X$ with a permutation matrix $P$ (the second sentence is the first with
# "cat" and "dog" swapped). Every projection acts row by row, so $Q$, $K$ and $V$ get the same
# reordering: $PQ$, $PK$, $PV$. The score matrix becomes $PQK^\top P^\top$ — the same scores, rows
# and columns reordered — and softmax works row by row, so
#
# $$\text{attention}(PX) = P\,\text{attention}(X).$$
#
# This property is called **permutation equivariance**: permute the input, and the output is permuted
# the same way, with *nothing else* changing. The vector that comes out for "cat" is the same whether
# the cat chased or was chased. Let's check it numerically.

# %%
d_model = 16
cat_dog, dog_cat = data.CAT_CHASES_DOG, data.DOG_CHASES_CAT
X_cd = torch.from_numpy(data.embed(cat_dog, d_model))  # (5, d_model), float64
X_dc = torch.from_numpy(data.embed(dog_cat, d_model))
perm = [
    cat_dog.index(w) if w not in ("The", "the") else i for i, w in enumerate(dog_cat)
]  # dog_cat[i] = cat_dog[perm[i]]
print("permutation from the first sentence to the second:", perm)


def random_projections(d, seed):
    """Three random (d, d) projection matrices W_Q, W_K, W_V (float64), used as X @ W_Q."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(d, d, generator=g, dtype=torch.float64) / d**0.5 for _ in range(3)]


def self_attention(X, W_Q, W_K, W_V):
    """One self-attention layer (PyTorch's built-in attention): outputs (T, d) and weights (T, T)."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    weights = torch.softmax(Q @ K.T / Q.shape[-1] ** 0.5, dim=-1)
    return F.scaled_dot_product_attention(Q[None], K[None], V[None])[0], weights


W_Q, W_K, W_V = random_projections(d_model, seed=0)
out_cd, w_cd = self_attention(X_cd, W_Q, W_K, W_V)
out_dc, w_dc = self_attention(X_dc, W_Q, W_K, W_V)
no_pe_diff = (out_dc - out_cd[perm]).abs().max().item()
print(f"max |out(dog chased cat) − permuted out(cat chased dog)| = {no_pe_diff:.1e}")
print(
    f"the output vector for 'cat' is the same in both sentences up to {(out_cd[1] - out_dc[4]).abs().max().item():.1e}"
)
weights_diff = (w_dc - w_cd[perm][:, perm]).abs().max().item()
print(f"max |weights(dog chased cat) − weights(cat chased dog) with rows and columns reordered| = {weights_diff:.1e}")

fig, axes = plt.subplots(1, 2, figsize=(6.6, 3.9), layout="constrained")
plots.attention_heatmap(w_cd, cat_dog, ax=axes[0], title="“The cat chased the dog”", colorbar=False)
plots.attention_heatmap(w_dc, dog_cat, ax=axes[1], title="“The dog chased the cat”", colorbar=False)
fig.colorbar(axes[0].images[0], ax=axes, shrink=0.85, label="weight")
fig.suptitle(
    "No positions: the same weights, rows and columns reordered\n" + rf"($d_{{\mathrm{{model}}}}$ = {d_model})"
)
plots.show(
    fig,
    name="07_permutation",
    alt=f"Without positions, swapping cat and dog only reorders the attention weights, up to rounding (largest "
    f"difference after reordering {weights_diff:.1e}). Two 5 by 5 attention heatmaps with their weights printed, for 'The cat chased "
    f"the dog' and 'The dog chased the cat': the second is the first with the rows and columns of cat and dog "
    f"swapped.",
)


# %% [markdown]
# The difference is at the level of floating-point rounding (or exactly zero): the layer produces
# *the same set of vectors* for both sentences, only listed in a different order. Compare the two
# heatmaps: each row of the right one appears in the left one, with its columns reordered. Whatever
# follows the layer cannot tell who chased whom — unless we put the position into the input itself.

# %% [markdown]
# ## 2. Sinusoidal positional encoding
#
# The Transformer gives every position $p = 0, 1, 2, \dots$ a vector $\mathrm{PE}_p \in \mathbb{R}^{d_\text{model}}$
# and **adds** it to the token's embedding: $x_p \leftarrow x_p + \mathrm{PE}_p$. The vectors are not
# learned; they follow a formula. Split the $d_\text{model}$ dimensions into pairs $(2i, 2i+1)$ for
# $i = 0, \dots, d_\text{model}/2 - 1$. Pair $i$ holds a sine and a cosine of the same angle:
#
# $$\mathrm{PE}_{p,\,2i} = \sin(\omega_i\, p), \qquad \mathrm{PE}_{p,\,2i+1} = \cos(\omega_i\, p), \qquad
# \omega_i = \frac{1}{10000^{\,2i/d_\text{model}}} .$$
#
# * The first pair ($i = 0$) turns fastest: $\omega_0 = 1$, a wavelength of $2\pi \approx 6.3$ positions.
# * Each next pair turns slower; the wavelength $2\pi/\omega_i = 2\pi\cdot 10000^{2i/d_\text{model}}$
#   grows geometrically towards $10000\cdot 2\pi$.
# * Like the hands of a clock (seconds, minutes, hours), fast pairs tell neighbours apart and slow
#   pairs tell far-apart positions apart. Together they give every position a distinct pattern.
#
# Note that the exponent uses $2i$, the index of the *even* dimension of the pair, and that both
# dimensions of a pair share the same $\omega_i$.

# %% [markdown]
# ### Exercise 7.1 — the encoding table (3 points)
#
# Implement `positional_encoding(T, d_model)` returning a numpy array of shape `(T, d_model)` whose row
# $p$ is $\mathrm{PE}_p$ for positions $p = 0, \dots, T-1$ (the first position is 0). Sines go in the
# even columns (0, 2, 4, …), cosines in the odd columns (1, 3, 5, …), interleaved as in the formula.
# `d_model` is even (`d_model / 2` may be odd, as for `d_model = 6`), and `T` may be 1. The hidden checks
# compare your table with the formula at other sizes.
#
# <details><summary>Hint 1: the idea</summary>
#
# Every entry is the sine or cosine of one angle $\omega_i\, p$. Compute all the angles at once, as a table
# with one row per position and one column per pair; then its sines and its cosines fill alternate
# columns of the result.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `np.arange(T)[:, None]` is a column of positions, shape `(T, 1)`. The frequencies $\omega_i$ form a row of
# `d_model / 2` numbers, computed from the even dimension numbers $2i = 0, 2, 4, \dots$. Their product
# broadcasts to the `(T, d_model / 2)` table of angles.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.arange(0, d_model, 2)`, `10000 ** (…)`, `np.sin`, `np.cos`, `np.zeros((T, d_model))`; on the result,
# `pe[:, 0::2] = …` fills the even columns and `pe[:, 1::2] = …` the odd ones.
# </details>


# %% answer="positional-encoding"
def positional_encoding(T, d_model):
    """Sinusoidal position table, shape (T, d_model): sin in even columns, cos in odd columns."""
    ### BEGIN SOLUTION
    positions = np.arange(T)[:, None]  # (T, 1)
    omega = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)  # (d_model/2,)
    angles = positions * omega  # (T, d_model/2)
    pe = np.zeros((T, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
    ### END SOLUTION


# %% tests="positional-encoding-tests" points=3
# Visible checks: d_model = 4 has two pairs, with ω = 1 and ω = 1/10000^(2/4) = 1/100, at the positions 0, 1, 2.
_p = np.arange(3.0)[:, None]
_columns = lambda *columns: np.concatenate(columns, axis=1)  # noqa: E731
_want = _columns(np.sin(_p), np.cos(_p), np.sin(_p / 100), np.cos(_p / 100))
_mistakes = {
    "the table is transposed: one row per position, shape (T, d_model).": _want.T,
    "the sines and cosines are concatenated ([sin, sin, cos, cos]); interleave them: sin in even columns, cos in "
    "odd columns.": _columns(np.sin(_p), np.sin(_p / 100), np.cos(_p), np.cos(_p / 100)),
    "sin and cos are swapped: sines go in the even columns, cosines in the odd ones.": _columns(
        np.cos(_p), np.sin(_p), np.cos(_p / 100), np.sin(_p / 100)
    ),
    "the exponent is i/d_model with i the pair number; it must be 2i/d_model (pair 1 of d_model = 4 turns at 1/100, "
    "not 1/10).": _columns(np.sin(_p), np.cos(_p), np.sin(_p / 10), np.cos(_p / 10)),
    "the cosine uses a different frequency from its sine: both dimensions of a pair share ω_i.": _columns(
        np.sin(_p), np.cos(_p / 10), np.sin(_p / 100), np.cos(_p / 1000)
    ),
    "row 0 should be position 0, not position 1: positions start at 0.": _columns(
        np.sin(_p + 1), np.cos(_p + 1), np.sin((_p + 1) / 100), np.cos((_p + 1) / 100)
    ),
}
checks.expect_close(checks.call(positional_encoding, 3, 4), _want, "positional_encoding(3, 4)", mistakes=_mistakes)
_pe = positional_encoding(20, 8)
_what = "sin² + cos² of every pair (columns 2i and 2i+1) of positional_encoding(20, 8)"
checks.expect_close(_pe[:, 0::2] ** 2 + _pe[:, 1::2] ** 2, np.ones((20, 4)), _what)
_what = "positional_encoding(1, 6) (one position; d_model / 2 = 3 pairs, an odd number)"
_one = checks.attempt(
    positional_encoding, 1, 6, what=_what, hint="build the table for any even d_model and any T >= 1."
)
checks.expect_close(_one, [[0.0, 1.0, 0.0, 1.0, 0.0, 1.0]], _what)


### BEGIN HIDDEN TESTS
def _pe_hidden():
    for T, d in [(50, 16), (7, 6), (1, 10), (33, 64)]:
        pos, two_i = np.arange(T)[:, None], np.arange(0, d, 2)
        angle = lambda exponent, shift=0: (pos + shift) / 10000 ** (exponent / d)  # (T, d/2)
        pairs = lambda even, odd: np.stack([even, odd], axis=-1).reshape(T, d)  # even, odd columns interleaved
        mistakes = {
            "the sines and cosines are concatenated ([sin…, cos…]); interleave them: sin in even columns, cos in odd "
            "columns.": np.concatenate([np.sin(angle(two_i)), np.cos(angle(two_i))], axis=1),
            "the exponent is i/d_model with i the pair number; it must be 2i/d_model.": pairs(
                np.sin(angle(two_i / 2)), np.cos(angle(two_i / 2))
            ),
            "the cosine uses a different frequency from its sine: both dimensions of a pair share ω_i.": pairs(
                np.sin(angle(two_i)), np.cos(angle(two_i + 1))
            ),
            "row 0 should be position 0, not position 1: positions start at 0.": pairs(
                np.sin(angle(two_i, 1)), np.cos(angle(two_i, 1))
            ),
            "sin and cos are swapped: sines go in the even columns, cosines in the odd ones.": pairs(
                np.cos(angle(two_i)), np.sin(angle(two_i))
            ),
        }
        want = pairs(np.sin(angle(two_i)), np.cos(angle(two_i)))
        checks.expect_close(positional_encoding(T, d), want, f"positional_encoding({T}, {d})", mistakes=mistakes)


_pe_hidden()
### END HIDDEN TESTS
checks.passed("positional_encoding")


# %% [markdown]
# ### Exercise 7.2 — add the encoding to the embeddings (2 points)
#
# Implement `add_positional_encoding(X)`: `X` holds token embeddings of shape `(T, d_model)` or a batch
# of shape `(B, T, d_model)`. Return `X` plus the encoding of positions $0, \dots, T-1$ (the same
# encodings for every sentence in a batch). Call your `positional_encoding`, and do **not** modify `X`
# in place: return a new array.
#
# When your work is graded, this exercise's checks run with a correct `positional_encoding`, so a
# mistake in exercise 7.1 costs points there only. The visible checks below use yours. The hidden checks use
# a batch whose size differs from its length, `(3, 7, 16)`, and a single sentence of another size.
#
# <details><summary>Hint 1: the idea</summary>
#
# The table has one row per position and a sentence has one row per token: adding the two lines up
# position $p$ with token $p$. For a batch, numpy's broadcasting adds the same table to every sentence.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The sentence length and the width are the last two sizes of `X`, `X.shape[-2]` and `X.shape[-1]`, whether
# or not there is a batch axis in front (for a batch, `X.shape[0]` is the number of sentences).
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Your `positional_encoding(T, d_model)` and `+`, which makes a new array (`+=` would change `X` itself).
# </details>


# %% answer="add-positional-encoding"
def add_positional_encoding(X):
    """X: (T, d_model) or (B, T, d_model) embeddings -> the same shape, with PE_p added at position p."""
    ### BEGIN SOLUTION
    T, d = X.shape[-2:]
    return X + positional_encoding(T, d)
    ### END SOLUTION


# %% tests="add-positional-encoding-tests" points=2
### BEGIN HIDDEN TESTS
# Graded with a correct positional_encoding (a mistake there costs points in exercise 7.1 only).
_students_positional_encoding = positional_encoding


def positional_encoding(T, d_model):
    angles = np.arange(T)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d_model)


# yours calls positional_encoding from the notebook's globals: reach it through the function (also in the grader)
_students_add_pe = add_positional_encoding
add_positional_encoding = checks.with_references(add_positional_encoding, positional_encoding=positional_encoding)


### END HIDDEN TESTS
# Visible checks: a sentence of 5 tokens with d_model = 8, and the input left untouched.
def _add_pe_checks(X, what):
    before, T, d = X.copy(), *X.shape[-2:]
    want = X + positional_encoding(T, d)  # before the call, which could change X
    axes = "T is X.shape[-2] and d_model is X.shape[-1], with or without a batch axis in front."
    got = checks.attempt(add_positional_encoding, X, what=what, hint=axes)
    checks.expect_close(X, before, f"the input X after {what}", mistakes={"X was modified in place (X += …).": want})
    mistakes = {
        "every token got the encoding of position 0: add row p to token p.": X + positional_encoding(1, d),
        "the encoding was multiplied, not added.": X * positional_encoding(T, d),
        "the batch size was used as the sequence length: T is X.shape[-2].": X
        + positional_encoding(len(X), d)[:, None],
    }
    checks.expect_close(got, want, what, mistakes=mistakes)


_add_pe_checks(data.embed(cat_dog, 8), "add_positional_encoding on a (5, 8) sentence")
_add_pe_checks(
    np.stack([data.embed(cat_dog, 8), data.embed(dog_cat, 8)]), "add_positional_encoding on a batch (2, 5, 8)"
)
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(7)
_add_pe_checks(_rng.standard_normal((3, 7, 16)), "add_positional_encoding on a batch (3, 7, 16)")
_add_pe_checks(_rng.standard_normal((9, 6)), "add_positional_encoding on a (9, 6) sentence")
positional_encoding, add_positional_encoding = _students_positional_encoding, _students_add_pe
### END HIDDEN TESTS
checks.passed("add_positional_encoding")

# %% [markdown]
# ## 3. The dot product of two encodings depends only on the offset
#
# Why sines and cosines? Take the dot product of the encodings of positions $p$ and $q$. Pair $i$
# contributes $\sin(\omega_i p)\sin(\omega_i q) + \cos(\omega_i p)\cos(\omega_i q) = \cos\!\big(\omega_i (p - q)\big)$, so
#
# $$\mathrm{PE}_p \cdot \mathrm{PE}_q = \sum_{i=0}^{d_\text{model}/2 - 1} \cos\!\big(\omega_i\,(p-q)\big).$$
#
# * It depends only on the **offset** $p - q$, never on where in the sentence the pair sits. Its largest
#   value, $d_\text{model}/2$, is reached at offset 0 (every cosine is 1).
# * Cosine is even, so it depends only on the *size* of the offset: the encoding two positions back and
#   the one two positions ahead have exactly the same dot product with $\mathrm{PE}_p$. This dot product
#   cannot tell back from ahead.
# * Each pair is a point on a circle that *rotates* by the angle $\omega_i k$ when you move $k$
#   positions: $\mathrm{PE}_{p+k} = \mathrm{PE}_p R_k$, where $R_k$ is a block-diagonal matrix of $2\times 2$
#   rotations, **the same matrix for every $p$**. This is one of the two reasons the original Transformer
#   paper gives for sinusoids: the encoding $k$ positions away is a *linear* function of the current one,
#   which a layer could learn to use. (The other: a formula may let a model handle sequences longer than
#   those it was trained on; section 6 comes back to it.)
#
# The figure shows the table, and $\mathrm{PE}_p\cdot\mathrm{PE}_{p+k}$ as a function of the offset $k$
# (negative: back, positive: ahead) for three different starting positions $p$.

# %%
T_fig, d_fig = 96, 64
with ac.student_code("positional_encoding"):
    pe_fig = positional_encoding(T_fig, d_fig)
    offsets = np.arange(-30, 31)
    starts = [30, 45, 60]
    curves = np.array([[pe_fig[p] @ pe_fig[p + k] for k in offsets] for p in starts])
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 3.9), layout="constrained")
    im = axes[0].imshow(pe_fig, cmap=plots.DIVERGING, vmin=-1, vmax=1, aspect="auto")
    axes[0].set_xlabel("dimension (even: sin, odd: cos)")
    axes[0].set_ylabel("position p")
    axes[0].set_title(
        f"Your table (T = {T_fig},\n$d_{{\\mathrm{{model}}}}$ = {d_fig}): fast pairs\nleft, slow pairs right"
    )
    fig.colorbar(im, ax=axes[0], label="value")
    fig.get_layout_engine().set(wspace=0.1)  # a gap: the colour bar's label read as part of the right panel's
    # the three curves coincide: one line, and the other two starts as markers on every third offset
    axes[1].plot(offsets, curves[0], "-", color=plots.color("yours"), lw=2, label=f"p = {starts[0]}")
    for j, marker in ((1, "o"), (2, "x")):
        axes[1].plot(
            offsets[j::3], curves[j][j::3], marker, ms=6, mfc="none", color=plots.TEXT, label=f"p = {starts[j]}"
        )
    axes[1].set_xlabel("offset k (< 0: back, > 0: ahead)")
    axes[1].set_ylabel(r"$\mathrm{PE}_p \cdot \mathrm{PE}_{p+k}$")
    axes[1].set_title("The dot product depends only\non the offset: three starts,\none curve, symmetric about 0")
    axes[1].legend(title="start", loc="upper left")  # the corner the peak leaves empty
    spread = np.abs(curves - curves[0]).max()
    symmetry = np.abs(curves[0] - curves[0][::-1]).max()
    plots.show(
        fig,
        name="07_pe_offset",
        alt=f"The dot product of two encodings depends only on their offset: the curves from three starting "
        f"positions coincide and are symmetric about offset 0 (largest difference {spread:.1e}). "
        f"Left: the sinusoidal table, {T_fig} positions by {d_fig} dimensions, fast stripes on the left "
        f"(low dimensions), slow on the right. Right: PE_p · PE_(p+k) against the offset k from -30 to 30 for "
        f"starting positions {starts}: three identical curves (largest difference {spread:.1e}), "
        f"symmetric about k = 0, peaking at {curves[0, 30]:.0f} = d_model / 2.",
    )
    print(
        f"the three curves differ by at most {spread:.1e}; at offset 0 the dot product is "
        f"{curves[0, 30]:.1f} = d_model / 2, at offset ±1 it is {curves[0, 31]:.2f}."
    )
    print(
        f"two back and two ahead: PE_p · PE_(p−2) = {curves[0, 28]:.4f}, PE_p · PE_(p+2) = {curves[0, 32]:.4f}; "
        f"largest |value(−k) − value(k)| over all k: {symmetry:.1e}"
    )
    k = 2
    angles = k / 10000 ** (np.arange(0, d_fig, 2) / d_fig)
    R = np.zeros((d_fig, d_fig))  # block-diagonal rotation by ω_i·k in every pair
    for i, angle in enumerate(angles):
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    print(
        f"one matrix R_{k} for every p: max |PE_p R_{k} − PE_(p+{k})| over p = 0…{T_fig - k - 1}: "
        f"{np.abs(pe_fig[:-k] @ R - pe_fig[k:]).max():.1e}"
    )

# %% [markdown]
# The three curves lie on top of each other and are mirror images about $k = 0$: the similarity of two
# encodings is a function of the size of their offset alone. It is largest at offset 0 and falls off (not
# perfectly monotonically — cosines of different frequencies interfere) as positions move apart.

# %% [markdown]
# ## 4. What a layer sees: scores of $x + \mathrm{PE}$
#
# A layer never computes $\mathrm{PE}_p \cdot \mathrm{PE}_q$ on its own. Its input at position $p$ is
# $x_p + \mathrm{PE}_p$, and the score between positions $p$ and $q$ is
#
# $$s_{pq} = \frac{(x_p + \mathrm{PE}_p)\, W^Q (W^K)^\top (x_q + \mathrm{PE}_q)^\top}{\sqrt{d_k}}
# = (x_p + \mathrm{PE}_p)\, M\, (x_q + \mathrm{PE}_q)^\top, \qquad M = \frac{W^Q (W^K)^\top}{\sqrt{d_k}},$$
#
# and multiplying out the brackets gives three kinds of term:
#
# $$s_{pq} = \underbrace{x_p M x_q^\top}_{\text{content}}
# + \underbrace{x_p M \mathrm{PE}_q^\top + \mathrm{PE}_p M x_q^\top}_{\text{content} \times \text{position}}
# + \underbrace{\mathrm{PE}_p M \mathrm{PE}_q^\top}_{\text{position}} .$$
#
# * The two middle terms mix the *content* of one token with the *absolute position* of the other.
# * Even the position-only term is $\mathrm{PE}_p M \mathrm{PE}_q^\top$, not $\mathrm{PE}_p \cdot \mathrm{PE}_q$.
#   Writing $\mathrm{PE}_q = \mathrm{PE}_p R_{q-p}$, it equals $\mathrm{PE}_p M R_{q-p}^\top \mathrm{PE}_p^\top$,
#   which in general depends on $p$. (It does not when $M$ commutes with every rotation $R_k$; $M = I$ gives
#   back section 3.)
#
# So "the dot product depends only on the offset" does **not** make the scores of a layer depend only on
# the offset. Weights whose position term depends only on the offset exist ($M = I$ is one), but nothing
# in the design makes a layer learn them, and the content × position terms remain. The cell measures the three kinds of term for one random layer ($d_\text{model} = d_k = 16$),
# with "cat" at position $p$ and "dog" two positions later, for every placement $p = 0, \dots, 40$.

# %%
d_layer, offset, placements = 16, 2, np.arange(41)
rng_layer = np.random.default_rng(5)
W_Q_np, W_K_np = (rng_layer.standard_normal((d_layer, d_layer)) / np.sqrt(d_layer) for _ in range(2))
M = W_Q_np @ W_K_np.T / np.sqrt(d_layer)
x_cat, x_dog = data.token_embedding("cat", d_layer), data.token_embedding("dog", d_layer)
with ac.student_code("positional_encoding"):
    pe16 = positional_encoding(placements[-1] + offset + 1, d_layer)
    terms = {
        "PE_p · PE_(p+2)  (section 3)": [pe16[p] @ pe16[p + offset] for p in placements],
        "position term PE_p M PE_(p+2)": [pe16[p] @ M @ pe16[p + offset] for p in placements],
        "content × position terms": [x_cat @ M @ pe16[p + offset] + pe16[p] @ M @ x_dog for p in placements],
        "full score of cat → dog": [(x_cat + pe16[p]) @ M @ (x_dog + pe16[p + offset]) for p in placements],
    }
    for name, values in terms.items():
        print(
            f"{name:32s}: from {min(values): .3f} to {max(values): .3f} over the {len(placements)} placements "
            f"(spread {max(values) - min(values):.1e})"
        )


# %% [markdown]
# Only the raw dot product of the encodings stays constant. The layer's score for the same two words at
# the same offset changes with where the pair sits, through the position term and the content ×
# position terms. The next section shows an encoding that puts the offset into the score itself.

# %% [markdown]
# ## 5. Rotary position embeddings (RoPE): relative position inside the score
#
# Many recent models do not add anything to the embeddings. Instead they **rotate** the query and the
# key, after the projections and just before the dot product (rotary position embeddings, Su et al.,
# *RoFormer*, 2021). Pair $(2i, 2i+1)$ of a query or key at position $m$ is rotated by the angle
# $m\,\omega_i$ (the same frequencies as above):
#
# $$\begin{pmatrix} q'_{2i} \\ q'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos m\omega_i & -\sin m\omega_i \\ \sin m\omega_i & \cos m\omega_i \end{pmatrix}
# \begin{pmatrix} q_{2i} \\ q_{2i+1} \end{pmatrix}.$$
#
# Rotating $q$ by $m\omega_i$ and $k$ by $n\omega_i$ changes their dot product in that pair exactly as
# rotating $k$ by $(n-m)\omega_i$ alone would: $R(m\omega)^\top R(n\omega) = R((n-m)\omega)$. So the score
# depends on the content of $q$ and $k$ and on the **offset** $n-m$ only, whatever $W^Q$ and $W^K$ are:
# there is nothing added to $x$, hence no content × position terms. And since a rotation by $+2\omega_i$
# is not a rotation by $-2\omega_i$, the key two positions back and the key two positions ahead get, in
# general, different scores. Let's check both with the same words and the same layer as in section 4.


# %%
def rope(x, positions, base=10000.0):
    """Rotate pairs (2i, 2i+1) of each row of x (T, d) by the angle position · ω_i."""
    d = x.shape[-1]
    omega = 1.0 / base ** (np.arange(0, d, 2) / d)
    angle = np.asarray(positions, dtype=float)[:, None] * omega
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = even * cos - odd * sin
    out[:, 1::2] = even * sin + odd * cos
    return out


def rope_score(q, k, query_positions, key_positions):
    """Scaled dot product of q rotated to each query position with k rotated to the matching key position."""
    n = len(query_positions)
    return np.sum(
        rope(np.tile(q, (n, 1)), query_positions) * rope(np.tile(k, (n, 1)), key_positions), axis=1
    ) / np.sqrt(len(q))


q_cat, k_dog = x_cat @ W_Q_np, x_dog @ W_K_np  # the layer of section 4, without any PE added
start = placements + offset  # cat at p = 2 … 42, so that p − 2 ≥ 0
for shift, label in ((+offset, "two ahead"), (-offset, "two back ")):
    s = rope_score(q_cat, k_dog, start, start + shift)
    print(f"RoPE, dog {label}: score {s[0]: .4f} at every one of {len(s)} placements (spread {s.max() - s.min():.1e})")
print(
    f"rotation keeps lengths: |q| = {np.linalg.norm(q_cat):.4f}, |rope(q) at position 57| = "
    f"{np.linalg.norm(rope(q_cat[None], [57])):.4f}"
)

# %% [markdown]
# The score stays the same, to rounding, wherever the pair sits; it changes only when the offset changes,
# and "two ahead" scores differently from "two back". Because rotations keep lengths, RoPE also leaves
# the size of $q$ and $k$ untouched.

# %% [markdown]
# ## 6. Learned encodings, and sequences longer than in training
#
# The alternative is to *learn* the position vectors: a table `torch.nn.Embedding(max_len, d_model)`
# whose row $p$ is trained along with the rest of the model (BERT and GPT-2 do this). It is flexible,
# but it costs `max_len × d_model` parameters and it only knows the positions it has seen. A row is
# trained only if that position occurs in the training data; and there is no row at all beyond `max_len`.
# The sinusoidal formula, in contrast, can be evaluated at any position, so it *produces* an encoding for
# any length (whether the rest of the model copes with positions it never saw is another question).

# %%
max_len, d_learn, train_len = 16, 8, 10
torch.manual_seed(0)
learned = torch.nn.Embedding(max_len, d_learn)
print(f"learned table: {max_len} positions × {d_learn} dimensions = {learned.weight.numel()} parameters")
loss = (learned(torch.arange(train_len)) - 1.0).pow(2).mean()  # training on sentences of length 10
loss.backward()
grad_rows = learned.weight.grad.norm(dim=1)
print(f"gradient per row after one step on length-{train_len} inputs:", np.round(grad_rows.numpy(), 3))
print(
    f"rows {train_len}…{max_len - 1} get exactly zero gradient: {bool((grad_rows[train_len:] == 0).all())} "
    "— a gradient step never moves them from their random start"
)
try:
    learned(torch.tensor([max_len]))
except IndexError as error:
    print(f"position {max_len} of a learned table with max_len = {max_len}: IndexError ({error})")
with ac.student_code("positional_encoding"):
    far = positional_encoding(5001, d_learn)[-1]
    print(f"the sinusoidal formula at position 5000: {np.round(far, 3)}")


# %% [markdown]
# ## 7. Explore: encodings for your own d_model
#
# The explorer draws **your** `positional_encoding` for a 64-token sequence. Move the controls:
# * **d_model** — how many dimensions (pairs of sine and cosine) the encoding has; the table on the left
#   is stretched to the same width for every $d_\text{model}$ (its columns run from dimension 0 to
#   $d_\text{model} - 1$);
# * **position p** — one position (the line across the table); the right plot shows the cosine similarity
#   of $\mathrm{PE}_p$ with the encoding of every position $q$.
#
# Both controls redraw when you release them; you can also type a value, in the box beside **d_model** or
# over the number beside **position p**.


# %%
class EncodingView(widgets.View):
    """The table of your positional_encoding (T = 64) and the similarity of one position to all others."""

    T = 64

    def key(self, d_model, position):
        return d_model  # one layout per d_model: its similarity axis spans that table's range, no more

    def build(self, d_model, position):
        pe = positional_encoding(self.T, d_model)  # your code: the similarity axis spans what this table gives
        unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
        lowest = float((unit @ unit.T).min())
        fig, (left, right) = plt.subplots(1, 2, figsize=(6.6, 3.9), layout="constrained")
        self.table = left.imshow(
            np.zeros((self.T, 2)),
            cmap=plots.DIVERGING,
            vmin=-1,
            vmax=1,
            aspect="auto",
            interpolation="nearest",
            extent=(0, 1, self.T - 0.5, -0.5),
        )
        left.set_xticks([0, 0.5, 1], ["0", r"$d_{\mathrm{model}}/2$", r"$d_{\mathrm{model}}$"])
        left.set_xlabel("dimension (even: sin, odd: cos)")
        left.set_ylabel("position")
        fig.colorbar(self.table, ax=left, label="value", pad=0.08)  # room for the pointer at the picked row
        # the picked row outlined, not crossed out: a line along it hid the very row it marks
        (self.row,) = left.plot([0, 1, 1, 0, 0], np.zeros(5), color=plots.color("guide"), lw=1.2)
        (self.pointer,) = left.plot(  # beside the table (x in axes units), at the picked row
            [1.025],
            [0],
            "<",
            ms=10,
            color=plots.color("highlight"),
            clip_on=False,
            transform=left.get_yaxis_transform(),
        )
        left.set_xlim(0, 1)
        left.set_title(rf"Your PE table, T = {self.T}," + f"\n$d_{{\\mathrm{{model}}}}$ = {d_model}")
        (self.curve,) = right.plot(np.arange(self.T), np.zeros(self.T), "o-", ms=3, color=plots.color("yours"))
        self.mark = right.axvline(0, color=plots.color("highlight"), ls="--", lw=2)
        right.set_xlim(-1, self.T)
        right.set_ylim(lowest - 0.05 * (1 - lowest), 1 + 0.05 * (1 - lowest))  # the range of this table's similarities
        if lowest < 0:
            right.axhline(0, color=plots.color("guide"), lw=0.6)
        right.set_xlabel("position q")
        right.set_ylabel(r"cosine similarity of $\mathrm{PE}_p$, $\mathrm{PE}_q$")
        self.title = right.set_title("\n")  # two lines, filled in by update()
        self.dynamic = [self.table, self.row, self.pointer, self.mark, self.curve, self.title]  # in drawing order:
        # the dashed mark under the curve, so the point at p stays visible
        return fig

    def update(self, d_model, position):
        pe = positional_encoding(self.T, d_model)  # your code
        norms = np.linalg.norm(pe, axis=1)
        self.similarity = pe @ pe[position] / (norms * norms[position])
        self.table.set_data(pe)
        self.row.set_ydata(position + np.array([-0.5, -0.5, 0.5, 0.5, -0.5]))
        self.pointer.set_ydata([position])
        self.curve.set_ydata(self.similarity)
        self.mark.set_xdata([position, position])
        others = np.delete(self.similarity, position)
        self.nearest, self.best = int(np.argmax(others)), others.max()
        self.nearest += self.nearest >= position  # back to a position number
        self.title.set_text(
            f"p = {position} (dashed): most similar\nother q = {self.nearest}, similarity {self.best:.3f}"
        )

    def alt(self, d_model, position):
        return (
            f"With d_model = {d_model}, the position most similar to {position} is {self.nearest} (cosine "
            f"similarity {self.best:.3f}). "
            f"Left: the sinusoidal table for T = {self.T} and d_model = {d_model}, position {position} marked. "
            f"Right: the cosine similarity of position {position} with every position, 1 at itself; the most "
            f"similar other position is {self.nearest}, with similarity {self.best:.3f}."
        )


widgets.explore(
    EncodingView(),
    needs=["positional_encoding"],
    d_model=widgets.choice_slider("d_model", [2, 4, 8, 16, 32, 64, 128], 32),
    position=widgets.slider("position p", 0, 63, 20),
)

# %% [markdown]
# **Things to try.** With `d_model = 2` there is a single sine/cosine pair: the similarity curve is a
# pure cosine, and positions about $2\pi \approx 6.3$ apart, or a multiple of that, look almost identical —
# the encoding is ambiguous. Add dimensions: from `d_model = 16` on, the most similar other position is a
# direct neighbour, whichever $p$ you pick: the curve still ripples, but no distant position comes back as
# close to $p$ as its neighbours. Move $p$: the curve keeps its shape around $p$ and is symmetric, only its
# place changes. The cell below finds, with your code, the most similar pair of *different* positions for
# every size of the slider.

# %%
with ac.student_code("positional_encoding"):
    for d in (2, 4, 8, 16, 32, 64, 128):  # the explorer's sizes
        pe = positional_encoding(64, d)
        pe = pe / np.linalg.norm(pe, axis=1, keepdims=True)
        similarity = pe @ pe.T - 2 * np.eye(64)  # leave out each position's own 1
        p, q = np.unravel_index(np.argmax(similarity), similarity.shape)
        print(
            f"d_model = {d:3d}: the most similar pair of different positions among 64 is {p} and {q} "
            f"(offset {abs(p - q)}), cosine similarity {similarity[p, q]:.4f}"
        )

# %% [markdown]
# ## 8. Experiment: order becomes visible, but scores are not functions of the offset
#
# **Adding encodings breaks the symmetry.** Back to the two sentences. We add your encodings to the
# embeddings and run the same kind of attention layer again, this time for 20 different random layers,
# and measure the largest difference between the output for "The dog chased the cat" and the permuted
# output for "The cat chased the dog". Without positions, section 1 showed it is zero up to rounding;
# with positions it should not be.

# %%
n_layers = 20
with ac.student_code("add_positional_encoding"):
    Xp_cd = torch.from_numpy(add_positional_encoding(X_cd.numpy()))
    Xp_dc = torch.from_numpy(add_positional_encoding(X_dc.numpy()))
    without, with_pe = [], []
    for seed in range(n_layers):
        Ws = random_projections(d_model, seed)
        without.append((self_attention(X_dc, *Ws)[0] - self_attention(X_cd, *Ws)[0][perm]).abs().max().item())
        with_pe.append((self_attention(Xp_dc, *Ws)[0] - self_attention(Xp_cd, *Ws)[0][perm]).abs().max().item())
    fig, ax = plt.subplots(figsize=(6.6, 3.9), layout="constrained")
    floor = 1e-17  # exact zeros cannot be drawn on a log scale
    ax.semilogy(range(n_layers), with_pe, "s", color=plots.color("with"), label="embeddings + positional encoding")
    ax.semilogy(range(n_layers), np.maximum(without, floor), "o", color=plots.color("without"), label="embeddings only")
    ax.axhline(floor, color=plots.color("guide"), ls=":", lw=1)
    # under the line: above it, the label ran into the markers of the last seeds
    ax.text(
        n_layers - 0.5, floor / 1.5, "exact 0 drawn on this line", ha="right", va="top", fontsize=9, color=plots.TEXT
    )
    ax.set_ylim(floor / 100, 1e4)
    ax.set_yticks([1e-16, 1e-12, 1e-8, 1e-4, 1, 1e4], ["10⁻¹⁶", "10⁻¹²", "10⁻⁸", "10⁻⁴", "1", "10⁴"])  # both sides of 1
    ax.minorticks_off()
    ax.set_xticks(range(0, n_layers, 2))
    ax.set_xlabel("random attention layer (seed)")
    ax.set_ylabel("max |out(dog…cat) − P·out(cat…dog)|")
    ax.set_title(
        f"With positions the output is no longer a reordering:\ndifferences ≥ {min(with_pe):.2f} "
        f"instead of ≤ {max(without):.1e}\n({n_layers} random layers, $d_{{\\mathrm{{model}}}}$ = {d_model})"
    )
    ax.legend(loc="center right")
    cat_gap = (self_attention(Xp_cd, W_Q, W_K, W_V)[0][1] - self_attention(Xp_dc, W_Q, W_K, W_V)[0][4]).norm().item()
    plots.show(
        fig,
        name="07_order_broken",
        alt=f"With positional encodings the output is no longer a reordering: over {n_layers} random attention "
        f"layers the difference is at least {min(with_pe):.2f}, against at most {max(without):.1e} without. "
        f"Log-scale dot plot over {n_layers} random attention layers: with embeddings only the difference "
        f"between one sentence's output and the other's reordered output is at most {max(without):.1e} "
        f"(zeros drawn at 1e-17); with positional encodings it is at least {min(with_pe):.2f}.",
    )
    print(
        f"without positions the largest difference over {n_layers} layers is {max(without):.1e}; "
        f"with positions the smallest is {min(with_pe):.2f}."
    )
    print(
        f"with positions, the output vector for 'cat' as the chaser and as the chased differ by {cat_gap:.2f} (norm)."
    )

# %% [markdown]
# With encodings added, the outputs are no longer a mere reordering: "cat" at position 1 (the chaser) and
# "cat" at position 4 (the one chased) now produce different vectors, so later layers can tell the two
# sentences apart.
#
# **Added encodings versus RoPE, over many layers.** Sections 4 and 5 looked at one layer. Now 20 random
# layers ($d_\text{model} = d_k = 16$): for each, the score of "cat" at position $p$ for "dog" two positions
# ahead and two positions back, at every placement $p = 2, \dots, 42$, once with your encodings added to the
# embeddings and once with RoPE. We measure how much the score moves with the placement (its spread), and
# for RoPE how far "two ahead" is from "two back".

# %%
with ac.student_code("positional_encoding"):
    pe_far = positional_encoding(start[-1] + offset + 1, d_layer)
    spreads = {"added": [], "rope": []}
    rope_gap = []
    for seed in range(n_layers):
        g = np.random.default_rng(100 + seed)
        WQ, WK = (g.standard_normal((d_layer, d_layer)) / np.sqrt(d_layer) for _ in range(2))
        scores = {}
        for shift in (+offset, -offset):
            scores["added", shift] = np.array(
                [(x_cat + pe_far[p]) @ WQ @ WK.T @ (x_dog + pe_far[p + shift]) for p in start]
            ) / np.sqrt(d_layer)
            scores["rope", shift] = rope_score(x_cat @ WQ, x_dog @ WK, start, start + shift)
        for kind in spreads:
            spreads[kind] += [np.ptp(scores[kind, shift]) for shift in (+offset, -offset)]
        rope_gap.append(abs(scores["rope", +offset][0] - scores["rope", -offset][0]))
        if seed == 0:
            example = scores

    fig, axes = plt.subplots(1, 2, figsize=(6.6, 4.1), sharey=True, layout="constrained")
    titles = {
        "added": "x + PE, then projections:\nthe score moves with the placement",
        "rope": "RoPE on q and k:\nflat, and two ahead ≠ two back",
    }
    for ax, kind in zip(axes, titles):
        for shift, style, meaning in ((+offset, "o-", "other"), (-offset, "s--", "other2")):
            label = f"dog {'two ahead' if shift > 0 else 'two back'} (offset {shift:+d})"
            ax.plot(start, example[kind, shift], style, ms=3, color=plots.color(meaning), label=label)
        ax.set_xlabel("position p of 'cat'")
        ax.set_title(titles[kind])
    axes[0].set_ylabel("score of cat → dog")
    axes[1].legend(loc="lower right")
    fig.suptitle(f"Only RoPE makes the score a function of the offset\n(layer 0 of {n_layers})")
    plots.show(
        fig,
        name="07_rope_contrast",
        alt=f"Only RoPE makes the score a function of the offset alone: with encodings added the score moves with "
        f"the placement, with RoPE it stays flat and two ahead differs from two back. "
        f"Score of 'cat' for 'dog' against the position of 'cat', for the key two ahead and two back. "
        f"Left, encodings added to the embeddings: both curves move with the position (median spread "
        f"over {n_layers} layers {np.median(spreads['added']):.2f}). Right, RoPE: two flat lines at "
        f"different heights (spread at most {max(spreads['rope']):.1e}, gap between ahead and back "
        f"median {np.median(rope_gap):.2f}).",
    )
    print(f"spread of the score over the placements, over {n_layers} layers and both offsets:")
    print(
        f"  encodings added to the embeddings: median {np.median(spreads['added']):.3f}, "
        f"smallest {min(spreads['added']):.3f}, largest {max(spreads['added']):.3f}"
    )
    print(
        f"  RoPE:                              median {np.median(spreads['rope']):.1e}, "
        f"largest {max(spreads['rope']):.1e}"
    )
    print(
        f"RoPE, |score(two ahead) − score(two back)|: median {np.median(rope_gap):.3f}, "
        f"smallest {min(rope_gap):.3f} over the {n_layers} layers"
    )

# %% [markdown]
# With added encodings, the score for the same two words at the same offset moves with the placement in
# every layer we drew; with RoPE it is constant to rounding, and it differs between "two ahead" and "two
# back". That is the precise sense of "relative position": RoPE builds it into the score; added sinusoids
# only make it *available* to a layer that learns to use it.

# %% [markdown]
# ## 9. Let's review
#
# * Self-attention is **permutation-equivariant**: $\text{attention}(PX) = P\,\text{attention}(X)$. On its
#   own it treats a sentence as a bag of words; you measured a difference at rounding level between
#   "The cat chased the dog" and "The dog chased the cat".
# * **Sinusoidal positional encoding**: pair $i$ of dimensions holds $\sin(\omega_i p)$ and $\cos(\omega_i p)$
#   with $\omega_i = 10000^{-2i/d_\text{model}}$; wavelengths range from $2\pi$ to almost $10000\cdot 2\pi$.
#   The encodings are **added** to the embeddings. Once they are, the outputs are no longer a reordering:
#   order is visible.
# * $\mathrm{PE}_p\cdot\mathrm{PE}_q = \sum_i \cos(\omega_i (p-q))$ depends only on the size of the offset
#   (two back = two ahead), and $\mathrm{PE}_{p+k} = \mathrm{PE}_p R_k$ with one rotation $R_k$ for every $p$.
# * A layer's scores on $x + \mathrm{PE}$ are not functions of the offset alone: content × position terms
#   and $\mathrm{PE}_p M \mathrm{PE}_q^\top$ depend on where the pair sits.
# * **RoPE** rotates $q$ and $k$ instead, so a score depends on the content and the signed offset only.
# * **Learned** encodings (`nn.Embedding`) are a trained table: unseen rows stay untrained, and there is no
#   row beyond `max_len`. The formula works at any position.
#
# Next lesson: residual connections and layer normalisation, which make deep stacks of attention trainable.

# %% [markdown]
# ## 10. Check your understanding
#
# Each answer cell holds `qN_answer = None` and, under it, `raise NotImplementedError()`: replace `None`
# with your answer and delete the `raise NotImplementedError()` line. Multiple-choice answers are a letter
# in quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format only;
# the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** What is the sum of all entries of $\mathrm{PE}_0$ (the encoding of position 0) when
# $d_\text{model} = 512$?

# %% quiz="quiz-pe-position-zero" key="256" points=1

# %% [markdown]
# **Q2 (1 point).** How many positions long is one full period (the wavelength) of dimensions 0 and 1,
# the fastest pair? Give the number to at least two decimals.

# %% quiz="quiz-fastest-wavelength" key="2 * np.pi" tol=0.001 points=1

# %% [markdown]
# **Q3 (1 point).** A self-attention layer *without* positional information reads "The cat chased the
# dog" and then "The dog chased the cat". What happens to its outputs?
#
# * **a** — they are identical, position by position
# * **b** — they are the same vectors, reordered the way the words were reordered
# * **c** — they are completely different, because the words moved
# * **d** — the output for "cat" becomes zero

# %% quiz="quiz-equivariance" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** The dot product $\mathrm{PE}_p\cdot\mathrm{PE}_q$ of two sinusoidal encodings depends on
#
# * **a** — $p + q$ &nbsp; **b** — only the distance $|p - q|$ &nbsp; **c** — only $\max(p, q)$ &nbsp; **d** — $p$ and $q$ separately, in no simple way

# %% quiz="quiz-offset" choices="abcd" key="b" points=1

# %% [markdown]
# **Q5 (1 point).** A model with learned positions `nn.Embedding(512, d_model)` was trained on texts of at
# most 300 tokens. Which statement is right?
#
# * **a** — it handles 600-token texts fine: the table extends itself
# * **b** — rows 300–511 were never trained, and a 600-token text has no rows at all for positions 512 and up
# * **c** — rows 300–511 were trained as well, because every row gets a gradient at every step
# * **d** — learned encodings depend only on the offset, like sinusoidal ones

# %% quiz="quiz-learned-length" choices="abcd" key="b" points=1

# %% [markdown]
# **Q6 (1 point).** For $d_\text{model} = 8$, what is $\mathrm{PE}_{20,\,2}$, the entry of position 20 in
# dimension 2? (Positions and dimensions are counted from 0, as in your table.) Give at least four
# significant digits.

# %% quiz="quiz-pe-entry" key="float(np.sin(20 * 10000 ** (-2 / 8)))" tol=0.001 points=1
q6_answer = float(np.sin(20 / 10000 ** (2 / 8)))

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** Why does the sinusoidal encoding use many sine/cosine
# pairs with different frequencies, instead of one pair $(\sin p, \cos p)$? Use what you saw in the
# explorer (try `d_model = 2`) and in section 3. 3–5 sentences.
#
# <details><summary>Before you hand in</summary>
#
# * Does your answer say what goes wrong with a single pair, and why?
# * Does it say what the slow pairs and the fast pairs each contribute?
# * Does it quote something you observed: the explorer, the printout below it, or the figure of section 3?
# * Is it 3–5 sentences, in your own words?
# </details>

# %% [markdown] manual="quiz-free-many-frequencies" points=3
# ### BEGIN SOLUTION
# *Model answer.* A single pair turns once every $2\pi \approx 6.3$ positions, so positions a whole number of
# turns apart get nearly the same encoding and the position is ambiguous: with `d_model = 2` the explorer's
# similarity keeps coming back close to 1, and the printout found two positions 44 apart (about seven
# turns) with cosine similarity 0.9998. Using many frequencies is like a clock with seconds, minutes and
# hours hands: fast pairs separate neighbouring positions, slow pairs (wavelengths up to almost
# $10000\cdot 2\pi$) separate distant ones; from `d_model = 16` on, the most similar other position among
# the 64 is a direct neighbour: the similarity still ripples, but no distant position comes back as close.
# Because every pair rotates by a fixed angle per step, the dot product still depends only on the offset,
# whatever the number of pairs (section 3: three starts, one curve).
#
# *Rubric (3 points).* 1 point: one pair is periodic, so distant positions collide / are ambiguous.
# 1 point: different frequencies resolve different scales (fast = nearby, slow = far), giving a unique
# code for each position. 1 point: links to an observation (explorer or the offset figure), or notes that
# the offset property holds for every pair. No points for restating the formula without explanation.
# ### END SOLUTION
