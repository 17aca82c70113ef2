"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 03, and CLAIMS: test-only checks that what the
lesson's prose, model answers and rubrics say about its own measurements is what the notebook measured."""

from catalog_tools import quiz

S = "def scaled_scores(Q, K):\n"

EXERCISES = {
    "scaled-scores": {
        "wrong": {
            "no scaling": (S + "    return Q @ np.swapaxes(K, -1, -2)", "not scaled"),
            "divides by d_k": (S + "    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]", "divided by d_k"),
            "divides by the number of keys": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / K.shape[-2]",
                "number of keys",
            ),
            "divides by sqrt of the number of keys": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])",
                "√T_k",
            ),
            "transposes the wrong operand (K Qᵀ)": (
                S + "    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])",
                "swapped",
            ),
            "K.T on a batch": (S + "    return Q @ K.T / np.sqrt(Q.shape[-1])", "K.T reverses ALL axes"),
            "d_k from the first axis": (S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(len(Q))", None),
            "d_k from a global": (S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(8)", None),
            "divides by d_k / 2": (S + "    return Q @ np.swapaxes(K, -1, -2) / (Q.shape[-1] / 2)", None),
            "returns None": (S + "    Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])", "return"),
            "d_k from a notebook variable that does not exist": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
                "d_k",
            ),
            "divides by sqrt of the number of queries": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2])",
                "√T_q",
            ),
            "swaps the first and last axes": (
                S + "    return Q @ np.swapaxes(K, 0, -1) / np.sqrt(Q.shape[-1])",
                "swap only the last two",
            ),
            "loops over the first axis only": (
                S + "    return np.stack([q @ k.T for q, k in zip(Q, K)]) / np.sqrt(Q.shape[-1])",
                "shape",
            ),
            "√d_k rounded to a whole number (math.isqrt)": (
                S + "    import math\n    return Q @ np.swapaxes(K, -1, -2) / math.isqrt(Q.shape[-1])",
                "rounded",
            ),
            "divides by the length of each query": (
                S + "    return Q @ np.swapaxes(K, -1, -2) / np.linalg.norm(Q, axis=-1, keepdims=True)",
                None,
            ),
            "normalises by the scores' own standard deviation": (
                S + "    s = Q @ np.swapaxes(K, -1, -2)\n    return s / s.std()",
                None,
            ),
            "float32 returned for float64 inputs": (
                S + "    return np.float32(Q) @ np.swapaxes(np.float32(K), -1, -2) / np.float32(np.sqrt(Q.shape[-1]))",
                "returned float32, not float64",
            ),
            "torch float32 tensor returned for float64 inputs": (
                S + "    q, k = torch.tensor(Q, dtype=torch.float32), torch.tensor(K, dtype=torch.float32)\n"
                "    return q @ k.mT / q.shape[-1] ** 0.5",
                "returned float32, not float64",
            ),
            "scales only the first batch entry": (
                S + "    out = Q @ np.swapaxes(K, -1, -2)\n    out[..., :1, :] /= np.sqrt(Q.shape[-1])\n    return out",
                None,
            ),
        },
        "right": {
            "einsum": S + "    return np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])",
            "multiply by d_k ** -0.5": S + "    return (Q * Q.shape[-1] ** -0.5) @ K.swapaxes(-1, -2)",
            "scale queries and keys by d_k ** -0.25": S + "    s = Q.shape[-1] ** -0.25\n"
            "    return (s * Q) @ np.moveaxis(s * K, -1, -2)",
            "loop over flattened batch": S
            + "    d = Q.shape[-1]\n    q2, k2 = Q.reshape(-1, *Q.shape[-2:]), K.reshape(-1, *K.shape[-2:])\n"
            "    out = np.stack([q @ k.T for q, k in zip(q2, k2)]) / np.sqrt(d)\n"
            "    return out.reshape(*Q.shape[:-1], K.shape[-2])",
            "torch inside": S + "    q, k = torch.as_tensor(Q), torch.as_tensor(K)\n"
            "    return (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).numpy()",
            "torch tensor returned (float64)": S + "    q, k = torch.from_numpy(Q), torch.from_numpy(K)\n"
            "    return q @ k.mT / q.shape[-1] ** 0.5",
            "changes Q in place (whether inputs change is not graded)": S + "    Q /= np.sqrt(Q.shape[-1])\n"
            "    return Q @ np.swapaxes(K, -1, -2)",
            "K.T when there are no batch axes": S
            + "    return (Q @ K.T if Q.ndim == 2 else Q @ np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])",
            "float32 inside": S + "    q, k = np.float32(Q), np.float32(K)\n"
            "    return (q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))).astype(np.float64)",
        },
    },
    "quiz-variance-dk64": quiz("q1_answer", right=[64, 64.0], wrong=[8, 1, 4096, "64"]),
    "quiz-variance-sigma2": quiz("q2_answer", right=[256, 256.0], wrong=[64, 16, 32, 4]),
    "quiz-why-sqrt": quiz("q3_answer", right=["b", "B", " b "], wrong=["a", "c", "d"]),
    "quiz-max-gradient": quiz("q4_answer", right=[0.25, 1 / 4], wrong=[1, 0.5, 0]),
    "quiz-scaled-std": quiz("q5_answer", right=[1, 1.0], wrong=[16, 256, 0.0625]),
    "quiz-saturation": quiz("q6_answer", right=["c", "C"], wrong=["a", "b", "d"]),
    "quiz-t5-fold": quiz("q7_answer", right=["b", " B"], wrong=["a", "c", "d"]),
}

