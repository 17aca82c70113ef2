"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 04."""

from catalog_tools import quiz

SM = "def softmax(x, axis=-1):\n"
AT = "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
SCORES = "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"


def attention(body, scores=SCORES):
    return AT + scores + body


EXERCISES = {
    "softmax-stable": {
        "wrong": {
            "formula as written (overflows)": (
                SM + "    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)",
                "subtract the maximum",
            ),
            "ignores the axis argument": (
                SM + "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)",
                "use the `axis` argument",
            ),
            "normalises the whole array": (SM + "    e = np.exp(x - x.max())\n    return e / e.sum()", "whole array"),
            "max without keepdims": (
                SM + "    e = np.exp(x - x.max(axis=axis))\n    return e / e.sum(axis=axis, keepdims=True)",
                None,
            ),
            "global maximum": (
                SM + "    e = np.exp(x - x.max())\n    return e / e.sum(axis=axis, keepdims=True)",
                "subtract the maximum of each row",
            ),
            "subtracts the minimum": (
                SM + "    e = np.exp(x - x.min(axis=axis, keepdims=True))\n"
                "    return e / e.sum(axis=axis, keepdims=True)",
                "NaN or inf",
            ),
            "no exponential": (SM + "    return x / x.sum(axis=axis, keepdims=True)", None),
            "log-softmax": (
                SM + "    m = x.max(axis=axis, keepdims=True)\n"
                "    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))",
                None,
            ),
            "returns None": (
                SM + "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n    e / e.sum(axis=axis, keepdims=True)",
                "return",
            ),
        },
        "right": {
            "log-sum-exp": SM + "    m = x.max(axis=axis, keepdims=True)\n"
            "    return np.exp(x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True)))",
            "moveaxis and loop over rows": SM + "    y = np.moveaxis(np.asarray(x, dtype=float), axis, -1)\n"
            "    out = np.empty_like(y)\n"
            "    for idx in np.ndindex(y.shape[:-1]):\n"
            "        e = np.exp(y[idx] - y[idx].max())\n        out[idx] = e / e.sum()\n"
            "    return np.moveaxis(out, -1, axis)",
            "keeps float32": SM + "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
            "    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.asarray(x).dtype)",
            "torch inside": SM + "    t = torch.as_tensor(np.asarray(x, dtype=np.float64))\n"
            "    e = torch.exp(t - t.amax(dim=axis, keepdim=True))\n"
            "    return (e / e.sum(dim=axis, keepdim=True)).numpy()",
        },
    },
    "sdpa": {
        "wrong": {
            "no scaling": (
                attention(
                    "    if mask is not None:\n        mask = np.broadcast_to(mask, scores.shape)\n"
                    "        empty = ~mask.any(-1, keepdims=True)\n"
                    "        scores = np.where(empty, 0.0, np.where(mask, scores, -np.inf))\n"
                    "    w = softmax(scores)\n    w = w if mask is None else np.where(empty, 0.0, w)\n"
                    "    return w @ V, w",
                    scores="    scores = Q @ np.swapaxes(K, -1, -2)\n",
                ),
                "not scaled",
            ),
            "divides by d_k": (
                attention(
                    "    w = softmax(scores)\n    return w @ V, w",
                    scores="    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]\n",
                ),
                "divided by d_k",
            ),
            "softmax over the queries": (
                attention("    w = softmax(scores, axis=-2)\n    return w @ V, w"),
                "over the queries",
            ),
            "True means blocked": (
                attention(
                    "    if mask is not None:\n        mask = ~np.broadcast_to(mask, scores.shape)\n"
                    "        empty = ~mask.any(-1, keepdims=True)\n"
                    "        scores = np.where(empty, 0.0, np.where(mask, scores, -np.inf))\n"
                    "    w = softmax(scores)\n    w = w if mask is None else np.where(empty, 0.0, w)\n"
                    "    return w @ V, w"
                ),
                "blocked the True positions",
            ),
            "-1e9 instead of -inf (uniform fully masked row)": (
                attention(
                    "    if mask is not None:\n        scores = np.where(mask, scores, -1e9)\n"
                    "    w = softmax(scores)\n    return w @ V, w"
                ),
                "uniformly",
            ),
            "-inf without handling fully masked rows (NaN)": (
                attention(
                    "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
                    "    w = softmax(scores)\n    return w @ V, w"
                ),
                "fully masked row must give zero weights",
            ),
            "mask applied after the softmax": (
                attention(
                    "    w = softmax(scores)\n    if mask is not None:\n        w = w * mask\n    return w @ V, w"
                ),
                "without renormalising",
            ),
            "blocked scores set to 0": (
                attention(
                    "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n        empty = ~m.any(-1, keepdims=True)\n"
                    "        scores = scores * m\n"
                    "    w = softmax(scores)\n    w = w if mask is None else np.where(empty, 0.0, w)\n    return w @ V, w"
                ),
                "set to 0 instead of -inf",
            ),
            "returns (weights, output)": (attention("    w = softmax(scores)\n    return w, w @ V"), "wrong way round"),
            "returns only the output": (attention("    w = softmax(scores)\n    return w @ V"), "tuple"),
            "divides by √T_q (Q.shape[-2])": (
                attention(
                    "    w = softmax(scores)\n    return w @ V, w",
                    scores="    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2])\n",
                ),
                "√T_q",
            ),
            "averages the keys instead of the values": (
                attention("    w = softmax(scores)\n    return w @ K, w"),
                "not times K",
            ),
            "mask ignored": (attention("    w = softmax(scores)\n    return w @ V, w"), "mask was ignored"),
        },
        "right": {
            "-1e30 fill, then zero the empty rows": attention(
                "    w = softmax(scores if mask is None else np.where(mask, scores, -1e30))\n"
                "    if mask is not None:\n        w = np.where(np.broadcast_to(mask, w.shape).any(-1, keepdims=True), w, 0.0)\n"
                "        w = np.where(mask, w, 0.0)\n"
                "    return w @ V, w"
            ),
            "einsum": AT + "    s = np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])\n"
            "    if mask is not None:\n        m = np.broadcast_to(mask, s.shape)\n"
            "        ok = m.any(-1, keepdims=True)\n        s = np.where(m & ok, s, np.where(ok, -np.inf, 0.0))\n"
            "        w = softmax(s) * ok\n    else:\n        w = softmax(s)\n"
            "    return np.einsum('...qk,...kv->...qv', w, V), w",
            "torch inside": AT + "    q, k, v = (torch.as_tensor(a) for a in (Q, K, V))\n"
            "    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5\n"
            "    if mask is not None:\n        s = s.masked_fill(~torch.as_tensor(np.asarray(mask)), float('-inf'))\n"
            "    w = torch.softmax(s, dim=-1).nan_to_num(0.0)\n"
            "    return (w @ v).numpy(), w.numpy()",
            "-inf, then NaN rows replaced by 0": attention(
                "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
                "    w = np.nan_to_num(softmax(scores))\n    return w @ V, w"
            ),
            # one mistake costs points once: a broken softmax from exercise 4.1 does not cost points here
            # (the checks call scaled_dot_product_attention with a reference softmax). Leaves the broken
            # softmax in the kernel, so it stays the last variant of this exercise.
            "correct, next to a broken softmax from 4.1": SM
            + "    return np.exp(x) / np.exp(x).sum()\n"
            + attention(
                "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n"
                "        empty = ~m.any(-1, keepdims=True)\n"
                "        scores = np.where(empty, 0.0, np.where(m, scores, -np.inf))\n"
                "        return np.where(empty, 0.0, softmax(scores)) @ V, np.where(empty, 0.0, softmax(scores))\n"
                "    w = softmax(scores)\n    return w @ V, w"
            ),
        },
    },
    "quiz-softmax-axis": quiz("q1_answer", right=["b", "B", " b "], wrong=["a", "c", "d"]),
    "quiz-causal-count": quiz("q2_answer", right=[21, 21.0], wrong=[36, 15, 30, "21"]),
    "quiz-equal-logits": quiz("q3_answer", right=[0.25, 1 / 4], wrong=[1, 0, 1000, 1 / 3]),
    "quiz-temperature": quiz("q4_answer", right=["c", "C"], wrong=["a", "b", "d"]),
    "quiz-max-entropy": quiz("q5_answer", right=[3, 3.0], wrong=[8, 2.0794415416798357, 1]),
    "quiz-mask-convention": quiz("q6_answer", right=["c"], wrong=["a", "b", "d"]),
}
