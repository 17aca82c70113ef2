"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 04."""

from catalog_tools import quiz

SM = "def softmax(x, axis=-1):\n"
AT = "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
SCORES = "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
CA = "def causal_average(X):\n    T = X.shape[-2]\n"
TRIL = "    A = np.tril(np.ones((T, T)))\n"


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
                "keepdims=True, so that they broadcast",
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
            # third read
            "subtracts the mean": (
                SM
                + "    e = np.exp(x - x.mean(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)",
                "subtract the maximum",
            ),
            "max[..., None]: the last axis only": (
                SM + "    e = np.exp(x - x.max(axis=axis)[..., None])\n    return e / e.sum(axis=axis)[..., None]",
                "keepdims=True, so that they broadcast",
            ),
            "float32 inside, for float64 logits too": (
                SM + "    x = np.asarray(x, np.float32)\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                "    return e / e.sum(axis=axis, keepdims=True)",
                "(float64): off by",
            ),
            "log-sum-exp without the shift (float32 cancellation)": (
                SM + "    return np.exp(x - np.logaddexp.reduce(x, axis=axis, keepdims=True))",
                "float32: off by",
            ),
            # issue 32: an in-place shift gives the right numbers but overwrites the caller's scores
            "shifts x in place (x -= max)": (
                SM + "    x -= x.max(axis=axis, keepdims=True)\n    e = np.exp(x)\n"
                "    return e / e.sum(axis=axis, keepdims=True)",
                "changed the array it was given",
            ),
            "logits clipped to ±80": (
                SM + "    e = np.exp(np.clip(x, -80, 80))\n    return e / e.sum(axis=axis, keepdims=True)",
                None,
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
            # issue 22: a large negative number in place of -inf passed every check; allowed scores below it catch it
            "-1e9 fill, fully masked rows zeroed": (
                attention(
                    "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n"
                    "        scores = np.where(m, scores, -1e9)\n"
                    "        w = np.where(m.any(-1, keepdims=True), softmax(scores), 0.0)\n"
                    "    else:\n        w = softmax(scores)\n    return w @ V, w"
                ),
                "whatever the allowed scores are",
            ),
            "-1e30 fill, fully masked rows zeroed": (
                attention(
                    "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n"
                    "        scores = np.where(m, scores, -1e30)\n"
                    "        w = np.where(m.any(-1, keepdims=True), softmax(scores), 0.0)\n"
                    "    else:\n        w = softmax(scores)\n    return w @ V, w"
                ),
                "whatever the allowed scores are",
            ),
            # third read: float32 cannot hold the -1e100 scores; the message says so instead of "fully masked"
            "computes in float32": (
                AT
                + "    Q, K, V = (np.asarray(a, np.float32) for a in (Q, K, V))\n"
                + SCORES
                + "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n"
                "        empty = ~m.any(-1, keepdims=True)\n"
                "        scores = np.where(empty, 0.0, np.where(m, scores, -np.inf))\n"
                "    w = softmax(scores)\n    w = w if mask is None else np.where(empty, 0.0, w)\n    return w @ V, w",
                "compute in float64",
            ),
            "K.T (breaks batches)": (
                attention(
                    "    if mask is not None:\n        m = np.broadcast_to(mask, scores.shape)\n"
                    "        empty = ~m.any(-1, keepdims=True)\n"
                    "        scores = np.where(empty, 0.0, np.where(m, scores, -np.inf))\n"
                    "    w = softmax(scores)\n    w = w if mask is None else np.where(empty, 0.0, w)\n    return w @ V, w",
                    scores="    scores = Q @ K.T / np.sqrt(Q.shape[-1])\n",
                ),
                "Swap only the last two axes of K",
            ),
            "-1e30 fill, then zero the blocked and the empty rows": (
                attention(
                    "    w = softmax(scores if mask is None else np.where(mask, scores, -1e30))\n"
                    "    if mask is not None:\n        w = np.where(np.broadcast_to(mask, w.shape).any(-1, keepdims=True), w, 0.0)\n"
                    "        w = np.where(mask, w, 0.0)\n"
                    "    return w @ V, w"
                ),
                "allowed scores of -1e100",
            ),
        },
        "right": {
            "finfo.min fill, then zero the blocked and the empty rows": attention(
                "    w = softmax(scores if mask is None else np.where(mask, scores, np.finfo(scores.dtype).min))\n"
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
            "additive -inf mask, then NaN rows replaced by 0": attention(
                "    if mask is not None:\n        scores = scores + np.where(mask, 0.0, -np.inf)\n"
                "    w = np.nan_to_num(softmax(scores))\n    return w @ V, w"
            ),
            "blocked in place, own 0/0 guard": attention(
                "    if mask is not None:\n        scores[~np.broadcast_to(mask, scores.shape)] = -np.inf\n"
                "    m = scores.max(-1, keepdims=True)\n    e = np.exp(scores - np.where(np.isfinite(m), m, 0.0))\n"
                "    total = e.sum(-1, keepdims=True)\n"
                "    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)\n    return w @ V, w"
            ),
            "PyTorch's output, weights by hand": attention(
                "    t = lambda a: None if a is None else torch.as_tensor(np.ascontiguousarray(a))\n"
                "    out = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask)).numpy()\n"
                "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
                "    return out, np.nan_to_num(softmax(scores))"
            ),
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
    "causal-average": {
        "wrong": {
            "mean of all tokens (the future included)": (
                CA + "    A = np.full((T, T), 1 / T)\n    return A @ X, A",
                "the future must be left out",
            ),
            "average of the future (upper triangle)": (
                CA + "    A = np.triu(np.ones((T, T)))\n    A = A / A.sum(-1, keepdims=True)\n    return A @ X, A",
                "averages the future",
            ),
            "sum of the past, not its mean": (CA + TRIL + "    return A @ X, A", "divide by t + 1"),
            "divided by T": (CA + TRIL + "    A = A / T\n    return A @ X, A", "divided by T"),
            "leaves out the token itself": (
                CA
                + "    A = np.tril(np.ones((T, T)), k=-1)\n    A = A / A.sum(-1, keepdims=True)\n    return A @ X, A",
                "include the token itself",
            ),
            "columns normalised, not rows": (
                CA + TRIL + "    A = A / A.sum(0, keepdims=True)\n    return A @ X, A",
                "normalise each row",
            ),
            "returns (weights, output)": (
                CA + TRIL + "    A = A / A.sum(-1, keepdims=True)\n    return A, A @ X",
                "wrong way round",
            ),
            # third read
            "T read from X.shape[0] (one sequence only)": (
                "def causal_average(X):\n    T = X.shape[0]\n"
                "    A = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]\n    return A @ X, A",
                "T is X.shape[-2]",
            ),
            "divides row t by t (off by one)": (
                CA + "    A = np.tril(np.ones((T, T))) / np.maximum(np.arange(T), 1)[:, None]\n    return A @ X, A",
                None,
            ),
            "returns the mask as the weights": (
                CA + TRIL + "    return (A / A.sum(-1, keepdims=True)) @ X, A",
                "the weights on the worked example",
            ),
            "cumsum along axis 0 (one sequence only)": (
                CA + "    out = np.cumsum(X, axis=0) / np.arange(1, T + 1)[:, None]\n"
                "    A = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]\n    return out, A",
                None,
            ),
        },
        "right": {
            "lower-triangular matrix product": CA
            + TRIL
            + "    A = A / A.sum(axis=-1, keepdims=True)\n    return A @ X, A",
            "cumsum over the token axis": CA + "    n = np.arange(1, T + 1)\n"
            "    return np.cumsum(X, axis=-2) / n[:, None], np.tril(np.ones((T, T))) / n[:, None]",
            "torch, returning tensors": CA + "    A = torch.tril(torch.ones(T, T, dtype=torch.float64))\n"
            "    A = A / A.sum(-1, keepdim=True)\n    return A @ torch.as_tensor(np.asarray(X, dtype=float)), A",
            "float32 weights": CA
            + "    A = (np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]).astype(np.float32)\n"
            "    return A @ X, A",
            "a loop": CA + "    A = np.zeros((T, T))\n    for t in range(T):\n        A[t, : t + 1] = 1 / (t + 1)\n"
            "    return np.einsum('ts,...sd->...td', A, X), A",
            "torch, zero queries, is_causal (batched weights)": CA
            + "    x = torch.as_tensor(np.asarray(X, dtype=float))\n"
            "    eye = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-1], T)\n"
            "    f = lambda v: F.scaled_dot_product_attention(torch.zeros_like(x), x, v, is_causal=True).numpy()\n"
            "    return f(x), f(eye)",
            # one mistake costs points once: your attention with zero queries, next to a broken attention from 4.2
            # (the checks call causal_average with PyTorch's attention in its place). Leaves the broken attention
            # in the kernel, so it stays the last variant of this exercise.
            "your attention with Q = 0, next to a broken attention from 4.2": AT
            + "    w = softmax(Q @ np.swapaxes(K, -1, -2))\n    return w @ V, w\n"
            + CA
            + "    return scaled_dot_product_attention(np.zeros_like(X), X, X, np.tril(np.ones((T, T), dtype=bool)))",
        },
    },
    "quiz-softmax-axis": quiz("q1_answer", right=["b", "B", " b "], wrong=["a", "c", "d"]),
    "quiz-causal-count": quiz("q2_answer", right=[21, 21.0], wrong=[36, 15, 30, "21"]),
    "quiz-equal-logits": quiz("q3_answer", right=[0.25, 1 / 4], wrong=[1, 0, 1000, 1 / 3]),
    "quiz-temperature": quiz("q4_answer", right=["c", "C"], wrong=["a", "b", "d"]),
    "quiz-max-entropy": quiz("q5_answer", right=[3, 3.0], wrong=[8, 2.0794415416798357, 1]),
    "quiz-mask-convention": quiz("q6_answer", right=["c"], wrong=["a", "b", "d"]),
}

# Run in the kernel that executed the solution notebook (tests/test_lessons.py): what the prose, the model answer
# and the rubric say about this lesson's own measurements. Only values the notebook stored are read (the catalog's
# variants may have replaced the functions by then).

NOT_MEASURED = {
    "1000": "the logits the lesson tries (±1000), a setting",
    "2.5": "the PyTorch release since which F.scaled_dot_product_attention returns zeros for fully masked rows",
    "512": "a setting of d_k",
    "0.1": "a setting of the temperature in the explorer",
    "10000": "the largest logit scale s of the experiment, a setting",
    "40": "the number of significant digits of the exact reference, a setting",
}
