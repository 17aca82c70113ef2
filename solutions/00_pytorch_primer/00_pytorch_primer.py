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
# # Lesson 0 — A PyTorch primer
#
# **Attention, from the dot product up** · lesson 0, the primer before lesson 1 · about 70 minutes
#
# The course builds attention twice: first with numpy arrays, where every multiplication is in plain
# sight, then with PyTorch, which trains what we build. PyTorch adds three things to numpy:
# **tensors that remember how they were computed**, so it can find every derivative for us
# (*autograd*); **layers that own their parameters** (`nn.Module`, `nn.Linear`); and **optimisers** that
# move those parameters downhill. This lesson teaches the parts that the later lessons build on.
#
# **Learning goals.** By the end you can
# 1. create tensors, read their shape and dtype, and move between numpy and PyTorch;
# 2. predict the shape that broadcasting gives, and reduce along a chosen axis;
# 3. get derivatives from autograd with `backward()` and `.grad`, with `torch.autograd.grad` and with
#    `torch.autograd.functional.jacobian`, and check one against a formula;
# 4. write a small `nn.Module` out of `nn.Linear` layers, knowing that `nn.Linear(d_in, d_out)` stores its
#    weight as a `(d_out, d_in)` matrix and computes $x W^\top + b$;
# 5. train a model with an optimiser (`zero_grad`, `backward`, `step`) and say what the learning rate does.
#
# **You need:** Python functions and classes; numpy arrays, `.shape` and matrix products `A @ B`; the
# derivative of a function of one variable and the chain rule. Nothing from other lessons.
# Later lessons rely on this one: lesson 1 measures $\partial h_T/\partial x_t$ with `jacobian`, lesson 3
# uses `torch.autograd.grad`, and lessons 5–9 build `nn.Module` layers from `nn.Linear` and train them.
#
# **How the notebook works.** Run the cells from top to bottom (Shift-Enter). Cells that start with
# `# YOUR CODE HERE` are exercises: replace `raise NotImplementedError()` with your code. The cell
# right after each exercise runs *visible checks*; when your work is graded, hidden checks with other
# shapes run as well, so make your code general. The toolbar's **Validate** button runs every check at once.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import attention_course as ac
from attention_course import checks, plots, widgets

ac.setup()

# %% [markdown]
# ## 1. Tensors
#
# A **tensor** is PyTorch's array. Like a numpy array it has a `shape` and a `dtype`, and it is indexed,
# sliced, multiplied (`@`) and transposed (`.T`) the same way. Three differences matter in practice:
#
# * **Default precision.** `torch.tensor([1.0, 2.0])` is `float32`; numpy's default is `float64`.
#   `torch.from_numpy(a)` keeps numpy's `float64` and **shares memory** with `a` (change one, the other
#   changes). When the two precisions meet, PyTorch treats operations differently: element-wise ones (`+`,
#   `-`, `*`, `/`) silently *promote* the result to `float64` (unless the `float64` side is a single number
#   without axes: then the result stays `float32`), while a matrix product (`@`) of a `float32` and a `float64`
#   tensor is an error. Either way, convert one of them yourself with `.float()` or `.double()`, so that you
#   know which precision you get.
# * **Axis names.** Reductions take `dim=` (numpy calls it `axis=`), e.g. `x.sum(dim=-1)`.
# * **Back to Python.** `t.item()` turns a one-element tensor into a Python number; `t.numpy()` gives a numpy
#   array (section 3 shows when you must call `.detach()` first).
#
# As in numpy, the course stores a batch of vectors as the **rows** of a matrix: $T$ tokens with
# $d$ numbers each form a tensor of shape `(T, d)`.

# %%
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x:", tuple(x.shape), x.dtype)

a = np.arange(6.0).reshape(3, 2)
t = torch.from_numpy(a)  # shares memory with a, keeps float64
print("torch.from_numpy(a):", tuple(t.shape), t.dtype)
a[0, 0] = 100.0
print("after a[0, 0] = 100, t[0, 0] is", t[0, 0].item())

print("float32 + float64 gives", (x + t.T).dtype, "and float32 * float64 gives", (x * t.T).dtype, "(promoted)")
print("float32 * a float64 number without axes gives", (x * torch.tensor(2.0, dtype=torch.float64)).dtype)
try:
    x @ t
except RuntimeError as error:
    print("float32 @ float64 fails:", error)
y = x @ t.float()  # (2, 3) @ (3, 2) -> (2, 2)
print("x @ t.float() has shape", tuple(y.shape), "\n", y)
print("row sums, y.sum(dim=-1):", y.sum(dim=-1), "— as numpy:", y.sum(dim=-1).numpy())

# %% [markdown]
# ## 2. Broadcasting
#
# When two tensors of different shapes meet in `+`, `-`, `*` or `/`, PyTorch (like numpy) lines their
# shapes up **from the right**. Two sizes fit if they are equal or if one of them is 1 (a missing axis
# counts as 1); an axis of size 1 is then repeated to match, without copying any data. For example
#
# | shapes | result | what it does |
# |---|---|---|
# | `(T, d) - (d,)` | `(T, d)` | subtracts one vector from every row |
# | `(T, d) / (T, 1)` | `(T, d)` | divides each row by its own number |
# | `(n, 1, d) - (1, m, d)` | `(n, m, d)` | every row of one set minus every row of another |
#
# `x[:, None]` inserts an axis of size 1 (the same as `x.unsqueeze(1)`). Reductions drop the axis they
# reduce, unless you pass `keepdim=True`, which keeps it with size 1, ready to broadcast back. Forgetting
# it is a classic bug: on a square matrix it gives no error, just wrong numbers.

# %%
X = torch.tensor([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]])  # (3, 2)
print("columns centred, X - X.mean(dim=0):\n", X - X.mean(dim=0))  # (3, 2) - (2,)
print("rows divided by their sums, X / X.sum(dim=1, keepdim=True):\n", X / X.sum(dim=1, keepdim=True))
print("(4, 1, 3) + (5, 1) gives shape", tuple((torch.zeros(4, 1, 3) + torch.zeros(5, 1)).shape))
try:
    X / X.sum(dim=1)  # (3, 2) / (3,): the 3 lines up with the 2
except RuntimeError as error:
    print("without keepdim:", error)

S = torch.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [0.0, 0.0, 6.0]])
row_max = S.max(dim=1).values  # (3,): it broadcasts along the LAST axis, like a row
print("S - row max without keepdim (wrong, no error):\n", S - row_max)
print("S - row max with keepdim=True (each row minus its own max):\n", S - S.max(dim=1, keepdim=True).values)


# %% [markdown]
# ### Exercise 0.1 — all pairwise squared distances (2 points)
#
# Given $n$ points as the rows of `A` (shape `(n, d)`) and $m$ points as the rows of `B` (shape `(m, d)`),
# return the tensor `D` of shape `(n, m)` with
#
# $$D_{ij} = \lVert a_i - b_j \rVert^2 = \sum_{k=1}^{d} (A_{ik} - B_{jk})^2 .$$
#
# Row $i$ belongs to `A`'s point $i$, column $j$ to `B`'s point $j$. Use torch operations and return a
# tensor of the same dtype as the inputs. Try to do it without a Python loop.
#
# <details><summary>Hint 1: the idea</summary>
#
# Every point of `A` must meet every point of `B`. Give the two tensors shapes that broadcasting stretches into
# one `(n, m, d)` tensor of all the differences $a_i - b_j$ (section 2's table has the pattern).
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `A[:, None, :]` has shape `(n, 1, d)`; give `B` the shape `(1, m, d)` the same way and subtract.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# Square the differences with `** 2` and add them up over the last axis with `.sum(dim=-1)`.
# </details>


