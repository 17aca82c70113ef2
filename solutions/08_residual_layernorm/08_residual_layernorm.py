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
# # Lesson 8 — Residual connections, layer normalisation and the encoder block
#
# **Attention, from the dot product up** · lesson 8 · about 70 minutes
#
# A Transformer is a *deep* stack: the original had 6 encoder blocks, large language models have
# dozens. Stacking layers is easy; training the stack is not, because the gradient that must reach the
# first layers can fade away on the long trip back. Two tools make it work: **residual (skip)
# connections**, which made very deep image networks (ResNets) trainable, and **layer normalisation**,
# a relative of the batch normalisation used in image models that normalises each token on its own
# (it was introduced for recurrent networks). In this lesson you build layer norm and a feed-forward
# network, assemble a full encoder block in its two common forms, prove that it equals PyTorch's
# `nn.TransformerEncoderLayer`, read a stack of blocks as a *residual stream*, and measure what the two
# tools, and the two placements of the norm, do in a deep stack.
#
# **Learning goals.** By the end you can
# 1. explain why a residual connection $x + F(x)$ keeps gradients alive through many layers;
# 2. implement layer normalisation and say how it differs from batch normalisation;
# 3. implement the position-wise feed-forward network;
# 4. assemble an encoder block in the post-LN and pre-LN forms and match PyTorch's to $10^{-5}$;
# 5. read a stack as a residual stream, $x \leftarrow x + f(x)$, and say why a pre-LN stack ends with one more LayerNorm;
# 6. read measured plots of the gradient reaching the first layer, and of training 12-block stacks with
#    each norm placement, with and without a learning-rate warm-up.
#
# **You need from earlier lessons:** multi-head self-attention (lesson 6). You built it and showed it
# equals `nn.MultiheadAttention` with copied weights; inside this lesson's block we use PyTorch's
# `nn.MultiheadAttention`. Lesson 7's positional encodings are added before the first block; they play
# no role inside it. **From lesson 0** (`00_pytorch_primer`): `nn.Module`, `nn.Linear` (its `weight`
# is stored as `(d_out, d_in)`), `.backward()` and the Adam optimiser.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Cells that start with
# `# YOUR CODE HERE` are exercises: replace `raise NotImplementedError()` with your code. The cell
# right after each exercise runs *visible checks*; when grading, hidden checks with other shapes run
# as well, so make your code general. The toolbar's **Validate** button runs every check at once.

# %%
import itertools

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import attention_course as ac
from attention_course import checks, data, plots, widgets

ac.setup()


# %% [markdown]
# ## 1. Residual connections
#
# A residual connection wraps a sublayer $F$ (attention, or the feed-forward network) so that its input
# is added back to its output:
#
# $$y = x + F(x).$$
#
# The sublayer only has to learn a *correction* to its input, and doing nothing ($F = 0$) is easy. More
# importantly, look at the derivative:
#
# $$\frac{\partial y}{\partial x} = I + \frac{\partial F}{\partial x}.$$
#
# Without the skip, the gradient reaching layer 1 of an $L$-layer stack is a product of $L$ Jacobians
# $\frac{\partial F_L}{\partial x}\cdots\frac{\partial F_1}{\partial x}$ — the same product that made
# RNNs forget in lesson 1, and it shrinks geometrically when the factors shrink vectors. With skips,
# every factor is $I + \frac{\partial F}{\partial x}$; expanding the product gives a term $I$ — a path
# that goes straight from the loss to layer 1 through all the additions, untouched.
#
# A first look: ten small layers $F(x) = \tanh(x W + b)$ (row vectors, as everywhere in the course;
# `nn.Linear` with PyTorch's default initialisation, whose `weight` is $W^\top$), stacked with and
# without the skip. How large is the derivative of the output with respect to the input?


# %%
def stack_jacobian_norm(depth, residual, d=16, seed=0):
    """Frobenius norm of d(output)/d(input) for a stack of tanh(Linear) layers."""
    torch.manual_seed(seed)
    layers = [nn.Linear(d, d) for _ in range(depth)]

    def run(x):
        for layer in layers:
            x = x + torch.tanh(layer(x)) if residual else torch.tanh(layer(x))
        return x

    return torch.autograd.functional.jacobian(run, torch.randn(d)).norm().item()


for depth in (1, 5, 10):
    print(
        f"depth {depth:2d}: ‖∂y/∂x‖ without skips = {stack_jacobian_norm(depth, False):.2e}, "
        f"with skips = {stack_jacobian_norm(depth, True):.2e}"
    )


# %% [markdown]
# Without skips the derivative shrinks by a roughly constant factor with every layer; with skips it
# stays of the same order of magnitude as for a single layer (for reference, the identity matrix of size
# 16 has norm 4). Section 8 measures the same effect on the weights of the first layer, up to 32 layers deep.

# %% [markdown]
# ## 2. Layer normalisation
#
# Residual sums keep growing as layers add their corrections, and the scale of the activations drifts
# during training. **Layer normalisation** resets the scale of every token's vector. For one vector
# $x \in \mathbb{R}^d$ (one token, one example), with learned vectors $\gamma$ (gain) and $\beta$ (bias):
#
# $$\mu = \frac1d\sum_{j=1}^d x_j, \qquad \sigma^2 = \frac1d\sum_{j=1}^d (x_j-\mu)^2, \qquad
# \mathrm{LN}(x)_j = \gamma_j\,\frac{x_j-\mu}{\sqrt{\sigma^2+\varepsilon}} + \beta_j .$$
#
# Three details matter to match PyTorch exactly:
# * the statistics are taken over the **features** of each vector (the last axis), never over the batch;
# * $\sigma^2$ is the **population** variance (divide by $d$, not $d-1$);
# * $\varepsilon$ (default $10^{-5}$) goes **inside** the square root; it keeps a constant vector
#   ($\sigma^2 = 0$) from dividing by zero.
#
# After normalising, each vector has mean 0 and variance (almost) 1; $\gamma$ and $\beta$ let the model
# choose another scale and shift if that helps. So the output hardly depends on the scale of the input (only
# through $\varepsilon$; section 3 checks it): whatever the layers before it did to the size of a vector, the
# layer after a norm sees vectors of the same size.

# %% [markdown]
# ### Exercise 8.1 — layer norm (2 points)
#
# Implement `layer_norm(x, gamma, beta, eps=1e-5)` for a torch tensor `x` of shape `(..., d)` (any
# number of leading axes) with `gamma` and `beta` of shape `(d,)`, returning a tensor of the same shape
# as `x`: every vector along the last axis normalised as above, then scaled by `gamma` and shifted by
# `beta`. Use torch operations, so that gradients flow through it (lesson 9 trains with your function: no
# numpy), but not `F.layer_norm` or `nn.LayerNorm`: the tests compare your result with those, and notice a call
# to them. Leave `x` itself unchanged (no in-place operations such as `x -= mean`).
#
# <details><summary>Hint 1: the idea</summary>
#
# Every vector along the last axis gets its own mean and its own variance, so both statistics keep a size-1
# last axis and broadcast back against `x`. The three bullet points above are the whole difference between a
# result that matches PyTorch and one that is a little off.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `mean = x.mean(dim=-1, keepdim=True)` has shape `(..., 1)`; the variance is the mean of `(x - mean) ** 2`
# over the same axis.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `x.var(dim=-1, unbiased=False, keepdim=True)` gives the population variance (plain `x.var()` divides by
# $d-1$), and `torch.sqrt(var + eps)` puts $\varepsilon$ inside the root.
# </details>


