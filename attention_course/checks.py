"""Assertions used by the visible and hidden tests.

A failed check raises AssertionError with a message in the student's terms (shapes, axes) and,
where a known mistake explains the result, names that mistake.

The checks are written so that grading can trust them while the student's code runs in the same
process:

* Every value a check receives is first reduced to plain data (`plain`: a float64 numpy array, a
  float, a str) by exact type checks and C-level conversions, so no method of a student's object
  (`__float__`, `__eq__`, `__array__`, `detach`, ...) ever runs inside a check, where the expected
  value is at hand.
* The checks look nothing up in this module's globals or in the builtins at run time: everything
  they use was bound when this module was imported, into a kit that each function receives as the
  keyword-only default `_k`. Rebinding `np.abs`, `builtins.float` or a name in this module, even
  for a moment, cannot change what a check does (reading or changing a function's defaults is an
  audited event that the grader's integrity guard reports).
"""

import builtins
import math
import sys
import tracemalloc
import types

import numpy as np


def _make_kit():
    """What the checks use, bound now: builtins, numpy's C functions, C-level accessors."""
    kit = types.SimpleNamespace()
    for name in (
        "abs",
        "bool",
        "float",
        "int",
        "len",
        "list",
        "max",
        "print",
        "str",
        "tuple",
        "type",
        "AssertionError",
        "NotImplementedError",
        "ValueError",
        "OverflowError",
        "dict",
        "Exception",
        "getattr",
        "setattr",
    ):
        setattr(kit, name, getattr(builtins, name))
    kit.FunctionType = types.FunctionType
    kit.isfinite_number = math.isfinite
    kit.np_abs, kit.np_argmax, kit.np_isfinite = np.abs, np.argmax, np.isfinite
    kit.np_array, kit.np_unravel, kit.float64 = np.array, np.unravel_index, np.float64
    kit.ndarray = np.ndarray
    kit.np_broadcast_to = np.broadcast_to
    kit.np_bool = np.bool_
    kit.np_scalars = tuple(
        t
        for t in vars(np).values()
        if isinstance(t, type) and issubclass(t, (np.integer, np.floating)) and t.__module__ == "numpy"
    )
    kit.np_str = np.str_
    kit.dtype_of = np.ndarray.dtype.__get__  # C getter: a subclass's `dtype` property is never called
    kit.mro_of = type.__dict__["__mro__"].__get__  # C getters: a metaclass cannot intercept them
    kit.name_of = type.__dict__["__name__"].__get__
    kit.str_of_str = str.__str__  # the plain text of a str (or of a str subclass, without its methods)
    kit.float_of_float = float.__float__
    kit.int_of_int = int.__int__
    kit.args_of = BaseException.__dict__["args"].__get__  # C getter of an exception's arguments
    kit.tracemalloc = tracemalloc  # lesson 11's memory check (numpy_peak_memory)
    kit.trace_start, kit.trace_stop, kit.traced = tracemalloc.start, tracemalloc.stop, tracemalloc.get_traced_memory
    kit.is_tracing, kit.switch_get, kit.switch_set = (
        tracemalloc.is_tracing,
        sys.getswitchinterval,
        sys.setswitchinterval,
    )
    kit.counter_class = None
    kit.modules = sys.modules  # the dict itself, for torch's tensor types once torch is loaded
    kit.tensor = None  # (Tensor, Parameter) and TensorBase's C methods, bound on first use
    return kit


_KIT = _make_kit()


def _tensor_kit(*, _k=_KIT):
    """torch's plain tensor types and C methods, bound the first time a check sees torch loaded
    (the grader's guard does this before any student code)."""
    if _k.tensor is None:
        torch = _k.modules.get("torch")
        if torch is None:
            return None
        base = torch._C.TensorBase
        _k.tensor = (torch.Tensor, torch.nn.Parameter)
        _k.detach, _k.cpu, _k.double, _k.tensor_numpy = base.detach, base.cpu, base.double, base.numpy
        _k.tensor_dtype_of = base.dtype.__get__  # C getter, as numpy's
    return _k


def _is_one_of(t, types_, *, _k=_KIT):
    """`t` is one of `types_`, by identity (`in` would call a student metaclass's __eq__ or __hash__)."""
    for candidate in types_:
        if t is candidate:
            return True
    return False