# %% answer="sq-distances"
def sq_distances(A, B):
    """Squared Euclidean distances between the rows of A (n, d) and the rows of B (m, d), as a tensor (n, m)."""
    ### BEGIN SOLUTION
    diff = A[:, None, :] - B[None, :, :]  # (n, 1, d) - (1, m, d) -> (n, m, d)
    return (diff**2).sum(dim=-1)
    ### END SOLUTION


# %% tests="sq-distances-tests" points=2
def _check_sq_distances(A, B, want, what):
    """Your sq_distances(A, B) against `want`, naming the usual mistakes; the result keeps the inputs' dtype."""
    diff = A[:, None, :] - B[None, :, :]
    mistakes = {
        "these are distances, not squared distances: leave out the square root.": want.sqrt(),
        "the result is transposed: row i must belong to A's point i and column j to B's point j, shape (n, m).": want.T,
        "the differences are summed before squaring: square each difference, then sum over the last axis.": diff.sum(-1)
        ** 2,
        "these are sums of absolute differences: square the differences instead.": diff.abs().sum(-1),
        "these are dot products A @ B.T, not squared distances.": A @ B.T,
    }
    out = checks.call(sq_distances, A, B)
    checks.expect(torch.is_tensor(out), f"sq_distances should return a torch tensor, not {type(out).__name__}.")
    checks.expect_close(out, want, what, mistakes=mistakes, rtol=1e-5 if A.dtype == torch.float32 else 1e-6)
    checks.expect(out.dtype == A.dtype, f"for {A.dtype} inputs the result should be {A.dtype}, not {out.dtype}.")


# Visible checks: a worked example (n = 3 points against m = 4 points in d = 2) you can verify by hand,
# e.g. D[1, 3] = (1 - (-1))² + (2 - 1)² = 5 and D[2, 1] = (3 - 0)² + (1 - 2)² = 10.
_A = torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]])
_B = torch.tensor([[1.0, 0.0], [0.0, 2.0], [2.0, 2.0], [-1.0, 1.0]])
_D = torch.tensor([[1.0, 4.0, 8.0, 2.0], [4.0, 1.0, 1.0, 5.0], [5.0, 10.0, 2.0, 16.0]])
_check_sq_distances(_A, _B, _D, "sq_distances on the worked example")
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(31)  # 5 points against 7 in d = 3: all sizes distinct
_A, _B = torch.randn(5, 3, generator=_g, dtype=torch.float64), torch.randn(7, 3, generator=_g, dtype=torch.float64)
_D = torch.cdist(_A, _B) ** 2  # the reference: PyTorch's pairwise distances, squared
_check_sq_distances(_A, _B, _D, "sq_distances of 5 points against 7 points in d = 3 (float64)")
_check_sq_distances(_A[:1], _B, _D[:1], "sq_distances of a single point against 7 points")
_check_sq_distances(10 * _A.float(), 10 * _B.float(), 100 * _D, "sq_distances in float32")
checks.expect_close(sq_distances(_A, _A).diagonal(), torch.zeros(5), "the distance of every point to itself")
### END HIDDEN TESTS
checks.passed("sq_distances")

# %% [markdown]
# ## 3. Autograd: derivatives for free
#
# Create a tensor with `requires_grad=True` and PyTorch records every operation done with it: a graph
# from the inputs to the result. For a **scalar** result $L$, `L.backward()` walks that graph backwards,
# applying the chain rule at every operation, and adds $\partial L/\partial x$ to `x.grad` for every
# input `x` that requires a gradient.
#
# Three details catch everybody once:
# * **Gradients accumulate.** `backward()` *adds* to `.grad`; it does not overwrite it. That is useful
#   (two losses, two `backward()` calls, one summed gradient), and it is why training loops reset the
#   gradients to zero before every `backward()`.
# * **`torch.autograd.grad(L, [x])`** returns the gradients as a tuple and leaves `.grad` alone. Handy when
#   you only want to *look* at a derivative (lesson 3 does this).
# * **Recording has a cost.** Inside `with torch.no_grad():` nothing is recorded (use it to evaluate a
#   model or to edit its weights). A tensor that requires a gradient refuses `.numpy()`; `.detach()`
#   gives the same numbers cut off from the graph.
#
# For a function with a *vector* output, $f: \mathbb{R}^n \to \mathbb{R}^m$, the derivative is the
# **Jacobian**, the $m \times n$ matrix $J_{ij} = \partial f_i/\partial x_j$.
# `torch.autograd.functional.jacobian(f, x)` computes it; its shape is `f(x).shape + x.shape`. Lesson 1
# uses it to measure how much an RNN's final state depends on each input token.

# %%
x = torch.tensor(2.0, requires_grad=True)
L = x**3 - 2 * x  # dL/dx = 3x² - 2 = 10 at x = 2
L.backward()
print("after one backward():  x.grad =", x.grad.item())
(x**3 - 2 * x).backward()  # build the expression again, backward again
print("after a second one:    x.grad =", x.grad.item(), "(added, not replaced)")
x.grad = None  # what optimiser.zero_grad() does for every parameter
(dL_dx,) = torch.autograd.grad(x**3 - 2 * x, [x])
print("torch.autograd.grad:   ", dL_dx.item(), "— and x.grad is still", x.grad)
try:
    (3 * x).numpy()
except RuntimeError as error:
    print("numpy() on a recorded tensor:", str(error).split(".")[0] + ".", "->", (3 * x).detach().numpy())

# %% [markdown]
# A Jacobian you will meet again in lesson 1: one step $h = \tanh(W x + b)$ with $W \in \mathbb{R}^{2\times 3}$.
# The chain rule gives $\partial h/\partial x = \operatorname{diag}(1 - h^2)\, W$, because
# $\tanh'(z) = 1 - \tanh(z)^2$. Autograd agrees:

# %%
W = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])
b = torch.tensor([0.1, -0.3])
x0 = torch.tensor([0.5, 0.2, -0.4])
h = torch.tanh(W @ x0 + b)
J = torch.autograd.functional.jacobian(lambda v: torch.tanh(W @ v + b), x0)
by_hand = torch.diag(1 - h**2) @ W
print("Jacobian shape:", tuple(J.shape), "= output shape (2,) + input shape (3,)")
print(J)
print(f"largest difference from diag(1 - h²) W: {(J - by_hand).abs().max().item():.1e}")


