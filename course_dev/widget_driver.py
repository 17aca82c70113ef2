"""Drive explorers from code inside the kernel that built them (the benchmark and the tests use it):

    from course_dev import widget_driver
    widget_driver.record()            # before the notebook's cells run
    ...                               # run the notebook
    widget_driver.explorers()         # every explorer built since, in order
    report = widget_driver.drive(changes=20, warmup=2)

changes each explorer's controls in turn to other values spread over their range and records, per
explorer, the time from setting a value to the end of the redraw it triggers."""

import time

from attention_course import plots, widgets

_built = []
_recording = False
# what a test or the benchmark runs in a new kernel, before the notebook's cells, to record its explorers
RECORD_SOURCE = "__import__('course_dev.widget_driver').widget_driver.record()"


def record():
    """From now on, remember every explorer this kernel builds (calling it again changes nothing)."""
    global _recording
    if not _recording:
        widgets.on_new_explorer(_built.append)
        _recording = True


def explorers():
    """The explorers built since `record()`, in the order they were built."""
    return list(_built)


def statuses():
    return [explorer.status for explorer in _built]


def alt_texts():
    return [explorer.alt_text for explorer in _built]


def kind(control):
    """What the browser sees: the widget's class, and for a typeable choice the choice's class too."""
    inner = getattr(control, "choice", None)
    return f"{type(control).__name__}({type(inner).__name__})" if inner is not None else type(control).__name__


def control_kinds():
    """The kinds of control of every explorer built since `record()`."""
    return sorted({kind(control) for explorer in _built for control in explorer.controls.values()})


def candidates(control):
    """A few values the control can take, spread over its range (all options of a choice)."""
    options = getattr(control, "options", None)
    if options is not None and not isinstance(options, str):
        return [o[1] if isinstance(o, tuple) else o for o in options]
    value = getattr(control, "value", None)
    if isinstance(value, bool):
        return [False, True]
    if isinstance(value, (int, float)) and hasattr(control, "min") and hasattr(control, "max"):
        step = getattr(control, "step", None) or 1
        n = int(round((control.max - control.min) / step))
        picks = sorted({round(k * n / 4) for k in range(5)})
        values = [control.min + p * step for p in picks]
        return [int(v) for v in values] if isinstance(value, int) else [round(v, 10) for v in values]
    return []


def drive_one(explorer, changes, warmup):
    driven = [(name, control, candidates(control)) for name, control in explorer.controls.items()]
    driven = [(name, control, values) for name, control, values in driven if len(values) >= 2]
    entry = {
        "controls": [name for name, _, _ in driven],
        "seconds": [],
        "redraw_seconds": [],
        "missed": 0,
        "statuses": [],
        "problems": [],  # what hides data at a setting (plots.figure_problems), with the setting
    }
    for change in range(warmup + changes if driven else 0):
        name, control, values = driven[change % len(driven)]
        position = values.index(control.value) if control.value in values else -1
        before = len(explorer.redraw_seconds)
        start = time.perf_counter()
        control.value = values[(position + 1) % len(values)]
        elapsed = time.perf_counter() - start
        if change < warmup:
            continue
        if len(explorer.redraw_seconds) == before + 1:
            entry["seconds"].append(elapsed)
            entry["redraw_seconds"].append(explorer.redraw_seconds[-1])
        else:
            entry["missed"] += 1
        entry["statuses"].append(explorer.status)
        entry["problems"] += hidden_data(explorer)
    entry["statuses"] = sorted(set(entry["statuses"]))
    entry["problems"] = sorted(set(entry["problems"]))
    return entry


def hidden_data(explorer):
    """What the explorer's figure hides at its current setting (a series that draws nothing, a ratio axis labelled on
    one side of 1), each with the setting: see plots.figure_problems."""
    if explorer.status != "figure" or explorer._fig is None:
        return []
    setting = ", ".join(f"{name}={value!r}" for name, value in explorer.values().items())
    return [f"{problem} (at {setting})" for problem in plots.figure_problems(explorer._fig)]


def drive(changes=20, warmup=2):
    """One report per explorer built in this kernel, in the order they were built."""
    return [dict(drive_one(explorer, changes, warmup), explorer=number) for number, explorer in enumerate(_built, 1)]