def _has_base(t, base, *, _k=_KIT):
    """`base` is in the method resolution order of the class `t` (read by C, compared by identity)."""
    return _k.is_one_of(base, _k.mro_of(t))


def _type_name(x, *, _k=_KIT):
    return _k.name_of(_k.type(x))


def _reduce(x, what, depth=0, *, _k=_KIT):
    """x as a float64 numpy array, by exact types only (see the module's docstring)."""
    t = _k.type(x)
    if t is _k.float or t is _k.int or t is _k.bool or t is _k.np_bool or _k.is_one_of(t, _k.np_scalars):
        return _k.np_array(x, dtype=_k.float64)
    if _k.has_base(t, _k.ndarray):
        if _k.dtype_of(x).kind not in "biuf":
            raise _k.AssertionError(f"{what} holds values of type {_k.dtype_of(x)}, not numbers.")
        return _k.np_array(x, dtype=_k.float64, subok=False)
    tk = _k.tensor_kit()
    if tk is not None and _k.is_one_of(t, tk.tensor):
        return tk.tensor_numpy(tk.double(tk.cpu(tk.detach(x))))
    if (t is _k.list or t is _k.tuple) and depth < 32:
        parts = [_k.reduce(v, what, depth + 1) for v in x]
        try:
            return _k.np_array(parts, dtype=_k.float64)
        except _k.ValueError:
            raise _k.AssertionError(f"{what}: a ragged list (its rows have different lengths).") from None
    if _k.has_base(t, _k.float):  # a float subclass: its plain value, without its methods
        return _k.np_array(_k.float_of_float(x), dtype=_k.float64)
    raise _k.AssertionError(
        f"{what}: a {_k.type_name(x)}, not an array: return a numpy array, a torch tensor or a list of numbers."
    )


def plain(x, what="the value", *, _k=_KIT):
    """`x` (an array, tensor, number or nested list) as a float64 numpy array, by its exact type only."""
    if x is None:
        raise _k.AssertionError(f"{what} returned None: did you forget the `return` statement?")
    return _k.reduce(x, what)


def to_numpy(x, *, _k=_KIT):
    """float64 numpy copy of an array, tensor or nested list (see `plain`)."""
    return _k.plain(x)


def _truth(x, what, *, _k=_KIT):
    """The truth value of a plain boolean or single number (a numpy or torch scalar included)."""
    t = _k.type(x)
    if t is _k.bool:
        return x
    if t is _k.np_bool or t is _k.int or t is _k.float or _k.is_one_of(t, _k.np_scalars):
        return _k.bool(x)
    a = _k.plain(x, what)
    if a.size != 1:
        raise _k.AssertionError(f"{what}: the check could not be evaluated ({a.size} values where one was expected).")
    return _k.bool(a.reshape(-1)[0])


def call(fn, *args, _k=_KIT, **kwargs):
    """Call the student's function; an unanswered exercise gives a one-line hint instead of a traceback."""
    try:
        return fn(*args, **kwargs)
    except _k.NotImplementedError:
        name = fn.__name__ if _k.type(fn) is _k.FunctionType else "your function"
        raise _k.NotImplementedError(
            f"`{name}` is not implemented yet: replace `raise NotImplementedError()` with your code and run that cell."
        ) from None


def with_references(fn, *, _k=_KIT, **references):
    """A copy of the student's function `fn` that finds `references` under those global names.

    `checks.with_references(attention, project=reference_project)` calls the student's `attention`
    with a reference version of the earlier exercise's `project`, so that one mistake costs points in
    one place only. The student's other names are looked up as they were when this was called.
    A class gives a subclass whose own methods (and the functions they make) find the references: the way to
    reach a class's methods through its own globals, in the grader as in Jupyter. Anything else that is not a plain
    Python function (or whose globals are not a plain dict) is returned unchanged."""
    if _k.is_one_of(_k.type, _k.mro_of(_k.type(fn))):
        return _k.class_with_references(fn, references)
    if _k.type(fn) is not _k.FunctionType or _k.type(fn.__globals__) is not _k.dict:
        return fn
    names = _k.dict(fn.__globals__)
    names.update(references)
    copy = _k.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _class_with_references(cls, references, *, _k=_KIT):
    methods = {
        name: _k.with_references(value, **references)
        for name, value in _k.dict(cls.__dict__).items()
        if _k.type(value) is _k.FunctionType
    }
    methods["__module__"], methods["__qualname__"] = cls.__module__, cls.__qualname__
    return _k.type(cls)(_k.name_of(cls), (cls,), methods)