# %% [markdown]
# ### Exercise 0.2 — a gradient from autograd (2 points)
#
# The mean squared error of a linear prediction $Xw$ for targets $y$ is
#
# $$L(w) = \frac{1}{N}\sum_{i=1}^{N} \big(x_i \cdot w - y_i\big)^2, \qquad X \in \mathbb{R}^{N\times d},\; w \in \mathbb{R}^{d},\; y \in \mathbb{R}^{N}.$$
#
# Write `mse_and_grad(w, X, y)` that returns the pair `(loss, grad)`: `loss` is $L(w)$ as a Python float,
# `grad` is $\partial L/\partial w$, a tensor of shape `(d,)`. The checks require that
# * the gradient comes **from autograd**: the checks watch whether autograd computes a gradient while your
#   function runs (`backward()`, `torch.autograd.grad`, `torch.autograd.functional` and `torch.func`, in reverse
#   or forward mode, all count), so a gradient written out by hand gets no points here, even next to a loss that
#   autograd recorded (that formula is what the checks compare with: $\nabla_w L = \tfrac{2}{N} X^\top (Xw - y)$,
#   from the chain rule);
# * the caller's `w` comes back untouched: no `requires_grad` flag and no `.grad` set on it;
# * calling the function twice gives the same result.
#
# <details><summary>Hint 1: the idea</summary>
#
# Autograd only differentiates with respect to a tensor that records its operations, and you must not switch
# recording on for the caller's own `w`. So work on a copy of `w` that records.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `w = w.detach().clone().requires_grad_(True)` makes that copy: a fresh tensor with the same numbers, cut off
# from whatever `w` was attached to. Compute the loss from this copy.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `loss.backward()` fills the copy's `.grad`; `loss.item()` turns the loss into a float.
# (`torch.autograd.grad(loss, [w])` is another way to get the gradient.)
# </details>


# %% answer="mse-and-grad"
def mse_and_grad(w, X, y):
    """(loss, grad): the mean squared error of X @ w against y as a float, and its gradient w.r.t. w (d,)."""
    ### BEGIN SOLUTION
    w = w.detach().clone().requires_grad_(True)  # a fresh leaf: the caller's tensor stays untouched
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    return loss.item(), w.grad
    ### END SOLUTION


# %% tests="mse-and-grad-tests" points=2
class _Autograd(torch.overrides.TorchFunctionMode):
    """Notes whether autograd computes a gradient while it is on: a backward pass (Tensor.backward, and
    torch.autograd.grad, which torch.autograd.functional and torch.func call) or a dual tensor made for forward
    mode (torch.func.jacfwd...). Recording a loss from a tensor that requires grad is not enough."""

    ran = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.ran |= getattr(func, "__name__", "") in ("backward", "grad", "_make_dual")
        return func(*args, **(kwargs or {}))


def _check_mse_and_grad(w, X, y, what):
    """Your mse_and_grad(w, X, y) against the loss and the formula 2/N Xᵀ(Xw − y), naming the usual mistakes."""
    N, r = len(y), X @ w - y
    want_loss, want_grad = (r**2).mean().item(), 2 / N * X.T @ r
    with _Autograd() as autograd:
        result = checks.call(mse_and_grad, w, X, y)
    checks.expect(
        isinstance(result, (tuple, list)) and len(result) == 2, "mse_and_grad should return a pair (loss, grad)."
    )
    loss, grad = result
    checks.expect(
        not (checks.to_numpy(loss).size == len(w) > 1 and checks.to_numpy(grad).size == 1),
        "the return order is swapped: return (loss, grad), the loss first.",
    )
    checks.expect(
        isinstance(loss, float), f"return the loss as a Python float (loss.item()), not {type(loss).__name__}."
    )
    checks.expect_close(loss, want_loss, f"the loss {what}", mistakes={
        "the squared errors are summed, not averaged: divide by N (use .mean()).": N * want_loss,
        "the errors are not squared: L is the mean of (x_i · w - y_i)².": r.mean(),
    })  # fmt: skip
    checks.expect_close(grad, want_grad, f"the gradient {what}", mistakes={
        "the gradient is N times too large: the loss must be the mean, not the sum.": N * want_grad,
        "the gradient has the wrong sign: it points uphill, towards a larger loss.": -want_grad,
    })  # fmt: skip
    checks.expect(autograd.ran, "the gradient is right, but autograd did not compute it (no backward pass ran): "
                  "compute the loss from a copy of w that requires grad, call backward() on it and return the copy's "
                  ".grad.")  # fmt: skip
    checks.expect(
        w.grad is None and not w.requires_grad,
        "the caller's w was changed (it now requires grad or has a .grad): work on "
        "w.detach().clone().requires_grad_(True) instead.",
    )
    checks.expect_close(mse_and_grad(w, X, y)[1], want_grad, f"the gradient of a second call {what}", mistakes={
        "the second call returned twice the gradient: .grad accumulates across backward() calls; "
        "use a fresh copy of w in every call.": 2 * want_grad,
    })  # fmt: skip


# Visible checks: N = 4 examples with d = 3 features. By hand: X @ w = [2, -0.5, 0, 2.5]; minus y:
# [1, -0.5, -2, 2.5]; squares: [1, 0.25, 4, 6.25]; mean 2.875. The gradient 2/N · Xᵀ(Xw − y) = [2, -1.25, 2].
_X = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [2.0, 0.0, 1.0]])
_check_mse_and_grad(torch.tensor([1.0, -1.0, 0.5]), _X, torch.tensor([1.0, 0.0, 2.0, 0.0]), "on the worked example")
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(32)
_X, _w, _y = (torch.randn(*s, generator=_g, dtype=torch.float64) for s in ((7, 3), (3,), (7,)))
_check_mse_and_grad(_w, _X, _y, "for N = 7, d = 3 (float64)")
_check_mse_and_grad(_w, _X[:1], _y[:1], "for a single example")
### END HIDDEN TESTS
checks.passed("mse_and_grad")

# %% [markdown]
# ## 4. Modules and `nn.Linear`
#
# A neural network layer in PyTorch is a subclass of `nn.Module`. You write two methods:
# * `__init__` calls `super().__init__()` first (it sets up the bookkeeping), then creates the
#   sub-layers and stores them as **attributes** (`self.hidden = nn.Linear(...)`). Storing them as
#   attributes is what *registers* their parameters: `model.parameters()` then yields every weight and
#   bias, which is what an optimiser needs. (Layers kept in a plain Python list, or created inside
#   `forward`, are invisible to it.)
# * `forward(self, x)` computes the output. You call the module itself, `model(x)`, which runs `forward`.
#
# The most common layer is `nn.Linear(d_in, d_out)`, an affine map with a weight matrix and a bias.
# **Its weight is stored as `(d_out, d_in)`**, and it computes, for inputs `x` of shape `(..., d_in)` (any
# number of leading axes),
#
# $$\text{linear}(x) = x\,W^\top + b, \qquad W \in \mathbb{R}^{d_\text{out}\times d_\text{in}},\; b \in \mathbb{R}^{d_\text{out}} .$$
#
# The course writes projections the other way round, $Q = XW^Q$ with $W^Q \in \mathbb{R}^{d_\text{model}\times d_k}$
# (lesson 5). So the course's $W^Q$ is **`linear.weight.T`** of an `nn.Linear(d_model, d_k)`.
# A new layer starts with small random weights; to set them yourself (the tests do this), copy
# into them inside `torch.no_grad()`.

# %%
layer = nn.Linear(3, 2)  # d_in = 3, d_out = 2
print("weight:", tuple(layer.weight.shape), " bias:", tuple(layer.bias.shape))
with torch.no_grad():  # set the weights by hand
    layer.weight.copy_(torch.tensor([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]]))
    layer.bias.copy_(torch.tensor([0.5, -0.5]))