# %% answer="layer-norm"
def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalise every vector along the last axis of x (..., d), then scale by gamma and shift by beta (d,)."""
    ### BEGIN SOLUTION
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta
    ### END SOLUTION


# %% tests="layer-norm-tests" points=2
# Visible checks: a worked example (mean 2.5, population variance 1.25; with eps = 0.25 the divisor is
# sqrt(1.5) = 1.2247...), then mean 0 along the last axis of a (2, 3, 6) batch.
_x, _g, _b = torch.tensor([[1.0, 2, 3, 4]]), torch.tensor([1.0, 1, 1, 2]), torch.tensor([0.0, 0, 0, 1])
checks.expect_close(
    checks.call(layer_norm, _x.double(), _g.double(), _b.double(), eps=0.25),
    [[-1.22474487, -0.40824829, 0.40824829, 3.44948974]],
    "layer_norm([[1, 2, 3, 4]], eps=0.25)",
    mistakes={
        "the variance divides by d − 1 (unbiased); layer norm uses the population variance (divide by d).": [
            [-1.08347268, -0.36115756, 0.36115756, 3.16694536]
        ],
        "eps is added outside the square root: use sqrt(variance + eps).": [
            [-1.09646399, -0.365488, 0.365488, 3.192928]
        ],
        "eps is missing: use sqrt(variance + eps).": [[-1.34164079, -0.4472136, 0.4472136, 3.68328157]],
        "gamma and beta are not applied: multiply by gamma, then add beta.": [
            [-1.2247449, -0.4082483, 0.4082483, 1.2247449]
        ],
        "gamma and beta are swapped: multiply by gamma, add beta.": [[1.0, 1.0, 1.0, 3.22474487]],
    },
)
_y = layer_norm(torch.randn(2, 3, 6, dtype=torch.float64) * 5 + 3, torch.ones(6).double(), torch.zeros(6).double())
checks.expect_shape(_y, (2, 3, 6), "layer_norm on a (2, 3, 6) tensor")
checks.expect_close(_y.mean(-1), torch.zeros(2, 3), "the mean of every normalised vector (if not 0: dim=-1?)")
# The rules of the spec: x unchanged, a gradient flows back, no built-in normalisation.
_given, _names = 5 * torch.randn(3, 4, dtype=torch.float64), set()


class _Names(torch.overrides.TorchFunctionMode):  # records the name of every torch function layer_norm calls
    def __torch_function__(self, func, types, args=(), kwargs=None):
        _names.add(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


_copy = _given.clone()
with _Names():
    _y = layer_norm(_given, torch.ones(4, dtype=torch.float64, requires_grad=True), torch.zeros(4).double())
checks.expect(torch.equal(_given, _copy), "layer_norm changed x: compute new tensors (no x -= mean or x /= ...).")
checks.expect(
    isinstance(_y, torch.Tensor) and _y.requires_grad,
    "no gradient flows through layer_norm: keep everything in torch (no numpy).",
)
_builtin = _names & {"layer_norm", "native_layer_norm", "group_norm", "batch_norm", "instance_norm"}
checks.expect(not _builtin, f"write the normalisation yourself: it calls {sorted(_builtin)}, what the checks use.")


### BEGIN HIDDEN TESTS
def _layer_norm_hidden():
    g = torch.Generator().manual_seed(8)
    x = torch.randn(3, 5, 16, generator=g, dtype=torch.float64) * 2 + 1
    gamma, beta = torch.randn(2, 16, generator=g, dtype=torch.float64)

    def variant(x, dim=-1, correction=0, eps_inside=True, eps=1e-5, affine=(gamma, beta)):
        mu, var = x.mean(dim, keepdim=True), x.var(dim, correction=correction, keepdim=True)
        y = (x - mu) / (torch.sqrt(var + eps) if eps_inside else var.sqrt() + eps)
        return affine[0] * y + affine[1] if affine else y

    given, names = x.clone(), set()
    layer_norm(given, gamma, beta)
    checks.expect(torch.equal(given, x), "layer_norm changed x: compute new tensors (no x -= mean or x /= ...).")
    for eps, scale in [(1e-5, 1.0), (0.1, 0.3)]:
        xs = x * scale
        mistakes = {
            "the variance divides by d − 1 (unbiased); layer norm uses the population variance.": variant(
                xs, correction=1, eps=eps
            ),
            "eps is added outside the square root: use sqrt(variance + eps).": variant(xs, eps_inside=False, eps=eps),
            "eps is missing: use sqrt(variance + eps).": variant(xs, eps=0.0),
            "the statistics are taken over the batch (that is batch norm): use the last axis.": variant(xs, 0, eps=eps),
            "the statistics are taken over the whole tensor: normalise each vector along the last axis.": variant(
                xs, (0, 1, 2), eps=eps
            ),
            "gamma and beta are not applied: multiply by gamma, then add beta.": variant(xs, eps=eps, affine=None),
            "gamma and beta are swapped: multiply by gamma, add beta.": variant(xs, eps=eps, affine=(beta, gamma)),
        }
        got = layer_norm(xs, gamma, beta, eps=eps)
        checks.expect(isinstance(got, torch.Tensor), "layer_norm must return a torch tensor.")
        want = F.layer_norm(xs, (16,), gamma, beta, eps)
        checks.expect_close(got, want, f"layer_norm on (3, 5, 16) with eps = {eps}", mistakes=mistakes)

    class Names(torch.overrides.TorchFunctionMode):  # records the name of every torch function layer_norm calls
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.add(getattr(func, "__name__", ""))
            return func(*args, **(kwargs or {}))

    with Names():
        got = layer_norm(x, gamma.clone().requires_grad_(), beta)
    builtin = names & {"layer_norm", "native_layer_norm", "group_norm", "batch_norm", "instance_norm"}
    checks.expect(not builtin, f"write the normalisation yourself: it calls {sorted(builtin)}, what the checks use.")
    checks.expect(got.requires_grad, "no gradient flows through layer_norm: keep everything in torch (no numpy).")
    const = torch.full((2, 16), 3.0, dtype=torch.float64)  # variance 0: the output must be beta, not NaN
    checks.expect_close(layer_norm(const, gamma, beta), beta.expand(2, 16), "layer_norm of constant vectors")
    checks.expect_close(layer_norm(x[0, 0], gamma, beta), F.layer_norm(x[0, 0], (16,), gamma, beta), "one vector (16,)")


_layer_norm_hidden()
### END HIDDEN TESTS
checks.passed("layer_norm")

# %% [markdown]
# ## 3. Layer norm is not batch norm
#
# **Batch normalisation**, common in image models, normalises each *feature* over the examples of the
# batch. **Layer normalisation** normalises each *example* (each token) over its features. For a
# $(B, d)$ array, batch norm takes statistics down the columns, layer norm across the rows. Two
# consequences for sequence models, and the scale invariance of section 2, shown on a tiny batch of three
# examples with four features:

# %%
x_small = torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 0.0, 1.0, 1.0], [9.0, 9.0, 0.0, 3.0]])
x_other = x_small.clone()
x_other[2] = torch.tensor([-5.0, 4.0, 8.0, 0.0])  # only example 2 changes
batch_norm = nn.BatchNorm1d(4, affine=False)  # training mode: statistics of this batch
ones, zeros = torch.ones(4), torch.zeros(4)
with ac.student_code("layer_norm"), torch.no_grad():
    bn_change = (batch_norm(x_other)[0] - batch_norm(x_small)[0]).abs().max().item()
    ln_change = (layer_norm(x_other, ones, zeros)[0] - layer_norm(x_small, ones, zeros)[0]).abs().max().item()
    print("layer norm of example 0:", layer_norm(x_small, ones, zeros)[0].numpy())
    print("batch norm of example 0:", batch_norm(x_small)[0].numpy())
    print(
        f"change example 2 only -> example 0's batch-norm output moves by up to {bn_change:.3f}, "
        f"its layer-norm output by {ln_change:.1e}"
    )
    try:
        batch_norm(x_small[:1])
    except ValueError as error:
        print(f"batch norm on a batch of one example fails in training mode: {error}")
    print("layer norm on a batch of one example works:", layer_norm(x_small[:1], ones, zeros)[0].numpy())
    scale_change = (layer_norm(100 * x_small, ones, zeros) - layer_norm(x_small, ones, zeros)).abs().max().item()
    print(f"multiply every input by 100 -> the layer-norm output moves by {scale_change:.1e}")


# %% [markdown]
# Layer norm treats every token on its own: its output does not depend on which other sentences happen
# to be in the batch, or on their lengths and padding, and it behaves the same at training and at test
# time. Batch norm needs a batch (and keeps running averages for test time). These are the usual reasons why
# Transformers use layer norm.

# %% [markdown]
# ## 4. The position-wise feed-forward network
#
# Attention mixes information *between* positions. The second sublayer of a block processes every
# position *on its own*, with the same two-layer network for all positions:
#
# $$\mathrm{FFN}(x) = \max(0,\; x W_1 + b_1)\, W_2 + b_2, \qquad W_1 \in \mathbb{R}^{d_\text{model}\times d_\text{ff}},\;
# W_2 \in \mathbb{R}^{d_\text{ff}\times d_\text{model}} .$$
#
# The hidden size $d_\text{ff}$ is usually $4\,d_\text{model}$ (2048 for $d_\text{model}=512$). In PyTorch
# the two maps are `nn.Linear(d_model, d_ff)` and `nn.Linear(d_ff, d_model)`, and `nn.Linear` stores its
# weight transposed: `linear1.weight` has shape `(d_ff, d_model)` and holds $W_1^\top$, so $x W_1$ is
# `x @ linear1.weight.T`.

# %% [markdown]
# ### Exercise 8.2 — feed-forward network (2 points)
#
# Implement `feed_forward(x, W1, b1, W2, b2)` for a torch tensor `x` of shape `(..., d_model)`: a linear
# map to `d_ff`, a ReLU, and a linear map back to `d_model`, as in the formula, returning shape
# `(..., d_model)`. The weights come **in `nn.Linear`'s layout**, as the encoder block will pass them:
# `W1` of shape `(d_ff, d_model)` (that is $W_1^\top$), `b1` of shape `(d_ff,)`, `W2` of shape
# `(d_model, d_ff)` ($W_2^\top$), `b2` of shape `(d_model,)`. Use torch operations, so that gradients flow through
# it (lesson 9 trains with your function: no numpy). Every position is processed on its own, so the result must not
# depend on the other positions (the checks reorder them).
#
# <details><summary>Hint 1: the idea</summary>
#
# Two affine maps with a ReLU between them, applied to the last axis only. The one trap is the layout: you get
# $W_1^\top$, not $W_1$.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The hidden layer is `x @ W1.T + b1`, of shape `(..., d_ff)`; `@` works on the last axis whatever the leading
# axes are.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `torch.relu(...)` for the ReLU; then the same pattern with `W2` and `b2`. (`F.linear(x, W1, b1)` computes
# `x @ W1.T + b1` in one call.)
# </details>


# %% answer="feed-forward"
def feed_forward(x, W1, b1, W2, b2):
    """x (..., d_model); W1 (d_ff, d_model), b1 (d_ff,), W2 (d_model, d_ff), b2 (d_model,) -> (..., d_model)."""
    ### BEGIN SOLUTION
    return torch.relu(x @ W1.T + b1) @ W2.T + b2
    ### END SOLUTION


# %% tests="feed-forward-tests" points=2
# Visible checks: a worked example with d_model = 2, d_ff = 3: hidden pre-activation [1, -1, 0.5] -> ReLU ->
# [1, 0, 0.5] -> [1.5, 2.0] + b2 = [1.5, 1.5].
_W1, _b1 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]).double(), torch.tensor([0.0, 0.0, 0.5]).double()
_W2, _b2 = torch.tensor([[1.0, 1.0, 1.0], [1.0, -1.0, 2.0]]).double(), torch.tensor([0.0, -0.5]).double()
checks.expect_close(
    checks.call(feed_forward, torch.tensor([[1.0, -1.0]]).double(), _W1, _b1, _W2, _b2),
    [[1.5, 1.5]],
    "feed_forward on the worked example",
    mistakes={
        "the ReLU is missing: apply max(0, ·) to the hidden layer.": [[0.5, 2.5]],
        "b1 is missing.": [[1.0, 0.5]],
        "b2 is missing.": [[1.5, 2.0]],
        "use ReLU, not GELU (nn.TransformerEncoderLayer's default is ReLU).": [[1.0284207228, 1.1914624613]],
    },
)
_x = torch.randn(4, 5, 2, dtype=torch.float64)
_out = feed_forward(_x, _W1, _b1, _W2, _b2)
checks.expect_shape(_out, (4, 5, 2), "feed_forward on a (4, 5, 2) batch")
_perm = torch.tensor([4, 0, 3, 1, 2])  # every position on its own: reordering the positions reorders the result
checks.expect_close(
    feed_forward(_x[:, _perm], _W1, _b1, _W2, _b2), _out[:, _perm], "feed_forward on reordered positions"
)
_out = feed_forward(_x, _W1.clone().requires_grad_(), _b1, _W2, _b2)
checks.expect(
    isinstance(_out, torch.Tensor) and _out.requires_grad,
    "no gradient flows through feed_forward: keep everything in torch (no numpy).",
)


### BEGIN HIDDEN TESTS
def _feed_forward_hidden():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(3, 7, 16, generator=g, dtype=torch.float64)
    W1, W2 = torch.randn(24, 16, generator=g).double(), torch.randn(16, 24, generator=g).double()
    b1, b2 = torch.randn(24, generator=g).double(), torch.randn(16, generator=g).double()
    want = nn.functional.linear(torch.relu(nn.functional.linear(x, W1, b1)), W2, b2)
    h = x @ W1.T + b1
    mistakes = {
        "the ReLU is missing: apply max(0, ·) to the hidden layer.": h @ W2.T + b2,
        "b1 is missing.": torch.relu(x @ W1.T) @ W2.T + b2,
        "b2 is missing.": torch.relu(h) @ W2.T,
        "a ReLU is applied to the output as well: only the hidden layer has one.": torch.relu(want),
        "use ReLU, not GELU (nn.TransformerEncoderLayer's default is ReLU).": F.gelu(h) @ W2.T + b2,
    }
    got = feed_forward(x, W1, b1, W2, b2)
    checks.expect_close(got, want, "feed_forward on (3, 7, 16) with d_ff = 24", mistakes=mistakes)
    perm = torch.tensor([6, 2, 0, 1, 5, 3, 4])
    checks.expect_close(feed_forward(x[:, perm], W1, b1, W2, b2), got[:, perm], "feed_forward on reordered positions")
    checks.expect_close(feed_forward(x[0, 0], W1, b1, W2, b2), want[0, 0], "feed_forward on a single vector")
    out = feed_forward(x, W1.clone().requires_grad_(), b1, W2, b2)
    checks.expect(out.requires_grad, "no gradient flows through feed_forward: keep everything in torch (no numpy).")


_feed_forward_hidden()
### END HIDDEN TESTS
checks.passed("feed_forward")


# %% [markdown]
# ## 5. The encoder block, post-LN and pre-LN
#
# A Transformer encoder block has two sublayers — multi-head self-attention, then the feed-forward network
# — each wrapped in a residual connection and a layer norm. There are two ways to place the norm:
#
# | placement | attention sublayer | feed-forward sublayer |
# |---|---|---|
# | **post-LN** (the original Transformer) | $x \leftarrow \mathrm{LN}_1\big(x + \mathrm{MHA}(x)\big)$ | $x \leftarrow \mathrm{LN}_2\big(x + \mathrm{FFN}(x)\big)$ |
# | **pre-LN** (GPT-2 and most recent models) | $x \leftarrow x + \mathrm{MHA}\big(\mathrm{LN}_1(x)\big)$ | $x \leftarrow x + \mathrm{FFN}\big(\mathrm{LN}_2(x)\big)$ |
#
# In post-LN the norm sits *on* the residual path, so every block rescales the sum it passes on. In pre-LN
# the residual path is a plain sum from the input to the output — only the inputs of the branches are
# normalised. Section 6 looks at what flows along that path, and section 8 measures whether the placement
# matters for training.
#
# `nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, batch_first=True, norm_first=...)`
# implements exactly this (`norm_first=False` is post-LN). Your block will be compared with it.

# %% [markdown]
# ### Exercise 8.3 — an encoder block (3 points)
#
# The class below is given except for `forward`. Its constructor is **fixed**: keep the attribute names
# (`self_attn`, `linear1`, `linear2`, `norm1`, `norm2`) — they are the same as in
# `nn.TransformerEncoderLayer`, so the tests can copy PyTorch's weights into your block with
# `block.load_state_dict(reference.state_dict())`.
#
# Write `forward(x)` for `x` of shape `(B, T, d_model)`, returning the same shape, in the post-LN form
# when `self.norm_first` is False and in the pre-LN form when it is True (see the table). Use the block's
# own parts: `self.attend(x)` (given) is the attention sublayer $\mathrm{MHA}$; `linear1`, a ReLU and
# `linear2` make the FFN; `norm1` is $\mathrm{LN}_1$ and `norm2` is $\mathrm{LN}_2$, each with its own `eps`.
# Keep everything in torch (no numpy) so that gradients flow through the block. Two switches, which lesson 9's
# experiment turns off one at a time:
# * `self.residual` (default True): when False, drop the residual additions ("$x +$") of both sublayers, so
#   post-LN becomes $x \leftarrow \mathrm{LN}_1(\mathrm{MHA}(x))$ and pre-LN $x \leftarrow \mathrm{MHA}(\mathrm{LN}_1(x))$,
#   and likewise for the feed-forward sublayer;
# * `self.layer_norm` (default True): when False, use no norm at all: $\mathrm{LN}_1$ and $\mathrm{LN}_2$ become the
#   identity (the modules `norm1` and `norm2` stay, unused).
#
# **What lesson 9 relies on.** Lesson 9 builds its Transformer from *your* block with *your* lesson-6 attention
# inside: it replaces the method `attend` by one that runs that attention, and it sets the two switches. So
# compute the attention sublayer **only through `self.attend(x)`**, never by calling `self.self_attn` yourself,
# and honour both switches. The checks test both: they replace `attend`, and they switch residuals and norms off.
#
# When your work is graded, this exercise's checks run with correct versions of `layer_norm` and
# `feed_forward`, so a mistake in exercise 8.1 or 8.2 costs points there only. The visible checks below use yours.
#
# <details><summary>Hint 1: the idea</summary>
#
# Both sublayers have the same shape: a function $f$ (attention or feed-forward), its norm, and a residual
# addition. Only the *order* differs between the two forms: post-LN normalises after adding, pre-LN normalises
# the input of $f$. Write one sublayer update, then apply it twice.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# A small helper inside `forward` keeps the norm switch in one place, e.g.
# `norm = lambda z, ln: layer_norm(z, ln.weight, ln.bias, eps=ln.eps) if self.layer_norm else z`;
# for the residual switch, take `skip = x if self.residual else 0` before each sublayer and add `skip`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Attention: `self.attend(z)`. Feed-forward:
# `feed_forward(z, self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)` (or
# `self.linear2(torch.relu(self.linear1(z)))`). A norm: `layer_norm(z, self.norm1.weight, self.norm1.bias,
# eps=self.norm1.eps)` (or `self.norm1(z)`). Which of them wraps which, and where `skip` is added, is in the table.
# </details>


# %% answer="encoder-block"
class EncoderBlock(nn.Module):
    """A Transformer encoder block. Attribute names match nn.TransformerEncoderLayer (batch_first=True)."""

    def __init__(self, d_model, n_heads, d_ff, norm_first=False, eps=1e-5, residual=True, layer_norm=True):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm_first, self.residual, self.layer_norm = norm_first, residual, layer_norm

    def attend(self, x):
        """Multi-head self-attention: every position of x (B, T, d_model) attends to every position."""
        return self.self_attn(x, x, x, need_weights=False)[0]

    def forward(self, x):
        """x (B, T, d_model) -> (B, T, d_model): post-LN if not self.norm_first, else pre-LN."""

        ### BEGIN SOLUTION
        def norm(z, ln):
            return layer_norm(z, ln.weight, ln.bias, eps=ln.eps) if self.layer_norm else z

        def ffn(z):
            return feed_forward(z, self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)

        for f, ln in ((self.attend, self.norm1), (ffn, self.norm2)):
            skip = x if self.residual else 0
            x = skip + f(norm(x, ln)) if self.norm_first else norm(skip + f(x), ln)
        return x
        ### END SOLUTION


# %% tests="encoder-block-tests" points=3
# Visible: PyTorch's encoder layer and yours with the same weights; lesson 9's contract; the switches.
def _pair(norm_first, eps=1e-5, **switches):
    ref = nn.TransformerEncoderLayer(
        8, 2, 12, dropout=0.0, batch_first=True, norm_first=norm_first, layer_norm_eps=eps
    ).double()
    g = torch.Generator().manual_seed(0)  # the same weights at every call
    nn.utils.vector_to_parameters(torch.randn(532, generator=g, dtype=torch.float64), ref.parameters())
    mine = checks.call(EncoderBlock, 8, 2, 12, norm_first=norm_first, eps=eps, **switches).double()
    mine.load_state_dict(ref.state_dict())
    return ref.eval(), mine.eval()


### BEGIN HIDDEN TESTS
_students_norm_ffn = (layer_norm, feed_forward, EncoderBlock)  # graded with correct ones: a slip costs in 8.1/8.2
layer_norm = lambda x, gamma, beta, eps=1e-5: F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
feed_forward = lambda x, W1, b1, W2, b2: F.linear(F.relu(F.linear(x, W1, b1)), W2, b2)
# the block's methods look these names up in the notebook's globals: reach them through the class (also in the grader)
EncoderBlock = checks.with_references(EncoderBlock, layer_norm=layer_norm, feed_forward=feed_forward)


### END HIDDEN TESTS
def _earlier_exercises():
    """These visible checks use your layer_norm and feed_forward: name the ones that are wrong (or "" if none)."""
    g = torch.Generator().manual_seed(5)
    z, gamma, beta = torch.randn(3, 8, 8, generator=g, dtype=torch.float64)
    W1, W2 = torch.randn(2, 12, 8, generator=g, dtype=torch.float64)
    b1, b2 = torch.randn(12, generator=g, dtype=torch.float64), beta[0]
    pairs = (
        (
            "layer_norm",
            "8.1",
            lambda: (layer_norm(z, gamma[0], beta[0], eps=0.1), F.layer_norm(z, (8,), gamma[0], beta[0], 0.1)),
        ),
        (
            "feed_forward",
            "8.2",
            lambda: (feed_forward(z, W1, b1, W2.T, b2), F.linear(F.relu(F.linear(z, W1, b1)), W2.T, b2)),
        ),
    )
    wrong = []
    for name, exercise, run in pairs:
        try:
            ok = checks.is_close(*run(), atol=1e-6)
        except Exception:
            ok = False
        if not ok:
            wrong.append((name, exercise))
    if not wrong:
        return ""
    names, numbers = " and ".join(n for n, _ in wrong), " and ".join(e for _, e in wrong)
    return f" (it uses your {names}, which exercise {numbers} does not compute right yet: fix exercise {numbers} first)"


_x, _forms, _note = torch.from_numpy(data.embed(data.CAT_CHASES_DOG, 8))[None], ("post", "pre"), _earlier_exercises()
with torch.no_grad():
    _want = {nf: _pair(nf)[0](_x) for nf in (False, True)}
    for _nf in (False, True):
        _wrong = f"with norm_first={_nf} you computed the {_forms[not _nf]}-LN form (see the table)."
        _got = checks.call(_pair(_nf)[1].forward, _x)
        checks.expect_close(
            _got, _want[_nf], f"the {_forms[_nf]}-LN block{_note}", atol=1e-5, mistakes={_wrong: _want[not _nf]}
        )
    for _nf in (False, True):  # lesson 9's contract: attend runs PyTorch's attention, self_attn's weights are zeroed
        _ref, _mine = _pair(_nf)
        _mine.attend = lambda z, a=_ref.self_attn: a(z, z, z, need_weights=False)[0]
        _mine.self_attn.in_proj_weight.zero_()
        checks.expect(
            checks.is_close(_mine(_x), _want[_nf], atol=1e-5),
            f"the {_forms[_nf]}-LN block{_note}: compute the attention only through self.attend(x), never "
            "self.self_attn(...) directly: lesson 9 replaces attend to run your lesson-6 attention inside your block.",
        )
        _ref, _mine = _pair(_nf, residual=False, layer_norm=False)
        _mine.attend = torch.zeros_like
        _ffn0 = _ref.linear2(torch.relu(_ref.linear1(torch.zeros(8, dtype=torch.float64)))).expand(1, 5, 8)
        _what = f"the {_forms[_nf]}-LN block with residual=False, layer_norm=False (honour both switches){_note}"
        checks.expect_close(_mine(_x), _ffn0, _what + " and an attention that returns zeros: FFN(0) everywhere")
        _ref, _mine = _pair(_nf, eps=0.5)  # each norm with its own eps
        _what = f"the {_forms[_nf]}-LN block with eps = 0.5{_note}"
        _eps = {"the norms' eps is ignored: pass eps=self.norm1.eps (and self.norm2.eps).": _want[_nf]}
        checks.expect_close(_mine(_x), _ref(_x), _what, atol=1e-5, mistakes=_eps)
_ref, _mine = _pair(True)
checks.expect(_mine(_x).requires_grad, "the block's output carries no gradient: keep everything in torch (no numpy).")


### BEGIN HIDDEN TESTS
def _ref_block(b, x, form, residual, ln, eps=0.1, keep=(1, 1), norms=(0, 1), attend=None):
    for f, k, i in zip((attend or b.attend, lambda z: b.linear2(F.relu(b.linear1(z)))), keep, norms):
        n = (lambda z, m=(b.norm1, b.norm2)[i]: F.layer_norm(z, (16,), m.weight, m.bias, eps)) if ln else (lambda z: z)
        r = x if residual and k else 0
        forms = {"post": lambda: n(r + f(x)), "pre": lambda: r + f(n(x)), "branch": lambda: r + n(f(x))}
        x = forms.get(form, lambda: n(r + f(n(x))))()
    return x


_x = 2 * torch.randn(3, 7, 16, generator=(_g := torch.Generator().manual_seed(21)), dtype=torch.float64)
for _nf, _res, _ln in itertools.product((False, True), repeat=3):
    _mine = EncoderBlock(16, 4, 24, norm_first=_nf, eps=0.1, residual=_res, layer_norm=_ln).double()
    nn.utils.vector_to_parameters(0.3 * torch.randn(1960, generator=_g, dtype=torch.float64), _mine.parameters())
    _original = lambda z, a=_mine.self_attn: a(z, z, z, need_weights=False)[0]
    _mine.attend = lambda z, a=_original: 0.5 * a(z)  # another attention behind attend, as lesson 9 does
    _base = dict(form="pre" if _nf else "post", residual=_res, ln=_ln)
    _slips = [  # (message, change); form "branch" is x + LN(f(x)), "both" is LN(x + f(LN(x)))
        ("the placement is swapped: norm_first=False is post-LN, True pre-LN.", dict(form="post" if _nf else "pre")),
        ("call the attention through self.attend(x), not self.self_attn directly.", dict(attend=_original)),
        ("residual=False is ignored: drop both residual additions.", dict(residual=True)),
        ("layer_norm=False is ignored: use no norm at all then.", dict(ln=True)),
        ("the residual around attention is missing.", dict(keep=(0, 1))),
        ("the residual around the feed-forward network is missing.", dict(keep=(1, 0))),
        ("norm1 is used for both sublayers: the feed-forward sublayer uses norm2.", dict(norms=(0, 0))),
        ("the norm is applied to the branch only (x + LN(f(x))); post-LN normalises the sum.", dict(form="branch")),
        ("the sum is normalised again: in pre-LN only the branch input is.", dict(form="both")),
        ("the norms' eps is ignored: pass eps=self.norm1.eps (and self.norm2.eps).", dict(eps=1e-5)),
    ]
    with torch.no_grad():
        _want = _ref_block(_mine, _x, **_base)
        _mistakes = {m: _ref_block(_mine, _x, **{**_base, **c}) for m, c in _slips}
    _what = f"the {_base['form']}-LN block, residual={_res}, layer_norm={_ln}, eps = 0.1"
    checks.expect_close(_mine(_x), _want, _what, atol=1e-5, mistakes=_mistakes)
checks.expect(_mine(_x).requires_grad, "the output carries no gradient: keep everything in torch (no numpy).")
_mine(_x).sum().backward()
checks.expect(_mine.linear1.weight.grad is not None, "no gradient reaches the weights: use the block's own parts.")
layer_norm, feed_forward, EncoderBlock = _students_norm_ffn
### END HIDDEN TESTS
checks.passed("EncoderBlock")

# %% [markdown]
# Your block and PyTorch's agree. Lesson 9 stacks your `EncoderBlock`s into a small Transformer;
# `nn.TransformerEncoderLayer` computes the same, as the cell below shows on a larger block.

# %%
with ac.student_code("EncoderBlock"):
    x_demo = torch.randn(2, 6, 16, dtype=torch.float64)
    for norm_first in (False, True):
        torch.manual_seed(1)
        ref = (
            nn.TransformerEncoderLayer(16, 4, 64, dropout=0.0, batch_first=True, norm_first=norm_first).double().eval()
        )
        mine = EncoderBlock(16, 4, 64, norm_first=norm_first).double().eval()
        mine.load_state_dict(ref.state_dict())
        with torch.no_grad():
            diff = (mine(x_demo) - ref(x_demo)).abs().max().item()
        print(
            f"norm_first={norm_first!s:5}: max |your block − nn.TransformerEncoderLayer| = {diff:.1e} "
            f"({sum(p.numel() for p in mine.parameters())} parameters)"
        )


# %% [markdown]
# ## 6. The residual stream
#
# Write a pre-LN stack out. Start from the embeddings (plus positional encodings), $x_0$. Every sublayer
# $f$ (attention or feed-forward) reads a normalised copy of the current vector and *adds* its output:
#
# $$x \leftarrow x + f\big(\mathrm{LN}(x)\big), \qquad\text{so after } L \text{ sublayers}\qquad
# x_L = x_0 + f_1(\cdot) + f_2(\cdot) + \dots + f_L(\cdot).$$
#
# Think of $x$ as a **residual stream**, one vector per token, that flows through the whole stack: every
# sublayer reads from it and writes into it by addition. Nothing overwrites the input, and a later
# sublayer can read what earlier ones wrote. (Lesson 9's model is such a stream running through your
# blocks.) In post-LN the same additions happen, but a LayerNorm is applied to the stream itself after
# each one, so everything written so far is rescaled at every step.
#
# One consequence you can measure: in pre-LN nothing ever normalises the stream, so its size grows as
# blocks add to it; in post-LN every block ends with a LayerNorm, so the stream leaves each block with
# size 1 (at initialisation, where $\gamma = 1$ and $\beta = 0$). That is why a **pre-LN stack ends with one
# more LayerNorm** after its last block: whatever reads the stack's output (the output layer, or the next
# part of a model) then gets normalised vectors (scaled by that norm's learned $\gamma$), however deep the
# stack is and however large training made the writes. GPT-2 calls it `ln_f`; `nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model))`
# adds it. Post-LN needs none: its last operation already is a LayerNorm.
#
# The cell stacks 12 of your blocks (random weights; $d_\text{model} = 16$, 2 heads, $d_\text{ff} = 32$) on
# the dog sentence and prints the root-mean-square size of the stream after each block.


# %%
def rms(t):
    """Root-mean-square size of the entries of t."""
    return t.pow(2).mean().sqrt().item()


with ac.student_code("EncoderBlock"):
    x0 = torch.from_numpy(data.embed(data.DOG_SENTENCE, 16))[None]  # (1, 11, 16)
    n_blocks = 12
    for norm_first in (False, True):
        torch.manual_seed(0)
        blocks = [EncoderBlock(16, 2, 32, norm_first=norm_first).double().eval() for _ in range(n_blocks)]
        x, sizes, writes = x0, [rms(x0)], []
        with torch.no_grad():
            for block in blocks:
                y = block(x)
                writes.append(rms(y - x))  # what this block added (pre-LN: exactly its write)
                x = y
                sizes.append(rms(x))
        name = "pre-LN " if norm_first else "post-LN"
        print(f"{name}: stream size after blocks 0…{n_blocks}: {np.round(sizes, 2)}")
        if norm_first:
            final_norm = nn.LayerNorm(16).double()
            print(f"         each block's write: {np.round(writes, 2)}")
            print(f"         after the final LayerNorm: {rms(final_norm(x)):.2f}")

# %% [markdown]
# ## 7. Explore: how deep can the gradient travel, and how large does the stream get?
#
# The explorer builds a stack of `depth` feed-forward sublayers ($d_\text{model} = 16$, $d_\text{ff} = 32$,
# PyTorch's default initialisation) using **your** `feed_forward` and `layer_norm`, in the configuration
# you pick:
# * **plain**: $x \leftarrow \mathrm{FFN}(x)$;  **layer norm only**: $x \leftarrow \mathrm{LN}(\mathrm{FFN}(x))$;
# * **residual only**: $x \leftarrow x + \mathrm{FFN}(x)$;
# * **residual + post-LN**: $x \leftarrow \mathrm{LN}(x + \mathrm{FFN}(x))$;  **residual + pre-LN**: $x \leftarrow x + \mathrm{FFN}(\mathrm{LN}(x))$.
#
# It runs 8 random inputs through the stack, backpropagates a fixed loss and plots, for every layer, the
# norm of the gradient of that layer's first weight matrix (left) and the size (root mean square) of the
# stream after that layer (right). The black dashed curves are the plain stack, for comparison.

# %%
CONFIGS = ["plain", "layer norm only", "residual only", "residual + post-LN", "residual + pre-LN"]


def ffn_stack(depth, config, ffn, norm, d=16, d_ff=32, seed=0):
    """A stack of `depth` FFN sublayers in configuration `config`, with ffn(x, W1, b1, W2, b2) and
    norm(x, gamma, beta) as the sublayer and layer-norm functions. Returns two lists, layer 1 first: the
    gradient norm of every layer's first weight matrix, and the root-mean-square size of x after every layer."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    layers = [(nn.Linear(d, d_ff), nn.Linear(d_ff, d)) for _ in range(depth)]
    gamma, beta = torch.ones(d), torch.zeros(d)
    x = torch.randn(8, d, generator=g)
    target = torch.randn(8, d, generator=g)
    sizes = []
    for l1, l2 in layers:
        f = lambda z: ffn(z, l1.weight, l1.bias, l2.weight, l2.bias)
        if config == "plain":
            x = f(x)
        elif config == "layer norm only":
            x = norm(f(x), gamma, beta)
        elif config == "residual only":
            x = x + f(x)
        elif config == "residual + post-LN":
            x = norm(x + f(x), gamma, beta)
        else:
            x = x + f(norm(x, gamma, beta))
        sizes.append(rms(x.detach()))
    (x * target).sum().backward()  # a fixed linear loss: its gradient never saturates
    return [l1.weight.grad.norm().item() for l1, _ in layers], sizes


