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
# **Attention, from the dot product up** · lesson 8
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
#    each norm placement.
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
import matplotlib.pyplot as plt
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
# choose another scale and shift if that helps. So the output does not depend on the scale of the input
# (section 3 checks it): whatever the layers before it did to the size of a vector, the layer after a
# norm sees vectors of the same size.

# %% [markdown]
# ### Exercise 8.1 — layer norm (2 points)
#
# Implement `layer_norm(x, gamma, beta, eps=1e-5)` for a torch tensor `x` of shape `(..., d)` (any
# number of leading axes) with `gamma` and `beta` of shape `(d,)`, returning a tensor of the same shape
# as `x`: every vector along the last axis normalised as above, then scaled by `gamma` and shifted by
# `beta`. Use torch operations, not `F.layer_norm` or `nn.LayerNorm` — the tests compare your result
# with those.
#
# <details><summary>Hint</summary>
#
# `x.mean(dim=-1, keepdim=True)` keeps the last axis so that the result broadcasts against `x`. For the
# variance, average the squared deviations yourself, or use `x.var(dim=-1, unbiased=False, keepdim=True)`
# (plain `x.var()` divides by $d-1$). Then `torch.sqrt(var + eps)`.
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
# Visible checks: a worked example and the mean-0 / variance-1 property.
_x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
_g = torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=torch.float64)
_b = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=torch.float64)
# mean 2.5, population variance 1.25; with eps = 0.25 the divisor is sqrt(1.5) = 1.2247...
_mistakes = {
    "the variance divides by d − 1 (unbiased); layer norm uses the population variance (divide by d, "
    "e.g. unbiased=False).": [[-1.08347268, -0.36115756, 0.36115756, 3.16694536]],
    "eps is added outside the square root: use sqrt(variance + eps).": [[-1.09646399, -0.365488, 0.365488, 3.19292797]],
    "eps is missing: use sqrt(variance + eps).": [[-1.34164079, -0.4472136, 0.4472136, 3.68328157]],
    "gamma and beta are not applied: multiply by gamma, then add beta.": [
        [-1.22474487, -0.40824829, 0.40824829, 1.22474487]
    ],
    "gamma and beta are swapped: multiply by gamma, add beta.": [[1.0, 1.0, 1.0, 3.22474487]],
}
checks.expect_close(
    checks.call(layer_norm, _x, _g, _b, eps=0.25),
    [[-1.22474487, -0.40824829, 0.40824829, 3.44948974]],
    "layer_norm([[1, 2, 3, 4]], eps=0.25)",
    mistakes=_mistakes,
)
_y = layer_norm(
    torch.randn(2, 3, 6, dtype=torch.float64) * 5 + 3,
    torch.ones(6, dtype=torch.float64),
    torch.zeros(6, dtype=torch.float64),
)
checks.expect_shape(_y, (2, 3, 6), "layer_norm on a (2, 3, 6) tensor")
checks.expect_close(
    _y.mean(-1),
    torch.zeros(2, 3),
    "the mean of every normalised vector along the last axis (if not 0, check the axis: dim=-1)",
    atol=1e-6,
)


