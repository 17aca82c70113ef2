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
# **Attention, from the dot product up** · lesson 2
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
# 4. explain with a measurement why neural networks use the soft version.
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

fig, ax = plt.subplots(figsize=(5.6, 4.4))
for (name, vec), colour in zip(others.items(), plots.COLORS):
    ax.annotate("", xy=vec, xytext=(0, 0), arrowprops=dict(arrowstyle="->", lw=1.8, color=colour))
    ax.text(vec[0] + 0.05, vec[1] + 0.05, f"{name}\nq·k = {reference @ vec:+.2f}", color=colour, fontsize=9)
ax.annotate("", xy=reference, xytext=(0, 0), arrowprops=dict(arrowstyle="->", lw=3, color="black"))
ax.text(reference[0] + 0.05, reference[1] - 0.25, "query q", fontsize=10)
ax.set_xlim(-1.6, 3.0)
ax.set_ylim(-1.2, 2.1)
ax.set_aspect("equal")
ax.axhline(0, lw=0.5, color="grey")
ax.axvline(0, lw=0.5, color="grey")
ax.set_xlabel("dimension 1")
ax.set_ylabel("dimension 2")
ax.set_title("Dot products of the query q = (1, 0.5) with four keys (d = 2)")
plots.show(
    fig,
    name="02_arrows",
    alt="Arrows in the plane: the query q = (1, 0.5) in black and four keys. "
    + "; ".join(f"{name} {tuple(vec.tolist())}: q·k = {reference @ vec:+.2f}" for name, vec in others.items())
    + ". The score is largest for the key pointing the same way, 0 for the orthogonal one, "
    "negative for the opposite one.",
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
# <details><summary>Hint</summary>
#
# The matrix product `@` treats a 1-D array on its left like a single row, and a 2-D array row by row.
# Which matrix has to stand on its right so that column $i$ of the result belongs to key $i$?
# </details>


# %% answer="dot-scores"
def dot_scores(q, K):
    """Dot-product scores. q: (d,) or (m, d); K: (n, d). Returns (n,) or (m, n)."""
    ### BEGIN SOLUTION
    return q @ K.T
    ### END SOLUTION


# %% tests="dot-scores-tests" points=2
_q = np.array([1.0, 2.0])
_K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])  # n = 4 keys of size d = 2
# by hand: [1·1 + 2·0, 1·0 + 2·1, 1·1 + 2·1, -1·1 + 0·2] = [1, 2, 3, -1]
_mistakes = {
    "these are cosine similarities: the dot product is not divided by the lengths.": [
        1 / 5**0.5,
        2 / 5**0.5,
        3 / 10**0.5,
        -1 / 5**0.5,
    ],
    "these are the scores divided by d (a mean of the products); the dot product is their sum.": [0.5, 1.0, 1.5, -0.5],
}
checks.expect_close(
    checks.call(dot_scores, _q, _K), [1.0, 2.0, 3.0, -1.0], "dot_scores on the worked example", mistakes=_mistakes
)
_Q = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, -1.0]])  # m = 3 queries
_S = [
    [1.0, 2.0, 3.0, -1.0],  # row j: query j against the 4 keys
    [0.0, 1.0, 1.0, 0.0],
    [1.0, -1.0, 0.0, -1.0],
]
checks.expect_close(
    dot_scores(_Q, _K),
    _S,
    "dot_scores for 3 queries against 4 keys",
    mistakes={
        "the result is transposed: row j must hold query j's scores against every key (shape (m, n)).": np.transpose(_S)
    },
)


### BEGIN HIDDEN TESTS
def _dot_scores_hidden():
    rng = np.random.default_rng(21)
    m, n, d = 3, 7, 5  # all sizes distinct
    Q, K = rng.standard_normal((m, d)), rng.standard_normal((n, d))
    want = torch.nn.functional.linear(torch.from_numpy(Q), torch.from_numpy(K)).numpy()  # Q K^T, by torch
    norms = np.linalg.norm(Q, axis=1)[:, None] * np.linalg.norm(K, axis=1)[None]
    mistakes = {
        "these are cosine similarities: the dot product is not divided by the lengths.": want / norms,
        "the result is transposed: row j must hold query j's scores against every key (q @ K.T, shape (m, n)).": want.T,
        "these are (negative) distances, not dot products.": -np.linalg.norm(Q[:, None] - K[None], axis=-1),
        "these are the scores divided by d (a mean of the products); the dot product is their sum.": want / d,
    }
    checks.expect_close(dot_scores(Q, K), want, "dot_scores for a batch of queries", mistakes=mistakes)
    checks.expect_close(
        dot_scores(Q[1], K),
        want[1],
        "dot_scores for one query",
        mistakes={k: v[1] if v.shape == want.shape else v[:, 1] for k, v in mistakes.items()},
    )
    one_key = dot_scores(Q, K[:1])  # n = 1: still one column per key
    checks.expect_close(one_key, want[:, :1], "dot_scores against a single key (n = 1, shape (m, 1))")