class DepthView(widgets.View):
    """Gradient per layer and stream size per layer for a stack of your feed_forward / layer_norm."""

    SPANS, FLOOR = (4, 8, 16, 32), 1e-20  # the depth axis runs 1..span, the smallest span that holds the depth

    def __init__(self):
        self.plain = {}  # depth -> the plain stack's curves (they do not depend on config)

    def key(self, depth, config):
        # one layout per span, its axes spanning what every configuration draws at its depths: a new configuration
        # or a depth within the span redraws only the curves and the titles, which keeps the controls quick
        return next(span for span in self.SPANS if depth <= span)

    def depths(self, depth):
        """The depths that share `depth`'s layout."""
        span = self.key(depth, None)
        return range(max(s for s in (0, *self.SPANS) if s < span) + 1, span + 1)

    def plain_stack(self, depth):
        if depth not in self.plain:
            self.plain[depth] = ffn_stack(depth, "plain", feed_forward, layer_norm)
        return self.plain[depth]

    @staticmethod
    def decades(*curves):
        """Log-axis limits at whole powers of ten around every value of the curves."""
        values = np.concatenate([np.maximum(c, DepthView.FLOOR) for c in curves])
        values = values[np.isfinite(values)]  # a configuration your code breaks must not take the others' axes down
        if not values.size:
            return DepthView.FLOOR, 1.0
        return 10.0 ** np.floor(np.log10(values.min()) - 1e-9), 10.0 ** np.ceil(np.log10(values.max()) + 1e-9)

    def build(self, depth, config):
        shown = [self.plain_stack(d) for d in self.depths(depth)]
        others = [c for c in CONFIGS if c != "plain"]
        shown += [ffn_stack(d, c, feed_forward, layer_norm) for d in self.depths(depth) for c in others]  # your code
        fig, (left, right) = plt.subplots(1, 2, figsize=(6.6, 3.9), layout="constrained")
        self.lines = {}
        for ax, index in ((left, 0), (right, 1)):
            (reference,) = ax.semilogy([], [], "--", color=plots.color("guide"), label="plain (for comparison)")
            (chosen,) = ax.semilogy([], [], "o-", ms=3, color=plots.color("yours"), label="the chosen configuration")
            self.lines[index] = (reference, chosen)
            ax.set_xlim(0.5, self.depths(depth)[-1] + 0.5)
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
            ax.set_xlabel("layer (1 = first,\nfarthest from the loss)")
        left.set_ylim(*self.decades(*(grads for grads, _ in shown)))
        left.set_ylabel("‖∂loss/∂W₁‖ (log)")
        right.set_ylim(*self.decades(*(sizes for _, sizes in shown)))
        right.set_ylabel("stream size after the layer\n(RMS, log)")
        right.legend(loc="upper left", fontsize=9)
        # the titles state the readout, at the current depth: layer 1's gradient and the last layer's stream size
        self.titles = [ax.set_title(" ", fontsize=10) for ax in (left, right)]
        self.dynamic = [*self.lines[0], *self.lines[1], *self.titles]
        return fig

    def update(self, depth, config):
        self.mine = ffn_stack(depth, config, feed_forward, layer_norm)  # your code
        layers = np.arange(1, depth + 1)
        for index in (0, 1):
            reference, chosen = self.lines[index]
            reference.set_data(layers, np.maximum(self.plain_stack(depth)[index], self.FLOOR))
            chosen.set_data(layers, np.maximum(self.mine[index], self.FLOOR))
        (grads, sizes), (plain_grads, plain_sizes) = self.mine, self.plain_stack(depth)
        plain = config == "plain"  # then the comparison is the curve itself
        self.titles[0].set_text(
            f"layer 1's gradient: {grads[0]:.1e}" + ("\n" if plain else f"\n(plain: {plain_grads[0]:.1e})")
        )
        self.titles[1].set_text(
            f"stream after layer {depth}: {sizes[-1]:.2f}" + ("\n" if plain else f"\n(plain: {plain_sizes[-1]:.2f})")
        )

    def alt(self, depth, config):
        grads, sizes = self.mine
        return (
            f"With '{config}' and {depth} layer{'s' * (depth > 1)}, the gradient reaching layer 1 is {grads[0]:.1e}"
            + ("" if config == "plain" else f", against {self.plain_stack(depth)[0][0]:.1e} for the plain stack")
            + ". "
            f"Two log plots for a stack of {depth} feed-forward sublayers, configuration '{config}'. Left: the "
            f"gradient norm of W₁ is {grads[0]:.1e} at layer 1 and {grads[-1]:.1e} at layer {depth} (plain stack: "
            f"{self.plain_stack(depth)[0][0]:.1e} at layer 1). Right: the stream size after layer {depth} is "
            f"{sizes[-1]:.2f} (plain: {self.plain_stack(depth)[1][-1]:.2f})."
        )


