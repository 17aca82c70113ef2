"""What lesson 03_scaling's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

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
