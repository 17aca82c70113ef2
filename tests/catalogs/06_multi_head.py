"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 06."""

from catalog_tools import quiz

_MHA = "def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):\n    h = num_heads\n"
_PROJ = "    Q, K, V = (split_heads(X @ W, h) for W in (W_Q, W_K, W_V))\n"
_SCORES = "    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])\n"
_MASK = "    if mask is not None:\n        s = np.where(mask, s, -np.inf)\n"
_END = "    w = softmax(s)\n    return merge_heads(w @ V) @ W_O, w\n"

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
_F_HEAD = "    def forward(self, x, mask=None):\n        B, T, d = x.shape\n        h, dk = self.num_heads, self.d_k\n"
_F_SPLIT = "        q, k, v = (f(x).view(B, T, h, dk).transpose(1, 2) for f in (self.W_q, self.W_k, self.W_v))\n"
_F_SCORES = "        s = q @ k.transpose(-2, -1) / dk ** 0.5\n"
_F_MASK = "        if mask is not None:\n            s = s.masked_fill(~mask, float('-inf'))\n"
_F_W = "        w = torch.softmax(s, dim=-1)\n"
_F_MERGE = "        o = (w @ v).transpose(1, 2).reshape(B, T, d)\n"
_F_OUT = "        return self.W_o(o), w\n"


def _module(split=_F_SPLIT, scores=_F_SCORES, mask=_F_MASK, merge=_F_MERGE, out=_F_OUT, init=_INIT):
    return init + _F_HEAD + split + scores + mask + _F_W + merge + out


