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
# # Lesson 9 — A tiny Transformer, built from your own parts
#
# **Attention, from the dot product up** · lesson 9 · about 95 minutes (minimal path: about 85)
#
# Eight lessons built the parts: dot products, scaling, softmax and masks, projections, heads,
# positions, residual connections and layer norm. This lesson puts **your** parts together — your
# multi-head attention from lesson 6, your positional encoding from lesson 7, your layer norm,
# feed-forward network and encoder block from lesson 8 — into a Transformer encoder, trains it in a few
# seconds on a task that needs positions *and* two relations per token, and then takes it apart again to
# measure what each part contributes.
#
# **Learning goals.** By the end you can
# 1. convert a padding mask between PyTorch's convention (`True` = ignore) and the course's
#    (`True` = may attend), and batch sequences of different lengths;
# 2. assemble an encoder from its parts: token embedding + positional encoding write into the
#    **residual stream**, every block reads from it and adds to it, a final layer norm and a linear head
#    read the result;
# 3. write a training step whose loss skips the positions that have no target (`ignore_index`);
# 4. run an **ablation** over several seeds — remove one ingredient at a time and compare the spreads — and
#    explain each result with the lesson that built that ingredient;
# 5. read the per-head attention maps of the trained model, and test what a head does by switching it off.
#
# > **Minimal path: about 85 minutes** (the whole lesson: about 95). This lesson is long. The graded work is in sections 3–5: read
# > section 1 (the task), skim section 2 (it loads your parts and prints one line per part), then do
# > exercises 9.1, 9.2 and 9.3. Run section 6 to train the model and section 8's cells (the three seed cells are
# > the slowest and print their times), and read "What the measurements say" at the end of section 8. Answer the
# > quiz in section 10; Q12 asks you to cite your own attention maps, so look at section 7 before you write it. You
# > may skim section 2's code, the explorer of section 7 and "A closer look at two rows" in section 8. Both times
# > are counted the course's one way (README, "Lessons"): words read, exercise points and quiz points.
#
# **You need:** all of lessons 1–8. The table says where each part comes from.
#
# | part of the model | built in lesson | in this notebook |
# |---|---|---|
# | dot-product scores, $\sqrt{d_k}$, softmax, masks | 2, 3, 4 | inside the attention |
# | $W^Q, W^K, W^V$, heads, $W^O$: `MultiHeadAttention` | 5, 6 | **yours**, loaded from `06_multi_head` |
# | sinusoidal `positional_encoding` | 7 | **yours**, loaded from `07_positional_encoding` |
# | `layer_norm`, `feed_forward`, `EncoderBlock` (pre-LN, with its switches) | 8 | **yours**, loaded from `08_residual_layernorm` |
#
# **How your parts get here.** Section 2 reads the answer cells of your notebooks for lessons 6, 7 and 8
# (they must sit next to this folder, as they do in the course), checks each part against PyTorch's
# equivalent, and uses yours wherever it matches — for the trained model *and* for the experiments of section 8.
# If a notebook is missing or a part does not match, it says which part, what is missing and why, and uses
# PyTorch's part instead, so this lesson works either way. The graded tests of this lesson never use your
# earlier notebooks.
#
# **How the notebook works.** As before: run the cells from top to bottom; replace
# `raise NotImplementedError()` in the exercise cells; the cell after each exercise runs visible checks,
# and hidden checks run when your notebook is graded.

# %%
import contextlib
import io
import math
import time
import types

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.patches import Patch
from torch import nn

import attention_course as ac
from attention_course import checks, plots, reuse, widgets

ac.setup()  # fixed seeds, one thread: the model is tiny, and one thread keeps timings steady

# %% [markdown]
# ## 1. The task: name both neighbours of every digit
#
# The model reads a sequence of $L$ digits from $\{0, 1, 2, 3, 4\}$, with $L$ between 3 and 8, and at every
# inner position $i$ ($0 < i < L-1$) must output the **pair** formed by the digit on its left and the digit on
# its right:
#
# $$\text{target}_i = (x_{i-1},\, x_{i+1}), \qquad \text{one of } 5 \times 5 = 25 \text{ classes, written "ab"}.$$
#
# For `3 1 4 1 2` the targets are `34` at position 1, `11` at position 2 and `42` at position 3; the first and
# last positions have only one neighbour and get no target.
#
# **Why this task.** Every output needs **two relations at once** — "the token before me" and "the token
# after me". Lesson 6 argued that one head has one weight distribution per query, so it has to split its weight
# between the two places, and the two values it collects are summed together; several heads can each take one
# relation. And both relations are defined by *position*, which attention alone cannot see (lesson 7). So the task
# should need heads and positions; section 8 measures whether it does.
#
# **Padding.** Sequences of different lengths share a batch, so the short ones are filled up to
# $T = 8$ with a padding token `PAD`. Two things then need care:
# * no real position may *attend* to the padding (a mask, section 3), so that a sequence gets the same
#   outputs however much padding follows it;
# * the padding, and the two end positions, must not enter the *loss*: their target is the marker
#   `IGNORE = -1`, which the loss skips (section 5).
#
# Training data is generated on the fly; nothing is downloaded.

# %%
DIGITS, MAX_LEN, MIN_LEN = 5, 8, 3  # digits 0-4, sequences of 3 to 8 digits
PAD = DIGITS  # the padding token: input vocabulary 0-5
VOCAB, N_CLASSES = DIGITS + 1, DIGITS * DIGITS
IGNORE = -1  # target of positions that have none (padding, the two ends)


def make_batch(batch_size, generator):
    """Random sequences of MIN_LEN..MAX_LEN digits, padded to MAX_LEN.

    Returns tokens (B, T) int64 with PAD after each sequence, targets (B, T) int64 with the class
    DIGITS * left + right at inner positions and IGNORE elsewhere, and key_padding_mask (B, T) bool,
    True at padded positions (PyTorch's convention: True = ignore)."""
    lengths = torch.randint(MIN_LEN, MAX_LEN + 1, (batch_size,), generator=generator)
    position = torch.arange(MAX_LEN)
    key_padding_mask = position >= lengths[:, None]  # (B, T): True = padding
    digits = torch.randint(0, DIGITS, (batch_size, MAX_LEN), generator=generator)
    left = F.pad(digits, (1, 0))[:, :-1]  # left[b, i] = digits[b, i-1]
    right = F.pad(digits, (0, 1))[:, 1:]  # right[b, i] = digits[b, i+1]
    inner = (position > 0) & (position < lengths[:, None] - 1)
    targets = torch.where(inner, DIGITS * left + right, IGNORE)
    tokens = digits.masked_fill(key_padding_mask, PAD)
    return tokens, targets, key_padding_mask


def show_sequence(tokens, targets=None, predicted=None):
    """One sequence as text: digits, '_' for padding; targets and predictions as two-digit pairs."""

    def pair(c):
        return "  ." if c == IGNORE else f" {c // DIGITS}{c % DIGITS}"

    text = "input  " + "".join("  _" if t == PAD else f"  {t}" for t in tokens.tolist())
    if targets is not None:
        text += "\ntarget " + "".join(pair(c) for c in targets.tolist())
    if predicted is not None:
        text += "\nmodel  " + "".join(
            "  ." if c == IGNORE else pair(p) for p, c in zip(predicted.tolist(), targets.tolist())
        )
    return text


_tokens, _targets, _pad = make_batch(3, torch.Generator().manual_seed(0))
for _b in range(3):
    print(show_sequence(_tokens[_b], _targets[_b]), "\n")
print("key_padding_mask of these three sequences (True = padding):\n", _pad.int())

test_tokens, test_targets, test_pad = make_batch(1000, torch.Generator().manual_seed(2024))  # held-out test set
test_has_target = test_targets != IGNORE
print(
    f"\nThe test set: {len(test_tokens):,} sequences with {int(test_has_target.sum()):,} positions that have a target."
)


# %% [markdown]
# **What a model without positions can do.** Lesson 7 showed that self-attention without positional
# encoding is *permutation-equivariant*, and the feed-forward network, residual connections and layer norm
# act on every position separately, so the whole encoder is. With the padding masked out, the output at
# position $i$ can then depend only on the digit $x_i$ and on the *bag* (multiset) of the sequence's digits.
#
# How well can such a model do at best? The digits are drawn independently, so given the bag, every order of
# it is equally likely. Say the bag has $L$ digits, $m_a$ of them equal to $a$. For three neighbouring
# positions, the chance that they hold $a$, $c$, $b$ is
#
# $$P(a, c, b) = \frac{m_a}{L} \cdot \frac{m_c - [c = a]}{L - 1} \cdot \frac{m_b - [b = a] - [b = c]}{L - 2}$$
#
# (draws without replacement; $[\cdot]$ is 1 if true, else 0). A position-blind model must give the same
# answer to every inner position that holds $c$, so its best answer is the pair $(a, b)$ with the largest
# $P(a, c, b)$, which is right at $(L-2)\max_{a,b} P(a, c, b)$ inner positions on average. The cell adds this
# up over the test set: the best accuracy **any** position-blind model can expect.


# %%
def position_blind_best(tokens):
    """Expected accuracy of the best model that sees x_i and the bag of digits but no positions."""
    expected_right, positions = 0.0, 0
    for row in tokens.tolist():
        real = [t for t in row if t != PAD]
        L, m = len(real), [real.count(d) for d in range(DIGITS)]
        positions += L - 2
        for c in range(DIGITS):
            best = max(
                m[a] / L * (m[c] - (c == a)) / (L - 1) * (m[b] - (b == a) - (b == c)) / (L - 2)
                for a in range(DIGITS)
                for b in range(DIGITS)
            )
            expected_right += (L - 2) * best
    return expected_right / positions


blind_best = position_blind_best(test_tokens)
print(
    f"Chance (a random pair): {1 / N_CLASSES:.0%}. The best position-blind model can expect {blind_best:.1%} "
    f"of the test pairs right."
)


# %% [markdown]
# ## 2. Your parts, and PyTorch's
#
# The model below is built from four parts. For each one there is your version and a PyTorch version that
# computes the same function:
#
# | part | yours (lesson) | PyTorch's |
# |---|---|---|
# | positional encoding table `(T, d_model)` | `positional_encoding` (7) | `torch_positional_encoding` below |
# | multi-head self-attention, `forward(x, mask) -> (output, weights)` | `MultiHeadAttention` (6) | `nn.MultiheadAttention` |
# | encoder block | `EncoderBlock` with `norm_first=True` (8) | `TorchBlock` below, equal to `nn.TransformerEncoderLayer(norm_first=True)` with zero attention biases |
# | final layer norm | `layer_norm` (8) | `nn.LayerNorm` |
#
# Two adapters make them fit together. `TorchAttention` gives `nn.MultiheadAttention` the interface of your
# lesson-6 module; since `nn.MultiheadAttention` reads boolean masks the other way round (`True` = blocked),
# it hands it `~mask`. And your lesson-8 block gets your lesson-6 attention in place of the
# `nn.MultiheadAttention` it was built with: its `attend` method, which your `forward` calls, now runs your
# module with the current mask. The attention projections have no bias here (`bias=False`), as in many
# recent models.
#
# One thing goes beyond lesson 6: there the mask had shape `(T, T)`, the same for every sequence of the batch;
# with padding every sequence needs its own, so the mask here has shape `(B, 1, T, T)`. If your module applies it
# with `scores.masked_fill(~mask, float("-inf"))`, broadcasting handles both shapes; if it does not, the check
# below says so and PyTorch's attention is used instead.
#
# **Switches for section 8.** Every part can be built with one ingredient removed, yours as well as PyTorch's:
# `residual=False` and `layer_norm=False` are your lesson-8 block's own switches (and `TorchBlock`'s);
# `layer_norm=False` also makes the final layer norm the identity; `scale=False` removes the division by
# $\sqrt{d_k}$ by multiplying the output of the query projection $W^Q$ by $\sqrt{d_k}$, which cancels the division
# exactly. `make_parts(pieces, scale=…, residual=…, layer_norm=…)` builds a model's parts with those switches.


# %%
def torch_positional_encoding(T, d_model):
    """The sinusoidal table of lesson 7 in torch: (T, d_model) float32, sin in even columns, cos in odd ones."""
    frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))  # (d_model/2,)
    angle = torch.arange(T)[:, None] * frequency  # (T, d_model/2)
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1)


