"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 09."""
from catalog_tools import quiz

_FRONT_HEAD = '''class FrontEnd(nn.Module):
    def __init__(self, vocab_size, d_model, use_pe=True):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d_model, self.use_pe = d_model, use_pe

    def forward(self, tokens):
'''

_BLOCK_HEAD = '''class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, scale=True, residual=True, layer_norm=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1 = nn.LayerNorm(d_model) if layer_norm else nn.Identity()
        self.norm2 = nn.LayerNorm(d_model) if layer_norm else nn.Identity()
        self.residual = residual
        self.query_gain = 1.0 if scale else math.sqrt(d_model // n_heads)
        self.last_weights = None

    def self_attention(self, x, pad_mask=None):
        out, weights = self.attn(x * self.query_gain, x, x, key_padding_mask=pad_mask,
                                 need_weights=True, average_attn_weights=False)
        self.last_weights = weights.detach()
        return out

    def forward(self, x, pad_mask=None):
'''

_MODEL_HEAD = '''class TinyTransformer(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, d_ff,
                 use_pe=True, scale=True, residual=True, layer_norm=True):
        super().__init__()
        self.front = FrontEnd(vocab_size, d_model, use_pe)
        self.blocks = nn.ModuleList([EncoderBlock(d_model, n_heads, d_ff, scale, residual, layer_norm)
                                     for _ in range(n_layers)])
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, pad_mask=None):
'''


def _front(body):
    return _FRONT_HEAD + body


def _block(body):
    return _BLOCK_HEAD + body


def _model(body):
    return _MODEL_HEAD + body


def _pe(body):
    return "def positional_encoding(T, d_model):\n" + body


def _step(body):
    return "def train_step(model, optimizer, tokens, targets):\n" + body


_PE_PRELUDE = ("    p = torch.arange(T, dtype=torch.float32)[:, None]\n"
               "    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)\n")

