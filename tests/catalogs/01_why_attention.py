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
CLAIMS = r"""
mean = lambda name: recall[name].mean(0)
# section 3: one step stretches some directions and shrinks others
assert _sv.max().item() > 1 > _sv.min().item()
# section 4: what scale 1 means next to PyTorch's initialisation; attention's curve in the explorer
claim("0.58", torch_scale)
assert 100 < att_span < 1000, att_span  # "a factor of several hundred" at T = 60
assert 0.5 < att_trend < 2, att_trend  # no trend with distance
# what scale 4 does (T = 30): saturated, reaches further, erratic, fades beyond, no huge derivative
one, four = report[1.0], report[4.0]
assert four["saturated"] > 0.5 > one["saturated"] and four["reach"] > one["reach"]
assert four["largest"] > 0.3 * four["unrelated"] and four["jumps"] > 10 * one["jumps"] and four["beyond"] < 0.01
assert len({scale_report(T, 4.0, False)["reach"] for T in (20, 40, 60)}) == 3  # the reach changes with T
assert 0.3 < four["grad_max"] < 3  # "of the order of 1"
# 5a: geometric decay at PyTorch's initialisation, along a nearly straight line; attention within a small factor
_fit = np.polyfit(distance, np.log(rnn_sens), 1, full=True)
assert rnn_ratio > 1e6 and 1 - _fit[1][0] / ((np.log(rnn_sens) - np.log(rnn_sens).mean()) ** 2).sum() > 0.99
assert att_spread < 5 and 0.5 < np.median(att_sens[20:-1]) / np.median(att_sens[:20]) < 2
_one_draw = sensitivity_attention(T_exp, d_exp, 0)[:-1]
assert (_one_draw.max() / _one_draw.min()).item() > att_spread  # a single draw jumps more than the mean
# 5b (after 150 steps; trained numbers: orderings and bounds with margins, values seen in the comments)
FAR = np.arange(T_RECALL) >= 6
assert mean("RNN")[0] > 0.95 and (np.diff(mean("RNN")[:8]) < 0).all(), mean("RNN")  # 1.00 .95 .83 .73 .64 .58 .47 .38
assert 1.5 / V_RECALL < mean("RNN")[-1] < 0.5 * mean("RNN")[:6].mean(), "the first token: above guessing, far below"
assert (mean("RNN, 96 numbers") >= mean("RNN") - 0.01).all() and (mean("RNN, 96 numbers")[1:] > mean("RNN")[1:] + 0.03).all()
_lowest96 = int(mean("RNN, 96 numbers").argmin())  # 9 (0.59; 0.61 at 8 and 10)
assert T_RECALL - 5 <= _lowest96 < T_RECALL - 1 and mean("RNN, 96 numbers")[-1] > mean("RNN, 96 numbers")[_lowest96] + 0.05
assert all(during[s]["GRU"].mean() < during[s]["RNN"].mean() - 0.03 for s in during), "GRU below RNN at every look"
assert min(recall["RNN + attention"].min(), recall["self-attention"].min()) > 0.97  # every seed, every k: 1.00
assert recall_params["self-attention"] == min(recall_params.values())
assert recall_params["RNN + attention"] < recall_params["GRU"]
assert sorted(during) == [30, 60, 90, 120, 150] and STEPS_RECALL == 150 and test_tokens.shape[1] == 300
for _name in ("RNN", "RNN, 96 numbers", "GRU"):  # still improving over the last 60 steps, the distant half too
    _far, _near = (np.array([during[s][_name][:, part].mean() for s in sorted(during)]) for part in (FAR, ~FAR))
    assert _far[-1] > _far[2] + 0.02 and _near[-1] > _near[2], (_name, _far, _near)  # RNN .29 -> .33, GRU .24 -> .28
    assert (_far < _near - 0.2).all(), (_name, _far, _near)  # distant far below recent at every look
assert all(during[s]["self-attention"].min() > 0.97 for s in (60, 90, 120, 150)), "every position from step 60"
assert during[90]["RNN + attention"].mean() < 0.6 and during[150]["RNN + attention"].min() > 0.97  # .48 -> 1.00
claim("36", T_RECALL * np.log2(V_RECALL))
# 5c: time ∝ T, far above one product; per-step cost flat from d = 1 to 64, arithmetic shows at 128-256
# (timings on a shared machine: bounds wide enough for background load, tight enough to catch a wrong trend)
assert 0.7 < rnn_slope < 1.6 and (rnn_s / prod_s).min() > 5 and att_slope > rnn_slope + 0.3
claim("4,096", (2 * 64**2) / (2 * 1**2))
for _us in step_us.values():
    assert _us[6] < 3 * _us[0] and _us[-1] > 1.5 * _us[6], _us  # quiet: 1.2-1.3x; 2.6x seen under a load of 5
# 5d: the fitted powers, T calls each fed the last result, the longest chain: growing 5 per token, constant for attention
assert np.allclose(rnn_powers, [1, 2], atol=0.01) and np.allclose(att_powers, [2, 1], atol=0.01)
assert calls == [(T, T, True) for T in T_table]
assert len({table[T, "att_chain"] for T in T_table}) == 1 and len({table[T, "att_path"] for T in T_table}) == 1
assert chain_per_token == 5 and path_per_token == 5 and table[T_table[0], "rnn_path"] > table[T_table[0], "att_path"]
assert table[T_table[0], "rnn_chain"] > table[T_table[0], "att_chain"]
# Q7's model answer: "about 0.7 against about 0.5" (0.71 and 0.47 seen)
claim("0.7", mean("RNN, 96 numbers")[6], tol=0.08)
claim("0.5", mean("RNN")[6], tol=0.08)
assert mean("RNN, 96 numbers")[6] > mean("RNN")[6] + 0.1, "far more often"
"""
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