_dot_scores_hidden()
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
# scaling $q$ by $c$ has the same effect as dividing every score by a temperature $T = 1/c$, the knob
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
# best-scoring key: one array of shape `(d_v,)` — not its index, not its score, not a tuple.
#
# <details><summary>Hint</summary>
#
# `np.argmax` returns the position of the largest entry of an array; that position picks a row of `V`.
# </details>


# %% answer="hard-lookup"
def hard_lookup(q, K, V):
    """The value of the key that matches q best. q: (d,), K: (n, d), V: (n, d_v) -> (d_v,)"""
    ### BEGIN SOLUTION
    return V[np.argmax(K @ q)]
    ### END SOLUTION


# %% tests="hard-lookup-tests" points=2
_K2 = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])  # n = 3 keys, d = 2
_V2 = np.array(
    [[10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0, 23.0], [30.0, 31.0, 32.0, 33.0]]
)  # d_v = 4: row i is the value of key i
_got = checks.call(hard_lookup, np.array([0.2, 0.9]), _K2, _V2)  # scores [0.2, 0.9, -0.2]: key 1 wins
checks.expect(
    not isinstance(_got, (tuple, list)),
    f"hard_lookup should return only the value row V[i] (shape (4,)), not a pair or list: got {_got!r}.",
)
checks.expect(
    np.ndim(_got) == 1,
    f"hard_lookup should return the value row V[i] (shape (4,)), not {_got!r}: "
    "return the value, not the index or the score.",
)
checks.expect_no_mistake(
    _got,
    "hard_lookup on the worked example",
    mistakes={
        "this returns the key row K[i]; return the value row V[i].": _K2[1],
        "this is column i of V; the value of key i is row i of V.": _V2[:, 1],
        "this is the value of the *worst* key: use the largest score, not the smallest.": _V2[2],
    },
)
checks.expect_close(_got, [20.0, 21.0, 22.0, 23.0], "hard_lookup on the worked example")


### BEGIN HIDDEN TESTS
def _hard_lookup_hidden():
    rng = np.random.default_rng(22)
    n, d, d_v = 9, 4, 6
    K, V = rng.standard_normal((n, d)), rng.standard_normal((n, d_v))
    for trial in range(5):
        q = rng.standard_normal(d)
        scores = torch.nn.functional.linear(torch.from_numpy(q), torch.from_numpy(K))
        best, worst = int(torch.argmax(scores)), int(torch.argmin(scores))
        got = hard_lookup(q, K, V)
        checks.expect(not isinstance(got, (tuple, list)), "hard_lookup should return only the value row V[i].")
        checks.expect(np.ndim(got) == 1, "hard_lookup should return the value row V[i], not the index or the score.")
        checks.expect_no_mistake(
            got,
            f"hard_lookup (trial {trial})",
            mistakes={
                "this returns the key row K[i]; return the value row V[i].": K[best],
                "this is column i of V; the value of key i is row i of V.": V[:, best]
                if best < d_v
                else np.full(n, np.nan),
            },
        )
        mistakes = {
            "this is the value of the *worst* key: use the largest score, not the smallest.": V[worst],
            "this ranks by cosine similarity; rank by the plain dot product.": V[
                int(np.argmax(K @ q / np.linalg.norm(K, axis=1)))
            ],
        }
        if np.argmax(K @ q / np.linalg.norm(K, axis=1)) == best:
            del mistakes["this ranks by cosine similarity; rank by the plain dot product."]
        checks.expect_close(got, V[best], f"hard_lookup (trial {trial})", mistakes=mistakes)
    # all scores negative: the best key is still the largest score, not the largest |score|
    q = -np.abs(rng.standard_normal(d))
    Kp = np.abs(K)
    s = Kp @ q
    checks.expect_close(
        hard_lookup(q, Kp, V),
        V[int(np.argmax(s))],
        "hard_lookup when every score is negative",
        mistakes={"this picks the largest |score|; pick the largest score.": V[int(np.argmax(np.abs(s)))]},
    )


