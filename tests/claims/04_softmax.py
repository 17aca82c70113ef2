"""What lesson 04_softmax's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

import numpy as np
import torch

# section 1: the limits of exp in float32 and float64
ln_max = {t: float(np.log(np.finfo(t).max)) for t in (np.float32, np.float64)}
underflow = {t: float(np.log(float(np.finfo(t).smallest_subnormal)) - np.log(2)) for t in (np.float32, np.float64)}
claim("88.72", ln_max[np.float32]) and claim("709.78", ln_max[np.float64])
assert ln_max[np.float32] < 89 and claim("89", ln_max[np.float32], tol=0.5), "float32's limit is below 89"
claim("104", -underflow[np.float32], tol=0.5) and claim("745", -underflow[np.float64], tol=0.5)
assert np.exp(np.float32(-104)) == 0 < np.exp(np.float32(-103)), "float32 underflows to exactly 0 below about -104"
assert np.exp(-746.0) == 0 < np.exp(-745.0), "float64 underflows to exactly 0 below about -745"
assert np.isnan(naive_big).all() and np.isnan(naive_small).all(), "the formula as written gives NaN at ±1000"
# section 3: fully masked rows in the PyTorch installed here
fm = {name: row.numpy() for name, row in fully_masked.items()}
assert (fm["F.scaled_dot_product_attention, output"] == 0).all()
assert np.isnan(fm["torch.softmax of its row of -inf scores"]).all()
assert np.isnan(fm["nn.MultiheadAttention(need_weights=True), output"]).all()
assert (fm["nn.MultiheadAttention(need_weights=False), output"] == 0).all()
# section 4: every way of averaging the past agrees with causal_average
assert all(np.abs(r - averaged).max() < 1e-12 for r in ways.values()), ways
assert np.allclose(np.broadcast_to(averaging, (4, 4)), np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None])
# section 5: what d_k does, with and without the scaling; the two rows split between the two copies of "the"
claim("2.58", np.log2(6))
# the temperature figure's title and caption: entropies of fixed scores (float64, no training)
claim("0.14", H[0.25]) and claim("2.52", H[4.0])
assert 0.4 < s2 - s512 < 0.6, "about half a bit with the scaling"
assert u2 - u512 > 2 and u512 < 0.2, "more than 2 bits without it, near 0 bits at d_k = 512"
Qe, Ke, Xe = explorer_inputs(16, 0.1)
we = torch.softmax(torch.from_numpy(Qe @ Ke.T / 4.0), dim=-1).numpy()
assert ((we[:, 0] > 0.45) & (we[:, 4] > 0.45)).sum() == 2, "two rows split their weight between the two 'the'"
for d in (2**i for i in range(1, 10)):  # "raise it to 5: every row comes close to uniform"
    Qe, Ke, Xe = explorer_inputs(d, 5.0)
    we = torch.softmax(torch.from_numpy(Qe @ Ke.T / np.sqrt(d)), dim=-1).numpy()
    assert (-(we * np.log2(we)).sum(-1) > 2.4).all(), d
causal_first = torch.softmax(torch.from_numpy(np.where(np.tril(np.ones((6, 6), bool)), 0.0, -np.inf)), -1)[0]
assert causal_first[0] == 1, "under the causal mask the first row sees only itself (entropy 0)"
# section 6: your attention equals PyTorch's; the formula as written fails past ln(max); yours stays at rounding
assert d_softmax < 1e-12 and max(d_attention.values()) < 1e-12, d_attention
for name in ("float32", "float64"):
    assert first_failure[name] == s_values[s_values > np.log(np.finfo(name).max)].min(), "the first s past the line"
    before = s_values < first_failure[name]
    curves = error_curves[name]
    assert curves["formula as written"][before].max() <= 3 * curves["your stable softmax"].max(), "just as accurate"
assert first_failure["float32"] < first_failure["float64"], "float32 fails first"
assert stable_error["float32"] < 1e-6 and stable_error["float64"] < 1e-15
claim("16", -np.log10(stable_error["float64"]), tol=1) and claim("7", -np.log10(stable_error["float32"]), tol=1)
print("every claim holds")
