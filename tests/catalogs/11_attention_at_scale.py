"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 11."""

from catalog_tools import quiz

UP = "def online_softmax_update(m, l, s):\n    s = np.asarray(s, dtype=float)\n"
NEW_MAX = "    m_new = np.maximum(m, s.max(axis=-1))\n"
SHIFT = "    shift = np.where(np.isneginf(m_new), 0.0, m_new)\n"


def update(l_new, new_max=NEW_MAX, shift=SHIFT, tail="    return m_new, l_new\n"):
    return UP + new_max + shift + f"    l_new = {l_new}\n" + tail


RIGHT_L = "l * np.exp(m - shift) + np.exp(s - shift[..., None]).sum(axis=-1)"

TILED = """def tiled_attention(Q, K, V, block_size, causal=False):
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    out = np.empty(Q.shape[:-1] + V.shape[-1:])
    for i0 in range(0, T_q, block_size):
        q = Q[..., i0:i0 + block_size, :] / {scale}
        rows = np.arange(i0, i0 + q.shape[-2])
        m = np.full(q.shape[:-1], -np.inf)
        l = np.zeros(q.shape[:-1])
        O = np.zeros(q.shape[:-1] + V.shape[-1:])
        for j0 in {key_range}:
            if causal and {skip}:
                break
            k, v = K[..., j0:{key_end}, :], V[..., j0:{key_end}, :]
            s = q @ np.swapaxes(k, -1, -2)
            if causal and j0 + s.shape[-1] - 1 > rows[0]:
                cols = np.arange(j0, j0 + s.shape[-1])
                s = np.where({mask}, s, -np.inf)
            m_new = {new_max}
            l = {l_update}
            O = {o_update}
            m = m_new
        out[..., i0:i0 + block_size, :] = O / l[..., None]
    return out
"""
TILED_PARTS = dict(
    scale="np.sqrt(d_k)",
    key_range="range(0, T_k, block_size)",
    skip="j0 > rows[-1]",
    key_end="j0 + block_size",
    mask="cols[None, :] <= rows[:, None]",
    new_max="np.maximum(m, s.max(axis=-1))",
    l_update="l * np.exp(m - m_new) + np.exp(s - m_new[..., None]).sum(axis=-1)",
    o_update="O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v",
)


def tiled(**changes):
    return TILED.format(**(TILED_PARTS | changes))


GQA = """def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):
    *batch, T, _ = X.shape
    d_k = W_Q.shape[-1] // n_heads
    group = n_heads // n_kv_heads
    def split(M, heads):
        return np.swapaxes(M.reshape(*batch, T, heads, d_k), -2, -3)
    Q = split(X @ W_Q, n_heads)
    K = {k_heads}
    V = {v_heads}
    S = Q @ np.swapaxes(K, -1, -2) / {scale}
    if {causal}:
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    heads = softmax(S, axis=-1) @ V
    return {merge}
"""
GQA_PARTS = dict(
    k_heads="np.repeat(split(X @ W_K, n_kv_heads), group, axis=-3)",
    v_heads="np.repeat(split(X @ W_V, n_kv_heads), group, axis=-3)",
    scale="np.sqrt(d_k)",
    causal="causal",
    merge="np.swapaxes(heads, -2, -3).reshape(*batch, T, n_heads * d_k) @ W_O",
)
TILE_KV = "np.tile(split(X @ W_{}, n_kv_heads), (1,) * (X.ndim - 2) + (group, 1, 1))"


def gqa(**changes):
    return GQA.format(**(GQA_PARTS | changes))


