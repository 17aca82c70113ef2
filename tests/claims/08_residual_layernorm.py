"""What lesson 08_residual_layernorm's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

import numpy as _np

# section 1: without skips the derivative shrinks by a roughly constant factor per layer; with skips it stays of the
# order of a single layer's
_no = [stack_jacobian_norm(D, False) for D in (1, 5, 10)]
_yes = [stack_jacobian_norm(D, True) for D in (1, 5, 10)]
assert _no[0] > 5 * _no[1] > 25 * _no[2] and max(_yes) < 10 * min(_yes), (_no, _yes)
# section 6: post-LN's stream leaves every block with size 1, pre-LN's grows
_x0 = torch.from_numpy(data.embed(data.DOG_SENTENCE, 16))[None]
for _nf in (False, True):
    torch.manual_seed(0)
    _blocks = [EncoderBlock(16, 2, 32, norm_first=_nf).double().eval() for _ in range(12)]
    _x, _sizes = _x0, []
    with torch.no_grad():
        for _b in _blocks:
            _x = _b(_x)
            _sizes.append(rms(_x))
    assert (max(abs(s - 1) for s in _sizes) < 0.01) if not _nf else (_sizes[-1] > 1.4 * _sizes[0]), _sizes
# section 7 (things to try) and 8: the stream's size after 32 layers
_size = {c: _np.mean([runs[c, 32, s][1][-1] for s in range(3)]) for c in CONFIGS}
assert abs(_size["residual + post-LN"] - 1) < 0.01 and abs(_size["layer norm only"] - 1) < 0.01
assert 1 < _size["residual + pre-LN"] < _size["residual only"], _size
# section 7, things to try: with a residual path every layer's gradient stays within a small factor of the last one's
for _c in ("residual only", "residual + post-LN", "residual + pre-LN"):
    _grads = ffn_stack(32, _c, feed_forward, layer_norm)[0]
    assert max(_grads) < 10 * _grads[-1] and min(_grads) > _grads[-1] / 10, (_c, _grads)
_plain = ffn_stack(32, "plain", feed_forward, layer_norm)[0]
assert _plain[0] < 1e-10 * _plain[-1], "plain: many orders of magnitude"
# section 8, the gradient reaching layer 1 (prose and model answer)
_g = first_layer
claim("79", _g["layer norm only"][0], tol=0.5)
claim("0.29", _g["layer norm only"][-1])
claim("2.5", _g["plain"][-1] / 1e-19)
claim("14", _g["residual + post-LN"][-1])
claim("43", _g["residual only"][-1])
assert all(13.5 <= _g[c][-1] <= 43.5 for c in ("residual only", "residual + post-LN", "residual + pre-LN"))
assert _g["layer norm only"][-1] < _g["layer norm only"][0] / 100 and _g["plain"][-1] < 1e-15
# Training. The statements are orderings and bounds with a margin: the numbers themselves moved between CPUs and
# PyTorch's CPU code paths (as is, ATEN_CPU_CAPABILITY=default with one thread, =avx2), and so did the count of
# seeds near the "learned" line ('learned' = a final loss more than 0.2 below the class-frequency loss).
claim("1.38", baseline)  # no training: the class frequencies of 20,000 teacher labels
_m = {key: f.mean() for key, f in final.items()}
# lr 0.003: both learn in every seed, about equally well; 3 blocks at 0.03: both learn in every seed
for _key in ((12, 3e-3, "post-LN"), (12, 3e-3, "pre-LN"), (3, 3e-2, "post-LN"), (3, 3e-2, "pre-LN")):
    assert learned[_key] == 4, (_key, final[_key])
assert abs(_m[12, 3e-3, "post-LN"] - _m[12, 3e-3, "pre-LN"]) < 0.05
# 0.02 and 0.03 without warm-up: every post-LN seed above every pre-LN seed; post-LN's mean closer to the
# class-frequency loss than to pre-LN's; every pre-LN seed learns
for _lr in (2e-2, 3e-2):
    _post, _pre = final[12, _lr, "post-LN"], final[12, _lr, "pre-LN"]
    assert _post.min() > _pre.max(), (_lr, _post, _pre)
    assert abs(_post.mean() - baseline) < abs(_post.mean() - _pre.mean()), (_lr, _post, _pre)
    assert learned[12, _lr, "pre-LN"] == 4, (_lr, _pre)
# the warm-up at 0.02: well below post-LN without it (by more than 0.15), above pre-LN's mean
assert _m[12, 2e-2, "post-LN with warm-up"] < _m[12, 2e-2, "post-LN"] - 0.15, _m
assert _m[12, 2e-2, "post-LN with warm-up"] > _m[12, 2e-2, "pre-LN"], _m
# the same warm-up for pre-LN: its mean final loss below post-LN-with-warm-up's by more than 0.1 at 0.02 (measured
# about 0.2 as is and with ATEN_CPU_CAPABILITY=default) and by more than 0.3 at 0.03 (about 0.5-0.6); every pre-LN
# seed learns; for pre-LN the warm-up moves the mean final loss by less than 0.1 (measured under 0.035)
for _lr, _gap in ((2e-2, 0.1), (3e-2, 0.3)):
    _post_w, _pre_w = _m[12, _lr, "post-LN with warm-up"], _m[12, _lr, "pre-LN with warm-up"]
    assert _pre_w < _post_w - _gap, (_lr, _pre_w, _post_w)
    assert learned[12, _lr, "pre-LN with warm-up"] == 4, (_lr, final[12, _lr, "pre-LN with warm-up"])
    assert abs(_pre_w - _m[12, _lr, "pre-LN"]) < 0.1, (_lr, _pre_w, _m[12, _lr, "pre-LN"])
# 0.03 with warm-up: lowest 10-step mean in the first half of the warm-up (rate below 0.015), then up by more than 0.2
assert lowest + 10 <= WARMUP / 2 and 3e-2 * (lowest + 10) / WARMUP < 0.015, lowest
assert warm[-1] > warm[lowest] + 0.2, (warm[lowest], warm[-1])
# "climbs back ... once the rate has passed 0.02": the first 10-step window after the lowest whose mean is above the
# midway point between the lowest and the final mean starts at a step where the rate is already above 0.02
_climb = next(s for s in range(lowest, len(warm)) if warm[s] > (warm[lowest] + warm[-1]) / 2)
assert 3e-2 * (_climb + 1) / WARMUP > 0.02, _climb