class TorchAttention(nn.Module):
    """nn.MultiheadAttention behind the interface of your lesson-6 module: forward(x, mask) -> (output, weights).
    mask: None or bool, broadcastable to (B, n_heads, T, T), True = may attend (the course's convention)."""

    def __init__(self, d_model, n_heads, scale=True):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True)
        self.n_heads = n_heads
        self.query_gain = 1.0 if scale else math.sqrt(d_model // n_heads)  # √d_k cancels the built-in 1/√d_k

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        blocked = None
        if mask is not None:  # PyTorch's boolean attn_mask: True = blocked, shape (B * n_heads, T, T)
            blocked = ~mask.expand(B, self.n_heads, T, T).reshape(B * self.n_heads, T, T)
        # need_weights=True returns the attention weights too; average_attn_weights=False keeps one map per head
        # (B, n_heads, T, T) instead of their average over the heads. With no bias, (g·x) W^Q = g·(x W^Q).
        return self.mha(x * self.query_gain, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)


class TorchBlock(nn.Module):
    """A pre-LN encoder block from PyTorch's modules (attribute names as in nn.TransformerEncoderLayer).
    forward(x, mask): x is the residual stream (B, T, d_model); the block reads it and adds to it."""

    def __init__(self, d_model, n_heads, d_ff, attention=TorchAttention, residual=True, layer_norm=True):
        super().__init__()
        self.self_attn = attention(d_model, n_heads)
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.residual, self.layer_norm, self.last_weights = residual, layer_norm, None

    def forward(self, x, mask=None):
        norm = lambda z, ln: ln(z) if self.layer_norm else z
        a, weights = self.self_attn(norm(x, self.norm1), mask)  # read the stream, attend
        self.last_weights = weights.detach()  # (B, n_heads, T, T), for the maps
        x = x + a if self.residual else a  # add to the stream
        f = self.linear2(torch.relu(self.linear1(norm(x, self.norm2))))  # read it again, feed-forward
        return x + f if self.residual else f  # add again


PYTORCH = types.SimpleNamespace(  # PyTorch's pieces; make_parts turns pieces into a model's parts
    positional_encoding=torch_positional_encoding,
    attention=TorchAttention,
    block=TorchBlock,
    norm=nn.LayerNorm,
    origin=dict.fromkeys(["positional encoding", "attention", "block", "final layer norm"], "PyTorch's"),
)


def make_parts(pieces, scale=True, residual=True, layer_norm=True):
    """The parts TinyTransformer is built from: pieces (yours or PyTorch's) with the ablation switches."""
    attention = lambda d, h: pieces.attention(d, h, scale=scale)
    return types.SimpleNamespace(
        positional_encoding=pieces.positional_encoding,
        block=lambda d, h, d_ff: pieces.block(d, h, d_ff, attention, residual=residual, layer_norm=layer_norm),
        norm=pieces.norm if layer_norm else (lambda d: nn.Identity()),
        origin=pieces.origin,
    )


def pytorch_parts(**switches):
    """PyTorch's parts, with the ablation switches."""
    return make_parts(PYTORCH, **switches)


# TorchBlock computes what nn.TransformerEncoderLayer computes in its pre-LN form (norm_first=True, no dropout)
# once that layer's attention biases are zero: same weights, same input, same mask.
torch.manual_seed(1)
_layer = nn.TransformerEncoderLayer(16, 2, 24, dropout=0.0, batch_first=True, norm_first=True).train()
_block = TorchBlock(16, 2, 24)
with torch.no_grad():
    _layer.self_attn.in_proj_bias.zero_()
    _layer.self_attn.out_proj.bias.zero_()
    _block.self_attn.mha.in_proj_weight.copy_(_layer.self_attn.in_proj_weight)
    _block.self_attn.mha.out_proj.weight.copy_(_layer.self_attn.out_proj.weight)
    for _name in ("linear1", "linear2", "norm1", "norm2"):
        getattr(_block, _name).load_state_dict(getattr(_layer, _name).state_dict())
    _x = torch.randn(2, 5, 16)
    _allowed = (torch.rand(5, 5) < 0.6) | torch.eye(5, dtype=torch.bool)  # the course's convention
    _diff = float((_block(_x, _allowed) - _layer(_x, src_mask=~_allowed)).abs().max())  # PyTorch's: True = blocked
print(
    f"TorchBlock against nn.TransformerEncoderLayer(norm_first=True), same weights and mask: the outputs differ by "
    f"at most {_diff:.1e}."
)

# %% [markdown]
# **Loading your parts.** `reuse.from_lesson(lesson, names…)` runs the answer cells of that lesson's
# notebook and returns the names. Each part is then compared with PyTorch's on a small random input (with
# copied weights and a random mask where the part has them), with each switch that section 8 uses, and used only
# if the two agree and a gradient passes back through yours (training needs one). Your block must also compute its
# attention through `self.attend` (exercise 8.3 states this), because that is where your attention goes in. The cell prints one line per part, and for a part it cannot use,
# what is missing and why. Set `PARTS_FROM = "pytorch"` to build everything from PyTorch's parts instead.

# %%
PARTS_FROM = "mine"  # "mine": your parts from lessons 6-8 wherever they work; "pytorch": PyTorch's only


def attention_matrices(attention):
    """(W_q, W_k, W_v, W_o) of either attention module, each in nn.Linear's (d_out, d_in) layout."""
    if isinstance(attention, TorchAttention):
        return (*attention.mha.in_proj_weight.chunk(3), attention.mha.out_proj.weight)
    return attention.W_q.weight, attention.W_k.weight, attention.W_v.weight, attention.W_o.weight


def copy_weights(source, target):
    """Copy every weight of model `source` into model `target` (same sizes, either kind of parts)."""
    with torch.no_grad():
        theirs = dict(source.named_parameters())
        for name, p in target.named_parameters():
            if ".self_attn." not in name:
                p.copy_(theirs[name])
        for a, b in zip(source.blocks, target.blocks):
            for w_a, w_b in zip(attention_matrices(a.self_attn), attention_matrices(b.self_attn)):
                w_b.copy_(w_a)


def your_attention(MultiHeadAttention):
    """Your lesson-6 module without biases; scale=False multiplies the output of its W_q by √d_k."""

    def build(d_model, n_heads, scale=True):
        module = MultiHeadAttention(d_model, n_heads, bias=False)
        if not scale:
            gain = math.sqrt(d_model // n_heads)
            module.W_q.register_forward_hook(lambda layer, inputs, output: output * gain)
        return module

    return build


def your_block(EncoderBlock):
    """Your lesson-8 block in its pre-LN form, with `attention` (yours from lesson 6, or PyTorch's) inside."""

    class Block(EncoderBlock):
        def __init__(self, d_model, n_heads, d_ff, attention, residual=True, layer_norm=True):
            super().__init__(d_model, n_heads, d_ff, norm_first=True, residual=residual, layer_norm=layer_norm)
            self.self_attn = attention(d_model, n_heads)  # replaces lesson 8's nn.MultiheadAttention
            self.mask, self.last_weights = None, None

        def attend(self, x):  # your forward calls this for the attention
            out, weights = self.self_attn(x, self.mask)
            self.last_weights = weights.detach()
            return out

        def forward(self, x, mask=None):
            self.mask = mask
            return super().forward(x)

    return Block


def your_norm(layer_norm):
    """A module with nn.LayerNorm's parameters that computes your lesson-8 function."""

    class LayerNorm(nn.LayerNorm):
        def forward(self, x):
            return layer_norm(x, self.weight, self.bias, eps=self.eps)

    return LayerNorm


_X = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(4))  # a small test input
_MASK = (torch.rand(3, 1, 5, 5, generator=torch.Generator().manual_seed(5)) < 0.7) | torch.eye(5, dtype=torch.bool)
SWITCHES = [{}, {"residual": False}, {"layer_norm": False}]  # the block switches that section 8 uses


def compare(run, what=""):
    """run() -> (yours, PyTorch's). Returns (agree, reason), never raises."""
    try:
        got, want = run()
        got = torch.as_tensor(got, dtype=torch.float32)
        if got.shape != want.shape:
            return False, f"gives shape {tuple(got.shape)}{what} where PyTorch's gives {tuple(want.shape)}"
        diff = float((got - want).abs().max())
        return diff <= 1e-4, f"differs from PyTorch's by up to {diff:.2g}{what}"
    except NotImplementedError:
        return False, "is not finished yet"
    except Exception as error:  # any other error: one line, no traceback
        return False, f"raised {type(error).__name__}{what}: {error}"[:160]


def gradient_reaches(run, weight):
    """Training needs gradients: does one backward pass from run()'s output reach `weight`? (ok, reason)."""
    no_gradient = "passes no gradient back, so it cannot be trained (keep it in torch: no numpy)"
    try:
        output = run()
        if not output.requires_grad:
            return False, no_gradient
        output.sum().backward()
    except Exception as error:
        return False, f"raised {type(error).__name__} in training (in a backward pass): {error}"[:160]
    return weight.grad is not None, no_gradient


def check_positional_encoding(positional_encoding):
    return compare(lambda: (positional_encoding(11, 16), torch_positional_encoding(11, 16)))


def check_attention(MultiHeadAttention):
    def run(n_heads, scale):
        torch.manual_seed(3)
        mine, theirs = your_attention(MultiHeadAttention)(16, n_heads, scale), TorchAttention(16, n_heads, scale)
        with torch.no_grad():
            for w_mine, w_theirs in zip(attention_matrices(mine), attention_matrices(theirs)):
                w_mine.copy_(w_theirs)
            flat = lambda outputs: torch.cat([torch.as_tensor(o).flatten() for o in outputs])
            return flat(mine(_X, _MASK)), flat(theirs(_X, _MASK))

    for n_heads, scale, what in ((2, True, ""), (1, True, " with one head"), (2, False, " without √d_k")):
        ok, reason = compare(lambda: run(n_heads, scale), what)
        if not ok:
            if not scale:  # the switch multiplies the output of self.W_q: a module that never calls it ignores it
                reason += " (the 'no √d_k' switch scales the output of self.W_q(x): compute your queries with it)"
            return ok, reason
    mine = your_attention(MultiHeadAttention)(16, 2)
    return gradient_reaches(lambda: mine(_X, _MASK)[0], mine.W_q.weight)


def check_layer_norm(layer_norm):
    gamma, beta = torch.linspace(0.5, 2, 16), torch.linspace(-1, 1, 16)
    ok, reason = compare(lambda: (layer_norm(_X, gamma, beta, eps=1e-5), F.layer_norm(_X, (16,), gamma, beta, 1e-5)))
    gamma.requires_grad_()
    return gradient_reaches(lambda: layer_norm(_X, gamma, beta, eps=1e-5), gamma) if ok else (ok, reason)


def check_block(EncoderBlock):
    """Your block with PyTorch's attention inside against TorchBlock, with each switch; first, lesson 8's contract."""
    try:
        probe = your_block(EncoderBlock)(16, 2, 24, TorchAttention, residual=True, layer_norm=True)
    except TypeError as error:
        return (
            False,
            f"cannot be built with the switches residual= and layer_norm= (exercise 8.3 asks for them): {error}",
        )
    calls = []
    probe.attend = lambda x: calls.append(x) or torch.zeros_like(x)
    try:
        probe(_X)
    except Exception as error:
        if not calls:  # the usual cause: forward calls self.self_attn(x, x, x, ...) with nn.MultiheadAttention's API
            return False, (
                "never calls self.attend(x): it calls self.self_attn itself, so your lesson-6 attention cannot be put "
                f"inside it (exercise 8.3 states and checks this contract); the call raised {type(error).__name__}"
            )
    if not calls:
        return False, "never calls self.attend(x), so your lesson-6 attention cannot be put inside it (exercise 8.3)"

    def run(switches):
        torch.manual_seed(3)
        mine = your_block(EncoderBlock)(16, 2, 24, TorchAttention, **switches)
        theirs = TorchBlock(16, 2, 24, **switches)
        mine.load_state_dict(theirs.state_dict())
        with torch.no_grad():
            return mine(_X, _MASK), theirs(_X, _MASK)

    for switches in SWITCHES:
        ok, reason = compare(lambda: run(switches), "".join(f" with {k}=False" for k in switches))
        if not ok:
            return ok, reason
    mine = your_block(EncoderBlock)(16, 2, 24, TorchAttention)
    return gradient_reaches(lambda: mine(_X, _MASK), mine.linear1.weight)


def load_parts():
    """Your pieces where they load and agree with PyTorch's, PyTorch's elsewhere; one printed line per part."""
    if PARTS_FROM != "mine":
        print("PARTS_FROM is not 'mine': every part is PyTorch's.")
        return PYTORCH

    def mine(part, lesson, name, check):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # whatever those cells print stays there
                (found,) = reuse.from_lesson(lesson, name)
        except Exception as error:  # no notebook, or the name is not defined there
            print(f"• {part}: PyTorch's — {str(error)[:200]}")
            return None
        ok, reason = check(found)
        print(f"• {part}: " + (f"yours ({name} from {lesson})" if ok else f"PyTorch's — your {name} {reason}"))
        return found if ok else None

    pe = mine("positional encoding", "07_positional_encoding", "positional_encoding", check_positional_encoding)
    mha = mine("multi-head attention", "06_multi_head", "MultiHeadAttention", check_attention)
    ln = mine("layer norm", "08_residual_layernorm", "layer_norm", check_layer_norm)
    block = mine("encoder block", "08_residual_layernorm", "EncoderBlock", check_block)
    return types.SimpleNamespace(
        positional_encoding=torch_positional_encoding
        if pe is None
        else (lambda T, d: torch.as_tensor(pe(T, d), dtype=torch.float32)),
        attention=TorchAttention if mha is None else your_attention(mha),
        block=TorchBlock if block is None else your_block(block),
        norm=nn.LayerNorm if ln is None else your_norm(ln),
        origin={
            part: "PyTorch's" if found is None else "yours" for part, found in zip(PYTORCH.origin, (pe, mha, block, ln))
        },
    )


PIECES = load_parts()


# %% [markdown]
# ## 3. Two mask conventions
#
# A padded batch comes with a **key padding mask**: a boolean `(B, T)` tensor that is `True` where a position
# is padding. That is PyTorch's convention (`nn.MultiheadAttention`'s `key_padding_mask`,
# `nn.TransformerEncoderLayer`'s `src_key_padding_mask`): **`True` = ignore this key**.
#
# Your attention from lessons 4 and 6 takes the opposite convention: a boolean mask that broadcasts against
# the scores of shape `(B, h, T_q, T_k)` and is **`True` where query $i$ may attend to key $j$**; the blocked
# scores become $-\infty$ before the softmax, so they get weight 0. (`F.scaled_dot_product_attention` uses
# the course's convention too.) Getting the conversion wrong is easy and quiet: a mask the wrong way round
# still runs, and every query then attends *only* to the padding (or, in a sequence without padding, to
# nothing at all: NaN).
#
# For padding, whether key $j$ may be attended to does not depend on the query: every query $i$ of
# sequence $b$ may attend to exactly the real keys of sequence $b$. That includes the queries at padded
# positions: their outputs are never used, but a row with no allowed key at all would make the softmax
# $0/0$ = NaN.
#
# ### Exercise 9.1 — from PyTorch's padding mask to the course's mask (2 points)
#
# Implement `allowed_from_padding(key_padding_mask)`:
# * input: a boolean tensor `(B, T)`, `True` at padded positions (PyTorch's convention);
# * output: a **boolean** tensor of shape `(B, 1, T, T)` in the course's convention, with
#   `allowed[b, 0, i, j]` `True` exactly when key $j$ of sequence $b$ is a real token, for every query $i$.
#   The axis of size 1 is the heads axis: the same mask then broadcasts over all heads;
# * leave `key_padding_mask` itself unchanged (no in-place operations such as `key_padding_mask.logical_not_()`).
#
# <details><summary>Hint 1: the idea</summary>
#
# Whether key $j$ of sequence $b$ may be attended to depends on $b$ and $j$ only, not on the query $i$: the
# answer is one row per sequence, "not padding", repeated for every query.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `~key_padding_mask` flips the convention: `True` now marks the real tokens, shape `(B, T)`.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Indexing with `None` inserts an axis of size 1 where you put it (`t[:, None]` turns `(B, T)` into `(B, 1, T)`), and
# `.expand(...)` repeats axes of size 1 to the size you give, without copying.
# </details>


# %% answer="allowed-from-padding"
def allowed_from_padding(key_padding_mask):
    """PyTorch's key_padding_mask (B, T), True = padding -> the course's mask (B, 1, T, T), True = may attend."""
    ### BEGIN SOLUTION
    B, T = key_padding_mask.shape
    return (~key_padding_mask)[:, None, None, :].expand(B, 1, T, T)
    ### END SOLUTION


# %% tests="allowed-from-padding-tests" points=2
# Visible checks: a worked example with two sequences (3 real tokens + 1 pad, and 4 real tokens).
_kpm = torch.tensor([[False, False, False, True], [False, False, False, False]])
_allowed = checks.call(allowed_from_padding, _kpm.clone())
checks.expect(
    torch.equal(_kpm, torch.tensor([[False, False, False, True], [False] * 4])),
    "do not change the key_padding_mask you were given (no in-place operations).",
)
checks.expect(
    isinstance(_allowed, torch.Tensor) and _allowed.dtype == torch.bool,
    f"return a boolean torch tensor, not {getattr(_allowed, 'dtype', type(_allowed).__name__)}.",
)
checks.expect_shape(_allowed, (2, 1, 4, 4), "allowed_from_padding of a (2, 4) key_padding_mask")


def _slips(want, kpm):
    """What the usual slips give, for the messages (want: the right mask, kpm: the padding)."""
    return {
        "the mask is the wrong way round: the course's convention is True = may attend, so padded keys are False.": ~want,
        "the padding blocks the queries (rows) instead of the keys (columns): allowed[b, 0, i, j] depends on key j.": (
            want.transpose(-1, -2)
        ),
        "padded queries must keep the real keys: a row with no allowed key makes the softmax 0/0 = NaN.": want
        & ~kpm[:, None, :, None],
    }


_want = torch.tensor([[[[True, True, True, False]] * 4], [[[True] * 4] * 4]])
checks.expect_close(_allowed.int(), _want.int(), "allowed_from_padding(_kpm)", mistakes=_slips(_want, _kpm))
# In use: the padded key gets -inf, its weight is 0, every row still sums to 1.
_weights = torch.softmax(torch.zeros(2, 3, 4, 4).masked_fill(~_allowed, float("-inf")), dim=-1)
checks.expect_close(_weights[0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0.0], "the weights of a query of sequence 0")
### BEGIN HIDDEN TESTS
_kpm = torch.tensor([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 1]], dtype=torch.bool)  # any pattern
_given = _kpm.clone()
_got = allowed_from_padding(_given)
_want = torch.stack([torch.stack([~row] * 6) for row in _kpm])[:, None]  # (3, 1, 6, 6), written another way
checks.expect(isinstance(_got, torch.Tensor) and _got.dtype == torch.bool, "return a boolean torch tensor.")
checks.expect_shape(_got, (3, 1, 6, 6), "allowed_from_padding of a (3, 6) key_padding_mask (expand to (B, 1, T, T))")
checks.expect_close(_got.int(), _want.int(), "allowed_from_padding on a (3, 6) mask", mistakes=_slips(_want, _kpm))
checks.expect(torch.equal(_given, _kpm), "do not change the key_padding_mask you were given (no in-place operations).")
checks.expect_shape(allowed_from_padding(torch.tensor([[False, True]])), (1, 1, 2, 2), "allowed_from_padding of (1, 2)")
### END HIDDEN TESTS
checks.passed("allowed_from_padding")