EXERCISES = {
    "online-softmax-update": {
        "wrong": {
            "running sum not rescaled when the maximum grows": (
                update("l + np.exp(s - shift[..., None]).sum(axis=-1)"),
                "not rescaled",
            ),
            "rescaled the wrong way round": (
                update(
                    "np.where(np.isneginf(m), 0.0, l * np.exp(shift - m)) + np.exp(s - shift[..., None]).sum(axis=-1)"
                ),
                "wrong way round",
            ),
            "new scores shifted by the old maximum": (
                update(
                    "l * np.exp(m - shift) + np.exp(s - np.where(np.isneginf(m), shift, m)[..., None]).sum(axis=-1)"
                ),
                "shifted by the old maximum",
            ),
            "new maximum ignores the old one": (
                update(RIGHT_L, new_max="    m_new = s.max(axis=-1)\n"),
                "ignores the old one",
            ),
            "no guard for rows that saw only -inf (NaN)": (
                update("l * np.exp(m - m_new) + np.exp(s - m_new[..., None]).sum(axis=-1)", shift=""),
                "keep l = 0",
            ),
            "changes m in place": (
                update(RIGHT_L, tail="    m[...] = m_new\n    return m, l_new\n"),
                "must not change in place",
            ),
            "no shift at all (overflows)": (update("l + np.exp(s).sum(axis=-1)"), None),
            "returns only the sum": (update(RIGHT_L, tail="    return l_new\n"), "tuple"),
        },
        "right": {
            "log-sum-exp with np.logaddexp": (
                "def online_softmax_update(m, l, s):\n"
                "    s = np.asarray(s, dtype=float)\n"
                "    m_new = np.maximum(m, s.max(axis=-1))\n"
                "    with np.errstate(divide='ignore', invalid='ignore'):\n"
                "        block_lse = np.logaddexp.reduce(s, axis=-1)\n"
                "        total = np.logaddexp(m + np.log(l), block_lse)\n"
                "        l_new = np.where(np.isneginf(m_new), 0.0, np.exp(total - m_new))\n"
                "    return m_new, l_new\n"
            ),
            "loop over the rows with Python floats": (
                "def online_softmax_update(m, l, s):\n"
                "    s = np.asarray(s, dtype=float)\n"
                "    m_flat, l_flat = np.asarray(m, dtype=float).ravel(), np.asarray(l, dtype=float).ravel()\n"
                "    rows = s.reshape(-1, s.shape[-1])\n"
                "    m_out, l_out = np.empty(len(rows)), np.empty(len(rows))\n"
                "    for r, row in enumerate(rows):\n"
                "        mr, lr = float(m_flat[r]), float(l_flat[r])\n"
                "        for z in row:\n"
                "            if z == -np.inf:\n"
                "                continue\n"
                "            if z > mr:\n"
                "                lr = lr * math.exp(mr - z) + 1.0 if mr != -np.inf else 1.0\n"
                "                mr = z\n"
                "            else:\n"
                "                lr += math.exp(z - mr)\n"
                "        m_out[r], l_out[r] = mr, lr\n"
                "    return m_out.reshape(np.shape(m)), l_out.reshape(np.shape(l))\n"
            ),
            "torch inside": (
                "def online_softmax_update(m, l, s):\n"
                "    m, l, s = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (m, l, s))\n"
                "    m_new = torch.maximum(m, s.amax(dim=-1))\n"
                "    shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)\n"
                "    l_new = l * torch.exp(m - shift) + torch.exp(s - shift[..., None]).sum(dim=-1)\n"
                "    return m_new.numpy(), l_new.numpy()\n"
            ),
            "rescale factor with np.where, no shifted copy": (
                "def online_softmax_update(m, l, s):\n"
                "    s = np.asarray(s, dtype=float)\n"
                "    m_new = np.maximum(m, s.max(axis=-1))\n"
                "    seen = np.isfinite(m_new)\n"
                "    with np.errstate(invalid='ignore'):\n"
                "        factor = np.where(seen, np.exp(m - m_new), 1.0)\n"
                "        terms = np.where(seen[..., None], np.exp(s - m_new[..., None]), 0.0)\n"
                "    return m_new, l * factor + terms.sum(axis=-1)\n"
            ),
        },
    },
    "tiled-attention": {
        "wrong": {
            "running sum not rescaled when the maximum grows": (
                tiled(l_update="l + np.exp(s - m_new[..., None]).sum(axis=-1)"),
                "running sum is not rescaled",
            ),
            "output accumulator not rescaled": (
                tiled(o_update="O + np.exp(s - m_new[..., None]) @ v"),
                "output accumulator is not rescaled",
            ),
            "tile boundary off by one: each key block loses its last key": (
                tiled(key_end="j0 + block_size - 1"),
                "loses its last key",
            ),
            "tile boundary off by one: the last, shorter key block is dropped": (
                tiled(key_range="range(0, T_k - block_size + 1, block_size)"),
                "last, shorter key block",
            ),
            "causal: the diagonal itself is masked (j < i)": (
                tiled(mask="cols[None, :] < rows[:, None]"),
                "keep the diagonal",
            ),
            "causal: no mask inside the diagonal tiles": (
                tiled(mask="np.ones((len(rows), len(cols)), dtype=bool)"),
                "nothing is masked inside the diagonal",
            ),
            "causal: upper triangle kept inside the diagonal tiles": (
                tiled(mask="cols[None, :] >= rows[:, None]"),
                "upper triangle is kept",
            ),
            "causal: the diagonal tiles are skipped": (tiled(skip="j0 >= i0"), "keep the diagonal"),
            "no scaling by sqrt(d_k)": (tiled(scale="1.0"), "not scaled"),
            "no running maximum (fixed shift 0: overflows)": (
                tiled(new_max="np.zeros_like(m)", l_update="l + np.exp(s).sum(axis=-1)", o_update="O + np.exp(s) @ v"),
                "running maximum",
            ),
            "plain attention: the whole score matrix at once": (
                "def tiled_attention(Q, K, V, block_size, causal=False):\n"
                "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
                "    if causal:\n"
                "        S = np.where(np.tril(np.ones(S.shape[-2:], dtype=bool)), S, -np.inf)\n"
                "    A = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                "    return A / A.sum(axis=-1, keepdims=True) @ V\n",
                "never build the full score matrix",
            ),
            "returns (output, None)": (
                tiled().replace("    return out\n", "    return out, None\n"),
                "only the output",
            ),
        },
        "right": {
            "the reference solution's structure, inline update": tiled(),
            "keys in blocks, all queries at once": (
                "def tiled_attention(Q, K, V, block_size, causal=False):\n"
                "    T_q, T_k = Q.shape[-2], K.shape[-2]\n"
                "    q = Q / np.sqrt(Q.shape[-1])\n"
                "    m = np.full(Q.shape[:-1], -np.inf)\n"
                "    l = np.zeros(Q.shape[:-1])\n"
                "    O = np.zeros(Q.shape[:-1] + V.shape[-1:])\n"
                "    rows = np.arange(T_q)[:, None]\n"
                "    for j0 in range(0, T_k, block_size):\n"
                "        s = q @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2)\n"
                "        if causal:\n"
                "            s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows, s, -np.inf)\n"
                "        m_new, l = online_softmax_update(m, l, s)\n"
                "        with np.errstate(invalid='ignore'):\n"
                "            factor = np.where(np.isneginf(m_new), 0.0, np.exp(m - m_new))\n"
                "            p = np.where(np.isneginf(m_new)[..., None], 0.0, np.exp(s - m_new[..., None]))\n"
                "        O = O * factor[..., None] + p @ V[..., j0:j0 + block_size, :]\n"
                "        m = m_new\n"
                "    return O / l[..., None]\n"
            ),
            "key blocks in reverse order (the online softmax does not care)": (
                "def tiled_attention(Q, K, V, block_size, causal=False):\n"
                "    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]\n"
                "    out = np.empty(Q.shape[:-1] + V.shape[-1:])\n"
                "    for i0 in range(0, T_q, block_size):\n"
                "        q = Q[..., i0:i0 + block_size, :] / np.sqrt(d_k)\n"
                "        rows = np.arange(i0, i0 + q.shape[-2])\n"
                "        m, l = np.full(q.shape[:-1], -np.inf), np.zeros(q.shape[:-1])\n"
                "        O = np.zeros(q.shape[:-1] + V.shape[-1:])\n"
                "        for j0 in reversed(range(0, T_k, block_size)):\n"
                "            if causal and j0 > rows[-1]:\n"
                "                continue\n"
                "            s = np.einsum('...qd,...kd->...qk', q, K[..., j0:j0 + block_size, :])\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            m_new, l = online_softmax_update(m, l, s)\n"
                "            O = O * np.exp(m - m_new)[..., None] + np.einsum('...qk,...kv->...qv', np.exp(s - m_new[..., None]),\n"
                "                                                             V[..., j0:j0 + block_size, :])\n"
                "            m = m_new\n"
                "        out[..., i0:i0 + block_size, :] = O / l[..., None]\n"
                "    return out\n"
            ),
            "torch tensors inside": (
                "def tiled_attention(Q, K, V, block_size, causal=False):\n"
                "    Q, K, V = (torch.as_tensor(a) for a in (Q, K, V))\n"
                "    T_q, T_k = Q.shape[-2], K.shape[-2]\n"
                "    out = torch.empty(Q.shape[:-1] + V.shape[-1:], dtype=torch.float64)\n"
                "    for i0 in range(0, T_q, block_size):\n"
                "        q = Q[..., i0:i0 + block_size, :] / Q.shape[-1] ** 0.5\n"
                "        rows = torch.arange(i0, i0 + q.shape[-2])\n"
                "        m = torch.full(q.shape[:-1], float('-inf'), dtype=torch.float64)\n"
                "        l = torch.zeros(q.shape[:-1], dtype=torch.float64)\n"
                "        O = torch.zeros(q.shape[:-1] + V.shape[-1:], dtype=torch.float64)\n"
                "        for j0 in range(0, T_k, block_size):\n"
                "            if causal and j0 > int(rows[-1]):\n"
                "                break\n"
                "            s = q @ K[..., j0:j0 + block_size, :].transpose(-1, -2)\n"
                "            if causal:\n"
                "                s = s.masked_fill(torch.arange(j0, j0 + s.shape[-1])[None, :] > rows[:, None], float('-inf'))\n"
                "            m_new = torch.maximum(m, s.amax(dim=-1))\n"
                "            l = l * torch.exp(m - m_new) + torch.exp(s - m_new[..., None]).sum(dim=-1)\n"
                "            O = O * torch.exp(m - m_new)[..., None] + torch.exp(s - m_new[..., None]) @ V[..., j0:j0 + block_size, :]\n"
                "            m = m_new\n"
                "        out[..., i0:i0 + block_size, :] = O / l[..., None]\n"
                "    return out.numpy()\n"
            ),
        },
    },
    "gqa": {
        "wrong": {
            "key/value heads interleaved (np.tile)": (
                gqa(k_heads=TILE_KV.format("K"), v_heads=TILE_KV.format("V")),
                "interleaved",
            ),
            "values interleaved, keys contiguous": (gqa(v_heads=TILE_KV.format("V")), "interleaved"),
            "keys interleaved, values contiguous": (gqa(k_heads=TILE_KV.format("K")), "grouped differently"),
            "scaled by sqrt(d_model)": (gqa(scale="np.sqrt(X.shape[-1])"), None),
            "causal mask ignored": (gqa(causal="False"), None),
            "W_O missing": (gqa(merge="np.swapaxes(heads, -2, -3).reshape(*batch, T, n_heads * d_k)"), None),
            "heads merged without swapping the axes": (
                gqa(merge="heads.reshape(*batch, T, n_heads * d_k) @ W_O"),
                None,
            ),
            "K and V split into n_heads heads": (
                gqa(k_heads="split(X @ W_K, n_heads)", v_heads="split(X @ W_V, n_heads)"),
                None,
            ),
        },
        "right": {
            "queries reshaped into groups, keys broadcast (no copies)": (
                "def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):\n"
                "    *batch, T, _ = X.shape\n"
                "    d_k = W_Q.shape[-1] // n_heads\n"
                "    g, per = n_kv_heads, n_heads // n_kv_heads\n"
                "    Q = np.moveaxis((X @ W_Q).reshape(*batch, T, g, per, d_k), -4, -2)   # (..., g, per, T, d_k)\n"
                "    K = np.swapaxes((X @ W_K).reshape(*batch, T, g, d_k), -2, -3)[..., :, None, :, :]\n"
                "    V = np.swapaxes((X @ W_V).reshape(*batch, T, g, d_k), -2, -3)[..., :, None, :, :]\n"
                "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)\n"
                "    if causal:\n"
                "        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)\n"
                "    heads = softmax(S, axis=-1) @ V                                      # (..., g, per, T, d_k)\n"
                "    return np.moveaxis(heads, -2, -4).reshape(*batch, T, n_heads * d_k) @ W_O\n"
            ),
            "loop over the query heads": (
                "def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):\n"
                "    T = X.shape[-2]\n"
                "    d_k = W_Q.shape[-1] // n_heads\n"
                "    Q, K, V = X @ W_Q, X @ W_K, X @ W_V\n"
                "    outputs = []\n"
                "    for i in range(n_heads):\n"
                "        j = i // (n_heads // n_kv_heads)\n"
                "        q, k, v = Q[..., i * d_k:(i + 1) * d_k], K[..., j * d_k:(j + 1) * d_k], V[..., j * d_k:(j + 1) * d_k]\n"
                "        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)\n"
                "        if causal:\n"
                "            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)\n"
                "        w = np.exp(s - s.max(axis=-1, keepdims=True))\n"
                "        outputs.append(w / w.sum(axis=-1, keepdims=True) @ v)\n"
                "    return np.concatenate(outputs, axis=-1) @ W_O\n"
            ),
            "torch with enable_gqa": (
                "def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=False):\n"
                "    x = torch.as_tensor(X)\n"
                "    *batch, T, _ = x.shape\n"
                "    d_k = W_Q.shape[-1] // n_heads\n"
                "    split = lambda t, n: t.reshape(*batch, T, n, d_k).transpose(-2, -3)\n"
                "    q = split(x @ torch.as_tensor(W_Q), n_heads)\n"
                "    k, v = split(x @ torch.as_tensor(W_K), n_kv_heads), split(x @ torch.as_tensor(W_V), n_kv_heads)\n"
                "    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)\n"
                "    return (o.transpose(-2, -3).reshape(*batch, T, n_heads * d_k) @ torch.as_tensor(W_O)).numpy()\n"
            ),
            "index array for the groups": gqa(
                k_heads="split(X @ W_K, n_kv_heads)[..., np.arange(n_heads) // group, :, :]",
                v_heads="split(X @ W_V, n_kv_heads)[..., np.arange(n_heads) // group, :, :]",
            ),
        },
    },
    "quiz-weights-mib": quiz(
        "q1_answer", right=[256, 256.0, 8192 * 8192 * 4 / 2**20], wrong=[512, 268.435456, 64, 0.03125]
    ),
    "quiz-online-step": quiz(
        "q2_answer", right=[1.5518, 1.5 * 2.718281828459045**-1 + 1, 1.552], wrong=[2.5, 5.077, 1.5, 0.5518]
    ),
    "quiz-causal-tiles": quiz("q3_answer", right=[36, 36.0], wrong=[32, 28, 64, "36"]),
    "quiz-kv-bytes": quiz("q4_answer", right=[24576, 24576.0], wrong=[98304, 12288, 49152, 6144]),
    "quiz-gqa-group": quiz("q5_answer", right=["c", "C"], wrong=["b", "a", "d"]),
    "quiz-rescale": quiz("q6_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-what-tiling-saves": quiz("q7_answer", right=["b"], wrong=["a", "c", "d"]),
}
