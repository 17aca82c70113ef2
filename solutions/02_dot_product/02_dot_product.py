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
# # Lesson 2 — The dot product: similarity, search and soft lookup
#
# **Attention, from the dot product up** · lesson 2 · about 80 minutes
#
# Lesson 1 ended with a promise: attention builds each output as a weighted average over all tokens,
# with weights that say how *relevant* each token is. This lesson is about where relevance comes
# from. The answer is the humblest operation in linear algebra — the **dot product** — and the
# picture to keep in mind is a search engine for videos.
#
# **Learning goals.** By the end you can
# 1. compute dot-product scores of one or several queries against many keys, and read them as similarity;
# 2. explain what the dot product rewards besides direction (length), how cosine similarity differs, and
#    why the length of the query works as a sharpness knob (an inverse temperature);
# 3. implement a *hard* lookup (take the best match) and a *soft* lookup (blend all values, weighted by softmax);
# 4. explain with a measurement why neural networks use the soft version;
# 5. implement kernel regression with a Gaussian kernel, and say when it is exactly dot-product attention and how
#    it relates to the length of the keys and to QK-norm.
#
# **You need** from lesson 1: the idea that attention mixes information from all tokens at once. From
# `00_pytorch_primer`: arrays with shapes, and the matrix product `@` (numpy's arrays, used here, behave
# like the primer's tensors). Maths: vectors and matrix products.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.collections import PolyCollection

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. The dot product measures agreement
#
# For two vectors $a, b \in \mathbb{R}^d$ the dot product is
#
# $$a \cdot b = \sum_{i=1}^{d} a_i b_i = \lVert a\rVert\,\lVert b\rVert \cos\theta ,$$
#
# where $\theta$ is the angle between them. The second form explains why it works as a similarity
# score: it is large and positive when the vectors point the same way ($\theta \approx 0$), zero when
# they are orthogonal (nothing in common), and negative when they point in opposite directions.
# It also grows with the **lengths** $\lVert a\rVert$ and $\lVert b\rVert$ — keep that in mind, it will
# matter in a moment.
#
# In attention the vector doing the asking is called the **query** $q$; the vectors being asked are
# the **keys** $k_1, \dots, k_n$, stacked as the rows of a matrix $K \in \mathbb{R}^{n \times d}$.
# All $n$ scores at once are one matrix–vector product:
#
# $$s = K q \in \mathbb{R}^{n}, \qquad s_i = k_i \cdot q .$$
#
# With several queries stacked as rows of $Q \in \mathbb{R}^{m \times d}$, the scores of every query
# against every key form the $m \times n$ matrix $S = Q K^\top$.

# %%
reference = np.array([1.0, 0.5])
others = {
    "same direction": np.array([2.0, 1.0]),
    "a bit off": np.array([1.0, 1.5]),
    "orthogonal": np.array([-0.5, 1.0]),
    "opposite": np.array([-1.0, -0.5]),
}
label_at = {  # where each key's label goes, clear of every arrow
    "same direction": ((2.0, 1.1), "center", "bottom"),  # centred over the tip: "left" ran into the frame
    "a bit off": ((1.05, 1.55), "left", "bottom"),
    "orthogonal": ((-0.55, 1.05), "right", "bottom"),
    "opposite": ((-1.05, -0.6), "left", "top"),
}

fig, ax = plt.subplots(figsize=(5.8, 4.4))
# the query: a wide outlined arrow underneath, so the key that points the same way stays visible on top of it
ax.annotate(
    "",
    xy=reference,
    xytext=(0, 0),
    arrowprops=dict(arrowstyle="simple,head_width=1.2,head_length=1", mutation_scale=14, fc="#D9D9D9", ec=plots.TEXT),
)
ax.text(reference[0] + 0.1, reference[1] - 0.3, "query q\n(wide grey arrow)", fontsize=10, color=plots.TEXT)
for name, vec in others.items():
    ax.annotate("", xy=vec, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", lw=2, color=plots.color("data")))
    (x, y), ha, va = label_at[name]
    ax.text(x, y, f"{name}\nq·k = {reference @ vec:+.2f}", ha=ha, va=va, fontsize=9, color=plots.TEXT)
ax.set_xlim(-1.7, 3.0)
ax.set_ylim(-1.2, 2.1)
ax.set_aspect("equal")
ax.axhline(0, lw=0.5, color=plots.color("guide"))
ax.axvline(0, lw=0.5, color=plots.color("guide"))
ax.set_xlabel("dimension 1")
ax.set_ylabel("dimension 2")
ax.set_title(
    "q = (1, 0.5) against four keys (green): the score is largest\nfor the same direction, 0 orthogonal, negative opposite"
)
plots.show(
    fig,
    name="02_arrows",
    alt="The score q·k is largest for the key pointing the same way as the query, 0 for the orthogonal one and "
    "negative for the opposite one. "
    "Arrows in the plane: the query q = (1, 0.5) as a wide grey arrow and four keys as green arrows. "
    + "; ".join(f"{name} {tuple(vec.tolist())}: q·k = {reference @ vec:+.2f}" for name, vec in others.items())
    + ".",
)


# %% [markdown]
# ### Exercise 2.1 — scores of queries against keys (2 points)
#
# Implement `dot_scores(q, K)`:
# * `K` has shape `(n, d)`: one key per row;
# * `q` is either one query of shape `(d,)` — return the `n` scores, shape `(n,)`, entry $i$ being $q\cdot k_i$ —
#   or several queries stacked as rows, shape `(m, d)` — return shape `(m, n)`, row $j$ holding query $j$'s
#   scores against every key.
#
# The same code should handle both cases, without loops.
#
# <details><summary>Hint 1: the idea</summary>
#
# Every score is a dot product of a query with a key, and a matrix product computes many dot products at once:
# entry $(j, i)$ of $AB$ is row $j$ of $A$ times column $i$ of $B$. So the keys must become the *columns* of the
# matrix on the right.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# For `K` of shape `(4, 2)` (4 keys of size 2), the keys as columns form a `(2, 4)` array. A query of shape
# `(2,)` times a `(2, 4)` array gives shape `(4,)`; three queries, shape `(3, 2)`, give `(3, 4)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `K.T` is the transpose of a 2-D array; `@` is the matrix product, and it treats a 1-D array on its left
# like a single row.
# </details>


# %% answer="dot-scores"
def dot_scores(q, K):
    """Dot-product scores. q: (d,) or (m, d); K: (n, d). Returns (n,) or (m, n)."""
    ### BEGIN SOLUTION
    return q @ K.T
    ### END SOLUTION


# %% tests="dot-scores-tests" points=2
_K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])  # n = 4 keys of size d = 2
_Q = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, -1.0]])  # m = 3 queries
_S = np.array([[1.0, 2.0, 3.0, -1.0], [0.0, 1.0, 1.0, 0.0], [1.0, -1.0, 0.0, -1.0]])  # by hand: row j = query j


def _dot_mistakes(Q, K, S):  # what known mistakes return, given the right scores S
    return {
        "these are cosine similarities: the dot product is not divided by the lengths.": S
        / (np.linalg.norm(Q, axis=-1)[..., None] * np.linalg.norm(K, axis=-1)),
        "these are the scores divided by d (a mean of the products); the dot product is their sum.": S / K.shape[1],
        "these are (negative) distances, not dot products.": -np.linalg.norm(Q[..., None, :] - K, axis=-1),
        "the result is transposed: row j must hold query j's scores against every key (shape (m, n)).": S.T,
    }


