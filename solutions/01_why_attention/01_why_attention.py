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
# # Lesson 1 — Why attention?
#
# **Attention, from the dot product up** · lesson 1
#
# Before we build attention, we look at what it replaced. A recurrent neural network (RNN) reads a
# sentence the way you read a ticker tape: one token at a time, carrying a single running summary
# forward. In this lesson you build that reader yourself, then *measure* what it forgets and how long
# it takes.
#
# **Learning goals.** By the end you can
# 1. write one step of a vanilla RNN and run it over a sequence;
# 2. explain why the whole input must squeeze through one fixed-size vector;
# 3. measure how the influence of token $t$ on the final state fades with distance, and explain it
#    with the chain rule;
# 4. say in one sentence what attention does differently — and see that its influence does not fade;
# 5. measure what it costs that an RNN's $T$ steps must run one after another, and what attention costs instead.
#
# **You need:** numpy arrays and matrix products (`A @ B`). From **lesson 0** (the PyTorch primer):
# tensors, autograd and `torch.autograd.functional.jacobian`, which this lesson uses to measure
# derivatives, and `nn.Linear`-style weights set by hand inside `torch.no_grad()`.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Cells that start with
# `# YOUR CODE HERE` are exercises: replace `raise NotImplementedError()` with your code. The cell
# right after each exercise runs *visible checks*; when grading, hidden checks with other shapes run
# as well, so make your code general. The toolbar's **Validate** button runs every check at once.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. Reading one token at a time
#
# Each token $t$ of a sentence arrives as an embedding vector $x_t \in \mathbb{R}^{d_x}$. In a trained
# model the embeddings are learned too: one row per word of the vocabulary, in a table that PyTorch
# calls `nn.Embedding` (lessons 7 and 9 use it). Here they are fixed random vectors, one per word.
# An RNN keeps a *hidden state* $h_t \in \mathbb{R}^{d_h}$ and updates it with every token:
#
# $$h_t = \tanh\left(W_h\, h_{t-1} + W_x\, x_t + b\right), \qquad h_0 = \text{a fixed start state (often } 0).$$
#
# * $W_h \in \mathbb{R}^{d_h \times d_h}$ mixes the old state into the new one,
# * $W_x \in \mathbb{R}^{d_h \times d_x}$ brings in the new token,
# * $b \in \mathbb{R}^{d_h}$ is a bias, and $\tanh$ squashes every entry into $(-1, 1)$.
#
# The same three parameters are used at every step: the network has no idea how long the sentence is.
#
# **Row vectors in code.** In numpy (and PyTorch) a batch of vectors is stored as the *rows* of an
# array, so $W_h h$ for a batch of states `h` of shape `(B, d_h)` becomes `h @ W_h.T`. Keep the shapes
# in mind: `(B, d_h) @ (d_h, d_h) -> (B, d_h)` and `(B, d_x) @ (d_x, d_h) -> (B, d_h)`. (PyTorch's
# `nn.RNN`, used later in this lesson, stores $W_h$ and $W_x$ the same way as here, like `nn.Linear`.)

# %%
sentence = data.SHORT_SENTENCE
d_x, d_h = 8, 6
X = data.embed(sentence, d_x)  # (T, d_x): one row per token
print("tokens:", sentence)
print(
    "embeddings X:",
    X.shape,
    "— the word 'the' appears twice and gets the same row both times:",
    np.array_equal(X[0], X[4]),
)


# %% [markdown]
# ### Exercise 1.1 — one step of an RNN (2 points)
#
# Implement `rnn_step(h, x, W_h, W_x, b)` returning the new state $\tanh(W_h h + W_x x + b)$, with states
# and inputs stored as row vectors. It must work for a single state `h` of shape `(d_h,)` with `x` of
# shape `(d_x,)`, and for a batch: `h` of shape `(B, d_h)` with `x` of shape `(B, d_x)`, one new state per row.
#
# <details><summary>Hint</summary>
#
# For row vectors, $W_h h$ is `h @ W_h.T` (and likewise for $W_x x$); this works for one vector and for a
# batch of rows alike. `np.tanh` applies $\tanh$ entry by entry.
# </details>


# %% answer="rnn-step"
def rnn_step(h, x, W_h, W_x, b):
    """One step of a vanilla RNN.

    h:   (..., d_h) previous hidden state(s)
    x:   (..., d_x) current input(s)
    W_h: (d_h, d_h), W_x: (d_h, d_x), b: (d_h,)
    returns the new hidden state(s), shape (..., d_h)
    """
    ### BEGIN SOLUTION
    return np.tanh(h @ W_h.T + x @ W_x.T + b)
    ### END SOLUTION


# %% tests="rnn-step-tests" points=2
# Visible checks: a worked example you can verify by hand, then shapes.
_h = np.array([0.5, -1.0])
_x = np.array([1.0, 0.0, 2.0])
_W_h = np.array([[1.0, 0.0], [2.0, 1.0]])
_W_x = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.5]])
_b = np.array([0.1, -0.2])
# W_h h = [0.5, 0.0]; W_x x = [0.0, 2.0]; + b  ->  [0.6, 1.8]; then tanh
_mistakes = {  # what some common slips give on this example
    "tanh is missing: squash the sum with np.tanh.": [0.6, 1.8],
    "the bias b is missing.": np.tanh([0.5, 2.0]),
    "W_h is used without the transpose: for row vectors W_h h is written h @ W_h.T.": np.tanh([-1.4, 0.8]),
    "the previous state h is ignored.": np.tanh([0.1, 1.8]),
    "use tanh, not the logistic sigmoid.": 1 / (1 + np.exp(-np.array([0.6, 1.8]))),
}
checks.expect_close(
    checks.call(rnn_step, _h, _x, _W_h, _W_x, _b),
    np.tanh([0.6, 1.8]),
    "rnn_step on the worked example",
    mistakes=_mistakes,
)
_out = rnn_step(np.zeros((4, 2)), np.ones((4, 3)), _W_h, _W_x, _b)
checks.expect_shape(_out, (4, 2), "rnn_step for a batch of 4 states")
checks.expect(np.abs(_out).max() < 1, "every entry of the new state must lie in (-1, 1): did you apply tanh?")