xb = torch.tensor(
    [[1.0, 2.0, 3.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [2.0, 0.0, 1.0]]
)  # a batch of 4 inputs, shape (4, 3)
out = layer(xb)
print("layer(x):", tuple(out.shape), "\n", out.detach())
print(f"equal to x @ W.T + b: {torch.allclose(out, xb @ layer.weight.T + layer.bias)}")
print(
    "parameters:",
    [(name, tuple(p.shape)) for name, p in layer.named_parameters()],
    "->",
    sum(p.numel() for p in layer.parameters()),
    "numbers",
)
print("leading axes pass through: (5, 7, 3) ->", tuple(layer(torch.zeros(5, 7, 3)).shape))


class ListNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(3, 2)]  # a plain Python list: PyTorch does not look inside


print(
    "parameters of a layer kept in a plain list:",
    len(list(ListNet().parameters())),
    "(nn.ModuleList([...]) instead of a list would register them)",
)


# %% [markdown]
# ### Exercise 0.3 — a two-layer network (2 points)
#
# Complete `TwoLayerNet(d_in, d_hidden, d_out)`, the small network that every Transformer block contains
# (lesson 8 calls it the feed-forward layer):
#
# $$\text{net}(x) = \max\!\big(0,\; x W_1^\top + b_1\big)\, W_2^\top + b_2 .$$
#
# The tests rely on this interface:
# * two attributes, `self.hidden` mapping `d_in` to `d_hidden` and `self.out` mapping `d_hidden` to
#   `d_out`, both `nn.Linear` layers with biases; no other parameters;
# * `forward(x)` takes `x` of shape `(..., d_in)` and returns shape `(..., d_out)`: the hidden layer, then
#   the ReLU $\max(0, \cdot)$ on the hidden layer only, then the output layer, with torch operations so
#   that gradients flow.
#
# <details><summary>Hint 1: the idea</summary>
#
# `__init__` creates the two layers and stores them as attributes, which registers their parameters;
# `forward` only calls them, in order, with the ReLU in between.
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# `self.hidden = nn.Linear(d_in, d_hidden)` is the first layer; the second one is made the same way.
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# In `forward`: `self.hidden(x)`, then `torch.relu(...)` (it computes $\max(0, t)$ entry by entry), then
# `self.out(...)`.
# </details>


# %% answer="two-layer-net"
class TwoLayerNet(nn.Module):
    """x -> out(relu(hidden(x))), with hidden = nn.Linear(d_in, d_hidden) and out = nn.Linear(d_hidden, d_out)."""

    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        ### BEGIN SOLUTION
        self.hidden = nn.Linear(d_in, d_hidden)
        self.out = nn.Linear(d_hidden, d_out)
        ### END SOLUTION

    def forward(self, x):
        """x: (..., d_in) -> (..., d_out)"""
        ### BEGIN SOLUTION
        return self.out(torch.relu(self.hidden(x)))
        ### END SOLUTION


# %% tests="two-layer-net-tests" points=2
def _check_two_layer_net(W1, b1, W2, b2, x):
    """TwoLayerNet with the weights W1 (d_hidden, d_in), W2 (d_out, d_hidden) and biases copied in, on inputs x."""
    (d_hidden, d_in), d_out = W1.shape, len(W2)
    sizes = f"TwoLayerNet({d_in}, {d_hidden}, {d_out})"
    net = checks.call(TwoLayerNet, d_in, d_hidden, d_out).to(x.dtype)
    for name, shape in (("hidden", (d_hidden, d_in)), ("out", (d_out, d_hidden))):
        layer = getattr(net, name, None)
        checks.expect(isinstance(layer, nn.Linear), f"{sizes} needs an attribute `{name}` that is an nn.Linear.")
        checks.expect(
            tuple(layer.weight.shape) == shape,
            f"self.{name}.weight has shape {tuple(layer.weight.shape)}, expected {shape}: nn.Linear(d_in, d_out) "
            "stores its weight as (d_out, d_in), so self.hidden is nn.Linear(d_in, d_hidden) and "
            "self.out is nn.Linear(d_hidden, d_out).",
        )
    count, want = sum(p.numel() for p in net.parameters()), d_in * d_hidden + d_hidden + d_hidden * d_out + d_out
    checks.expect(
        count == want,
        f"{sizes} has {count} parameters, expected {d_in}·{d_hidden} + {d_hidden} + {d_hidden}·{d_out} + {d_out} = "
        f"{want} (both layers have weights and biases, nothing else).",
    )
    with torch.no_grad():
        for param, value in zip((net.hidden.weight, net.hidden.bias, net.out.weight, net.out.bias), (W1, b1, W2, b2)):
            param.copy_(value)
        pre = F.linear(x, W1, b1)
        mistakes = {
            "the ReLU is missing: apply torch.relu to the hidden layer.": F.linear(pre, W2, b2),
            "the ReLU is applied to the output too: only the hidden layer goes through it.": F.linear(
                pre.relu(), W2, b2
            ).relu(),
            "this is tanh, not the ReLU max(0, ·).": F.linear(pre.tanh(), W2, b2),
            "this is the logistic sigmoid, not the ReLU max(0, ·).": F.linear(pre.sigmoid(), W2, b2),
        }
    out = net(x)
    checks.expect_close(
        out, F.linear(pre.relu(), W2, b2), f"{sizes} on inputs of shape {tuple(x.shape)}", mistakes=mistakes
    )
    out.sum().backward()
    missing = [name for name, p in net.named_parameters() if p.grad is None]
    checks.expect(not missing, f"no gradient reached {missing}: compute forward with torch operations on the layers.")


# Visible checks: TwoLayerNet(3, 5, 2) with weights set by hand, on 4 inputs.
_check_two_layer_net(
    torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]),
    torch.tensor([0.0, -1.0, 0.0, 0.0, 0.5]),
    torch.tensor([[1.0, 1.0, -1.0, 0.0, 2.0], [0.0, -1.0, 0.0, 1.0, -1.0]]),
    torch.tensor([-2.0, 0.25]),
    torch.tensor([[1.0, 2.0, -1.0], [-1.0, 0.5, 2.0], [0.0, 0.0, 0.0], [2.0, -3.0, 1.0]]),
)
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(33)  # TwoLayerNet(6, 7, 3) in float64, on inputs with two leading axes
_check_two_layer_net(
    *(torch.randn(*s, generator=_g, dtype=torch.float64) for s in ((7, 6), (7,), (3, 7), (3,), (2, 4, 6)))
)
### END HIDDEN TESTS
checks.passed("TwoLayerNet")