def _scores(q, K):  # your dot_scores; a shape error names its likely cause instead of a bare traceback
    try:
        return checks.call(dot_scores, q, K)
    except (ValueError, RuntimeError) as error:
        raise AssertionError(
            f"dot_scores failed for q of shape {q.shape} and K of shape {K.shape}: {error}. The same code must "
            "handle one query (d,) and several, (m, d): the keys must stand as columns on the right."
        ) from None


checks.expect_close(_scores(_Q[0], _K), _S[0], "dot_scores for one query", mistakes=_dot_mistakes(_Q[0], _K, _S[0]))
checks.expect_close(_scores(_Q, _K), _S, "dot_scores for 3 queries, 4 keys", mistakes=_dot_mistakes(_Q, _K, _S))
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(21)
_Qh, _Kh = _rng.standard_normal((3, 5)), _rng.standard_normal((7, 5))  # m = 3, n = 7, d = 5: all sizes distinct
_Sh = torch.nn.functional.linear(torch.from_numpy(_Qh), torch.from_numpy(_Kh)).numpy()  # Q Kᵀ, by torch
_what = "dot_scores for a batch of queries"
checks.expect_close(_scores(_Qh, _Kh), _Sh, _what, mistakes=_dot_mistakes(_Qh, _Kh, _Sh))
_got = _scores(_Qh[1], _Kh)
checks.expect_close(_got, _Sh[1], "dot_scores for one query", mistakes=_dot_mistakes(_Qh[1], _Kh, _Sh[1]))
checks.expect_close(_scores(_Qh, _Kh[:1]), _Sh[:, :1], "dot_scores against a single key (n = 1, shape (m, 1))")
### END HIDDEN TESTS
checks.passed("dot_scores")

# %% [markdown]
# ## 2. A search engine for videos
#
# Think of a video site. You type a **query**, "cats jumping". Every video carries a **key** — its
# title and tags, the part that is *compared* with your query. And every video has a **value** — the
# video itself, the thing you actually get back. Keys decide *which* videos you get; values are
# *what* you get.
#
# Our toy library describes each video's key by how strongly it matches six tags, and its value by
# three numbers (how cute, how energetic, how many minutes). A query is a vector over the same six tags.

# %%
titles, K_videos, V_videos = data.video_library()
query_text = "cats jumping"
q_videos = data.video_query(query_text)

print(f"tags (key dimensions):      {data.VIDEO_TAGS}")
print(f"content (value dimensions): {data.VIDEO_CONTENT}")
print(f"query '{query_text}' = {q_videos}\n")
print(f"{'video':34s} {'key':>30s}   value")
for title, k, v in zip(titles, K_videos, V_videos):
    print(f"{title:34s} {str(k):>30s}   {v}")

# %% [markdown]
# Rank the library with **your** `dot_scores`:

# %%
with ac.student_code("dot_scores"):
    video_scores = dot_scores(q_videos, K_videos)
    cosine = video_scores / (np.linalg.norm(K_videos, axis=1) * np.linalg.norm(q_videos))
    order = np.argsort(-video_scores, kind="stable")
    print(f"query: '{query_text}'\n{'rank':>4}  {'dot':>5}  {'cosine':>6}  {'key length':>10}  video")
    for rank, i in enumerate(order, start=1):
        print(f"{rank:4d}  {video_scores[i]:5.2f}  {cosine[i]:6.3f}  {np.linalg.norm(K_videos[i]):10.2f}  {titles[i]}")
    viral = titles.index("Top 100 viral moments")
    cosine_rank = 1 + int(np.sum(cosine > cosine[viral]))
    print(
        f"\n'Top 100 viral moments' is ranked #{1 + int(np.sum(video_scores > video_scores[viral]))} by the "
        f"dot product but #{cosine_rank} by cosine similarity."
    )

# %% [markdown]
# The dot product found the cat-jumping videos — and also ranked a video tagged with *everything*
# above a genuine cat video. That is the length effect of the **key**: $k \cdot q = \lVert k\rVert\lVert q\rVert\cos\theta$,
# and the longest key in the library (2.16, printed) scores high even at a poor angle. Cosine similarity
# divides the lengths out and ranks by direction only.
#
# Now the length of the **query**. Multiplying $q$ by a number $c > 0$ multiplies *every* score by the
# same $c$, since $k_i\cdot(cq) = c\,(k_i\cdot q)$. The ranking does not change, and neither do the cosines
# (the cell below checks both). For a search engine that shows a ranked list, the query's length carries
# no information at all. For a *soft* lookup (section 4), it does: the weights there depend on the
# *differences* between scores, and those grow with $c$. A longer query makes the lookup more decisive,
# a shorter one spreads it out. The query's length is a sharpness knob, an **inverse temperature**:
# scaling $q$ by $c$ has the same effect as dividing every score by a temperature $\tau = 1/c$, the knob
# lesson 4 studies. Section 4 measures it.
#
# So attention keeps the plain dot product rather than the cosine. It is cheap: one matrix product scores
# every query against every key. And it keeps the lengths, which the network learns (lesson 5): a query
# can be long to pick decisively, or short to average broadly. The risk — scores so large that the soft
# lookup becomes a hard pick — is what the **scaling** of lesson 3 controls.

# %%
with ac.student_code("dot_scores"):
    for c in (0.5, 3.0):
        scores_c = dot_scores(c * q_videos, K_videos)
        nonzero = video_scores != 0
        ratios = scores_c[nonzero] / video_scores[nonzero]
        cosine_c = scores_c / (np.linalg.norm(K_videos, axis=1) * np.linalg.norm(c * q_videos))
        print(
            f"query × {c}: each nonzero score is multiplied by {ratios.min():.2f} … {ratios.max():.2f}; "
            f"ranking unchanged: {np.array_equal(np.argsort(-scores_c, kind='stable'), order)}; "
            f"cosines unchanged: {np.allclose(cosine_c, cosine)}"
        )


# %% [markdown]
# ## 3. Hard lookup: take the best match
#
# A database lookup returns exactly one record: the one whose key matches best.
#
# $$\text{hard}(q) = v_{i^*}, \qquad i^* = \arg\max_i \; k_i \cdot q .$$
#
# ### Exercise 2.2 — hard lookup (2 points)
#
# Implement `hard_lookup(q, K, V)` for one query `q` of shape `(d,)`, keys `K` of shape `(n, d)` and
# values `V` of shape `(n, d_v)` (row $i$ is the value of key $i$). Return the **value row** of the
# best-scoring key (the largest score, even when every score is negative): one array of shape `(d_v,)` —
# not its index, not its score, not a tuple.
#
# <details><summary>Hint 1: the idea</summary>
#
# Two steps: find *which* key scores highest, then use that position to pick the matching row of `V`.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The scores of one query against all keys are `K @ q`, shape `(n,)`. Their best position is a single integer
# $i$; `V[i]` is then a row of shape `(d_v,)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.argmax(a)` returns the position of the largest entry of `a` (not the entry itself).
# </details>


# %% answer="hard-lookup"
def hard_lookup(q, K, V):
    """The value of the key that matches q best. q: (d,), K: (n, d), V: (n, d_v) -> (d_v,)"""
    ### BEGIN SOLUTION
    return V[np.argmax(K @ q)]
    ### END SOLUTION