### BEGIN HIDDEN TESTS
def _rnn_step_hidden():
    rng = np.random.default_rng(11)
    B, dh, dx = 3, 5, 4  # all sizes distinct, so a transposed weight cannot slip through
    h, x = rng.standard_normal((B, dh)), rng.standard_normal((B, dx))
    W_h, W_x, b = rng.standard_normal((dh, dh)), rng.standard_normal((dh, dx)), rng.standard_normal(dh)
    cell = torch.nn.RNNCell(dx, dh, nonlinearity="tanh").double()
    with torch.no_grad():  # the reference: PyTorch's RNN cell with our weights injected
        cell.weight_hh.copy_(torch.from_numpy(W_h))
        cell.weight_ih.copy_(torch.from_numpy(W_x))
        cell.bias_ih.copy_(torch.from_numpy(b))
        cell.bias_hh.zero_()
        want = cell(torch.from_numpy(x), torch.from_numpy(h)).numpy()
    pre = h @ W_h.T + x @ W_x.T + b
    mistakes = {
        "tanh is missing: the new state must be squashed with np.tanh.": pre,
        "the bias b is missing.": np.tanh(pre - b),
        "W_h is used without the transpose: for row vectors W_h h is written h @ W_h.T.": np.tanh(
            h @ W_h + x @ W_x.T + b
        ),
        "use tanh, not the logistic sigmoid.": 1 / (1 + np.exp(-pre)),
        "the previous state h is ignored.": np.tanh(x @ W_x.T + b),
    }
    checks.expect_close(rnn_step(h, x, W_h, W_x, b), want, "rnn_step on a batch", mistakes=mistakes)
    checks.expect_close(rnn_step(h[0], x[0], W_h, W_x, b), want[0], "rnn_step on a single state", mistakes=mistakes)


_rnn_step_hidden()
### END HIDDEN TESTS
checks.passed("rnn_step")


# %% [markdown]
# ### Exercise 1.2 — read a whole sequence (2 points)
#
# Now run the step over a sequence. `rnn_run(xs, h0, W_h, W_x, b)` takes the token embeddings
# `xs` of shape `(T, d_x)` and the start state `h0` of shape `(d_h,)`, and returns **all** hidden
# states stacked into shape `(T, d_h)`: row $t$ is the state right after reading token $t$ (so the
# last row is the final state $h_T$; `h0` itself is not included). The state after each token is what
# your `rnn_step` computes from the state before it and that token.
#
# <details><summary>Hint</summary>
#
# Start with `h = h0`; for every row `x` of `xs`, replace `h` by `rnn_step(h, x, W_h, W_x, b)` and keep it
# in a list; `np.stack` the list at the end.
# </details>


# %% answer="rnn-run"
def rnn_run(xs, h0, W_h, W_x, b):
    """Run a vanilla RNN over xs (T, d_x) from h0 (d_h,); return the states after each token, (T, d_h)."""
    ### BEGIN SOLUTION
    h, states = h0, []
    for x in xs:
        h = rnn_step(h, x, W_h, W_x, b)
        states.append(h)
    return np.stack(states)
    ### END SOLUTION


# %% tests="rnn-run-tests" points=2
# Visible checks: shapes, the first step, and that the state is carried from step to step. These call your
# rnn_run with PyTorch's RNN cell in place of your `rnn_step`, so that a mistake in exercise 1.1 costs
# points only there (your rnn_step was checked above).
def _reference_rnn_step(h, x, W_h, W_x, b):
    cell = torch.nn.RNNCell(W_x.shape[1], W_h.shape[0], nonlinearity="tanh").double()
    with torch.no_grad():
        for weight, value in ((cell.weight_hh, W_h), (cell.weight_ih, W_x), (cell.bias_ih, b)):
            weight.copy_(torch.as_tensor(np.asarray(value, dtype=float)))
        cell.bias_hh.zero_()
        return cell(torch.as_tensor(np.asarray(x, dtype=float)), torch.as_tensor(np.asarray(h, dtype=float))).numpy()


_rnn_run = checks.with_references(rnn_run, rnn_step=_reference_rnn_step)
_rng = np.random.default_rng(0)
_xs, _h0 = _rng.standard_normal((5, 3)), np.array([0.5, -0.25])
_H = checks.call(_rnn_run, _xs, _h0, _W_h, _W_x, _b)
checks.expect_shape(_H, (5, 2), "rnn_run on 5 tokens with d_h = 2")
_first = _reference_rnn_step(_h0, _xs[0], _W_h, _W_x, _b)  # the state after token 0
checks.expect(
    not (checks.is_close(_H[-1], _first) and not checks.is_close(_H[0], _first)),
    "the states come out in reverse order: row t must be the state after token t.",
)
checks.expect_close(
    _H[0],
    _first,
    "the first row (state after token 0)",
    mistakes={
        "the tokens are read back to front: read xs in order.": _reference_rnn_step(_h0, _xs[-1], _W_h, _W_x, _b),
        "the start state h0 is ignored: the first step starts from h0, not from zeros.": _reference_rnn_step(
            np.zeros(2), _xs[0], _W_h, _W_x, _b
        ),
    },
)
checks.expect_close(
    _H[1],
    _reference_rnn_step(_H[0], _xs[1], _W_h, _W_x, _b),
    "the second row (state after token 1)",
    mistakes={
        "every step starts from h0: carry the new state into the next step.": _reference_rnn_step(
            _h0, _xs[1], _W_h, _W_x, _b
        )
    },
)