# %% [markdown]
# ## 5. Training: loss, gradient, step
#
# Training means changing the parameters $\theta$ so that a **loss** $L(\theta)$ gets smaller. Gradient
# descent takes a small step against the gradient,
#
# $$\theta \leftarrow \theta - \eta\, \nabla_\theta L(\theta),$$
#
# where the **learning rate** $\eta$ sets the step size. An optimiser object does this update for every
# parameter you hand it:
# * `torch.optim.SGD(model.parameters(), lr=η)` is exactly the rule above. ("Stochastic" refers to
#   the usual practice of computing the loss on a random batch of the data; here each step uses the
#   whole toy data set, so it is plain gradient descent.)
# * `torch.optim.Adam(model.parameters(), lr=η)` keeps, for every parameter, running averages of its
#   gradient and of its squared gradient, and steps by $\eta$ times the first divided by the square root
#   of the second. So every parameter moves by at most about $\eta$ per step, whatever the scale of its
#   gradient. Lessons 5 and 9 train with it.
#
# One training step has four parts: reset the gradients (`optimizer.zero_grad()`), compute the loss,
# `loss.backward()` (fills every parameter's `.grad`), and `optimizer.step()` (updates the parameters
# from their `.grad`). The order has two rules: `step()` comes after `backward()`, and every `backward()`
# must start from zeroed gradients, so zeroing may come at the start of a step or at the end of the
# previous one. Forget it and each step uses the sum of all gradients so far.
#
# Our loss is the **mean squared error**, `F.mse_loss(prediction, target)` $= \frac{1}{N}\sum (\text{prediction} - \text{target})^2$
# over all entries.

# %% [markdown]
# ### Exercise 0.4 — one training step (2 points)
#
# Write `train_step(model, optimizer, x, y)`: one step of the optimiser on the mean squared error
# between `model(x)` and `y`. It returns the loss **before** the update, as a Python float. The model
# and optimiser come in freshly made or straight from an earlier `train_step`; the tests call it
# several times in a row with SGD (with and without momentum) and with Adam, on models with one and two layers.
#
# <details><summary>Hint 1: the idea</summary>
#
# Section 5 lists the four parts of a step and the two rules for their order. Which part makes
# the second call of `train_step` independent of the first one's gradients?
# </details>
#
# <details><summary>Hint 2: a first step</summary>
#
# The loss is `loss = F.mse_loss(model(x), y)`; what comes before it and what comes after it?
# </details>
#
# <details><summary>Hint 3: the calls</summary>
#
# `optimizer.zero_grad()`, `loss.backward()`, `optimizer.step()`, and `loss.item()` for the float.
# </details>


# %% answer="train-step"
def train_step(model, optimizer, x, y):
    """One optimiser step on F.mse_loss(model(x), y); returns that loss (before the step) as a float."""
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION


# %% tests="train-step-tests" points=2
# Visible checks: two SGD steps on nn.Linear(2, 1), against gradient descent written out by hand.
def _gd_by_hand(W, b, x, y, lr):
    """Loss, then W and b after one gradient-descent step on the mean squared error (formulas, no autograd)."""
    r = x @ W.T + b - y  # (N, d_out) residuals
    return (r**2).mean().item(), W - lr * 2 / r.numel() * r.T @ x, b - lr * 2 / r.numel() * r.sum(dim=0)


_model = nn.Linear(2, 1)
_W0, _b0 = torch.tensor([[0.5, -1.0]]), torch.tensor([0.25])
with torch.no_grad():
    _model.weight.copy_(_W0)
    _model.bias.copy_(_b0)
_x, _y = torch.tensor([[1.0, 2.0], [0.0, -1.0], [3.0, 1.0]]), torch.tensor([[1.0], [2.0], [0.5]])
_opt = torch.optim.SGD(_model.parameters(), lr=0.1)
_want_loss, _W1, _b1 = _gd_by_hand(_W0, _b0, _x, _y, 0.1)
_loss = checks.call(train_step, _model, _opt, _x, _y)
checks.expect(isinstance(_loss, float), f"return the loss as a Python float (loss.item()), not {type(_loss).__name__}.")
checks.expect_close(_loss, _want_loss, "the loss returned by the first step", mistakes={
    "this is the loss AFTER the step: return the loss computed before optimizer.step().": _gd_by_hand(
        _W1, _b1, _x, _y, 0.1)[0],
    "the squared errors are summed, not averaged: use F.mse_loss (the mean).": 3 * _want_loss,
})  # fmt: skip
checks.expect(
    not torch.equal(_model.weight.detach(), _W0),
    "the parameters did not change: call optimizer.step() after loss.backward() "
    "(and do not zero the gradients between the two).",
)
checks.expect_close(_model.weight, _W1, "the weight after one SGD step (lr = 0.1)", mistakes={
    "the step went uphill: minimise the loss (do not negate it).": 2 * _W0 - _W1,
    "the step is 3 times too large: the loss must be the mean (F.mse_loss), not the sum.": _W0 + 3 * (_W1 - _W0),
})  # fmt: skip
checks.expect_close(_model.bias, _b1, "the bias after one SGD step (lr = 0.1)")
_want_loss, _W2, _ = _gd_by_hand(_W1, _b1, _x, _y, 0.1)
checks.expect_close(train_step(_model, _opt, _x, _y), _want_loss, "the loss returned by the second step")
checks.expect_close(_model.weight, _W2, "the weight after a second step", mistakes={
    "the second step used the sum of both steps' gradients: zero the gradients (optimizer.zero_grad()) "
    "before every backward().": _W2 - (_W0 - _W1),
})  # fmt: skip
### BEGIN HIDDEN TESTS
_g = torch.Generator().manual_seed(34)  # three steps of three optimisers on a two-layer model, against PyTorch's loop
_x, _y = torch.randn(6, 4, generator=_g), torch.randn(6, 3, generator=_g)
for _name, _make in (
    ("SGD", lambda p: torch.optim.SGD(p, lr=0.05)),
    ("Adam", lambda p: torch.optim.Adam(p, lr=0.01)),
    ("SGD with momentum", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
):
    _mine = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
    with torch.no_grad():
        for _p in _mine.parameters():
            _p.copy_(torch.randn(_p.shape, generator=_g))
    _ref = __import__("copy").deepcopy(_mine)
    _mine_opt, _ref_opt = _make(_mine.parameters()), _make(_ref.parameters())
    for _step in range(1, 4):
        _ref_opt.zero_grad()
        _ref_loss = F.mse_loss(_ref(_x), _y)
        _ref_loss.backward()
        _ref_opt.step()
        _loss = train_step(_mine, _mine_opt, _x, _y)
        checks.expect(isinstance(_loss, float), f"return the loss as a Python float, not {type(_loss).__name__}.")
        checks.expect_close(
            _loss, _ref_loss.item(), f"the loss of {_name} step {_step} on a two-layer model", rtol=1e-5
        )
        for (_pname, _p), _q in zip(_mine.named_parameters(), _ref.parameters()):
            checks.expect_close(_p, _q, f"parameter {_pname} after {_name} step {_step}", rtol=1e-5, atol=1e-6)
### END HIDDEN TESTS
checks.passed("train_step")

# %% [markdown]
# ### A toy fit
#
# Forty points scattered around the line $y = 2x - 1$, and a model `nn.Linear(1, 1)` (one weight $w$,
# one bias $b$) that starts at $w = -1$, $b = 2$, a line sloping the wrong way. Your `train_step` with
# SGD at learning rate 0.1 fits it. The best any line can do is the least-squares fit, computed
# directly by `torch.linalg.lstsq`.

# %%
g_toy = torch.Generator().manual_seed(0)
x_toy = 4 * torch.rand(40, 1, generator=g_toy) - 1  # 40 points with x in [-1, 3]
y_toy = 2 * x_toy - 1 + 0.5 * torch.randn(40, 1, generator=g_toy)
design = torch.cat([x_toy, torch.ones_like(x_toy)], dim=1)  # (40, 2): columns x and 1
best_w, best_b = torch.linalg.lstsq(design, y_toy).solution.ravel().tolist()
best_loss = F.mse_loss(design @ torch.tensor([[best_w], [best_b]]), y_toy).item()
W_START, B_START = -1.0, 2.0


class Fit:
    """nn.Linear(1, 1) trained from w = -1, b = 2 with your train_step; `more(steps)` continues it."""

    def __init__(self, lr, optimiser="SGD"):
        self.model = nn.Linear(1, 1)
        with torch.no_grad():
            self.model.weight.fill_(W_START)
            self.model.bias.fill_(B_START)
        make = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam}[optimiser]
        self.optimizer = make(self.model.parameters(), lr=lr)
        self.losses, self.params = [], []  # the loss before each step; (w, b) after it

    def more(self, steps):
        """Train until `steps` steps are done in all; return (losses, params) of the first `steps` steps."""
        while len(self.losses) < steps:
            self.losses.append(float(train_step(self.model, self.optimizer, x_toy, y_toy)))  # yours
            self.params.append((self.model.weight.item(), self.model.bias.item()))
        return np.array(self.losses[:steps]), self.params[:steps]