EXERCISES = {
    "positional-encoding": {
        "wrong": {
            "sin and cos swapped": (_pe(_PE_PRELUDE + "    a = p / 10000 ** (two_i / d_model)\n"
                                        "    pe = torch.zeros(T, d_model)\n"
                                        "    pe[:, 0::2], pe[:, 1::2] = torch.cos(a), torch.sin(a)\n    return pe"),
                                    "sin and cos are swapped"),
            "two halves": (_pe(_PE_PRELUDE + "    a = p / 10000 ** (two_i / d_model)\n"
                               "    return torch.cat([torch.sin(a), torch.cos(a)], 1)"), "two halves"),
            "frequency per column": (_pe("    p = torch.arange(T, dtype=torch.float32)[:, None]\n"
                                         "    a = p / 10000 ** (torch.arange(d_model, dtype=torch.float32) / d_model)\n"
                                         "    pe = torch.sin(a)\n    pe[:, 1::2] = torch.cos(a[:, 1::2])\n    return pe"),
                                     "column index j"),
            "positions from 1": (_pe("    p = torch.arange(1, T + 1, dtype=torch.float32)[:, None]\n"
                                     "    a = p / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)\n"
                                     "    pe = torch.zeros(T, d_model)\n"
                                     "    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)\n    return pe"),
                                 "positions start at 1"),
            "numpy array": (_pe("    p = np.arange(T)[:, None]\n    a = p / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
                                "    pe = np.zeros((T, d_model))\n    pe[:, 0::2], pe[:, 1::2] = np.sin(a), np.cos(a)\n"
                                "    return pe"), "torch tensor"),
            "float64 tensor": (_pe("    p = torch.arange(T, dtype=torch.float64)[:, None]\n"
                                   "    a = p / 10000 ** (torch.arange(0, d_model, 2).double() / d_model)\n"
                                   "    pe = torch.zeros(T, d_model, dtype=torch.float64)\n"
                                   "    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)\n    return pe"), "float32"),
            "base 1000": (_pe(_PE_PRELUDE + "    a = p / 1000 ** (two_i / d_model)\n    pe = torch.zeros(T, d_model)\n"
                              "    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)\n    return pe"), "base"),
        },
        "right": {
            "loops with math": _pe("    pe = torch.zeros(T, d_model)\n    for p in range(T):\n"
                                   "        for i in range(0, d_model, 2):\n"
                                   "            pe[p, i] = math.sin(p / 10000 ** (i / d_model))\n"
                                   "            pe[p, i + 1] = math.cos(p / 10000 ** (i / d_model))\n    return pe"),
            "exp-log form": _pe(_PE_PRELUDE + "    a = p * torch.exp(-math.log(10000.0) * two_i / d_model)\n"
                                "    return torch.stack([torch.sin(a), torch.cos(a)], dim=-1).reshape(T, d_model)"),
            "numpy then torch": _pe("    p = np.arange(T)[:, None]\n    a = p / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
                                    "    pe = np.zeros((T, d_model))\n    pe[:, 0::2], pe[:, 1::2] = np.sin(a), np.cos(a)\n"
                                    "    return torch.from_numpy(pe).float()"),
        },
    },
    "front-end": {
        "wrong": {
            "no positional encoding": (_front("        return self.embed(tokens)"), "positional encoding is missing"),
            "ignores use_pe": (_front("        return self.embed(tokens) + positional_encoding(tokens.shape[-1], self.d_model)"),
                               "use_pe = False"),
            "scaled embeddings": (_front("        x = self.embed(tokens) * math.sqrt(self.d_model)\n"
                                         "        return x + positional_encoding(tokens.shape[-1], self.d_model) if self.use_pe else x"),
                                  "scaled by √d_model"),
            "multiplied": (_front("        x = self.embed(tokens)\n"
                                  "        return x * positional_encoding(tokens.shape[-1], self.d_model) if self.use_pe else x"),
                           "multiplied"),
            "T from the batch axis": (_front("        x = self.embed(tokens)\n"
                                             "        return x + positional_encoding(tokens.shape[0], self.d_model)[:, None] "
                                             "if self.use_pe else x"), None),
        },
        "right": {
            "index the table": _front("        x = self.embed.weight[tokens]\n        if self.use_pe:\n"
                                      "            x = x + positional_encoding(tokens.shape[1], self.d_model)[None]\n        return x"),
            "one-hot product": _front("        x = F.one_hot(tokens, self.embed.num_embeddings).float() @ self.embed.weight\n"
                                      "        pe = positional_encoding(tokens.shape[-1], self.d_model)\n"
                                      "        return x + pe * float(self.use_pe)"),
        },
    },
    "encoder-block": {
        "wrong": {
            "pre-LN": (_block("        x = x + self.self_attention(self.norm1(x), pad_mask)\n"
                              "        return x + self.ff(self.norm2(x))"), "pre-LN"),
            "norm before the addition": (_block("        h = x + self.norm1(self.self_attention(x, pad_mask))\n"
                                                "        return h + self.norm2(self.ff(h))"), "before the addition"),
            "no residual around the FFN": (_block("        h = self.norm1(x + self.self_attention(x, pad_mask))\n"
                                                  "        return self.norm2(self.ff(h))"), None),
            "always residual": (_block("        h = self.norm1(x + self.self_attention(x, pad_mask))\n"
                                       "        return self.norm2(h + self.ff(h))"), "drop both residual additions"),
            "mask not passed": (_block("        h = self.self_attention(x)\n        h = self.norm1(x + h if self.residual else h)\n"
                                       "        f = self.ff(h)\n        return self.norm2(h + f if self.residual else f)"),
                                "pad_mask"),
            "calls self.attn directly": (_block("        h = self.attn(x, x, x, key_padding_mask=pad_mask)[0]\n"
                                                "        h = self.norm1(x + h if self.residual else h)\n"
                                                "        f = self.ff(h)\n        return self.norm2(h + f if self.residual else f)"),
                                         "self.self_attention"),
            "second norm missing": (_block("        h = self.self_attention(x, pad_mask)\n"
                                           "        h = self.norm1(x + h if self.residual else h)\n"
                                           "        f = self.ff(h)\n        return h + f if self.residual else f"), None),
        },
        "right": {
            "skip factor": _block("        skip = 1.0 if self.residual else 0.0\n"
                                  "        h = self.norm1(skip * x + self.self_attention(x, pad_mask))\n"
                                  "        return self.norm2(skip * h + self.ff(h))"),
            "sublayer helper": _block("        def sub(f, norm, v):\n            out = f(v)\n"
                                      "            return norm(v + out) if self.residual else norm(out)\n"
                                      "        h = sub(lambda v: self.self_attention(v, pad_mask), self.norm1, x)\n"
                                      "        return sub(self.ff, self.norm2, h)"),
            "explicit if": _block("        if self.residual:\n            h = self.norm1(x + self.self_attention(x, pad_mask))\n"
                                  "            return self.norm2(h + self.ff(h))\n"
                                  "        h = self.norm1(self.self_attention(x, pad_mask))\n        return self.norm2(self.ff(h))"),
        },
    },
    "tiny-transformer": {
        "wrong": {
            "blocks reversed": (_model("        x = self.front(tokens)\n        for b in reversed(self.blocks):\n"
                                       "            x = b(x, pad_mask)\n        return self.head(x)"), "reverse order"),
            "each block reads the front end": (_model("        x = self.front(tokens)\n        for b in self.blocks:\n"
                                                      "            y = b(x, pad_mask)\n        return self.head(y)"),
                                               "feed each block's output"),
            "no head": (_model("        x = self.front(tokens)\n        for b in self.blocks:\n"
                               "            x = b(x, pad_mask)\n        return x"), None),
            "softmax at the end": (_model("        x = self.front(tokens)\n        for b in self.blocks:\n"
                                          "            x = b(x, pad_mask)\n        return torch.softmax(self.head(x), -1)"),
                                   "logits"),
            "mask dropped": (_model("        x = self.front(tokens)\n        for b in self.blocks:\n"
                                    "            x = b(x)\n        return self.head(x)"), None),
            "first block only": (_model("        return self.head(self.blocks[0](self.front(tokens), pad_mask))"), None),
        },
        "right": {
            "reduce": _model("        import functools\n"
                             "        x = functools.reduce(lambda h, b: b(h, pad_mask), self.blocks, self.front(tokens))\n"
                             "        return self.head(x)"),
            "index loop and keyword": _model("        x = self.front(tokens)\n        for i in range(len(self.blocks)):\n"
                                             "            x = self.blocks[i](x, pad_mask=pad_mask)\n"
                                             "        return x @ self.head.weight.T + self.head.bias"),
        },
    },
    "train-step": {
        "wrong": {
            "no zero_grad": (_step("    logits = model(tokens)\n"
                                   "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n"
                                   "    loss.backward()\n    optimizer.step()\n    return loss.item()"), "zero_grad"),
            "returns the tensor": (_step("    optimizer.zero_grad()\n    logits = model(tokens)\n"
                                         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n"
                                         "    loss.backward()\n    optimizer.step()\n    return loss"), "Python float"),
            "loss on probabilities": (_step("    optimizer.zero_grad()\n    p = torch.softmax(model(tokens), -1)\n"
                                            "    loss = F.cross_entropy(p.reshape(-1, p.shape[-1]), targets.reshape(-1))\n"
                                            "    loss.backward()\n    optimizer.step()\n    return loss.item()"),
                                      "probabilities"),
            "targets transposed": (_step("    optimizer.zero_grad()\n    logits = model(tokens)\n"
                                         "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.T.reshape(-1))\n"
                                         "    loss.backward()\n    optimizer.step()\n    return loss.item()"), "different order"),
            "no optimizer step": (_step("    optimizer.zero_grad()\n    logits = model(tokens)\n"
                                        "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n"
                                        "    loss.backward()\n    return loss.item()"), "did not change"),
            "summed loss": (_step("    optimizer.zero_grad()\n    logits = model(tokens)\n"
                                  "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), "
                                  "reduction='sum')\n    loss.backward()\n    optimizer.step()\n    return loss.item()"), None),
        },
        "right": {
            "(B, V, T) layout": _step("    optimizer.zero_grad()\n"
                                      "    loss = F.cross_entropy(model(tokens).transpose(1, 2), targets)\n"
                                      "    loss.backward()\n    optimizer.step()\n    return float(loss)"),
            "log_softmax and gather": _step("    optimizer.zero_grad(set_to_none=True)\n"
                                            "    logp = torch.log_softmax(model(tokens), dim=-1)\n"
                                            "    loss = -logp.gather(-1, targets.unsqueeze(-1)).mean()\n"
                                            "    loss.backward()\n    optimizer.step()\n    return loss.item()"),
            "nll_loss on flattened": _step("    model.zero_grad()\n    logits = model(tokens).flatten(0, 1)\n"
                                           "    loss = F.nll_loss(F.log_softmax(logits, -1), targets.flatten())\n"
                                           "    loss.backward()\n    optimizer.step()\n    return loss.detach().item()"),
        },
    },
    "quiz-path-length": quiz("q1_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-best-score": quiz("q2_answer", right=[4, 4.0], wrong=[3, 6, 2]),
    "quiz-score-std": quiz("q3_answer", right=[8, 8.0], wrong=[64, 1, 0.125]),
    "quiz-masked-weight": quiz("q4_answer", right=[1 / 3, 0.33, 0.333], wrong=[0.25, 0.5, 1.0]),
    "quiz-attention-params": quiz("q5_answer", right=[16384], wrong=[12288, 8192, 16640]),
    "quiz-head-size": quiz("q6_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-permutation": quiz("q7_answer", right=["c"], wrong=["a", "b", "d"]),
    "quiz-post-ln": quiz("q8_answer", right=["c"], wrong=["a", "b", "d"]),
    "quiz-why-no-pe-fails": quiz("q9_answer", right=["b"], wrong=["a", "c", "d"]),
}