### BEGIN HIDDEN TESTS
def _rnn_run_hidden():
    rng = np.random.default_rng(12)
    T, dh, dx = 7, 5, 4
    xs, h0 = rng.standard_normal((T, dx)), rng.standard_normal(dh)
    W_h, W_x, b = 0.5 * rng.standard_normal((dh, dh)), rng.standard_normal((dh, dx)), rng.standard_normal(dh)
    rnn = torch.nn.RNN(dx, dh, nonlinearity="tanh").double()
    with torch.no_grad():
        rnn.weight_hh_l0.copy_(torch.from_numpy(W_h))
        rnn.weight_ih_l0.copy_(torch.from_numpy(W_x))
        rnn.bias_ih_l0.copy_(torch.from_numpy(b))
        rnn.bias_hh_l0.zero_()
        want = rnn(torch.from_numpy(xs), torch.from_numpy(h0)[None])[0].numpy()  # (T, dh)
        backwards = rnn(torch.from_numpy(xs[::-1].copy()), torch.from_numpy(h0)[None])[0].numpy()
    step = lambda h, x: np.tanh(h @ W_h.T + x @ W_x.T + b)
    mistakes = {
        "every step starts from h0: carry the new state into the next step.": np.stack([step(h0, x) for x in xs]),
        "the tokens are read back to front: read xs in order.": backwards,
        "the states come out in reverse order: row t must be the state after token t.": want[::-1],
        "the start state h0 is ignored: the first step starts from h0, not from zeros.": rnn(
            torch.from_numpy(xs), torch.zeros(1, dh, dtype=torch.float64)
        )[0]
        .detach()
        .numpy(),
    }
    checks.expect_close(_rnn_run(xs, h0, W_h, W_x, b), want, f"rnn_run on {T} tokens", mistakes=mistakes)
    one = _rnn_run(xs[:1], h0, W_h, W_x, b)
    checks.expect_shape(one, (1, dh), "rnn_run on a single token")


_rnn_run_hidden()
### END HIDDEN TESTS
checks.passed("rnn_run")

# %% [markdown]
# ## 2. One vector to hold everything
#
# Whatever the length of the text, everything the RNN knows about it when it reaches the end sits
# in the final state $h_T$: $d_h$ numbers. A translation model built this way (an *encoder–decoder*
# RNN) had to start writing the translation from that one vector. Let us run your RNN over texts of
# growing length and count.

# %%
_rng = np.random.default_rng(1)
W_h = _rng.standard_normal((d_h, d_h)) / np.sqrt(d_h)
W_x = _rng.standard_normal((d_h, d_x)) / np.sqrt(d_x)
b = np.zeros(d_h)

with ac.student_code("rnn_run"):
    for T in (6, 60, 600):
        xs = _rng.standard_normal((T, d_x))
        h_T = rnn_run(xs, np.zeros(d_h), W_h, W_x, b)[-1]
        print(
            f"{T:4d} tokens × {d_x} numbers = {T * d_x:5d} numbers in  ->  final state of {h_T.size} numbers "
            f"({T * d_x / h_T.size:.0f} input numbers per state number)"
        )

# %% [markdown]
# The state's size is fixed in advance, so longer texts are compressed harder. And the RNN must decide
# *while reading* what to keep, before it knows what will be asked. That is the **bottleneck**.
#
# There is a second problem, about *time*: the steps depend on each other, so $T$ tokens need $T$
# sequential steps. Step 600 cannot start before step 599 is done, however many processors are
# available. Section 5 measures what that costs.

# %% [markdown]
# ## 3. Early tokens fade
#
# How much does the final state still depend on token $t$? Measure it with the derivative
# $\partial h_T / \partial x_t$ (a $d_h \times d_x$ matrix; we report its size, the Frobenius norm, the
# square root of the sum of its squared entries). By the chain rule it is a product of one Jacobian per
# step in between:
#
# $$\frac{\partial h_T}{\partial x_t} = \frac{\partial h_T}{\partial h_{T-1}}\cdots\frac{\partial h_{t+1}}{\partial h_t}\,\frac{\partial h_t}{\partial x_t},
# \qquad \frac{\partial h_{s}}{\partial h_{s-1}} = \operatorname{diag}\!\left(1-h_s^2\right) W_h .$$
#
# Each factor contains $W_h$ and the derivative of $\tanh$, $1 - \tanh^2$, which is at most 1 and close
# to 0 where $\tanh$ is saturated (near $\pm 1$). If the factors shrink vectors, their product shrinks
# **geometrically** with the distance $T-t$: the token's influence vanishes. (If they stretched every
# vector, it would grow instead.) The same product appears when training: the gradient that should
# teach the network about an early token passes through it, which is the *vanishing gradient problem*.
#
# The per-step factor is easy to check with autograd's `jacobian` (lesson 0, section 3) on PyTorch's own
# RNN cell, with our weights copied into it:

# %%
_cell = torch.nn.RNNCell(d_x, d_h).double()
with torch.no_grad():  # PyTorch's cell with our W_h, W_x and b = 0
    _cell.weight_hh.copy_(torch.from_numpy(W_h))
    _cell.weight_ih.copy_(torch.from_numpy(W_x))
    _cell.bias_hh.zero_()
    _cell.bias_ih.zero_()