widgets.explore(
    DepthView(),
    needs=["feed_forward", "layer_norm"],
    depth=widgets.slider("depth", 1, 32, 16),
    config=widgets.dropdown("configuration", CONFIGS, "residual + pre-LN"),
)

# %% [markdown]
# **Things to try.** Pick *plain* and raise the depth: the first layers' gradients drop by many orders
# of magnitude. Switch to *residual only*, *residual + post-LN* or *residual + pre-LN*: the gradient curve
# stays within a small factor of its value at the last layer. Then look at the right plot: with
# *residual + post-LN* (and *layer norm only*) the stream leaves every layer with size 1, with
# *residual + pre-LN* it grows slowly with depth, and with *residual only* it grows fastest. (The explorer draws
# one random initialisation; section 8 prints the sizes at depth 32 averaged over three.)

# %% [markdown]
# ## 8. Experiment: what residuals and norms change in a deep stack
#
# **The gradient reaching the first layer.** The measurement behind the claims of section 1, with PyTorch's
# own `F.layer_norm` and `nn.Linear`: for depths 1 to 32 and each configuration, the norm of the gradient of
# the **first** layer's $W_1$, averaged (geometric mean) over 3 random initialisations.

# %%
depths = [1, 2, 4, 8, 16, 32]
torch_ffn = lambda x, W1, b1, W2, b2: F.linear(F.relu(F.linear(x, W1, b1)), W2, b2)
torch_norm = lambda x, gamma, beta: F.layer_norm(x, x.shape[-1:], gamma, beta)
runs = {
    (config, D, s): ffn_stack(D, config, torch_ffn, torch_norm, seed=s)
    for config in CONFIGS
    for D in depths
    for s in range(3)
}
first_layer = {
    config: [float(np.exp(np.mean([np.log(runs[config, D, s][0][0] + 1e-300) for s in range(3)]))) for D in depths]
    for config in CONFIGS
}
STYLE = {  # configuration -> (its meaning in the course's palette, line style)
    "plain": ("guide", "o--"),
    "layer norm only": ("other2", "s-"),
    "residual only": ("other", "^-"),
    "residual + post-LN": ("baseline", "D-"),
    "residual + pre-LN": ("yours", "v-"),
}