CLAIMS = r"""
import math

import numpy as np

# --- section 3: an exponential turns a difference of 20 into a ratio of about 500 million
claim("500", math.exp(20) / 1e6, tol=20)
# --- section 4: the explorer's table (64 queries, 12 keys)
t = explorer_table
claim("0.083", 1 / 12)
claim("0.7", t[1]["std"][0])
claim("32.6", t[1024]["std"][0])
claim("0.66", min(r["std"][1] for r in t.values()))
claim("1.16", max(r["std"][1] for r in t.values()))
assert one_hot_from == 64, one_hot_from  # "from d_k = 64 on, the median query puts more than 0.95 on one key"
claim("0.19", min(medians_scaled))
claim("0.28", max(medians_scaled))
claim("0.51", t[1024]["least peaked unscaled"])
_raw, _ = explorer_scores(1024)
_second = np.sort(torch.softmax(torch.from_numpy(_raw), dim=-1).numpy(), axis=-1)[:, -2]
_least = int(np.argmin(np.max(torch.softmax(torch.from_numpy(_raw), dim=-1).numpy(), axis=-1)))
assert _second[_least] > 0.45, "the least peaked unscaled query at 1024: two keys nearly tied"
claim("0.72", t[1024]["most peaked scaled"])
assert max(t, key=lambda d: t[d]["most peaked scaled"]) == 32, "the most peaked scaled query of the table is at 32"
claim("0.84", t[32]["most peaked scaled"])
# --- section 5.2 and the introduction: the gradient at initialisation
i16, i64, i256, i512 = (dims.index(d) for d in (16, 64, 256, 512))
claim("1.000", top["unscaled"][i512])
claim("0.13", jacobian["unscaled"][i64])
claim("0.30", jacobian["scaled"][i64])
assert jacobian["unscaled"][i64] < 0.5 * jacobian["scaled"][i64], "less than half its size with scaling"
claim("0.0003", jacobian["unscaled"][i512])
assert np.ptp(top["scaled"]) < 0.1 and max(jacobian["scaled"]) < 1.3 * min(jacobian["scaled"]), "scaled: flat"
claim("1.65", ratio_W[i64])
assert smaller_from == 256 and all(ratio_W[1:i256] > 1), "larger without scaling for 1 < d_k < 256, smaller from 256 on"
assert ratio_W[i16] > 1, "at small d_k the unscaled gradient is the larger one"
claim("75", 1 / ratio_W[i512])
claim("1000", drop_b, tol=50)
claim("13", drop_b * ratio_W[i512])
claim("22.6", 512**0.5)
claim("20.4", p90_W["unscaled"][i512])
claim("1.7", p90_W["scaled"][i512])
claim("12", p90_W["unscaled"][i512] / p90_W["scaled"][i512])
claim("0.94", gap_top)
claim("8.7", gap_all)
# --- section 6: training (settings first, so the prose describes the code that ran)
_w = [torch.randn(3, 5, generator=torch.Generator().manual_seed(9), requires_grad=True) for _ in range(2)]
_ref = [w.detach().clone().requires_grad_(True) for w in _w]
_opt, _mom = torch.optim.Adam(_ref, lr=0.01), [(torch.zeros_like(w), torch.zeros_like(w)) for w in _w]
for _step in range(1, 4):  # the lesson's adam_step takes exactly torch.optim.Adam's steps
    for params in (_w, _ref):
        (params[0] ** 3 * params[1]).sum().backward()
    adam_step(_w, _mom, _step, 0.01)
    _opt.step()
    _opt.zero_grad()
assert all(torch.allclose(a, b, atol=1e-7) for a, b in zip(_w, _ref)), "adam_step differs from torch.optim.Adam"
assert RATES == [0.003, 0.01, 0.03], RATES
claim("0.003", RATES[0])
claim("0.03", RATES[2])
claim("120", STEPS)
claim("32", BATCH)
assert 1024**0.5 == 32, "√1024"
claim("144", np.prod(curve.shape[1:]))
claim("512", held_out[0].shape[1])
assert SEEDS >= 3 and NOISE == 0.5 and KEYS_PER_EXAMPLE == 8 and D_MODEL == 16 and TRAIN_DIMS == [16, 64, 256, 1024]
assert N_KEYS == 12, "the explorer's 12 keys: section 6 must not change them"
claim("2.08", math.log(KEYS_PER_EXAMPLE))
claim("1.25", 1 + NOISE**2)  # the variance of a query's entries: a unit-variance key, rotated, plus the noise
assert abs(float(held_out[0].var()) - 1.25) < 0.05 and abs(float(held_out[1].var()) - 1) < 0.05
assert steps[-1] == STEPS and steps[2] == 10
sc, un, mu, t5 = (v[name] for name in ("scaled", "unscaled", "1/d_k", "T5"))
slow, mid, fast = (r[rate] for rate in RATES)
start = curve[0].mean(-1)[:, slow]  # (d_k, variant): step 0, the same at every rate
assert np.abs(curve[0] - curve[0][:, :1]).max() < 1e-6, "step 0 is the same at every rate"
# step 0: untrained weights, nothing amplifies the rounding: stable to the digits written
claim("53", start[D[1024], un])
claim("6.8", start[D[16], un])
assert (start[:, un] > 3 * math.log(KEYS_PER_EXAMPLE)).all() and np.all(np.diff(start[:, un]) > 0), "confidently wrong"
assert step0_gap < 1e-6, "T5 equals scaled at step 0"
# trained: orderings and bounds with margins (values seen in the comments; the same on the AVX-512 and default paths)
assert (np.diff(end[:, slow, sc]) < 0).all(), "scaled at 0.003: the loss falls with every size"  # .42 .18 .10 .07
claim("0.4", end[D[16], slow, sc], tol=0.06)  # "about 0.4"
claim("0.07", end[D[1024], slow, sc], tol=0.015)  # "about 0.07"
claim("0.09", end[D[16], fast, sc], tol=0.015)  # 0.093
assert end[D[1024], fast, sc] > 2 * end[D[16], fast, sc], "scaled at 0.03: more than twice at 1024"  # 0.34
assert (np.diff(end[1:, fast, sc]) > 0).all(), "scaled at 0.03: worse with every size from 64 on"  # .097 .18 .34
assert end[D[16], :, sc].argmin() == fast and end[D[16], mid, sc] > 1.2 * end[D[16], fast, sc]  # .13 vs .093
for _d in (64, 256):  # 0.072 against 0.097 and 0.176; 0.062 against 0.098 and 0.182
    assert end[D[_d], :, sc].argmin() == mid and min(end[D[_d], slow, sc], end[D[_d], fast, sc]) > 1.2 * best[D[_d], sc]
assert abs(end[D[1024], slow, sc] - end[D[1024], mid, sc]) < 0.03, "1024: 0.003 and 0.01 close"  # .069 .076
assert end[D[1024], fast, sc] > 3 * best[D[1024], sc], "1024: 0.03 far worse"  # 0.34
assert best[:, sc].max() < 0.12, "the scaled head at its best rate ends below 0.12 at every d_k"  # 0.093
assert end[D[16], slow, un] < end[D[16], slow, sc] and end[D[16], slow, t5] < end[D[16], slow, sc]  # .28 .19 < .42
assert min(end[D[1024], :, un].min(), end[D[1024], :, t5].min()) > 3 * best[D[1024], sc], "several times, every rate"
assert min(end[D[1024], fast, un], end[D[1024], fast, t5]) > 2 * math.log(KEYS_PER_EXAMPLE), "worse than guessing"
_spread = end[:, :, mu].max(0) / end[:, :, mu].min(0)  # per rate: 1.15, 1.51, 1.46
assert (_spread < 1.8).all(), "1/d_k: within a factor of 2 across d_k at each rate"
assert (end[:, slow, mu] > end[:, slow, [sc, un, t5]].max(-1)).all(), "1/d_k: the slowest at 0.003 at every d_k"
assert end[:, slow, mu].min() > 0.75, "1/d_k at 0.003: still above 0.75"  # 0.806
assert (end[:, :, mu].argmin(1) == fast).all() and (end[:, mid, mu] > 1.4 * end[:, fast, mu]).all(), "best: 0.03"
_level = np.r_[best[1:, sc], end[1:, fast, mu]]  # d_k = 64 on: .072 .062 .069 and .067 .065 .066
assert (abs(_level - 0.07) < 0.015).all() and (abs(best[1:, sc] - end[1:, fast, mu]) < 0.015).all(), _level
# the confidently wrong heads and the T5 head's unlearning (d_k = 1024, rate 0.003)
assert accuracy.min() > 0.9, accuracy  # 0.96
assert min(loss_on_missed["unscaled"], loss_on_missed["T5"]) > 8 and loss_on_missed["scaled"] < 2, loss_on_missed
assert steps[t5_best.argmin()] <= 10 and t5_best[-1] > 1.5 * t5_best.min(), "T5 at 1024: the loss rises again"
"""

NOT_MEASURED = {
    "2022": "the year of the μP paper",
    "0.5": "settings: the correlation ρ, the standard deviation σ, the noise of the training task",
    "20": "an example score difference (section 3)",
    "64": "the explorer's number of queries (a setting); d_k = 64 in the original Transformer",
    "100": "the explorer's histogram range, ±100 (a setting)",
    "1024": "the largest d_k of the lesson (a setting)",
    "0.95": "a threshold the prose defines (more than 0.95 of the weight)",
    "4000": "random pairs per point (a setting)",
    "200": "heads per d_k (a setting)",
    "16": "sizes of the set-up: entries of x, keys per head, d_model (settings)",
    "0.01": "a setting: the middle learning rate of section 6",
    "0.001": "a learning rate the student may try",
    "0.1": "a learning rate the student may try",
    "0.12": "a bound the prose states (asserted in CLAIMS: the scaled head at its best rate ends below it)",
    "0.75": "a bound the prose states (asserted in CLAIMS: the 1/d_k head at 0.003 ends above it)",
    "90": "a bound the prose states (asserted in CLAIMS: the accuracy of every run at d_k = 1024, rate 0.003)",
}