# %% tests="hard-lookup-tests" points=2
# These checks call your hard_lookup with PyTorch's product in place of your `dot_scores` (if you use it), so that
# a mistake in exercise 2.1 costs points only there.
def _reference_dot_scores(q, K):  # PyTorch's q Kᵀ, returned as the same kind of array as your dot_scores returns
    scores = torch.nn.functional.linear(torch.from_numpy(checks.to_numpy(q)), torch.from_numpy(checks.to_numpy(K)))
    try:
        yours = dot_scores(q, K)
    except Exception:  # not implemented, or broken: plain numpy
        return scores.numpy()
    if isinstance(yours, torch.Tensor):
        return scores.to(yours.dtype)
    dtype = np.asarray(yours).dtype
    return scores.numpy().astype(dtype if np.issubdtype(dtype, np.floating) else float)


def _check_hard(q, K, V, what):
    scores = (torch.from_numpy(K) @ torch.from_numpy(q)).numpy()  # reference scores, by torch
    best, d_v = int(np.argmax(scores)), V.shape[1]
    got = checks.call(checks.with_references(hard_lookup, dot_scores=_reference_dot_scores), q, K, V)
    checks.expect(
        not isinstance(got, (tuple, list)) and np.ndim(got) == 1,
        f"{what}: return the value row V[i], shape ({d_v},) — not the index or the score, and not a pair: got {got!r}.",
    )
    mistakes = {
        "this returns the key row K[i]; return the value row V[i].": K[best],
        "this is column i of V; the value of key i is row i of V.": V[:, best] if best < d_v else np.nan,
        "this is the value of the *worst* key: use the largest score, not the smallest.": V[np.argmin(scores)],
        "this picks the largest |score|; pick the largest score.": V[np.argmax(np.abs(scores))],
        "this ranks by cosine similarity; rank by the plain dot product.": V[
            np.argmax(scores / np.linalg.norm(K, axis=1))
        ],
    }
    checks.expect_close(got, V[best], what, mistakes=mistakes)


_K2 = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])  # n = 3 keys, d = 2
_V2 = np.array([[10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0, 23.0], [30.0, 31.0, 32.0, 33.0]])  # d_v = 4: row i
_check_hard(np.array([0.2, 0.9]), _K2, _V2, "hard_lookup on the worked example")  # scores [0.2, 0.9, -0.2]: key 1
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(22)
_Kh, _Vh = _rng.standard_normal((9, 4)), _rng.standard_normal((9, 6))  # n = 9, d = 4, d_v = 6
for _trial in range(5):
    _check_hard(_rng.standard_normal(4), _Kh, _Vh, f"hard_lookup (trial {_trial})")
_check_hard(-np.abs(_rng.standard_normal(4)), np.abs(_Kh), _Vh, "hard_lookup when every score is negative")
### END HIDDEN TESTS
checks.passed("hard_lookup")

# %% [markdown]
# ## 4. Soft lookup: blend everything, weighted by relevance
#
# A hard lookup throws away the runner-up, however close it was. A **soft** lookup keeps every value
# and blends them, giving more weight to better matches. The weights must be positive and sum to 1,
# and larger scores must get larger weights. The standard way to turn scores into such weights is the
# **softmax**:
#
# $$\alpha_i = \frac{e^{s_i}}{\sum_{j=1}^{n} e^{s_j}}, \qquad \text{soft}(q) = \sum_{i=1}^{n} \alpha_i\, v_i = \alpha^\top V .$$
#
# The exponential makes every weight positive (in exact arithmetic: see the end of this section) and turns
# *differences* of scores into *ratios* of weights: $\alpha_i / \alpha_j = e^{s_i - s_j}$. (Lesson 4 makes softmax safe for huge scores; the
# scores here are small, so the formula as written is fine.)
#
# This is exactly the operation at the heart of attention: the query scores every key, softmax turns
# the scores into weights, and the output is the weighted average of the values.
#
# ### Exercise 2.3 — soft lookup (3 points)
#
# Implement `soft_lookup(q, K, V)` for one query `q` of shape `(d,)`, keys `K` of shape `(n, d)` and
# values `V` of shape `(n, d_v)`. Return a pair **in this order**: `(output, weights)`, where `weights`
# has shape `(n,)` (the $\alpha_i$, one per key) and `output` has shape `(d_v,)` (the blend of the values).
#
# <details><summary>Hint 1: the idea</summary>
#
# Three steps, each one line: the scores (as in `hard_lookup`), the weights (the softmax formula above), and
# the blend, in which row $i$ of `V` counts with weight $\alpha_i$.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# With `e = np.exp(scores)` (shape `(n,)`), the weights are `e` divided by one number, the sum of all its
# entries. A weighted sum of the rows of `V` is a vector–matrix product: `(n,)` times `(n, d_v)` gives `(d_v,)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.exp` works entry by entry; `e.sum()` adds all entries; `weights @ V` blends the rows of `V`;
# `return output, weights` returns the pair.
# </details>


# %% answer="soft-lookup"
def soft_lookup(q, K, V):
    """Softmax-weighted blend of all values. q: (d,), K: (n, d), V: (n, d_v) -> (output (d_v,), weights (n,))"""
    ### BEGIN SOLUTION
    scores = K @ q
    weights = np.exp(scores) / np.exp(scores).sum()
    return weights @ V, weights
    ### END SOLUTION


# %% tests="soft-lookup-tests" points=3
# As above, your soft_lookup is called with PyTorch's product in place of your `dot_scores` (if you use it).
def _check_soft(q, K, V, what):
    s = torch.from_numpy(K) @ torch.from_numpy(q)
    want, s = torch.softmax(s, dim=-1).numpy(), s.numpy()  # reference weights: torch's softmax
    res = checks.call(checks.with_references(soft_lookup, dot_scores=_reference_dot_scores), q, K, V)
    out, w = checks.output_and_weights(res, what, d_v=V.shape[1], T_k=len(K), fn="soft_lookup")
    wrong_weights = {
        "the weights do not sum to 1: divide the exponentials by their sum.": np.exp(s),
        "the weights are the raw scores divided by their sum: exponentiate first.": s / s.sum(),
        "the weights favour the worst matches: use exp(+score), not exp(-score).": np.exp(-s) / np.exp(-s).sum(),
        "the weights are all equal: they must depend on the scores.": np.full(len(K), 1 / len(K)),
        "these are the raw scores: the weights are their softmax, and sum to 1.": s,
        "the scores are divided by √d (lesson 3's scaling): this lookup uses the plain dot product.": torch.softmax(
            torch.from_numpy(s / len(q) ** 0.5), dim=-1
        ).numpy(),
    }
    checks.expect_close(w, want, f"{what}: the weights", mistakes=wrong_weights)
    wrong_output = {"the output sums the values without the weights.": V.sum(0)}
    if K.shape == V.shape:  # only then is a blend of the keys recognisable
        wrong_output["the output blends the keys; blend the values V."] = want @ K
    checks.expect_close(out, want @ V, f"{what}: the output", mistakes=wrong_output)