def label_ends(ax, labels, min_gap=0.22):
    """Write each label at the right end of its line, labels = {text: (y at depth 32, meaning)}, nudged apart by at
    least `min_gap` decades so that no label covers another."""
    last = -np.inf
    for text, (y, meaning) in sorted(labels.items(), key=lambda item: item[1][0]):
        last = max(np.log10(y), last + min_gap)
        ax.text(40, 10**last, text, va="center", color=plots.text_color(meaning))


fig, (full, zoom) = plt.subplots(2, 1, figsize=(6.6, 7.0), sharex=True, layout="constrained")
for ax, shown in ((full, CONFIGS), (zoom, CONFIGS[1:])):
    for config in shown:
        ax.semilogy(depths, first_layer[config], STYLE[config][1], ms=4, color=plots.color(STYLE[config][0]))
    ax.set_xscale("log")  # the depths double: 1 to 32
    ax.set_xlim(0.8, 400)
    ax.set_xticks(depths, [str(D) for D in depths])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_ylabel("‖∂loss/∂W₁‖ of layer 1 (log)")
label_ends(full, {"plain": (first_layer["plain"][-1], "guide"), "the other four (zoom below)": (30, "guide")})
label_ends(zoom, {c: (first_layer[c][-1], STYLE[c][0]) for c in CONFIGS[1:]})
zoom.set_ylim(0.1, 300)
zoom.set_xlabel(
    "depth of the stack (FFN sublayers, log scale)\n"
    r"geometric mean of 3 seeds; $d_\mathrm{model}$ = 16, $d_\mathrm{ff}$ = 32"
)
full.set_title("Without a residual path the gradient reaching layer 1\nvanishes with depth")
zoom.set_title("Zoom: with one it keeps its size;\nlayer norm alone only slows the fall")
plots.show(
    fig,
    name="08_gradient_depth",
    alt="Without a residual path the gradient reaching the first layer vanishes with depth; with one it keeps its "
    "size, and layer norm alone only slows the fall. "
    "Two log plots of the gradient norm reaching the first layer against the depth of the stack (1 to 32). "
    f"Top, all five configurations: the plain stack falls to {first_layer['plain'][-1]:.1e} at depth 32. Bottom, "
    "zoomed on the other four, at depth 32: "
    + "; ".join(f"{c} {first_layer[c][-1]:.2g}" for c in CONFIGS[1:])
    + f" (at depth 1 all five are between {min(n[0] for n in first_layer.values()):.0f} and "
    f"{max(n[0] for n in first_layer.values()):.0f}).",
)