_x1, _h0 = torch.from_numpy(X[1]), torch.from_numpy(_rng.standard_normal(d_h))
_h1 = _cell(_x1, _h0).detach()
_J = torch.autograd.functional.jacobian(lambda h: _cell(_x1, h), _h0)  # (d_h, d_h) = ∂h_1/∂h_0
_formula = torch.diag(1 - _h1**2) @ torch.from_numpy(W_h)
print(f"∂h_1/∂h_0 from autograd vs diag(1 − h_1²) W_h: largest difference {(_J - _formula).abs().max().item():.1e}")
_sv = torch.linalg.svdvals(_J)
print(
    f"this one step stretches some directions by up to {_sv.max().item():.2f}× and shrinks others to "
    f"{_sv.min().item():.2f}× (its singular values)"
)

# %% [markdown]
# **Attention** takes a different route. To build the output for the last token it scores *every*
# token directly and takes a weighted average of their values (you will build this from lesson 2 on;
# in the course's row-vector notation $v_t = x_t W^V$):
#
# $$o_T = \sum_{t=1}^{T} \alpha_{T,t}\, v_t, \qquad \alpha_{T,t} \ge 0, \quad \sum_t \alpha_{T,t} = 1 .$$
#
# Token $t$ reaches $o_T$ in one step, whatever the distance. Whether the RNN's product of many such
# steps shrinks or grows is not visible from one step, which (as printed above) stretches some directions
# and shrinks others. The explorer below shows what happens with your own RNN; the experiment in section 5
# measures it with autograd.

# %% [markdown]
# ## 4. Explore: how far back can your RNN see?
#
# The explorer asks a simple question: if we replace token $t$ by a different random vector, how much
# does the final state change? It runs **your** `rnn_step` on a whole batch of sequences at once
# (sequence $t$ has token $t$ replaced, one more is the original, and 32 pairs are unrelated random texts)
# and plots, for every position, the distance between the changed and the original final state, against
# the distance of the replaced token from the end. It does the same for one attention layer with random projections (its output at the last
# position). The dashed line is how far apart the final states of two *unrelated* random texts end up,
# averaged over 32 pairs: a change that large means the replaced token rewrote the summary. Changes
# below $10^{-16}$ (rounding level) are drawn at $10^{-16}$.
#
# * **T** — the sequence length;
# * **recurrent scale** — multiplies $W_h$ (1 is a standard random initialisation; larger values make
#   every step stretch more).
#
# Sliders redraw when released; you can also click the number and type a value.

# %%
D_EXPLORE, T_MAX, UNRELATED_PAIRS, FLOOR = 8, 60, 32, 1e-16


def replacement_setup(T, recurrent_scale):
    """The explorer's RNN (d = 8), attention projections and inputs, the same for every student.

    Returns W_h, W_x, the input batch (T, B, 8) and the projections. Sequence j < T of the batch is the
    original with token j replaced, sequence T the original, then UNRELATED_PAIRS pairs of random texts."""
    rng = np.random.default_rng(0)
    W_h = recurrent_scale * rng.standard_normal((D_EXPLORE, D_EXPLORE)) / np.sqrt(D_EXPLORE)
    W_x = rng.standard_normal((D_EXPLORE, D_EXPLORE)) / np.sqrt(D_EXPLORE)
    xs, other = rng.standard_normal((T, D_EXPLORE)), rng.standard_normal((T, D_EXPLORE))
    projections = rng.standard_normal((3, D_EXPLORE, D_EXPLORE)) / np.sqrt(D_EXPLORE)  # W^Q, W^K, W^V
    unrelated = np.random.default_rng(1).standard_normal((T, 2 * UNRELATED_PAIRS, D_EXPLORE))
    replaced = np.repeat(xs[:, None], T + 1, axis=1)  # (T, T + 1, 8)
    replaced[np.arange(T), np.arange(T)] = other
    return W_h, W_x, np.concatenate([replaced, unrelated], axis=1), projections


def summarise(finals, T):
    """From the final states of the batch: the change for each replaced position (index = distance from
    the end) and the mean distance between the final states of the unrelated pairs."""
    change = np.linalg.norm(finals[:T] - finals[T], axis=-1)[::-1]
    pairs = finals[T + 1 :]
    return change, float(np.linalg.norm(pairs[0::2] - pairs[1::2], axis=-1).mean())


def attention_change(batch, projections, T):
    """How much one attention layer's output at the last position changes when token t is replaced."""
    seqs = torch.from_numpy(batch[:, : T + 1].transpose(1, 0, 2))  # (T + 1, T, 8): one sequence per row
    W_Q, W_K, W_V = torch.from_numpy(projections)
    out = F.scaled_dot_product_attention(seqs[:, -1:] @ W_Q, seqs @ W_K, seqs @ W_V)[:, 0]
    return (out[:T] - out[T]).norm(dim=-1).numpy()[::-1]


