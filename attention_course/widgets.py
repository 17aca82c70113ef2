"""Interactive explorers built on ipywidgets.

Every explorer takes a `draw(**values)` function written in the lesson that calls the student's own
code and returns a matplotlib figure. Until that code is implemented the explorer shows a short
"implement … first" message; any other error is shown as one line, never as a traceback.
"""
import html
import time

import ipywidgets as w
import matplotlib.pyplot as plt
from IPython.display import HTML, display


def slider(description, min, max, value, step=1):
    """An integer slider that redraws when released; its readout is editable from the keyboard."""
    return w.IntSlider(value=value, min=min, max=max, step=step, description=description,
                       continuous_update=False, readout=True, style={"description_width": "initial"})


def float_slider(description, min, max, value, step=0.1):
    return w.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                         continuous_update=False, readout=True, readout_format=".2f",
                         style={"description_width": "initial"})


def choice_slider(description, options, value):
    """A slider over a fixed list of values, such as d_k in 1, 2, 4, …, 512."""
    return w.SelectionSlider(options=list(options), value=value, description=description,
                             continuous_update=False, style={"description_width": "initial"})


def dropdown(description, options, value=None):
    return w.Dropdown(options=list(options), value=value if value is not None else list(options)[0],
                      description=description, style={"description_width": "initial"})


def _message(text, colour="#0072B2"):
    return HTML(f'<div style="border-left:4px solid {colour};padding:6px 10px;margin:4px 0">{text}</div>')


class Explorer(w.VBox):
    """Controls on top, the figure below.

    `status` says what the last redraw showed ("figure", "not implemented" or "error: …") and
    `redraw_seconds` keeps the time of every redraw; `Explorer.instances` lists every explorer
    built in this kernel (the tests and the benchmark drive them through it)."""

    instances = []

    def __init__(self, draw, controls, needs):
        self.draw, self.controls, self.needs = draw, dict(controls), list(needs)
        self.output = w.Output()
        self.redraw_seconds = []
        self.status = "new"
        Explorer.instances.append(self)
        super().__init__([w.HBox(list(self.controls.values())), self.output])
        for control in self.controls.values():
            control.observe(self.redraw, names="value")
        self.redraw()

    def values(self):
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self, change=None):
        start = time.perf_counter()
        with self.output:
            self.output.clear_output(wait=True)
            try:
                fig = self.draw(**self.values())
            except NotImplementedError:
                names = " and ".join(f"<code>{n}</code>" for n in self.needs) or "the exercise above"
                display(_message(f"Implement {names} above and run its cell first; then run this cell again "
                                 "to explore your own implementation."))
                self.status = "not implemented"
            except Exception as error:  # the student's code failed: one readable line, no traceback
                display(_message(f"Your code raised <b>{type(error).__name__}</b>: "
                                 f"{html.escape(str(error))}<br>Fix it above, run that cell, then this one.",
                                 colour="#D55E00"))
                self.status = f"error: {type(error).__name__}: {error}"
            else:
                display(fig)
                plt.close(fig)
                self.status = "figure"
        self.redraw_seconds.append(time.perf_counter() - start)


def explore(draw, needs=(), **controls):
    """Build and return an explorer: `explore(draw, needs=["softmax"], d_k=choice_slider(...))`."""
    return Explorer(draw, controls, needs)
