"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 03, and CLAIMS: test-only checks that what the
lesson's prose, model answers and rubrics say about its own measurements is what the notebook measured."""

from catalog_tools import quiz

S = "def scaled_scores(Q, K):\n"

EXERCISES = {
    "scaled-scores": {
        "wrong": {
            "no scaling": (S + "    return Q @ np.swapaxes(K, -1, -2)", "not scaled"),
            "divides by d_k": (S + "    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]", "divided by d_k"),
            "divides by the number of keys": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / K.shape[-2]",
                "number of keys",
            ),
            "divides by sqrt of the number of keys": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])",
                "√T_k",
            ),
            "transposes the wrong operand (K Qᵀ)": (
                S + "    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])",
                "swapped",
            ),
            "K.T on a batch": (S + "    return Q @ K.T / np.sqrt(Q.shape[-1])", "K.T reverses ALL axes"),
            "d_k from the first axis": (S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(len(Q))", None),
            "d_k from a global": (S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(8)", None),
            "divides by d_k / 2": (S + "    return Q @ np.swapaxes(K, -1, -2) / (Q.shape[-1] / 2)", None),
            "returns None": (S + "    Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])", "return"),
            "d_k from a notebook variable that does not exist": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
                "d_k",
            ),
            "divides by sqrt of the number of queries": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2])",
                "√T_q",
            ),
            "swaps the first and last axes": (
                S + "    return Q @ np.swapaxes(K, 0, -1) / np.sqrt(Q.shape[-1])",
                "swap only the last two",
            ),
            "loops over the first axis only": (
                S + "    return np.stack([q @ k.T for q, k in zip(Q, K)]) / np.sqrt(Q.shape[-1])",
                "shape",
            ),
            "√d_k rounded to a whole number (math.isqrt)": (
                S + "    import math\n    return Q @ np.swapaxes(K, -1, -2) / math.isqrt(Q.shape[-1])",
                "rounded",
            ),
            "divides by the length of each query": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.linalg.norm(Q, axis=-1, keepdims=True)",
                None,
            ),
            "normalises by the scores' own standard deviation": (
                S + "    s = Q @ np.swapaxes(K, -1, -2)\n    return s / s.std()",
                None,
            ),
            "float32 returned for float64 inputs": (
                S + "    return np.float32(Q) @ np.swapaxes(np.float32(K), -1, -2) / np.float32(np.sqrt(Q.shape[-1]))",
                "returned float32, not float64",
            ),
            "torch float32 tensor returned for float64 inputs": (
                S + "    q, k = torch.tensor(Q, dtype=torch.float32), torch.tensor(K, dtype=torch.float32)\n"
                "    return q @ k.mT / q.shape[-1] ** 0.5",
                "returned float32, not float64",
            ),
            "scales only the first batch entry": (
                S + "    out = Q @ np.swapaxes(K, -1, -2)\n    out[..., :1, :] /= np.sqrt(Q.shape[-1])\n    return out",
                None,
            ),
        },
        "right": {
            "einsum": S + "    return np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])",
            "multiply by d_k ** -0.5": S + "    return (Q * Q.shape[-1] ** -0.5) @ K.swapaxes(-1, -2)",
            "scale queries and keys by d_k ** -0.25": S + "    s = Q.shape[-1] ** -0.25\n"
            "    return (s * Q) @ np.moveaxis(s * K, -1, -2)",
            "loop over flattened batch": S
            + "    d = Q.shape[-1]\n    q2, k2 = Q.reshape(-1, *Q.shape[-2:]), K.reshape(-1, *K.shape[-2:])\n"
            "    out = np.stack([q @ k.T for q, k in zip(q2, k2)]) / np.sqrt(d)\n"
            "    return out.reshape(*Q.shape[:-1], K.shape[-2])",
            "torch inside": S + "    q, k = torch.as_tensor(Q), torch.as_tensor(K)\n"
            "    return (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).numpy()",
            "torch tensor returned (float64)": S + "    q, k = torch.from_numpy(Q), torch.from_numpy(K)\n"
            "    return q @ k.mT / q.shape[-1] ** 0.5",
            "changes Q in place (whether inputs change is not graded)": S + "    Q /= np.sqrt(Q.shape[-1])\n"
            "    return Q @ np.swapaxes(K, -1, -2)",
            "K.T when there are no batch axes": S
            + "    return (Q @ K.T if Q.ndim == 2 else Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])",
            "float32 inside": S + "    q, k = np.float32(Q), np.float32(K)\n"
            "    return (q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))).astype(np.float64)",
        },
    },
    "quiz-variance-dk64": quiz("q1_answer", right=[64, 64.0], wrong=[8, 1, 4096, "64"]),
    "quiz-variance-sigma2": quiz("q2_answer", right=[256, 256.0], wrong=[64, 16, 32, 4]),
    "quiz-why-sqrt": quiz("q3_answer", right=["b", "B", " b "], wrong=["a", "c", "d"]),
    "quiz-max-gradient": quiz("q4_answer", right=[0.25, 1 / 4], wrong=[1, 0.5, 0]),
    "quiz-scaled-std": quiz("q5_answer", right=[1, 1.0], wrong=[16, 256, 0.0625]),
    "quiz-saturation": quiz("q6_answer", right=["c", "C"], wrong=["a", "b", "d"]),
    "quiz-t5-fold": quiz("q7_answer", right=["b", " B"], wrong=["a", "c", "d"]),
}


NOT_MEASURED = {
    "2022": "the year of the μP paper",
    "0.5": "settings: the correlation ρ, the standard deviation σ, the noise of the training task",
    "20": "an example score difference (section 3)",
    "64": "the explorer's number of queries (a setting); d_k = 64 in the original Transformer",
    "100": "the explorer's histogram range, ±100 (a setting)",
    "1024": "the largest d_k of the lesson (a setting)",
    "0.95": "a threshold the prose defines (more than 0.95 of the weight)",
    "4000": "random pairs per point (a setting)",
    "200": "heads per d_k (a setting)",
    "16": "sizes of the set-up: entries of x, keys per head, d_model (settings)",
    "0.01": "a setting: the middle learning rate of section 6",
    "0.001": "a learning rate the student may try",
    "0.1": "a learning rate the student may try",
    "0.12": "a bound the prose states (asserted in CLAIMS: the scaled head at its best rate ends below it)",
    "0.75": "a bound the prose states (asserted in CLAIMS: the 1/d_k head at 0.003 ends above it)",
    "90": "a bound the prose states (asserted in CLAIMS: the accuracy of every run at d_k = 1024, rate 0.003)",
}
