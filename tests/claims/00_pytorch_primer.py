"""What lesson 00_pytorch_primer's prose, model answers and rubrics say about its own measurements, asserted
in the kernel that ran its solution notebook (tests/test_lessons.py; names are the notebook's)."""

# section 1: element-wise operations promote float32 with float64, the matrix product refuses
# (x was redefined in section 3: fresh float32 tensors here, with section 1's float64 t)
_x32 = torch.ones(2, 3)
assert (_x32 + t.T).dtype == torch.float64 and (_x32 * t.T).dtype == torch.float64
assert (_x32 * torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float32  # a float64 without axes does not
# the toy fit: 60 SGD steps at 0.1 land on the least-squares line
assert abs(w_fit - best_w) < 0.01 and abs(b_fit - best_b) < 0.01
# the explorer's questions: 0.1 and 0.3 arrive within the 40 steps, 0.01 does not
assert steps_needed[0.1] <= MAX_STEPS and steps_needed[0.3] <= MAX_STEPS < steps_needed[0.01], steps_needed
# "go past 0.4": the threshold is 0.4 to the digit written, and past it the line swings further at every step
claim("0.4", threshold)
_swing = np.array([w for w, _ in fit_line(0.45, MAX_STEPS)[1]]) - best_w
assert (np.sign(_swing[10:]) != np.sign(_swing[9:-1])).all() and (np.abs(_swing[10:]) > np.abs(_swing[9:-1])).all()
# the experiment: the measured boundary falls on 2/λ_max; below it SGD's loss fell, above it it grew
assert sgd_down.max() < threshold <= sgd_up.min()
assert (ratio["SGD"][lr_grid < threshold] < 1).all() and (ratio["SGD"][lr_grid > threshold] > 1).all()
# only a range reaches least squares in 40 steps, and the best rate of the theory lies in it
assert lr_grid[0] < near_best.min() <= 2 / (lam_min + lam_max) <= near_best.max() < threshold
# Adam: no threshold on the grid (its loss fell everywhere), and at the smallest rate it moved w far less than SGD
assert (ratio["Adam"] < 1).all() and moved["Adam"][0] < 0.5 * moved["SGD"][0]
claim("0.401", threshold)  # the threshold as the figure's title and caption write it (a float64 closed form)
