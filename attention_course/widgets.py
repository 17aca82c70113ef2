"""Interactive explorers built on ipywidgets.

Every explorer takes a `draw(**values)` function written in the lesson that calls the student's own
code and returns a matplotlib figure. Until that code is implemented the explorer shows a short
"implement … first" message; any other error is shown as one line, never as a traceback.
"""
import html
import io
import time

import ipywidgets as w
import traitlets
import matplotlib.pyplot as plt
from IPython.display import HTML, Image, display


def slider(description, min, max, value, step=1):
    """An integer slider that redraws when released; its readout is editable from the keyboard."""
    return w.IntSlider(value=value, min=min, max=max, step=step, description=description,
                       continuous_update=False, readout=True, style={"description_width": "initial"})


def float_slider(description, min, max, value, step=0.1):
    return w.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                         continuous_update=False, readout=True, readout_format=".2f",
                         style={"description_width": "initial"})


def choice_slider(description, options, value):
    """A slider over a fixed list of values, such as d_k in 1, 2, 4, …, 512, with a box to type a value.

    A SelectionSlider's own readout ignores typing and Notebook 7 takes the arrow keys, so the typing
    box is what keeps it usable from the keyboard."""
    return TypeableChoice(w.SelectionSlider(options=list(options), value=value, description=description,
                                            continuous_update=False, readout=False,
                                            style={"description_width": "initial"}))


def dropdown(description, options, value=None):
    """A drop-down list, with a box to type an option (a focused list ignores most keys in a notebook)."""
    options = list(options)
    if value is None:  # the first option; options may be labels or (label, value) pairs
        value = options[0][1] if isinstance(options[0], tuple) else options[0]
    return TypeableChoice(w.Dropdown(options=options, value=value, description=description,
                                     style={"description_width": "initial"}))


class TypeableChoice(w.HBox):
    """A choice widget (`choice`: SelectionSlider or Dropdown) next to a small text box.

    Typing an option's label (or the start of it) and pressing Enter selects it; anything else puts
    the current label back. `value`, `options`, `description` and `_options_values` mirror the choice
    widget, so the explorer, the tests and the benchmark treat it like any other control."""

    value = traitlets.Any()

    def __init__(self, choice):
        self.choice = choice
        self.entry = w.Text(value=choice.label, continuous_update=False,
                            layout=w.Layout(width="6em"), tooltip=f"type a value for {choice.description}")
        self.entry.add_class("ac-type-entry")
        super().__init__([choice, self.entry], value=choice.value)
        self.add_class("ac-typeable")
        choice.observe(self._from_choice, names="value")
        self.entry.observe(self._from_entry, names="value")
        self.observe(self._to_choice, names="value")

    options = property(lambda self: self.choice.options)
    description = property(lambda self: self.choice.description)
    _options_values = property(lambda self: self.choice._options_values)

    def _from_choice(self, change):
        self.entry.value = self.choice.label
        self.value = self.choice.value

    def _to_choice(self, change):
        self.choice.value = change["new"]

    def _from_entry(self, change):
        typed = change["new"].strip().lower()
        labels = [str(label) for label in self.choice._options_labels]
        matches = ([i for i, label in enumerate(labels) if label.lower() == typed]
                   or [i for i, label in enumerate(labels) if typed and label.lower().startswith(typed)])
        if matches:
            self.choice.index = matches[0]
        self.entry.value = self.choice.label


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
        self._crop = None   # (figure size, tight bounding box) of the first figure, reused while the size stays
        Explorer.instances.append(self)
        controls_row = w.HBox(list(self.controls.values()), layout=w.Layout(flex_flow="row wrap"))  # wrap, never clip
        super().__init__([controls_row, self.output])
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
                display(Image(data=self._png(fig)))
                plt.close(fig)
                self.status = "figure"
        self.redraw_seconds.append(time.perf_counter() - start)

    def _png(self, fig):
        """The figure as PNG, cropped like Jupyter's inline figures. Finding the tight crop costs a whole
        extra draw, so it is measured once and reused while the figure keeps its size (about 2x faster)."""
        size = tuple(fig.get_size_inches())
        if self._crop is None or self._crop[0] != size:
            self._crop = size, fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches=self._crop[1])
        return buffer.getvalue()


def explore(draw, needs=(), **controls):
    """Build and return an explorer: `explore(draw, needs=["softmax"], d_k=choice_slider(...))`."""
    return Explorer(draw, controls, needs)