### BEGIN HIDDEN TESTS
def _layer_norm_hidden():
    g = torch.Generator().manual_seed(8)
    x = torch.randn(3, 5, 16, generator=g, dtype=torch.float64) * 2 + 1
    gamma = torch.randn(16, generator=g, dtype=torch.float64)
    beta = torch.randn(16, generator=g, dtype=torch.float64)
    for eps, scale in [(1e-5, 1.0), (0.1, 0.3)]:
        xs = x * scale
        ref = nn.LayerNorm(16, eps=eps).double()
        with torch.no_grad():
            ref.weight.copy_(gamma)
            ref.bias.copy_(beta)
            want = ref(xs)
        mu = xs.mean(-1, keepdim=True)
        var, uvar = xs.var(-1, unbiased=False, keepdim=True), xs.var(-1, unbiased=True, keepdim=True)
        bmu, bvar = xs.mean(0, keepdim=True), xs.var(0, unbiased=False, keepdim=True)
        mistakes = {
            "the variance divides by d − 1 (unbiased); layer norm uses the population variance (divide by d).": gamma
            * (xs - mu)
            / torch.sqrt(uvar + eps)
            + beta,
            "eps is added outside the square root: use sqrt(variance + eps).": gamma * (xs - mu) / (var.sqrt() + eps)
            + beta,
            "eps is missing: use sqrt(variance + eps).": gamma * (xs - mu) / var.sqrt() + beta,
            "the statistics are taken over the batch (that is batch norm): use the last axis.": gamma
            * (xs - bmu)
            / torch.sqrt(bvar + eps)
            + beta,
            "the statistics are taken over the whole tensor: normalise every vector along the last axis on its own.": gamma
            * (xs - xs.mean())
            / torch.sqrt(xs.var(unbiased=False) + eps)
            + beta,
            "gamma and beta are not applied: multiply by gamma, then add beta.": (xs - mu) / torch.sqrt(var + eps),
            "gamma and beta are swapped: multiply by gamma, add beta.": beta * (xs - mu) / torch.sqrt(var + eps)
            + gamma,
        }
        got = layer_norm(xs, gamma, beta, eps=eps)
        checks.expect(isinstance(got, torch.Tensor), "layer_norm must return a torch tensor.")
        checks.expect_close(got, want, f"layer_norm on (3, 5, 16) with eps = {eps}", mistakes=mistakes)
    const = torch.full((2, 16), 3.0, dtype=torch.float64)  # variance 0: the output must be beta, not NaN
    checks.expect_close(layer_norm(const, gamma, beta), beta.expand(2, 16), "layer_norm of constant vectors")
    one = layer_norm(x[0, 0], gamma, beta)
    checks.expect_close(one, F.layer_norm(x[0, 0], (16,), gamma, beta), "layer_norm of a single vector (16,)")


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
# time. Batch norm needs a batch (and keeps running averages for test time). That is why Transformers use
# layer norm.

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
# `(d_model, d_ff)` ($W_2^\top$), `b2` of shape `(d_model,)`. Use torch operations.


# %% answer="feed-forward"
def feed_forward(x, W1, b1, W2, b2):
    """x (..., d_model); W1 (d_ff, d_model), b1 (d_ff,), W2 (d_model, d_ff), b2 (d_model,) -> (..., d_model)."""
    ### BEGIN SOLUTION
    return torch.relu(x @ W1.T + b1) @ W2.T + b2
    ### END SOLUTION


# %% tests="feed-forward-tests" points=2
# Visible checks: a worked example with d_model = 2, d_ff = 3.
_x = torch.tensor([[1.0, -1.0]], dtype=torch.float64)
_W1 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
_b1 = torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64)
_W2 = torch.tensor([[1.0, 1.0, 1.0], [1.0, -1.0, 2.0]], dtype=torch.float64)
_b2 = torch.tensor([0.0, -0.5], dtype=torch.float64)
# hidden pre-activation [1, -1, 0.5] -> ReLU -> [1, 0, 0.5] -> [1.5, 2.0] + b2 = [1.5, 1.5]
checks.expect_close(
    checks.call(feed_forward, _x, _W1, _b1, _W2, _b2),
    [[1.5, 1.5]],
    "feed_forward on the worked example",
    mistakes={
        "the ReLU is missing: apply max(0, ·) to the hidden layer.": [[0.5, 2.5]],
        "b1 is missing.": [[1.0, 0.5]],
        "b2 is missing.": [[1.5, 2.0]],
        "use ReLU, not GELU (nn.TransformerEncoderLayer's default is ReLU).": [[1.0284207228, 1.1914624613]],
    },
)
_out = feed_forward(torch.randn(4, 5, 2, dtype=torch.float64), _W1, _b1, _W2, _b2)
checks.expect_shape(_out, (4, 5, 2), "feed_forward on a (4, 5, 2) batch")


