"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 05."""

from catalog_tools import quiz

_SA = "def self_attention(X, W_Q, W_K, W_V):\n    Q, K, V = project_qkv(X, W_Q, W_K, W_V)\n"
_MOD_INIT = (
    "class SelfAttention(nn.Module):\n"
    "    def __init__(self, d_model, d_k, d_v=None):\n"
    "        super().__init__()\n"
    "        d_v = d_k if d_v is None else d_v\n"
    "        self.d_k = d_k\n"
    "        self.W_q = nn.Linear(d_model, d_k, bias=False)\n"
    "        self.W_k = nn.Linear(d_model, d_k, bias=False)\n"
    "        self.W_v = nn.Linear(d_model, d_v, bias=False)\n"
)


def _module(forward_body, init=_MOD_INIT):
    return init + "    def forward(self, x):\n        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)\n" + forward_body


EXERCISES = {
    "project-qkv": {
        "wrong": {
            "Q and K swapped": ("def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_K, X @ W_Q, X @ W_V", "swapped"),
            "K uses W_Q": ("def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_Q, X @ W_Q, X @ W_V", "K uses W_Q"),
            "one matrix for all three": (
                "def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_Q, X @ W_Q, X @ W_Q",
                "the values use W_V",
            ),
            "weights transposed": (
                "def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_Q.T, X @ W_K.T, X @ W_V.T",
                "with no transpose",
            ),
            "only one sequence": (
                "def project_qkv(X, W_Q, W_K, W_V):\n"
                "    f = lambda W: np.einsum('td,dk->tk', X, W)\n    return f(W_Q), f(W_K), f(W_V)",
                "any number of leading batch axes",
            ),
            "returns None": ("def project_qkv(X, W_Q, W_K, W_V):\n    Q, K, V = X @ W_Q, X @ W_K, X @ W_V", None),
            "returns (V, K, Q)": (
                "def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_V, X @ W_K, X @ W_Q",
                "order (Q, K, V)",
            ),
        },
        "right": {
            "einsum": "def project_qkv(X, W_Q, W_K, W_V):\n"
            "    f = lambda W: np.einsum('...td,dk->...tk', X, W)\n    return f(W_Q), f(W_K), f(W_V)",
            "torch inside": "def project_qkv(X, W_Q, W_K, W_V):\n    t = torch.as_tensor\n"
            "    return tuple((t(X) @ t(W)).numpy() for W in (W_Q, W_K, W_V))",
            "float32 inside": "def project_qkv(X, W_Q, W_K, W_V):\n    f = lambda a: np.asarray(a, np.float32)\n"
            "    return tuple((f(X) @ f(W)).astype(np.float64) for W in (W_Q, W_K, W_V))",
            "np.dot": "def project_qkv(X, W_Q, W_K, W_V):\n    return tuple(np.dot(X, W) for W in (W_Q, W_K, W_V))",
            "np.matmul": "def project_qkv(X, W_Q, W_K, W_V):\n    return np.matmul(X, W_Q), np.matmul(X, W_K), np.matmul(X, W_V)",
        },
    },
    "self-attention": {
        "wrong": {
            "no scaling": (_SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2))\n    return w @ V, w", "not scaled"),
            "divides by d_k": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / Q.shape[-1])\n    return w @ V, w",
                "divided by d_k instead",
            ),
            "divides by sqrt(d_model)": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1]))\n    return w @ V, w",
                "sqrt(d_model)",
            ),
            "softmax over the queries": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-2)\n"
                "    return w @ V, w",
                "softmax runs over the queries",
            ),
            "weights returned transposed": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n"
                "    return w @ V, np.swapaxes(w, -1, -2)",
                "weights are transposed",
            ),
            "K Q^T instead of Q K^T": (
                _SA + "    w = softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1]))\n    return w @ V, w",
                "K Q^T",
            ),
            "naive softmax overflows": (
                _SA + "    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n"
                "    w = e / e.sum(axis=-1, keepdims=True)\n    return w @ V, w",
                "large scores",
            ),
            "the notebook's global d_k": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k))\n    return w @ V, w",
                "notebook's variable d_k",
            ),
            "returns (weights, output)": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n    return w, w @ V",
                "wrong way round",
            ),
            "averages the keys instead of the values": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n    return w @ K, w",
                "not times K",
            ),
            # issue 23: permutation-equivariance is checked in the hidden tests; a result cached by shape breaks it
            "result cached by the input's shape": (
                "_cache = {}\n"
                + _SA.replace("    Q, K, V", "    if X.shape in _cache:\n        return _cache[X.shape]\n    Q, K, V")
                + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n"
                "    _cache[X.shape] = (w @ V, w)\n    return w @ V, w",
                "another order",
            ),
            # third read: a transpose of every axis breaks batches; the message names it instead of a numpy traceback
            "K.T (reverses the batch axis too)": (
                _SA + "    w = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))\n    return w @ V, w",
                "K.T reverses all of them",
            ),
            # the worked example has T = 3 tokens, the notebook's d_k = 3 too: the message names both
            "divides by sqrt(T) (Q.shape[-2])": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2]))\n    return w @ V, w",
                "the number of tokens T",
            ),
            # issue 32: with d_v = 1 in the worked example this was told "the scores are not scaled"
            "divides by sqrt(d_v) (V.shape[-1])": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1]))\n    return w @ V, w",
                "divided by sqrt(d_v), the width of the values",
            ),
            "output uses weights.T": (
                _SA + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n"
                "    return np.swapaxes(w, -1, -2) @ V, w",
                "output on the worked example",
            ),
        },
        "right": {
            "einsum + own stable softmax": _SA
            + "    s = np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(K.shape[-1])\n"
            "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
            "    w = e / e.sum(axis=-1, keepdims=True)\n"
            "    return np.einsum('...qk,...kv->...qv', w, V), w",
            "torch inside": _SA + "    Q, K, V = map(torch.as_tensor, (Q, K, V))\n"
            "    w = torch.softmax(Q @ K.transpose(-1, -2) / Q.shape[-1] ** 0.5, dim=-1)\n"
            "    return (w @ V).numpy(), w.numpy()",
            "float32 inside": _SA + "    Q, K, V = (np.asarray(a, np.float32) for a in (Q, K, V))\n"
            "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1])))\n"
            "    return (w @ V).astype(np.float64), w.astype(np.float64)",
            "own stable softmax with matmul and a power": _SA
            + "    s = np.matmul(Q, np.swapaxes(K, -1, -2)) * Q.shape[-1] ** -0.5\n"
            "    e = np.exp(s - s.max(-1, keepdims=True))\n    w = e / e.sum(-1, keepdims=True)\n"
            "    return np.matmul(w, V), w",
            "scale the queries first": _SA + "    w = softmax((Q / np.sqrt(Q.shape[-1])) @ np.swapaxes(K, -1, -2))\n"
            "    return w @ V, w",
            # one mistake costs points once: a broken project_qkv from exercise 5.1 does not cost points here
            # (the checks call self_attention with a reference project_qkv). Leaves the broken project_qkv
            # in the kernel, so it stays the last variant of this exercise.
            "correct, next to a broken project_qkv from 5.1": "def project_qkv(X, W_Q, W_K, W_V):\n    return X @ W_K, X @ W_Q, X @ W_Q\n"
            + _SA
            + "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))\n    return w @ V, w",
        },
    },
    "self-attention-module": {
        "wrong": {
            "no scaling": (
                _module("        w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)\n        return w @ v, w\n"),
                "not scaled",
            ),
            "divides by d_k": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k, dim=-1)\n        return w @ v, w\n"
                ),
                "divided by d_k instead",
            ),
            "divides by sqrt(d_model)": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)\n"
                    "        return w @ v, w\n"
                ),
                "sqrt(d_model)",
            ),
            "softmax over dim -2": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-2)\n"
                    "        return w @ v, w\n"
                ),
                "softmax runs over",
            ),
            "projections with bias": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                    "        return w @ v, w\n",
                    init=_MOD_INIT.replace("bias=False", "bias=True"),
                ),
                "must have no bias",
            ),
            "scores detached": (
                _module(
                    "        s = (q @ k.transpose(-2, -1)).detach() / self.d_k ** 0.5\n"
                    "        w = torch.softmax(s, dim=-1)\n        return w @ v, w\n"
                ),
                "no gradient reaches",
            ),
            "values not projected": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                    "        return w @ x, w\n"
                ),
                "shape",
            ),
            "d_v=None not handled": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                    "        return w @ v, w\n",
                    init=_MOD_INIT.replace("        d_v = d_k if d_v is None else d_v\n", ""),
                ),
                "d_v=None (the default) must mean d_v = d_k",
            ),
            "d_v defaults to d_model": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                    "        return w @ v, w\n",
                    init=_MOD_INIT.replace("d_v = d_k if d_v is None", "d_v = d_model if d_v is None"),
                ),
                "d_v = d_k",
            ),
            "the notebook's global d_k": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / d_k ** 0.5, dim=-1)\n        return w @ v, w\n"
                ),
                "notebook's variable d_k",
            ),
            "returns (weights, output)": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                    "        return w, w @ v\n"
                ),
                "wrong way round",
            ),
            "batched input only (transpose(1, 2))": (
                _module(
                    "        w = torch.softmax(q @ k.transpose(1, 2) / self.d_k ** 0.5, dim=-1)\n        return w @ v, w\n"
                ),
                "k.transpose(-2, -1), with or without a batch axis",
            ),
            "k.T (reverses the batch axis too)": (
                _module("        w = torch.softmax(q @ k.T / self.d_k ** 0.5, dim=-1)\n        return w @ v, w\n"),
                "k.T reverses all",
            ),
            "divides by sqrt(T)": (
                _module("        w = torch.softmax(q @ k.mT / q.shape[-2] ** 0.5, dim=-1)\n        return w @ v, w\n"),
                "the number of tokens T",
            ),
            "softmax over dim=1 (the queries, for a batch)": (
                _module("        w = torch.softmax(q @ k.mT / self.d_k ** 0.5, dim=1)\n        return w @ v, w\n"),
                "softmax runs over the queries",
            ),
            "divides by sqrt(d_v) (v.shape[-1])": (
                _module("        w = torch.softmax(q @ k.mT / v.shape[-1] ** 0.5, dim=-1)\n        return w @ v, w\n"),
                "divided by sqrt(d_v), the width of the values",
            ),
            "scores computed in numpy (no gradient)": (
                _module(
                    "        s = torch.from_numpy(q.detach().numpy() @ np.swapaxes(k.detach().numpy(), -1, -2))\n"
                    "        w = torch.softmax(s / self.d_k ** 0.5, dim=-1)\n        return w @ v, w\n"
                ),
                "no gradient reaches",
            ),
        },
        "right": {
            "einsum": _module(
                "        s = torch.einsum('...qd,...kd->...qk', q, k) / math.sqrt(k.shape[-1])\n"
                "        w = s.softmax(dim=-1)\n        return torch.einsum('...qk,...kv->...qv', w, v), w\n"
            ).replace("class SelfAttention", "import math\nclass SelfAttention"),
            "torch's scaled_dot_product_attention for the output": _module(
                "        w = torch.softmax(q @ k.transpose(-2, -1) / self.d_k ** 0.5, dim=-1)\n"
                "        return torch.nn.functional.scaled_dot_product_attention(q, k, v), w\n"
            ),
            "d_v or d_k, and F.softmax": _module(
                "        w = torch.nn.functional.softmax(q @ k.mT / self.d_k ** 0.5, dim=-1)\n        return w @ v, w\n",
                init=_MOD_INIT.replace("d_v = d_k if d_v is None else d_v", "d_v = d_v or d_k"),
            ),
            "computes in float64": _module(
                "        q, k, v = q.double(), k.double(), v.double()\n"
                "        w = torch.softmax(q @ k.mT / self.d_k ** 0.5, dim=-1)\n        return w @ v, w\n"
            ),
            "d_k read from the queries": _module(
                "        w = torch.softmax(q @ k.mT / q.size(-1) ** 0.5, dim=-1)\n        return w @ v, w\n"
            ),
            "scale stored as a buffer": _module(
                "        w = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)\n        return w @ v, w\n",
                init=_MOD_INIT + "        self.register_buffer('scale', torch.tensor(d_k ** -0.5))\n",
            ),
        },
    },
    "quiz-wq-params": quiz("q1_answer", right=[32768, 32768.0], wrong=[512, 64, 98304]),
    "quiz-score-entries": quiz("q2_answer", right=[100], wrong=[640, 5120, 10]),
    "quiz-why-separate": quiz("q3_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-linear-shape": quiz("q4_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-scale": quiz("q5_answer", right=["c", " c "], wrong=["a", "b", "d"]),
    "quiz-which-matrix": quiz("q6_answer", right=["c"], wrong=["a", "b", "d"]),
}

# Run in the kernel that executed the solution notebook (tests/test_lessons.py): what the prose, the model answer
# and the rubric say about this lesson's own measurements. Only values the notebook stored are read (the catalog's
# variants may have replaced the functions by then).

NOT_MEASURED = {
    "80": "the number of training steps, a setting",
    "128": "the batch size, a setting",
    "1000": "the number of test sequences, a setting",
    "2021": "the year of Elhage et al.'s paper that named the QK and OV circuits",
}