# worked example: the keys and values of the hard-lookup check, query (1, 0.5): scores [1, 0.5, -1]
_check_soft(np.array([1.0, 0.5]), _K2, _V2, "soft_lookup on the worked example")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(23)
_Kh, _Vh, _qh = _rng.standard_normal((8, 5)), _rng.standard_normal((8, 3)), _rng.standard_normal(5)
_check_soft(_qh, _Kh, _Vh, "soft_lookup (n = 8, d = 5, d_v = 3)")
_check_soft(3 * _qh, _Kh, _Vh, "soft_lookup for the query 3q (sharper weights)")
_check_soft(_qh, _Kh, _rng.standard_normal((8, 5)), "soft_lookup with d_v = d")
### END HIDDEN TESTS
checks.passed("soft_lookup")

# %% [markdown]
# Back to the videos: soft lookup returns a blend of every video's value, dominated by the best matches.

# %%
with ac.student_code("soft_lookup"):
    blended, video_weights = soft_lookup(q_videos, K_videos, V_videos)
    for i in np.argsort(-video_weights)[:4]:
        print(f"weight {video_weights[i]:.3f}  {titles[i]}")
    print(f"... the other {len(titles) - 4} videos share the remaining {1 - np.sort(video_weights)[-4:].sum():.3f}")
    print("blended value: " + ", ".join(f"{name} = {x:.2f}" for name, x in zip(data.VIDEO_CONTENT, blended)))

# %% [markdown]
# ### The query's length is an inverse temperature
#
# Section 2 claimed that a longer query makes the soft lookup more decisive. Here is the measurement:
# the same query "cats jumping", multiplied by $c$, with **your** `soft_lookup`.

# %%
with ac.student_code("soft_lookup"):
    print(f"{'c':>5}  {'‖c·q‖':>6}  {'τ = 1/c':>7}  {'largest weight':>14}  {'smallest weight':>15}  on")
    for c in (0.25, 1.0, 4.0, 16.0):
        _, weights_c = soft_lookup(c * q_videos, K_videos, V_videos)
        print(
            f"{c:5.2f}  {np.linalg.norm(c * q_videos):6.2f}  {1 / c:7.3g}  {weights_c.max():14.3f}  "
            f"{weights_c.min():15.1e}  {titles[int(np.argmax(weights_c))]}"
        )
    print(f"(uniform over the {len(titles)} videos would be {1 / len(titles):.3f} each)")

# %% [markdown]
# The same direction, four lengths: at $c = 0.25$ the weights are close to uniform (0.114 at most, against
# 0.091 for uniform), at $c = 16$ the best video takes more than half of the weight, and the winner never
# changes. Multiplying the query by $c$ is the same as dividing the scores by a **temperature** $\tau = 1/c$;
# lesson 4 gives the temperature its own knob and measures it with entropy.
#
# **Is a weight ever exactly 0?** In exact arithmetic, never: $e^{s}$ is positive for every $s$. At $c = 16$ the
# smallest weight is tiny but positive (printed). A computer, though, stores $e^{s}$ as a floating-point number,
# and below some $s$ the nearest such number is 0: the exponential **underflows**. The cell below finds where.
# In a softmax computed as lesson 4 will (subtracting the largest score first), a key whose score is more than
# about 745 below the best gets a weight of exactly 0 in float64, the precision numpy uses here, and more than
# about 104 below in float32, PyTorch's default.

# %%
for dtype in (np.float64, np.float32):
    s = np.arange(0, 1000, dtype=dtype)  # 0, 1, 2, … : find the first s with exp(-s) == 0
    first_zero = int(s[np.exp(-s) == 0][0])
    print(f"{np.dtype(dtype).name}: exp(-{first_zero - 1}) = {np.exp(-s[first_zero - 1]):.1e}, exp(-{first_zero}) = 0")
scores_far = np.array([0.0, -10.0, -800.0])  # the third key scores 800 below the best
shifted = np.exp(scores_far - scores_far.max())
print(f"softmax of {scores_far} in float64: {shifted / shifted.sum()}; the third weight is exactly 0: "
      f"{(shifted / shifted.sum())[2] == 0}")  # fmt: skip

# %% [markdown]
# ## 5. A second road to the same formula: kernel regression
#
# Statisticians found the soft lookup decades before Transformers, from another direction. You have examples
# $(k_i, v_i)$, inputs and the values observed there, and want to guess the value at a new input $q$.
# **Kernel regression** (Nadaraya and Watson, 1964) averages the $v_i$, weighting each by how *close* $k_i$ is
# to $q$:
#
# $$\hat v(q) = \sum_i \alpha_i v_i, \qquad
#   \alpha_i = \frac{\exp\!\big(-\lVert q-k_i\rVert^2/2\sigma^2\big)}{\sum_j \exp\!\big(-\lVert q-k_j\rVert^2/2\sigma^2\big)} .$$
#
# The bell-shaped weight $\exp(-\lVert q-k\rVert^2/2\sigma^2)$ is the *Gaussian kernel*; its width $\sigma$, the
# *bandwidth*, says how far "close" reaches. Look at the formula as a softmax: the weights are exactly
# $\operatorname{softmax}(s)$ with scores $s_i = -\lVert q-k_i\rVert^2/2\sigma^2$. Kernel regression *is* a soft
# lookup, with minus a squared distance as the score. Now expand the square,
# $\lVert q-k\rVert^2 = \lVert q\rVert^2 - 2\,q\cdot k + \lVert k\rVert^2$:
#
# $$s_i = \frac{q\cdot k_i}{\sigma^2} \;-\; \frac{\lVert q\rVert^2}{2\sigma^2} \;-\; \frac{\lVert k_i\rVert^2}{2\sigma^2} .$$
#
# * The $\lVert q\rVert^2$ term is the same for every key, and adding the same number to every score does not
#   change a softmax ($e^{s_i + a} = e^a e^{s_i}$, and $e^a$ cancels). It drops out.
# * **If all keys have the same length**, the $\lVert k_i\rVert^2$ term is the same for every key too, and drops
#   out as well. What is left is $q\cdot k_i/\sigma^2$: **dot-product attention with inverse temperature
#   $1/\sigma^2$** (temperature $\tau = \sigma^2$). A narrow kernel is a sharp, nearly hard lookup; a wide one
#   averages broadly.
# * **If the keys have different lengths**, the two differ by $-\lVert k_i\rVert^2/2\sigma^2$, a penalty on long keys.
#   It works against the dot product's long-key bias of section 2, where "Top 100 viral moments", a long key at
#   a poor angle, ranked near the top (measured below).
#
# **QK-norm.** Some Transformers remove the lengths on purpose. QK-norm (Henry et al., 2020) scales every query
# and key to length 1 and multiplies their dot product by a learned number $g$: the score is $g\cos\theta$,
# cosine similarity with a learned inverse temperature. For vectors of length 1,
# $\lVert \hat q-\hat k\rVert^2 = 2 - 2\cos\theta$, so a Gaussian kernel on the normalised vectors gives exactly
# QK-norm's weights, with $g = 1/\sigma^2$. Both length effects of section 2 are gone: a long key can no longer win
# at a poor angle, and the query's length no longer sets the sharpness. The sharpness becomes one learned
# number, the kernel's $1/\sigma^2$. (Larger models since, such as ViT-22B (Dehghani et al., 2023), use the name
# for a close variant: a layer normalisation, lesson 8, of every query and key before the usual scaled dot
# product. It fixes each vector's length up to a learned gain per entry, so the sharpness is learned through
# those gains.)
#
# ### Exercise 2.4 — kernel lookup (3 points)
#
# Implement `kernel_lookup(q, K, V, sigma)`: kernel regression with a Gaussian kernel, for one query `q` of shape
# `(d,)`, keys `K` of shape `(n, d)`, values `V` of shape `(n, d_v)` and a bandwidth `sigma > 0`. Return the pair
# `(output, weights)`, output first as in `soft_lookup`: `weights` of shape `(n,)` are the $\alpha_i$ of the
# formula above, `output` of shape `(d_v,)` is $\sum_i \alpha_i v_i$.
#
# One requirement beyond the formula: the weights must stay finite and sum to 1 even when **every** key is far
# from the query compared with `sigma`. Then every $\exp(-\lVert q-k_i\rVert^2/2\sigma^2)$ underflows to exactly 0
# (section 4), and the formula as written divides 0 by 0. Since adding the same number to every score does not
# change a softmax, there is a way around it (Hint 2).
#
# <details><summary>Hint 1: the idea</summary>
#
# First one score per key, $s_i = -\lVert q-k_i\rVert^2/2\sigma^2$; then proceed as in `soft_lookup`: the weights
# are the softmax of the scores, the output the blend of the values.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `q - K` has shape `(n, d)`, one row per key (numpy repeats `q` for every row); square it and add up each row to
# get the `n` squared distances. Before exponentiating, subtract the largest score from every score: the best key
# then gets $e^0 = 1$, so the sum of the exponentials is at least 1 and never 0.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `np.sum(x, axis=1)` adds up each row; `s.max()` is the largest score; `np.exp`, `.sum()` and `weights @ V` as in
# `soft_lookup`.
# </details>