for config, norms in first_layer.items():
    size = np.mean([runs[config, 32, s][1][-1] for s in range(3)])
    print(
        f"{config:20s}: gradient at layer 1: depth 1 -> {norms[0]:.2e}, depth 32 -> {norms[-1]:.2e} "
        f"(ratio {norms[-1] / norms[0]:.1e}); stream size after layer 32: {size:.2f}"
    )


# %% [markdown]
# Without residual connections, the gradient that reaches the first layer of the plain stack shrinks
# geometrically with depth — the vanishing-gradient problem from lesson 1 again. Layer norm on its own
# keeps the activations at unit scale, which slows the decay a lot, but the gradient still has to pass
# through every layer's Jacobian and keeps falling with depth. With a residual path the first layer's
# gradient stays of the same order of magnitude at every depth, with either norm placement: the identity
# term in $I + \partial F/\partial x$ at work. At initialisation, then, post-LN and pre-LN look alike.
# Whether they *train* alike is the next measurement.
#
# **Training a 12-block stack: post-LN against pre-LN.** A toy task: each example is a random vector
# $x \in \mathbb{R}^{16}$, and its class (one of 4) is decided by a fixed random "teacher" network,
# $\arg\max(\tanh(x T_1)\, T_2)$. The model: 12 blocks, each one feed-forward sublayer ($d_\text{ff} = 32$,
# to keep it fast) with a residual connection and a LayerNorm, post-LN or pre-LN (with its final LayerNorm),
# then a linear layer to the 4 classes. We train it with Adam for 120 steps of 32 examples, from the same 4 random
# initialisations for both placements, at three learning rates: 0.003, 0.02 and 0.03. Without a **warm-up** the
# full learning rate applies from the first step. At 0.02 and 0.03 post-LN is also trained with a warm-up, a common
# remedy for post-LN: the learning rate rises linearly from 1/60 of its value to all of it over the first 60 steps.
# Pre-LN is trained with the same warm-up there too, so that each placement is compared with the same help. For comparison, a 3-block stack trains at 0.03. A run
# counts as having *learned* when its final loss (the mean of its last 10 steps) is more than 0.2 below the loss
# of a model that only knows how often each class occurs.
#
# The 4 seeds are trained at once: every weight has a leading axis of size 4, one independent model per
# seed. Adam updates every number on its own, so this is exactly 4 separate runs, only faster.


