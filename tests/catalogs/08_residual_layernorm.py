"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 08."""

from catalog_tools import quiz


def _ln(body):
    return "def layer_norm(x, gamma, beta, eps=1e-5):\n" + body


def _ffn(body):
    return "def feed_forward(x, W1, b1, W2, b2):\n" + body


_BLOCK = """class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False, eps=1e-5, residual=True, layer_norm=True):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm_first, self.residual, self.layer_norm = norm_first, residual, layer_norm

    def attend(self, x):
        return self.self_attn(x, x, x, need_weights=False)[0]

    def ffn(self, x):
        return self.linear2(torch.relu(self.linear1(x)))

    def forward(self, x):
"""


def _block(body):
    return _BLOCK + "".join("        " + line + "\n" for line in body.strip().splitlines())


# Correct blocks that honour both switches; `{attend}` is how the attention sublayer is computed.
_SWITCHED = """n = (lambda z, ln: ln(z)) if self.layer_norm else (lambda z, ln: z)
for f, ln in (({attend}, self.norm1), (self.ffn, self.norm2)):
    skip = x if self.residual else 0
    x = skip + f(n(x, ln)) if self.norm_first else n(skip + f(x), ln)
return x"""
_PRE = "x = x + self.attend(self.norm1(x))\nx = x + self.ffn(self.norm2(x))\nreturn x"
_POST = "x = self.norm1(x + self.attend(x))\nx = self.norm2(x + self.ffn(x))\nreturn x"