class ReplacementView(widgets.View):
    """Change of the final output when one token is replaced: your RNN and one attention layer."""

    def build(self, T, recurrent_scale):
        fig, ax = plt.subplots(figsize=(7.0, 3.5), layout="constrained")
        (self.rnn_line,) = ax.semilogy([], [], "o-", ms=3, color=plots.COLORS[0], label="your RNN (rnn_step)")
        (self.att_line,) = ax.semilogy([], [], "s-", ms=3, color=plots.COLORS[1], label="one attention layer")
        (self.unrelated_line,) = ax.semilogy(
            [-1, T_MAX], [1, 1], "--", lw=1, color=plots.COLORS[0], label="RNN: two unrelated texts"
        )
        ax.set_xlim(-1, T_MAX)
        ax.set_ylim(FLOOR / 3, 1e5)
        ax.set_xlabel("distance of the replaced token from the last token, T − 1 − t")
        ax.set_ylabel("change of the final output (log)")
        ax.legend(loc="upper right", ncol=3, fontsize=9)
        self.title = ax.set_title(" ")
        self.dynamic = [self.rnn_line, self.att_line, self.unrelated_line, self.title]
        return fig

    def update(self, T, recurrent_scale):
        W_h, W_x, batch, projections = replacement_setup(T, recurrent_scale)
        h = np.zeros((batch.shape[1], D_EXPLORE))
        for t in range(T):
            h = rnn_step(h, batch[t], W_h, W_x, np.zeros(D_EXPLORE))  # yours, on every sequence at once
        rnn_change, unrelated = summarise(np.asarray(h, dtype=float), T)
        att_change = attention_change(batch, projections, T)
        self.rnn_line.set_data(np.arange(T), np.maximum(rnn_change, FLOOR))
        self.att_line.set_data(np.arange(T), np.maximum(att_change, FLOOR))
        self.unrelated_line.set_ydata([unrelated, unrelated])
        far = np.nonzero(rnn_change > 0.1)[0]
        self.reach = int(far.max()) if far.size else -1
        self.title.set_text(f"RNN change > 0.1 up to distance {self.reach}")  # short: text is slow to draw
        self.numbers = (rnn_change, att_change, unrelated)

    def alt(self, T, recurrent_scale):
        rnn_change, att_change, unrelated = self.numbers
        return (
            f"Log-scale plot of how much the final output changes when the token at each distance from the "
            f"end is replaced, T = {T}, recurrent scale = {recurrent_scale:.2f}. Your RNN: {rnn_change[0]:.2g} "
            f"for the last token, {rnn_change[-1]:.2g} for the first; above 0.1 up to distance {self.reach}. "
            f"Two unrelated texts end {unrelated:.2f} apart. Attention: {att_change[0]:.2g} for the last token "
            f"(the query), between {att_change[1:].min():.2g} and {att_change[1:].max():.2g} at every other distance."
        )


widgets.explore(
    ReplacementView(),
    needs=["rnn_step"],
    T=widgets.slider("T (tokens)", 5, T_MAX, 30),
    recurrent_scale=widgets.float_slider("recurrent scale", 0.25, 4.0, 1.0, step=0.25),
)


# %% [markdown]
# **Things to try.** With scale 1, how many tokens back does a replacement still change the final state
# by more than 0.1 (the title says)? By more than $10^{-3}$? Then push the scale to 4. Attention's curve
# scatters around one level and shows no trend with distance, however far back the replaced token is.
#
# The cell below measures what the explorer shows at scales 1 and 4, with PyTorch's `nn.RNN` (our weights
# copied in) in place of your `rnn_step`, on exactly the explorer's inputs.


# %%
def reference_finals(T, recurrent_scale):
    """The explorer's batch run through PyTorch's nn.RNN with the same weights: all states (T, B, 8)."""
    W_h, W_x, batch, _ = replacement_setup(T, recurrent_scale)
    rnn = torch.nn.RNN(D_EXPLORE, D_EXPLORE).double()
    with torch.no_grad():
        rnn.weight_hh_l0.copy_(torch.from_numpy(W_h))
        rnn.weight_ih_l0.copy_(torch.from_numpy(W_x))
        rnn.bias_hh_l0.zero_()
        rnn.bias_ih_l0.zero_()
        states, _ = rnn(torch.from_numpy(batch))
    return states.numpy(), rnn, batch


def scale_report(T, recurrent_scale):
    states, rnn, batch = reference_finals(T, recurrent_scale)
    change, unrelated = summarise(states[-1], T)
    far = np.nonzero(change > 0.1)[0]
    reach = int(far.max())
    inside = np.maximum(change[: reach + 1], FLOOR)
    jumps = np.maximum(inside[1:] / inside[:-1], inside[:-1] / inside[1:]).max()  # neighbouring distances
    saturated = float((np.abs(states[:, T]) > 0.95).mean())  # along the original sequence
    original = torch.from_numpy(batch[:, T])
    J = torch.autograd.functional.jacobian(lambda xs: rnn(xs)[0][-1], original)  # (8, T, 8)
    return dict(
        reach=reach,
        n_big=int((change > 1).sum()),
        far_big=int(np.nonzero(change > 1)[0].max(initial=-1)),
        unrelated=unrelated,
        largest=float(change.max()),
        jumps=float(jumps),
        saturated=saturated,
        beyond=float(np.median(change[reach + 1 :])) if reach + 1 < T else float("nan"),
        grad_max=float(J.pow(2).sum(dim=(0, 2)).sqrt().max()),
    )


T_SHOWN = 30
report = {s: scale_report(T_SHOWN, s) for s in (1.0, 4.0)}
for s, r in report.items():
    print(
        f"scale {s:.0f}, T = {T_SHOWN}: {r['saturated']:.0%} of the state's entries are beyond ±0.95; the change "
        f"exceeds 0.1 up to distance {r['reach']} and 1 at {r['n_big']} positions (the furthest at distance "
        f"{r['far_big']}); largest change {r['largest']:.2f}, two unrelated texts end {r['unrelated']:.2f} apart."
    )
    print(
        f"           within that reach, neighbouring positions differ by up to {r['jumps']:.0f}×; further back "
        f"the median change is {r['beyond']:.1e}; the largest ‖∂h_T/∂x_t‖ (autograd) is {r['grad_max']:.2f}."
    )
