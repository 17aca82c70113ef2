"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 10."""

from catalog_tools import quiz

# --- exercise 10.1: causal_mask ----------------------------------------------------------------
_MASK = "def causal_mask(T_q, T_k=None):\n    T_k = T_q if T_k is None else T_k\n"

# --- exercise 10.2: MultiHeadAttention(x_q, x_kv, mask) -----------------------------------------
_INIT = (
    "class MultiHeadAttention(nn.Module):\n"
    "    def __init__(self, d_model, num_heads, bias=True):\n"
    "        super().__init__()\n"
    "        self.num_heads, self.d_k = num_heads, d_model // num_heads\n"
    "        self.W_q = nn.Linear(d_model, d_model, bias=bias)\n"
    "        self.W_k = nn.Linear(d_model, d_model, bias=bias)\n"
    "        self.W_v = nn.Linear(d_model, d_model, bias=bias)\n"
    "        self.W_o = nn.Linear(d_model, d_model, bias=bias)\n"
)
_HEAD = (
    "    def forward(self, x_q, x_kv=None, mask=None):\n"
    "        x_kv = x_q if x_kv is None else x_kv\n"
    "        B, T_q, d = x_q.shape\n        T_k = x_kv.shape[1]\n        h, dk = self.num_heads, self.d_k\n"
)
_Q = "        q = self.W_q(x_q).view(B, T_q, h, dk).transpose(1, 2)\n"
_K = "        k = self.W_k(x_kv).view(B, T_k, h, dk).transpose(1, 2)\n"
_V = "        v = self.W_v(x_kv).view(B, T_k, h, dk).transpose(1, 2)\n"
_S = "        s = q @ k.transpose(-2, -1) / dk ** 0.5\n"
_M = "        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n"
_W = "        w = torch.softmax(s, dim=-1)\n"
_O = "        return self.W_o((w @ v).transpose(1, 2).reshape(B, T_q, d)), w\n"


def _mha(q=_Q, k=_K, v=_V, s=_S, m=_M, w=_W, o=_O, head=_HEAD, init=_INIT):
    return init + head + q + k + v + s + m + w + o


# --- exercise 10.3: next_token_probs and sample_next -------------------------------------------
_TOPK = (
    "    if top_k is not None and top_k < logits.shape[-1]:\n"
    "        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]\n"
    "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
)
_GREEDY = (
    "    if temperature == 0:\n        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)\n"
)
_SOFT = "    return torch.softmax(logits / temperature, dim=-1)\n"
_SAMPLE = (
    "def sample_next(logits, temperature=1.0, top_k=None, generator=None):\n"
    "    if temperature == 0:\n        return logits.argmax(dim=-1)\n"
    "    probs = next_token_probs(logits, temperature, top_k)\n"
    "    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)\n"
)


def _probs(topk=_TOPK, greedy=_GREEDY, soft=_SOFT, sample=_SAMPLE):
    return "def next_token_probs(logits, temperature=1.0, top_k=None):\n" + topk + greedy + soft + "\n" + sample


# --- exercise 10.4: attend_with_cache ------------------------------------------------------------
_C_HEAD = (
    "def attend_with_cache(mha, x_new, cache, mask=None):\n"
    "    B, T, d = x_new.shape\n"
    "    split = lambda t: t.view(B, T, mha.num_heads, mha.d_k).transpose(1, 2)\n"
    "    q, k, v = split(mha.W_q(x_new)), split(mha.W_k(x_new)), split(mha.W_v(x_new))\n"
)
_C_APPEND = (
    "    if 'k' in cache:\n"
    "        k = torch.cat([cache['k'], k], dim=2)\n        v = torch.cat([cache['v'], v], dim=2)\n"
    "    cache['k'], cache['v'] = k, v\n"
)
_C_SCORES = "    s = q @ k.transpose(-2, -1) / mha.d_k ** 0.5\n"
_C_MASK = "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
_C_OUT = "    w = torch.softmax(s, dim=-1)\n    return mha.W_o((w @ v).transpose(1, 2).reshape(B, T, d)), w\n"


def _cache(append=_C_APPEND, scores=_C_SCORES, mask=_C_MASK, out=_C_OUT, head=_C_HEAD):
    return head + append + scores + mask + out