EXERCISES = {
    "layer-norm": {
        "wrong": {
            "unbiased variance": (
                _ln(
                    "    m = x.mean(-1, keepdim=True)\n"
                    "    return gamma * (x - m) / torch.sqrt(x.var(-1, keepdim=True) + eps) + beta"
                ),
                "unbiased",
            ),
            "eps outside the root": (
                _ln(
                    "    m = x.mean(-1, keepdim=True)\n"
                    "    return gamma * (x - m) / (x.std(-1, unbiased=False, keepdim=True) + eps) + beta"
                ),
                "outside the square root",
            ),
            "no eps": (
                _ln(
                    "    m = x.mean(-1, keepdim=True)\n"
                    "    return gamma * (x - m) / x.var(-1, unbiased=False, keepdim=True).sqrt() + beta"
                ),
                "eps is missing",
            ),
            "batch norm (axis 0)": (
                _ln(
                    "    m = x.mean(0, keepdim=True)\n"
                    "    return gamma * (x - m) / torch.sqrt(x.var(0, unbiased=False, keepdim=True) + eps) + beta"
                ),
                None,
            ),
            "whole tensor": (
                _ln("    return gamma * (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps) + beta"),
                "dim=-1",
            ),
            "no gamma and beta": (
                _ln(
                    "    m = x.mean(-1, keepdim=True)\n"
                    "    return (x - m) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)"
                ),
                "not applied",
            ),
            "gamma and beta swapped": (
                _ln(
                    "    m = x.mean(-1, keepdim=True)\n"
                    "    return beta * (x - m) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps) + gamma"
                ),
                "swapped",
            ),
            # the spec forbids the built-ins the tests compare with, and asks for gradients and an unchanged x
            "F.layer_norm": (_ln("    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)"), "yourself"),
            "nn.LayerNorm module": (
                _ln(
                    "    ln = nn.LayerNorm(x.shape[-1], eps=eps).to(x.dtype)\n"
                    "    with torch.no_grad():\n        ln.weight.copy_(gamma)\n        ln.bias.copy_(beta)\n"
                    "    return ln(x)"
                ),
                "yourself",
            ),
            "numpy round trip": (
                _ln(
                    "    y, g, b = x.detach().numpy(), gamma.detach().numpy(), beta.detach().numpy()\n"
                    "    m = y.mean(-1, keepdims=True)\n"
                    "    return torch.from_numpy(g * (y - m) / np.sqrt(y.var(-1, keepdims=True) + eps) + b)"
                ),
                "no gradient flows",
            ),
            "changes x in place": (
                _ln(
                    "    x -= x.mean(-1, keepdim=True)\n"
                    "    x /= torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps)\n"
                    "    return gamma * x + beta"
                ),
                "changed x",
            ),
        },
        "right": {
            "var_mean and addcmul": _ln(
                "    v, m = torch.var_mean(x, dim=-1, keepdim=True, correction=0)\n"
                "    return torch.addcmul(beta, gamma, (x - m) * torch.rsqrt(v + eps))"
            ),
            "var(unbiased=False)": _ln(
                "    m = x.mean(dim=-1, keepdim=True)\n"
                "    v = x.var(dim=-1, unbiased=False, keepdim=True)\n"
                "    return (x - m) * torch.rsqrt(v + eps) * gamma + beta"
            ),
            "explicit sums": _ln(
                "    d = x.shape[-1]\n    m = x.sum(-1, keepdim=True) / d\n"
                "    v = ((x - m) * (x - m)).sum(-1, keepdim=True) / d\n"
                "    return gamma * (x - m) / (v + eps) ** 0.5 + beta"
            ),
            "float32 inside": _ln(
                "    y = x.float()\n    m = y.mean(-1, keepdim=True)\n"
                "    v = ((y - m) ** 2).mean(-1, keepdim=True)\n"
                "    return (gamma * ((y - m) / torch.sqrt(v + eps)).double() + beta)"
            ),
        },
    },
    "feed-forward": {
        "wrong": {
            "no ReLU": (_ffn("    return (x @ W1.T + b1) @ W2.T + b2"), "ReLU is missing"),
            "no b1": (_ffn("    return torch.relu(x @ W1.T) @ W2.T + b2"), "b1 is missing"),
            "no b2": (_ffn("    return torch.relu(x @ W1.T + b1) @ W2.T"), "b2 is missing"),
            "ReLU on the output too": (
                _ffn("    return torch.relu(torch.relu(x @ W1.T + b1) @ W2.T + b2)"),
                "output as well",
            ),
            "GELU": (_ffn("    return F.gelu(x @ W1.T + b1) @ W2.T + b2"), "GELU"),
            "no transpose": (_ffn("    return torch.relu(x @ W1 + b1) @ W2 + b2"), None),
            "ReLU before b1": (_ffn("    return (torch.relu(x @ W1.T) + b1) @ W2.T + b2"), None),
            "numpy round trip": (
                _ffn(
                    "    h = np.maximum(0, x.detach().numpy() @ W1.detach().numpy().T + b1.detach().numpy())\n"
                    "    return torch.from_numpy(h @ W2.detach().numpy().T + b2.detach().numpy())"
                ),
                "no gradient flows",
            ),
        },
        "right": {
            "F.linear": _ffn("    return F.linear(F.relu(F.linear(x, W1, b1)), W2, b2)"),
            "einsum and clamp": _ffn(
                "    h = torch.einsum('...i,hi->...h', x, W1) + b1\n"
                "    return torch.einsum('...h,oh->...o', h.clamp(min=0), W2) + b2"
            ),
            "float32 inside": _ffn(
                "    h = torch.relu(x.float() @ W1.float().T + b1.float())\n"
                "    return (h @ W2.float().T + b2.float()).to(x.dtype)"
            ),
            "one position at a time": _ffn(
                "    flat = x.reshape(-1, x.shape[-1])\n"
                "    rows = [torch.relu(W1 @ v + b1) @ W2.T + b2 for v in flat]\n"
                "    return torch.stack(rows).reshape(*x.shape[:-1], W2.shape[0])"
            ),
        },
    },
    "encoder-block": {
        "wrong": {
            "always pre-LN": (_block(_PRE), "norm_first=False you computed the pre-LN form"),
            "always post-LN": (_block(_POST), "norm_first=True you computed the post-LN form"),
            "placement swapped": (
                _block("if not self.norm_first:\n    " + _PRE.replace("\n", "\n    ") + "\n" + _POST),
                "pre-LN form",
            ),
            # issue 22: full marks before, then lesson 9 fell back with a TypeError that named no cause
            "calls self.self_attn directly": (
                _block(_SWITCHED.format(attend="lambda z: self.self_attn(z, z, z, need_weights=False)[0]")),
                "only through self.attend(x)",
            ),
            "residual switch ignored": (
                _block(_SWITCHED.replace("x if self.residual else 0", "x").format(attend="self.attend")),
                "honour both switches",
            ),
            "layer_norm switch ignored": (
                _block(
                    _SWITCHED.replace(" if self.layer_norm else (lambda z, ln: z)", "").format(attend="self.attend")
                ),
                "honour both switches",
            ),
            "switches ignored (the old exercise)": (
                _block("if self.norm_first:\n    " + _PRE.replace("\n", "\n    ") + "\n" + _POST),
                "honour both switches",
            ),
            "no residual around attention": (
                _block(
                    "n = (lambda z, ln: ln(z)) if self.layer_norm else (lambda z, ln: z)\n"
                    "r = 1 if self.residual else 0\n"
                    "if self.norm_first:\n"
                    "    x = self.attend(n(x, self.norm1))\n    return r * x + self.ffn(n(x, self.norm2))\n"
                    "x = n(self.attend(x), self.norm1)\nreturn n(r * x + self.ffn(x), self.norm2)"
                ),
                "the post-LN block: off by",
            ),
            "no residual around the FFN": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace(
                        "skip = x if self.residual else 0", "skip = x if self.residual and ln is not self.norm2 else 0"
                    )
                ),
                "the post-LN block: off by",
            ),
            "norm1 twice": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace("(self.ffn, self.norm2)", "(self.ffn, self.norm1)")
                ),
                "the post-LN block: off by",
            ),
            "post-LN normalises the branch only": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace("else n(skip + f(x), ln)", "else skip + n(f(x), ln)")
                ),
                "the post-LN block: off by",
            ),
            "pre-LN normalises the sum again": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace(
                        "skip + f(n(x, ln)) if", "n(skip + f(n(x, ln)), ln) if"
                    )
                ),
                "the pre-LN block: off by",
            ),
            "detached through numpy": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace(
                        "return x", "return torch.from_numpy(x.detach().numpy())"
                    )
                ),
                "carries no gradient",
            ),
            "residual switch honoured in post-LN only": (
                _block(
                    "n = (lambda z, ln: ln(z)) if self.layer_norm else (lambda z, ln: z)\n"
                    "for f, ln in ((self.attend, self.norm1), (self.ffn, self.norm2)):\n"
                    "    x = x + f(n(x, ln)) if self.norm_first else n((x if self.residual else 0) + f(x), ln)\n"
                    "return x"
                ),
                "honour both switches",
            ),
            "layer_norm switch turns off norm1 only": (
                _block(
                    "for f, ln in ((self.attend, self.norm1), (self.ffn, self.norm2)):\n"
                    "    n = (lambda z: z) if (not self.layer_norm and ln is self.norm1) else ln\n"
                    "    skip = x if self.residual else 0\n"
                    "    x = skip + f(n(x)) if self.norm_first else n(skip + f(x))\n"
                    "return x"
                ),
                "honour both switches",
            ),
            "layer_norm=False drops the residuals too": (
                _block(
                    "if not self.layer_norm:\n    return self.ffn(self.attend(x))\n"
                    "for f, ln in ((self.attend, self.norm1), (self.ffn, self.norm2)):\n"
                    "    skip = x if self.residual else 0\n"
                    "    x = skip + f(ln(x)) if self.norm_first else ln(skip + f(x))\n"
                    "return x"
                ),
                "layer_norm=False",
            ),
            "pre-LN block ends with a LayerNorm": (
                _block(
                    _SWITCHED.format(attend="self.attend").replace(
                        "return x", "return n(x, self.norm2) if self.norm_first else x"
                    )
                ),
                "the pre-LN block: off by",
            ),
            "eps of the norms ignored": (
                _block(
                    "ln = (lambda z, n: layer_norm(z, n.weight, n.bias)) if self.layer_norm else (lambda z, n: z)\n"
                    "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                    "self.linear2.weight, self.linear2.bias)\n"
                    "r = 1 if self.residual else 0\n"
                    "if self.norm_first:\n"
                    "    h = r * x + self.attend(ln(x, self.norm1))\n    return r * h + ff(ln(h, self.norm2))\n"
                    "h = ln(r * x + self.attend(x), self.norm1)\nreturn ln(r * h + ff(h), self.norm2)"
                ),
                "eps is ignored",
            ),
        },
        "right": {
            "modules, one loop": _block(_SWITCHED.format(attend="self.attend")),
            "four explicit branches": _block(
                "a, f = self.attend, self.ffn\n"
                "ln1 = self.norm1 if self.layer_norm else nn.Identity()\n"
                "ln2 = self.norm2 if self.layer_norm else nn.Identity()\n"
                "if self.norm_first and self.residual:\n    x = x + a(ln1(x))\n    return x + f(ln2(x))\n"
                "if self.norm_first:\n    return f(ln2(a(ln1(x))))\n"
                "if self.residual:\n    x = ln1(x + a(x))\n    return ln2(x + f(x))\n"
                "return ln2(f(ln1(a(x))))"
            ),
            "student functions, spelled out": _block(
                "ln = (lambda z, n: layer_norm(z, n.weight, n.bias, eps=n.eps)) if self.layer_norm else (lambda z, n: z)\n"
                "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                "self.linear2.weight, self.linear2.bias)\n"
                "if self.norm_first:\n"
                "    h = self.attend(ln(x, self.norm1)) + (x if self.residual else 0)\n"
                "    return ff(ln(h, self.norm2)) + (h if self.residual else 0)\n"
                "h = ln(self.attend(x) + (x if self.residual else 0), self.norm1)\n"
                "return ln(ff(h) + (h if self.residual else 0), self.norm2)"
            ),
            "F.layer_norm, branches": _block(
                "ln = lambda z, n: F.layer_norm(z, z.shape[-1:], n.weight, n.bias, n.eps) if self.layer_norm else z\n"
                "for f, n in [(self.attend, self.norm1), (self.ffn, self.norm2)]:\n"
                "    if self.norm_first:\n        y = f(ln(x, n))\n        x = x + y if self.residual else y\n"
                "    else:\n        y = f(x)\n        x = ln(x + y if self.residual else y, n)\n"
                "return x"
            ),
            # Charged once: a correct 8.3 that calls the student's functions keeps its points although 8.1 and 8.2
            # are wrong (graded with references). Last on purpose: it leaves the broken layer_norm / feed_forward
            # in the kernel; only quiz questions follow.
            "correct, on top of broken layer_norm and feed_forward": (
                "def layer_norm(x, gamma, beta, eps=1e-5):\n    return x\n"
                "def feed_forward(x, W1, b1, W2, b2):\n    return torch.zeros_like(x)\n"
                + _block(
                    "ln = (lambda z, n: layer_norm(z, n.weight, n.bias, eps=n.eps)) if self.layer_norm else (lambda z, n: z)\n"
                    "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                    "self.linear2.weight, self.linear2.bias)\n"
                    "r = 1 if self.residual else 0\n"
                    "if self.norm_first:\n"
                    "    h = r * x + self.attend(ln(x, self.norm1))\n    return r * h + ff(ln(h, self.norm2))\n"
                    "h = ln(r * x + self.attend(x), self.norm1)\nreturn ln(r * h + ff(h), self.norm2)"
                )
            ),
        },
    },
    "quiz-ln-entry": quiz("q1_answer", right=[-1.3416, -1.3416407864998738, -1.342], wrong=[-1.1619, -3, 1.3416]),
    "quiz-ln-params": quiz("q2_answer", right=[1024, 1024.0], wrong=[512, 0, 2048]),
    "quiz-ffn-params": quiz("q3_answer", right=[2099712], wrong=[2097152, 1048576, 2099200]),
    "quiz-residual-jacobian": quiz("q4_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-ln-vs-bn": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-pre-ln": quiz("q6_answer", right=["b", " b "], wrong=["a", "c", "d"]),
}

