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
            "float32 returned": S
            + "    return np.float32(Q) @ np.swapaxes(np.float32(K), -1, -2) / np.float32(np.sqrt(Q.shape[-1]))",
            "torch tensor returned (float32)": S + "    q, k = torch.tensor(Q, dtype=torch.float32), torch.tensor(K, "
            "dtype=torch.float32)\n    return q @ k.mT / q.shape[-1] ** 0.5",
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
_opt, _mom = torch.optim.Adam(_ref, lr=LR), [(torch.zeros_like(w), torch.zeros_like(w)) for w in _w]
for _step in range(1, 4):  # the lesson's adam_step takes exactly torch.optim.Adam's steps
    for params in (_w, _ref):
        (params[0] ** 3 * params[1]).sum().backward()
    adam_step(_w, _mom, _step)
    _opt.step()
    _opt.zero_grad()
assert all(torch.allclose(a, b, atol=1e-7) for a, b in zip(_w, _ref)), "adam_step differs from torch.optim.Adam"
claim("0.003", LR)
claim("120", STEPS)
claim("32", BATCH)
assert 1024**0.5 == 32, "√1024"
claim("48", curve.shape[1] * curve.shape[2] * curve.shape[3])
claim("512", held_out[0].shape[1])
assert SEEDS >= 3 and NOISE == 0.5 and KEYS_PER_EXAMPLE == 8 and D_MODEL == 16 and TRAIN_DIMS == [16, 64, 256, 1024]
assert N_KEYS == 12, "the explorer's 12 keys: section 6 must not change them"
claim("2.08", math.log(KEYS_PER_EXAMPLE))
claim("1.25", 1 + NOISE**2)  # the variance of a query's entries: a unit-variance key, rotated, plus the noise
assert abs(float(held_out[0].var()) - 1.25) < 0.05 and abs(float(held_out[1].var()) - 1) < 0.05
D = {d: i for i, d in enumerate(TRAIN_DIMS)}
start, end = curve[0].mean(-1), curve[-1].mean(-1)  # (d_k, variant): means over the seeds
assert steps[-1] == STEPS and steps[2] == 10 and steps[4] == 20
sc, un, mu, t5 = (v[name] for name in ("scaled", "unscaled", "1/d_k", "T5"))
claim("53", start[D[1024], un])
claim("6.8", start[D[16], un])
claim("0.42", end[D[16], sc])
claim("0.07", end[D[1024], sc])
claim("0.28", end[D[16], un])
claim("0.15", end[D[64], un])
claim("0.41", end[D[1024], un])
claim("0.50", curve[4, D[1024], un].mean())
assert 5.5 < end[D[1024], un] / end[D[1024], sc] < 6.5, "six times the scaled head's"
claim("0.81", end[:, mu].min())
claim("0.93", end[:, mu].max())
claim("0.07", end[D[64], t5])
claim("0.18", t5_best.min())
assert steps[t5_best.argmin()] == 5, "the T5 head's loss is lowest at step 5"
claim("0.38", t5_best[-1])
acc = accuracy[STEPS].numpy()
claim("88.7", 100 * acc.min())
claim("98.4", 100 * acc.max())
claim("11.4", loss_on_missed["unscaled"])
claim("9.7", loss_on_missed["T5"])
claim("1.2", loss_on_missed["scaled"])
# the comparisons the prose makes
scaled_curves = curve[:, :, sc].mean(-1)  # (evaluation, d_k)
assert (np.diff(scaled_curves, axis=0) < 0).all(), "scaled: the loss falls steadily at every d_k"
assert (curve[-1, :, sc].max(-1) - curve[-1, :, sc].min(-1) < 0.05).all(), "scaled: the seeds stay close"
assert (np.diff(end[:, sc]) < 0).all(), "scaled: bigger heads train better"
assert (start[:, un] > 3 * math.log(KEYS_PER_EXAMPLE)).all(), "unscaled: confidently wrong at step 0"
assert np.all(np.diff(start[:, un]) > 0), "unscaled: the step-0 loss rises with d_k"
assert end[D[16], un] < end[D[16], sc], "unscaled ends below scaled at d_k = 16"
claim("0.15", end[D[256], un])  # "0.15 at d_k = 64 and at d_k = 256, but 0.41 at d_k = 1024"
assert end[D[1024], un] > 2 * max(end[D[64], un], end[D[256], un]), "unscaled: worse at 1024 than at 64 and 256"
assert end[D[1024], t5] > 2 * end[D[64], t5], "T5: worse at 1024 than at 64"
assert step0_gap < 1e-6, "T5 equals scaled at step 0"
assert (end[:, mu] > end[:, [sc, un, t5]].max(-1)).all(), "1/d_k: the slowest at every d_k"
assert np.ptp(curve[:, :, mu].mean(-1), axis=1).max() < 0.15, "1/d_k: nearly the same curve at every d_k"
assert end[D[16], t5] == end[D[16]].min() and end[D[64], t5] == end[D[64]].min(), "T5: fastest at small d_k"
assert abs(end[D[1024], t5] - end[D[1024], un]) < 0.1, "T5 ends close to the unscaled head at 1024"
assert t5_best[-1] > 2 * t5_best.min(), "T5 at 1024: the loss rises again"
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
    "0.01": "a learning rate the student may try",
    "0.001": "a learning rate the student may try",
}