_hard_lookup_hidden()
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
# The exponential makes every weight positive and turns *differences* of scores into *ratios* of
# weights: $\alpha_i / \alpha_j = e^{s_i - s_j}$. (Lesson 4 makes softmax safe for huge scores; the
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
# <details><summary>Hint</summary>
#
# `np.exp` works entry by entry. A weighted sum of the rows of `V` is a vector–matrix product.
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
# Worked example: the keys and values of the hard-lookup check, query (1, 0): scores [1, 0, -1].
_res = checks.call(soft_lookup, np.array([1.0, 0.0]), _K2, _V2)
checks.expect(isinstance(_res, (tuple, list)) and len(_res) == 2, "soft_lookup should return a pair (output, weights).")
_out, _w = _res
checks.expect(
    not (np.shape(_out) == (3,) and np.shape(_w) == (4,)),
    "the pair is in the wrong order: you returned (weights, output); return (output, weights), "
    "the blended value first.",
)
checks.expect_shape(_w, (3,), "weights (one per key)")
checks.expect_shape(_out, (4,), "output (one entry per value dimension, d_v = 4)")
_e = np.exp([1.0, 0.0, -1.0])
_want_w = _e / _e.sum()  # [e, 1, 1/e] / (e + 1 + 1/e)
checks.expect_no_mistake(
    _w,
    "weights on the worked example",
    mistakes={
        "the weights favour the worst matches: use exp(+score), not exp(-score).": _want_w[::-1],
        "the weights are all equal: they must depend on the scores.": np.full(3, 1 / 3),
        "the weights do not sum to 1: divide the exponentials by their sum.": _e,
    },
)
checks.expect(
    bool(np.all(np.isfinite(_w))),
    "the weights contain NaN or inf: the raw scores here sum to 0, so "
    "dividing them by their sum fails: exponentiate first.",
)
checks.expect(abs(float(np.sum(_w)) - 1) < 1e-6, f"the weights should sum to 1, they sum to {float(np.sum(_w)):.4f}.")
checks.expect(bool(np.all(np.asarray(_w) > 0)), "every weight should be positive (softmax never gives exactly 0).")
checks.expect_close(_w, _want_w, "weights on the worked example")
checks.expect_close(
    _out,
    _want_w @ _V2,
    "output on the worked example",
    mistakes={
        "the output sums the values without the weights.": _V2.sum(0),
    },
)


### BEGIN HIDDEN TESTS
def _soft_lookup_hidden():
    rng = np.random.default_rng(23)
    n, d, d_v = 8, 5, 3
    K, V, q = rng.standard_normal((n, d)), rng.standard_normal((n, d_v)), rng.standard_normal(d)
    scores = torch.nn.functional.linear(torch.from_numpy(q), torch.from_numpy(K))
    weights = torch.softmax(scores, dim=-1).numpy()  # reference: torch's softmax
    s = scores.numpy()
    res = soft_lookup(q, K, V)
    checks.expect(
        isinstance(res, (tuple, list)) and len(res) == 2, "soft_lookup should return a pair (output, weights)."
    )
    out, w = res
    checks.expect(
        not (np.shape(out) == (n,) and np.shape(w) == (d_v,)),
        "the pair is in the wrong order: you returned (weights, output); return (output, weights).",
    )
    checks.expect_close(
        w,
        weights,
        "soft_lookup weights",
        mistakes={
            "the weights do not sum to 1: divide the exponentials by their sum.": np.exp(s),
            "the weights are the raw scores divided by their sum: exponentiate first.": s / s.sum(),
            "the weights favour the worst matches: use exp(+score), not exp(-score).": np.exp(-s) / np.exp(-s).sum(),
            "the weights are all equal: they must depend on the scores.": np.full(n, 1 / n),
        },
    )
    checks.expect_close(
        out,
        weights @ V,
        "soft_lookup output",
        mistakes={
            "the output sums the values without the weights.": V.sum(0),
        },
    )
    # d_v = d: blending the keys instead of the values is now recognisable
    V2 = rng.standard_normal((n, d))
    out2, _ = soft_lookup(q, K, V2)
    checks.expect_close(
        out2,
        weights @ V2,
        "soft_lookup output with d_v = d",
        mistakes={"the output blends the keys; blend the values V.": weights @ K},
    )
    # a longer query: the same keys, scores 3 times larger, sharper weights
    _, w3 = soft_lookup(3 * q, K, V)
    checks.expect_close(w3, torch.softmax(3 * scores, dim=-1).numpy(), "soft_lookup weights for the query 3q")