# %% [markdown]
# ## 4. Assembling the model around the residual stream
#
# Lesson 8 described an encoder as a **residual stream**: one vector per position, $x \in \mathbb{R}^{T \times d_{\text{model}}}$
# per sequence, that every part reads from and writes to by *adding*. Our model, in the pre-LN form of lesson 8:
#
# 1. **Write the input.** Token $x_p$ at position $p$ becomes row $E_{x_p}$ of a learned table
#    $E \in \mathbb{R}^{V \times d_{\text{model}}}$ (`nn.Embedding`), plus the positional encoding $\mathrm{PE}_p$ of lesson 7:
#    $x_p^{(0)} = E_{x_p} + \mathrm{PE}_p$ for $p = 0, \dots, T-1$.
# 2. **Blocks $\ell = 1, \dots, N$ read and add.** Each block reads a normalised copy of the stream and adds
#    what its sublayer computes:
#    $$x \leftarrow x + \mathrm{MHA}\big(\mathrm{LN}_1(x)\big), \qquad x \leftarrow x + \mathrm{FFN}\big(\mathrm{LN}_2(x)\big),
#    \qquad \mathrm{FFN}(h) = \max(0,\, h W_1 + b_1)\, W_2 + b_2 .$$
#    Inside $\mathrm{MHA}$ are lessons 2–6: per head $h = 1, \dots, H$, $Q_h = \mathrm{LN}_1(x) W_h^Q$ and likewise $K_h$,
#    $V_h$; weights $A_h = \mathrm{softmax}(Q_h K_h^\top / \sqrt{d_k})$ over the keys, with the masked keys at $-\infty$;
#    the heads' outputs $A_h V_h$ are concatenated and multiplied by $W^O$. Nothing normalises the stream
#    itself, so its scale can grow with every addition.
# 3. **Read the result.** A final layer norm, then a linear **head** turns each position's vector into 25
#    logits, one per pair. The head returns **logits**, not probabilities: the loss applies the
#    (log-)softmax itself, and the largest logit is the prediction.
#
# The attention is the only place where positions exchange information; everything else acts on each
# position separately. The model is small: $d_{\text{model}} = 32$, $H = 2$ heads with $d_k = 16$, $N = 2$ blocks,
# $d_{\text{ff}} = 64$.
#
# ### Exercise 9.2 — the forward pass (3 points)
#
# The constructor of `TinyTransformer` is given: it builds `self.embed`, the positional-encoding table
# `self.pe` (`max_len` rows, all zero when `use_pe=False`), the blocks `self.blocks` from `parts`, the final
# layer norm `self.final_norm` and the head `self.head`. Write `forward(tokens, key_padding_mask=None)`:
# * `tokens`: int64 `(B, T)` with $T \le$ `max_len`; `key_padding_mask`: bool `(B, T)`, `True` at padded
#   positions (PyTorch's convention), or `None` when nothing is padded;
# * returns the logits, shape `(B, T, n_classes)`, computed as steps 1–3 above;
# * every block is called as `block(x, mask)`: it takes the stream `(B, T, d_model)` and a mask **in the
#   course's convention**, as your `allowed_from_padding(key_padding_mask)` makes it, or `None` if
#   `key_padding_mask` is `None`; it returns the new stream (it has already added its part: do not add `x` again).
#   Calling `allowed_from_padding` is the simple way; the checks replace it by a correct stand-in, so that a slip in
#   exercise 9.1 costs no points here, and they check the mask each block receives (a correct conversion written
#   inline passes too).
#
# So the logits of a real position never depend on the padding, and, without positional encoding, shuffling
# the tokens shuffles the logits in the same way.
#
# <details><summary>Hint 1: the idea</summary>
#
# Follow steps 1–3: write the input into the stream, let every block read and add, then read the result. The
# padding mask is converted once, in the course's convention, and every block gets the same mask.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `self.embed(tokens)` has shape `(B, T, d_model)`; the positional encoding of the first $T$ positions, shape
# `(T, d_model)`, broadcasts over the batch.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `self.pe[:T]`; `allowed_from_padding(...)` once, before a loop over `self.blocks` in which each block's output is
# the next block's input; `self.final_norm` and `self.head` at the end.
# </details>

# %%
D_MODEL, N_HEADS, N_LAYERS, D_FF = 32, 2, 2, 64  # d_k = D_MODEL / N_HEADS = 16