def fit_line(lr, steps, optimiser="SGD"):
    """(losses, [(w, b) after each step]) of `steps` steps of your train_step."""
    return Fit(lr, optimiser).more(steps)


with ac.student_code("train_step"):
    losses, params = fit_line(0.1, 60)
    for step in (0, 10, 20, 40, 59):
        print(f"loss before step {step + 1:2d}: {losses[step]:8.4f}")
    w_fit, b_fit = params[-1]
    print(
        f"after 60 steps: w = {w_fit:.3f}, b = {b_fit:.3f}; least squares: w = {best_w:.3f}, b = {best_b:.3f} "
        f"(loss {best_loss:.4f}; the data were made with w = 2, b = -1)"
    )

# %% [markdown]
# ## 6. Explore: the learning rate
#
# The explorer trains `nn.Linear(1, 1)` on the toy data with **your** `train_step`, from the same start
# every time. Left: the data, the least-squares line and the line your model has after the chosen number
# of steps (a line that leaves the frame is drawn along its edge). Right: the loss that `train_step` returned
# at every step (log scale).
#
# * **learning rate** — the step size $\eta$;
# * **steps** — how many calls of `train_step`;
# * **optimiser** — SGD or Adam.
#
# **Things to try.** With SGD, how close to the least-squares loss does learning rate 0.1 get within the 40
# steps? And 0.3, and 0.01? (0.01 is still far from it after 40 steps: the cell under the explorer counts how
# many steps each of them needs.) Then go past 0.4 and watch the line swing from side to side, further at
# every step. Switch to Adam and try the same learning rates. Sliders redraw when released; you can also
# click the number (or the box next to a list) and type a value.

# %%
LEARNING_RATES = [0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 1.0, 2.0]
MAX_STEPS = 40
LOSS_FLOOR, LOSS_CEILING = 0.1, 1e5  # the loss axis; larger losses are drawn at the top
FIT_X, FIT_Y = (-1.5, 3.5), (-6, 9)  # the fit's axes


def line_in_frame(w, b):
    """Points of the line y = w x + b to draw: the ends of the x axis and where it crosses the frame's top and bottom
    (just inside), so that a steep line, whose ends lie far outside the frame, still has points inside it."""
    points = [(x, w * x + b) for x in FIT_X]
    if w != 0:  # the crossings, with their y as set (w x + b would round far off for a huge w)
        crossings = [((y - b) / w, y) for y in (FIT_Y[0] + 0.01, FIT_Y[1] - 0.01)]
        points += [(x, y) for x, y in crossings if FIT_X[0] < x < FIT_X[1]]
    xs, ys = zip(*sorted(points))
    return np.array(xs), np.array(ys)


class FitView(widgets.View):
    """The fitted line and the loss curve of your train_step, for one learning rate and optimiser."""

    def __init__(self):
        self.runs = {}  # (lr, optimiser) -> its Fit, as far as it has been trained

    def build(self, lr, steps, optimiser):
        fig, (ax_fit, ax_loss) = plt.subplots(1, 2, figsize=(6.6, 3.4), layout="constrained")
        ax_fit.plot(x_toy.ravel(), y_toy.ravel(), "o", ms=3.5, color=plots.color("data"), label="data")
        self.grid = np.array(FIT_X)
        ax_fit.plot(
            self.grid, best_w * self.grid + best_b, "--", color=plots.color("reference"), lw=1, label="least squares"
        )
        (self.line,) = ax_fit.plot(self.grid, self.grid, color=plots.color("yours"), lw=2.5, label="your model")
        ax_fit.set_xlim(*FIT_X)
        ax_fit.set_ylim(*FIT_Y)
        ax_fit.set_xlabel("x")
        ax_fit.set_ylabel("y")
        self.fit_title = ax_fit.set_title(" ")
        (self.curve,) = ax_loss.semilogy([], [], "o-", ms=2.5, color=plots.color("yours"))
        ax_loss.axhline(best_loss, color=plots.color("reference"), ls="--", lw=1)
        ax_loss.set_xlim(0, MAX_STEPS + 1)
        ax_loss.set_ylim(LOSS_FLOOR, LOSS_CEILING)
        ax_loss.set_xlabel("step")
        ax_loss.set_ylabel("loss before the step (log;\nabove $10^5$: drawn at $10^5$)")
        fig.legend(loc="outside upper center", ncol=3)  # one key for both panels: the same colour, the same meaning
        self.loss_title = ax_loss.set_title(" ")
        self.dynamic = [self.line, self.curve, self.fit_title, self.loss_title]
        return fig

    def update(self, lr, steps, optimiser):
        if (lr, optimiser) not in self.runs:
            self.runs[(lr, optimiser)] = Fit(lr, optimiser)
        losses, params = self.runs[(lr, optimiser)].more(steps)  # trains only the steps not done yet
        shown = np.nan_to_num(losses[:steps], nan=LOSS_CEILING, posinf=LOSS_CEILING)
        self.curve.set_data(np.arange(1, steps + 1), np.clip(shown, LOSS_FLOOR, LOSS_CEILING))
        w, b = params[steps - 1]
        self.line.set_data(*line_in_frame(w, b))
        self.diverged = not np.isfinite(losses[steps - 1]) or losses[steps - 1] > 100 * losses[0]
        self.fit_title.set_text(f"your line: w = {w:.3g}, b = {b:.3g}")  # short texts: text is slow to draw
        self.loss_title.set_text("diverging" if self.diverged else f"last loss {losses[steps - 1]:.3g}")
        self.summary = (w, b, losses[steps - 1])

    def alt(self, lr, steps, optimiser):
        w, b, loss = self.summary
        if self.diverged:
            finding = "the loss is diverging"
        elif loss <= 1.01 * best_loss:
            finding = "your line is on the least-squares line (its loss within 1 % of the least-squares loss)"
        else:
            finding = f"your line is not there yet: its loss is {loss / best_loss:.3g} times the least-squares loss"
        state = "the loss is diverging" if self.diverged else f"the last loss is {loss:.3g}"
        return (
            f"With {optimiser} at learning rate {lr}, after {steps} step{'s' * (steps != 1)} {finding}. Left: the data, the "
            f"least-squares line (w = {best_w:.2f}, b = {best_b:.2f}) and your model's line, w = {w:.3g}, b = {b:.3g}. "
            f"Right: the loss before every step, on a log scale; {state} (least squares: {best_loss:.3g})."
        )