print(
    "The reach (change > 0.1) at other lengths, scale 1 -> scale 4:",
    ", ".join(f"T = {T}: {scale_report(T, 1.0)['reach']} -> {scale_report(T, 4.0)['reach']}" for T in (20, 40, 60)),
)


# %% [markdown]
# **What scale 4 does.** The printout puts numbers on the picture. With $W_h$ four times larger, most
# entries of the state sit near $\pm 1$: the $\tanh$ is saturated. Replacements now reach further back
# than at scale 1, but not like a better memory: the curve is erratic. Some positions change the final
# state by a sizeable fraction of the gap between two unrelated texts, while a neighbouring position
# changes it many times less (the printed "differ by up to"), and beyond the reach the change fades again.
# A saturated unit is close to a switch at $+1$ or $-1$; one different token can flip a few switches,
# and the large $W_h$ passes the flips on to other units, or not, depending on the rest of the text. The
# state becomes **over-sensitive** to single tokens rather than a faithful summary of them: which
# replacements rewrite it looks arbitrary, and how far the effect reaches changes with $T$ (the last line
# of the printout).
#
# Large recurrent weights are also where *exploding gradients* come from: a per-step factor
# $\operatorname{diag}(1-h^2)W_h$ whose largest singular value exceeds 1 stretches some vectors, and a
# product of many such factors can grow without bound. In this explorer it does not: at $T = 30$ the largest
# $\lVert\partial h_T/\partial x_t\rVert$ stays of the order of 1 (printed), because on saturated units
# $1 - h^2 \approx 0$. The trouble at scale 4 is the erratic, switch-like response, not a huge derivative.
# Neither setting of $W_h$ gives this RNN a dependable long memory.

# %% [markdown]
# ## 5. Experiment: forgetting and waiting, measured
#
# ### 5a. Influence against distance
#
# **Claim.** In an RNN the influence of token $t$ on the last state falls geometrically with the distance;
# in attention it does not depend on the distance. We measure both derivatives with PyTorch's autograd:
# an RNN (`torch.nn.RNN`, the same recurrence as yours, with PyTorch's default random initialisation) and
# one attention layer with random projections, averaged over 20 random draws of weights and inputs.


# %%
def sensitivity_rnn(T, d, seed):
    """||∂h_T/∂x_t|| for t = 0..T-1 of a random torch RNN."""
    torch.manual_seed(seed)
    rnn = torch.nn.RNN(d, d)
    xs = torch.randn(T, d)
    J = torch.autograd.functional.jacobian(lambda xs: rnn(xs)[0][-1], xs)  # (d, T, d)
    return J.pow(2).sum(dim=(0, 2)).sqrt()


def sensitivity_attention(T, d, seed):
    """||∂o_T/∂x_t|| for t = 0..T-1 of one random attention layer (output at the last position)."""
    torch.manual_seed(seed)
    W_Q, W_K, W_V = (torch.randn(d, d) / d**0.5 for _ in range(3))
    xs = torch.randn(T, d)

    def last_output(xs):
        q, K, V = xs[-1] @ W_Q, xs @ W_K, xs @ W_V
        return F.scaled_dot_product_attention(q[None], K, V)[0]

    J = torch.autograd.functional.jacobian(last_output, xs)  # (d, T, d)
    return J.pow(2).sum(dim=(0, 2)).sqrt()


T_exp, d_exp, draws = 40, 16, 20
rnn_sens = torch.stack([sensitivity_rnn(T_exp, d_exp, s) for s in range(draws)]).mean(0).numpy()
att_sens = torch.stack([sensitivity_attention(T_exp, d_exp, s) for s in range(draws)]).mean(0).numpy()
distance = T_exp - 1 - np.arange(T_exp)  # how many tokens lie between token t and the end

rnn_ratio = rnn_sens[-1] / rnn_sens[0]
att_ratio = att_sens[-1] / att_sens[0]
per_step = rnn_ratio ** (1 / (T_exp - 1))  # geometric mean shrink factor per step
att_spread = att_sens[:-1].max() / att_sens[:-1].min()

fig, ax = plt.subplots(figsize=(6.8, 3.7), layout="constrained")
ax.semilogy(distance, rnn_sens, "o-", color=plots.COLORS[0], ms=3, label="RNN: ‖∂h_T / ∂x_t‖")
ax.semilogy(distance, att_sens, "s-", color=plots.COLORS[1], ms=3, label="attention: ‖∂o_T / ∂x_t‖")
ax.set_xlabel("distance from the last token, T − 1 − t")
ax.set_ylabel("sensitivity (log scale)")
ax.set_title(f"Influence of token t on the last output (T = {T_exp}, d = {d_exp}, mean of {draws} draws)")
ax.legend()
plots.show(
    fig,
    name="01_sensitivity",
    alt=(
        f"Log-scale plot of the sensitivity of the last output to each token against its distance from the end, "
        f"T = {T_exp}, d = {d_exp}, mean of {draws} random draws. The RNN's falls along a nearly straight line from "
        f"{rnn_sens[-1]:.2g} at distance 0 to {rnn_sens[0]:.2g} at distance {T_exp - 1}, about {per_step:.2f}-fold per "
        f"step; attention's stays between {att_sens[:-1].min():.2g} and {att_sens[:-1].max():.2g} for every earlier token, "
        f"with {att_sens[-1]:.2g} for the last token itself."
    ),
)
print(
    f"RNN: the last token's influence is {rnn_ratio:.1e} times that of the token {T_exp - 1} steps back"
    f" (on average it shrinks {per_step:.2f}-fold per step)."
)
print(
    f"Attention: the same ratio is only {att_ratio:.1f} (the last token is also the query), and the other"
    f" {T_exp - 1} tokens lie within a factor {att_spread:.1f} of each other, whatever their distance."
)