# %% answer="kernel-lookup"
def kernel_lookup(q, K, V, sigma):
    """Gaussian-kernel (Nadaraya–Watson) average of the values. q: (d,), K: (n, d), V: (n, d_v), sigma > 0
    -> (output (d_v,), weights (n,))"""
    ### BEGIN SOLUTION
    scores = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ V, weights
    ### END SOLUTION


# %% tests="kernel-lookup-tests" points=3
def _check_kernel(q, K, V, sigma, what):
    d2 = torch.cdist(torch.from_numpy(q)[None], torch.from_numpy(K))[0].numpy() ** 2  # squared distances, by torch
    want = torch.softmax(torch.from_numpy(-d2 / (2 * sigma**2)), dim=-1).numpy()  # reference weights
    res = checks.call(_kernel, q, K, V, sigma)
    out, w = checks.output_and_weights(res, what, d_v=V.shape[1], T_k=len(K), fn="kernel_lookup")
    checks.expect_finite(
        w, f"{what}: the weights", "Far from every key each exp(score) underflows to 0 (then 0 / 0 is NaN), and exp of "
        "a large positive number overflows: subtract the largest score from every score before exponentiating.",
    )  # fmt: skip
    scores = {  # the scores that known mistakes use in place of −‖q − k‖² / 2σ²
        "these are dot-product weights, softmax(q·k / σ²): the kernel's score is −‖q − k‖² / 2σ².": K @ q / sigma**2,
        "the 2 is missing: the score is −‖q − k‖² / (2σ²), not −‖q − k‖² / σ².": -d2 / sigma**2,
        "σ is not squared: the score is −‖q − k‖² / (2σ²).": -d2 / (2 * sigma),
        "the distance is not squared: the score is −‖q − k‖² / 2σ².": -(d2**0.5) / (2 * sigma**2),
        "the sign is wrong: the closest key must get the largest weight.": d2 / (2 * sigma**2),
    }
    wrong = {mistake: torch.softmax(torch.from_numpy(s), dim=-1).numpy() for mistake, s in scores.items()}
    wrong["the weights do not sum to 1: divide by their sum over all keys."] = np.exp(-d2 / (2 * sigma**2))
    checks.expect_close(w, want, f"{what}: the weights", mistakes=wrong)
    wrong = {"the output blends the keys; blend the values V.": want @ K} if K.shape == V.shape else {}
    checks.expect_close(out, want @ V, f"{what}: the output", mistakes=wrong)


# your kernel_lookup, with PyTorch versions of the earlier exercises' functions in case you use them (a mistake
# there costs points only there)
_kernel = checks.with_references(
    kernel_lookup, dot_scores=_reference_dot_scores, hard_lookup=lambda q, K, V: V[np.argmax(K @ q)],
    soft_lookup=lambda q, K, V: ((w := torch.softmax(torch.from_numpy(K @ q), 0).numpy()) @ V, w),
)  # fmt: skip
_K4 = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])  # n = 3 keys, d = 2
_V4 = np.array([[1.0, 0.0, 0.0, 5.0], [0.0, 1.0, 0.0, 5.0], [0.0, 0.0, 1.0, 5.0]])  # d_v = 4
# q = (1, 0), σ = 3: squared distances [0, 5, 16], scores −[0, 5, 16] / 18
_check_kernel(np.array([1.0, 0.0]), _K4, _V4, 3.0, "kernel_lookup on the worked example (σ = 3)")
# far from every key: σ = 0.1, squared distances [100, 65, 116]: every exp(score) underflows in float64
_check_kernel(np.array([1.0, 10.0]), _K4, _V4, 0.1, "kernel_lookup far from every key (σ = 0.1)")
### BEGIN HIDDEN TESTS
_rng = np.random.default_rng(24)
_Kh, _qh = _rng.standard_normal((7, 4)), _rng.standard_normal(4)  # n = 7, d = 4
_check_kernel(_qh, _Kh, _rng.standard_normal((7, 3)), 0.8, "kernel_lookup (n = 7, d = 4, d_v = 3, σ = 0.8)")
_check_kernel(_qh, _Kh, _rng.standard_normal((7, 4)), 1.7, "kernel_lookup with d_v = d (σ = 1.7)")
_check_kernel(_qh + 6, _Kh, _rng.standard_normal((7, 2)), 0.05, "kernel_lookup far from every key (σ = 0.05)")
### END HIDDEN TESTS
checks.passed("kernel_lookup")

# %% [markdown]
# Your `kernel_lookup` on the video library, next to your `soft_lookup`: first with the library's keys as they are
# (different lengths), then with every key scaled to length 1, then QK-norm's way (query and keys of length 1,
# scores multiplied by $g$).