widgets.explore(
    FitView(),
    needs=["train_step"],
    lr=widgets.choice_slider("learning rate", LEARNING_RATES, 0.1),
    steps=widgets.slider("steps", 1, MAX_STEPS, 20),
    optimiser=widgets.dropdown("optimiser", ["SGD", "Adam"]),
)

# %%
with ac.student_code("train_step"):
    steps_needed = {}
    for lr in (0.01, 0.1, 0.3):
        fit, steps = Fit(lr), 0
        while steps < 1000 and fit.more(steps + 1)[0][-1] > 1.01 * best_loss:  # the loss after `steps` steps
            steps += 1
        steps_needed[lr] = steps
    print(
        "SGD, steps until the loss is within 1 % of the least-squares loss: "
        + ", ".join(f"learning rate {lr}: {n} steps" for lr, n in steps_needed.items())
    )

# %% [markdown]
# ## 7. Experiment: where does gradient descent blow up?
#
# **Claim.** On this problem SGD's loss falls for every learning rate below a threshold that we can
# compute before any training, $\eta^* = 2/\lambda_\text{max}$, and grows for every learning rate above it.
# Adam, whose steps have a size of about $\eta$ whatever the gradient, shows no such threshold on the same grid.
#
# **Why.** The mean squared error of a line is a quadratic bowl in $\theta = (w, b)$:
# $L(\theta) = L_\text{min} + \tfrac{1}{2}(\theta - \theta^*)^\top H\, (\theta - \theta^*)$, with the constant
# matrix $H = \tfrac{2}{N}\sum_i [x_i, 1]^\top [x_i, 1]$ (the *Hessian*, the matrix of second derivatives)
# and $\theta^*$ the least-squares line. Its gradient is $H(\theta - \theta^*)$, so a gradient step gives
# $\theta - \theta^* \leftarrow (I - \eta H)(\theta - \theta^*)$. Along each eigenvector of $H$, with
# eigenvalue $\lambda$, the error is multiplied by $1 - \eta\lambda$ at every step. It shrinks only if
# $|1 - \eta\lambda| < 1$, that is $\eta < 2/\lambda$, and the steepest direction, $\lambda_\text{max}$,
# sets the limit. Between $1/\lambda_\text{max}$ and $2/\lambda_\text{max}$ the factor is negative: the
# error flips sign at every step, and the line swings from side to side while it settles.
#
# **Measurement.** For 25 learning rates from 0.01 to 2 we run 40 steps of your `train_step` with SGD and
# with Adam, and divide the loss after the 40 steps by the loss at the start.

# %%
H = 2 / len(x_toy) * design.T @ design  # (2, 2): the Hessian of the loss in (w, b)
lam_min, lam_max = torch.linalg.eigvalsh(H).tolist()
threshold = 2 / lam_max
lr_grid = np.geomspace(0.01, 2.0, 25)
xs_np, ys_np = x_toy.ravel().numpy(), y_toy.ravel().numpy()
start_loss = float(np.mean((W_START * xs_np + B_START - ys_np) ** 2))

with ac.student_code("train_step"):
    ratio, moved = {}, {}
    for optimiser in ("SGD", "Adam"):
        final = np.array([fit_line(float(lr), MAX_STEPS, optimiser)[1][-1] for lr in lr_grid])  # (25, 2): w, b
        with np.errstate(all="ignore"):  # SGD at the largest rates overflows to inf / nan
            loss_after = ((final[:, :1] * xs_np + final[:, 1:] - ys_np) ** 2).mean(axis=1)
        ratio[optimiser] = np.nan_to_num(loss_after / start_loss, nan=np.inf)
        moved[optimiser] = final[:, 0] - W_START
    best_ratio = best_loss / start_loss
    sgd_down, sgd_up = lr_grid[ratio["SGD"] < 1], lr_grid[~(ratio["SGD"] < 1)]
    near_best = lr_grid[ratio["SGD"] < 1.01 * best_ratio]
    best_i = int(np.argmin(ratio["SGD"]))

    CAP = 1e4
    fig, ax = plt.subplots(figsize=(6.3, 4.0), layout="constrained")
    ax.loglog(
        lr_grid,
        np.clip(ratio["SGD"], 1e-3, CAP),
        "o-",
        ms=3.5,
        color=plots.color("yours"),
        label="SGD (above $10^4$: drawn at $10^4$)",
    )
    ax.loglog(lr_grid, np.clip(ratio["Adam"], 1e-3, CAP), "s-", ms=3.5, color=plots.color("other"), label="Adam")
    ax.axvline(
        threshold,
        color=plots.color("reference"),
        ls=":",
        lw=1.5,
        label=f"$2/\\lambda_\\mathrm{{max}}$ = {threshold:.3f}",
    )
    ax.axhline(1.0, color=plots.color("chance"), lw=0.8, label="no progress (ratio 1)")
    ax.axhline(best_ratio, color=plots.color("reference"), ls="--", lw=1, label="least squares")
    ax.set_ylim(3e-3, 3 * CAP)
    LR_TICKS = [0.01, 0.03, 0.1, 0.3, 1, 2]  # numbers, on both sides of 1
    ax.set_xticks(LR_TICKS, [f"{t:g}" for t in LR_TICKS])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("learning rate η")
    ax.set_ylabel(f"loss after {MAX_STEPS} steps / loss at the start")
    ax.set_title(
        f"SGD's loss grows above $2/\\lambda_\\mathrm{{max}}$ = {threshold:.3f};"
        f"\nAdam's falls at every learning rate ({MAX_STEPS} steps each)"
    )
    ax.legend(loc="upper left")
    plots.show(
        fig,
        name="00_learning_rate",
        alt=(
            f"SGD's loss falls for every learning rate below the threshold 2/λ_max = {threshold:.3f} and grows for "
            f"every one above it, while Adam's falls at every learning rate. "
            f"Log-log plot of the loss after {MAX_STEPS} steps divided by the loss at the start, against the learning rate "
            f"from 0.01 to 2. SGD reaches the least-squares level (ratio {best_ratio:.4f}) for learning rates from "
            f"{near_best.min():.2f} to {near_best.max():.2f}, and its ratio rises above 1 from {sgd_up.min():.2f} on, "
            f"next to the dotted threshold. Adam's ratio stays at most "
            f"{ratio['Adam'].max():.2f} over the whole range."
        ),
    )
    print(f"Hessian eigenvalues: λ_min = {lam_min:.3f}, λ_max = {lam_max:.3f}, so 2/λ_max = {threshold:.3f}.")
    print(
        f"SGD: the loss went down for every learning rate up to {sgd_down.max():.3f} and up for every one from "
        f"{sgd_up.min():.3f} on (no grid point lies in between): the threshold is "
        f"{'between them, as computed' if sgd_down.max() < threshold <= sgd_up.min() else 'NOT between them'}."
    )
    print(
        f"SGD came within 1% of the least-squares loss for learning rates {near_best.min():.3f} to "
        f"{near_best.max():.3f}; the theory's fastest rate is 2/(λ_min + λ_max) = {2 / (lam_min + lam_max):.3f}."
    )
    print(
        f"Adam: the largest loss ratio over the grid is {ratio['Adam'].max():.3f} (at learning rate "
        f"{lr_grid[int(np.argmax(ratio['Adam']))]:.3f}); at learning rate {lr_grid[0]:.2f} it moved w by only "
        f"{moved['Adam'][0]:.3f} in {MAX_STEPS} steps (SGD: {moved['SGD'][0]:.3f}), at most {MAX_STEPS} × {lr_grid[0]:.2f} = "
        f"{MAX_STEPS * lr_grid[0]:.1f} if every step is about η."
    )