# %% answer="tiny-transformer"
class TinyTransformer(nn.Module):
    """Embedding + positional encoding -> n_layers encoder blocks -> final layer norm -> linear head."""

    def __init__(
        self,
        parts,
        vocab_size=VOCAB,
        n_classes=N_CLASSES,
        d_model=D_MODEL,
        n_heads=N_HEADS,
        n_layers=N_LAYERS,
        d_ff=D_FF,
        max_len=MAX_LEN,
        use_pe=True,
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)  # row E_x for token x
        table = parts.positional_encoding(max_len, d_model) if use_pe else torch.zeros(max_len, d_model)
        self.register_buffer("pe", torch.as_tensor(table, dtype=torch.float32))  # (max_len, d_model), fixed
        self.blocks = nn.ModuleList([parts.block(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.final_norm = parts.norm(d_model)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, tokens, key_padding_mask=None):
        """tokens int64 (B, T), key_padding_mask bool (B, T) with True = padding, or None -> logits (B, T, n_classes)."""
        ### BEGIN SOLUTION
        T = tokens.shape[1]
        x = self.embed(tokens) + self.pe[:T]  # write tokens and positions into the stream
        mask = None if key_padding_mask is None else allowed_from_padding(key_padding_mask)
        for block in self.blocks:
            x = block(x, mask)  # each block reads the stream and adds to it
        return self.head(self.final_norm(x))  # (B, T, n_classes)
        ### END SOLUTION


# %% tests="tiny-transformer-tests" points=3
# Visible checks with PyTorch's parts and stand-ins, never your other exercises: blocks that record what they
# receive and add a known vector, and a stand-in for allowed_from_padding. So only the wiring of forward counts.
_m = TinyTransformer(pytorch_parts(), vocab_size=3, n_classes=4, d_model=4, n_heads=2, n_layers=2, d_ff=5, max_len=6)
with torch.no_grad():
    _m.embed.weight.copy_(torch.arange(3.0)[:, None].expand(3, 4))  # token t -> [t, t, t, t]
    _m.head.weight.copy_(torch.eye(4)), _m.head.bias.zero_()
_seen, _shift = ([], []), torch.tensor([[1.0, 0, 0, 0], [0, 0, 10, 0]])  # what blocks 1 and 2 receive; what they add
del _m.blocks
_m.blocks = [lambda x, mask=None, k=k: _seen[k].append((x, mask)) or x + _shift[k] for k in (0, 1)]
_m.final_norm = nn.Identity()
_convert = lambda kpm: torch.stack([torch.stack([~row] * kpm.shape[1]) for row in kpm])[:, None]  # a correct one
_saved, allowed_from_padding = allowed_from_padding, _convert
try:  # allowed_from_padding is a stand-in here, so exercise 9.1 does not matter
    with torch.no_grad():
        _out = checks.call(lambda tokens: _m(tokens), torch.tensor([[2, 0, 1]]))
        _m(torch.tensor([[2, 0, 1]]), torch.tensor([[False, False, True]]))
        torch.manual_seed(0)  # a real model: a sequence gets the same logits however much padding follows it
        _net = TinyTransformer(pytorch_parts())
        _padded = _net(torch.tensor([[0, 1, 2, PAD, PAD]]), torch.tensor([[False] * 3 + [True] * 2]))[:, :3]
        _alone = _net(torch.tensor([[0, 1, 2]]))
finally:
    allowed_from_padding = _saved
checks.expect_shape(_out, (1, 3, 4), "the logits of 1 sequence of 3 tokens (n_classes = 4)")
_pe = torch_positional_encoding(6, 4)[:3]
_stream = torch.tensor([[2.0] * 4, [0.0] * 4, [1.0] * 4]) + _pe  # E + PE of positions 0-2
_slips = {
    "the positional encoding is missing: add self.pe[:T].": _stream - _pe,
    "the positional encoding must be added, not multiplied.": (_stream - _pe) * _pe,
    "every block reads the embedding: feed each block's output into the next block.": _stream,
    "return the head's logits, not a softmax of them.": torch.softmax(_stream + _shift.sum(0), -1),
    "only the last block's change reached the head: each block's output is the next one's input.": _stream + _shift[1],
}
checks.expect_close(_seen[0][0][0][0], _stream, "what block 1 receives", atol=1e-5, mistakes=_slips)
checks.expect_close(_seen[1][0][0][0], _stream + _shift[0], "what block 2 receives", atol=1e-5, mistakes=_slips)
checks.expect_close(_out[0], _stream + _shift.sum(0), "the logits", atol=1e-5, mistakes=_slips)
checks.expect([_seen[0][0][1], _seen[1][0][1]] == [None, None], "with key_padding_mask=None the blocks get mask=None.")
_want_mask = torch.tensor([[[[True, True, False]] * 3]])  # (1, 1, 3, 3) in the course's convention


def _mask_slip(mask):
    """What is wrong with the mask a block received with key_padding_mask [[False, False, True]] (None: nothing)."""
    if not isinstance(mask, torch.Tensor):
        return "the blocks got no mask: convert key_padding_mask with allowed_from_padding(key_padding_mask)."
    try:
        mask = torch.broadcast_to(mask, (1, 1, 3, 3))
    except RuntimeError:
        return f"the mask has shape {tuple(mask.shape)}: the blocks need allowed_from_padding(key_padding_mask)."
    if torch.equal(mask, ~_want_mask):
        return (
            "the mask reached the blocks the wrong way round: convert it with allowed_from_padding(key_padding_mask)."
        )
    if not torch.equal(mask, _want_mask):
        return "the blocks got another mask than allowed_from_padding(key_padding_mask) makes."
    return None


for _k, _calls in enumerate(_seen):
    checks.expect(len(_calls) == 2, f"call every block once per forward pass (block {_k + 1} ran {len(_calls)} times).")
    _slip = _mask_slip(_calls[1][1])
    checks.expect(_slip is None, f"block {_k + 1}: {_slip}")
checks.expect_close(_padded, _alone, "a sequence's logits with and without its padding (mask each block)", 1e-5)
torch.manual_seed(0)  # without positions, shuffling the tokens shuffles the logits in the same way
_net = TinyTransformer(pytorch_parts(), use_pe=False)
_tok, _perm = torch.tensor([[0, 1, 2, 3, 4, 0, 1]]), [3, 0, 6, 1, 4, 2, 5]
with torch.no_grad():
    checks.expect_close(_net(_tok[:, _perm]), _net(_tok)[:, _perm], "logits of shuffled tokens (use_pe=False)", 1e-5)
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(94)
_net = TinyTransformer(pytorch_parts(), vocab_size=7, n_classes=6, n_layers=3, d_ff=24, max_len=9).double()
_w = 0.4 * torch.randn(nn.utils.parameters_to_vector(_net.parameters()).shape, generator=_g, dtype=torch.float64)
nn.utils.vector_to_parameters(_w, _net.parameters())  # known weights
_tok, _kpm = torch.randint(0, 7, (3, 5), generator=_g), torch.zeros(3, 5, dtype=torch.bool)
_kpm[0, 3:], _kpm[2, 4:] = True, True
_saved = allowed_from_padding  # a correct conversion, written differently, so exercise 9.1 costs nothing here
allowed_from_padding = lambda kpm: torch.stack([torch.stack([~r] * kpm.shape[1]) for r in kpm])[:, None]
try:
    with torch.no_grad():
        _E, _P, (_b1, _b2, _b3), _N, _H = _net.embed(_tok), _net.pe[:5], _net.blocks, _net.final_norm, _net.head
        _via = lambda x, blocks=(_b1, _b2, _b3), m=None: [x := b(x, m) for b in blocks][-1]  # noqa: B023
        _want = _H(_N(_via(_E + _P)))
        _slips = {
            "the positional encoding is missing: add self.pe[:T].": _H(_N(_via(_E))),
            "the positional encoding of the wrong positions: use self.pe[:T].": _H(_N(_via(_E + _net.pe[-5:]))),
            "the blocks are applied in reverse order.": _H(_N(_via(_E + _P, (_b3, _b2, _b1)))),
            "every block reads the embedding: feed each block's output into the next block.": _H(_N(_b3(_E + _P))),
            "only the first block is used.": _H(_N(_b1(_E + _P))),
            "the final layer norm is missing: pre-LN needs self.final_norm before the head.": _H(_via(_E + _P)),
            "the head is missing: return self.head(self.final_norm(x)).": _N(_via(_E + _P)),
            "return the head's logits, not a softmax of them.": torch.softmax(_want, -1),
        }
        checks.expect_close(_net(_tok), _want, "TinyTransformer with known weights", atol=1e-8, mistakes=_slips)
        _mask, _real = allowed_from_padding(_kpm), ~_kpm  # padding: only the real positions are compared
        _slips = {"key_padding_mask is ignored: convert it and pass it to every block.": _want[_real]}
        _slips["the mask reached the blocks the wrong way round."] = _H(_N(_via(_E + _P, m=~_mask)))[_real]
        _got, _want = _net(_tok, _kpm), _H(_N(_via(_E + _P, m=_mask)))
        checks.expect_close(_got[_real], _want[_real], "with padding", atol=1e-8, mistakes=_slips)
        checks.expect_close(_got[0, :3], _net(_tok[:1, :3])[0], "sequence 0 with and without its padding", atol=1e-8)
        _other = torch.where(_kpm, (_tok + 1) % 7, _tok)
        checks.expect_close(_net(_other, _kpm)[_real], _got[_real], "when the padded tokens change", 1e-8)
finally:
    allowed_from_padding = _saved
### END HIDDEN TESTS
checks.passed("TinyTransformer.forward")

# %% [markdown]
# ### Your parts against PyTorch's
#
# `build(seed)` builds the model twice with the same seed — once from PyTorch's parts and once from the parts
# section 2 chose (yours wherever they worked) — and copies every weight of the first into the second, so both
# start from the same numbers whoever's parts they use. The cell runs both on 200 padded test sequences: if your
# parts compute what PyTorch's compute, the logits agree to float32 rounding. The model built from your parts is
# the one you train in section 6, and every model of section 8 is built the same way.


# %%
def build(seed=0, switches=None, **sizes):
    """(model from PIECES, model from PyTorch's parts), both with the ablation `switches` and the model's `sizes`,
    and the same initial weights: those of the PyTorch-parts model built after torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    reference = TinyTransformer(pytorch_parts(**(switches or {})), **sizes)
    net = TinyTransformer(make_parts(PIECES, **(switches or {})), **sizes)
    copy_weights(reference, net)
    return net, reference


with ac.student_code("TinyTransformer.forward"):
    model, reference = build(seed=0)
    with torch.no_grad():
        logits_mine = model(test_tokens[:200], test_pad[:200])
        logits_torch = reference(test_tokens[:200], test_pad[:200])
    same_logits_diff = float((logits_mine - logits_torch).abs().max())
    print("Parts of `model`: " + ", ".join(f"{part}: {who}" for part, who in PIECES.origin.items()) + ".")
    print(
        f"Logits on 200 padded test sequences, your parts vs PyTorch's, same weights: the largest difference is "
        f"{same_logits_diff:.1e} (the logits themselves are of size {float(logits_torch.abs().max()):.1f})."
    )
    n_params = sum(p.numel() for p in model.parameters())
    print(f"The model has {n_params:,} parameters.")


# %% [markdown]
# ## 5. A loss that skips positions without a target
#
# For every position the model outputs logits $z \in \mathbb{R}^{25}$. The loss is the **cross-entropy**
# $-\log \mathrm{softmax}(z)_y$ of the correct class $y$ (lesson 4's softmax), averaged over the set $\mathcal{P}$ of
# positions that **have** a target:
#
# $$\mathcal{L} = \frac{1}{|\mathcal{P}|} \sum_{(b, i) \in \mathcal{P}} -\log \mathrm{softmax}(z_{b,i})_{y_{b,i}},
# \qquad \mathcal{P} = \{(b, i) : y_{b,i} \neq \texttt{IGNORE}\}.$$
#
# Padding and the two end positions are not in $\mathcal{P}$: they add nothing to the sum and are not counted
# in $|\mathcal{P}|$. A model that knows nothing (all logits equal) has loss $\ln 25 \approx 3.22$.
# `F.cross_entropy(logits, targets, ignore_index=IGNORE)` does exactly this: it expects the logits as
# `(N, C)` and the targets as `(N,)` (flatten the batch and position axes together first), leaves out the
# targets equal to `ignore_index`, and averages over the rest. Its default `ignore_index` is −100; our marker
# is −1, so you must pass it (a target of −1 without it is an error).
#
# One training step: clear the old gradients, compute the loss, back-propagate, update — in an order that
# uses the gradient of this batch only.
#
# ### Exercise 9.3 — one training step (3 points)
#
# Implement `train_step(model, optimizer, tokens, targets, key_padding_mask)`:
# * run the model once, as `model(tokens, key_padding_mask)`;
# * compute the loss $\mathcal{L}$ above (`targets` is int64 `(B, T)`, `IGNORE` where there is no target);
# * change the parameters by one step of `optimizer`, using the gradient of this batch alone (gradients of
#   earlier steps must not leak in);
# * return the loss as a Python float.
#
# <details><summary>Hint 1: the idea</summary>
#
# A training step has four parts: forget the old gradients, compute the loss of this batch, back-propagate it,
# update the parameters. The loss must see only the positions whose target is not `IGNORE`, and average over them.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `F.cross_entropy` wants the logits as `(N, C)` and the targets as `(N,)`: flatten the batch and position axes
# together, `logits.reshape(-1, logits.shape[-1])` and `targets.reshape(-1)` (the same order for both).
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `optimizer.zero_grad()`, then `F.cross_entropy(…, ignore_index=IGNORE)`, `loss.backward()`, `optimizer.step()`,
# and `loss.item()` for the float.
# </details>


# %% answer="train-step"
def train_step(model, optimizer, tokens, targets, key_padding_mask):
    """One optimisation step on a padded batch. Returns the loss over the positions with a target (a float)."""
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    logits = model(tokens, key_padding_mask)  # (B, T, C)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION


# %% tests="train-step-tests" points=3
# Visible checks on a model whose logits come from a table, one row per (token, position), all zero to start.
class _Probe(nn.Embedding):  # it also records the masks it is given
    def __init__(self, weight):
        super().__init__(*weight.shape, _weight=weight)
        self.masks = []

    def forward(self, tokens, key_padding_mask=None):
        self.masks.append(key_padding_mask)
        return super().forward(8 * tokens + torch.arange(tokens.shape[-1]))


def _step(*args):  # the student's train_step, with the likeliest crash named
    try:
        return checks.call(train_step, *args)
    except IndexError:
        raise AssertionError("the targets hold IGNORE = -1: pass ignore_index=IGNORE to F.cross_entropy.") from None


_m, _kpm = _Probe(torch.zeros(48, 4)), torch.tensor([[False] * 5 + [True]])
_tok, _tgt = torch.tensor([[0, 1, 2, 3, 3, PAD]]), torch.tensor([[IGNORE, 1, 2, 3, 3, IGNORE]])  # 4 with a target
_loss = _step(_m, torch.optim.SGD(_m.parameters(), lr=1.0), _tok, _tgt, _kpm)
checks.expect(isinstance(_loss, float), f"return the loss as a Python float (loss.item()), not {type(_loss).__name__}.")
checks.expect(
    len(_m.masks) == 1 and _m.masks[0] is not None and torch.equal(_m.masks[0], _kpm),
    "call the model once, as model(tokens, key_padding_mask).",
)
# Before the step all logits are 0, so the loss is ln 4 at each of the 4 positions that count. One SGD step with
# lr = 1 then moves the logits of a position whose target is y by (one-hot(y) - 1/4) / 4.
for _got, _want, _what, _n in (
    (_loss, math.log(4), "the loss when all classes are equally likely", 2),
    (_m(_tok)[0, 1:5].detach(), (F.one_hot(_tgt[0, 1:5], 4) - 0.25) / 4, "the logits after one SGD step (lr = 1)", 4),
):
    _slips = {
        "the loss is summed, not averaged over the positions with a target.": 4 * _want,
        "the mean counts all 6 positions: average over the positions whose target is not IGNORE only.": 4 / 6 * _want,
        "the parameters did not change: call loss.backward() and optimizer.step().": 0 * _want,
        "the loss is computed on probabilities: pass the logits to the cross-entropy.": _want / 4,
    }
    checks.expect_close(_got, _want, _what, atol=1e-5, mistakes=dict(list(_slips.items())[:_n]))
# A second step on the same batch, with a new optimiser: it must use this step's gradient alone.
_first, _logits = _m.weight.detach().clone(), _m(_tok)
_gradient = torch.autograd.grad(F.cross_entropy(_logits[0], _tgt[0], ignore_index=IGNORE), _m.weight)[0]
_step(_m, torch.optim.SGD(_m.parameters(), lr=1.0), _tok, _tgt, _kpm)
_slips = {"the old gradients are still there: call optimizer.zero_grad() before loss.backward().": _first - _gradient}
checks.expect_close(_m.weight.detach() - _first, -_gradient, "the change in a second step", 1e-5, 0, _slips)
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(98)
_tok, _tgt = torch.randint(0, 6, (3, 5), generator=_g), torch.randint(0, 7, (3, 5), generator=_g)
_kpm = torch.zeros(3, 5, dtype=torch.bool)
_kpm[0, 3:], _kpm[2, 4:] = True, True
_tgt[_kpm], _tgt[1, 0] = IGNORE, IGNORE
_all, _m = (_tgt != IGNORE).sum(), _Probe(torch.randn(48, 7, generator=_g, dtype=torch.float64))
_nll = lambda logits: -torch.log_softmax(logits, -1).gather(-1, _tgt.clamp(min=0)[..., None])[..., 0] * (_tgt != IGNORE)
_grads = lambda m: torch.autograd.grad(_nll(m(_tok)).sum() / _all, list(m.parameters()))  # the reference gradient
_vector = lambda: nn.utils.parameters_to_vector(_m.parameters()).detach().clone()
with torch.no_grad():
    _keep = _nll(_m(_tok))
    _slips = {
        "the loss is computed on probabilities: pass the logits.": _nll(_m(_tok).softmax(-1)).sum() / _all,
        "the mean counts every position: average over the positions whose target is not IGNORE only.": _keep.sum() / 15,
        "the loss is summed, not averaged over the positions with a target.": _keep.sum(),
    }
_change, _before, _opt = -_grads(_m)[0].flatten(), _vector(), torch.optim.SGD(_m.parameters(), lr=1.0)
_loss = _step(_m, _opt, _tok, _tgt, _kpm)
checks.expect(isinstance(_loss, float), "return the loss as a Python float (loss.item()).")
checks.expect_close(_loss, _keep.sum() / _all, "the loss on a random padded batch", atol=1e-8, mistakes=_slips)
checks.expect(any(m is not None and torch.equal(m, _kpm) for m in _m.masks), "call model(tokens, key_padding_mask).")
_slips = {"the parameters did not change: call loss.backward() and optimizer.step().": 0 * _change}
checks.expect_close(_vector() - _before, _change, "the change of the parameters (SGD, lr = 1)", 1e-8, 0, _slips)
_change2, _before = -_grads(_m)[0].flatten(), _vector()  # a second step on the same batch: its own gradient only
_step(_m, _opt, _tok, _tgt, _kpm)
_slips = {"the old gradients are still there: call optimizer.zero_grad() before loss.backward().": _change2 + _change}
checks.expect_close(_vector() - _before, _change2, "the change in a second step on the same batch", 1e-8, 0, _slips)
_m = _Probe(torch.randn(48, 7, generator=_g, dtype=torch.float64))  # Adam, and a batch without padding
_loss = _step(_m, torch.optim.Adam(_m.parameters(), lr=1e-3), _tok, _tgt.clamp(min=0), torch.zeros_like(_kpm))
checks.expect(math.isfinite(_loss), "the loss must be finite.")
### END HIDDEN TESTS
checks.passed("train_step")

# %% [markdown]
# ## 6. Train it
#
# The loop below draws a fresh padded batch at every step and calls **your** `train_step` on `model`, the model
# that `build(seed=0)` made from your parts in section 4. The optimiser is Adam, a version of gradient descent
# that adapts the step of every parameter to the size of its recent gradients (section 8 looks at what that means
# for the $\sqrt{d_k}$ scaling).

# %%
LEARNING_RATE, BATCH, STEPS = 2e-2, 64, 100


def train(model, steps=STEPS, lr=LEARNING_RATE, seed=0, watch=None, every=10):
    """Train `model` with Adam and your train_step on fresh padded batches; return the list of losses.
    watch(step, model), if given, runs every `every` steps (and after the last one)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)  # fused: one update for all parameters
    data = torch.Generator().manual_seed(1000 + seed)
    losses = []
    for step in range(steps):
        if watch is not None and step % every == 0:
            watch(step, model)
        tokens, targets, key_padding_mask = make_batch(BATCH, data)
        losses.append(train_step(model, optimizer, tokens, targets, key_padding_mask))
    if watch is not None:
        watch(steps, model)
    return losses


def evaluate(model, tokens=test_tokens, targets=test_targets, key_padding_mask=test_pad):
    """(accuracy over the positions with a target, fraction of sequences with every target right, the loss over the
    positions with a target), from one run of the model."""
    with torch.no_grad():
        logits = model(tokens, key_padding_mask)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)
    has_target = targets != IGNORE
    right = logits.argmax(-1) == targets
    return float(right[has_target].float().mean()), float((right | ~has_target).all(-1).float().mean()), float(loss)