### BEGIN HIDDEN TESTS
def _feed_forward_hidden():
    g = torch.Generator().manual_seed(9)
    d, dff = 16, 24
    x = torch.randn(3, 7, d, generator=g, dtype=torch.float64)
    W1, b1 = torch.randn(dff, d, generator=g, dtype=torch.float64), torch.randn(dff, generator=g, dtype=torch.float64)
    W2, b2 = torch.randn(d, dff, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    ref = nn.Sequential(nn.Linear(d, dff), nn.ReLU(), nn.Linear(dff, d)).double()
    with torch.no_grad():
        ref[0].weight.copy_(W1)
        ref[0].bias.copy_(b1)
        ref[2].weight.copy_(W2)
        ref[2].bias.copy_(b2)
        want = ref(x)
    h = x @ W1.T + b1
    mistakes = {
        "the ReLU is missing: apply max(0, ·) to the hidden layer.": h @ W2.T + b2,
        "b1 is missing.": torch.relu(x @ W1.T) @ W2.T + b2,
        "b2 is missing.": torch.relu(h) @ W2.T,
        "a ReLU is applied to the output as well: only the hidden layer has one.": torch.relu(
            torch.relu(h) @ W2.T + b2
        ),
        "use ReLU, not GELU (nn.TransformerEncoderLayer's default is ReLU).": F.gelu(h) @ W2.T + b2,
    }
    got = feed_forward(x, W1, b1, W2, b2)
    checks.expect_close(got, want, "feed_forward on (3, 7, 16) with d_ff = 24", mistakes=mistakes)
    perm = torch.tensor([6, 2, 0, 1, 5, 3, 4])
    checks.expect_close(
        feed_forward(x[:, perm], W1, b1, W2, b2),
        got[:, perm],
        "feed_forward on reordered positions (it must treat each position on its own)",
    )
    checks.expect_close(feed_forward(x[0, 0], W1, b1, W2, b2), want[0, 0], "feed_forward on a single vector")


_feed_forward_hidden()
### END HIDDEN TESTS
checks.passed("feed_forward")


# %% [markdown]
# ## 5. The encoder block, post-LN and pre-LN
#
# A Transformer encoder block has two sublayers — multi-head self-attention, then the feed-forward network
# — each wrapped in a residual connection and a layer norm. There are two ways to place the norm:
#
# | | attention sublayer | feed-forward sublayer |
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
# `linear2` make the FFN; `norm1` is $\mathrm{LN}_1$ and `norm2` is $\mathrm{LN}_2$, with their own `eps`.
# Keep everything in torch (no numpy) so that gradients flow through the block.
#
# When your work is graded, this exercise's checks run with correct versions of `layer_norm` and
# `feed_forward`, so a mistake in 8.1 or 8.2 costs points there only. The visible checks below use yours.
#
# <details><summary>Hint</summary>
#
# * Layer norm: `layer_norm(x, self.norm1.weight, self.norm1.bias, eps=self.norm1.eps)` (and `norm2` for the
#   feed-forward sublayer). Calling the module, `self.norm1(x)`, gives the same result.
# * Feed-forward: `feed_forward(x, self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)`,
#   or `self.linear2(torch.relu(self.linear1(x)))`.
# * Pre-LN attention sublayer: `x = x + self.attend(<LN_1 of x>)`; post-LN: `x = <LN_1 of (x + self.attend(x))>`.
# </details>


# %% answer="encoder-block"
class EncoderBlock(nn.Module):
    """A Transformer encoder block. Attribute names match nn.TransformerEncoderLayer (batch_first=True)."""

    def __init__(self, d_model, n_heads, d_ff, norm_first=False, eps=1e-5):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm_first = norm_first

    def attend(self, x):
        """Multi-head self-attention: every position of x (B, T, d_model) attends to every position."""
        return self.self_attn(x, x, x, need_weights=False)[0]

    def forward(self, x):
        """x (B, T, d_model) -> (B, T, d_model): post-LN if not self.norm_first, else pre-LN."""

        ### BEGIN SOLUTION
        def norm(x, ln):
            return layer_norm(x, ln.weight, ln.bias, eps=ln.eps)

        def ffn(x):
            return feed_forward(x, self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)

        if self.norm_first:
            x = x + self.attend(norm(x, self.norm1))
            x = x + ffn(norm(x, self.norm2))
        else:
            x = norm(x + self.attend(x), self.norm1)
            x = norm(x + ffn(x), self.norm2)
        return x
        ### END SOLUTION


# %% tests="encoder-block-tests" points=3
### BEGIN HIDDEN TESTS
# Graded with correct layer_norm and feed_forward (a mistake there costs points in 8.1 / 8.2 only).
def _reference_layer_norm(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)


def _reference_feed_forward(x, W1, b1, W2, b2):
    return F.linear(F.relu(F.linear(x, W1, b1)), W2, b2)


_students_norm_ffn = (layer_norm, feed_forward)
layer_norm, feed_forward = _reference_layer_norm, _reference_feed_forward


### END HIDDEN TESTS
# Visible checks: PyTorch's encoder layer and yours, with the same weights, on one small input.
def _reference_pair(norm_first, d_model=8, n_heads=2, d_ff=12, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        ref = (
            nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first)
            .double()
            .eval()
        )
    mine = EncoderBlock(d_model, n_heads, d_ff, norm_first=norm_first).double().eval()
    mine.load_state_dict(ref.state_dict())
    return ref, mine


_x = torch.from_numpy(data.embed(data.CAT_CHASES_DOG, 8))[None]  # (1, 5, 8)
_ref_post, _mine_post = _reference_pair(norm_first=False)
_ref_pre, _mine_pre = _reference_pair(norm_first=True)
with torch.no_grad():
    _want_post, _want_pre = _ref_post(_x), _ref_pre(_x)
    _got_post = checks.call(_mine_post.forward, _x)
    _got_pre = _mine_pre(_x)
checks.expect_shape(_got_post, (1, 5, 8), "EncoderBlock output")
# Column 0 of the output at the 5 positions; some slips and what they give on this example:
checks.expect_close(
    _got_post[0, :, 0],
    [-0.94625791, 1.20291908, -0.48757365, -0.94625791, -1.25248794],
    "column 0 of the post-LN output",
    atol=1e-5,
    mistakes={
        "the residual around attention is missing: LN1(x + MHA(x)).": [
            -0.10628242,
            -0.17543977,
            -0.13455655,
            -0.10628242,
            -0.15913352,
        ],
        "the residual around the feed-forward network is missing: LN2(x + FFN(x)).": [
            -1.13937546,
            0.01855781,
            -0.18310244,
            -1.13937546,
            0.04073099,
        ],
        "the norm is applied to the branch only (x + LN(MHA(x))); in post-LN it normalises the sum.": [
            -1.45837468,
            0.63203303,
            -0.87883840,
            -1.45837468,
            -2.28111548,
        ],
        "with norm_first=False you computed the pre-LN form: post-LN normalises after the residual sum.": [
            -0.88699989,
            0.84074718,
            -0.47018472,
            -0.88699989,
            -0.89643938,
        ],
    },
)
checks.expect_close(
    _got_pre[0, :, 0],
    [-0.88699989, 0.84074718, -0.47018472, -0.88699989, -0.89643938],
    "column 0 of the pre-LN output",
    atol=1e-5,
    mistakes={
        "the residual around attention is missing (x + MHA(LN1(x))).": [
            -0.15512355,
            -0.12693342,
            -0.09535872,
            -0.15512355,
            -0.13140758,
        ],
        "the residual around the feed-forward network is missing (x + FFN(LN2(x))).": [
            -0.26607727,
            0.05304242,
            -0.04216307,
            -0.26607727,
            0.09587557,
        ],
        "the output is normalised again after the residual sum: in pre-LN only the branch input is.": [
            -0.90434944,
            1.19227465,
            -0.49280711,
            -0.90434944,
            -1.31454351,
        ],
        "with norm_first=True you computed the post-LN form: pre-LN normalises the input of each branch.": [
            -0.94625791,
            1.20291908,
            -0.48757365,
            -0.94625791,
            -1.25248794,
        ],
    },
)
checks.expect_close(
    _got_post,
    _want_post,
    "the post-LN block (norm_first=False)",
    atol=1e-5,
    mistakes={
        "with norm_first=False you computed the pre-LN form: post-LN normalises after the residual sum.": _want_pre
    },
)
checks.expect_close(
    _got_pre,
    _want_pre,
    "the pre-LN block (norm_first=True)",
    atol=1e-5,
    mistakes={
        "with norm_first=True you computed the post-LN form: pre-LN normalises the input of each branch.": _want_post
    },
)


### BEGIN HIDDEN TESTS
def _encoder_block_hidden():
    d, h, dff, B, T = 16, 4, 24, 3, 7
    for norm_first in (False, True):
        with torch.random.fork_rng():
            torch.manual_seed(21 + norm_first)
            ref = (
                nn.TransformerEncoderLayer(d, h, dff, dropout=0.0, batch_first=True, norm_first=norm_first)
                .double()
                .eval()
            )
            for p in ref.parameters():  # non-trivial gains and biases in the norms too
                p.data.add_(0.1 * torch.randn_like(p))
            x = torch.randn(B, T, d, dtype=torch.float64) * 2
        mine = EncoderBlock(d, h, dff, norm_first=norm_first).double().eval()
        mine.load_state_dict(ref.state_dict())
        with torch.no_grad():
            want = ref(x)
            mha = lambda z: ref.self_attn(z, z, z, need_weights=False)[0]
            ffn = lambda z: ref.linear2(torch.relu(ref.linear1(z)))
            n1, n2 = ref.norm1, ref.norm2
            post = lambda z: n2(n1(z + mha(z)) + ffn(n1(z + mha(z))))
            pre = lambda z: (z + mha(n1(z))) + ffn(n2(z + mha(n1(z))))
            form = "post-LN (norm_first=False)" if not norm_first else "pre-LN (norm_first=True)"
            mistakes = {
                "the norm placement is swapped: norm_first=False is post-LN (norm after the residual sum), "
                "norm_first=True is pre-LN (norm on the branch input).": pre(x) if not norm_first else post(x),
            }
            if norm_first:
                a = x + mha(n1(x))
                mistakes.update(
                    {
                        "the residual around attention is missing (x + MHA(LN1(x))).": mha(n1(x)) + ffn(n2(mha(n1(x)))),
                        "the residual around the feed-forward network is missing (x + FFN(LN2(x))).": ffn(n2(a)),
                        "norm1 is used for both sublayers: the feed-forward sublayer uses norm2.": a + ffn(n1(a)),
                        "the output is normalised again after the residual sum: in pre-LN only the branch input is.": n2(
                            n1(x + mha(n1(x))) + ffn(n2(n1(x + mha(n1(x)))))
                        ),
                    }
                )
            else:
                a = n1(x + mha(x))
                mistakes.update(
                    {
                        "the residual around attention is missing: LN1(x + MHA(x)).": n2(n1(mha(x)) + ffn(n1(mha(x)))),
                        "the residual around the feed-forward network is missing: LN2(x + FFN(x)).": n2(ffn(a)),
                        "norm1 is used for both sublayers: the feed-forward sublayer uses norm2.": n1(a + ffn(a)),
                        "the norm is applied to the branch only (x + LN(MHA(x))); in post-LN it normalises the sum.": (
                            x + n1(mha(x))
                        )
                        + n2(ffn(x + n1(mha(x)))),
                    }
                )
        got = mine(x)
        checks.expect_close(
            got, want, f"the {form} block on (3, 7, 16), 4 heads, d_ff = 24", atol=1e-5, mistakes=mistakes
        )
        checks.expect(
            isinstance(got, torch.Tensor) and got.requires_grad,
            "the block's output carries no gradient: keep everything in torch (no numpy, no .detach()).",
        )
        got.sum().backward()
        checks.expect(
            mine.linear1.weight.grad is not None and mine.self_attn.in_proj_weight.grad is not None,
            "no gradient reaches the block's weights: use self.linear1/self.self_attn's parameters in forward.",
        )
    # the norms' own eps: a block built with eps = 0.1 must match PyTorch's layer with layer_norm_eps = 0.1
    for norm_first in (False, True):
        with torch.random.fork_rng():
            torch.manual_seed(31 + norm_first)
            ref = (
                nn.TransformerEncoderLayer(
                    d, h, dff, dropout=0.0, batch_first=True, norm_first=norm_first, layer_norm_eps=0.1
                )
                .double()
                .eval()
            )
            x = torch.randn(B, T, d, dtype=torch.float64) * 0.3
        mine = EncoderBlock(d, h, dff, norm_first=norm_first, eps=0.1).double().eval()
        mine.load_state_dict(ref.state_dict())
        with torch.no_grad():
            want = ref(x)
            ref.norm1.eps = ref.norm2.eps = 1e-5
            default_eps = ref(x)
            got = mine(x)
        checks.expect_close(
            got,
            want,
            f"the {'pre' if norm_first else 'post'}-LN block built with eps = 0.1",
            atol=1e-5,
            mistakes={
                "the norms' eps is ignored: pass eps=self.norm1.eps (and self.norm2.eps) to layer_norm.": default_eps
            },
        )


_encoder_block_hidden()
layer_norm, feed_forward = _students_norm_ffn
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
# stream after that layer (right). The grey curves are the plain stack, for comparison.

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

    MAX_DEPTH, FLOOR = 32, 1e-20

    def __init__(self):
        self.plain = {}  # depth -> the plain stack's curves (they do not depend on config)

    def build(self, depth, config):
        fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 3.6), layout="constrained")
        self.lines = {}
        for ax, index in ((left, 0), (right, 1)):
            (reference,) = ax.semilogy([], [], "--", color="grey", label="plain (reference)")
            (chosen,) = ax.semilogy([], [], "o-", ms=3, color=plots.COLORS[0], label="your configuration")
            self.lines[index] = (reference, chosen)
            ax.set_xlim(0.5, self.MAX_DEPTH + 0.5)
            ax.set_xlabel("layer (1 = first, farthest from the loss)")
        left.set_ylim(self.FLOOR, 1e3)
        left.set_ylabel("‖∂loss/∂W1‖ (log)")
        right.set_ylim(0.05, 20)
        right.set_ylabel("stream size after the layer (RMS, log)")
        right.legend(loc="upper left")
        left.set_title("Gradient of each layer's W1 (d_model = 16)")  # depth and configuration: see the controls
        right.set_title("Size of the stream after each layer")
        self.dynamic = [*self.lines[0], *self.lines[1]]
        return fig

    def update(self, depth, config):
        if depth not in self.plain:
            self.plain[depth] = ffn_stack(depth, "plain", feed_forward, layer_norm)
        self.mine = ffn_stack(depth, config, feed_forward, layer_norm)  # your code
        layers = np.arange(1, depth + 1)
        for index in (0, 1):
            reference, chosen = self.lines[index]
            reference.set_data(layers, np.maximum(self.plain[depth][index], self.FLOOR))
            chosen.set_data(layers, np.maximum(self.mine[index], self.FLOOR))

    def alt(self, depth, config):
        grads, sizes = self.mine
        return (
            f"Two log plots for a stack of {depth} feed-forward sublayers, configuration '{config}'. Left: the "
            f"gradient norm of W1 is {grads[0]:.1e} at layer 1 and {grads[-1]:.1e} at layer {depth} (plain stack: "
            f"{self.plain[depth][0][0]:.1e} at layer 1). Right: the stream size after layer {depth} is "
            f"{sizes[-1]:.2f} (plain: {self.plain[depth][1][-1]:.2f})."
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
# *residual + pre-LN* it grows slowly with depth, and with *residual only* it grows fastest. Section 8
# prints these numbers for depth 32.

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

fig, ax = plt.subplots(figsize=(6.8, 4.0))
for i, (config, norms) in enumerate(first_layer.items()):
    ax.semilogy(depths, norms, ["o-", "s-", "^-", "D-", "v-"][i], ms=4, color=plots.COLORS[i], label=config)
ax.set_xlabel("depth of the stack (number of FFN sublayers)")
ax.set_ylabel("‖∂loss/∂W1‖ of the first layer (log)")
ax.set_title("Gradient reaching layer 1 (d_model = 16, d_ff = 32, 3 seeds)")
ax.legend()
plots.show(
    fig,
    name="08_gradient_depth",
    alt="Log plot of the gradient norm reaching the first layer against the depth of the stack (1 to 32), one "
    "line per configuration. At depth 32: "
    + "; ".join(f"{c} {n[-1]:.1e}" for c, n in first_layer.items())
    + f" (at depth 1 all are between {min(n[0] for n in first_layer.values()):.0f} and "
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
# then a linear layer to the 4 classes. We train it with Adam **without a learning-rate warm-up** (the full
# learning rate from the first step), 60 steps of 32 examples, at two learning rates, from the same 4 random
# initialisations for both placements; and, for comparison, a 3-block stack at the larger learning rate.
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


def train_stacks(pre_ln, lr, depth, n_seeds=4, steps=60, batch=32, d=16, d_ff=32, n_classes=4):
    """Train n_seeds stacks with Adam (no warm-up); returns the loss of every model at every step, (n_seeds, steps)."""
    data_rng = torch.Generator().manual_seed(1000)  # the same teacher and batches for every run
    T1, T2 = torch.randn(d, 32, generator=data_rng), torch.randn(32, n_classes, generator=data_rng)
    p = init_stacks(n_seeds, depth, d, d_ff, n_classes, seed=depth)  # the same initial weights for post and pre
    optimizer = torch.optim.Adam(p.values(), lr=lr)
    losses = []
    for _ in range(steps):
        x = torch.randn(batch, d, generator=data_rng)
        y = (torch.tanh(x @ T1) @ T2).argmax(dim=-1)
        logits = stack_logits(p, x.expand(n_seeds, batch, d), pre_ln)
        loss = F.cross_entropy(logits.transpose(1, 2), y.expand(n_seeds, batch), reduction="none").mean(dim=-1)
        optimizer.zero_grad()
        loss.sum().backward()  # the sum: each model gets the gradient of its own loss
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses, dim=1).numpy()


settings = [(12, 3e-3), (12, 3e-2), (3, 3e-2)]  # (blocks, learning rate)
curves = {(D, lr, pre): train_stacks(pre, lr, D) for D, lr in settings for pre in (False, True)}
teacher = torch.Generator().manual_seed(1000)
T1, T2 = torch.randn(16, 32, generator=teacher), torch.randn(32, 4, generator=teacher)
frequencies = (
    torch.bincount((torch.tanh(torch.randn(20000, 16, generator=teacher) @ T1) @ T2).argmax(-1), minlength=4) / 20000
)
baseline = -(frequencies * frequencies.log()).sum().item()  # the loss of always predicting the class frequencies

fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True)
for ax, (D, lr) in zip(axes, settings):
    for pre, colour, style in ((False, plots.COLORS[5], "-"), (True, plots.COLORS[0], "--")):
        c = curves[D, lr, pre]
        ax.plot(c.mean(0), style, color=colour, label=f"{'pre' if pre else 'post'}-LN (mean of 4)")
        ax.fill_between(np.arange(c.shape[1]), c.min(0), c.max(0), color=colour, alpha=0.25)
    ax.axhline(baseline, color="grey", ls=":", label="class frequencies only")
    ax.set_xlabel("training step")
    ax.set_title(f"{D} blocks, Adam lr = {lr:g}, no warm-up")
