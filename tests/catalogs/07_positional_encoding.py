"""Known wrong implementations (must lose points, with the message that names the mistake)
and correct variants (must keep full marks) for lesson 07."""

from catalog_tools import quiz


def _pe(body):
    return "def positional_encoding(T, d_model):\n" + body


_INTERLEAVE = "    pe = np.zeros((T, d_model))\n    pe[:, 0::2], pe[:, 1::2] = EVEN, ODD\n    return pe\n"
_POS = "    pos = np.arange(T)[:, None]\n    w = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"

EXERCISES = {
    "positional-encoding": {
        "wrong": {
            "concatenated": (
                _pe(_POS + "    return np.concatenate([np.sin(pos * w), np.cos(pos * w)], axis=1)\n"),
                "concatenated",
            ),
            "exponent i/d": (
                _pe(
                    "    pos = np.arange(T)[:, None]\n    w = 1.0 / 10000 ** (np.arange(d_model // 2) / d_model)\n"
                    + _INTERLEAVE.replace("EVEN", "np.sin(pos * w)").replace("ODD", "np.cos(pos * w)")
                ),
                "2i/d_model",
            ),
            "starts at position 1": (
                _pe(
                    "    pos = np.arange(1, T + 1)[:, None]\n"
                    "    w = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
                    + _INTERLEAVE.replace("EVEN", "np.sin(pos * w)").replace("ODD", "np.cos(pos * w)")
                ),
                "positions start at 0",
            ),
            "sin and cos swapped": (
                _pe(_POS + _INTERLEAVE.replace("EVEN", "np.cos(pos * w)").replace("ODD", "np.sin(pos * w)")),
                "swapped",
            ),
            "column index in the exponent": (
                _pe(
                    "    pos = np.arange(T)[:, None]\n"
                    "    j = np.arange(d_model) / d_model\n"
                    "    ang = pos / 10000 ** j\n"
                    "    pe = np.cos(ang)\n    pe[:, 0::2] = np.sin(ang[:, 0::2])\n    return pe\n"
                ),
                "share ω_i",
            ),
            "frequencies multiplied, not divided": (
                _pe(
                    "    pos = np.arange(T)[:, None]\n    w = 10000 ** (np.arange(0, d_model, 2) / d_model)\n"
                    + _INTERLEAVE.replace("EVEN", "np.sin(pos * w)").replace("ODD", "np.cos(pos * w)")
                ),
                None,
            ),
            "angles read as degrees": (
                _pe(
                    _POS
                    + _INTERLEAVE.replace("EVEN", "np.sin(np.radians(pos * w))").replace(
                        "ODD", "np.cos(np.radians(pos * w))"
                    )
                ),
                None,
            ),
            "transposed table": (
                _pe(
                    _POS
                    + _INTERLEAVE.replace("EVEN", "np.sin(pos * w)")
                    .replace("ODD", "np.cos(pos * w)")
                    .replace("    return pe\n", "    return pe.T\n")
                ),
                "transposed",
            ),
        },
        "right": {
            "double loop": _pe(
                "    pe = np.zeros((T, d_model))\n"
                "    for p in range(T):\n"
                "        for i in range(d_model // 2):\n"
                "            a = p / 10000 ** (2 * i / d_model)\n"
                "            pe[p, 2 * i], pe[p, 2 * i + 1] = np.sin(a), np.cos(a)\n"
                "    return pe\n"
            ),
            "exp and log, float32": _pe(
                "    pos = np.arange(T, dtype=np.float32)[:, None]\n"
                "    w = np.exp(-np.arange(0, d_model, 2, dtype=np.float32) * np.float32(np.log(10000.0) / d_model))\n"
                "    pe = np.empty((T, d_model), dtype=np.float32)\n"
                "    pe[:, ::2], pe[:, 1::2] = np.sin(pos * w), np.cos(pos * w)\n    return pe\n"
            ),
            "stack and reshape": _pe(
                _POS + "    a = pos * w\n    return np.stack([np.sin(a), np.cos(a)], axis=-1).reshape(T, d_model)\n"
            ),
            "torch float32": _pe(
                "    pos = torch.arange(T, dtype=torch.float32)[:, None]\n"
                "    w = torch.exp(-torch.arange(0, d_model, 2, dtype=torch.float32) * (np.log(10000.0) / d_model))\n"
                "    pe = torch.zeros(T, d_model)\n"
                "    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * w), torch.cos(pos * w)\n"
                "    return pe.numpy()\n"
            ),
        },
    },
    "add-positional-encoding": {
        "wrong": {
            "in place": (
                "def add_positional_encoding(X):\n    X += positional_encoding(*X.shape[-2:])\n    return X",
                "modified in place",
            ),
            "position 0 everywhere": (
                "def add_positional_encoding(X):\n    return X + positional_encoding(1, X.shape[-1])",
                "position 0",
            ),
            "multiplied": (
                "def add_positional_encoding(X):\n    return X * positional_encoding(*X.shape[-2:])",
                "multiplied",
            ),
            "concatenated": (
                "def add_positional_encoding(X):\n"
                "    return np.concatenate([X, positional_encoding(*X.shape[-2:])], axis=-1)",
                "shape",
            ),
            "first axis as length": (
                "def add_positional_encoding(X):\n    return X + positional_encoding(X.shape[0], X.shape[-1])",
                "T is X.shape[-2]",
            ),
            "np.add into X": (
                "def add_positional_encoding(X):\n    return np.add(X, positional_encoding(*X.shape[-2:]), out=X)",
                "modified in place",
            ),
            "positions in reverse order": (
                "def add_positional_encoding(X):\n    return X + positional_encoding(*X.shape[-2:])[::-1]",
                None,
            ),
            "returns None": (
                "def add_positional_encoding(X):\n    Y = X + positional_encoding(*X.shape[-2:])",
                "return",
            ),
        },
        "right": {
            "loop over positions": "def add_positional_encoding(X):\n    Y = np.array(X, dtype=float)\n"
            "    pe = positional_encoding(X.shape[-2], X.shape[-1])\n"
            "    for p in range(X.shape[-2]):\n        Y[..., p, :] = Y[..., p, :] + pe[p]\n    return Y",
            "copy then add in place": "def add_positional_encoding(X):\n    Y = X.copy()\n"
            "    Y += positional_encoding(*X.shape[-2:])\n    return Y",
            "a longer table, cut to T": "def add_positional_encoding(X):\n"
            "    return X + positional_encoding(512, X.shape[-1])[: X.shape[-2]]",
            "loop over the sentences": "def add_positional_encoding(X):\n    if X.ndim == 2:\n"
            "        return X + positional_encoding(*X.shape)\n"
            "    return np.stack([x + positional_encoding(*x.shape) for x in X])",
            "np.add": "def add_positional_encoding(X):\n    return np.add(X, positional_encoding(X.shape[-2], X.shape[-1]))",
            # Charged once: a correct 7.2 keeps its points although 7.1 is wrong (graded with a reference table).
            # Last on purpose: it leaves the broken positional_encoding in the kernel; only quiz questions follow.
            "correct, on top of a broken positional_encoding": (
                "def positional_encoding(T, d_model):\n    return np.zeros((T, d_model))\n"
                "def add_positional_encoding(X):\n    return X + positional_encoding(*X.shape[-2:])"
            ),
        },
    },
    "quiz-pe-position-zero": quiz("q1_answer", right=[256, 256.0], wrong=[512, 0, 128]),
    "quiz-fastest-wavelength": quiz(
        "q2_answer", right=[6.2832, 6.283185307179586, 6.283, 6.28], wrong=[1, 3.14, 62831.85]
    ),
    "quiz-equivariance": quiz("q3_answer", right=["b", "B"], wrong=["a", "c", "d"]),
    "quiz-offset": quiz("q4_answer", right=["b", " b"], wrong=["a", "c", "d"]),
    "quiz-learned-length": quiz("q5_answer", right=["b"], wrong=["a", "c", "d"]),
    # PE_{20,2} for d_model = 8 is sin(20 · 10000^(-2/8)) = sin(2.0); every wrong answer below is >= 0.03 away.
    "quiz-pe-entry": quiz(
        "q6_answer",
        right=[0.9093, 0.9092974268256817, 0.90930],
        wrong=[
            2.0,  # the angle, not its sine
            -0.4161,  # cos(2.0): sin and cos swapped
            0.0414,  # exponent i/d_model instead of 2i/d_model
            0.8632,  # position 21
            0.9463,  # position 19
            0.0349,  # the angle read in degrees
            0.1987,  # sines and cosines concatenated (dimension 2 = sin of pair 2)
            0.408,  # dimensions counted from 1 (dimension 1 = cos(20))
        ],
    ),
}

# Run in the solved kernel after the notebook: what the prose, the model answer and the rubric say about the lesson's
# own measurements.
NOT_MEASURED = {
    "2021": "the year of Su et al.'s RoFormer paper (RoPE)",
    "64": "the number of positions the explorer draws (a setting)",
    "20": "the number of random layers drawn, and the position asked about in Q6 (settings)",
    "300": "Q5's training length (a setting of the question)",
    "511": "Q5's last row of the table (a setting of the question)",
    "512": "Q5's table length (a setting of the question)",
    "600": "Q5's text length (a setting of the question)",
}