class NotReady(Exception):
    """Raised by need(): an earlier cell has not finished. after() prints its message, not a traceback."""


def need(seeds=False):
    """Stop a cell, with a message naming the cell to run, if the model of section 6 is not trained yet or (seeds=True)
    a seed cell of section 8 has not finished (not run yet, or interrupted)."""
    if not trained:
        raise NotReady(
            "The model of section 6 is not trained yet: finish exercises 9.1-9.3, run the training cell of section 6 "
            "(the one that calls train(model)), then re-run this cell."
        )
    missing = [seed for k, seed in enumerate(SEEDS) if any(row[k] is None for row in runs.values())] if seeds else []
    if missing:
        raise NotReady(
            "The seed cell"
            + ("s " if len(missing) > 1 else " ")
            + " and ".join(f"run_seed(SEEDS[{SEEDS.index(s)}])" for s in missing)
            + " of section 8 did not finish (not run yet, or interrupted): run "
            + ("them" if len(missing) > 1 else "it")
            + ", then re-run this cell."
        )


@contextlib.contextmanager
def after(what="TinyTransformer.forward and train_step"):
    """For the cells that use the trained models: an unfinished earlier cell gives a one-line message."""
    with ac.student_code(what):
        try:
            yield
        except NotReady as reason:
            print(f"({reason})")


trained = False
with ac.student_code("TinyTransformer.forward and train_step"):
    losses = train(model)
    accuracy, sequence_accuracy, _ = evaluate(model)
    trained = True
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.semilogy(losses, color=plots.color("yours"), label="training loss (one batch per step)")
    ax.axhline(
        math.log(N_CLASSES), color=plots.color("chance"), ls=":", label=f"ln {N_CLASSES}: a model that knows nothing"
    )
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (log scale)")
    ticks = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10]  # numbers, on both sides of 1
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_ylim(0.7 * min(losses), max(4, 1.3 * max(losses)))
    ax.set_title(f"The loss falls from ln {N_CLASSES} to {np.mean(losses[-10:]):.3f} (last 10 steps) in {STEPS} steps")
    ax.legend()
    plots.show(
        fig,
        alt=f"The model built from your parts learns: its loss falls from {losses[0]:.2f} to "
        f"{np.mean(losses[-10:]):.3f} in {STEPS} steps. "
        f"Training loss of the model built from your parts over {STEPS} steps, on a log scale: from "
        f"{losses[0]:.2f} (ln {N_CLASSES} = {math.log(N_CLASSES):.2f}) down to {np.mean(losses[-10:]):.3f} "
        f"(mean of the last 10 steps).",
        name="09_loss_curve",
    )
    print(
        f"After {STEPS} steps ({STEPS * BATCH:,} training sequences): mean loss of the last 10 steps "
        f"{np.mean(losses[-10:]):.3f}. On {len(test_tokens):,} new test sequences the model names {accuracy:.1%} "
        f"of the pairs right, and gets every pair right in {sequence_accuracy:.1%} of the sequences."
    )

# %%
with after():
    need()
    with torch.no_grad():
        _predicted = model(test_tokens[:4], test_pad[:4]).argmax(-1)
    for _b in range(4):
        print(show_sequence(test_tokens[_b], test_targets[_b], _predicted[_b]), "\n")


# %% [markdown]
# ## 7. Explore: what did the heads learn?
#
# Every block keeps the attention weights of its last forward pass in `last_weights`, shape
# `(B, H, T, T)` (row: query position, column: key position). The task needs the key **one to the left**
# ($j = i-1$) and the key **one to the right** ($j = i+1$) of every inner query $i$. The cell below measures,
# for every block and head, the average weight that inner queries of the test set put on each of them.


# %%
def neighbour_attention(model, tokens=test_tokens, key_padding_mask=test_pad, targets=test_targets):
    """Average weight of inner queries on their left neighbour, themselves and their right neighbour:
    array (n_layers, n_heads, 3)."""
    with torch.no_grad():
        model(tokens, key_padding_mask)
    inner = targets != IGNORE  # (B, T): queries that have both neighbours
    i = torch.arange(tokens.shape[1])
    result = []
    for block in model.blocks:
        w = block.last_weights  # (B, H, T, T)
        offsets = [w[:, :, i[1:], i[:-1]], w[:, :, i, i], w[:, :, i[:-1], i[1:]]]
        rows = [F.pad(offsets[0], (1, 0)), offsets[1], F.pad(offsets[2], (0, 1))]  # back to (B, H, T)
        result.append(torch.stack([(r * inner[:, None]).sum((0, 2)) / inner.sum() for r in rows], -1))
    return torch.stack(result).numpy()


with after():
    need()
    neighbour_mass = neighbour_attention(model)
    for layer in range(N_LAYERS):
        for head in range(N_HEADS):
            left, itself, right = neighbour_mass[layer, head]
            print(
                f"block {layer + 1}, head {head + 1}: left neighbour {left:.0%}, itself {itself:.0%}, "
                f"right neighbour {right:.0%}"
            )
    best_left = np.unravel_index(neighbour_mass[..., 0].argmax(), neighbour_mass.shape[:2])
    best_right = np.unravel_index(neighbour_mass[..., 2].argmax(), neighbour_mass.shape[:2])
    print(
        f"Most weight on the left neighbour: block {best_left[0] + 1}, head {best_left[1] + 1} "
        f"({neighbour_mass[best_left][0]:.0%}); on the right neighbour: block {best_right[0] + 1}, head "
        f"{best_right[1] + 1} ({neighbour_mass[best_right][2]:.0%}). Spread evenly over the L real keys, a "
        f"query would put 1/L on each: from 1/8 = 12.5% (L = 8) to 1/3 = 33% (L = 3)."
    )

# %% [markdown]
# ### The attention maps of your trained model, head by head
#
# Pick a block, a head and a test sequence. The map shows, for every query position (rows), how much weight it
# gives to every key position (columns), computed by **your** trained model; the title gives the average
# weight of the inner queries on their left and on their right neighbour. Padded positions are blank:
# no query attends to them, and their own rows are never used. Things to look for: which head draws the line
# just below the diagonal (the left neighbour), which one the line just above it (the right neighbour)? What
# do the heads of the second block do? Does the picture change from one sequence to the next?

# %%
EXPLORE = slice(0, 20)  # the first 20 test sequences


