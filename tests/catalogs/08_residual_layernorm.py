"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 08."""

from catalog_tools import quiz


def _ln(body):
    return "def layer_norm(x, gamma, beta, eps=1e-5):\n" + body


def _ffn(body):
    return "def feed_forward(x, W1, b1, W2, b2):\n" + body


_BLOCK = """class EncoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False, eps=1e-5):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm_first = norm_first

    def attend(self, x):
        return self.self_attn(x, x, x, need_weights=False)[0]

    def ffn(self, x):
        return self.linear2(torch.relu(self.linear1(x)))

    def forward(self, x):
"""


def _block(body):
    return _BLOCK + "".join("        " + line + "\n" for line in body.strip().splitlines())


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
                "last axis",
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
        },
        "right": {
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
        },
        "right": {
            "F.linear": _ffn("    return F.linear(F.relu(F.linear(x, W1, b1)), W2, b2)"),
            "einsum and clamp": _ffn(
                "    h = torch.einsum('...i,hi->...h', x, W1) + b1\n"
                "    return torch.einsum('...h,oh->...o', h.clamp(min=0), W2) + b2"
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
            "no residual around attention": (
                _block(
                    "if self.norm_first:\n"
                    "    x = self.attend(self.norm1(x))\n    return x + self.ffn(self.norm2(x))\n"
                    "x = self.norm1(self.attend(x))\nreturn self.norm2(x + self.ffn(x))"
                ),
                "residual around attention is missing",
            ),
            "no residual around the FFN": (
                _block(
                    "if self.norm_first:\n"
                    "    x = x + self.attend(self.norm1(x))\n    return self.ffn(self.norm2(x))\n"
                    "x = self.norm1(x + self.attend(x))\nreturn self.norm2(self.ffn(x))"
                ),
                "residual around the feed-forward network is missing",
            ),
            "norm1 twice": (
                _block(
                    "if self.norm_first:\n"
                    "    x = x + self.attend(self.norm1(x))\n    return x + self.ffn(self.norm1(x))\n"
                    "x = self.norm1(x + self.attend(x))\nreturn self.norm1(x + self.ffn(x))"
                ),
                "norm1 is used for both",
            ),
            "post-LN normalises the branch only": (
                _block(
                    "if self.norm_first:\n"
                    "    x = x + self.attend(self.norm1(x))\n"
                    "    return x + self.ffn(self.norm2(x))\n"
                    "x = x + self.norm1(self.attend(x))\nreturn x + self.norm2(self.ffn(x))"
                ),
                "branch only",
            ),
            "detached through numpy": (
                _block(
                    "if self.norm_first:\n"
                    "    x = x + self.attend(self.norm1(x))\n    x = x + self.ffn(self.norm2(x))\n"
                    "else:\n"
                    "    x = self.norm1(x + self.attend(x))\n    x = self.norm2(x + self.ffn(x))\n"
                    "return torch.from_numpy(x.detach().numpy())"
                ),
                "gradient",
            ),
            "eps of the norms ignored": (
                _block(
                    "ln = lambda z, n: layer_norm(z, n.weight, n.bias)\n"
                    "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                    "self.linear2.weight, self.linear2.bias)\n"
                    "if self.norm_first:\n"
                    "    h = x + self.attend(ln(x, self.norm1))\n    return h + ff(ln(h, self.norm2))\n"
                    "h = ln(x + self.attend(x), self.norm1)\nreturn ln(h + ff(h), self.norm2)"
                ),
                "eps is ignored",
            ),
        },
        "right": {
            "modules directly": _block("if self.norm_first:\n    " + _PRE.replace("\n", "\n    ") + "\n" + _POST),
            "student functions": _block(
                "ln = lambda z, n: layer_norm(z, n.weight, n.bias, eps=n.eps)\n"
                "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                "self.linear2.weight, self.linear2.bias)\n"
                "if self.norm_first:\n"
                "    h = x + self.attend(ln(x, self.norm1))\n    return h + ff(ln(h, self.norm2))\n"
                "h = ln(x + self.attend(x), self.norm1)\nreturn ln(h + ff(h), self.norm2)"
            ),
            "F.layer_norm": _block(
                "ln = lambda z, n: F.layer_norm(z, z.shape[-1:], n.weight, n.bias, n.eps)\n"
                "sub = [(self.attend, self.norm1), (self.ffn, self.norm2)]\n"
                "for f, n in sub:\n"
                "    x = x + f(ln(x, n)) if self.norm_first else ln(x + f(x), n)\n"
                "return x"
            ),
            # Charged once: a correct 8.3 that calls the student's functions keeps its points although 8.1 and 8.2
            # are wrong (graded with references). Last on purpose: it leaves the broken layer_norm / feed_forward
            # in the kernel; only quiz questions follow.
            "correct, on top of broken layer_norm and feed_forward": (
                "def layer_norm(x, gamma, beta, eps=1e-5):\n    return x\n"
                "def feed_forward(x, W1, b1, W2, b2):\n    return torch.zeros_like(x)\n"
                + _block(
                    "ln = lambda z, n: layer_norm(z, n.weight, n.bias, eps=n.eps)\n"
                    "ff = lambda z: feed_forward(z, self.linear1.weight, self.linear1.bias, "
                    "self.linear2.weight, self.linear2.bias)\n"
                    "if self.norm_first:\n"
                    "    h = x + self.attend(ln(x, self.norm1))\n    return h + ff(ln(h, self.norm2))\n"
                    "h = ln(x + self.attend(x), self.norm1)\nreturn ln(h + ff(h), self.norm2)"
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
