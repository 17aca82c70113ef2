"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 01."""

from catalog_tools import quiz

EXERCISES = {
    "rnn-step": {
        "wrong": {
            "no tanh": ("def rnn_step(h, x, W_h, W_x, b):\n    return h @ W_h.T + x @ W_x.T + b", "tanh is missing"),
            "no bias": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x.T)",
                "bias b is missing",
            ),
            "W_h not transposed": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h + x @ W_x.T + b)",
                "without the transpose",
            ),
            "sigmoid": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return 1 / (1 + np.exp(-(h @ W_h.T + x @ W_x.T + b)))",
                "not the logistic sigmoid",
            ),
            "ignores h": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(x @ W_x.T + b)",
                "previous state h is ignored",
            ),
            "W_h @ h as printed in the maths (issue 22)": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(W_h @ h + W_x @ x + b)",
                "W_h h is h @ W_h.T",
            ),
            "column vectors for h only": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(W_h @ h + x @ W_x.T + b)",
                "W_h h is h @ W_h.T",
            ),
            "returns None": ("def rnn_step(h, x, W_h, W_x, b):\n    np.tanh(h @ W_h.T + x @ W_x.T + b)", "return"),
            "W_x not transposed": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h.T + x @ W_x + b)",
                "x @ W_x.T",
            ),
            "both weights transposed the wrong way": (
                "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(h @ W_h + (W_x @ x.T).T + b)",
                "without the transpose",
            ),
        },
        "right": {
            "column-vector maths": "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh((W_h @ h[..., None])[..., 0] + (W_x @ x[..., None])[..., 0] + b)",
            "einsum": "def rnn_step(h, x, W_h, W_x, b):\n    return np.tanh(np.einsum('ij,...j->...i', W_h, h) + np.einsum('ij,...j->...i', W_x, x) + b)",
            "float32 inside": "def rnn_step(h, x, W_h, W_x, b):\n    f = lambda a: np.asarray(a, np.float32)\n"
            "    return np.tanh(f(h) @ f(W_h).T + f(x) @ f(W_x).T + f(b)).astype(np.float64)",
            "float32 result": "def rnn_step(h, x, W_h, W_x, b):\n    f = lambda a: np.asarray(a, np.float32)\n"
            "    return np.tanh(f(h) @ f(W_h).T + f(x) @ f(W_x).T + f(b))",
            "torch inside": "def rnn_step(h, x, W_h, W_x, b):\n    t = torch.as_tensor\n"
            "    return torch.tanh(t(h) @ t(W_h).T + t(x) @ t(W_x).T + t(b)).numpy()",
        },
    },
    "rnn-run": {
        "wrong": {
            "state not carried": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    return np.stack([rnn_step(h0, x, W_h, W_x, b) for x in xs])",
                "carry the new state",
            ),
            "reads backwards": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, []\n"
                "    for x in xs[::-1]:\n        h = rnn_step(h, x, W_h, W_x, b); out.append(h)\n"
                "    return np.stack(out)",
                "back to front",
            ),
            "states reversed": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, []\n"
                "    for x in xs:\n        h = rnn_step(h, x, W_h, W_x, b); out.insert(0, h)\n"
                "    return np.stack(out)",
                "reverse order",
            ),
            "includes h0": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, [h0]\n"
                "    for x in xs:\n        h = rnn_step(h, x, W_h, W_x, b); out.append(h)\n"
                "    return np.stack(out)",
                "the first one h0 (off by one)",
            ),
            "h0 first, the last state dropped": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, []\n"
                "    for x in xs:\n        out.append(h); h = rnn_step(h, x, W_h, W_x, b)\n"
                "    return np.stack(out)",
                "h0 is the first row and the last state is missing",
            ),
            "only the last state": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h = h0\n"
                "    for x in xs:\n        h = rnn_step(h, x, W_h, W_x, b)\n    return h",
                "shape",
            ),
            "starts from zeros, not h0": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = np.zeros_like(h0), []\n"
                "    for x in xs:\n        h = rnn_step(h, x, W_h, W_x, b); out.append(h)\n"
                "    return np.stack(out)",
                "h0 is ignored",
            ),
            "h and x swapped in the call": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, []\n"
                "    for x in xs:\n        h = rnn_step(x, h, W_h, W_x, b); out.append(h)\n"
                "    return np.stack(out)",
                "the state first",
            ),
            "no recurrence: every token at once from h0": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    return rnn_step(np.tile(h0, (len(xs), 1)), xs, W_h, W_x, b)",
                "carry the new state",
            ),
            "drops the last token": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, [h0]\n"
                "    for x in xs[:-1]:\n        h = rnn_step(h, x, W_h, W_x, b); out.append(h)\n"
                "    return np.stack(out)",
                None,
            ),
        },
        "right": {
            "preallocated array": "def rnn_run(xs, h0, W_h, W_x, b):\n    out = np.empty((len(xs), len(h0)))\n    h = h0\n"
            "    for t in range(len(xs)):\n        h = out[t] = rnn_step(h, xs[t], W_h, W_x, b)\n    return out",
            "torch nn.RNN inside": (
                "def rnn_run(xs, h0, W_h, W_x, b):\n"
                "    rnn = torch.nn.RNN(W_x.shape[1], W_x.shape[0]).double()\n"
                "    with torch.no_grad():\n"
                "        rnn.weight_hh_l0.copy_(torch.as_tensor(W_h)); rnn.weight_ih_l0.copy_(torch.as_tensor(W_x))\n"
                "        rnn.bias_ih_l0.copy_(torch.as_tensor(b)); rnn.bias_hh_l0.zero_()\n"
                "        return rnn(torch.as_tensor(xs), torch.as_tensor(h0)[None])[0].numpy()"
            ),
            "inline recurrence, no rnn_step call": "def rnn_run(xs, h0, W_h, W_x, b):\n    h, out = h0, []\n"
            "    for x in xs:\n        h = np.tanh(h @ W_h.T + x @ W_x.T + b); out.append(h)\n    return np.array(out)",
            "recursion": "def rnn_run(xs, h0, W_h, W_x, b):\n    h = rnn_step(h0, xs[0], W_h, W_x, b)\n"
            "    return h[None] if len(xs) == 1 else np.vstack([h[None], rnn_run(xs[1:], h, W_h, W_x, b)])",
        },
    },
    "quiz-rnn-state-size": quiz("q1_answer", right=[64, 64.0], wrong=[1000, 64000, "64"]),
    "quiz-sequential-steps": quiz("q2_answer", right=[1000], wrong=[1, 999, 64]),
    "quiz-why-fade": quiz("q3_answer", right=["b", "B", " b "], wrong=["a", "c", "d"]),
    "quiz-path-length": quiz("q4_answer", right=["c", "C"], wrong=["a", "b", "d"]),
    "quiz-large-scale": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    "quiz-recall-attention": quiz("q6_answer", right=["c", "C"], wrong=["a", "b", "d"]),
}