class HeadMaps(widgets.View):
    """One head's attention map on one test sequence; built once, then only the image and the texts change."""

    def build(self, block, head, sequence):
        fig, ax = plt.subplots(figsize=(4.8, 4.3), layout="constrained")
        self.image = ax.imshow(
            np.zeros((MAX_LEN, MAX_LEN)), vmin=0, vmax=1, cmap=plots.SEQUENTIAL, interpolation="nearest"
        )
        self.image.cmap.set_bad("white")  # padded positions (NaN) stay blank
        ax.set_xticks(range(MAX_LEN))
        ax.set_yticks(range(MAX_LEN))
        ax.set_xlabel("key position j (digits above the map)")
        ax.set_ylabel("query position i")
        fig.colorbar(self.image, ax=ax, label="attention weight", shrink=0.85)
        blank = Patch(facecolor="white", edgecolor=plots.MASK_EDGE, label="blank = padding (no weight drawn)")
        fig.legend(handles=[blank], loc="outside lower center", frameon=False, fontsize=9)
        self.title = ax.set_title(" ")
        self.digits = [ax.text(j, -0.85, "", ha="center", va="center", fontsize=11) for j in range(MAX_LEN)]
        ax.set_ylim(MAX_LEN - 0.5, -1.4)  # room above the map for the digits
        self.dynamic = [self.image, self.title, *self.digits]
        return fig

    def update(self, block, head, sequence):
        if not trained:
            raise NotImplementedError()
        index = EXPLORE.start + sequence
        tokens, pad = test_tokens[index : index + 1], test_pad[index : index + 1]
        with torch.no_grad():
            model(tokens, pad)  # your model; every block keeps its weights
        weights = model.blocks[block - 1].last_weights[0, head - 1].numpy()
        real = ~pad[0].numpy()
        self.image.set_data(np.where(real[:, None] & real[None, :], weights, np.nan))
        for j, text in enumerate(self.digits):
            text.set_text(str(int(tokens[0, j])) if real[j] else "")
        i = np.arange(1, int(real.sum()) - 1)  # the inner queries
        self.shares = weights[i, i - 1].mean(), weights[i, i + 1].mean()
        self.title.set_text(f"block {block}, head {head}: left {self.shares[0]:.0%}, right {self.shares[1]:.0%}")

    def alt(self, block, head, sequence):
        digits = " ".join(t.get_text() for t in self.digits if t.get_text())
        n_real = sum(bool(t.get_text()) for t in self.digits)
        return (
            f"In block {block}, head {head} the inner queries put {self.shares[0]:.0%} of their weight on the left "
            f"neighbour and {self.shares[1]:.0%} on the right one. "
            f"Attention map of that head on test sequence {sequence} (digits {digits})."
            + (f" Positions {n_real} to {MAX_LEN - 1} are padding, left blank." if n_real < MAX_LEN else "")
        )


widgets.explore(
    HeadMaps(),
    needs=["allowed_from_padding", "TinyTransformer.forward", "train_step"],
    block=widgets.dropdown("block", range(1, N_LAYERS + 1)),
    head=widgets.dropdown("head", range(1, N_HEADS + 1)),
    sequence=widgets.slider("test sequence", 0, EXPLORE.stop - EXPLORE.start - 1, 0),
)

# %% [markdown]
# ## 8. Experiment: take the model apart
#
# An **ablation** removes one ingredient and measures what is lost. Each row below trains fresh models with
# one thing changed, everything else equal: the same learning rate and number of steps, your `forward` and your
# `train_step`, and your parts from lessons 6–8 wherever section 2 could use them (with their switches:
# `residual=False` and `layer_norm=False` are your lesson-8 block's). One training run is not enough to compare: a
# model's result depends on its random initial weights and on the order of its batches. So every row is trained
# with **three seeds** (seed $s$ sets both), and the tables give the mean and the range (lowest–highest) of the
# three runs. Here a difference counts only if the ranges do not overlap — a strict rule, because three seeds are
# few. Three groups of rows, each with its own reference row (the first):
#
# * **one ingredient removed** from the model of section 6 (2 blocks, 2 heads):
#   * **no positional encoding**: the table `self.pe` is all zeros;
#   * **no $\sqrt{d_k}$ scaling**: the scores are $Q_h K_h^\top$ instead of $Q_h K_h^\top/\sqrt{d_k}$ ($d_k = 16$, so they are 4 times larger);
#   * **no residual connections**: $x \leftarrow \mathrm{MHA}(\mathrm{LN}_1(x))$ and $x \leftarrow \mathrm{FFN}(\mathrm{LN}_2(x))$;
#   * **no layer norm**: $\mathrm{LN}_1$, $\mathrm{LN}_2$ and the final layer norm are the identity;
# * **heads, on a one-block model**: 2 heads with $d_k = 16$ against **one head** with $d_k = 32$ — the same
#   $d_{\text{model}}$ and the same number of parameters (lesson 6). With one block, every output has one attention
#   step to fetch both neighbours from;
# * **layer norm, on a four-block model**: the same model with 4 blocks, with and without layer norm.
#
# The training runs are the slowest part of this notebook: one cell per seed, each printing how long it took.

# %%
ABLATIONS = {  # row: (switches of the parts, sizes of the model)
    "full model": ({}, {}),
    "no positional encoding": ({}, dict(use_pe=False)),
    "no √d_k scaling": (dict(scale=False), {}),
    "no residual connections": (dict(residual=False), {}),
    "no layer norm": (dict(layer_norm=False), {}),
    "1 block, 2 heads": ({}, dict(n_layers=1)),
    "1 block, 1 head (d_k = 32)": ({}, dict(n_layers=1, n_heads=1)),
    "4 blocks": ({}, dict(n_layers=4)),
    "4 blocks, no layer norm": (dict(layer_norm=False), dict(n_layers=4)),
}
GROUPS = {  # group: its rows, the reference row first
    "one ingredient removed (2 blocks, 2 heads)": list(ABLATIONS)[:5],
    "heads, on a one-block model": list(ABLATIONS)[5:7],
    "layer norm, on a four-block model": list(ABLATIONS)[7:],
}
SEEDS = (0, 1, 2)
PEAK_ROWS = ("full model", "no √d_k scaling")  # rows whose attention is watched during training
WATCHED = test_tokens[:200], test_pad[:200]  # sequences on which attention is watched during training


def attention_peak(model, tokens=WATCHED[0], key_padding_mask=WATCHED[1]):
    """The largest attention weight of a real query in block 1, averaged over queries and heads
    (1/L if spread evenly over L keys, 1 if all on one key)."""
    with torch.no_grad():
        model(tokens, key_padding_mask)
    peak = model.blocks[0].last_weights.max(-1).values  # (B, H, T)
    return float(peak.permute(0, 2, 1)[~key_padding_mask].mean())


def run_seed(seed):
    """Train one model per row of ABLATIONS with this seed; add the results to `runs`."""
    started = time.perf_counter()
    for name, (switches, sizes) in ABLATIONS.items():
        net, _ = build(seed, switches, **sizes)
        watched = []  # attention peaks, for the two rows the figure shows
        watch = (lambda step, m: watched.append((step, attention_peak(m)))) if name in PEAK_ROWS else None
        curve = train(net, seed=seed, watch=watch)
        accuracy, _, loss = evaluate(net)
        runs[name][SEEDS.index(seed)] = dict(accuracy=accuracy, test_loss=loss, curve=curve, peaks=watched, model=net)
    print(
        f"Seed {seed}: {len(ABLATIONS)} models trained for {STEPS} steps each in {time.perf_counter() - started:.1f} s."
    )


def summary(name, key="accuracy"):
    """(mean, lowest, highest) of one measurement over the seeds of one row."""
    values = np.array([run[key] for run in runs[name]])
    return values.mean(), values.min(), values.max()


def stream_size(model, tokens=test_tokens, key_padding_mask=test_pad):
    """Size of the residual stream (root mean square of its entries at the real positions of the test set) as it
    enters block 1 and after each block: a list of n_layers + 1 numbers."""
    real = ~key_padding_mask
    rms = lambda x: float(x[real].pow(2).mean().sqrt())
    sizes = []
    hooks = [model.blocks[0].register_forward_pre_hook(lambda m, args: sizes.append(rms(args[0])))]
    hooks += [block.register_forward_hook(lambda m, args, out: sizes.append(rms(out))) for block in model.blocks]
    try:
        with torch.no_grad():
            model(tokens, key_padding_mask)
    finally:
        for hook in hooks:
            hook.remove()
    return sizes


runs = {name: [None] * len(SEEDS) for name in ABLATIONS}  # name -> one result per seed

# %% [markdown]
# One cell per seed:

# %%
with after():
    need()
    run_seed(SEEDS[0])

# %%
with after():
    need()
    run_seed(SEEDS[1])

# %%
with after():
    need()
    run_seed(SEEDS[2])

# %%
overlap = lambda a, b: a[1] <= b[2] and b[1] <= a[2]  # do two (mean, lowest, highest) ranges overlap?
with after():
    need(seeds=True)
    for group, names in GROUPS.items():
        print(
            f"{group}\n  {'model':<28}{'accuracy: mean (lowest-highest)':>33}{'test loss: mean (lowest-highest)':>35}"
        )
        reference_acc, reference_loss = summary(names[0]), summary(names[0], "test_loss")
        for name in names:
            acc, loss = summary(name), summary(name, "test_loss")
            verdict = (
                ""
                if name == names[0]
                else (
                    f"   ranges overlap {names[0]!r}: accuracy {'yes' if overlap(acc, reference_acc) else 'no'}, "
                    f"loss {'yes' if overlap(loss, reference_loss) else 'no'}"
                )
            )
            print(
                f"  {name:<28}{acc[0]:>13.1%} ({acc[1]:.1%}-{acc[2]:.1%}){loss[0]:>17.3f} ({loss[1]:.3f}-{loss[2]:.3f})"
                + verdict
            )
        print()
    print(
        f"{len(SEEDS)} seeds per row, {STEPS} steps each; accuracy over the test pairs. The best position-blind model "
        f"can expect {blind_best:.1%}, chance is {1 / N_CLASSES:.0%}."
    )
    ln_cost = {  # seed by seed: accuracy with layer norm minus accuracy without (same initial weights and batches)
        blocks: [with_["accuracy"] - without["accuracy"] for with_, without in zip(runs[a], runs[b])]
        for blocks, a, b in ((2, "full model", "no layer norm"), (4, "4 blocks", "4 blocks, no layer norm"))
    }
    print(
        "Accuracy lost by removing layer norm, seed by seed ("
        + ", ".join(map(str, SEEDS))
        + "): "
        + "; ".join(f"{n} blocks: " + ", ".join(f"{100 * c:.1f}" for c in costs) for n, costs in ln_cost.items())
        + " points."
    )
    stream = {
        name: np.mean([stream_size(run["model"]) for run in runs[name]], axis=0)
        for name in ("4 blocks", "4 blocks, no layer norm")
    }
    for name, sizes in stream.items():
        print(
            f"{name}: size of the residual stream (RMS of its entries, mean of {len(SEEDS)} seeds) entering block 1 "
            + ", then after blocks 1-4: ".join([f"{sizes[0]:.2f}", " ".join(f"{v:.2f}" for v in sizes[1:])])
        )

# %%
with after():
    need(seeds=True)
    rows = [item for group, names in GROUPS.items() for item in [(group, None)] + [(group, n) for n in names]]
    fig, ax = plt.subplots(figsize=(6.6, 7.0), layout="constrained")
    for y, (group, name) in enumerate(rows):
        if name is None:  # a group's heading, inside the axes
            heading = dict(va="center", fontweight="bold", backgroundcolor="white", transform=ax.get_yaxis_transform())
            ax.text(0.005, y + 0.15, group, **heading)
            continue
        mean, low, high = summary(name)
        meaning = "yours" if name == GROUPS[group][0] else "baseline"
        ax.barh(y, mean, color=plots.color(meaning), alpha=0.45, height=0.7)
        ax.plot([r["accuracy"] for r in runs[name]], [y] * len(SEEDS), "o", color=plots.TEXT, ms=4)
        ax.text(1.03, y, f"{mean:.1%} ({low:.1%}–{high:.1%})", va="center", fontsize=9)
    ax.axvline(blind_best, color=plots.color("guide"), ls="--", lw=1, label=f"best position-blind ({blind_best:.0%})")
    ax.axvline(1 / N_CLASSES, color=plots.color("chance"), ls=":", lw=1.5, label=f"chance ({1 / N_CLASSES:.0%})")
    ax.plot([], [], "o", color=plots.TEXT, ms=4, label="one seed")
    maths = lambda n: n.replace("√d_k", r"$\sqrt{d_k}$").replace("d_k =", "$d_k$ =")  # noqa: E731
    ax.set_yticks([y for y, (_, n) in enumerate(rows) if n], [maths(n) for _, n in rows if n])
    ax.set_ylim(len(rows) - 0.5, -0.6)
    ax.set_xlim(0, 1.015)  # room for the dots of runs at 100 %
    ax.set_xlabel(f"test accuracy ({len(SEEDS)} seeds; right: mean, lowest–highest)")
    ax.set_title(
        r"Without positions, $\sqrt{d_k}$ or residuals the model fails;" + "\none head or no layer norm costs less"
    )
    bars = [
        Patch(color=plots.color(m), alpha=0.45, label=f"mean: {t}")
        for m, t in (("yours", "the group's reference"), ("baseline", "one thing changed"))
    ]
    fig.legend(handles=ax.get_legend_handles_labels()[0] + bars, loc="outside lower center", ncol=2)
    plots.show(
        fig,
        alt="Without positions, √d_k or residuals the model fails; one head or no layer norm costs less. "
        "Horizontal bars of test accuracy, mean of three seeds with a dot per seed, in three groups. "
        + "; ".join(
            f"{group}: " + ", ".join(f"{n} {summary(n)[0]:.0%}" for n in names) for group, names in GROUPS.items()
        )
        + f". Best position-blind model {blind_best:.0%}, chance {1 / N_CLASSES:.0%}.",
        name="09_ablation",
    )


