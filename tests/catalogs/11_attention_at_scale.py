"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 11."""

from catalog_tools import quiz

UP = "def online_softmax_update(m, l, s):\n    s = np.asarray(s, dtype=float)\n"
NEW_MAX = "    m_new = np.maximum(m, s.max(axis=-1))\n"
SHIFT = "    shift = np.where(np.isneginf(m_new), 0.0, m_new)\n"


def update(l_new, new_max=NEW_MAX, shift=SHIFT, tail="    return m_new, l_new\n"):
    return UP + new_max + shift + f"    l_new = {l_new}\n" + tail


RIGHT_L = "l * np.exp(m - shift) + np.exp(s - shift[..., None]).sum(axis=-1)"

# How the variants below that make more than one pass start: query blocks with their running m and l.
_QUERY_BLOCKS = (
    "def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):\n"
    "    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]\n"
    "    out, lse = np.empty(Q.shape[:-1] + V.shape[-1:]), np.empty(Q.shape[:-1])\n"
    "    for i0 in range(0, T_q, block_size):\n"
    "        q = Q[..., i0:i0 + block_size, :] / np.sqrt(d_k)\n"
    "        rows = np.arange(i0, i0 + q.shape[-2])\n"
    "        m, l = np.full(q.shape[:-1], -np.inf), np.zeros(q.shape[:-1])\n"
)

TILED = """def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    out, lse = np.empty(Q.shape[:-1] + V.shape[-1:]), np.empty(Q.shape[:-1])
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
            m_new, l = online_softmax_update(m, l, s)
            O = {o_update}
            m = m_new
        out[..., i0:i0 + block_size, :] = O / l[..., None]
        lse[..., i0:i0 + block_size] = {lse}
    return {ret}
"""
TILED_PARTS = dict(
    scale="np.sqrt(d_k)",
    key_range="range(0, T_k, block_size)",
    skip="j0 > rows[-1]",
    key_end="j0 + block_size",
    mask="cols[None, :] <= rows[:, None]",
    o_update="O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v",
    lse="m + np.log(l)",
    ret="(out, lse) if return_lse else out",
)


def tiled(**changes):
    return TILED.format(**(TILED_PARTS | changes))