# %%
with ac.student_code("kernel_lookup and soft_lookup"):
    sigma = 0.5
    key_lengths = np.linalg.norm(K_videos, axis=1, keepdims=True)
    viral = titles.index("Top 100 viral moments")
    _, w_kernel = kernel_lookup(q_videos, K_videos, V_videos, sigma)
    _, w_dot = soft_lookup(q_videos / sigma**2, K_videos, V_videos)
    rank = {name: 1 + int(np.sum(w > w[viral])) for name, w in (("kernel", w_kernel), ("dot", w_dot))}
    print(
        f"keys as they are, σ = {sigma}: 'Top 100 viral moments' (key length {key_lengths[viral, 0]:.2f}) gets weight "
        f"{w_kernel[viral]:.3f} from the kernel (rank {rank['kernel']} of {len(titles)}) and {w_dot[viral]:.3f} from "
        f"dot-product attention with inverse temperature 1/σ² (rank {rank['dot']}); "
        f"largest difference between the two sets of weights: {np.abs(w_kernel - w_dot).max():.3f}"
    )
    K_unit = K_videos / key_lengths
    _, w_kernel_unit = kernel_lookup(q_videos, K_unit, V_videos, sigma)
    _, w_dot_unit = soft_lookup(q_videos / sigma**2, K_unit, V_videos)
    unit_gap = np.abs(w_kernel_unit - w_dot_unit).max()
    print(f"keys of length 1, σ = {sigma}: largest difference between the two sets of weights: {unit_gap:.1e}")
    q_unit = q_videos / np.linalg.norm(q_videos)
    print(f"\nQK-norm: query and keys of length 1, scores g·cos θ\n{'σ':>5} {'g = 1/σ²':>9} {'largest weight':>15} "
          f"{'largest difference kernel − QK-norm':>36}")  # fmt: skip
    qk_norm = {}
    for sigma in (1.0, 0.5, 0.25):
        _, w_kernel_unit = kernel_lookup(q_unit, K_unit, V_videos, sigma)
        _, w_qk = soft_lookup(q_unit / sigma**2, K_unit, V_videos)
        qk_norm[sigma] = (w_qk.max(), np.abs(w_kernel_unit - w_qk).max())
        print(f"{sigma:5.2f} {1 / sigma**2:9.0f} {w_qk.max():15.3f} {qk_norm[sigma][1]:36.1e}")

# %% [markdown]
# On the library as it is, the two lookups disagree: the kernel pushes "Top 100 viral moments" far down (its long
# key is far from the query), while dot-product attention puts it second. With every key of length 1 they agree to
# rounding error, and with query and keys of length 1 the kernel is QK-norm: a narrower kernel (larger $g$) gives
# a sharper lookup (largest weight in the table).

# %% [markdown]
# ## 6. Experiment: why networks use the soft version
#
# A network learns by nudging its parameters in the direction that reduces the error — gradient
# descent. That needs the output to *respond* to small changes of the query. We move the query
# gradually from "cats jumping" to "dogs sleeping",
# $q(\lambda) = (1-\lambda)\, q_{\text{cats jumping}} + \lambda\, q_{\text{dogs sleeping}}$ for 201 values of
# $\lambda$ between 0 and 1, and watch one number of the result: the *energy* of what comes back.
# Both lookups below are **your** implementations; for the soft lookup we also try the query made
# 4 times longer (inverse temperature 4).


# %%
def sweep(lookup, lambdas, q_from, q_to, beta=1.0):
    """Energy of the looked-up value along the straight path from q_from to q_to (queries scaled by beta)."""
    energy = data.VIDEO_CONTENT.index("energy")
    return np.array([np.asarray(lookup(beta * ((1 - lam) * q_from + lam * q_to)))[energy] for lam in lambdas])


lambdas = np.linspace(0, 1, 201)
q_from, q_to = data.video_query("cats jumping"), data.video_query("dogs sleeping")
with ac.student_code("hard_lookup and soft_lookup"):
    hard_path = sweep(lambda q: hard_lookup(q, K_videos, V_videos), lambdas, q_from, q_to)
    soft_path = {
        beta: sweep(lambda q: soft_lookup(q, K_videos, V_videos)[0], lambdas, q_from, q_to, beta) for beta in (1.0, 4.0)
    }
    hard_steps = np.abs(np.diff(hard_path))
    soft_steps = {beta: np.abs(np.diff(path)) for beta, path in soft_path.items()}
    jumps = lambdas[1:][hard_steps > 0]
    flat = np.count_nonzero(hard_steps == 0)

    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    ax.plot(lambdas, hard_path, color=plots.color("baseline"), lw=2.5, label="hard lookup (yours)")
    for beta, dash in ((1.0, "-"), (4.0, "--")):
        ax.plot(
            lambdas,
            soft_path[beta],
            dash,
            color=plots.color("yours"),
            lw=2,
            label=f"soft lookup (yours), query × {beta:g}",
        )
    ax.annotate(
        f"flat: slope exactly 0\n({flat} of {len(hard_steps)} steps)",
        xy=(0.5, hard_path[100]),
        xytext=(0.42, 0.93),
        arrowprops=dict(arrowstyle="->", color=plots.TEXT),
        fontsize=9,
        color=plots.TEXT,
    )
    for x in jumps:  # label each jump from the side where the chart is empty
        y = 0.85 if x < 0.5 else 0.3
        ax.annotate("jump", xy=(x, y), xytext=(x + 0.06 if x < 0.5 else x - 0.12, y), va="center", fontsize=9,
                    color=plots.TEXT, arrowprops=dict(arrowstyle="->", color=plots.TEXT))  # fmt: skip
    ax.set_ylim(0.15, 1.0)
    ax.set_xlabel("λ  (0 = 'cats jumping', 1 = 'dogs sleeping')")
    ax.set_ylabel("energy of the returned value")
    ax.set_title(
        f"Moving the query smoothly: the hard lookup is flat (zero gradient) but for {len(jumps)} jumps;\n"
        "the soft lookup changes at every step"
    )
    ax.legend(loc="lower left")
    plots.show(
        fig,
        name="02_hard_vs_soft",
        alt=(
            f"Moving the query smoothly, the hard lookup stays flat (zero gradient) but for {len(jumps)} jumps, while "
            "the soft lookup changes at every step. "
            f"Line chart of the energy of the returned value against λ from 0 to 1. The hard lookup (vermilion) is flat "
            f"except for {len(jumps)} jumps (at λ = {', '.join(f'{x:.3f}' for x in jumps)}), from "
            f"{hard_path[0]:.2f} to {hard_path[-1]:.2f}; an arrow marks a flat stretch, where its slope is exactly 0. "
            f"The soft lookup (blue) moves smoothly from {soft_path[1.0][0]:.2f} to {soft_path[1.0][-1]:.2f}; with the "
            f"query 4 times longer (dashed) it moves from {soft_path[4.0][0]:.2f} to {soft_path[4.0][-1]:.2f}, staying "
            f"closer to the hard lookup and bending more steeply near λ = 1."
        ),
    )

    print(
        f"hard lookup: the output changes at {np.count_nonzero(hard_steps)} of {len(hard_steps)} steps; "
        f"at the other {flat} its slope is exactly 0."
    )
    held = [titles[int(np.argmax(K_videos @ ((1 - lam) * q_from + lam * q_to)))] for lam in lambdas]  # the best key
    stretches = [[held[0], lambdas[0], lambdas[0]]]  # (video returned, from λ, to λ)
    for lam, title in zip(lambdas[1:], held[1:]):
        if title == stretches[-1][0]:
            stretches[-1][2] = lam
        else:
            stretches.append([title, lam, lam])
    print("flat stretches: " + "; ".join(f"λ = {a:.3f} to {b:.3f} returns '{t}'" for t, a, b in stretches))
    for beta, steps in soft_steps.items():
        print(
            f"soft lookup, query × {beta:g}: the output changes at {np.count_nonzero(steps)} of {len(steps)} steps; "
            f"the smallest change per step is {steps.min():.2e}, the largest {steps.max():.2e}; mean distance "
            f"from the hard lookup's curve {np.abs(soft_path[beta] - hard_path).mean():.3f}."
        )

