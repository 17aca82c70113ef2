"""What lesson 11_attention_at_scale's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

per_matrix = [plain_peak[T] / (8 * T * T) for T in LENGTHS]
# section 1: a fixed number of T x T matrices, the fit's coefficient gives the same number; output-only: still several
assert max(per_matrix) - min(per_matrix) < 0.2 and abs(a2 / 8 - per_matrix[-1]) < 0.05
assert all(2 <= output_only_peak[T] / (8 * T * T) < per_matrix[i] for i, T in enumerate(LENGTHS))
# section 2: the maximum grew twice in the demo; online softmax = lesson 4's to rounding at any block size
z = np.array([0.5, 1.0, -2.0, 2.5, 0.0, 1.5, 4.0, 3.0, -1.0, 0.2])
assert sum(z[s : s + 3].max() > z[:s].max() for s in range(3, 10, 3)) == 2
assert max(np.abs(online_softmax(logits, b) - checks.to_numpy(softmax_04(logits))).max() for b in (1, 7, 50)) < 1e-12
# section 3: tiled = lesson 4 within 1e-6 (far inside); its peak a small multiple of the output; plain's far above
assert np.abs(tiled_out - plain_out).max() < 1e-12 and np.abs(causal_tiled - causal_plain).max() < 1e-12
assert tiled_peak_1024 < 3 * 8 * 1024 * D_HEAD < output_only_peak[1024] / 10
# section 4: the backward pass = autograd; the buffered loop = attention; traffic laws and the crossover at 3d^2
assert backward_gap < 1e-12 and io_gap < 1e-12
assert 1.8 < slope_N < 2.05 and -1.05 < slope_M < -0.9 and 12 <= min(ratio_to_theory) <= max(ratio_to_theory) < 16
assert fewer_from == 3 * D_IO**2 and traffic[N_IO[-1], M_IO[0]] > plain_traffic[N_IO[-1]]
# the largest fast memory counted is 12 d^2, where the tiles move less than a third of plain attention's numbers
assert M_IO[-1] == 12 * D_IO**2 and share_at_largest < 1 / 3
assert all(all(traffic[N, M] == 2 * N * D_IO + 12 * N * N * D_IO**2 // M for M in M_IO) for N in N_IO)
# Q8: doubling M roughly halves the traffic for a long sequence
assert all(0.45 < traffic[N_IO[-1], 2 * M] / traffic[N_IO[-1], M] < 0.6 for M in M_IO[:-1])
# a CPU shows it too: the tiled CPU kernel is the faster one on the vectorised code paths, about as fast on the
# unvectorised fallback. A ratio of processor times within one run: 1.5-3.4 on an AVX2 machine quiet or at a load of 6
# (four `yes` loops and a torch matmul loop), so 1.2 leaves a margin
if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
    assert cpu_speedup > 1.2, cpu_speedup
else:
    assert 0.5 < cpu_speedup < 2.5, cpu_speedup
# section 5: the cache bytes equal the formula; uptraining is a fifth of the training, on half of lesson 10's steps
assert measured_per_token == formula_per_token and UPTRAIN_STEPS * 5 == BASE_STEPS == 400 // 2
# pooling raises the loss, most for one kv head; the extra steps still help the multi-head control (no memorising
# regime); uptraining closes more than half of the gap, not all: every seed stays behind its own multi-head decoder,
# by a few hundredths of a nat (2 kv heads) and about a tenth (1); the per-seed differences lie closer together than
# the seeds' own multi-head losses. This is Q9's key.
before = {n: np.mean(b) for n, (b, _) in uptraining.items()}
assert before[1] > before[2] > before[4] + 0.1 and np.mean(uptraining[4][1]) < before[4]
assert all(0.5 < closed[n] < 1 and (paired[n] > 0).all() for n in (2, 1)), (closed, paired)
assert 0.01 < paired[2].min() and paired[2].max() < 0.06 and 0.07 < paired[1].min() and paired[1].max() < 0.14
assert all(np.ptp(paired[n]) < np.ptp(multi_head) for n in (2, 1))
# section 6 (explorer prose): with B >= T at a tiny T, the tiled peak is as large as plain's or larger
q8, k8, v8 = Q_ex[:8], K_ex[:8], V_ex[:8]
assert peak_memory(tiled_attention, q8, k8, v8, 32)[1] >= peak_memory(attention_output_only, q8, k8, v8)[1]
# section 7 and Q10's model answer
assert (
    abs(plain_fit[0] / 8 - 3) < 0.05 and misfit(tiled_fit1, tiled_y) < 0.02 and abs(tiled_fit2[0]) < 1e-3 * plain_fit[0]
)
assert 0.9 < tiled_fit1[0] / (8 * D_HEAD) < 2.2
extra = [by_block[B] - output_bytes_1024 for B in block_sizes]
assert extra == sorted(extra) and 1 < extra[-1] / (8 * 256 * 256) < 6
claim("0.66", mib(tiled_peak[2048]))
claim("96.0", mib(output_only_peak[2048]))
# section 8: causal tiles roughly quadruple when T doubles, window tiles roughly double; block order does not matter
causal_counts = [int((tile_grid(T, 64, causal=True) > 0).sum()) for T in (2048, 4096, 8192)]
window_counts = [int((tile_grid(T, 64, window=512) > 0).sum()) for T in (2048, 4096, 8192)]
assert all(3.5 < b / a < 4.5 for a, b in zip(causal_counts, causal_counts[1:]))
assert all(1.8 < b / a < 2.3 for a, b in zip(window_counts, window_counts[1:])) and spread < 1e-12