def _shape_text(shape, *, _k=_KIT):
    return _k.str(_k.tuple(_k.int(n) for n in shape))


def expect_shape(x, shape, what, *, _k=_KIT):
    """`what` must have exactly this shape."""
    got = _k.plain(x, what).shape
    want = _k.tuple(_k.int(n) for n in shape)
    if got != want:
        raise _k.AssertionError(f"{what} should have shape {_k.shape_text(want)}, but has shape {_k.shape_text(got)}.")


def _max_diff(a, b, *, _k=_KIT):
    return _k.float(_k.np_abs(a - b).max()) if a.size else 0.0


def _close(a, b, atol, rtol, *, _k=_KIT):
    return (
        a.shape == b.shape
        and _k.bool(_k.np_isfinite(a).all())
        and _k.max_diff(a, b) <= atol + rtol * _k.float(_k.np_abs(b).max(initial=0))
    )


def is_close(actual, expected, atol=1e-6, rtol=1e-6, *, _k=_KIT):
    """True if both have the same shape and agree within atol + rtol·max|expected|."""
    return _k.close(_k.plain(actual), _k.plain(expected), atol, rtol)


def expect_no_mistake(actual, what, mistakes, atol=1e-6, rtol=1e-6, *, _k=_KIT):
    """Fail, naming the mistake, if `actual` equals what one of the known `mistakes` would produce."""
    a = _k.plain(actual, what)
    for description, wrong in (mistakes or {}).items():
        if _k.close(a, _k.plain(wrong), atol, rtol):
            raise _k.AssertionError(f"{what}: {description}")


def expect_close(actual, expected, what, atol=1e-6, rtol=1e-6, mistakes=None, *, _k=_KIT):
    """`actual` must equal `expected` within atol + rtol·max|expected|.

    mistakes: {description: what that mistake would have produced}. If the answer matches one,
    the message names it ("you divided by d_k instead of √d_k")."""
    a, e = _k.plain(actual, what), _k.plain(expected)
    if not _k.close(a, e, atol, rtol):
        _k.expect_no_mistake(a, what, mistakes, atol, rtol)
    if a.shape != e.shape:
        raise _k.AssertionError(
            f"{what} should have shape {_k.shape_text(e.shape)}, but has shape {_k.shape_text(a.shape)}."
        )
    if not _k.np_isfinite(a).all() and _k.np_isfinite(e).all():
        raise _k.AssertionError(
            f"{what}: NaN or inf where the expected result is finite (an overflow, or a division by zero?)."
        )
    tol = atol + rtol * _k.float(_k.np_abs(e).max(initial=0))
    diff = _k.max_diff(a, e)
    if not diff <= tol:
        idx = _k.tuple(_k.int(i) for i in _k.np_unravel(_k.np_argmax(_k.np_abs(a - e)), a.shape)) if a.ndim else ()
        raise _k.AssertionError(
            f"{what}: off by up to {diff:.3g} (tolerance {tol:.1g}); at index {idx} "
            f"it is {_k.float(a[idx]):.6g} where {_k.float(e[idx]):.6g} was expected."
        )


def expect(condition, message, *, _k=_KIT):
    """A plain check with a message for the student (`condition`: a bool, or a single number or array entry)."""
    if not _k.truth(condition, message):
        raise _k.AssertionError(message)


def passed(what, *, _k=_KIT):
    """Say that a group of checks passed (test cells end with this, never with a bare expression)."""
    _k.print(f"✓ {what}: all checks passed.")


# --- quiz answers -------------------------------------------------------------------------


def _text(answer, *, _k=_KIT):
    """A str answer's plain text (also of a str subclass, without its methods), else None."""
    t = _k.type(answer)
    if t is _k.str or t is _k.np_str or _k.has_base(t, _k.str):
        return _k.str_of_str(answer)
    return None


