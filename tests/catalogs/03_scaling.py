"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 03."""

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
}