# Run in the kernel that executed the solution notebook (tests/test_lessons.py): every number and comparison that the
# prose, the model answer and the rubric state about the lesson's own measurements.

NOT_MEASURED = {
    "12": "a setting: the number of blocks",
    "16": "a setting: d_model, and the size of the identity matrix in section 1",
    "32": "a setting: depths up to 32, d_ff = 32, the colleague's 32 blocks",
    "2048": "the original Transformer's d_ff for d_model = 512 (a convention)",
    "120": "a setting: training steps",
    "60": "a setting: warm-up steps",
    "0.003": "a setting: a learning rate",
    "0.02": "a setting: a learning rate",
    "0.03": "a setting: a learning rate",
    "0.2": "a definition: the margin below the class-frequency loss that counts as 'learned' (and a bound, asserted)",
    "0.05": "a bound: the two mean final losses at lr 0.003 differ by less (asserted in CLAIMS)",
    "0.15": "a bound: the warm-up lowers post-LN's mean final loss at 0.02 by more (asserted in CLAIMS)",
    "0.1": "a bound: with the same warm-up pre-LN's mean final loss is lower at 0.02 by more, and the warm-up moves "
    "pre-LN's by less (asserted in CLAIMS)",
    "0.3": "a bound: with the same warm-up pre-LN's mean final loss is lower at 0.03 by more (asserted in CLAIMS)",
    "0.015": "a bound: the learning rate when the lowest 10-step mean ends is below it (asserted in CLAIMS)",
}