# %% [markdown]
# The threshold came from the data alone, before any training, and the measured boundary falls right on
# it (the printout names the two grid points around it). Below it, larger learning rates are faster:
# only a range of learning rates reaches the least-squares loss in 40 steps, and the theory's best rate,
# $2/(\lambda_\text{min} + \lambda_\text{max})$, where both directions shrink equally fast, lies in it.
# Adam's loss fell for every learning rate on the grid, but a step of about $\eta$ is slow when $\eta$ is
# small: at the smallest learning rate it moved $w$ far less than SGD did. Real networks are not
# quadratic bowls, but the lesson carries over: too small a learning rate wastes steps, too large a one
# makes the loss grow.

# %% [markdown]
# ## 8. Let's review
#
# * A **tensor** is PyTorch's array: `shape`, `dtype` (float32 by default, float64 from numpy), `@`, `.T`,
#   reductions with `dim=`; `.item()` and `.numpy()` (after `.detach()`) take you back to Python and numpy.
# * **Broadcasting** lines shapes up from the right and stretches axes of size 1; `None` indexing adds an
#   axis, `keepdim=True` keeps a reduced one. On a square matrix, a forgotten `keepdim` gives wrong numbers
#   without an error.
# * **Autograd** records operations on tensors with `requires_grad=True`: `backward()` adds
#   $\partial L/\partial x$ to `x.grad` (gradients accumulate), `torch.autograd.grad` returns them without
#   touching `.grad`, `jacobian` gives the full matrix of derivatives of a vector function.
# * An **`nn.Module`** registers the layers stored as attributes; `nn.Linear(d_in, d_out)` has a weight of
#   shape `(d_out, d_in)` and computes $xW^\top + b$, so the course's $W^Q$ is `linear.weight.T`.
# * A **training step**: zero the gradients, compute the loss, `backward()`, `step()`. With plain gradient
#   descent on a quadratic loss, learning rates above $2/\lambda_\text{max}$ diverge; you measured it.
#
# Next lesson: a recurrent network, built in numpy, and what autograd's `jacobian` reveals about its memory.

# %% [markdown]
# ## 9. Check your understanding
#
# In each answer cell, replace `None` with your answer and delete the line `raise NotImplementedError()`.
# Multiple-choice answers are a letter in quotes, e.g. `"a"`; numeric answers are a number. The cell
# after each answer checks the format only; the answer itself is graded when your notebook is graded.
#
# **Q1 (1 point).** `x` has shape `(2, 5, 1)` and `y` has shape `(5, 3)`. How many numbers does `x + y` hold?

# %% quiz="quiz-broadcast-size" key="(torch.zeros(2, 5, 1) + torch.zeros(5, 3)).numel()" points=1
q1_answer = 30

# %% [markdown]
# **Q2 (1 point).** How many trainable numbers (weights and biases) does `nn.Linear(64, 16)` hold?

# %% quiz="quiz-linear-params" key="sum(p.numel() for p in nn.Linear(64, 16).parameters())" points=1
q2_answer = 1040

# %% [markdown]
# **Q3 (1 point).** `x = torch.tensor(3.0, requires_grad=True)`. You run `(x ** 2).backward()` and then,
# without resetting anything, `(x ** 2).backward()` once more. What number does `x.grad` hold now?

# %% quiz="quiz-grad-accumulates" key="12" points=1

# %% [markdown]
# **Q4 (1 point).** `layer = nn.Linear(3, 5)` and `x` has shape `(8, 3)`. Which statement is true?
#
# * **a** — `layer.weight` has shape `(3, 5)` and `layer(x)` equals `x @ layer.weight + layer.bias`
# * **b** — `layer.weight` has shape `(5, 3)` and `layer(x)` equals `x @ layer.weight.T + layer.bias`
# * **c** — `layer.weight` has shape `(5, 3)` and `layer(x)` equals `layer.weight @ x + layer.bias`
# * **d** — `layer.weight` has shape `(3, 5)` and `layer(x)` has shape `(8, 3)`

# %% quiz="quiz-linear-weight" choices="abcd" key="b" points=1

# %% [markdown]
# **Q5 (1 point).** With SGD on the toy problem, what happens when the learning rate is a little above
# $2/\lambda_\text{max}$?
#
# * **a** — training converges faster than at any smaller learning rate, since every step is bigger
# * **b** — the loss still falls, only more slowly
# * **c** — along the steepest direction the size of the error is multiplied by $|1 - \eta\lambda_\text{max}| > 1$ at every step, so after a few steps the loss grows from step to step and the line swings further each time
# * **d** — PyTorch stops with an error as soon as a step makes the loss larger

# %% quiz="quiz-diverging-lr" choices="abcd" key="c" points=1

# %% [markdown]
# **Q6 — free answer (3 points, graded by hand).** A classmate's training loop is
#
# ```python
# for step in range(100):
#     loss = F.mse_loss(model(x), y)
#     loss.backward()
#     optimizer.step()
# ```
#
# Its loss falls for a few steps, then climbs back up and keeps swinging instead of settling. In 3–5
# sentences: what is missing, what happens to the gradients and to the steps because of it, and where can
# the fix go in the loop (name two places that work)?
#
# <details><summary>Before you hand in</summary>
#
# * Did you name the one call that is missing?
# * Did you say what `backward()` does to `.grad` when nothing resets it, and what that does to the size and
#   direction of the steps?
# * Did you give two places in the loop where the fix works, and make sure neither sits between `backward()`
#   and `step()`?
# </details>

# %% [markdown] manual="quiz-free-training-loop" points=3
# ### BEGIN SOLUTION
# *Model answer.* The loop never resets the gradients (`optimizer.zero_grad()` is missing).
# `backward()` adds to `.grad`, so at step $k$ each parameter's `.grad` holds the sum of the gradients of
# all $k$ steps so far, and every update uses that stale sum. While the gradients point the same way the
# steps grow; once the parameters pass the minimum, the old gradients in the sum still push them onwards,
# like a momentum that never fades, so they overshoot and swing back and forth around the minimum instead of
# settling (with a large learning rate the swings can grow until the loss diverges). The fix is `optimizer.zero_grad()` before `loss.backward()` in every step: at the
# start of the loop body, or at its end after `optimizer.step()` (then the first step starts from the
# fresh model's empty gradients).
#
# *Rubric (3 points).* 1 point: names the missing reset of the gradients (`zero_grad`, or setting every
# `.grad` to zero/None). 1 point: explains that `backward()` accumulates, so the steps use the sum of
# past gradients (stale steps that keep pushing past the minimum: overshooting, swinging or diverging). 1 point: two valid places, at the
# start of each step (before `backward`) or right after `step()`; a place between `backward()` and `step()`
# is wrong and earns no point. No point for restating the question.
# ### END SOLUTION