# %% [markdown]
# In the RNN, influence falls by many orders of magnitude over a few dozen tokens, along a nearly straight
# line on the log scale: a geometric decay, as the chain rule predicted. Attention's stays within a small
# factor. Notice that the attention layer did not get "better weights": it has a *shorter path*, one step
# from every token to every output.
#
# ### 5b. Waiting: an RNN's steps against one matrix product
#
# **Claim.** An RNN's running time grows roughly in proportion to $T$, even when the loop runs in compiled code,
# because step $t$ needs the result of step $t-1$. One matrix product doing the *same arithmetic* for
# all tokens at once is far faster. Attention does *more* arithmetic than the RNN once $T > d$, about
# $2T^2d$ multiply-adds against the RNN's $2Td^2$, yet it too is made of a few large products with no step
# waiting for another.
#
# We time, on one CPU thread with $d = 64$ (the best of 3 to 5 runs): PyTorch's `nn.RNN` over $T$ tokens (its loop
# is written in C++); one product `X @ W` with `X` of shape `(T, 64)` and `W` of shape `(64, 128)`, which
# is exactly the RNN's $2Td^2$ multiply-adds; and one attention layer, `F.scaled_dot_product_attention`
# of the sequence with itself.


# %%
def best_seconds(fn, repeat=3):
    """The fastest of `repeat` runs (after one warm-up run): the least disturbed by whatever else runs."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


d_par, T_list = 64, [16, 32, 64, 128, 256, 512, 1024]
g_par = torch.Generator().manual_seed(5)
rnn_par = torch.nn.RNN(d_par, d_par)
W_same = torch.randn(d_par, 2 * d_par, generator=g_par) / d_par**0.5  # (64, 128): the RNN's arithmetic
seconds = {"RNN (nn.RNN)": [], "one product, same arithmetic": [], "attention": []}
with torch.no_grad():
    for T in T_list:
        X_par = torch.randn(T, d_par, generator=g_par)
        repeat = 5 if T <= 256 else 3  # short runs are cheap: more tries
        seconds["RNN (nn.RNN)"].append(best_seconds(lambda: rnn_par(X_par), repeat))
        seconds["one product, same arithmetic"].append(best_seconds(lambda: X_par @ W_same, repeat))
        seconds["attention"].append(
            best_seconds(lambda: F.scaled_dot_product_attention(X_par[None], X_par[None], X_par[None]), repeat)
        )
seconds = {name: np.array(s) for name, s in seconds.items()}
rnn_s, prod_s, att_s = seconds.values()
Ts = np.array(T_list, dtype=float)
rnn_slope = np.polyfit(np.log(Ts), np.log(rnn_s), 1)[0]  # over all T
att_slope = np.polyfit(np.log(Ts[-3:]), np.log(att_s[-3:]), 1)[0]  # over the three largest T

fig, ax = plt.subplots(figsize=(6.8, 3.8), layout="constrained")
for (name, s), colour, marker in zip(seconds.items(), (plots.COLORS[0], plots.COLORS[2], plots.COLORS[1]), "osD"):
    ax.loglog(Ts, s * 1e3, marker + "-", ms=4, color=colour, label=name)
ax.loglog(Ts, rnn_s[0] * 1e3 * Ts / Ts[0], ":", color=plots.COLORS[7], lw=1, label="∝ T (guide)")
ax.loglog(Ts, att_s[-1] * 1e3 * (Ts / Ts[-1]) ** 2, "--", color=plots.COLORS[7], lw=1, label="∝ T² (guide)")
ax.set_xscale("log", base=2)
ax.set_xlabel("sequence length T")
ax.set_ylabel("wall time (ms, log)")
ax.set_title(f"One CPU thread, d = {d_par}: best of 3 to 5 runs")
ax.legend(loc="upper left")
plots.show(
    fig,
    name="01_parallel",
    alt=(
        f"Log-log plot of wall time against sequence length T from {T_list[0]} to {T_list[-1]}, one CPU thread, d = {d_par}. "
        f"nn.RNN grows from {rnn_s[0] * 1e3:.2g} to {rnn_s[-1] * 1e3:.2g} ms, one product with the same arithmetic from "
        f"{prod_s[0] * 1e3:.2g} to {prod_s[-1] * 1e3:.2g} ms, attention from {att_s[0] * 1e3:.2g} to {att_s[-1] * 1e3:.2g} ms; "
        f"dotted and dashed guides grow like T and T²."
    ),
)
print(
    f"RNN: its time grew {rnn_s[-1] / rnn_s[0]:.0f}-fold while T grew {T_list[-1] // T_list[0]}-fold (log-log slope "
    f"{rnn_slope:.2f} over all T; 1 means proportional to T): {rnn_s[-1] / T_list[-1] * 1e6:.1f} µs per token at "
    f"T = {T_list[-1]}."
)
print(
    "The RNN took " + ", ".join(f"{r:.0f}×" for r in rnn_s / prod_s) + " as long as one product with the same "
    f"arithmetic (T = {', '.join(map(str, T_list))})."
)
print(
    f"Attention does {T_list[-1] // d_par}× the RNN's arithmetic at T = {T_list[-1]} (T/d); its time grows with slope "
    f"{att_slope:.2f} over the three largest T (2 means ∝ T²), and it took {att_s[-1] / rnn_s[-1]:.2f}× the RNN's "
    f"time there ({att_s[0] / rnn_s[0]:.2f}× at T = {T_list[0]})."
)

# %% [markdown]
# Read the printout against the claim. The RNN's time grows roughly in proportion to $T$ (a log-log slope
# near 1), at a roughly constant cost per token: every step waits for the previous one, so nothing can be
# done in bulk. One product with exactly the same arithmetic takes a small fraction of that time, even on
# one CPU thread, because it is free to process many multiply-adds together (vector instructions, data
# that stays in the cache). Attention's arithmetic grows like $T^2$, and for long sequences its time grows
# much faster than the RNN's (its printed slope at the largest $T$ against the RNN's): it pays for looking
# at every pair of tokens. Yet all of that work is independent
# multiply-adds in a few large products, the kind that parallel hardware such as a GPU, with thousands of
# arithmetic units, runs side by side, while the RNN's $T$ steps must run one after another on any
# hardware. That is why Transformers replaced RNNs, and why their $T^2$ cost is the price (lesson 11
# deals with it). The exact times depend on this machine and on what else it is running; the trends do not.

# %% [markdown]
# ## 6. Let's review
#
# * An RNN reads tokens **one at a time**: $h_t = \tanh(W_h h_{t-1} + W_x x_t + b)$, with the same
#   weights at every step. $T$ tokens need $T$ sequential steps; you measured its time growing roughly in
#   proportion to $T$, far above the time of one matrix product with the same arithmetic.
# * Everything it has read must fit into a **fixed-size state** $h_T$ — a bottleneck that gets tighter
#   as texts get longer.
# * The influence of token $t$ on $h_T$ is a **product of $T-t$ Jacobians**; with typical weights it
#   shrinks geometrically (vanishing gradients). With large recurrent weights the state saturates and
#   reacts erratically to single tokens: over-sensitive, not a better memory.
# * **Attention** looks at all tokens at once: each output is a weighted average over every token, so
#   every token is one step away and its influence does not fade with distance. It does $O(T^2)$ work,
#   but in large independent products that parallel hardware runs at once.
#
# Next lesson: the weights $\alpha$ come from **dot products** between a query and keys.

# %% [markdown]
# ## 7. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`. Multiple-choice answers are a letter in
# quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format
# only; the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** An RNN with hidden size $d_h = 64$ reads a 1,000-token document. How many numbers
# does its final state $h_T$ hold?

# %% quiz="quiz-rnn-state-size" key="64" points=1

# %% [markdown]
# **Q2 (1 point).** How many calls of `rnn_step` must run *one after another* to read a 1,000-token
# document (with one RNN layer)?

# %% quiz="quiz-sequential-steps" key="1000" points=1

# %% [markdown]
# **Q3 (1 point).** Why does the influence of an early token on $h_T$ usually fade in a vanilla RNN?
#
# * **a** — the state is normalised to length 1 after every step
# * **b** — $\partial h_T/\partial x_t$ is a product of one Jacobian per step in between; when these shrink vectors, the product shrinks geometrically with the distance
# * **c** — $\tanh$ is not differentiable for large inputs
# * **d** — the RNN reads the sentence backwards

# %% quiz="quiz-why-fade" choices="abcd" key="b" points=1

# %% [markdown]
# **Q4 (1 point).** One attention layer reads a sequence of $T$ tokens, and the output at every position
# is a weighted average over all $T$ tokens of that same sequence (lesson 5 calls this *self*-attention).
# How many steps does the signal from the first token take to reach the output at the last position?
#
# * **a** — $T-1$ &nbsp; **b** — $\log_2 T$ &nbsp; **c** — 1 &nbsp; **d** — it depends on $d_k$

# %% quiz="quiz-path-length" choices="abcd" key="c" points=1

# %% [markdown]
# **Q5 (1 point).** In the explorer you set the recurrent scale to 4. Which statement matches what you
# saw and the measurements under it?
#
# * **a** — the RNN now remembers every token reliably: every replacement changes the final state by about the same amount
# * **b** — the state saturates and the curve turns erratic: some replacements far back still move the final state by a sizeable fraction of the gap between unrelated texts while their neighbours barely do; over-sensitive, not a dependable memory
# * **c** — nothing changes: the recurrent weights do not affect memory
# * **d** — the curve for attention now decays too

# %% quiz="quiz-large-scale" choices="abcd" key="b" points=1

# %% [markdown]
# **Q6 — free answer (3 points, graded by hand).** A colleague says: *"Just make the RNN's hidden state
# bigger and the forgetting problem goes away."* In 3–5 sentences, explain what a bigger state does
# fix and what it does not, using what you measured in this lesson.

# %% [markdown] manual="quiz-free-bigger-state" points=3
# ### BEGIN SOLUTION
# *Model answer.* A bigger state widens the bottleneck: more numbers are available to store what has
# been read, so less must be thrown away. It does not change how information travels: token $t$ still
# reaches $h_T$ only through $T-t$ sequential steps, and its influence is a product of $T-t$ Jacobians,
# which still shrinks geometrically with distance, as the sensitivity plot showed (and larger recurrent
# weights only make the state saturate and react erratically, as the explorer showed at scale 4). Nor does
# it remove the sequential cost: $T$ steps must still run one after another, which you measured growing
# roughly in proportion to $T$. Attention removes the long path instead: every token is one step from every output.
#
# *Rubric (3 points).* 1 point: a bigger state gives more capacity / eases the fixed-size bottleneck.
# 1 point: influence or gradients still pass through a product of per-step Jacobians and fade with
# distance (or, with large weights, saturate and behave erratically) — ideally citing the measured decay. 1 point: contrasts with attention's
# one-step path, or notes the sequential cost remains. Deduct nothing for style; no point for
# restating the question.
# ### END SOLUTION