# %% [markdown]
# The printout is the argument. The hard lookup's output is flat almost everywhere and then jumps. On those
# **flat stretches** (198 of the 200 steps) it returns one video; the long one in the middle is "Top 100 viral
# moments", the long key of section 2, best for queries halfway between two topics. There its derivative with
# respect to the query is exactly zero, and at the jumps it is undefined: its gradient is zero almost everywhere, so gradient descent gets no signal about which
# way to move the query. The soft lookup's output changes at every one of the 200 steps: it responds to every small
# move of the query, so its gradient tells gradient descent which way to move it. With the query 4
# times longer, the soft curve stays closer to the hard one (its mean distance from it is smaller) and its largest
# change per step is larger (both printed): softmax is a *smooth* version of argmax, and the inverse temperature
# sets how close to hard it gets. Lesson 3 shows why the size of the scores needs controlling.

# %% [markdown]
# ## 7. Explore: search the library with your own functions
#
# Pick a query and a **sharpness** $\beta$: the query is multiplied by $\beta$ before **your**
# `soft_lookup`, so $\beta$ is the inverse temperature of section 4 ($\beta = 1/\tau$). The left chart shows
# **your** `dot_scores` for the query, the right one the weights of **your** `soft_lookup`; the orange
# bar is the video **your** `hard_lookup` returns. Sliders redraw when released; type a value into
# the box beside a control and press Enter.

# %%
QUERIES = ["cats jumping", "dogs sleeping", "cats sleeping", "cooking music", "dogs jumping", "music"]
SHARPNESS = [0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128]


class SearchView(widgets.View):
    """Scores and soft-lookup weights of one query over the videos; the hard lookup's pick in orange."""

    def build(self, query, sharpness):
        n = len(titles)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6.5, 3.9), sharey=True, layout="constrained")
        self.rows = np.arange(n)
        # one collection of bars per chart: a single artist to redraw, however many videos there are
        self.score_bars = PolyCollection(self.bar_corners(np.zeros(n)), facecolors=plots.color("yours"))
        self.weight_bars = PolyCollection(self.bar_corners(np.zeros(n)), facecolors=plots.color("yours"))
        ax1.add_collection(self.score_bars)
        ax2.add_collection(self.weight_bars)
        # a dot at the end of every bar: a score or weight of 0 draws no bar, but its dot still shows
        (self.score_dots,) = ax1.plot(np.zeros(n), self.rows, "o", ms=4, color=plots.color("yours"), mec=plots.TEXT)
        (self.weight_dots,) = ax2.plot(np.zeros(n), self.rows, "o", ms=4, color=plots.color("yours"), mec=plots.TEXT)
        for ax in (ax1, ax2):
            ax.axvline(0, color=plots.TEXT, lw=0.8)
        ax1.set_yticks(self.rows, titles)
        ax1.set_ylim(n - 0.5, -0.5)  # first video on top
        ax1.set_xlim(-0.05, 2.0)  # a little room left of 0, so the dot of a zero is not hidden by the axis
        ax2.set_xlim(-0.025, 1.03)
        ax2.axvline(1 / n, color=plots.color("chance"), lw=1, ls=":")
        ax1.set_xlabel("score (a dot marks\neach value, a zero too)")
        ax2.set_xlabel(f"weight (dotted line:\nuniform, 1/{n})")
        ax1.set_title("your dot_scores;\norange: hard_lookup's pick")
        ax2.set_title("your soft_lookup's weights\nfor the query times β")
        self.dynamic = [self.score_bars, self.weight_bars, self.score_dots, self.weight_dots]
        return fig

    def bar_corners(self, lengths):
        return [[(0, y - 0.4), (x, y - 0.4), (x, y + 0.4), (0, y + 0.4)] for y, x in zip(self.rows, lengths)]

    def update(self, query, sharpness):
        q = data.video_query(query)
        scores = np.asarray(dot_scores(q, K_videos), dtype=float)  # yours
        _, weights = soft_lookup(sharpness * q, K_videos, V_videos)  # yours
        weights = np.asarray(weights, dtype=float)
        picked = hard_lookup(q, K_videos, V_videos)  # yours
        matches = [i for i, v in enumerate(V_videos) if checks.is_close(v, picked)]
        self.best = matches[0] if matches else None
        colours = [plots.color("highlight") if i == self.best else plots.color("yours") for i in self.rows]
        for bars, dots, lengths in (
            (self.score_bars, self.score_dots, scores),
            (self.weight_bars, self.weight_dots, weights),
        ):
            bars.set_verts(self.bar_corners(lengths))
            bars.set_facecolor(colours)
            dots.set_xdata(lengths)
        self.scores, self.weights = scores, weights

    def alt(self, query, sharpness):
        top = int(np.argmax(self.weights))
        picked = f"'{titles[self.best]}'" if self.best is not None else "no video of the library"
        if np.ptp(self.weights) < 1e-9:
            spread = f"all equal to {self.weights[0]:.3f}"
        else:
            spread = (
                f"the largest is {self.weights.max():.2f} on '{titles[top]}', the smallest {self.weights.min():.3f}"
            )
        if np.ptp(self.weights) < 1e-9:
            finding = f"At β = {sharpness:g} your soft_lookup spreads the weight evenly over the videos"
        else:
            finding = (
                f"At β = {sharpness:g} your soft_lookup puts the largest weight, {self.weights.max():.2f}, on "
                f"'{titles[top]}'"
            )
        return (
            f"{finding}; your hard_lookup picks {picked}. "
            f"Two bar charts over the {len(titles)} videos for the query '{query}'. Left, your dot-product "
            f"scores: the best is {self.scores.max():.2f}; your hard_lookup returns {picked} (orange). Right, "
            f"your soft-lookup weights with the query multiplied by β = {sharpness:g}: {spread}."
        )


widgets.explore(
    SearchView(),
    needs=["dot_scores", "hard_lookup", "soft_lookup"],
    query=widgets.dropdown("query", QUERIES),
    sharpness=widgets.choice_slider("sharpness β", SHARPNESS, 1),
)

# %% [markdown]
# How sharp is sharp enough? For each query of the explorer, the two best videos, the gap between their
# scores, the largest weight of **your** `soft_lookup` at a few values of $\beta$, and the smallest $\beta$ of
# the slider at which the best video gets at least 90 % of the weight:

# %%
with ac.student_code("dot_scores and soft_lookup"):
    print(
        f"{'query':14s} {'best video (score)':40s} {'runner-up (score)':40s} {'gap':>5}  "
        + "  ".join(f"{f'β = {b:g}':>7}" for b in (0, 1, 8, 128))
        + "   smallest β with ≥ 90 %"
    )
    sharpness_table = {}  # query -> (best, runner-up, their scores, largest weight per β, smallest β with ≥ 90 %)
    for query in QUERIES:
        q = data.video_query(query)
        scores = np.asarray(dot_scores(q, K_videos), dtype=float)
        first, second = np.argsort(-scores, kind="stable")[:2]
        largest = {b: float(np.max(soft_lookup(b * q, K_videos, V_videos)[1])) for b in SHARPNESS}
        enough = next((b for b in SHARPNESS if largest[b] >= 0.9), None)
        sharpness_table[query] = (titles[first], titles[second], scores[first], scores[second], largest, enough)
        print(
            f"{query:14s} {f'{titles[first]} ({scores[first]:.2f})':40s} {f'{titles[second]} ({scores[second]:.2f})':40s} "
            f"{scores[first] - scores[second]:5.2f}  "
            + "  ".join(f"{largest[b]:7.3f}" for b in (0, 1, 8, 128))
            + f"   {enough if enough is not None else '> 128'}"
        )