def _number(answer, *, _k=_KIT):
    """A numeric answer's plain value (ints, floats, numpy scalars, their subclasses without their
    methods), else None; booleans are not numbers here."""
    t = _k.type(answer)
    if t is _k.bool or t is _k.np_bool:
        return None
    if _k.is_one_of(t, _k.np_scalars):
        return _k.float(answer)
    if _k.has_base(t, _k.bool):
        return None
    if _k.has_base(t, _k.float):
        return _k.float_of_float(answer)
    if _k.has_base(t, _k.int):
        try:
            return _k.float(_k.int_of_int(answer))
        except _k.OverflowError:
            return None
    return None


def _choices_text(choices, *, _k=_KIT):
    return ", ".join(f"'{c}'" for c in choices)


def expect_choice(answer, choices, what, *, _k=_KIT):
    """Visible check of a multiple-choice answer's format: one of the letters in `choices`."""
    if answer is None:
        raise _k.AssertionError(f"{what}: replace None with your answer, one of {_k.choices_text(choices)}.")
    text = _k.text(answer)
    if text is None or text.strip().lower() not in [c.lower() for c in choices]:
        shown = f"{text!r}" if text is not None else f"a {_k.type_name(answer)}"
        raise _k.AssertionError(f"{what}: answer with one of {_k.choices_text(choices)} (a string), not {shown}.")


def expect_number(answer, what, *, _k=_KIT):
    """Visible check of a numeric answer's format: a finite int or float."""
    value = _k.number(answer)
    if value is None:
        shown = "None" if answer is None else f"a {_k.type_name(answer)}"
        raise _k.AssertionError(f"{what}: answer with a number (int or float), not {shown}.")
    if not _k.isfinite_number(value):
        raise _k.AssertionError(f"{what}: answer with a finite number, not {value!r}.")


def check_choice(answer, correct, what, *, _k=_KIT):
    """Hidden check of a multiple-choice answer, compared by its plain text."""
    text = _k.text(answer)
    if text is None or text.strip().lower() != correct.lower():
        raise _k.AssertionError(f"{what}: not the expected answer.")


def check_number(answer, correct, what, tol=1e-6, *, _k=_KIT):
    """Hidden check of a numeric answer, compared by its plain value."""
    value = _k.number(answer)
    if value is None or not _k.abs(value - correct) <= tol * _k.max(1.0, _k.abs(correct)):
        raise _k.AssertionError(f"{what}: not the expected value.")


def expect_finite(x, what, hint="", *, _k=_KIT):
    """Every entry of `x` must be finite (no NaN, no ±inf); `hint` names the likely cause."""
    a = _k.plain(x, what)
    if not _k.np_isfinite(a).all():
        raise _k.AssertionError(f"{what}: NaN or inf. {hint}".strip())


def output_and_weights(result, what, d_v, T_k, fn="the function", *, _k=_KIT):
    """The `(output, weights)` pair that attention functions return, checked: a tuple of two, output first.

    `d_v` and `T_k` are the sizes of the last axis of the output and of the weights; when they differ, a pair in the
    wrong order is named as such. Returns (output, weights) as the student returned them, for further checks."""
    t = _k.type(result)
    if not ((t is _k.tuple or t is _k.list) and _k.len(result) == 2):
        raise _k.AssertionError(f"{what}: {fn} must return a tuple (output, weights), output first.")
    output, weights = result
    out_last, weights_last = _k.plain(output, f"the output of {what}").shape[-1:], _k.plain(weights, what).shape[-1:]
    if d_v != T_k and out_last == (T_k,) and weights_last == (d_v,):
        raise _k.AssertionError(
            f"{what}: the tuple is the wrong way round: you returned (weights, output); return (output, weights), "
            "output first."
        )
    return output, weights


def _dtype_name(x, *, _k=_KIT):
    """The dtype of a numpy array or torch tensor, read without running the student's code ('' for others)."""
    t = _k.type(x)
    if _k.has_base(t, _k.ndarray):
        return _k.str(_k.dtype_of(x))
    tk = _k.tensor_kit()
    if tk is not None and _k.is_one_of(t, tk.tensor):
        return _k.str(tk.tensor_dtype_of(x))
    return ""