# %% [markdown]
# ### Which heads matter? Switch one off
#
# Section 7 showed where each head *looks*. Whether the model *needs* what a head brings is another question,
# answered by removing the head and measuring again: in each trained full model (all three seeds), one head at a
# time is removed and the test accuracy is measured; then the weights are put back. Nothing is retrained.
#
# How to remove a head? Setting its output to zero (its $d_k$ columns of $W^O$ to zero) is the simplest way, but
# it also hands the later parts an input they never saw in training: a head's output is not zero on average. So
# the main measurement **replaces the head's output by its mean** over the test set (its average contribution to
# the stream, the same at every position): the later parts still get what the head adds on average, and only what
# it adds for *this* sequence is gone. The cell prints both. In block 1 the heads are named by where they look (the
# one with the most weight on the left neighbour, the one with the most on the right one); in block 2 by number.


# %%
@contextlib.contextmanager
def head_removed(model, block, head, mean=None):
    """Within the `with`, head `head` of block `block` adds nothing of its own: its d_k columns of W^O are zero.
    With `mean` (a (d_model,) vector) the attention adds that constant instead: the head's average contribution."""
    attention = model.blocks[block].self_attn
    W_o = attention_matrices(attention)[3]
    d_k = W_o.shape[1] // N_HEADS
    saved = W_o.detach().clone()
    with torch.no_grad():
        W_o[:, head * d_k : (head + 1) * d_k] = 0
    hook = None if mean is None else attention.register_forward_hook(lambda m, i, out: (out[0] + mean, *out[1:]))
    try:
        yield
    finally:
        with torch.no_grad():
            W_o.copy_(saved)
        if hook is not None:
            hook.remove()


def head_mean(model, block, head):
    """What head `head` of block `block` adds to the stream, averaged over the real positions of the test set."""
    outputs = []  # the attention's output, with the head and without it
    hook = model.blocks[block].self_attn.register_forward_hook(lambda m, i, out: outputs.append(out[0].detach()))
    try:
        evaluate(model)
        with head_removed(model, block, head):
            evaluate(model)
    finally:
        hook.remove()
    return (outputs[0] - outputs[1])[~test_pad].mean(0)


def head_names(model):
    """{(block, head): name}: block 1's heads by the neighbour they look at most, block 2's by number."""
    mass = neighbour_attention(model)  # (n_layers, n_heads, 3): left, itself, right
    left, right = int(mass[0, :, 0].argmax()), int(mass[0, :, 2].argmax())
    names = {(1, h): f"block 2, head {h + 1}" for h in range(N_HEADS)}
    if left != right:
        names.update({(0, left): "block 1, left-neighbour head", (0, right): "block 1, right-neighbour head"})
    else:  # no head of block 1 specialises in one side
        names.update({(0, h): f"block 1, head {h + 1}" for h in range(N_HEADS)})
    return names, mass


with after():
    need(seeds=True)
    knockout, zeroed = {}, {}  # name of the removed head (or "none removed") -> accuracy of each seed
    for seed, run in zip(SEEDS, runs["full model"]):
        net = run["model"]
        names, mass = head_names(net)
        knockout.setdefault("none removed", []).append(evaluate(net)[0])
        line = []
        for (block, head), name in sorted(names.items()):
            with head_removed(net, block, head, mean=head_mean(net, block, head)):
                knockout.setdefault(name, []).append(evaluate(net)[0])
            with head_removed(net, block, head):
                zeroed.setdefault(name, []).append(evaluate(net)[0])
            left, _, right = mass[block, head]
            line.append(
                f"{name} (left {left:.0%}, right {right:.0%}): {knockout[name][-1]:.1%} (zeroed {zeroed[name][-1]:.1%})"
            )
        print(
            f"Seed {seed}: all heads {knockout['none removed'][-1]:.1%}; one head replaced by its mean: "
            + "; ".join(line)
        )
    in_block = lambda result, b: [a for name, accs in result.items() if name.startswith(f"block {b}") for a in accs]
    by_block, zeroed_by_block = ({b: in_block(result, b) for b in (1, 2)} for result in (knockout, zeroed))
    for b, accs in by_block.items():
        print(
            f"One head of block {b} replaced by its mean ({len(accs)} cases): accuracy between {min(accs):.1%} and "
            f"{max(accs):.1%}; set to zero: between {min(zeroed_by_block[b]):.1%} and {max(zeroed_by_block[b]):.1%}."
        )


# %% [markdown]
# ### A closer look at two rows
#
# **Without $\sqrt{d_k}$.** Lesson 3's argument: unscaled scores have a spread $\sqrt{d_k}$ times larger, the
# softmax saturates (almost all weight on one key), and its gradient becomes tiny. With plain gradient
# descent, a tiny gradient means a tiny step. Adam is different: it divides the gradient of every parameter by
# the square root of a running average of its squares, so a parameter whose gradients are ten times smaller
# takes steps of about the same size. The cell measures the gradient that reaches $W^Q$ of block 1 at
# initialisation and the size of Adam's first step on $W^Q$ (seed 0, with PyTorch's parts), how peaked the attention
# of block 1 is during training (mean of the three seeds), and where the trained models' first block looks.
#
# **One head.** Where do the heads of the one-block models look, with two heads and with one?


# %%
def first_step(net):
    """Gradient norm of W^Q in block 1 on the first training batch, and the norm of Adam's first change of W^Q."""
    tokens, targets, key_padding_mask = make_batch(BATCH, torch.Generator().manual_seed(1000))
    w_q = lambda: net.blocks[0].self_attn.mha.in_proj_weight[:D_MODEL]
    optimizer = torch.optim.Adam(net.parameters(), lr=LEARNING_RATE, fused=True)
    optimizer.zero_grad()
    logits = net(tokens, key_padding_mask)
    F.cross_entropy(logits.reshape(-1, N_CLASSES), targets.reshape(-1), ignore_index=IGNORE).backward()
    gradient, before = float(net.blocks[0].self_attn.mha.in_proj_weight.grad[:D_MODEL].norm()), w_q().detach().clone()
    optimizer.step()
    return gradient, float((w_q().detach() - before).norm())


with after():
    need(seeds=True)
    step_size = {scale: first_step(build(SEEDS[0], dict(scale=scale))[1]) for scale in (True, False)}
    (g_scaled, adam_scaled), (g_unscaled, adam_unscaled) = step_size[True], step_size[False]
    peaks = {name: np.array([[p for _, p in run["peaks"]] for run in runs[name]]) for name in PEAK_ROWS}
    print(
        f"Gradient reaching W^Q of block 1 at initialisation: {g_scaled:.3f} with scaling, {g_unscaled:.3f} without "
        f"({g_unscaled / g_scaled:.1f} times {'larger' if g_unscaled > g_scaled else 'smaller'})."
    )
    print(
        f"Adam's first change of W^Q: {adam_scaled:.3f} with scaling, {adam_unscaled:.3f} without "
        f"(plain gradient descent with the same learning rate: {LEARNING_RATE * g_scaled:.4f} and "
        f"{LEARNING_RATE * g_unscaled:.4f})."
    )
    for name, values in peaks.items():
        print(
            f"{name}: largest attention weight in block 1 {values[:, 0].mean():.2f} at step 0, "
            f"{values[:, 1].mean():.2f} at step 10, {values[:, -1].mean():.2f} at step {STEPS} (mean of {len(SEEDS)} seeds)."
        )
    looked_at = (*PEAK_ROWS, "1 block, 2 heads", "1 block, 1 head (d_k = 32)")
    block_1 = {name: [neighbour_attention(run["model"])[0] for run in runs[name]] for name in looked_at}  # per seed
    best_share = {name: [m[:, [0, 2]].max() for m in block_1[name]] for name in PEAK_ROWS}
    print(
        "After training, the head of block 1 that looks most at a neighbour puts this share of its weight there, "
        "seeds "
        + ", ".join(map(str, SEEDS))
        + ": "
        + "; ".join(f"{name}: " + ", ".join(f"{v:.0%}" for v in best_share[name]) for name in PEAK_ROWS)
        + "."
    )
    for name in ("1 block, 2 heads", "1 block, 1 head (d_k = 32)"):
        print(
            f"{name}, weight on (left neighbour, itself, right neighbour) per head, seeds "
            + ", ".join(map(str, SEEDS))
            + ": "
            + "; ".join(" ".join("(" + ", ".join(f"{v:.0%}" for v in head) + ")" for head in m) for m in block_1[name])
        )

# %%
with after():
    need(seeds=True)
    fig, (ax_peak, ax_out) = plt.subplots(2, 1, figsize=(6.6, 6.8), layout="constrained")
    for name, meaning, style in zip(PEAK_ROWS, ("scaled", "unscaled"), ("-", "--")):
        for k, run in enumerate(runs[name]):
            steps, peak = zip(*run["peaks"])
            label = (
                f"{'with' if meaning == 'scaled' else 'without'} $\\sqrt{{d_k}}$ ({len(SEEDS)} seeds)"
                if k == 0
                else None
            )
            ax_peak.plot(steps, peak, style, color=plots.color(meaning), lw=1.5, label=label)
    ax_peak.set_ylim(0, 1)
    ax_peak.set_xlabel("training step")
    ax_peak.set_ylabel("largest attention weight\n(block 1, mean over queries)")
    ax_peak.set_title(r"Without $\sqrt{d_k}$ the attention is peaked within 10 steps")
    ax_peak.legend(loc="lower right")
    names = list(knockout)
    for y, name in enumerate(names):
        meaning = "yours" if name == "none removed" else "baseline"
        offsets = y + 0.15 * np.arange(-1, len(knockout[name]) - 1)
        if name in zeroed:  # the two kinds of removal on rows of their own: on the same row a ring hid in a dot
            offsets = y - 0.18 + 0.12 * np.arange(-1, len(knockout[name]) - 1)
        ax_out.plot(
            knockout[name],
            offsets,
            "o",
            color=plots.color(meaning),
            label="output replaced by its mean" if y == 1 else None,
        )
        if name in zeroed:
            ax_out.plot(
                zeroed[name],
                offsets + 0.36,
                "o",
                mfc="none",
                color=plots.color(meaning),
                label="output set to zero" if y == 1 else None,
            )
    ax_out.set_yticks(range(len(names)), names)
    ax_out.invert_yaxis()
    ax_out.set_xlim(0, 1.02)
    ax_out.axvline(
        blind_best, color=plots.color("guide"), ls="--", lw=1, label=f"best position-blind ({blind_best:.0%})"
    )
    ax_out.set_xlabel("test accuracy with one head removed (a dot per seed)")
    ax_out.legend(loc="lower left", fontsize=9)
    ax_out.set_title("Removing a head of block 1 breaks the model;\nremoving one of block 2 does not")
    plots.show(
        fig,
        alt="Without √d_k the attention of block 1 is peaked within 10 steps, and removing a head of block 1 breaks "
        "the model while removing one of block 2 does not. "
        "Top: the largest attention weight in block 1 during training, three seeds each: with √d_k it ends near "
        f"{peaks['full model'][:, -1].mean():.2f}, without near {peaks['no √d_k scaling'][:, -1].mean():.2f}. Bottom: "
        "test accuracy of the trained full models with one head's output replaced by its mean (set to zero), one dot "
        "per seed: "
        + "; ".join(
            f"{n} {min(knockout[n]):.0%}–{max(knockout[n]):.0%}"
            + (f" ({min(zeroed[n]):.0%}–{max(zeroed[n]):.0%})" if n in zeroed else "")
            for n in names
        )
        + ".",
        name="09_heads",
    )


