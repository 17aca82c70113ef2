"""What lesson 06_multi_head's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

# Section 1: one head sums the two values, so swapping them changes nothing; two heads keep them apart.
assert a_one[0] + a_one[1] <= 1 and abs(a_one[0] - a_one[1]) < 1e-12 and 0.45 < a_one[0] < 0.5  # just under half
assert np.abs(a_one @ values - a_one @ swapped).max() == 0
assert a1[0] > 0.99 and a2[1] > 0.99 and np.abs(two(values) - two(swapped)).max() > 0.9

# The data-flow figure: drawn from the student's functions, and the two heads favour different keys for 'dog'.
assert np.abs(out_flow - concat_flow @ W_flow[3]).max() < 1e-12
assert np.argmax(A_flow[0, traced]) != np.argmax(A_flow[1, traced])

# Explorer: the one head's scores are the two heads' scores added and divided by √2; two heads can disagree; with
# d_k = 1 every head's favourite key is one of two keys.
Q_e, K_e = view.X @ view.W[0], view.X @ view.W[1]
halves = [Q_e[:, c] @ K_e[:, c].T / np.sqrt(4) for c in (slice(0, 4), slice(4, 8))]
assert np.abs(Q_e @ K_e.T / np.sqrt(8) - (halves[0] + halves[1]) / np.sqrt(2)).max() < 1e-12
assert (favourites[2] != favourites[2][0]).any()
assert all(len(set(row)) <= 2 for row in favourites[8])

# Equal to PyTorch once the weights are copied in, per head and on average over the heads.
with torch.no_grad():
    for m in (None, causal):
        blocked = None if m is None else ~m
        o, w = mine(x, m)
        their_o, their_w = theirs(x, x, x, attn_mask=blocked, average_attn_weights=False)
        assert (o - their_o).abs().max() < 1e-5 and (w - their_w).abs().max() < 1e-6
        assert (w.mean(dim=1) - theirs(x, x, x, attn_mask=blocked)[1]).abs().max() < 1e-6

# Cost: H·T² weights; 4(d² + d) parameters whatever H is, yours and PyTorch's alike.
assert all(entries[H][i] == H * T**2 for H in entries for i, T in enumerate(lengths))
assert set(params.values()) == set(torch_params.values()) == {formula}

# The constructed dog model: a²/√8 = 6 in each head, sharp links; as one head two equal scores a²/√16 ≈ 4.24 and
# a split of "about half" of each value.
assert abs(s_two - 6) < 1e-9
claim("4.24", s_one[i_barked])
claim("4.24", s_one[i_which])
assert w_dog[0, i_dog, i_barked] > 0.95 and w_dog[1, i_dog, i_which] > 0.95
assert abs(w_one[0, i_dog, i_barked] - w_one[0, i_dog, i_which]) < 1e-12 and 0.4 < w_one[0, i_dog, i_barked] < 0.5

# Q7: eight heads of width 64 have exactly the parameters of one head of width 512.
count = lambda H: sum(p.numel() for p in MultiHeadAttention(512, H).parameters())
assert count(8) == count(1)
