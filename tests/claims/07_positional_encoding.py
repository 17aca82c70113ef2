"""What lesson 07_positional_encoding's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

# Section 1: without positions the second sentence's outputs and weights are the first's, reordered.
assert no_pe_diff < 1e-12 and weights_diff < 1e-12 and (out_cd[1] - out_dc[4]).abs().max() < 1e-12

# Section 2 and the model answer: the fastest pair turns once every 2π ≈ 6.3 positions.
claim("6.3", 2 * np.pi)

# Section 3: three starts give one curve, symmetric about k = 0, largest (d_model / 2) at offset 0, not monotonic.
zero = list(offsets).index(0)
assert spread < 1e-10 and symmetry < 1e-10 and np.argmax(curves[0]) == zero and curves[0, zero] == d_fig / 2
assert (np.diff(curves[0][zero:]) > 0).any()  # "not perfectly monotonically"
angles = 2 / 10000 ** (np.arange(0, d_fig, 2) / d_fig)
R = np.zeros((d_fig, d_fig))
for i, angle in enumerate(angles):
    R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
assert np.abs(pe_fig[:-2] @ R - pe_fig[2:]).max() < 1e-10  # one matrix R_2 for every p

# Section 4: only the raw dot product of the encodings is constant over the placements.
spreads_4 = {name: max(values) - min(values) for name, values in terms.items()}
constant = [name for name, s in spreads_4.items() if s < 1e-10]
assert constant == ["PE_p · PE_(p+2)  (section 3)"] and min(spreads_4.values(), key=abs) < 1e-10
assert all(s > 0.1 for name, s in spreads_4.items() if name not in constant)

# Section 5: RoPE's score is the same at every placement, and two ahead differs from two back.
ahead, back = rope_score(q_cat, k_dog, start, start + offset), rope_score(q_cat, k_dog, start, start - offset)
assert np.ptp(ahead) < 1e-12 and np.ptp(back) < 1e-12 and abs(ahead[0] - back[0]) > 0.01

# Section 6: rows beyond the trained length get no gradient; no row beyond max_len.
assert (grad_rows[train_len:] == 0).all() and (grad_rows[:train_len] > 0).all()


# Section 7 and the model answer: with one pair, positions 44 apart (about 7 turns) look alike; from d_model = 16 on the
# most similar other position is a direct neighbour (and at d_model = 8 it is not yet).
def most_similar(d):
    pe = positional_encoding(64, d)
    pe = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    similarity = pe @ pe.T - 2 * np.eye(64)
    p, q = np.unravel_index(np.argmax(similarity), similarity.shape)
    return abs(int(p) - int(q)), similarity[p, q]


claim("44", most_similar(2)[0])
claim("0.9998", most_similar(2)[1])
assert abs(most_similar(2)[0] / (2 * np.pi) - 7) < 0.01
assert all(most_similar(d)[0] == 1 for d in (16, 32, 64, 128)) and most_similar(8)[0] != 1
for d in (16, 32, 64, 128):  # "whichever p you pick": the explorer's most similar other position is a neighbour
    pe = positional_encoding(64, d)
    similarity = pe @ pe.T - 2 * np.diag(np.diag(pe @ pe.T))
    assert (np.abs(np.argmax(similarity, axis=1) - np.arange(64)) == 1).all()

# Section 8: with encodings the outputs are no longer a reordering, in every layer; added encodings move the score
# with the placement in every layer, RoPE keeps it constant and tells two ahead from two back.
assert max(without) < 1e-12 and min(with_pe) > 0.1 and cat_gap > 0.1
assert min(spreads["added"]) > 0.1 and max(spreads["rope"]) < 1e-12 and min(rope_gap) > 0.01