# %% [markdown]
# ### What the measurements say
#
# Compare the ranges in the tables, not single numbers. The statements below are orderings, bounds and ranges that
# held in every run we tried, on different CPUs and with PyTorch's different CPU code paths; the exact numbers are
# in your printout, and they differ from ours. The reason is not noise in one machine (a rerun prints the same
# numbers) but how training treats rounding: two CPUs — or your parts and ours — add the same numbers in a
# different order, the results differ in the last digit, and a hundred steps of training can amplify that into
# several points of accuracy in one run. Where a result varied between our runs, its bullet says so.
#
# * **Positions (lesson 7).** Without the positional encoding the model ends close to the best that any
#   position-blind model can expect (within 4 points of its 21.0 % in every seed), far below the full model: it
#   cannot tell the left neighbour from the right one, or either from any other digit of the bag.
# * **Scaling (lesson 3).** Without the division by $\sqrt{d_k}$ the model fails at this learning rate: under 35 % in
#   every seed, far below the full model. The closer look shows that lesson 3's "vanishing gradient" is not what
#   happens at the start: at initialisation the unscaled scores are not saturated yet, the gradient reaching $W^Q$ is
#   *larger* than with scaling (about 2.6 times), and Adam's first step has the same size either way: it moves every
#   entry by about the learning rate, in the direction of the sign of its gradient, whatever the gradient's size.
#   What differs is speed: every change of $W^Q$ and $W^K$ moves the unscaled scores 4 times as far, so after 10
#   steps the largest weight of a query in block 1 is already above 0.75 on average, against below 0.55 with
#   scaling. At the end the unscaled attention is sharper still (above 0.9), yet in no seed does a head of block 1
#   put more than 30 % of its weight on a neighbour, against more than 60 % for the best head with scaling: sharp
#   attention on the wrong keys. Lesson 3 showed that a saturated softmax passes little gradient back; Adam
#   rescales small gradients, yet after 100 steps the attention is still sharp on keys that are not the neighbours.
# * **Heads (lesson 6).** With one block, every output has one attention step to fetch both neighbours. Two
#   heads with $d_k = 16$ solve the task in every seed; one head with $d_k = 32$ — the same parameters — ends
#   clearly below (under 92 % in every seed; the ranges do not overlap). Each query has one weight distribution per
#   head: in every seed, each of the two heads gives more than half of its weight to one neighbour, while the single
#   head spreads its weight over the left neighbour, the query itself and the right neighbour (less than half on
#   any one).
# * **Which heads matter.** Switching one head off shows it causally, beyond where the heads look. Without either
#   head of block 1 (its output replaced by its mean) the model falls below 50 % in all 6 cases (3 seeds, 2 heads),
#   most of them near the position-blind limit; without one head of block 2 it stays above 99 %. Block 1's two heads
#   fetch the neighbours; neither head of block 2 is needed on its own, although both put some weight on the
#   neighbours too. The maps alone did not tell us that; removing the heads did. Setting a head's output to zero
#   instead gives accuracies within a few points of the mean's, so the drop comes from the information the head
#   carried, not from the unusual input that a zero would be. Some cases end *below* the position-blind limit: that
#   limit is for the best model *trained* without positions. The damaged model was not retrained; it still gets one
#   neighbour, and its later parts were never taught to make a good guess at the other, so nothing keeps it above
#   the limit.
# * **Residual connections (lesson 8).** Without them the model learns hardly anything in 100 steps, and in every
#   seed ends below even the position-blind limit. Without the skip path, the token and its position reach the head
#   only through every sublayer in turn, and each sublayer must pass on everything, including what it does not
#   compute with.
# * **Layer norm (lesson 8).** Without it the model still learns (above 80 % in every run), and in every run we
#   tried its mean accuracy was lower and its mean test loss at least twice as high, with 2 blocks as with 4. By
#   this section's strict rule, though, the difference counts only where your table says the ranges do not overlap,
#   in accuracy or in loss. How much accuracy it costs varied widely, from seed to seed and between machines (the
#   line under the table gives it seed by seed), and so did whether 4 blocks lose more than 2. The stream sizes
#   printed under the table show what layer norm changes. In both 4-block models the residual stream grows, as in
#   lesson 8: with layer norm to more than 3 times its size at the input, yet every sublayer reads a normalised copy
#   (mean 0 and variance 1 per token, scaled by its $\gamma$), whatever the stream's size. Without layer norm every
#   block reads the stream as it is, and its size changes from block to block: the stream that reaches the head is
#   more than twice the size of the one the first block reads. This fits the explanation that a fixed scale is what
#   layer norm buys here; it does not prove that the changing scale is what costs the accuracy.
#
# An ablation answers its question for one task, one size and one training budget: another learning rate,
# more steps or a deeper model can change the size of every gap. That is why papers report ablations with
# their settings and several seeds.

# %% [markdown]
# ## 9. Let's review
#
# You built a Transformer encoder from your own parts, and every part came from an earlier lesson:
#
# * **Why attention (lesson 1).** Every output position reaches every input position in one step; the
#   neighbours are one attention hop away.
# * **Dot products (lesson 2)** score how well a query matches each key; the values of the best-matching keys
#   are blended into the output.
# * **Scaling by $\sqrt{d_k}$ (lesson 3)** keeps the scores' spread independent of $d_k$. Without it, this model's
#   attention became sharply peaked within 10 steps, ended up mostly on keys that were not the neighbours, and
#   training failed — although the gradient at the start was not small, and Adam's first step was as large as with
#   scaling.
# * **Softmax and masks (lesson 4)** turn scores into weights that sum to 1; the padding mask gives padded keys
#   weight 0, so a sequence's outputs do not depend on the padding that follows it. PyTorch's
#   `key_padding_mask` says `True` = ignore, the course's masks `True` = may attend: convert, and test it.
# * **$W^Q, W^K, W^V$ and heads (lessons 5 and 6)** are learned. In the trained model, one head of the first
#   block looked mostly at the left neighbour and another at the right one (section 7); switching either of them
#   off broke the model, switching off a head of block 2 did not. In a one-block model, one head of twice the width
#   did clearly worse than two.
# * **Positional encoding (lesson 7)** is the only thing that tells positions apart: without it the model was
#   near the best a position-blind model can expect.
# * **Residual connections and layer norm (lesson 8)** form the residual stream that every block reads from
#   and adds to; without residuals the model did not learn in 100 steps; without layer norm it learned, but its
#   test loss was higher, with 2 blocks as with 4.
# * **This lesson** added the token embedding, the output head, a loss that skips positions without a target
#   (`ignore_index`), a training loop, and the habit of testing each ingredient by removing it — over
#   several seeds, during training (an ablation) or after it (switching a head off).

# %% [markdown]
# ## 10. Check your understanding — the whole course
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell after each
# answer checks only the format; the answer is graded when your notebook is graded.
#
# **Q1 (1 point, lesson 1).** An RNN and one self-attention layer both read a 500-token text. How many
# sequential steps does the signal from token 1 need to reach the output at token 500, in the RNN and in
# the attention layer?
#
# * **a** — 1 and 499 &nbsp; **b** — 499 and 1 &nbsp; **c** — 499 and 499 &nbsp; **d** — 1 and 1

# %% quiz="quiz-path-length" choices="abcd" key="b" points=1

# %% [markdown]
# **Q2 (1 point, lesson 2).** A query $q = (1, 2)$ is scored against the keys $k_1 = (3, 0)$,
# $k_2 = (1, 1)$ and $k_3 = (0, 2)$ by dot products. What is the highest score?

# %% quiz="quiz-best-score" key="float(np.max(np.array([[3, 0], [1, 1], [0, 2]]) @ np.array([1, 2])))" points=1
q2_answer = 4

# %% [markdown]
# **Q3 (1 point, lesson 3).** The entries of $q$ and $k$ are independent with mean 0 and variance 1,
# and $d_k = 64$. What is the **standard deviation** of the unscaled score $q \cdot k$?

# %% quiz="quiz-score-std" key="math.sqrt(64)" points=1
q3_answer = 8

# %% [markdown]
# **Q4 (1 point, lesson 4).** A query has the scores $(2, 2, 2, 2)$ for four keys, and a padding mask
# hides the last key. What weight does the softmax give to the first key? (Two decimals are enough.)

# %% quiz="quiz-masked-weight" key="float(torch.softmax(torch.tensor([2.0, 2, 2, -math.inf]), 0)[0])" tol=0.01 points=1
q4_answer = 1 / 3

# %% [markdown]
# **Q5 (1 point, lessons 5 and 6).** How many parameters does the attention of one block of this lesson's
# model have — its $W^Q, W^K, W^V$ and $W^O$, with $d_{\text{model}} = 32$, 2 heads and no biases?

# %% quiz="quiz-attention-params" key="sum(p.numel() for p in TorchAttention(32, 2).parameters())" points=1
q5_answer = 4 * 32 * 32

# %% [markdown]
# **Q6 (1 point, lesson 6).** This lesson's attention splits $d_{\text{model}} = 32$ into 2 heads. What does
# each head work with?
#
# * **a** — queries, keys and values of size 32 each; the two heads' outputs are added
# * **b** — queries, keys and values of size 16; the heads' outputs are concatenated (size 32) and multiplied by $W^O$
# * **c** — queries of size 32, keys and values of size 16
# * **d** — the first head sees positions $0$ to $T/2 - 1$, the second the rest

# %% quiz="quiz-head-size" choices="abcd" key="b" points=1

# %% [markdown]
# **Q7 (1 point, lesson 7).** You shuffle the input tokens of a Transformer encoder that has **no**
# positional encoding (and no padding). What happens to its outputs?
#
# * **a** — they do not change at all
# * **b** — they change in an unpredictable way
# * **c** — they are shuffled in exactly the same way as the inputs
# * **d** — they come out in sorted order

# %% quiz="quiz-permutation" choices="abcd" key="c" points=1

# %% [markdown]
# **Q8 (1 point, this lesson).** A batch is padded to $T = 3$. One sequence has two real tokens, so its
# `key_padding_mask` (PyTorch's convention) is `[False, False, True]`. In the course's convention, which row of
# the mask does the query at position 0 of that sequence get?
#
# * **a** — `[False, False, True]` &nbsp; **b** — `[True, True, False]` &nbsp; **c** — `[True, False, False]`
#   &nbsp; **d** — `[True, True, True]`

# %% quiz="quiz-mask-row" choices="abcd" key="b" points=1

# %% [markdown]
# **Q9 (1 point, lesson 8 and this lesson).** Which line is the attention half of the pre-LN block that
# this lesson's model uses (it reads the residual stream `x` and adds to it)?
#
# * **a** — `x = x + self_attention(norm1(x))`
# * **b** — `x = norm1(x) + self_attention(x)`
# * **c** — `x = norm1(x + self_attention(x))`
# * **d** — `x = self_attention(norm1(x))`

# %% quiz="quiz-pre-ln" choices="abcd" key="a" points=1

# %% [markdown]
# **Q10 (1 point, this lesson).** A batch of this lesson's task holds two sequences, of lengths 5 and 3, both
# padded to $T = 8$. Over how many positions does the loss of `train_step` average?

# %% quiz="quiz-loss-positions" key="sum(L - 2 for L in (5, 3))" points=1
q10_answer = 4

# %% [markdown]
# **Q11 (1 point, this lesson).** In the ablation, why could the model without positional encoding not get
# close to the full model?
#
# * **a** — it had too few parameters
# * **b** — its output at position $i$ can depend only on $x_i$ and the bag of digits, and the bag does not say which digits stand next to position $i$
# * **c** — it was trained for too few steps; with ten times more it would reach 100%
# * **d** — its softmax saturated

# %% quiz="quiz-why-no-pe-fails" choices="abcd" key="b" points=1

# %% [markdown]
# **Q12 — free answer (4 points, graded by hand).** Follow one inner position $i$ through your trained model,
# from the tokens to the predicted pair. In 5–8 sentences, name each step, say what it computes and which
# lesson built it, and explain how the digits at $i-1$ and $i+1$ reach position $i$: which heads bring them
# (cite your attention maps or printed weights from section 7, and what switching a head off did in section 8),
# what the padding mask does on the way, and what the residual stream carries from block to block.
#
# <details><summary>Before you hand in</summary>
#
# * Does your answer start at the tokens and end at the predicted pair, with every step in between?
# * Does each step name the lesson that built it?
# * Do you cite numbers or maps from *your* run for the heads — both where they look and what removing one did?
# * Do you say what the mask does and what the residual additions keep?
# </details>

# %% [markdown] manual="quiz-free-follow-a-position" points=4
# ### BEGIN SOLUTION
# *Model answer.* Each digit is looked up in the embedding table and the positional encoding of its position
# is added (lesson 7), so the residual stream at position $i$ says both *what* stands there and *where*. In
# block 1, layer norm (lesson 8) normalises a copy of the stream, and every head forms queries, keys and values
# with its $W^Q_h, W^K_h, W^V_h$ (lessons 5–6); the query at $i$ scores every key by a dot product (lesson 2)
# divided by $\sqrt{d_k}$ (lesson 3), the padded keys are set to $-\infty$ by the mask from
# `allowed_from_padding` (lesson 4 and this lesson), and the softmax turns the scores into weights. In my run,
# one head of block 1 puts most of its weight on key $i-1$ and the other its largest share on key $i+1$ (the
# printout of section 7 gives the shares), so their outputs at $i$ are mostly the values of the two neighbours; and
# they are needed: with either of them switched off (its output replaced by its mean), the accuracy falls below
# 50 %, near the position-blind limit, while switching off a head of block 2 leaves it above 99 %. The heads' outputs are concatenated, multiplied by $W^O$ (lesson 6) and **added** to the stream,
# so the stream at $i$ now carries its own token, its position and both neighbours; the feed-forward network adds
# its own computation the same way, and block 2 reads and adds in turn. Finally the last layer norm and the linear
# head turn the vector at $i$ into 25 logits, and the largest is the predicted pair.
#
# *Rubric (4 points).* 1 point: embedding + positional encoding as the start, and why the position is needed.
# 1 point: query/key dot products, scaling, mask and softmax give the attention weights (at least three of the
# lessons named correctly, the mask's role stated). 1 point: the mechanism — heads whose weights concentrate on
# the left and right neighbours, citing the student's own maps or printed weights (any correct pattern the
# student observed counts), and the evidence that they matter (the head switched off in section 8). 1 point: the
# rest of the path — concatenation and $W^O$, the residual additions (the stream keeps what earlier parts wrote),
# feed-forward, final layer norm, head and argmax. No points for restating the question; small slips in lesson
# numbers cost nothing if the idea is right.
# ### END SOLUTION
