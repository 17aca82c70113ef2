"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 02."""

from catalog_tools import quiz

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
        },
        "right": {
            "einsum": "def dot_scores(q, K):\n    return np.einsum('...d,nd->...n', q, K)",
            "loops": "def dot_scores(q, K):\n    rows = np.atleast_2d(q)\n"
            "    out = np.array([[sum(a * b for a, b in zip(r, k)) for k in K] for r in rows])\n"
            "    return out[0] if q.ndim == 1 else out",
            "float32": "def dot_scores(q, K):\n    return (np.float32(q) @ np.float32(K).T).astype(np.float64)",
            "torch": "def dot_scores(q, K):\n    return (torch.as_tensor(q) @ torch.as_tensor(K).T).numpy()",
            "tensordot": "def dot_scores(q, K):\n    return np.tensordot(q, K, axes=([-1], [1]))",
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
        },
        "right": {
            "loop": "def hard_lookup(q, K, V):\n    best, best_score = 0, -np.inf\n    for i, k in enumerate(K):\n"
            "        if k @ q > best_score:\n            best, best_score = i, k @ q\n    return V[best]",
            "sorted": "def hard_lookup(q, K, V):\n    return V[np.argsort(K @ q)[-1]]",
            "with dot_scores": "def hard_lookup(q, K, V):\n    return V[int(np.argmax(dot_scores(q, K)))]",
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
                "wrong order",
            ),
            "returns only the output": (
                "def soft_lookup(q, K, V):\n    w = np.exp(K @ q) / np.exp(K @ q).sum()\n    return w @ V",
                "pair (output, weights)",
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
        },
    },
    "quiz-dot-value": quiz("q1_answer", right=[32, 32.0], wrong=[21, 4, "32"]),
    "quiz-dot-angle": quiz("q2_answer", right=[3, 3.0, 2 * 3 * 0.5000001], wrong=[6, 5.196, 0]),
    "quiz-keys-role": quiz("q3_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-equal-weights": quiz("q4_answer", right=[1 / 11, 0.0909], wrong=[11, 0.1, 1]),
    "quiz-why-soft": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-length-bias": quiz("q6_answer", right=["a", " A"], wrong=["b", "c", "d"]),
}
