"""Assertions used by the visible and hidden tests.

A failed check raises AssertionError with a message in the student's terms (shapes, axes) and,
where a known mistake explains the result, names that mistake. The numerical helpers are bound
when this module is imported, so rebinding `np.allclose` or `np.abs` in an answer cell later
cannot make a wrong answer pass.
"""

import math
import numbers
import types

import numpy as np

_abs, _argmax, _isfinite, _asarray, _unravel = np.abs, np.argmax, np.isfinite, np.asarray, np.unravel_index
_float64 = np.float64


def to_numpy(x):
    """float64 numpy copy of an array, tensor or nested list."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    return _asarray(x, dtype=_float64)


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else tuple(_asarray(x).shape)


def call(fn, *args, **kwargs):
    """Call the student's function; an unanswered exercise gives a one-line hint instead of a traceback."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotImplementedError(
            f"`{getattr(fn, '__name__', fn)}` is not implemented yet: replace `raise NotImplementedError()` "
            "with your code and run that cell."
        ) from None


def with_references(fn, **references):
    """A copy of the student's function `fn` that finds `references` under those global names.

    `checks.with_references(attention, project=reference_project)` calls the student's `attention`
    with a reference version of the earlier exercise's `project`, so that one mistake costs points in
    one place only. The student's other names are looked up as they were when this was called.
    Anything that is not a plain Python function is returned unchanged."""
    if not isinstance(fn, types.FunctionType):
        return fn
    copy = types.FunctionType(
        fn.__code__, {**fn.__globals__, **references}, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def expect_shape(x, shape, what):
    """`what` must have exactly this shape."""
    got = _shape(x)
    if got != tuple(shape):
        raise AssertionError(f"{what} should have shape {tuple(shape)}, but has shape {got}.")


def output_and_weights(result, what, d_v, T_k, fn="the function"):
    """The `(output, weights)` pair that attention functions return, checked: a tuple of two, output first.

    `d_v` and `T_k` are the sizes of the last axis of the output and of the weights; when they differ, a pair in the
    wrong order is named as such. Returns (output, weights) for further checks."""
    expect(
        isinstance(result, (tuple, list)) and len(result) == 2,
        f"{what}: {fn} must return a tuple (output, weights), output first.",
    )
    output, weights = result
    swapped = d_v != T_k and _shape(output)[-1:] == (T_k,) and _shape(weights)[-1:] == (d_v,)
    expect(
        not swapped,
        f"{what}: the tuple is the wrong way round: you returned (weights, output); return (output, weights), "
        "output first.",
    )
    return output, weights


def _max_diff(a, b):
    return float(_abs(a - b).max()) if a.size else 0.0


def _close(a, b, atol, rtol):
    return (
        a.shape == b.shape
        and bool(_isfinite(a).all())
        and _max_diff(a, b) <= atol + rtol * float(_abs(b).max(initial=0))
    )


def is_close(actual, expected, atol=1e-6, rtol=1e-6):
    """True if both have the same shape and agree within atol + rtol·max|expected|."""
    return _close(to_numpy(actual), to_numpy(expected), atol, rtol)


def expect_no_mistake(actual, what, mistakes, atol=1e-6, rtol=1e-6):
    """Fail, naming the mistake, if `actual` equals what one of the known `mistakes` would produce."""
    if actual is None:
        raise AssertionError(f"{what} returned None: did you forget the `return` statement?")
    a = to_numpy(actual)
    for description, wrong in (mistakes or {}).items():
        if _close(a, to_numpy(wrong), atol, rtol):
            raise AssertionError(f"{what} is not right: {description}")


def expect_close(actual, expected, what, atol=1e-6, rtol=1e-6, mistakes=None):
    """`actual` must equal `expected` within atol + rtol·max|expected|.

    mistakes: {description: what that mistake would have produced}. If the answer matches one,
    the message names it ("you divided by d_k instead of √d_k")."""
    if actual is None:
        raise AssertionError(f"{what} returned None: did you forget the `return` statement?")
    a, e = to_numpy(actual), to_numpy(expected)
    if not _close(a, e, atol, rtol):
        expect_no_mistake(a, what, mistakes, atol, rtol)
    if a.shape != e.shape:
        raise AssertionError(f"{what} should have shape {e.shape}, but has shape {a.shape}.")
    if not _isfinite(a).all() and _isfinite(e).all():
        raise AssertionError(
            f"{what} contains NaN or inf where the expected result is finite (an overflow, or a division by zero?)."
        )
    tol = atol + rtol * float(_abs(e).max(initial=0))
    diff = _max_diff(a, e)
    if not diff <= tol:
        idx = tuple(int(i) for i in _unravel(_argmax(_abs(a - e)), a.shape)) if a.ndim else ()
        raise AssertionError(
            f"{what} is off by up to {diff:.3g} (tolerance {tol:.1g}); at index {idx} "
            f"it is {a[idx]:.6g} where {e[idx]:.6g} was expected."
        )


def expect(condition, message):
    """A plain check with a message for the student."""
    if not condition:
        raise AssertionError(message)


def passed(what):
    """Say that a group of checks passed (test cells end with this, never with a bare expression)."""
    print(f"✓ {what}: all checks passed.")


# --- quiz answers -------------------------------------------------------------------------


def expect_choice(answer, choices, what):
    """Visible check of a multiple-choice answer's format: one of the letters in `choices`."""
    if answer is None:
        raise AssertionError(f"{what}: replace None with your answer, one of {', '.join(map(repr, choices))}.")
    if str(answer).strip().lower() not in [c.lower() for c in choices]:
        raise AssertionError(f"{what}: answer with one of {', '.join(map(repr, choices))} (a string), not {answer!r}.")


def expect_number(answer, what):
    """Visible check of a numeric answer's format: a finite int or float."""
    if answer is None or isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        raise AssertionError(f"{what}: answer with a number (int or float), not {answer!r}.")
    if not math.isfinite(float(answer)):
        raise AssertionError(f"{what}: answer with a finite number, not {answer!r}.")


def check_choice(answer, correct, what):
    """Hidden check of a multiple-choice answer, compared as str(answer)."""
    text = str.__str__(str(answer))  # a plain str: a str subclass cannot redefine strip, lower or !=
    if text.strip().lower() != correct.lower():
        raise AssertionError(f"{what}: not the expected answer.")


def check_number(answer, correct, what, tol=1e-6):
    """Hidden check of a numeric answer, compared as float(answer)."""
    value = float.__float__(float(answer))  # a plain float: a float subclass cannot redefine - or <=
    if not abs(value - correct) <= tol * max(1.0, abs(correct)):
        raise AssertionError(f"{what}: not the expected value.")


def expect_finite(x, what, hint=""):
    """Every entry of `x` must be finite (no NaN, no ±inf); `hint` names the likely cause."""
    if x is None:
        raise AssertionError(f"{what} returned None: did you forget the `return` statement?")
    a = to_numpy(x)
    if not _isfinite(a).all():
        raise AssertionError(f"{what} contains NaN or inf. {hint}".strip())


# --- lessons 06 and 07 (added for 06_multi_head; lessons 10 and 11 load that module) ----------------------------


def same_as_torch_attention(call, theirs, x, mask, what, mistakes=None, atol=1e-5, hint=""):
    """Run `call()`, a multi-head self-attention module on `x` (B, T, d_model) with `mask` (a boolean (T, T) tensor,
    True = may attend, or None) returning (output, weights), and check it against `theirs`: PyTorch's
    nn.MultiheadAttention (batch_first) holding the same weights. An error in the call, the pair's order, the output's
    dtype (the input's), the output (naming a known mistake from `mistakes` when it matches one) and every head's
    weights are each reported as a failed check of `what`; `hint` is added to a mismatch's message."""
    try:
        result = call()
    except NotImplementedError:
        raise NotImplementedError(f"{what}: not implemented yet: replace `raise NotImplementedError()`.") from None
    except Exception as error:  # the student's code failed: say where, in one line
        raise AssertionError(f"{what} raised {type(error).__name__}: {error}") from None
    blocked = None if mask is None else ~mask  # PyTorch's boolean attn_mask: True = blocked
    want, want_weights = theirs(x, x, x, attn_mask=blocked, average_attn_weights=False)  # every head's weights
    output, weights = output_and_weights(result, what, d_v=x.shape[-1], T_k=x.shape[-2], fn="forward")
    expect(output.dtype == x.dtype, f"{what}: the output is {output.dtype} for an input of {x.dtype}.")
    try:
        expect_close(output, want, f"the output of {what}", atol=atol, mistakes=mistakes)
        expect_close(weights, want_weights, f"every head's weights of {what}", atol=atol)
    except AssertionError as error:
        raise AssertionError(f"{error} {hint}".strip()) from None
    return output, weights


# --- lessons 04 and 05 ---------------------------------------------------------------------------------------------


def attempt(fn, *args, what, hint="", **kwargs):
    """Call the student's `fn` as `call` does; an error raised inside it fails the check of `what` in one line that
    names the error and `hint`, its likely cause (e.g. `K.T` on a batch), instead of a traceback."""
    try:
        return call(fn, *args, **kwargs)
    except (NotImplementedError, AssertionError):
        raise
    except Exception as error:  # the student's code failed: say where, in one line
        raise AssertionError(f"{what} failed ({type(error).__name__}: {error}). {hint}".strip()) from None
