"""What lesson 02_dot_product's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

import numpy as np

# section 2: the longest key is the viral video's
lengths = np.linalg.norm(K_videos, axis=1)
claim("2.16", lengths.max())
assert titles[int(np.argmax(lengths))] == "Top 100 viral moments"
# section 4: the query's length as an inverse temperature; the winner never changes
claim("11", len(titles))
claim("0.091", 1 / len(titles))
weights_c = {c: soft_lookup(c * q_videos, K_videos, V_videos)[1] for c in (0.25, 1.0, 4.0, 16.0)}
claim("0.114", weights_c[0.25].max())
assert weights_c[16.0].max() > 0.5, "at c = 16 the best video takes more than half of the weight"
assert len({int(np.argmax(w)) for w in weights_c.values()}) == 1, "the winner never changes"
assert 0 < weights_c[16.0].min() < 1e-10, "tiny but positive"
# section 4: where exp underflows to exactly 0
first_zero = {t: next(s for s in range(1000) if np.exp(-t(s)) == 0) for t in (np.float64, np.float32)}
claim("745", first_zero[np.float64], tol=1)
claim("104", first_zero[np.float32])
assert (shifted / shifted.sum())[2] == 0 and (shifted / shifted.sum())[1] > 0
# section 5: kernel regression against dot-product attention on the library
assert rank["dot"] == 2 and rank["kernel"] >= len(titles) - 3, rank  # "near the top" vs "far down"
assert unit_gap < 1e-12, unit_gap  # keys of length 1: the same weights, to rounding
assert all(gap < 1e-12 for _, gap in qk_norm.values()), qk_norm  # QK-norm = the kernel on unit vectors
assert qk_norm[1.0][0] < qk_norm[0.5][0] < qk_norm[0.25][0], "a narrower kernel (larger g) is sharper"
# section 6: the experiment
claim("201", len(lambdas))
claim("200", len(hard_steps))
claim("198", flat)
assert np.count_nonzero(hard_steps) == 2 and len(jumps) == 2
assert len(stretches) == 3 and stretches[1][0] == "Top 100 viral moments", stretches  # the long middle stretch
assert stretches[1][2] - stretches[1][1] > max(s[2] - s[1] for s in (stretches[0], stretches[2])), "the long one"
_energy = data.VIDEO_CONTENT.index("energy")
assert np.allclose([V_videos[titles.index(t)][_energy] for t in held], hard_path), "the named videos are the lookup's"
assert all(np.count_nonzero(steps) == len(steps) for steps in soft_steps.values()), "soft: changes at every step"
assert np.abs(soft_path[4.0] - hard_path).mean() < np.abs(soft_path[1.0] - hard_path).mean(), "×4 is closer"
assert soft_steps[4.0].max() > soft_steps[1.0].max(), "×4: larger largest change per step"
# section 7: the sharpness table
t = sharpness_table
claim("0.04", t["cats jumping"][2] - t["cats jumping"][3])
claim("64", t["cats jumping"][5])
claim("0.14", t["cats sleeping"][2] - t["cats sleeping"][3])
claim("16", t["cats sleeping"][5])
assert all(abs(row[4][0] - 1 / len(titles)) < 1e-12 for row in t.values()), "β = 0: uniform weights"
assert t["cooking music"][:2] == ("Top 100 viral moments", "Jazz for cooking")
claim("1.76", t["cooking music"][2])
claim("1.70", t["cooking music"][3])