_soft_lookup_hidden()
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
    print(f"{'c':>5}  {'‖c·q‖':>6}  {'T = 1/c':>7}  {'largest weight':>14}  {'smallest weight':>15}  on")
    for c in (0.25, 1.0, 4.0, 16.0):
        _, weights_c = soft_lookup(c * q_videos, K_videos, V_videos)
        print(
            f"{c:5.2f}  {np.linalg.norm(c * q_videos):6.2f}  {1 / c:7.3g}  {weights_c.max():14.3f}  "
            f"{weights_c.min():15.4f}  {titles[int(np.argmax(weights_c))]}"
        )
    print(f"(uniform over the {len(titles)} videos would be {1 / len(titles):.3f} each)")


# %% [markdown]
# The same direction, four lengths: at $c = 0.25$ the weights are close to uniform (0.114 at most, against
# 0.091 for uniform), at $c = 16$ the best video takes more than half of the weight, and the winner never
# changes. Multiplying the query by $c$ is the
# same as dividing the scores by a **temperature** $T = 1/c$; lesson 4 gives the temperature its own
# knob and measures it with entropy.

# %% [markdown]
# ## 5. Experiment: why networks use the soft version
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
    fig, ax = plt.subplots(figsize=(6.6, 3.8))
    ax.plot(lambdas, hard_path, color=plots.COLORS[0], lw=2.5, label="hard lookup")
    for (beta, path), colour in zip(soft_path.items(), plots.COLORS[1:]):
        ax.plot(lambdas, path, color=colour, lw=1.8, label=f"soft lookup, query × {beta:g}")
    ax.set_xlabel("λ  (0 = 'cats jumping', 1 = 'dogs sleeping')")
    ax.set_ylabel("energy of the returned value")
    ax.set_title("Moving the query smoothly: what comes back (11 videos)")
    ax.legend()
    plots.show(
        fig,
        name="02_hard_vs_soft",
        alt=(
            f"Line chart of the energy of the returned value against λ from 0 to 1. The hard lookup is flat "
            f"except for {len(jumps)} jumps (at λ = {', '.join(f'{x:.3f}' for x in jumps)}), from "
            f"{hard_path[0]:.2f} to {hard_path[-1]:.2f}. The soft lookup moves smoothly from {soft_path[1.0][0]:.2f} "
            f"to {soft_path[1.0][-1]:.2f}; with the query 4 times longer it moves from {soft_path[4.0][0]:.2f} to "
            f"{soft_path[4.0][-1]:.2f}, staying closer to the hard lookup and bending more steeply near λ = 1."
        ),
    )

    print(
        f"hard lookup: the output changes at {np.count_nonzero(hard_steps)} of {len(hard_steps)} steps; "
        f"at the other {np.count_nonzero(hard_steps == 0)} its slope is exactly 0."
    )
    for beta, steps in soft_steps.items():
        print(
            f"soft lookup, query × {beta:g}: the output changes at {np.count_nonzero(steps)} of {len(steps)} steps; "
            f"the smallest change per step is {steps.min():.2e}, the largest {steps.max():.2e}; mean distance "
            f"from the hard lookup's curve {np.abs(soft_path[beta] - hard_path).mean():.3f}."
        )

# %% [markdown]
# The printout is the argument. The hard lookup's output is flat almost everywhere and then jumps, so
# its derivative with respect to the query is zero almost everywhere (and undefined at the jumps):
# gradient descent gets no signal about which way to move the query. The soft lookup's output changes at
# every one of the 200 steps, so its slope with respect to the query is never zero along this path, and
# gradient descent learns which way to move it. With the query 4 times longer, the soft curve stays
# closer to the hard one (its mean distance from it is smaller) and its largest change per step is larger
# (both printed): softmax is a *smooth*
# version of argmax, and the inverse temperature sets how close to hard it gets. Lesson 3 shows why
# the size of the scores needs controlling.