def expect_float64(x, what, hint="", *, _k=_KIT):
    """`x` is a float64 numpy array or torch tensor, as float64 inputs call for (its dtype read by C getters)."""
    name = _k.dtype_name(x)
    if name not in ("float64", "torch.float64"):
        got = name.replace("torch.", "") or _k.type_name(x)
        raise _k.AssertionError(f"{what} returned {got}, not float64 like its inputs: {hint}".rstrip(": "))


# --- lessons 06 and 07 (added for 06_multi_head; lessons 10 and 11 load that module) ----------------------------


def same_as_torch_attention(call, theirs, x, mask, what, mistakes=None, atol=1e-5, hint="", *, _k=_KIT):
    """Run `call()`, a multi-head self-attention module on `x` (B, T, d_model) with `mask` (a boolean (T, T) tensor,
    True = may attend, or None) returning (output, weights), and check it against `theirs`: PyTorch's
    nn.MultiheadAttention (batch_first) holding the same weights. An error in the call, the pair's order, the output's
    dtype (the input's), the output (naming a known mistake from `mistakes` when it matches one) and every head's
    weights are each reported as a failed check of `what`; `hint` is added to a mismatch's message."""
    try:
        result = call()
    except _k.NotImplementedError:
        raise _k.NotImplementedError(f"{what}: not implemented yet: replace `raise NotImplementedError()`.") from None
    except _k.Exception as error:  # the student's code failed: say where, in one line
        raise _k.AssertionError(f"{what} raised {_k.type_name(error)}: {_k.message(error)}") from None
    blocked = None if mask is None else ~mask  # PyTorch's boolean attn_mask: True = blocked
    want, want_weights = theirs(x, x, x, attn_mask=blocked, average_attn_weights=False)  # every head's weights
    output, weights = _k.output_and_weights(result, what, d_v=x.shape[-1], T_k=x.shape[-2], fn="forward")
    got_dtype, want_dtype = _k.dtype_name(output), _k.dtype_name(x)
    if got_dtype != want_dtype:
        raise _k.AssertionError(
            f"{what}: the output is {got_dtype or _k.type_name(output)} for an input of {want_dtype}."
        )
    try:
        _k.expect_close(output, want, f"the output of {what}", atol=atol, mistakes=mistakes)
        _k.expect_close(weights, want_weights, f"every head's weights of {what}", atol=atol)
    except _k.AssertionError as error:
        raise _k.AssertionError(f"{_k.message(error)} {hint}".strip()) from None
    return output, weights


def blocked_weights_zero(weights, allowed, what, *, _k=_KIT):
    """The weights at blocked positions (`allowed` False, a boolean array or tensor broadcastable to the weights)
    must be exactly 0, and every weight finite. Run on scores that are all far below -1e9, it catches a mask filled
    with a large negative number in place of -inf (that number then beats every allowed score), and a mask or a
    softmax applied in a way that turns such rows into 0/0."""
    w = _k.plain(weights, what)
    fix = "set blocked scores to -inf before a stable softmax (lesson 4)"
    if not _k.bool(_k.np_isfinite(w).all()):
        raise _k.AssertionError(f"{what}: the weights contain NaN or inf (every score is far below -1e9): {fix}.")
    blocked = _k.np_broadcast_to(_k.plain(allowed, "the mask") == 0, w.shape)
    if _k.bool(w[blocked].any()):
        raise _k.AssertionError(
            f"{what}: blocked keys got weight although they must get exactly 0 whatever the allowed scores are (here "
            f"all far below -1e9): {fix}; a large negative number such as -1e9 in place of -inf is not enough."
        )


def attempt(fn, *args, what, hint="", _k=_KIT, **kwargs):
    """Call the student's `fn` as `call` does; an error raised inside it fails the check of `what` in one line that
    names the error and `hint`, its likely cause (e.g. `K.T` on a batch), instead of a traceback."""
    try:
        return _k.call(fn, *args, **kwargs)
    except (_k.NotImplementedError, _k.AssertionError):
        raise
    except _k.Exception as error:  # the student's code failed: say where, in one line
        raise _k.AssertionError(f"{what} failed ({_k.type_name(error)}: {_k.message(error)}). {hint}".strip()) from None