BACKWARD = """def tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False):
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    D = {d}
    for i0 in range(0, T_q, block_size):
        for j0 in range(0, T_k, block_size):
            q, do = Q[..., i0:i0 + block_size, :], dO[..., i0:i0 + block_size, :]
            rows = np.arange(i0, i0 + q.shape[-2])
            if causal and {skip}:
                continue
            k, v = K[..., j0:j0 + block_size, :], V[..., j0:j0 + block_size, :]
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)
            if causal and {causal_mask}:
                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)
            P = {p}
            dV[..., j0:j0 + block_size, :] += np.swapaxes(P, -1, -2) @ do
            dP = do @ np.swapaxes(v, -1, -2)
            dS = {ds}
            dQ[..., i0:i0 + block_size, :] += dS @ k / {scale}
            dK[..., j0:j0 + block_size, :] += np.swapaxes(dS, -1, -2) @ q / {scale}
    return dQ, dK, dV
"""
BACKWARD_PARTS = dict(
    d="(dO * O).sum(axis=-1)",
    skip="j0 > rows[-1]",
    causal_mask="True",
    p="np.exp(s - lse[..., i0:i0 + block_size, None])",
    ds="P * (dP - D[..., i0:i0 + block_size, None])",
    scale="np.sqrt(d_k)",
)


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
                "keeps l = 0",
            ),
            "changes m in place": (
                update(RIGHT_L, tail="    m[...] = m_new\n    return m, l_new\n"),
                "must not change in place",
            ),
            "no shift at all (overflows)": (update("l + np.exp(s).sum(axis=-1)"), None),
            "returns only the sum": (update(RIGHT_L, tail="    return l_new\n"), "must return (m_new, l_new)"),
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
                "once per tile",
            ),
            "causal: the diagonal itself is masked (j < i)": (tiled(mask="cols[None, :] < rows[:, None]"), "key j = i"),
            "causal: no mask inside the diagonal tiles": (
                tiled(mask="np.ones((len(rows), len(cols)), dtype=bool)"),
                "nothing is masked inside the diagonal",
            ),
            "causal: upper triangle kept inside the diagonal tiles": (
                tiled(mask="cols[None, :] >= rows[:, None]"),
                "upper triangle is kept",
            ),
            "causal: the diagonal tiles are skipped": (tiled(skip="j0 >= i0"), "once per tile"),
            "causal: fully masked tiles computed instead of skipped": (
                tiled(skip="False"),
                "skipping the tiles above the diagonal",
            ),
            "no scaling by sqrt(d_k)": (tiled(scale="1.0"), "not scaled"),
            "plain attention: the whole score matrix at once": (
                "def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):\n"
                "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
                "    if causal:\n"
                "        S = np.where(np.tril(np.ones(S.shape[-2:], dtype=bool)), S, -np.inf)\n"
                "    A = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                "    out = A / A.sum(axis=-1, keepdims=True) @ V\n"
                "    return (out, np.log(np.exp(S).sum(-1))) if return_lse else out\n",
                "once per tile",
            ),
            "the whole score matrix first, then cut into tiles for the update": (
                tiled(o_update="O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v")
                .replace(
                    "    for i0 in range(0, T_q, block_size):\n",
                    "    S_all = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)\n    for i0 in range(0, T_q, block_size):\n",
                )
                .replace(
                    "s = q @ np.swapaxes(k, -1, -2)", "s = S_all[..., i0:i0 + block_size, j0:j0 + block_size].copy()"
                ),
                "Never build the whole",
            ),
            "the update written inline (online_softmax_update never called)": (
                tiled().replace(
                    "m_new, l = online_softmax_update(m, l, s)",
                    "m_new = np.maximum(m, s.max(axis=-1))\n"
                    "            l = l * np.exp(m - m_new) + np.exp(s - m_new[..., None]).sum(axis=-1)",
                ),
                "once per tile",
            ),
            "keys in blocks, all queries at once (no query tiles)": (
                tiled(scale="np.sqrt(d_k)")
                .replace("for i0 in range(0, T_q, block_size):", "for i0 in range(0, T_q, T_q):")
                .replace("out[..., i0:i0 + block_size, :]", "out[..., i0:i0 + T_q, :]")
                .replace("lse[..., i0:i0 + block_size]", "lse[..., i0:i0 + T_q]")
                .replace("Q[..., i0:i0 + block_size, :]", "Q[..., i0:i0 + T_q, :]"),
                "at most block_size",
            ),
            "torch tensors inside": (
                "def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):\n"
                "    out = F.scaled_dot_product_attention(*(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)),\n"
                "                                         is_causal=causal).numpy()\n"
                "    T_q, T_k = Q.shape[-2], K.shape[-2]\n"
                "    for i0 in range(0, T_q, block_size):\n"
                "        for j0 in range(0, T_k, block_size):\n"
                "            if not (causal and j0 > min(i0 + block_size, T_q) - 1):\n"
                "                online_softmax_update(np.zeros(1), np.zeros(1), np.zeros((1, 1)))\n"
                "    return (out, None) if return_lse else out\n",
                "used PyTorch",
            ),
            "lse is the running maximum only": (tiled(lse="m"), "lse is only the running maximum"),
            "return_lse ignored": (tiled(ret="out"), "(output, lse) with return_lse=True"),
            "returns (output, None)": (tiled(ret="(out, lse if return_lse else None)"), "only the output"),
            "two passes per query block, the second over a whole (block_size, T_k) row of scores (no running Õ)": (
                _QUERY_BLOCKS + "        for j0 in range(0, T_k, block_size):\n"
                "            if causal and j0 > rows[-1]:\n"
                "                break\n"
                "            s = q @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            m, l = online_softmax_update(m, l, s)\n"
                "        S = q @ np.swapaxes(K, -1, -2)  # like section 2's online_softmax: a second pass, over the whole row\n"
                "        if causal:\n"
                "            S = np.where(np.arange(T_k)[None, :] <= rows[:, None], S, -np.inf)\n"
                "        out[..., i0:i0 + block_size, :] = np.exp(S - m[..., None]) @ V / l[..., None]\n"
                "        lse[..., i0:i0 + block_size] = m + np.log(l)\n"
                "    return (out, lse) if return_lse else out\n",
                "Two passes over the keys",
            ),
            "two passes over the tiles: m and l first, then the output with the final m and l (no running Õ)": (
                _QUERY_BLOCKS + "        scores = []\n"
                "        for j0 in range(0, T_k, block_size):\n"
                "            if causal and j0 > rows[-1]:\n"
                "                break\n"
                "            s = q @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            m, l = online_softmax_update(m, l, s)\n"
                "        O = np.zeros(q.shape[:-1] + V.shape[-1:])\n"
                "        for j0 in range(0, T_k, block_size):  # second pass: the final m and l, nothing to rescale\n"
                "            if causal and j0 > rows[-1]:\n"
                "                break\n"
                "            s = q @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            O += np.exp(s - m[..., None]) @ V[..., j0:j0 + block_size, :]\n"
                "        out[..., i0:i0 + block_size, :] = O / l[..., None]\n"
                "        lse[..., i0:i0 + block_size] = m + np.log(l)\n"
                "    return (out, lse) if return_lse else out\n",
                "Two passes over the keys",
            ),
            "float32 result for float64 inputs": (
                tiled().replace(
                    "np.empty(Q.shape[:-1] + V.shape[-1:])", "np.empty(Q.shape[:-1] + V.shape[-1:], dtype=np.float32)"
                ),
                "float64 inputs gave a result of dtype float32",
            ),
            "K and V converted as a whole first (the reads cannot be counted)": (
                tiled().replace(
                    "    for i0 in range(0, T_q, block_size):\n",
                    "    K, V = np.asarray(K), np.asarray(V)\n    for i0 in range(0, T_q, block_size):\n",
                    1,
                ),
                "do not convert K or V first",
            ),
        },
        "right": {
            "the reference structure": tiled(),
            "key blocks outside, query blocks inside (FlashAttention-1's order), state kept for every row": (
                "def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):\n"
                "    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]\n"
                "    m, l = np.full(Q.shape[:-1], -np.inf), np.zeros(Q.shape[:-1])\n"
                "    O = np.zeros(Q.shape[:-1] + V.shape[-1:])\n"
                "    for j0 in range(0, T_k, block_size):\n"
                "        k, v = K[..., j0:j0 + block_size, :], V[..., j0:j0 + block_size, :]\n"
                "        for i0 in range(0, T_q, block_size):\n"
                "            rows = np.arange(i0, min(i0 + block_size, T_q))\n"
                "            if causal and j0 > rows[-1]:\n"
                "                continue\n"
                "            s = Q[..., i0:i0 + block_size, :] @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            mo, lo = m[..., i0:i0 + block_size], l[..., i0:i0 + block_size]\n"
                "            m_new, l_new = online_softmax_update(mo, lo, s)\n"
                "            Ob = O[..., i0:i0 + block_size, :]\n"
                "            O[..., i0:i0 + block_size, :] = Ob * np.exp(mo - m_new)[..., None] + np.exp(s - m_new[..., None]) @ v\n"
                "            m[..., i0:i0 + block_size], l[..., i0:i0 + block_size] = m_new, l_new\n"
                "    out = O / l[..., None]\n"
                "    return (out, m + np.log(l)) if return_lse else out\n"
            ),
            "block outputs collected in a list and joined at the end": (
                "def tiled_attention(Q, K, V, block_size, causal=False, return_lse=False):\n"
                "    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]\n"
                "    outs, lses = [], []\n"
                "    for i0 in range(0, T_q, block_size):\n"
                "        q = Q[..., i0:i0 + block_size, :]\n"
                "        rows = np.arange(i0, i0 + q.shape[-2])\n"
                "        m, l = np.full(q.shape[:-1], -np.inf), np.zeros(q.shape[:-1])\n"
                "        O = np.zeros(q.shape[:-1] + V.shape[-1:])\n"
                "        for j0 in range(0, T_k, block_size):\n"
                "            if causal and j0 > rows[-1]:\n"
                "                break\n"
                "            s = np.einsum('...qd,...kd->...qk', q, K[..., j0:j0 + block_size, :]) / math.sqrt(d_k)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            m_new, l = online_softmax_update(m, l, s)\n"
                "            O = O * np.exp(m - m_new)[..., None] + np.exp(s - m_new[..., None]) @ V[..., j0:j0 + block_size, :]\n"
                "            m = m_new\n"
                "        outs.append(O / l[..., None])\n"
                "        lses.append(m + np.log(l))\n"
                "    out = np.concatenate(outs, axis=-2)\n"
                "    return (out, np.concatenate(lses, axis=-1)) if return_lse else out\n"
            ),
            "key blocks in reverse order (the online softmax does not care)": (
                _QUERY_BLOCKS + "        O = np.zeros(q.shape[:-1] + V.shape[-1:])\n"
                "        for j0 in reversed(range(0, T_k, block_size)):\n"
                "            if causal and j0 > rows[-1]:\n"
                "                continue\n"
                "            s = q @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2)\n"
                "            if causal:\n"
                "                s = np.where(np.arange(j0, j0 + s.shape[-1])[None, :] <= rows[:, None], s, -np.inf)\n"
                "            m_new, l = online_softmax_update(m, l, s)\n"
                "            with np.errstate(invalid='ignore'):\n"
                "                factor = np.where(np.isneginf(m_new), 0.0, np.exp(m - m_new))\n"
                "                p = np.where(np.isneginf(m_new)[..., None], 0.0, np.exp(s - m_new[..., None]))\n"
                "            O = O * factor[..., None] + p @ V[..., j0:j0 + block_size, :]\n"
                "            m = m_new\n"
                "        out[..., i0:i0 + block_size, :] = O / l[..., None]\n"
                "        lse[..., i0:i0 + block_size] = m + np.log(l)\n"
                "    return (out, lse) if return_lse else out\n"
            ),
        },
    },
    "tiled-backward": {
        "wrong": {
            "dS without the -D term": (BACKWARD.format(**(BACKWARD_PARTS | dict(ds="P * dP"))), "second term"),
            "no 1/sqrt(d_k) in dQ and dK": (BACKWARD.format(**(BACKWARD_PARTS | dict(scale="1.0"))), "1/√d_k"),
            "weights from the tile's own maximum (lse ignored)": (
                BACKWARD.format(**(BACKWARD_PARTS | dict(p="np.exp(s - s.max(axis=-1, keepdims=True))"))),
                None,
            ),
            "D recomputed from the weights (O ignored)": (
                BACKWARD.format(**(BACKWARD_PARTS | dict(d="None")))
                .replace(
                    "            dS = P * (dP - D[..., i0:i0 + block_size, None])\n",
                    "            dS = P * (dP - D_rows[..., i0:i0 + block_size, None])\n",
                )
                .replace(
                    "    for i0 in range(0, T_q, block_size):\n",
                    "    D_rows = np.zeros(Q.shape[:-1])\n"
                    "    for i0 in range(0, T_q, block_size):\n"
                    "        for j0 in range(0, T_k, block_size):\n"
                    "            s0 = Q[..., i0:i0 + block_size, :] @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2) / np.sqrt(d_k)\n"
                    "            if causal:\n"
                    "                s0 = np.where(np.arange(j0, j0 + s0.shape[-1])[None, :] <= np.arange(i0, i0 + s0.shape[-2])[:, None], s0, -np.inf)\n"
                    "            P0 = np.exp(s0 - lse[..., i0:i0 + block_size, None])\n"
                    "            D_rows[..., i0:i0 + block_size] += (P0 * (dO[..., i0:i0 + block_size, :] @ np.swapaxes(V[..., j0:j0 + block_size, :], -1, -2))).sum(-1)\n"
                    "    for i0 in range(0, T_q, block_size):\n",
                    1,
                ),
                "did not halve",
            ),
            "lse recomputed from the scores (the given lse ignored)": (
                BACKWARD.format(**(BACKWARD_PARTS | dict(p="np.exp(s - own[..., i0:i0 + block_size, None])"))).replace(
                    "    for i0 in range(0, T_q, block_size):\n",
                    "    own = np.full(Q.shape[:-1], -np.inf)\n"
                    "    for i0 in range(0, T_q, block_size):\n"
                    "        for j0 in range(0, T_k, block_size):\n"
                    "            s0 = Q[..., i0:i0 + block_size, :] @ np.swapaxes(K[..., j0:j0 + block_size, :], -1, -2) / np.sqrt(d_k)\n"
                    "            if causal:\n"
                    "                s0 = np.where(np.arange(j0, j0 + s0.shape[-1])[None, :] <= np.arange(i0, i0 + s0.shape[-2])[:, None], s0, -np.inf)\n"
                    "            own[..., i0:i0 + block_size] = np.logaddexp(own[..., i0:i0 + block_size], np.logaddexp.reduce(s0, axis=-1))\n"
                    "    for i0 in range(0, T_q, block_size):\n",
                    1,
                ),
                "did not halve",
            ),
            "causal mask ignored": (BACKWARD.format(**(BACKWARD_PARTS | dict(causal_mask="False"))), None),
            "float32 gradients for float64 inputs": (
                BACKWARD.format(**BACKWARD_PARTS).replace(
                    "    return dQ, dK, dV\n",
                    "    return dQ.astype(np.float32), dK.astype(np.float32), dV.astype(np.float32)\n",
                ),
                "float64 inputs gave a result of dtype float32",
            ),
            "full matrices (autograd's formulas at once)": (
                "def tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False):\n"
                "    d_k = Q.shape[-1]\n"
                "    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)\n"
                "    if causal:\n"
                "        S = np.where(np.tril(np.ones(S.shape[-2:], dtype=bool)), S, -np.inf)\n"
                "    P = np.exp(S - lse[..., None])\n"
                "    dS = P * (dO @ np.swapaxes(V, -1, -2) - (dO * O).sum(-1)[..., None])\n"
                "    return dS @ K / np.sqrt(d_k), np.swapaxes(dS, -1, -2) @ Q / np.sqrt(d_k), np.swapaxes(P, -1, -2) @ dO\n",
                "work tile by tile",
            ),
            "row blocks: each query block against all the keys at once": (
                "def tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False):\n"
                "    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]\n"
                "    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)\n"
                "    D = (dO * O).sum(axis=-1)\n"
                "    for i0 in range(0, T_q, block_size):\n"
                "        q, do = Q[..., i0:i0 + block_size, :], dO[..., i0:i0 + block_size, :]\n"
                "        rows = np.arange(i0, i0 + q.shape[-2])\n"
                "        s = q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)\n"
                "        if causal:\n"
                "            s = np.where(np.arange(T_k)[None, :] <= rows[:, None], s, -np.inf)\n"
                "        P = np.exp(s - lse[..., i0:i0 + block_size, None])\n"
                "        dV += np.swapaxes(P, -1, -2) @ do\n"
                "        dS = P * (do @ np.swapaxes(V, -1, -2) - D[..., i0:i0 + block_size, None])\n"
                "        dQ[..., i0:i0 + block_size, :] += dS @ K / np.sqrt(d_k)\n"
                "        dK += np.swapaxes(dS, -1, -2) @ q / np.sqrt(d_k)\n"
                "    return dQ, dK, dV\n",
                "one query block against",
            ),
            "torch autograd inside": (
                "def tiled_attention_backward(Q, K, V, O, dO, lse, block_size, causal=False):\n"
                "    q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))\n"
                "    F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(torch.from_numpy(dO))\n"
                "    return q.grad.numpy(), k.grad.numpy(), v.grad.numpy()\n",
                "used PyTorch",
            ),
        },
        "right": {
            "the reference loop": BACKWARD.format(**BACKWARD_PARTS),
            "key blocks outside, query blocks inside (FlashAttention-1's order)": (
                BACKWARD.format(**BACKWARD_PARTS)
                .replace("    for i0 in range(0, T_q, block_size):\n", "    for j0 in range(0, T_k, block_size):\n", 1)
                .replace(
                    "        for j0 in range(0, T_k, block_size):\n",
                    "        for i0 in range(0, T_q, block_size):\n",
                    1,
                )
            ),
            "no tiles skipped (a masked tile's weights are 0)": BACKWARD.format(
                **(BACKWARD_PARTS | dict(skip="False"))
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
            "keys interleaved, values contiguous": (gqa(k_heads=TILE_KV.format("K")), "keys are grouped like np.tile"),
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
    "quiz-traffic-memory": quiz("q8_answer", right=["a"], wrong=["b", "c", "d"]),
    "quiz-uptraining": quiz("q9_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-rescale": quiz("q6_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-what-tiling-saves": quiz("q7_answer", right=["b"], wrong=["a", "c", "d"]),
}

# --- what the prose, the model answers and the rubric say about this lesson's own measurements ---------------------
NOT_MEASURED = {
    "256": "a setting: the shortest length measured (and T = 256 in the backward demo)",
    "2048": "a setting: the longest length measured",
    "2018": "a year of publication (Milakov and Gimelshein)",
    "2019": "a year of publication (Shazeer)",
    "2020": "a year of publication (Beltagy et al.)",
    "2022": "a year of publication (Dao et al.)",
    "2023": "a year of publication (Ainslie et al.; Kwon et al.; Chen et al.)",
    "2.13": "the PyTorch version this course pins",
    "11.1": "an exercise's number",
    "11.2": "an exercise's number",
    "11.3": "an exercise's number",
    "11.4": "an exercise's number",
    "90": "the minimal path's minutes, counted: about 4,000 words on the path at 100 words a minute + 6 min x 8 points",
    "100": "a pace: words read per minute (with 6 minutes per exercise point: a student timed the lesson at 3 hours); "
    "also a setting: the toy decoder reads 100 tokens",
    "512": "a name: the AVX-512 instruction set (and the window W = 512 of section 8, a setting)",
    "16": "settings: 16-bit floats; 16 query heads in Q4",
    "32": "settings: the hypothetical model's 32 layers and 32 query heads",
    "400": "a setting: lesson 10's training steps",
    "200": "a setting: the training steps of the uptraining experiment's multi-head decoders",
    "40": "a setting: the uptraining steps",
    "64": "a setting: the explorer's 64 tokens",
    "1.5": "a setting of Q2",
    "24": "a setting of Q4",
}
