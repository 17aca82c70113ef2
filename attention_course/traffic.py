"""The numbers a function reads out of an array: lesson 11 counts the memory traffic of the student's own tiled
attention with it (`checks.read_counter`, the same function)."""

import numpy as np

_SHAPE_ONLY = frozenset(
    {np.result_type, np.shape, np.ndim, np.size, np.empty_like, np.zeros_like, np.ones_like, np.full_like}
)


def _plain_reads(x, counted=True):
    """x with every read-counting array in it (also inside lists and tuples) as a plain view; counted: add their
    sizes to their counters (the numbers the call reads)."""
    if isinstance(x, ReadCounting):
        if counted and x._reads is not None:
            x._reads[0] += x.size
        return x.view(np.ndarray)
    if type(x) in (list, tuple):
        return type(x)(_plain_reads(item, counted) for item in x)
    return x


class ReadCounting(np.ndarray):
    """An array that counts the numbers read out of it: a slice or an element taken (`K[..., j0:j1, :]`), or the
    whole array passed to a numpy function or operator. Views of it (`.T`, `swapaxes`, `reshape`) count into the same
    counter; what comes out is a plain array. Made by `read_counter`."""

    def __array_finalize__(self, obj):
        self._reads = getattr(obj, "_reads", None)

    def __getitem__(self, index):
        out = np.ndarray.__getitem__(self.view(np.ndarray), index)
        if self._reads is not None:
            self._reads[0] += np.size(out)
        return out

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _plain_reads(kwargs["out"], counted=False)
        return getattr(ufunc, method)(*_plain_reads(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        counted = func not in _SHAPE_ONLY
        return func(*_plain_reads(args, counted), **{k: _plain_reads(v, counted) for k, v in kwargs.items()})


def read_counter(array):
    """(a read-counting copy of array, its counter): counter[0] is the number of values read out of it so far."""
    counter = [0]
    counting = np.array(array).view(ReadCounting)
    counting._reads = counter
    return counting, counter