# Test-only checks, run in the solved kernel after the notebook: what the prose says about the lesson's measurements.
NOT_MEASURED = {
    "32": "settings: the explorer's unrelated pairs, and the state size of the recall models",
    "96": "a setting: the larger RNN's state size",
    "12": "a setting: the recall task's sequence length",
    "20": "a setting: the number of random draws in 5a",
    "0.1": "the explorer's threshold for a noticeable change (a setting)",
    "0.01": "a setting: Adam's learning rate in 5b",
    "150": "a setting: training steps in 5b",
    "24": "a setting: sequences per training step in 5b",
    "256": "a setting: the largest state size timed in 5c",
    "1000": "a document length in the quiz questions",
    "1991": "the year of Hochreiter's thesis on vanishing gradients",
    "1994": "the year of Bengio, Simard and Frasconi's paper",
    "1997": "the year of the LSTM paper",
    "2000": "the year of Gers, Schmidhuber and Cummins's forget gate",
    "300": "a setting: test sequences per seed in 5b",
    "100": "a setting: the test sequences looked at during training in 5b",
    "30": "a setting: a look at the test set during training in 5b",
    "60": "settings: a look at the test set in 5b, and 150 − 90 steps between two looks",
    "90": "a setting: a look at the test set during training in 5b",
    "0.6": "a bound the prose states (asserted in CLAIMS: RNN + attention at step 90)",
    "600": "a number of steps the student may try",
    "2014": "the year of the GRU and of Bahdanau et al.'s paper",
    "2017": "the year of the Transformer paper",
}