# %%
def init_stacks(n_models, depth, d, d_ff, n_classes, seed):
    """Weights of n_models independent stacks (nn.Linear's default initialisation), stacked on a leading axis."""
    g = torch.Generator().manual_seed(seed)

    def uniform(shape, fan_in):
        return ((torch.rand(shape, generator=g) * 2 - 1) / fan_in**0.5).requires_grad_()

    return {
        "W1": uniform((n_models, depth, d, d_ff), d),
        "b1": uniform((n_models, depth, 1, d_ff), d),
        "W2": uniform((n_models, depth, d_ff, d), d_ff),
        "b2": uniform((n_models, depth, 1, d), d_ff),
        "gamma": torch.ones(n_models, depth + 1, 1, d, requires_grad=True),  # one norm per block + a final one
        "beta": torch.zeros(n_models, depth + 1, 1, d, requires_grad=True),
        "W_out": uniform((n_models, d, n_classes), d),
    }


def stack_logits(p, x, pre_ln):
    """x (n_models, batch, d) -> class scores (n_models, batch, n_classes) of every model."""

    def norm(z, l):
        return F.layer_norm(z, z.shape[-1:]) * p["gamma"][:, l] + p["beta"][:, l]

    depth = p["W1"].shape[1]
    for l in range(depth):
        f = lambda z: torch.relu(z @ p["W1"][:, l] + p["b1"][:, l]) @ p["W2"][:, l] + p["b2"][:, l]
        x = x + f(norm(x, l)) if pre_ln else norm(x + f(x), l)
    if pre_ln:
        x = norm(x, depth)  # pre-LN's final LayerNorm
    return x @ p["W_out"]


STEPS, WARMUP = 120, 60


def train_stacks(pre_ln, lr, depth, warmup=0, n_seeds=4, batch=32, d=16, d_ff=32, n_classes=4):
    """Train n_seeds stacks with Adam for STEPS steps; with `warmup` > 0 the learning rate rises linearly from
    lr / warmup to lr over the first `warmup` steps. Returns every model's loss at every step, (n_seeds, STEPS)."""
    data_rng = torch.Generator().manual_seed(1000)  # the same teacher and batches for every run
    T1, T2 = torch.randn(d, 32, generator=data_rng), torch.randn(32, n_classes, generator=data_rng)
    p = init_stacks(n_seeds, depth, d, d_ff, n_classes, seed=depth)  # the same initial weights for post and pre
    optimizer = torch.optim.Adam(p.values(), lr=lr)
    losses = []
    for step in range(STEPS):
        for group in optimizer.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / warmup) if warmup else lr
        x = torch.randn(batch, d, generator=data_rng)
        y = (torch.tanh(x @ T1) @ T2).argmax(dim=-1)
        logits = stack_logits(p, x.expand(n_seeds, batch, d), pre_ln)
        loss = F.cross_entropy(logits.transpose(1, 2), y.expand(n_seeds, batch), reduction="none").mean(dim=-1)
        optimizer.zero_grad()
        loss.sum().backward()  # the sum: each model gets the gradient of its own loss
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses, dim=1).numpy()


PLACEMENTS = [("post-LN", False, 0, "baseline", "-"), ("pre-LN", True, 0, "yours", "--")]  # label, pre_ln, warm-up,
WITH_WARMUP = PLACEMENTS + [  # meaning, line style: the same warm-up for both placements
    ("post-LN with warm-up", False, WARMUP, "other", "-."),
    ("pre-LN with warm-up", True, WARMUP, "other2", (0, (1, 1.5))),
]
RUNS = {(12, 3e-3): PLACEMENTS, (3, 3e-2): PLACEMENTS, (12, 2e-2): WITH_WARMUP, (12, 3e-2): WITH_WARMUP}  # panels
curves = {
    (D, lr, label): train_stacks(pre, lr, D, warm) for (D, lr), runs_ in RUNS.items() for label, pre, warm, *_ in runs_
}
teacher = torch.Generator().manual_seed(1000)
T1, T2 = torch.randn(16, 32, generator=teacher), torch.randn(32, 4, generator=teacher)
frequencies = (
    torch.bincount((torch.tanh(torch.randn(20000, 16, generator=teacher) @ T1) @ T2).argmax(-1), minlength=4) / 20000
)
baseline = -(frequencies * frequencies.log()).sum().item()  # the loss of always predicting the class frequencies
final = {key: c[:, -10:].mean(axis=1) for key, c in curves.items()}  # each seed's mean loss over the last 10 steps
learned = {key: int((f < baseline - 0.2).sum()) for key, f in final.items()}  # seeds clearly below the baseline

fig, axes = plt.subplots(2, 2, figsize=(6.6, 6.6), sharex=True, sharey=True, layout="constrained")
for ax, ((D, lr), runs_) in zip(axes.flat, RUNS.items()):
    for label, _, _, meaning, style in runs_:
        c = curves[D, lr, label]
        ax.plot(c.mean(0), ls=style, color=plots.color(meaning), label=label)
        ax.fill_between(np.arange(STEPS), c.min(0), c.max(0), color=plots.color(meaning), alpha=0.2, lw=0)
    ax.axhline(baseline, color=plots.color("chance"), ls=":", label="loss of predicting the class frequencies")
    verdict = "\n".join(f"{label}: {learned[D, lr, label]}/4" for label, *_ in runs_)
    ax.text(0.98, 0.97, "learned\n" + verdict, transform=ax.transAxes, ha="right", va="top", fontsize=9)
    ax.set_title(f"{D} blocks, Adam lr = {lr:g}")
    ax.set_ylim(0.35, 2.6)  # room for the counts of seeds that learned
for ax in axes[1]:
    ax.set_xlabel("training step")
for ax in axes[:, 0]:
    ax.set_ylabel("training loss")
