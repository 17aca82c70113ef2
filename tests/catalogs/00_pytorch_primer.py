"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 00."""

from catalog_tools import quiz

SQ = "def sq_distances(A, B):\n"
MSE = "def mse_and_grad(w, X, y):\n"
NET = "class TwoLayerNet(nn.Module):\n    def __init__(self, d_in, d_hidden, d_out):\n        super().__init__()\n"
STEP = "def train_step(model, optimizer, x, y):\n"


def net(init, forward):
    """A TwoLayerNet variant from the body of __init__ (after super().__init__()) and of forward."""
    return NET + init + "    def forward(self, x):\n" + forward


LAYERS = "        self.hidden = nn.Linear(d_in, d_hidden)\n        self.out = nn.Linear(d_hidden, d_out)\n"

EXERCISES = {
    "sq-distances": {
        "wrong": {
            "distances, not squared": (
                SQ + "    return ((A[:, None] - B[None]) ** 2).sum(-1).sqrt()",
                "leave out the square root",
            ),
            "transposed": (SQ + "    return ((B[:, None] - A[None]) ** 2).sum(-1)", "transposed"),
            "square of the summed difference": (
                SQ + "    return (A[:, None] - B[None]).sum(-1) ** 2",
                "summed before squaring",
            ),
            "absolute differences": (SQ + "    return (A[:, None] - B[None]).abs().sum(-1)", "absolute differences"),
            "dot products": (SQ + "    return A @ B.T", "dot products"),
            "no broadcasting (rows paired up)": (SQ + "    return ((A - B) ** 2).sum(-1)", None),
            "numpy result": (
                SQ + "    a, b = A.numpy(), B.numpy()\n    return ((a[:, None] - b[None]) ** 2).sum(-1)",
                "torch tensor",
            ),
            "always float32": (SQ + "    return ((A[:, None].float() - B[None].float()) ** 2).sum(-1)", "float64"),
        },
        "right": {
            "loops": SQ + "    return torch.stack([torch.stack([((a - b) ** 2).sum() for b in B]) for a in A])",
            "expansion |a|² - 2a·b + |b|²": SQ
            + "    return (A * A).sum(1)[:, None] - 2 * A @ B.T + (B * B).sum(1)[None]",
            "cdist squared": SQ + "    return torch.cdist(A, B) ** 2",
            "einsum": SQ + "    d = A.unsqueeze(1) - B.unsqueeze(0)\n    return torch.einsum('nmk,nmk->nm', d, d)",
        },
    },
    "mse-and-grad": {
        "wrong": {
            "sum, not mean": (
                MSE + "    w = w.detach().clone().requires_grad_(True)\n    loss = ((X @ w - y) ** 2).sum()\n"
                "    loss.backward()\n    return loss.item(), w.grad",
                "summed, not averaged",
            ),
            "no square": (
                MSE + "    w = w.detach().clone().requires_grad_(True)\n    loss = (X @ w - y).mean()\n"
                "    loss.backward()\n    return loss.item(), w.grad",
                "not squared",
            ),
            "swapped return order": (
                MSE + "    w = w.detach().clone().requires_grad_(True)\n    loss = ((X @ w - y) ** 2).mean()\n"
                "    loss.backward()\n    return w.grad, loss.item()",
                "return order is swapped",
            ),
            "changes the caller's w (accumulates)": (
                MSE + "    w.requires_grad_(True)\n    loss = ((X @ w - y) ** 2).mean()\n"
                "    loss.backward()\n    return loss.item(), w.grad",
                "caller's w",
            ),
            "loss as a tensor": (
                MSE + "    w = w.detach().clone().requires_grad_(True)\n    loss = ((X @ w - y) ** 2).mean()\n"
                "    loss.backward()\n    return loss, w.grad",
                "Python float",
            ),
            "gradient uphill sign": (
                MSE + "    return ((X @ w - y) ** 2).mean().item(), -2 / len(y) * X.T @ (X @ w - y)",
                "wrong sign",
            ),
            "the formula by hand, not autograd (issue 22)": (
                MSE + "    r = X @ w - y\n    return (r ** 2).mean().item(), 2 / len(y) * X.T @ r",
                "autograd did not compute it",
            ),
            "finite differences, not autograd": (
                MSE + "    f = lambda v: ((X.double() @ v - y.double()) ** 2).mean()\n    w = w.double()\n"
                "    eye = torch.eye(len(w), dtype=w.dtype) * 1e-6\n"
                "    return f(w).item(), torch.stack([(f(w + e) - f(w - e)) / 2e-6 for e in eye])",
                "autograd did not compute it",
            ),
            "finite differences under torch.func.vmap, not autograd": (
                MSE + "    f = lambda v: ((X.double() @ v - y.double()) ** 2).mean()\n"
                "    w, E = w.double(), 1e-3 * torch.eye(len(w), dtype=torch.float64)\n"
                "    return f(w).item(), torch.func.vmap(lambda e: (f(w + e) - f(w - e)) / 2e-3)(E)",
                "autograd did not compute it",
            ),
            "loss from a copy that requires grad, gradient by hand (issue 32)": (
                MSE + "    v = w.detach().clone().requires_grad_(True)\n    loss = ((X @ v - y) ** 2).mean()\n"
                "    return loss.item(), 2 / len(y) * X.T @ (X @ w - y)",
                "no backward pass ran",
            ),
            "gradient of the wrong variable": (
                MSE + "    X = X.clone().requires_grad_(True)\n    loss = ((X @ w - y) ** 2).mean()\n"
                "    loss.backward()\n    return loss.item(), X.grad",
                None,
            ),
        },
        "right": {
            "torch.autograd.grad": MSE + "    w = w.detach().requires_grad_(True)\n    loss = F.mse_loss(X @ w, y)\n"
            "    (grad,) = torch.autograd.grad(loss, [w])\n    return loss.item(), grad",
            "torch.func.grad": MSE + "    f = lambda v: ((X @ v - y) ** 2).mean()\n"
            "    return f(w).item(), torch.func.grad(f)(w)",
            "jacobian of a scalar": MSE + "    f = lambda v: ((X @ v - y) ** 2).mean()\n"
            "    return f(w).item(), torch.autograd.functional.jacobian(f, w)",
            "torch.func.jacfwd (forward mode)": MSE + "    f = lambda v: ((X @ v - y) ** 2).mean()\n"
            "    return f(w).item(), torch.func.jacfwd(f)(w)",
            "forward-mode dual numbers, one direction at a time": MSE
            + "    import torch.autograd.forward_ad as fwAD\n    grad = []\n"
            "    for e in torch.eye(len(w), dtype=w.dtype):\n        with fwAD.dual_level():\n"
            "            loss = ((X @ fwAD.make_dual(w, e) - y) ** 2).mean()\n"
            "            grad.append(fwAD.unpack_dual(loss).tangent)\n"
            "    return ((X @ w - y) ** 2).mean().item(), torch.stack(grad)",
            "jacobian, forward-mode strategy": MSE + "    f = lambda v: ((X @ v - y) ** 2).mean()\n"
            "    J = torch.autograd.functional.jacobian(f, w, vectorize=True, strategy='forward-mode')\n"
            "    return f(w).item(), J",
            "torch.func.jacrev and vjp": MSE + "    f = lambda v: ((X @ v - y) ** 2).mean()\n"
            "    loss, pullback = torch.func.vjp(f, w)\n"
            "    return loss.item(), 0.5 * (pullback(torch.ones_like(loss))[0] + torch.func.jacrev(f)(w))",
            "in place, in float64, nn.Parameter": MSE
            + "    p = torch.nn.Parameter(w.double())\n    r = X.double() @ p\n    r.sub_(y.double())\n"
            "    loss = r.pow_(2).mean()\n    loss.backward()\n    return loss.item(), p.grad.to(w.dtype)",
            "float() and a list": MSE
            + "    w = w.clone().requires_grad_()\n    loss = ((X @ w - y) ** 2).sum() / len(y)\n"
            "    loss.backward()\n    return [float(loss), w.grad.detach()]",
        },
    },
    "two-layer-net": {
        "wrong": {
            "no ReLU": (net(LAYERS, "        return self.out(self.hidden(x))"), "ReLU is missing"),
            "ReLU on the output too": (
                net(LAYERS, "        return torch.relu(self.out(torch.relu(self.hidden(x))))"),
                "output too",
            ),
            "tanh": (net(LAYERS, "        return self.out(torch.tanh(self.hidden(x)))"), "tanh"),
            "sigmoid": (net(LAYERS, "        return self.out(torch.sigmoid(self.hidden(x)))"), "sigmoid"),
            "no biases": (
                net(
                    "        self.hidden = nn.Linear(d_in, d_hidden, bias=False)\n"
                    "        self.out = nn.Linear(d_hidden, d_out, bias=False)\n",
                    "        return self.out(torch.relu(self.hidden(x)))",
                ),
                "parameters",
            ),
            "layer sizes swapped": (
                net(
                    "        self.hidden = nn.Linear(d_hidden, d_in)\n        self.out = nn.Linear(d_out, d_hidden)\n",
                    "        return self.out(torch.relu(self.hidden(x)))",
                ),
                "stores its weight as (d_out, d_in)",
            ),
            "layers made in forward": (
                net("        pass\n", "        return nn.Linear(5, 2)(torch.relu(nn.Linear(3, 5)(x)))"),
                "needs an attribute `hidden`",
            ),
            "extra layer": (
                net(
                    LAYERS + "        self.extra = nn.Linear(d_out, d_out)\n",
                    "        return self.extra(self.out(torch.relu(self.hidden(x))))",
                ),
                "parameters",
            ),
            "gradients cut (numpy inside)": (
                net(
                    LAYERS,
                    "        h = torch.from_numpy(np.maximum(self.hidden(x).detach().numpy(), 0))\n"
                    "        return self.out(h)",
                ),
                "no gradient reached",
            ),
        },
        "right": {
            "F.relu": net(LAYERS, "        return self.out(F.relu(self.hidden(x)))"),
            "clamp": net(LAYERS, "        h = self.hidden(x)\n        return self.out(h.clamp(min=0))"),
            "F.linear by hand": net(
                LAYERS,
                "        h = x @ self.hidden.weight.T + self.hidden.bias\n"
                "        h = torch.maximum(h, torch.zeros_like(h))\n"
                "        return F.linear(h, self.out.weight, self.out.bias)",
            ),
            "nn.ReLU module": net(
                LAYERS + "        self.act = nn.ReLU()\n", "        return self.out(self.act(self.hidden(x)))"
            ),
        },
    },
    "train-step": {
        "wrong": {
            "no zero_grad": (
                STEP + "    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
                "    return loss.item()",
                "zero the gradients",
            ),
            "no step": (
                STEP + "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y)\n    loss.backward()\n"
                "    return loss.item()",
                "did not change",
            ),
            "zero_grad between backward and step": (
                STEP + "    loss = F.mse_loss(model(x), y)\n    loss.backward()\n"
                "    optimizer.zero_grad()\n    optimizer.step()\n    return loss.item()",
                "did not change",
            ),
            "step before backward": (
                STEP + "    optimizer.zero_grad()\n    optimizer.step()\n    loss = F.mse_loss(model(x), y)\n"
                "    loss.backward()\n    return loss.item()",
                "did not change",
            ),
            "loss after the step": (
                STEP + "    optimizer.zero_grad()\n    F.mse_loss(model(x), y).backward()\n    optimizer.step()\n"
                "    return F.mse_loss(model(x), y).item()",
                "AFTER the step",
            ),
            "sum, not mean": (
                STEP + "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y, reduction='sum')\n"
                "    loss.backward()\n    optimizer.step()\n    return loss.item()",
                "summed, not averaged",
            ),
            "returns the tensor": (
                STEP + "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y)\n    loss.backward()\n"
                "    optimizer.step()\n    return loss",
                "Python float",
            ),
            "gradient ascent": (
                STEP + "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y)\n    (-loss).backward()\n"
                "    optimizer.step()\n    return loss.item()",
                "uphill",
            ),
        },
        "right": {
            "zero_grad at the end": STEP
            + "    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n"
            "    optimizer.zero_grad()\n    return loss.item()",
            "model.zero_grad and a formula": STEP + "    model.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n    optimizer.step()\n    return float(loss)",
            "grads set to None by hand": STEP + "    for p in model.parameters():\n        p.grad = None\n"
            "    loss = F.mse_loss(y, model(x))\n    loss.backward()\n    optimizer.step()\n"
            "    return loss.detach().item()",
            "zero_grad(set_to_none=False)": STEP
            + "    optimizer.zero_grad(set_to_none=False)\n    loss = F.mse_loss(model(x), y)\n"
            "    loss.backward()\n    optimizer.step()\n    return loss.item()",
        },
    },
    "quiz-broadcast-size": quiz("q1_answer", right=[30, 30.0], wrong=[10, 15, 25, "30"]),
    "quiz-linear-params": quiz("q2_answer", right=[1040], wrong=[1024, 1088, 80]),
    "quiz-grad-accumulates": quiz("q3_answer", right=[12, 12.0], wrong=[6, 36, 0]),
    "quiz-linear-weight": quiz("q4_answer", right=["b", "B", " b"], wrong=["a", "c", "d"]),
    "quiz-diverging-lr": quiz("q5_answer", right=["c", "C"], wrong=["a", "b", "d"]),
}

# Test-only checks, run in the solved kernel after the notebook: what the prose says about the lesson's measurements.
NOT_MEASURED = {
    "0.1": "the learning rate of the toy fit and the explorer's start value (a setting)",
    "0.3": "a learning rate the explorer question suggests trying",
    "0.01": "a learning rate the explorer question suggests trying, and the grid's smallest",
    "40": "the explorer's and the experiment's number of steps (a setting)",
    "25": "the number of learning rates on the experiment's grid (a setting)",
}