# %% [markdown]
# **Things to try.**
# * Set β = 0: every video gets weight 1/11 ≈ 0.091 (table). Why, from the softmax formula?
# * Raise β. The ratio of the two best weights is $e^{\beta\cdot\text{gap}}$, so the gap between the two best
#   scores decides how much sharpness it takes before one video dominates. For "cats jumping" the gap is
#   only 0.04, and the best video passes 90 % of the weight at β = 64; for "cats sleeping" (gap 0.14)
#   β = 16 is enough (table). Whenever one video dominates, is it the orange one, the one `hard_lookup` returns?
# * Try "cooking music": the video tagged with everything beats "Jazz for cooking" (1.76 against 1.70).
#   That is the key-length effect of section 2. Is it the video you would want?

# %% [markdown]
# ## 8. Let's review
#
# * The dot product $q \cdot k = \lVert q\rVert\lVert k\rVert\cos\theta$ scores agreement of direction, scaled by
#   length. All scores of $m$ queries against $n$ keys are one matrix product, $Q K^\top$ (shape $m \times n$).
# * A long key scores high against many queries; cosine similarity removes that length effect.
# * Scaling the query by $c$ scales every score by $c$: the ranking stays, but the soft lookup sharpens
#   ($c > 1$) or flattens ($c < 1$). The query's length is an inverse temperature, $c = 1/\tau$ (lesson 4).
# * Attention keeps the plain dot product: it is cheap, and the lengths it keeps are learned (lesson 5);
#   the size of the scores is controlled by scaling (lesson 3).
# * **Query** = what you are looking for; **keys** = what each item advertises; **values** = what each item
#   delivers. Keys decide the weights, values are what gets blended.
# * **Hard lookup** returns the value of the best key; its output is flat between jumps, so its gradient is zero
#   almost everywhere.
# * **Soft lookup** returns $\sum_i \alpha_i v_i$ with $\alpha = \operatorname{softmax}(Kq)$: every value
#   contributes, the output changes smoothly with the query, and gradient descent can learn through it.
#   Larger scores make it sharper, closer to the hard lookup. Its weights are never 0 in exact arithmetic, but in
#   floating point a key whose score is more than about 104 (float32) or 745 (float64) below the best gets exactly 0
#   (underflow).
# * **Kernel regression** (Nadaraya–Watson) is a soft lookup with scores $-\lVert q-k\rVert^2/2\sigma^2$. When all
#   keys have one length it *is* dot-product attention with inverse temperature $1/\sigma^2$; QK-norm (unit queries
#   and keys, a learned scale $g$) is the kernel on normalised vectors with $g = 1/\sigma^2$.
#
# Next lesson: why the scores must be **scaled** by $1/\sqrt{d_k}$.

# %% [markdown]
# ## 9. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number (you may compute it
# with Python). Only the format is checked now; the answers are graded with your notebook.
#
# **Q1 (1 point).** What is $[1, 2, 3] \cdot [4, 5, 6]$?

# %% quiz="quiz-dot-value" key="32" points=1

# %% [markdown]
# **Q2 (1 point).** Two vectors have lengths 2 and 3, and the angle between them is 60°. What is their dot product?

# %% quiz="quiz-dot-angle" key="3.0" tol=0.001 points=1

# %% [markdown]
# **Q3 (1 point).** In the video-search picture of attention, what plays the role of the **keys**?
#
# * **a** — the text you type in the search box
# * **b** — the titles and tags of the videos
# * **c** — the video files themselves
# * **d** — the ranking shown to you

# %% quiz="quiz-keys-role" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** A soft lookup over 11 videos whose keys all give the query the same score: what weight
# does each video get? (Give the number, e.g. as a fraction computed in Python.)

# %% quiz="quiz-equal-weights" key="1 / 11" tol=0.001 points=1

# %% [markdown]
# **Q5 (1 point).** Why can a network learn *through* a soft lookup but not through a hard one?
#
# * **a** — the soft lookup is faster to compute
# * **b** — the soft lookup's output changes smoothly with the query and keys, so it has useful gradients; the hard lookup's output is piecewise constant, with zero gradient almost everywhere
# * **c** — the hard lookup cannot handle more than one query
# * **d** — the soft lookup always returns the best match

# %% quiz="quiz-why-soft" choices="abcd" key="b" points=1

# %% [markdown]
# **Q6 (1 point).** Why did "Top 100 viral moments" score so well for "cats jumping" under the dot product?
#
# * **a** — its key is long (large entries in every tag), and the dot product grows with length
# * **b** — it is the most recent video
# * **c** — its value vector is the largest
# * **d** — the dot product is the same as cosine similarity

# %% quiz="quiz-length-bias" choices="abcd" key="a" points=1

# %% [markdown]
# **Q7 (1 point).** A Gaussian-kernel lookup with bandwidth $\sigma$ over keys that all have length 1 gives the same
# weights as dot-product attention whose scores $q\cdot k$ are multiplied by
#
# * **a** — $\sigma$
# * **b** — $1/\sigma$
# * **c** — $1/\sigma^2$
# * **d** — $2\sigma^2$

# %% quiz="quiz-kernel-temperature" choices="abcd" key="c" points=1

# %% [markdown]
# **Q8 — free answer (3 points, graded by hand).** A search engine shows you the single best match, yet a
# Transformer blends *all* values. In 3–5 sentences, explain why the blend is the right choice inside a
# neural network, and what the sharpness (the size of the scores, for instance the length of the query)
# controls. Refer to the experiment.
#
# <details><summary>Before you hand in</summary>
#
# A full answer:
# * says what a network needs from its lookup in order to learn (what gradient descent uses);
# * describes what the hard lookup's output does as the query moves, with a number from section 6's printout;
# * says what the soft lookup does instead, also from the printout;
# * says what making the scores larger or smaller does to the soft lookup, at both extremes.
# </details>

# %% [markdown] manual="quiz-free-hard-vs-soft" points=3
# ### BEGIN SOLUTION
# *Model answer.* Inside a network the lookup must be learned: the queries and keys are produced by
# parameters that gradient descent adjusts, so the output must change smoothly when they change. The
# hard lookup's output is piecewise constant — in the experiment it changed at only 2 of the 200
# steps and was flat, with slope exactly zero, at the other 198 — so its gradient is zero almost everywhere.
# The soft lookup changed at every step, so the scores receive a signal. Blending also lets one output combine
# information from several relevant items instead of discarding the runner-up. The size of the scores
# (sharpness, an inverse temperature; a longer query gives larger scores) sets how peaked the softmax is: small
# scores give near-uniform weights, large scores approach the hard argmax.
#
# *Rubric (3 points).* 1 point: learning needs gradients / a smooth dependence of the output on queries
# and keys. 1 point: the hard lookup is piecewise constant with zero gradient almost everywhere, citing
# the experiment (flat stretches and jumps vs a smooth curve, counts of changing steps). 1 point: sharpness /
# score size moves the soft lookup between uniform averaging and argmax (or: blending combines several relevant
# values).
# ### END SOLUTION