EXERCISES = {
    "split-heads": {
        "wrong": {
            "plain reshape": (
                "def split_heads(X, num_heads):\n    h = num_heads\n"
                "    return X.reshape(*X.shape[:-2], h, X.shape[-2], X.shape[-1] // h)",
                "plain reshape",
            ),
            "columns dealt out in turn": (
                "def split_heads(X, num_heads):\n    h = num_heads\n"
                "    return np.moveaxis(X.reshape(*X.shape[:-1], X.shape[-1] // h, h), -1, -3)",
                "dealt out in turn",
            ),
            "no swap of axes": (
                "def split_heads(X, num_heads):\n    h = num_heads\n    return X.reshape(*X.shape[:-1], h, X.shape[-1] // h)",
                "shape",
            ),
            "only one sequence": (
                "def split_heads(X, num_heads):\n    h = num_heads\n    T, d = X.shape\n"
                "    return X.reshape(T, h, d // h).transpose(1, 0, 2)",
                "any number of leading axes",
            ),
            "wrong axes swapped": (
                "def split_heads(X, num_heads):\n    h = num_heads\n"
                "    return np.swapaxes(X.reshape(*X.shape[:-1], h, X.shape[-1] // h), -1, -3)",
                None,
            ),
        },
        "right": {
            "slices stacked": "def split_heads(X, num_heads):\n    h = num_heads\n    dk = X.shape[-1] // h\n"
            "    return np.stack([X[..., i * dk:(i + 1) * dk] for i in range(h)], axis=-3)",
            "np.split": "def split_heads(X, num_heads):\n    h = num_heads\n    return np.stack(np.split(X, h, axis=-1), axis=-3)",
            "moveaxis": "def split_heads(X, num_heads):\n    h = num_heads\n    return np.moveaxis(X.reshape(*X.shape[:-1], h, -1), -2, -3)",
        },
    },
    "merge-heads": {
        "wrong": {
            "plain reshape": (
                "def merge_heads(heads):\n    H = heads\n"
                "    return H.reshape(*H.shape[:-3], H.shape[-2], H.shape[-3] * H.shape[-1])",
                "plain reshape",
            ),
            "interleaved": (
                "def merge_heads(heads):\n    H = heads\n"
                "    return np.moveaxis(H, -3, -1).reshape(*H.shape[:-3], H.shape[-2], -1)",
                "interleaved",
            ),
            "sum of the heads": ("def merge_heads(heads):\n    H = heads\n    return H.sum(axis=-3)", "shape"),
            "only one sequence": (
                "def merge_heads(heads):\n    H = heads\n    return np.concatenate(list(H), axis=-1)",
                "round trip",
            ),
            "mean of the heads": ("def merge_heads(heads):\n    H = heads\n    return H.mean(axis=-3)", "shape"),
        },
        "right": {
            "concatenate": "def merge_heads(heads):\n    H = heads\n"
            "    return np.concatenate([H[..., i, :, :] for i in range(H.shape[-3])], axis=-1)",
            "moveaxis": "def merge_heads(heads):\n    H = heads\n    return np.moveaxis(H, -3, -2).reshape(*H.shape[:-3], H.shape[-2], -1)",
            "torch inside": "def merge_heads(heads):\n    H = heads\n    t = torch.as_tensor(H)\n"
            "    return t.transpose(-3, -2).reshape(*t.shape[:-3], t.shape[-2], -1).numpy()",
        },
    },
    "mha-numpy": {
        "wrong": {
            "merge without transpose": (
                _MHA + _PROJ + _SCORES + _MASK + "    w = softmax(s)\n    return (w @ V).reshape(X.shape) @ W_O, w\n",
                "merged without swapping",
            ),
            "one shared projection": (
                _MHA + "    dk = X.shape[-1] // h\n"
                "    Q, K, V = (split_heads(np.concatenate([(X @ W)[..., :dk]] * h, axis=-1), h)"
                " for W in (W_Q, W_K, W_V))\n" + _SCORES + _MASK + _END,
                "same columns",
            ),
            "scaled by sqrt(d_model)": (
                _MHA + _PROJ + "    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])\n" + _MASK + _END,
                "sqrt(d_model)",
            ),
            "no W_O": (
                _MHA + _PROJ + _SCORES + _MASK + "    w = softmax(s)\n    return merge_heads(w @ V), w\n",
                "W_O is missing",
            ),
            "mask inverted": (
                _MHA + _PROJ + _SCORES + "    if mask is not None:\n        s = np.where(mask, -np.inf, s)\n" + _END,
                "blocked positions",
            ),
            "mask ignored": (_MHA + _PROJ + _SCORES + _END, "blocked positions"),
            "softmax over the queries": (
                _MHA + _PROJ + _SCORES + _MASK + "    w = softmax(s, axis=-2)\n"
                "    return merge_heads(w @ V) @ W_O, w\n",
                "softmax runs over the queries (axis -2)",
            ),
            "returns (weights, output)": (
                _MHA + _PROJ + _SCORES + _MASK + "    w = softmax(s)\n    return w, merge_heads(w @ V) @ W_O\n",
                "returned (weights, output)",
            ),
            "scaled by d_k, not its root": (
                _MHA + _PROJ + "    s = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]\n" + _MASK + _END,
                None,
            ),
            "no scaling": (
                _MHA + _PROJ + "    s = Q @ np.swapaxes(K, -1, -2)\n" + _MASK + _END,
                "the scores are not scaled",
            ),
            # issue 22: a large negative number in place of -inf passed; every allowed score below -1e10 catches it
            "-1e9 in place of -inf": (
                _MHA + _PROJ + _SCORES + "    if mask is not None:\n        s = np.where(mask, s, -1e9)\n" + _END,
                "-1e9 in place of -inf",
            ),
            "mask after the softmax, rows renormalised": (
                _MHA + _PROJ + _SCORES + "    w = softmax(s)\n    if mask is not None:\n"
                "        w = w * mask\n        w = w / w.sum(axis=-1, keepdims=True)\n"
                "    return merge_heads(w @ V) @ W_O, w\n",
                "NaN or inf",
            ),
            "softmax written out without subtracting the maximum": (
                _MHA + _PROJ + _SCORES + _MASK + "    e = np.exp(s)\n    w = e / e.sum(axis=-1, keepdims=True)\n"
                "    return merge_heads(w @ V) @ W_O, w\n",
                "NaN or inf",
            ),
        },
        "right": {
            "loop over heads": _MHA + "    dk = X.shape[-1] // h\n    outs, ws = [], []\n"
            "    for i in range(h):\n        c = slice(i * dk, (i + 1) * dk)\n"
            "        Q, K, V = X @ W_Q[:, c], X @ W_K[:, c], X @ W_V[:, c]\n"
            "        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(dk)\n"
            "        if mask is not None:\n            s = np.where(mask, s, -np.inf)\n"
            "        w = softmax(s)\n        outs.append(w @ V)\n        ws.append(w)\n"
            "    return np.concatenate(outs, axis=-1) @ W_O, np.stack(ws, axis=-3)\n",
            "torch inside": _MHA + "    t = torch.as_tensor\n"
            "    Q, K, V = (t(split_heads(X @ W, h)) for W in (W_Q, W_K, W_V))\n"
            "    s = Q @ K.transpose(-1, -2) / Q.shape[-1] ** 0.5\n"
            "    if mask is not None:\n        s = s.masked_fill(~t(mask), float('-inf'))\n"
            "    w = torch.softmax(s, dim=-1)\n"
            "    return merge_heads((w @ V).numpy()) @ W_O, w.numpy()\n",
            "float32": _MHA
            + "    X, W_Q, W_K, W_V, W_O = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V, W_O))\n"
            + _PROJ
            + _SCORES
            + _MASK
            + _END,
            "additive mask of 0 and -inf": _MHA
            + _PROJ
            + _SCORES
            + "    if mask is not None:\n        s = s + np.where(mask, 0.0, -np.inf)\n"
            + _END,
            "the smallest float as the fill": _MHA
            + _PROJ
            + _SCORES
            + "    if mask is not None:\n        s = np.where(mask, s, np.finfo(s.dtype).min)\n"
            + _END,
            "einsum": _MHA
            + _PROJ
            + "    s = np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])\n"
            + _MASK
            + "    w = softmax(s)\n    return np.einsum('...td,de->...te', merge_heads(np.einsum('...qk,...kd->...qd', w, V)), W_O), w\n",
            # Charged once: a correct 6.3 keeps its points although 6.1 and 6.2 are wrong (graded with references).
            # Last on purpose: it leaves the broken split_heads / merge_heads in the kernel, which no later
            # exercise of this lesson uses.
            "correct, on top of broken split_heads and merge_heads": (
                "def split_heads(X, num_heads):\n    return X.reshape(*X.shape[:-2], num_heads, X.shape[-2], -1)\n"
                "def merge_heads(heads):\n    return heads.reshape(*heads.shape[:-3], heads.shape[-2], -1)\n"
                + _MHA
                + _PROJ
                + _SCORES
                + _MASK
                + _END
            ),
        },
    },
    "mha-module": {
        "wrong": {
            "merge without transpose": (
                _module(merge="        o = (w @ v).reshape(B, T, d)\n"),
                "merged without the transpose",
            ),
            "split without transpose": (
                _module(split="        q, k, v = (f(x).view(B, h, T, dk) for f in (self.W_q, self.W_k, self.W_v))\n"),
                "split without the transpose",
            ),
            "one shared projection": (
                _module(
                    split="        q, k, v = (f(x)[..., :dk].unsqueeze(1).expand(B, h, T, dk)"
                    " for f in (self.W_q, self.W_k, self.W_v))\n"
                ),
                "same projection",
            ),
            "scaled by sqrt(d_model)": (
                _module(scores="        s = q @ k.transpose(-2, -1) / d ** 0.5\n"),
                "sqrt(d_model)",
            ),
            "no W_o": (_module(out="        return o, w\n"), "W_o is not applied"),
            # issue 32: these two were told a list of usual causes; the message now names each
            "softmax over dim -2 (the queries)": (
                _module().replace(_F_W, "        w = torch.softmax(s, dim=-2)\n"),
                "softmax runs over the queries (dim -2)",
            ),
            "scaled by sqrt(d_model), read from x": (
                _module(scores="        s = q @ k.transpose(-2, -1) / x.shape[-1] ** 0.5\n"),
                "the scores are divided by sqrt(d_model)",
            ),
            "mask inverted": (
                _module(mask="        if mask is not None:\n            s = s.masked_fill(mask, float('-inf'))\n"),
                "mask is inverted",
            ),
            # Lessons 10 and 11 call mha(x, mask), run it after .double() and copy weights with load_state_dict.
            "mask keyword-only": (
                _module().replace("def forward(self, x, mask=None)", "def forward(self, x, *, mask=None)"),
                "positional argument",
            ),
            "computes in float32": (
                _module().replace("        B, T, d = x.shape\n", "        x = x.float()\n        B, T, d = x.shape\n"),
                "after .double()",
            ),
            "float32 buffer for the heads": (
                _module(
                    merge="        o = torch.zeros(B, T, d)\n"
                    "        o.view(B, T, h, dk).copy_((w @ v).transpose(1, 2))\n"
                ),
                "after .double()",
            ),
            "a registered buffer": (
                _INIT
                + "        self.register_buffer('scale', torch.tensor(self.d_k ** -0.5))\n"
                + _F_HEAD
                + _F_SPLIT
                + "        s = q @ k.transpose(-2, -1) * self.scale\n"
                + _F_MASK
                + _F_W
                + _F_MERGE
                + _F_OUT,
                "state_dict()",
            ),
            "never a bias": (_module(init=_INIT.replace("bias=bias", "bias=False")), "with a bias by default"),
            "detached": (_module(out="        return self.W_o(o.detach()), w\n"), "no gradient reaches"),
            "returns (weights, output)": (_module(out="        return w, self.W_o(o)\n"), "returned (weights, output)"),
            "-1e9 in place of -inf": (
                _module(mask="        if mask is not None:\n            s = s.masked_fill(~mask, -1e9)\n"),
                "-1e9 in place of -inf",
            ),
            "bias ignored (always on)": (_module(init=_INIT.replace("bias=bias", "bias=True")), "with bias=False"),
            "weights averaged over the heads": (
                _module(out="        return self.W_o(o), w.mean(dim=1)\n"),
                "should have shape (2, 3, 6, 6)",
            ),
            "forward(x, mask) without a default": (
                _module().replace("def forward(self, x, mask=None)", "def forward(self, x, mask)"),
                "missing 1 required positional argument",
            ),
        },
        "right": {
            "loop over heads": _module(
                split="",
                scores="",
                mask="",
                merge="",
                out=(
                    "        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)\n        outs, ws = [], []\n"
                    "        for i in range(h):\n            c = slice(i * dk, (i + 1) * dk)\n"
                    "            s = Q[..., c] @ K[..., c].transpose(-2, -1) / dk ** 0.5\n"
                    "            if mask is not None:\n                s = s.masked_fill(~mask, float('-inf'))\n"
                    "            a = torch.softmax(s, dim=-1)\n            outs.append(a @ V[..., c])\n            ws.append(a)\n"
                    "        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(ws, dim=1)\n"
                ),
            ).replace(_F_W, ""),
            "einsum": _module(
                scores="        s = torch.einsum('bhqd,bhkd->bhqk', q, k) / math.sqrt(dk)\n",
                merge="        o = torch.einsum('bhqk,bhkd->bqhd', w, v).reshape(B, T, d)\n",
            ).replace("class MultiHeadAttention", "import math\nclass MultiHeadAttention"),
            "additive mask in the input's dtype": _module(
                mask="        if mask is not None:\n"
                "            s = s + torch.zeros(T, T, dtype=x.dtype).masked_fill(~mask, float('-inf'))\n"
            ),
            "additive float32 mask of 0 and -inf": _module(
                mask="        if mask is not None:\n"
                "            s = s + torch.zeros(T, T).masked_fill(~mask, float('-inf'))\n"
            ),
            "the smallest float as the fill": _module(
                mask="        if mask is not None:\n            s = s.masked_fill(~mask, torch.finfo(s.dtype).min)\n"
            ),
            "blocked scores set in place": _module(
                mask="        if mask is not None:\n            s[..., ~mask] = float('-inf')\n"
            ),
            "PyTorch's functional multi-head attention on the four layers": _INIT.replace(
                "class MultiHeadAttention", "import torch.nn.functional as F\nclass MultiHeadAttention"
            )
            + "    def forward(self, x, mask=None):\n        t = x.transpose(0, 1)\n"
            "        W = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])\n"
            "        b = None if self.W_q.bias is None else torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])\n"
            "        o, w = F.multi_head_attention_forward(t, t, t, t.shape[-1], self.num_heads, W, b, None, None, False,"
            " 0.0, self.W_o.weight, self.W_o.bias, attn_mask=None if mask is None else ~mask,"
            " average_attn_weights=False)\n"
            "        return o.transpose(0, 1), w\n",
            "torch's sdpa for the output": _module(
                merge="        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)"
                ".transpose(1, 2).reshape(B, T, d)\n"
            ),
        },
    },
    "quiz-head-size": quiz("q1_answer", right=[64, 64.0], wrong=[8, 512, 4096]),
    "quiz-param-count": quiz("q2_answer", right=[1050624], wrong=[1048576, 8404992, 131328]),
    "quiz-wo-shape": quiz("q3_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-memory": quiz("q4_answer", right=[8388608, 8 * 1024**2], wrong=[1048576, 8192, 65536]),
    "quiz-params-vs-heads": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-merge-mistake": quiz("q6_answer", right=["c"], wrong=["a", "b", "d"]),
}

# Run in the solved kernel after the notebook: what the prose, the model answer and the rubric say about the lesson's
# own measurements.
NOT_MEASURED = {
    "2019": "the year of Clark et al.'s study of BERT's heads",
    "64": "Q7's head width, a setting of the question",
    "512": "Q7's model width, a setting of the question",
}