fig.legend(*axes[1, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
fig.suptitle(
    f"Deep post-LN fails at the larger learning rates; a {WARMUP}-step warm-up helps\nit at 0.02, is not enough "
    "at 0.03 (lines: mean of 4 seeds; bands: min–max)"
)
plots.show(
    fig,
    name="08_post_vs_pre_training",
    alt=f"Deep post-LN fails at the larger learning rates, and a {WARMUP}-step warm-up helps it at 0.02 but is not "
    "enough at 0.03. Four panels of training loss curves, mean and min-max band of 4 seeds. "
    + " ".join(
        f"{D} blocks, lr {lr:g}: "
        + ", ".join(f"{label} ends at {final[D, lr, label].mean():.2f}" for label, *_ in runs_)
        + "."
        for (D, lr), runs_ in RUNS.items()
    )
    + f" The loss of predicting the class frequencies is {baseline:.2f}.",
)
print(
    f"loss of always predicting the class frequencies: {baseline:.3f} ('learned': a final loss below {baseline - 0.2:.3f})"
)
for (D, lr), runs_ in RUNS.items():
    for label, *_ in runs_:
        f = final[D, lr, label]
        print(
            f"{D:2d} blocks, lr = {lr:<6g} {label:21s}: final loss {f.mean():.3f} (seeds {f.min():.3f}–{f.max():.3f}), "
            f"learned in {learned[D, lr, label]} of 4 seeds"
        )
warm = np.convolve(curves[12, 3e-2, "post-LN with warm-up"].mean(0), np.ones(10) / 10, mode="valid")
lowest = int(warm.argmin())  # the 10 steps lowest..lowest+9 have the lowest mean loss
print(
    f"post-LN with warm-up at lr = 0.03: lowest mean loss over 10 steps {warm[lowest]:.3f}, at steps {lowest}–"
    f"{lowest + 9}, while the learning rate rose from {3e-2 * (lowest + 1) / WARMUP:.3f} to "
    f"{3e-2 * min(1, (lowest + 10) / WARMUP):.3f}; over the last 10 steps {warm[-1]:.3f}"
)

# %% [markdown]
# Read the printout with the figure (top row: the two settings where both placements learn; bottom row: 12
# blocks at the larger learning rates). The exact losses in your printout may differ from one machine to the next:
# training amplifies rounding differences in the last digits (another CPU adds the same numbers in another order),
# and a seed near the "learned" line can fall on either side of it. The statements below hold with a margin on every
# machine we tried:
# * At lr = 0.003 both placements learn the 12-block stack about equally well (every seed learns, and the two mean
#   final losses differ by less than 0.05), and with 3 blocks both learn in every seed even at 0.03.
# * At 0.02 and at 0.03, without warm-up, post-LN fails on the 12-block stack: every post-LN seed ends above every
#   pre-LN seed, and post-LN's mean final loss stays closer to the loss of predicting the class frequencies (1.38)
#   than to pre-LN's. Every pre-LN seed learns. Depth is what made post-LN fragile here.
# * The warm-up helps post-LN at 0.02: its mean final loss ends well below that of post-LN without a warm-up (by more
#   than 0.15). Given the same warm-up, pre-LN still ends lower: its mean final loss is below post-LN's by more than
#   0.1 at 0.02 and by more than 0.3 at 0.03, and every pre-LN seed learns. For pre-LN the warm-up changes little (its
#   mean final loss moves by less than 0.1 at either rate): it needed none. At 0.03 the warm-up is not enough for
#   post-LN: the loss falls while the learning rate is still small (its lowest 10-step average comes in the first half of the warm-up, before the rate
#   reaches 0.015) and climbs back, by more than 0.2, once the rate has passed 0.02 on its way to 0.03.
#
# This is one toy task, and what we measured is specific: a deep post-LN stack tolerated a smaller range of
# learning rates than pre-LN, and a warm-up widened that range a little (to 0.02 here) but did not remove the
# limit. It does not show that pre-LN is better in general: at the smallest learning rate post-LN did as well.

# %% [markdown]
# ## 9. Let's review
#
# * A **residual connection** computes $x + F(x)$; its Jacobian $I + \partial F/\partial x$ gives the gradient
#   a direct path to early layers. You measured the first-layer gradient vs depth with and without it.
# * **Layer norm** normalises every token's vector over its features (population variance, $\varepsilon$ inside
#   the square root), then applies $\gamma$ and $\beta$. Unlike **batch norm**, it does not depend on the other
#   examples in the batch, and works for a batch of one.
# * The **position-wise feed-forward network** $\max(0, x W_1 + b_1) W_2 + b_2$ processes every position
#   separately with the same weights (in code, `nn.Linear` stores $W_1^\top$).
# * An **encoder block** = attention sublayer + feed-forward sublayer, each with residual and layer norm:
#   **post-LN** normalises the sum, **pre-LN** normalises the branch input. Your block equals
#   `nn.TransformerEncoderLayer` in both forms; it runs its attention through `attend` and can switch residuals
#   and norms off, which is how lesson 9 uses it.
# * A stack is a **residual stream**: each sublayer reads from $x$ and adds to it, $x \leftarrow x + f(x)$. In
#   pre-LN nothing normalises the stream, so it grows with depth and the stack ends with a **final LayerNorm**.
# * Measured here: at initialisation both placements pass the gradient to layer 1 about as well. Trained with
#   Adam, the 12-block post-LN stack failed at the two larger learning rates, where every pre-LN seed learned,
#   and did as well as pre-LN at the smallest one. A learning-rate warm-up helped it at 0.02 but not at 0.03; pre-LN
#   given the same warm-up still ended lower at both rates, and needed none.
#
# Next lesson: all the pieces together in a tiny Transformer, trained end to end.

# %% [markdown]
# ## 10. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after each
# answer checks the format only; the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** Layer norm with $\gamma = 1$, $\beta = 0$ and $\varepsilon = 0$ is applied to the vector
# $[2, 4, 6, 8]$. What is the first entry of the result? Give at least three decimals.

# %% quiz="quiz-ln-entry" key="-3 / np.sqrt(5)" tol=0.001 points=1

# %% [markdown]
# **Q2 (1 point).** How many trainable parameters does `nn.LayerNorm(512)` have?

# %% quiz="quiz-ln-params" key="1024" points=1

# %% [markdown]
# **Q3 (1 point).** How many trainable parameters does the position-wise feed-forward network have for
# $d_\text{model} = 512$ and $d_\text{ff} = 2048$ (weights and biases)?

# %% quiz="quiz-ffn-params" key="2099712" points=1
q3_answer = 512 * 2048 + 2048 + 2048 * 512 + 512

# %% [markdown]
# **Q4 (1 point).** What is the Jacobian of a residual sublayer $y = x + F(x)$ with respect to $x$?
#
# * **a** — $\partial F/\partial x$ &nbsp; **b** — $I + \partial F/\partial x$ &nbsp; **c** — $I$ &nbsp; **d** — $2\,\partial F/\partial x$

# %% quiz="quiz-residual-jacobian" choices="abcd" key="b" points=1

# %% [markdown]
# **Q5 (1 point).** Which normalisation computes its statistics over the features of each token separately,
# so that a token's output does not depend on the other examples in the batch?
#
# * **a** — batch norm &nbsp; **b** — layer norm &nbsp; **c** — both &nbsp; **d** — neither

# %% quiz="quiz-ln-vs-bn" choices="abcd" key="b" points=1

# %% [markdown]
# **Q6 (1 point).** Which update is the attention sublayer of a **pre-LN** block?
#
# * **a** — $x \leftarrow \mathrm{LN}(x + \mathrm{MHA}(x))$ &nbsp; **b** — $x \leftarrow x + \mathrm{MHA}(\mathrm{LN}(x))$
#   &nbsp; **c** — $x \leftarrow \mathrm{LN}(\mathrm{MHA}(x))$ &nbsp; **d** — $x \leftarrow \mathrm{MHA}(x) + \mathrm{LN}(x)$

# %% quiz="quiz-pre-ln" choices="abcd" key="b" points=1

# %% [markdown]
# **Q7 — free answer (3 points, graded by hand).** A colleague wants to build a 32-block Transformer and
# asks whether the residual connections are really needed "now that we have layer norm", and where to put
# the norm. Using your measurements from sections 6–8, explain in 3–5 sentences what each of the two tools
# does for a deep stack, and which norm placement you would recommend, under which condition. Say what your
# measurements do *not* show.
#
# <details><summary>Before you hand in</summary>
#
# * Does your answer say what layer norm does to the activations, and what it does *not* do for the gradient?
# * Does it say what a residual connection adds to the gradient's path, and point to a measured curve or number?
# * Is your placement recommendation tied to a condition you measured (learning rate, warm-up, depth)?
# * Does it name at least one limit of the evidence?
# </details>

# %% [markdown] manual="quiz-free-deep-stack" points=3
# ### BEGIN SOLUTION
# *Model answer.* Layer norm fixes the *scale* of every token's vector, so activations neither blow up nor
# die out from layer to layer; but without a skip, the gradient for layer 1 is still a product of all the
# layers' Jacobians: in section 8 the "layer norm only" stack's first-layer gradient fell from about 79 at depth 1
# to 0.29 at depth 32, and the plain stack's to $2.5 \times 10^{-19}$. Residual connections add an identity path
# ($I + \partial F/\partial x$): with them the first-layer gradient stayed between 14 and 43 at depth 32, with no
# norm or with either norm placement. So both are needed. On placement: at initialisation the two looked alike,
# but trained with Adam, every seed of the 12-block post-LN stack ended above every pre-LN seed at lr = 0.02 and
# 0.03, where every pre-LN seed learned; at lr = 0.003 both learned about equally well. A 60-step linear warm-up
# helped post-LN at 0.02 (a much lower loss, though still above pre-LN's, with or without the same warm-up) but not
# at 0.03. I
# would recommend pre-LN, with its final LayerNorm since its stream grows with depth (section 6), when the learning
# rate is not carefully tuned;
# post-LN only with a warm-up *and* a peak learning rate it has been shown to tolerate. The measurements come
# from 12 blocks, tiny feed-forward-only stacks, one toy task and 4 seeds, so for 32 blocks they are a hint,
# not a proof.
#
# *Rubric (3 points).* 1 point: layer norm controls the scale of activations but does not by itself give a
# direct gradient path, and residuals give an identity path ($I + J$), backed by the measured gradient curves
# (numbers or their shape). 1 point: a placement recommendation tied to the training measurement (post-LN
# failed at the larger learning rates without warm-up, both trained at the small one; the warm-up helped it at
# 0.02 only, and pre-LN with the same warm-up still ended lower) — a recommendation resting only on "pre-LN trains more easily" without the condition gets at most
# half of this point. 1 point: names a limit of the evidence (depth 12 not 32, toy task, feed-forward-only
# blocks, few seeds) or mentions pre-LN's final LayerNorm with its reason. No points for only restating
# definitions.
# ### END SOLUTION
