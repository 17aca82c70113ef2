"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 09, and CLAIMS: test-only checks that what the
lesson's prose says about its measurements holds in the solution's run."""

from catalog_tools import quiz


def _allowed(body):
    return "def allowed_from_padding(key_padding_mask):\n" + body


_MODEL_HEAD = """class TinyTransformer(nn.Module):
    def __init__(self, parts, vocab_size=VOCAB, n_classes=N_CLASSES, d_model=D_MODEL, n_heads=N_HEADS,
                 n_layers=N_LAYERS, d_ff=D_FF, max_len=MAX_LEN, use_pe=True):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        table = parts.positional_encoding(max_len, d_model) if use_pe else torch.zeros(max_len, d_model)
        self.register_buffer("pe", torch.as_tensor(table, dtype=torch.float32))
        self.blocks = nn.ModuleList([parts.block(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.final_norm = parts.norm(d_model)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, tokens, key_padding_mask=None):
"""


def _model(body):
    return _MODEL_HEAD + body


def _forward(
    stream="self.embed(tokens) + self.pe[:T]",
    mask="None if key_padding_mask is None else allowed_from_padding(key_padding_mask)",
    call="x = block(x, mask)",
    end="self.head(self.final_norm(x))",
):
    return _model(
        f"        T = tokens.shape[1]\n        x = {stream}\n        mask = {mask}\n"
        f"        for block in self.blocks:\n            {call}\n        return {end}"
    )


def _step(body):
    return "def train_step(model, optimizer, tokens, targets, key_padding_mask):\n" + body


def _standard_step(
    loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)",
    call="model(tokens, key_padding_mask)",
    zero="    optimizer.zero_grad()\n",
    step="    optimizer.step()\n",
    result="loss.item()",
):
    return _step(f"{zero}    logits = {call}\n    loss = {loss}\n    loss.backward()\n{step}    return {result}")


EXERCISES = {
    "allowed-from-padding": {
        "wrong": {
            "the wrong way round": (
                _allowed(
                    "    B, T = key_padding_mask.shape\n"
                    "    return key_padding_mask[:, None, None, :].expand(B, 1, T, T)"
                ),
                "wrong way round",
            ),
            "masks the queries": (
                _allowed(
                    "    B, T = key_padding_mask.shape\n"
                    "    return (~key_padding_mask)[:, None, :, None].expand(B, 1, T, T)"
                ),
                "queries (rows)",
            ),
            "also blocks padded queries": (
                _allowed("    real = ~key_padding_mask\n    return real[:, None, :, None] & real[:, None, None, :]"),
                "padded queries must keep",
            ),
            "no heads and query axes": (_allowed("    return ~key_padding_mask"), "(2, 1, 4, 4)"),
            "no heads axis": (
                _allowed(
                    "    B, T = key_padding_mask.shape\n    return (~key_padding_mask)[:, None, :].expand(B, T, T)"
                ),
                "(2, 1, 4, 4)",
            ),
            "query axis not expanded": (_allowed("    return (~key_padding_mask)[:, None, None, :]"), "(2, 1, 4, 4)"),
            "float mask": (
                _allowed(
                    "    B, T = key_padding_mask.shape\n"
                    "    return (~key_padding_mask)[:, None, None, :].expand(B, 1, T, T).float()"
                ),
                "boolean",
            ),
            "changes its input": (
                _allowed(
                    "    B, T = key_padding_mask.shape\n    key_padding_mask.logical_not_()\n"
                    "    return key_padding_mask[:, None, None, :].expand(B, 1, T, T)"
                ),
                "do not change",
            ),
        },
        "right": {
            "loops": _allowed(
                "    B, T = key_padding_mask.shape\n"
                "    allowed = torch.zeros(B, 1, T, T, dtype=torch.bool)\n"
                "    for b in range(B):\n        for i in range(T):\n            for j in range(T):\n"
                "                allowed[b, 0, i, j] = not key_padding_mask[b, j]\n    return allowed"
            ),
            "repeat and unsqueeze": _allowed(
                "    T = key_padding_mask.shape[1]\n"
                "    return torch.logical_not(key_padding_mask).unsqueeze(1).unsqueeze(1)"
                ".repeat(1, 1, T, 1)"
            ),
            "comparison and broadcast_to": _allowed(
                "    B, T = key_padding_mask.shape\n"
                "    return torch.broadcast_to((key_padding_mask == False)"
                ".reshape(B, 1, 1, T), (B, 1, T, T)).clone()"
            ),
            "view and expand with -1": _allowed(
                "    B, T = key_padding_mask.shape\n"
                "    return torch.logical_not(key_padding_mask).view(B, 1, 1, T).expand(-1, -1, T, -1)"
            ),
            "einsum of ones": _allowed(
                "    B, T = key_padding_mask.shape\n"
                "    real = (~key_padding_mask).float()\n"
                "    return torch.einsum('i,bj->bij', torch.ones(T), real)[:, None] > 0.5"
            ),
        },
    },
    "tiny-transformer": {
        "wrong": {
            "no positional encoding": (_forward(stream="self.embed(tokens)"), "positional encoding is missing"),
            "encoding multiplied": (_forward(stream="self.embed(tokens) * self.pe[:T]"), "not multiplied"),
            "blocks reversed": (
                _model(
                    "        T = tokens.shape[1]\n        x = self.embed(tokens) + self.pe[:T]\n"
                    "        mask = None if key_padding_mask is None else "
                    "allowed_from_padding(key_padding_mask)\n"
                    "        for block in reversed(self.blocks):\n            x = block(x, mask)\n"
                    "        return self.head(self.final_norm(x))"
                ),
                "what block 1 receives",
            ),
            "every block reads the embedding": (
                _forward(call="y = block(x, mask)", end="self.head(self.final_norm(y))"),
                "feed each block's output",
            ),
            "final layer norm missing": (_forward(end="self.head(x)"), "final layer norm is missing"),
            "head missing": (_forward(end="self.final_norm(x)"), "head is missing"),
            "softmax at the end": (_forward(end="torch.softmax(self.head(self.final_norm(x)), -1)"), "logits"),
            "mask passed unconverted": (_forward(mask="key_padding_mask"), "allowed_from_padding(key_padding_mask)"),
            "mask dropped": (_forward(call="x = block(x)"), "allowed_from_padding(key_padding_mask)"),
            "always converts": (_forward(mask="allowed_from_padding(key_padding_mask)"), None),
            "encoding of the last positions": (_forward(stream="self.embed(tokens) + self.pe[-T:]"), None),
            "encoding sliced by the batch size": (
                _forward(stream="self.embed(tokens) + self.pe[: tokens.shape[0]]"),
                "what block 1 receives",
            ),
            "encoding added after the blocks": (
                _forward(stream="self.embed(tokens)", end="self.head(self.final_norm(x + self.pe[:T]))"),
                "positional encoding is missing",
            ),
            "embedding scaled by sqrt(d_model)": (
                _forward(stream="self.embed(tokens) * self.embed.embedding_dim ** 0.5 + self.pe[:T]"),
                "what block 1 receives",
            ),
            "final layer norm after every block": (
                _forward(call="x = self.final_norm(block(x, mask))", end="self.head(x)"),
                None,
            ),
            "adds x to the block's output again": (_forward(call="x = x + block(x, mask)"), "what block 2 receives"),
            "conversion written inline, the wrong way round": (
                _forward(mask="None if key_padding_mask is None else key_padding_mask[:, None, None, :]"),
                "wrong way round",
            ),
        },
        "right": {
            # the checks look at the mask each block receives, not at the call (issue 32)
            "conversion written inline": _forward(
                mask="None if key_padding_mask is None else (~key_padding_mask)[:, None, None, :].expand(-1, 1, T, -1)"
            ),
            "reduce and keyword": _model(
                "        import functools\n"
                "        mask = allowed_from_padding(key_padding_mask) if key_padding_mask is not None else None\n"
                "        x = self.embed(tokens) + self.pe[: tokens.size(1)].unsqueeze(0)\n"
                "        x = functools.reduce(lambda h, block: block(h, mask=mask), self.blocks, x)\n"
                "        return self.head(self.final_norm(x))"
            ),
            "convert inside the loop, explicit head": _model(
                "        B, T = tokens.shape\n"
                "        x = self.embed.weight[tokens] + self.pe[torch.arange(T)]\n"
                "        for i in range(len(self.blocks)):\n"
                "            m = None if key_padding_mask is None else allowed_from_padding(key_padding_mask)\n"
                "            x = self.blocks[i](x, m)\n"
                "        x = self.final_norm(x)\n"
                "        return x @ self.head.weight.T + self.head.bias"
            ),
            "encoding through index_select": _forward(
                stream="self.embed(tokens) + self.pe.index_select(0, torch.arange(T))"
            ),
            "one-hot embedding": _model(
                "        T = tokens.shape[-1]\n"
                "        x = F.one_hot(tokens, self.embed.num_embeddings).to(self.embed.weight.dtype) @ self.embed.weight\n"
                "        x = x + self.pe[:T]\n"
                "        mask = key_padding_mask if key_padding_mask is None else allowed_from_padding(key_padding_mask)\n"
                "        for block in self.blocks:\n            x = block(x, mask)\n"
                "        return self.head(self.final_norm(x))"
            ),
        },
    },
    "train-step": {
        "wrong": {
            "no zero_grad": (_standard_step(zero=""), "zero_grad"),
            "ignore_index missing": (
                _standard_step(loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))"),
                "ignore_index=IGNORE",
            ),
            "mean over every position": (
                _standard_step(
                    loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), "
                    "ignore_index=IGNORE, reduction='sum') / targets.numel()"
                ),
                "average over the positions",
            ),
            "summed loss": (
                _standard_step(
                    loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                    "targets.reshape(-1), ignore_index=IGNORE, reduction='sum')"
                ),
                "summed",
            ),
            "IGNORE counted as class 0": (
                _standard_step(
                    loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.clamp(min=0).reshape(-1))"
                ),
                None,
            ),
            "returns the tensor": (_standard_step(result="loss"), "Python float"),
            "model without the mask": (_standard_step(call="model(tokens)"), "model(tokens, key_padding_mask)"),
            "loss on probabilities": (
                _standard_step(
                    loss="F.cross_entropy(torch.softmax(logits, -1).reshape("
                    "-1, logits.shape[-1]), targets.reshape(-1), "
                    "ignore_index=IGNORE)"
                ),
                "probabilities",
            ),
            "targets transposed": (
                _standard_step(
                    loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                    "targets.T.reshape(-1), ignore_index=IGNORE)"
                ),
                None,
            ),
            "no optimizer step": (_standard_step(step=""), "did not change"),
            "zero_grad between backward and step": (
                _standard_step(zero="", step="    optimizer.zero_grad()\n    optimizer.step()\n"),
                "did not change",
            ),
            "model called twice": (
                _step(
                    "    optimizer.zero_grad()\n    with torch.no_grad():\n        model(tokens, key_padding_mask)\n"
                    "    logits = model(tokens, key_padding_mask)\n"
                    "    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), "
                    "ignore_index=IGNORE)\n    loss.backward()\n    optimizer.step()\n    return loss.item()"
                ),
                "once",
            ),
            "mean of the sequences' mean losses": (
                _standard_step(
                    loss="torch.stack([F.cross_entropy(l, t, ignore_index=IGNORE) for l, t in zip(logits, targets)]).mean()"
                ),
                None,
            ),
        },
        "right": {
            "zero_grad after step": _step(
                "    logits = model(tokens, key_padding_mask)\n"
                "    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), "
                "ignore_index=IGNORE)\n"
                "    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n"
                "    return loss.item()"
            ),
            "(B, C, T) layout": _step(
                "    optimizer.zero_grad(set_to_none=False)\n"
                "    loss = F.cross_entropy(model(tokens, key_padding_mask).transpose(1, 2), "
                "targets, ignore_index=IGNORE)\n"
                "    loss.backward()\n    optimizer.step()\n    return float(loss)"
            ),
            "masked log_softmax and gather": _step(
                "    model.zero_grad()\n"
                "    logp = torch.log_softmax(model(tokens, key_padding_mask), dim=-1)\n"
                "    keep = targets != IGNORE\n"
                "    loss = -logp[keep].gather(-1, targets[keep].unsqueeze(-1)).mean()\n"
                "    loss.backward()\n    optimizer.step()\n"
                "    return loss.detach().item()"
            ),
            "IGNORE mapped to PyTorch's default -100": _standard_step(
                loss="F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                "targets.masked_fill(targets == IGNORE, -100).reshape(-1))"
            ),
            "nll_loss with the mask as keyword": _step(
                "    optimizer.zero_grad()\n"
                "    logits = model(tokens, key_padding_mask=key_padding_mask)\n"
                "    loss = F.nll_loss(F.log_softmax(logits, -1).reshape(-1, logits.shape[-1]), targets.reshape(-1), "
                "ignore_index=IGNORE)\n    loss.backward()\n    optimizer.step()\n    return loss.item()"
            ),
        },
    },
    "quiz-path-length": quiz("q1_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-best-score": quiz("q2_answer", right=[4, 4.0], wrong=[3, 6, 2]),
    "quiz-score-std": quiz("q3_answer", right=[8, 8.0], wrong=[64, 1, 0.125]),
    "quiz-masked-weight": quiz("q4_answer", right=[1 / 3, 0.33, 0.333], wrong=[0.25, 0.5, 1.0]),
    "quiz-attention-params": quiz("q5_answer", right=[4096], wrong=[3072, 2048, 4224, 1024]),
    "quiz-head-size": quiz("q6_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-permutation": quiz("q7_answer", right=["c"], wrong=["a", "b", "d"]),
    "quiz-mask-row": quiz("q8_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-pre-ln": quiz("q9_answer", right=["a"], wrong=["b", "c", "d"]),
    "quiz-loss-positions": quiz("q10_answer", right=[4, 4.0], wrong=[16, 8, 6, 2]),
    "quiz-why-no-pe-fails": quiz("q11_answer", right=["b"], wrong=["a", "c", "d"]),
}

# Run in the kernel that executed the solution notebook (tests/test_lessons.py): every number and comparison the
# prose, the model answer and the rubric state about the lesson's own measurements, checked against this run. Not in
# the notebook, where a correct but numerically different student model could trip an assertion.

NOT_MEASURED = {
    "60": "an estimate: minutes for the minimal path",
    "90": "an estimate: minutes for the minimal path",
    "25": "a definition: 5 x 5 = 25 classes",
    "100": "a setting: training steps (and 100 % in a range)",
    "200": "a setting: the number of test sequences compared",
    "500": "a quiz question's text length",
    "499": "a quiz question's options",
    "32": "a setting: d_model",
    "16": "a setting: d_k",
}