# %% [markdown]
# ## 6. Explore: search the library with your own functions
#
# Pick a query and a **sharpness** $\beta$: the query is multiplied by $\beta$ before **your**
# `soft_lookup`, so $\beta$ is the inverse temperature of section 4 ($\beta = 1/T$). The left chart shows
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
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.7), sharey=True, layout="constrained")
        self.rows = np.arange(n)
        # one collection of bars per chart: a single artist to redraw, however many videos there are
        self.score_bars = PolyCollection(self.bar_corners(np.zeros(n)), facecolors=plots.COLORS[0])
        self.weight_bars = PolyCollection(self.bar_corners(np.zeros(n)), facecolors=plots.COLORS[0])
        ax1.add_collection(self.score_bars)
        ax2.add_collection(self.weight_bars)
        ax1.set_yticks(self.rows, titles)
        ax1.set_ylim(n - 0.5, -0.5)  # first video on top
        ax1.set_xlim(0, 2.0)
        ax2.set_xlim(0, 1.0)
        ax2.axvline(1 / n, color=plots.COLORS[7], lw=1, ls=":")
        ax1.set_xlabel("dot-product score (your dot_scores)")
        ax2.set_xlabel(f"weight (your soft_lookup); dotted: uniform 1/{n}")
        ax1.set_title("scores; orange: your hard_lookup's pick")
        ax2.set_title("weights of the soft lookup, query × β")
        self.dynamic = [self.score_bars, self.weight_bars]
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
        colours = [plots.COLORS[1] if i == self.best else plots.COLORS[0] for i in self.rows]
        for bars, lengths in ((self.score_bars, scores), (self.weight_bars, weights)):
            bars.set_verts(self.bar_corners(lengths))
            bars.set_facecolor(colours)
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
        return (
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
    for query in QUERIES:
        q = data.video_query(query)
        scores = np.asarray(dot_scores(q, K_videos), dtype=float)
        first, second = np.argsort(-scores, kind="stable")[:2]
        largest = {b: float(np.max(soft_lookup(b * q, K_videos, V_videos)[1])) for b in SHARPNESS}
        enough = next((b for b in SHARPNESS if largest[b] >= 0.9), None)
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
# ## 7. Let's review
#
# * The dot product $q \cdot k = \lVert q\rVert\lVert k\rVert\cos\theta$ scores agreement of direction, scaled by
#   length. All scores of $m$ queries against $n$ keys are one matrix product, $Q K^\top$ (shape $m \times n$).
# * A long key scores high against many queries; cosine similarity removes that length effect.
# * Scaling the query by $c$ scales every score by $c$: the ranking stays, but the soft lookup sharpens
#   ($c > 1$) or flattens ($c < 1$). The query's length is an inverse temperature, $c = 1/T$ (lesson 4).
# * Attention keeps the plain dot product: it is cheap, and the lengths it keeps are learned (lesson 5);
#   the size of the scores is controlled by scaling (lesson 3).
# * **Query** = what you are looking for; **keys** = what each item advertises; **values** = what each item
#   delivers. Keys decide the weights, values are what gets blended.
# * **Hard lookup** returns the value of the best key; its output jumps, so it gives no gradient.
# * **Soft lookup** returns $\sum_i \alpha_i v_i$ with $\alpha = \operatorname{softmax}(Kq)$: every value
#   contributes, the output changes smoothly with the query, and gradient descent can learn through it.
#   Larger scores make it sharper, closer to the hard lookup.
#
# Next lesson: why the scores must be **scaled** by $1/\sqrt{d_k}$.

# %% [markdown]
# ## 8. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`. Multiple-choice answers are a letter in quotes, e.g. `"a"`;
# numeric answers are a number (you may compute it with Python). Only the format is checked now;
# the answers are graded with your notebook.
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
# **Q7 — free answer (3 points, graded by hand).** A search engine shows you the single best match, yet a
# Transformer blends *all* values. In 3–5 sentences, explain why the blend is the right choice inside a
# neural network, and what the sharpness (the size of the scores, for instance the length of the query)
# controls. Refer to the experiment.

# %% [markdown] manual="quiz-free-hard-vs-soft" points=3
# ### BEGIN SOLUTION
# *Model answer.* Inside a network the lookup must be learned: the queries and keys are produced by
# parameters that gradient descent adjusts, so the output must change smoothly when they change. The
# hard lookup's output is piecewise constant — in the experiment it changed at only 2 of the 200
# steps and had slope exactly zero elsewhere — so it gives no gradient. The soft lookup changed at every
# step, so the scores receive a signal. Blending also lets one output combine information from several
# relevant items instead of discarding the runner-up. The size of the scores (sharpness, an inverse
# temperature; a longer query gives larger scores) sets how peaked the softmax is: small scores give
# near-uniform weights, large scores approach the hard argmax.
#
# *Rubric (3 points).* 1 point: learning needs gradients / a smooth dependence of the output on queries
# and keys. 1 point: the hard lookup is piecewise constant with zero gradient almost everywhere, citing
# the experiment (jumps vs smooth curve, counts of changing steps). 1 point: sharpness / score size moves
# the soft lookup between uniform averaging and argmax (or: blending combines several relevant values).
# ### END SOLUTION