def _message(error, *, _k=_KIT):
    """An exception's message, read through BaseException's own C slot (a student's exception class cannot
    redefine it)."""
    args = _k.args_of(error)
    return _k.str_of_str(args[0]) if args and _k.type(args[0]) is _k.str else ""


# --- lesson 11 (attention at scale): memory that numpy holds, in code that must stay in numpy ---------------------


def _refuse(*args, _k=_KIT, **kwargs):
    raise _k.AssertionError("this check measures memory with tracemalloc: do not stop, clear or reset it yourself.")


def _count_torch_call(self, func, types, args=(), kwargs=None, *, _k=_KIT):
    """TorchFunctionMode's hook: count every torch function and tensor method called, then call it."""
    self.calls += 1
    return func(*args, **(kwargs or {}))


def _torch_counter(*, _k=_KIT):
    """A fresh TorchFunctionMode that counts torch calls (None while torch is not loaded)."""
    torch = _k.modules.get("torch")
    if torch is None:
        return None
    if _k.counter_class is None:
        mode = torch.overrides.TorchFunctionMode
        _k.counter_class = _k.type("CountTorchCalls", (mode,), {"__torch_function__": _k.count_torch_call, "calls": 0})
    return _k.counter_class()


def numpy_peak_memory(fn, *args, _k=_KIT, **kwargs):
    """Call fn(*args, **kwargs); return (its result, peak bytes, torch calls).

    The peak is the largest number of bytes Python and numpy held at one time during the call beyond what existed
    before (tracemalloc; numpy reports its arrays to it): the arrays fn creates, its temporaries and its result.
    PyTorch's allocator does not report to tracemalloc, so a tensor of 64 MB counts as almost nothing: the peak only
    means something when the third number, how many torch functions and tensor methods fn called, is 0. A long
    switch interval keeps other threads (a notebook's messaging) from allocating in between."""
    switch = _k.switch_get()
    saved = {name: _k.getattr(_k.tracemalloc, name) for name in ("stop", "clear_traces", "reset_peak")}
    counter = _k.torch_counter()
    _k.switch_set(1.0)
    _k.trace_start()
    try:
        for name in saved:
            _k.setattr(_k.tracemalloc, name, _k.refuse)
        if counter is None:
            result = fn(*args, **kwargs)
        else:
            with counter:
                result = fn(*args, **kwargs)
        if not _k.is_tracing():
            raise _k.AssertionError("tracemalloc was stopped during the call: do not stop it yourself.")
        peak = _k.traced()[1]
    finally:
        for name, original in saved.items():
            _k.setattr(_k.tracemalloc, name, original)
        _k.trace_stop()
        _k.switch_set(switch)
    return result, peak, 0 if counter is None else counter.calls


# The kit also holds the checks' own helpers, so that they call each other through it, not through globals.
for _name, _function in {
    "tensor_kit": _tensor_kit,
    "is_one_of": _is_one_of,
    "has_base": _has_base,
    "type_name": _type_name,
    "reduce": _reduce,
    "plain": plain,
    "truth": _truth,
    "shape_text": _shape_text,
    "max_diff": _max_diff,
    "close": _close,
    "expect_no_mistake": expect_no_mistake,
    "text": _text,
    "number": _number,
    "choices_text": _choices_text,
    "output_and_weights": output_and_weights,
    "dtype_name": _dtype_name,
    "expect_close": expect_close,
    "message": _message,
    "refuse": _refuse,
    "torch_counter": _torch_counter,
    "count_torch_call": _count_torch_call,
    "call": call,
    "with_references": with_references,
    "class_with_references": _class_with_references,
}.items():
    setattr(_KIT, _name, _function)
del _KIT, _name, _function  # the checks hold the kit in their defaults; no name here can be rebound to reach it


# Lesson 11's read counter (its memory traffic) reads numpy as a plain module would: it lives in traffic.py, outside
# the sealed checks above, and is offered here where the lesson's checks look for it.
from attention_course.traffic import ReadCounting, read_counter  # noqa: E402, F401