axes[0].set_ylabel("training loss (band: min–max of 4 seeds)")
axes[0].legend(loc="lower left")
fig.tight_layout()
final = {key: c[:, -10:].mean(axis=1) for key, c in curves.items()}  # each seed's loss over the last 10 steps
plots.show(
    fig,
    name="08_post_vs_pre_training",
    alt="Training loss curves, mean and min-max band of 4 seeds, post-LN against pre-LN. "
    + " ".join(
        f"{D} blocks, lr {lr:g}: post-LN ends at {final[D, lr, False].mean():.2f}, pre-LN at "
        f"{final[D, lr, True].mean():.2f}."
        for D, lr in settings
    )
    + f" The loss of predicting the class frequencies is {baseline:.2f}.",
)
print(f"loss of always predicting the class frequencies: {baseline:.3f}")
for D, lr in settings:
    line = ", ".join(
        f"{'pre' if pre else 'post'}-LN {final[D, lr, pre].mean():.3f} "
        f"(seeds {final[D, lr, pre].min():.3f}–{final[D, lr, pre].max():.3f})"
        for pre in (False, True)
    )
    print(f"{D:2d} blocks, lr = {lr:g}: final loss {line}")

# %% [markdown]
# Read the printout with the figure:
# * At the smaller learning rate both placements learn the task about equally well (final losses 0.74 and 0.76).
# * At the ten times larger learning rate, without warm-up, every post-LN run of the 12-block stack stays
#   close to the loss of predicting the class frequencies (1.34 against 1.38): it barely learns. Every pre-LN
#   run learns (0.87 on average).
# * With 3 blocks, post-LN learns at that larger learning rate too. Depth is what made post-LN fragile here.
#
# This is one toy task, and what we measured is specific: a deep post-LN stack tolerated a smaller range of
# learning rates than pre-LN when trained without warm-up. That is consistent with the common practice of
# giving post-LN Transformers a learning-rate warm-up. It does not show that pre-LN is better in general: at
# the smaller learning rate, post-LN did as well.

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
#   `nn.TransformerEncoderLayer` in both forms.
# * A stack is a **residual stream**: each sublayer reads from $x$ and adds to it, $x \leftarrow x + f(x)$. In
#   pre-LN nothing normalises the stream, so it grows with depth and the stack ends with a **final LayerNorm**.
# * Measured here: at initialisation both placements pass the gradient to layer 1 about as well; trained with
#   Adam and no warm-up, the 12-block post-LN stack barely learned at a learning rate where pre-LN learned,
#   and did as well as pre-LN at a ten times smaller one.
#
# Next lesson: all the pieces together in a tiny Transformer, trained end to end.