EXERCISES = {
    "causal-mask": {
        "wrong": {
            "diagonal excluded": (
                _MASK + "    return torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q - 1)",
                "the diagonal is blocked",
            ),
            "future included (one step ahead)": (
                _MASK + "    return torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q + 1)",
                "also sees the next token",
            ),
            "aligned top-left": (
                _MASK + "    return torch.ones(T_q, T_k, dtype=torch.bool).tril()",
                "bottom-right corner",
            ),
            "inverted (True = blocked)": (
                _MASK + "    return ~torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)",
                "the mask is inverted",
            ),
            "float mask": (_MASK + "    return torch.ones(T_q, T_k).tril(T_k - T_q)", "torch.bool"),
            "numpy array": (_MASK + "    return np.tril(np.ones((T_q, T_k), dtype=bool), T_k - T_q)", "torch.bool"),
            "square only (ignores T_k)": (
                "def causal_mask(T_q, T_k=None):\n    return torch.ones(T_q, T_q, dtype=torch.bool).tril()",
                "shape",
            ),
        },
        "right": {
            "the last T_q rows of the square mask": _MASK
            + "    return torch.ones(T_k, T_k, dtype=torch.bool).tril()[T_k - T_q:]",
            "compare positions": _MASK
            + "    return torch.arange(T_k)[None, :] <= torch.arange(T_q)[:, None] + (T_k - T_q)",
            "from numpy": _MASK + "    return torch.from_numpy(np.tril(np.ones((T_q, T_k), dtype=bool), k=T_k - T_q))",
            "loops": _MASK
            + (
                "    m = torch.zeros(T_q, T_k, dtype=torch.bool)\n"
                "    for i in range(T_q):\n        for j in range(T_k):\n"
                "            m[i, j] = j <= T_k - T_q + i\n    return m"
            ),
            "triu inverted": _MASK + "    return ~torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1)",
        },
    },
    "mha-cross": {
        "wrong": {
            "keys and values from x_q": (
                _mha(
                    k=_K.replace("x_kv", "x_q").replace("T_k", "T_q"), v=_V.replace("x_kv", "x_q").replace("T_k", "T_q")
                ),
                "come from x_q",
            ),
            "values from x_q": (_mha(v=_V.replace("self.W_v(x_kv)", "self.W_v(x_q)")), "wrong input"),
            "queries from x_kv": (_mha(q=_Q.replace("self.W_q(x_q)", "self.W_q(x_kv)")), "wrong input"),
            "mask inverted": (
                _mha(m="        if mask is not None:\n            s = s.masked_fill(mask, float('-inf'))\n"),
                "mask is inverted",
            ),
            "scaled by sqrt(d_model)": (_mha(s="        s = q @ k.transpose(-2, -1) / d ** 0.5\n"), "sqrt(d_model)"),
            "no W_o": (_mha(o="        return (w @ v).transpose(1, 2).reshape(B, T_q, d), w\n"), "W_o is not applied"),
            "lesson-6 signature (no x_kv)": (
                _mha(
                    head=_HEAD.replace(
                        "def forward(self, x_q, x_kv=None, mask=None)", "def forward(self, x_q, mask=None, x_kv=None)"
                    )
                ),
                None,
            ),
            "blocked scores filled with -1e9 instead of -inf": (
                _mha(m="        if mask is not None:\n            s = s.masked_fill(~mask, -1e9)\n"),
                "large finite number",
            ),
            "finite fill, then the blocked weights zeroed and the rows renormalised": (
                _mha(
                    m="        if mask is not None:\n            s = s.masked_fill(~mask, -1e9)\n",
                    w=(
                        "        w = torch.softmax(s, dim=-1)\n"
                        "        if mask is not None:\n"
                        "            w = w.masked_fill(~mask, 0.0)\n            w = w / w.sum(-1, keepdim=True)\n"
                    ),
                ),
                "NaN or inf",
            ),
            "`.view` after `.transpose` to merge the heads": (
                _mha(o="        return self.W_o((w @ v).transpose(1, 2).view(B, T_q, d)), w\n"),
                "`.view` after `.transpose`",
            ),
            "detached output": (
                _mha(o="        return self.W_o((w @ v).transpose(1, 2).reshape(B, T_q, d).detach()), w\n"),
                "no gradient reaches",
            ),
        },
        "right": {
            "loop over heads": _mha(
                q="",
                k="",
                v="",
                s="",
                m="",
                w="",
                o=(
                    "        Q, K, V = self.W_q(x_q), self.W_k(x_kv), self.W_v(x_kv)\n        outs, ws = [], []\n"
                    "        for i in range(h):\n            c = slice(i * dk, (i + 1) * dk)\n"
                    "            s = Q[..., c] @ K[..., c].transpose(-2, -1) / dk ** 0.5\n"
                    "            if mask is not None:\n                s = s.masked_fill(~mask, float('-inf'))\n"
                    "            a = torch.softmax(s, dim=-1)\n            outs.append(a @ V[..., c])\n            ws.append(a)\n"
                    "        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(ws, dim=1)\n"
                ),
            ),
            "einsum": _mha(
                s="        s = torch.einsum('bhqd,bhkd->bhqk', q, k) / math.sqrt(dk)\n",
                o="        return self.W_o(torch.einsum('bhqk,bhkd->bqhd', w, v).reshape(B, T_q, d)), w\n",
            ),
            "torch's sdpa for the output": _mha(
                o=(
                    "        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
                    "        return self.W_o(o.transpose(1, 2).reshape(B, T_q, d)), w\n"
                )
            ),
            "the smallest finite number as the fill (no blocked key can win)": _mha(
                m="        if mask is not None:\n            s = s.masked_fill(~mask, torch.finfo(s.dtype).min)\n"
            ),
            "where instead of masked_fill": _mha(
                m="        if mask is not None:\n"
                "            s = torch.where(mask, s, torch.tensor(float('-inf'), dtype=s.dtype))\n"
            ),
        },
    },
    "sampling": {
        "wrong": {
            "temperature after the softmax": (
                _probs(soft="    return torch.softmax(logits, dim=-1) / temperature\n"),
                "divides the probabilities",
            ),
            "temperature after the softmax, renormalised": (
                _probs(
                    soft=(
                        "    p = torch.softmax(logits, dim=-1) / temperature\n    return p / p.sum(-1, keepdim=True)\n"
                    )
                ),
                "no effect",
            ),
            "temperature multiplies the logits": (
                _probs(soft="    return torch.softmax(logits * temperature, dim=-1)\n"),
                "multiplied by the temperature",
            ),
            "top-k keeps k + 1": (
                _probs(
                    topk=_TOPK.replace("torch.topk(logits, top_k, dim=-1)", "torch.topk(logits, top_k + 1, dim=-1)")
                ),
                "keeps k + 1",
            ),
            "top-k zeroes after the softmax without renormalising": (
                _probs(
                    topk="",
                    soft=(
                        "    p = torch.softmax(logits / temperature, dim=-1)\n"
                        "    if top_k is not None and top_k < logits.shape[-1]:\n"
                        "        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]\n"
                        "        p = p.masked_fill(logits < kth, 0.0)\n    return p\n"
                    ),
                ),
                "without renormalising",
            ),
            "top-k keeps the smallest": (
                _probs(
                    topk=_TOPK.replace(
                        "torch.topk(logits, top_k, dim=-1).values[..., -1:]",
                        "torch.topk(logits, top_k, dim=-1, largest=False).values[..., -1:]",
                    ).replace("logits < kth", "logits > kth")
                ),
                "keeps the smallest",
            ),
            "top-k fills the caller's logits in place (masked_fill_)": (
                _probs(topk=_TOPK.replace("logits = logits.masked_fill(", "logits.masked_fill_(")),
                "changed the logits it was given",
            ),
            "sampling ignores the generator": (
                _probs(sample=_SAMPLE.replace("generator=generator", "")),
                "seeded alike",
            ),
            "sample_next reseeds the global generator and ignores the one it is given": (
                _probs(
                    sample=_SAMPLE.replace(
                        "return torch.multinomial(probs, 1, generator=generator)",
                        "torch.manual_seed(0)\n    return torch.multinomial(probs, 1)",
                    )
                ),
                "generators seeded differently gave the same samples",
            ),
            "sample_next draws from a fixed generator of its own, whatever it is given": (
                _probs(sample=_SAMPLE.replace("generator=generator", "generator=torch.Generator().manual_seed(0)")),
                "generators seeded differently gave the same samples",
            ),
            "sample_next keeps one module-level generator and ignores the argument": (
                "_OWN_GENERATOR = torch.Generator().manual_seed(0)\n"
                + _probs(sample=_SAMPLE.replace("generator=generator", "generator=_OWN_GENERATOR")),
                "seeded alike",
            ),
            "sample_next returns a 0-d tensor for one row (squeeze())": (
                _probs(sample=_SAMPLE.replace(".squeeze(-1)", ".squeeze()")),
                "not a 0-d tensor",
            ),
            "sample_next samples at temperature 1 when asked for greedy": (
                _probs(sample=_SAMPLE.replace("return logits.argmax(dim=-1)", "temperature = 1.0")),
                "greedy never samples",
            ),
            "greedy samples instead of taking the arg max": (
                _probs(
                    greedy="",
                    sample=_SAMPLE.replace(
                        "    if temperature == 0:\n        return logits.argmax(dim=-1)\n", ""
                    ).replace(
                        "probs = next_token_probs(logits, temperature, top_k)",
                        "probs = next_token_probs(logits, max(temperature, 1.0), top_k)",
                    ),
                ),
                None,
            ),
        },
        "right": {
            "sort instead of topk": _probs(
                topk=(
                    "    if top_k is not None and top_k < logits.shape[-1]:\n"
                    "        kth = logits.sort(dim=-1, descending=True).values[..., top_k - 1:top_k]\n"
                    "        logits = torch.where(logits >= kth, logits, torch.full_like(logits, float('-inf')))\n"
                )
            ),
            "scatter the top k": _probs(
                topk=(
                    "    if top_k is not None and top_k < logits.shape[-1]:\n"
                    "        top = torch.topk(logits, top_k, dim=-1)\n"
                    "        logits = torch.full_like(logits, float('-inf')).scatter(-1, top.indices, top.values)\n"
                )
            ),
            "exp and normalise by hand, greedy via top_k = 1": _probs(
                greedy=("    if temperature == 0:\n        return next_token_probs(logits, 1.0, 1)\n"),
                soft=(
                    "    z = logits / temperature\n    e = torch.exp(z - z.max(dim=-1, keepdim=True).values)\n"
                    "    return e / e.sum(dim=-1, keepdim=True)\n"
                ),
            ),
            "inverse CDF: uniform numbers from the generator against the cumulative probabilities": _probs(
                sample=(
                    "def sample_next(logits, temperature=1.0, top_k=None, generator=None):\n"
                    "    if temperature == 0:\n        return logits.argmax(dim=-1)\n"
                    "    probs = next_token_probs(logits, temperature, top_k)\n"
                    "    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=probs.dtype)\n"
                    "    return (probs.cumsum(-1) < u).sum(-1).clamp(max=probs.shape[-1] - 1)\n"
                )
            ),
            "greedy sampling through the one-hot distribution": _probs(
                sample=(
                    "def sample_next(logits, temperature=1.0, top_k=None, generator=None):\n"
                    "    probs = next_token_probs(logits, temperature, top_k)\n"
                    "    return torch.multinomial(probs, 1, generator=generator)[:, 0]\n"
                )
            ),
        },
    },
    "kv-cache": {
        "wrong": {
            "appends keys but not values": (
                _cache(
                    append=(
                        "    if 'k' in cache:\n        k = torch.cat([cache['k'], k], dim=2)\n"
                        "    cache['k'], cache['v'] = k, v\n"
                    )
                ),
                "append both",
            ),
            "values appended but never stored back": (
                _cache(
                    append=(
                        "    if 'k' in cache:\n        k = torch.cat([cache['k'], k], dim=2)\n        v = torch.cat([cache['v'], v], dim=2)\n"
                        "    cache['k'] = k\n    cache.setdefault('v', v)\n"
                    )
                ),
                "append both",
            ),
            "cache overwritten (keeps only the newest tokens)": (
                _cache(append="    cache['k'], cache['v'] = k, v\n"),
                "must keep the keys and values",
            ),
            "new token appended after attending": (
                _cache(
                    append=(
                        "    if 'k' in cache:\n        k_past, v_past = cache['k'], cache['v']\n"
                        "        cache['k'], cache['v'] = torch.cat([k_past, k], dim=2), torch.cat([v_past, v], dim=2)\n"
                        "        k, v = k_past, v_past\n"
                        "    else:\n        cache['k'], cache['v'] = k, v\n"
                    )
                ),
                "does not attend to itself",
            ),
            "mask ignored": (_cache(mask=""), "mask is ignored"),
            "blocked scores filled with -1e9 instead of -inf": (
                _cache(mask="    if mask is not None:\n        s = s.masked_fill(~mask, -1e9)\n"),
                "large finite number",
            ),
            "cache stored in float32 (changes a float64 model's numbers)": (
                _cache(
                    append=_C_APPEND.replace(
                        "cache['k'], cache['v'] = k, v", "cache['k'], cache['v'] = k.float(), v.float()"
                    )
                ),
                "number type",
            ),
            "calls mha(...) for the new tokens instead of its layers": (
                "def attend_with_cache(mha, x_new, cache, mask=None):\n"
                "    out, w = mha(x_new, mask=mask)\n"
                "    return out, w\n",
                "called mha",
            ),
            "keeps the inputs and recomputes every key and value on each call": (
                "def attend_with_cache(mha, x_new, cache, mask=None):\n"
                "    B, T, d = x_new.shape\n"
                "    x_all = torch.cat([cache['x'], x_new], dim=1) if 'x' in cache else x_new\n"
                "    cache['x'] = x_all\n"
                "    split = lambda t: t.view(B, t.shape[1], mha.num_heads, mha.d_k).transpose(1, 2)\n"
                "    q, k, v = split(mha.W_q(x_new)), split(mha.W_k(x_all)), split(mha.W_v(x_all))\n"
                "    cache['k'], cache['v'] = k, v\n" + _C_SCORES + _C_MASK + _C_OUT,
                "recomputes the earlier tokens' keys and values",
            ),
            "projects with the weights directly, not through the layers": (
                _cache(
                    head=_C_HEAD.replace(
                        "q, k, v = split(mha.W_q(x_new)), split(mha.W_k(x_new)), split(mha.W_v(x_new))",
                        "q, k, v = (split(F.linear(x_new, m.weight, m.bias)) for m in (mha.W_q, mha.W_k, mha.W_v))",
                    )
                ),
                "call the layers",
            ),
            "`.view` after `.transpose` to merge the heads": (
                _cache(
                    out="    w = torch.softmax(s, dim=-1)\n    return mha.W_o((w @ v).transpose(1, 2).view(B, T, d)), w\n"
                ),
                "`.view` after `.transpose`",
            ),
            "mask inverted": (
                _cache(mask="    if mask is not None:\n        s = s.masked_fill(mask, float('-inf'))\n"),
                None,
            ),
            "PyTorch's is_causal=True for several new tokens (the top-left mask)": (
                _cache(
                    out=(
                        "    w = torch.softmax(s, dim=-1)\n"
                        "    o = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1)\n"
                        "    return mha.W_o(o.transpose(1, 2).reshape(B, T, d)), w\n"
                    ),
                ),
                "aligned top-left",
            ),
            "the scores returned as the weights (no softmax)": (
                _cache(
                    out="    w = torch.softmax(s, dim=-1)\n    return mha.W_o((w @ v).transpose(1, 2).reshape(B, T, d)), s\n"
                ),
                "the weights for",
            ),
            "weights returned in float32 by a float64 model": (
                _cache(
                    out="    w = torch.softmax(s, dim=-1)\n    return mha.W_o((w @ v).transpose(1, 2).reshape(B, T, d)), w.float()\n"
                ),
                "the weights must be",
            ),
            "keys and values swapped in the cache": (
                _cache(
                    append=(
                        "    if 'k' in cache:\n"
                        "        k = torch.cat([cache['v'], k], dim=2)\n        v = torch.cat([cache['k'], v], dim=2)\n"
                        "    cache['k'], cache['v'] = v, k\n"
                    )
                ),
                None,
            ),
            "scaled by sqrt(d_model)": (_cache(scores="    s = q @ k.transpose(-2, -1) / d ** 0.5\n"), None),
            "appended along the wrong axis": (
                _cache(
                    append=(
                        "    if 'k' in cache:\n"
                        "        k = torch.cat([cache['k'], k], dim=1)\n        v = torch.cat([cache['v'], v], dim=1)\n"
                        "    cache['k'], cache['v'] = k, v\n"
                    )
                ),
                "append along the time axis",
            ),
        },
        "right": {
            "einsum": _cache(
                scores="    s = torch.einsum('bhqd,bhkd->bhqk', q, k) / math.sqrt(mha.d_k)\n",
                out=(
                    "    w = torch.softmax(s, dim=-1)\n"
                    "    return mha.W_o(torch.einsum('bhqk,bhkd->bqhd', w, v).reshape(B, T, d)), w\n"
                ),
            ),
            "store, then read back from the cache": _cache(
                append=(
                    "    cache['k'] = torch.cat([cache['k'], k], dim=2) if 'k' in cache else k\n"
                    "    cache['v'] = torch.cat([cache['v'], v], dim=2) if 'v' in cache else v\n"
                    "    k, v = cache['k'], cache['v']\n"
                )
            ),
            "the smallest finite number as the fill": _cache(
                mask="    if mask is not None:\n        s = s.masked_fill(~mask, torch.finfo(s.dtype).min)\n"
            ),
            "torch's sdpa for the output": _cache(
                out=(
                    "    w = torch.softmax(s, dim=-1)\n"
                    "    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
                    "    return mha.W_o(o.transpose(1, 2).reshape(B, T, d)), w\n"
                )
            ),
            "cache kept in (B, T, d_model) form internally, returned split": _cache(
                append=(
                    "    merge = lambda t: t.transpose(1, 2).reshape(B, -1, d)\n"
                    "    if 'k' in cache:\n"
                    "        k = split2(torch.cat([merge(cache['k']), merge(k)], dim=1))\n"
                    "        v = split2(torch.cat([merge(cache['v']), merge(v)], dim=1))\n"
                    "    cache['k'], cache['v'] = k, v\n"
                ),
                head=_C_HEAD
                + ("    split2 = lambda t: t.view(B, t.shape[1], mha.num_heads, mha.d_k).transpose(1, 2)\n"),
            ),
        },
    },
    "quiz-chunk-mask-count": quiz("q1_answer", right=[18, 18.0], wrong=[6, 21, 28, 15]),
    "quiz-why-cache-exact": quiz("q2_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-cross-attention-source": quiz("q3_answer", right=["c"], wrong=["a", "b", "d"]),
    "quiz-top-k-probability": quiz(
        "q4_answer", right=[0.8808, 0.881, 0.88079708], wrong=[0.842, 0.844, 0.731, 0.622, 0.574]
    ),
    "quiz-cache-numbers": quiz("q5_answer", right=[18432], wrong=[9216, 1536, 27648, 768]),
    "quiz-cached-scores": quiz("q6_answer", right=[101], wrong=[100, 1, 5151, 10201]),
}

# --- what the prose, the model answers and the rubric say about this lesson's own measurements ---------------------
NOT_MEASURED = {
    "16": "settings: 16 windows per step; T ≈ 16 and 256 are the lengths where steps are timed (256 / 16 = 16)",
    "50": "a setting: the held-out loss is measured every 50 steps",
    "32": "a setting: MAX_LEN, the longest text the model reads",
    "1000": "a property of the tests: sample_next at temperature 0 is checked on 1,000 rows",
    "150": "a setting: characters per sample",
    "1.5": "settings: the temperature of the third sample; a logit of Q4",
    "0.5": "settings: a temperature of Q4",
    "24": "a setting: the explorer's map holds 24 characters",
    "256": "a setting: the longest generated text of section 7",
    "12": "a setting of Q5 (GPT-2 small's 12 blocks)",
    "100": "a setting of Q6",
    "90": "the minimal path's expected minutes, counted from the lesson's words and exercise points, not measured by it",
}
