"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 02, and CLAIMS: test-only checks that what the
lesson's prose, model answers and rubrics say about its own measurements is what the notebook measured."""

from catalog_tools import quiz

KL = "def kernel_lookup(q, K, V, sigma):\n"
SOFTMAX = "    w = np.exp(s - s.max())\n    w = w / w.sum()\n    return w @ V, w"
# A student whose dot_scores (exercise 2.1) returns cosine similarities, and whose later function calls it: that
# mistake is charged in 2.1 only, so the later function keeps its points. `uses_cosine_dot_scores(name)` rebinds
# the function just defined to see that wrong dot_scores, without changing the kernel's own.
COSINE_DOT_SCORES = (
    "import types as _types\n"
    "def _cosine_scores(q, K):\n"
    "    return (q @ K.T) / (np.linalg.norm(q, axis=-1, keepdims=True) * np.linalg.norm(K, axis=-1))\n"
)


def uses_cosine_dot_scores(name):
    return f"{name} = _types.FunctionType({name}.__code__, {{**globals(), 'dot_scores': _cosine_scores}}, '{name}')\n"


EXERCISES = {
    "dot-scores": {
        "wrong": {
            "cosine similarity": (
                "def dot_scores(q, K):\n    return (q @ K.T) / (np.linalg.norm(q, axis=-1, keepdims=True)"
                " * np.linalg.norm(K, axis=-1))",
                "cosine similarities",
            ),
            "K @ q (transposed for a batch)": (
                "def dot_scores(q, K):\n    return K @ q if q.ndim == 1 else (K @ q.T)",
                "transposed",
            ),
            "elementwise product, no sum": ("def dot_scores(q, K):\n    return q * K", "shape"),
            "sum over the wrong axis": ("def dot_scores(q, K):\n    return (q * K).sum(axis=0)", "shape"),
            "negative distance": (
                "def dot_scores(q, K):\n    return -np.linalg.norm(q[..., None, :] - K, axis=-1)",
                None,
            ),
            "only one query": ("def dot_scores(q, K):\n    return K @ q", None),
            "mean of the products instead of their sum": (
                "def dot_scores(q, K):\n    return (q @ K.T) / K.shape[1]",
                "divided by d",
            ),
            "uses the keys' global from the worked example": ("def dot_scores(q, K):\n    return q @ _K.T", None),
            "squeezes a single key's column away (shape (m,) instead of (m, 1))": (
                "def dot_scores(q, K):\n    return np.squeeze(q @ K.T)",
                "shape (3, 1)",
            ),
            "absolute value of the scores": ("def dot_scores(q, K):\n    return np.abs(q @ K.T)", None),
            "divides by the keys' lengths only": (
                "def dot_scores(q, K):\n    return q @ K.T / np.linalg.norm(K, axis=1)",
                None,
            ),
            "products summed for one query only (q * K)": (
                "def dot_scores(q, K):\n    return np.sum(q * K, axis=1)",
                "several, (m, d)",
            ),
        },
        "right": {
            "einsum": "def dot_scores(q, K):\n    return np.einsum('...d,nd->...n', q, K)",
            "loops": "def dot_scores(q, K):\n    rows = np.atleast_2d(q)\n"
            "    out = np.array([[sum(a * b for a, b in zip(r, k)) for k in K] for r in rows])\n"
            "    return out[0] if q.ndim == 1 else out",
            "float32": "def dot_scores(q, K):\n    return (np.float32(q) @ np.float32(K).T).astype(np.float64)",
            "torch": "def dot_scores(q, K):\n    return (torch.as_tensor(q) @ torch.as_tensor(K).T).numpy()",
            "tensordot": "def dot_scores(q, K):\n    return np.tensordot(q, K, axes=([-1], [1]))",
            "np.inner": "def dot_scores(q, K):\n    return np.inner(q, K)",
            "broadcast and sum": "def dot_scores(q, K):\n    return (q[..., None, :] * K).sum(-1)",
            "torch float32 tensor returned": "def dot_scores(q, K):\n"
            "    return torch.as_tensor(q, dtype=torch.float32) @ torch.as_tensor(K, dtype=torch.float32).T",
        },
    },
    "hard-lookup": {
        "wrong": {
            "argmin": ("def hard_lookup(q, K, V):\n    return V[np.argmin(K @ q)]", "largest score, not the smallest"),
            "returns the key": ("def hard_lookup(q, K, V):\n    return K[np.argmax(K @ q)]", "return the value row"),
            "returns the index": ("def hard_lookup(q, K, V):\n    return np.argmax(K @ q)", "not the index"),
            "returns the score": ("def hard_lookup(q, K, V):\n    return np.max(K @ q)", "not the index or the score"),
            "largest value instead of best key": ("def hard_lookup(q, K, V):\n    return V[np.argmax(V.sum(1))]", None),
            "cosine ranking": (
                "def hard_lookup(q, K, V):\n    return V[np.argmax(K @ q / np.linalg.norm(K, axis=1))]",
                None,
            ),
            "column of V instead of row": (
                "def hard_lookup(q, K, V):\n    return V[:, np.argmax(K @ q)]",
                "column i of V",
            ),
            "returns (value, index)": (
                "def hard_lookup(q, K, V):\n    i = np.argmax(K @ q)\n    return V[i], i",
                "not a pair",
            ),
            "returns (index, value)": (
                "def hard_lookup(q, K, V):\n    i = np.argmax(K @ q)\n    return i, V[i]",
                "not a pair",
            ),
            "largest |score|": ("def hard_lookup(q, K, V):\n    return V[np.argmax(np.abs(K @ q))]", None),
            "returns shape (1, d_v)": ("def hard_lookup(q, K, V):\n    return V[[np.argmax(K @ q)]]", "shape (4,)"),
            "the softmax blend instead of the best value": (
                "def hard_lookup(q, K, V):\n    w = np.exp(K @ q)\n    return w @ V / w.sum()",
                None,
            ),
        },
        "right": {
            "loop": "def hard_lookup(q, K, V):\n    best, best_score = 0, -np.inf\n    for i, k in enumerate(K):\n"
            "        if k @ q > best_score:\n            best, best_score = i, k @ q\n    return V[best]",
            "sorted": "def hard_lookup(q, K, V):\n    return V[np.argsort(K @ q)[-1]]",
            "with dot_scores": "def hard_lookup(q, K, V):\n    return V[int(np.argmax(dot_scores(q, K)))]",
            "with a cosine dot_scores (charged in 2.1 only)": COSINE_DOT_SCORES
            + "def hard_lookup(q, K, V):\n    return V[int(np.argmax(dot_scores(q, K)))]\n"
            + uses_cosine_dot_scores("hard_lookup"),
            "one-hot weights times V": "def hard_lookup(q, K, V):\n    s = K @ q\n    return (s == s.max()) @ V",
            "torch": "def hard_lookup(q, K, V):\n"
            "    return torch.as_tensor(V)[torch.argmax(torch.as_tensor(K) @ torch.as_tensor(q))]",
        },
    },
    "soft-lookup": {
        "wrong": {
            "not normalised": ("def soft_lookup(q, K, V):\n    w = np.exp(K @ q)\n    return w @ V, w", "sum to 1"),
            "scores over their sum": (
                "def soft_lookup(q, K, V):\n    s = K @ q\n    w = s / s.sum()\n    return w @ V, w",
                "exponentiate first",
            ),
            "blends the keys": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return w @ K, w",
                None,
            ),
            "exp of minus the scores": (
                "def soft_lookup(q, K, V):\n    w = np.exp(-K @ q) / np.exp(-K @ q).sum()\n    return w @ V, w",
                "exp(+score)",
            ),
            "uniform weights": (
                "def soft_lookup(q, K, V):\n    w = np.full(len(K), 1 / len(K))\n    return w @ V, w",
                "all equal",
            ),
            "unweighted sum": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return V.sum(0), w",
                None,
            ),
            "returns the weights first": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return w, w @ V",
                "wrong way round",
            ),
            "returns only the output": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return w @ V",
                "(output, weights)",
            ),
            "returns the raw scores as weights": (
                "def soft_lookup(q, K, V):\n    s = K @ q\n    w = np.exp(s) / np.exp(s).sum()\n    return w @ V, s",
                "sum to 1",
            ),
            "blends the keys (caught where d_v = d)": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n"
                "    return (w @ K if K.shape[1] == V.shape[1] else w @ V), w",
                "blend the values",
            ),
            "scores divided by √d (lesson 3's scaling, not asked here)": (
                "def soft_lookup(q, K, V):\n    s = K @ q / np.sqrt(len(q))\n    w = np.exp(s) / np.exp(s).sum()\n"
                "    return w @ V, w",
                "divided by √d",
            ),
            "weighted rows not summed (shape (n, d_v))": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return w[:, None] * V, w",
                "shape",
            ),
        },
        "right": {
            "max subtracted (stable)": "def soft_lookup(q, K, V):\n    s = K @ q\n    e = np.exp(s - s.max())\n"
            "    w = e / e.sum()\n    return w @ V, w",
            "loop": "def soft_lookup(q, K, V):\n    e = [np.exp(k @ q) for k in K]\n    w = np.array(e) / sum(e)\n"
            "    return sum(wi * v for wi, v in zip(w, V)), w",
            "einsum, float32": "def soft_lookup(q, K, V):\n    s = np.einsum('nd,d->n', K, q).astype(np.float32)\n"
            "    w = np.exp(s) / np.exp(s).sum()\n    return np.einsum('n,nv->v', w, V), w.astype(np.float64)",
            "torch": "def soft_lookup(q, K, V):\n    w = torch.softmax(torch.as_tensor(K) @ torch.as_tensor(q), 0)\n"
            "    return (w @ torch.as_tensor(V)).numpy(), w.numpy()",
            "returns a list": "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return [w @ V, w]",
            "with dot_scores": "def soft_lookup(q, K, V):\n    s = dot_scores(q, K)\n    w = np.exp(s) / np.sum(np.exp(s))\n"
            "    return V.T @ w, w",
            "with a cosine dot_scores (charged in 2.1 only)": COSINE_DOT_SCORES
            + "def soft_lookup(q, K, V):\n    s = dot_scores(q, K)\n    w = np.exp(s) / np.exp(s).sum()\n"
            "    return w @ V, w\n" + uses_cosine_dot_scores("soft_lookup"),
            "torch float32 tensors returned": "def soft_lookup(q, K, V):\n"
            "    t = lambda a: torch.as_tensor(a, dtype=torch.float32)\n"
            "    w = torch.softmax(t(K) @ t(q), 0)\n    return w @ t(V), w",
        },
    },
    "kernel-lookup": {
        "wrong": {
            "dot-product scores instead of the distance": (
                KL + "    s = K @ q / sigma**2\n" + SOFTMAX,
                "dot-product weights",
            ),
            "the 2 of 2σ² missing": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / sigma**2\n" + SOFTMAX,
                "2 is missing",
            ),
            "σ instead of σ²": (KL + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma)\n" + SOFTMAX, "not squared"),
            "distance not squared": (
                KL + "    s = -np.linalg.norm(q - K, axis=1) / (2 * sigma**2)\n" + SOFTMAX,
                "distance is not squared",
            ),
            "plus sign (far keys win)": (
                KL + "    s = np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)\n" + SOFTMAX,
                "sign",
            ),
            "not normalised": (
                KL + "    w = np.exp(-np.sum((q - K) ** 2, axis=1) / (2 * sigma**2))\n    return w @ V, w",
                "sum to 1",
            ),
            "exponentiates without subtracting the largest score (0 / 0 far from every key)": (
                KL + "    e = np.exp(-np.sum((q - K) ** 2, axis=1) / (2 * sigma**2))\n    w = e / e.sum()\n"
                "    return w @ V, w",
                "subtract the largest score",
            ),
            "returns (weights, output)": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)\n    w = np.exp(s - s.max())\n"
                "    w = w / w.sum()\n    return w, w @ V",
                "wrong way round",
            ),
            "blends the keys (caught where d_v = d)": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)\n    w = np.exp(s - s.max())\n"
                "    w = w / w.sum()\n    return (w @ K if K.shape == V.shape else w @ V), w",
                "blend the values",
            ),
            "bandwidth fixed at the worked example's σ = 3": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / 18\n" + SOFTMAX,
                None,
            ),
            "subtracts the smallest score (overflow far from every key)": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)\n    w = np.exp(s - s.min())\n"
                "    w = w / w.sum()\n    return w @ V, w",
                "overflows",
            ),
            "expanded square without the ½ on ‖k‖²": (
                KL + "    s = (K @ q - np.sum(K * K, axis=1)) / sigma**2\n" + SOFTMAX,
                None,
            ),
            "(2σ)² in place of 2σ²": (
                KL + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma) ** 2\n" + SOFTMAX,
                None,
            ),
            "NaN weights replaced by uniform ones": (
                KL + "    e = np.exp(-np.sum((q - K) ** 2, axis=1) / (2 * sigma**2))\n"
                "    w = np.nan_to_num(e / e.sum(), nan=1 / len(K))\n    return w @ V, w",
                None,
            ),
        },
        "right": {
            "solution with np.linalg.norm": KL
            + "    s = -np.linalg.norm(q - K, axis=1) ** 2 / (2 * sigma**2)\n"
            + SOFTMAX,
            "torch cdist and softmax": KL
            + "    d2 = torch.cdist(torch.as_tensor(q)[None], torch.as_tensor(K))[0] ** 2\n"
            "    w = torch.softmax(-d2 / (2 * sigma**2), dim=-1)\n    return (w @ torch.as_tensor(V)).numpy(), w.numpy()",
            "expanded square, q·k − ‖k‖²/2 (the ‖q‖² term dropped)": KL
            + "    s = (K @ q - 0.5 * np.sum(K * K, axis=1)) / sigma**2\n"
            + SOFTMAX,
            "loop with math.exp": KL + "    import math\n"
            "    s = [-sum((a - b) ** 2 for a, b in zip(q, k)) / (2 * sigma**2) for k in K]\n"
            "    e = [math.exp(x - max(s)) for x in s]\n    w = np.array(e) / sum(e)\n"
            "    return sum(wi * v for wi, v in zip(w, V)), w",
            "float32 inside": KL + "    s = (-np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)).astype(np.float32)\n"
            "    w = np.exp(s - s.max())\n    w = (w / w.sum()).astype(np.float64)\n    return w @ V, w",
            "float32 throughout, nothing cast back": KL + "    q, K, V = np.float32(q), np.float32(K), np.float32(V)\n"
            "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2)\n" + SOFTMAX,
            "expanded square through dot_scores": KL
            + "    s = (dot_scores(q, K) - 0.5 * np.sum(K**2, axis=1)) / sigma**2\n"
            + SOFTMAX,
            "with a cosine dot_scores (charged in 2.1 only)": COSINE_DOT_SCORES
            + KL
            + "    s = (dot_scores(q, K) - 0.5 * np.sum(K**2, axis=1)) / sigma**2\n"
            + SOFTMAX
            + "\n"
            + uses_cosine_dot_scores("kernel_lookup"),
            "Gaussian density's constant kept": KL
            + "    s = -np.sum((q - K) ** 2, axis=1) / (2 * sigma**2) - np.log(np.sqrt(2 * np.pi) * sigma)\n"
            + SOFTMAX,
        },
    },
    "quiz-dot-value": quiz("q1_answer", right=[32, 32.0], wrong=[21, 4, "32"]),
    "quiz-dot-angle": quiz("q2_answer", right=[3, 3.0, 2 * 3 * 0.5000001], wrong=[6, 5.196, 0]),
    "quiz-keys-role": quiz("q3_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-equal-weights": quiz("q4_answer", right=[1 / 11, 0.0909], wrong=[11, 0.1, 1]),
    "quiz-why-soft": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-length-bias": quiz("q6_answer", right=["a", " A"], wrong=["b", "c", "d"]),
    "quiz-kernel-temperature": quiz("q7_answer", right=["c", "C"], wrong=["a", "b", "d"]),
}


NOT_MEASURED = {
    "0.25": "a value of c the table uses (a setting)",
    "100": "part of a video's title, 'Top 100 viral moments'",
    "1964": "the year of Nadaraya's and Watson's papers",
    "2020": "the year of the QK-norm paper (Henry et al.)",
    "2023": "the year of the ViT-22B paper (Dehghani et al.)",
    "90": "a threshold the table defines (at least 90 % of the weight)",
    "60": "the angle given in Q2",
}