# %% [markdown]
# ## 10. Check your understanding
#
# Answer each question by replacing `None` in its cell. Multiple-choice answers are a letter in
# quotes, e.g. `"a"`; numeric answers are a number. The cell after each answer checks the format
# only; the answer itself is graded when your notebook is graded.
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

# %% [markdown] manual="quiz-free-deep-stack" points=3
# ### BEGIN SOLUTION
# *Model answer.* Layer norm fixes the *scale* of every token's vector, so activations neither blow up nor
# die out from layer to layer; but without a skip, the gradient for layer 1 is still a product of all the
# layers' Jacobians: in section 8 the "layer norm only" stack's first-layer gradient fell by orders of
# magnitude between depth 1 and 32, and the plain stack's far more. Residual connections add an identity path
# ($I + \partial F/\partial x$): with them the first-layer gradient stayed of the same order at every depth, with
# either norm placement. So both are needed. On placement: at initialisation the two looked alike, but
# trained with Adam and no warm-up, the 12-block post-LN stack did not learn at lr = 0.03, where every pre-LN
# seed did; at lr = 0.003 both learned about equally well. I would recommend pre-LN (with its final LayerNorm,
# since its stream grows with depth, as section 6 printed) when there is no warm-up or the learning rate is not
# tuned, and post-LN only with a warm-up or a smaller learning rate. The measurements come from 12 blocks, tiny
# feed-forward-only stacks and one toy task, so they support this for 32 blocks only as a trend, not as proof.
#
# *Rubric (3 points).* 1 point: layer norm controls the scale of activations but does not by itself give a
# direct gradient path, and residuals give an identity path ($I + J$), backed by the measured gradient curves
# (numbers or their shape). 1 point: a placement recommendation tied to the training measurement (post-LN failed
# at the large learning rate without warm-up, both trained at the small one) — a recommendation resting only on
# "pre-LN trains more easily" without the condition gets at most half of this point. 1 point: names a limit of
# the evidence (depth 12 not 32, toy task, feed-forward-only blocks, few seeds) or mentions pre-LN's final
# LayerNorm with its reason. No points for only restating definitions.
# ### END SOLUTION
