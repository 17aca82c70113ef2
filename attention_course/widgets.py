"""Interactive explorers built on ipywidgets.

Every explorer takes a `View` written in the lesson: it builds its figure once and, on every change of
a control, calls the student's own code and updates the figure's artists in place. (A plain
`draw(**values)` function that returns a new figure also works, but redraws everything each time.)
Until that code is implemented the explorer shows a short
"implement … first" message; any other error is shown as one line, never as a traceback.
"""

import html
import io
import json
import time
from pathlib import Path

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
import traitlets
from IPython.display import HTML, display
from matplotlib.backends.backend_agg import FigureCanvasAgg

from attention_course import plots

TRACK_PX = 160  # a slider's track stays at least this wide (150 px is the least a pointer can use with care)


def _slider_layout(description, readout=True):
    """Wide enough for the label, a track of TRACK_PX and the readout: ipywidgets gives a slider 300 px in all, so a
    long label would squeeze the track to a few pixels."""
    label_px = 8 * len(description) + 16  # about 8 px a character at the notebook's font size
    return w.Layout(width=f"{label_px + TRACK_PX + (70 if readout else 10)}px")


def slider(description, min, max, value, step=1):
    """An integer slider that redraws when released; its readout is editable from the keyboard."""
    return w.IntSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
        readout=True,
        style={"description_width": "initial"},
        layout=_slider_layout(description),
    )


def float_slider(description, min, max, value, step=0.1):
    return w.FloatSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
        readout=True,
        readout_format=".2f",
        style={"description_width": "initial"},
        layout=_slider_layout(description),
    )


def choice_slider(description, options, value):
    """A slider over a fixed list of values, such as d_k in 1, 2, 4, …, 512, with a box to type a value.

    A SelectionSlider's own readout ignores typing and Notebook 7 takes the arrow keys, so the typing
    box is what keeps it usable from the keyboard."""
    return TypeableChoice(
        w.SelectionSlider(
            options=list(options),
            value=value,
            description=description,
            continuous_update=False,
            readout=False,
            style={"description_width": "initial"},
            layout=_slider_layout(description, readout=False),
        )
    )


def dropdown(description, options, value=None):
    """A drop-down list, with a box to type an option (a focused list ignores most keys in a notebook)."""
    options = list(options)
    if value is None:  # the first option; options may be labels or (label, value) pairs
        value = options[0][1] if isinstance(options[0], tuple) else options[0]
    return TypeableChoice(
        w.Dropdown(options=options, value=value, description=description, style={"description_width": "initial"})
    )


class TypeableChoice(w.HBox):
    """A choice widget (`choice`: SelectionSlider or Dropdown) next to a small text box.

    Typing an option's label (or the start of it) and pressing Enter selects it; anything else puts
    the current label back. `value`, `options`, `description` and `_options_values` mirror the choice
    widget, so the explorer, the tests and the benchmark treat it like any other control."""

    value = traitlets.Any()

    def __init__(self, choice):
        self.choice = choice
        self.entry = w.Text(
            value=choice.label,
            description="or type",  # a visible label: screen readers announce "or type, edit text"
            continuous_update=False,
            layout=w.Layout(width="11em"),
            style={"description_width": "initial"},
            tooltip=f"type a value for {choice.description}",
        )
        self.entry.add_class("ac-type-entry")
        labels = json.dumps([str(label) for label in choice._options_labels])
        # the slider's handle announces the option's label, not its position (see A11Y_SCRIPT)
        self.labels = w.HTML(f"<span class='ac-labels' data-labels='{html.escape(labels, quote=True)}' hidden></span>")
        self.labels.layout.display = "none"
        super().__init__([choice, self.entry, self.labels], value=choice.value)
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
        matches = [i for i, label in enumerate(labels) if label.lower() == typed] or [
            i for i, label in enumerate(labels) if typed and label.lower().startswith(typed)
        ]
        if matches:
            self.choice.index = matches[0]
        self.entry.value = self.choice.label


# ipywidgets' sliders (noUiSlider) give their handle no accessible name, a SelectionSlider's handle announces the
# option's position ("6") rather than its value ("64"), and JupyterLab takes the arrow keys pressed on a control. This
# script (explorer_a11y.js), shown once per explorer (JupyterLab runs scripts of trusted outputs, and an explorer's own
# outputs are trusted), keeps JupyterLab's shortcuts out of explorers, names every control after what it sets, keeps
# what each announces equal to what its label shows, and outlines the focused control.
A11Y_SCRIPT = f"<script>\n{(Path(__file__).with_name('explorer_a11y.js')).read_text()}</script>"


def _message(text, colour="#0072B2"):
    return HTML(f'<div style="border-left:4px solid {colour};padding:6px 10px;margin:4px 0">{text}</div>')


class View:
    """A figure that an explorer builds once and then updates in place (the fast path).

    Subclass it in a lesson and write:
        build(**values)   make the figure, its axes, artists and text; return the figure
        update(**values)  call the student's code and change the artists (set_data, set_ydata, set_text, set_clim)
        key(**values)     optional: a value that changes when the figure must be rebuilt (e.g. the number of heads)
        alt(**values)     optional: alt text describing what the figure shows for these values

    build() must not need the student's code, so the "implement … first" note can show before it is done;
    update() runs the student's code. The explorer draws the canvas and sends the image.

    For speed, build() may list in `self.dynamic` the artists that update() changes (images, lines, bars,
    texts). The rest of the figure (axes, ticks, labels) is then drawn once and kept as a background, and
    each update draws only those artists on top of it (matplotlib's blitting). Anything outside that list
    must not change in update(): fix axis limits in build(), or make key() change so the figure is rebuilt."""

    dynamic = ()

    def key(self, **values):
        return None

    def build(self, **values):
        raise NotImplementedError("a View needs a build() method")

    def update(self, **values):
        pass

    def alt(self, **values):
        settings = ", ".join(f"{k} = {v}" for k, v in values.items())
        return f"{type(self).__name__} figure for {settings}"


class _Redraw(View):
    """Adapter for a plain `draw(**values) -> figure` function: a new figure on every change (slow path)."""

    def __init__(self, draw):
        self.draw = draw

    def key(self, **values):
        return object()  # never equal: rebuild every time

    def build(self, **values):
        return self.draw(**values)

    def alt(self, **values):
        fig = self.figure
        titles = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) else []
        titles += [ax.get_title() for ax in fig.axes if ax.get_title()]
        return "; ".join(titles) or super().alt(**values)


def render_png(fig, crop=None, draw=True):
    """PNG bytes of `fig`, drawn with Agg (unless draw=False: as the canvas holds it now) and cropped to
    `crop` (pixel box (x0, y0, x1, y1)) if given.

    Encoding with a low zlib level is several times faster than savefig's default and looks the same."""
    from PIL import Image as PILImage

    if draw:
        fig.canvas.draw()
    pixels = np.asarray(fig.canvas.buffer_rgba())
    if crop is not None:
        x0, y0, x1, y1 = crop
        pixels = pixels[y0:y1, x0:x1]
    buffer = io.BytesIO()
    PILImage.fromarray(pixels[..., :3]).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def tight_crop(fig, pad_inches=0.1):
    """The pixel box around everything drawn in `fig` (what bbox_inches="tight" would keep)."""
    renderer = fig.canvas.get_renderer()
    box = fig.get_tightbbox(renderer).padded(pad_inches)
    dpi, height = fig.dpi, fig.bbox.height
    x0, x1 = max(0, int(box.x0 * dpi)), min(int(fig.bbox.width), int(np.ceil(box.x1 * dpi)))
    y0, y1 = max(0, int(height - box.y1 * dpi)), min(int(height), int(np.ceil(height - box.y0 * dpi)))
    return x0, y0, x1, y1


LAYOUTS_KEPT = 8  # layouts an explorer keeps for a quick switch back (each holds a canvas at twice the density)


def _hashable(key):
    try:
        hash(key)
    except TypeError:
        return False
    return True


_watchers = []


def on_new_explorer(callback):
    """Call `callback(explorer)` for every explorer built from now on in this kernel. For tools that
    drive explorers from code (course_dev.widget_driver); a lesson never needs it."""
    _watchers.append(callback)


class Explorer(w.VBox):
    """Controls on top, the figure below, driven by a View (or a plain draw function).

    `status` says what the last redraw showed ("figure", "not implemented" or "error: …"), `png` and
    `alt_text` hold the last image and its alt text,
    `redraw_seconds` keeps the time of every redraw and `builds` counts how often the figure was
    rebuilt. Tests and the benchmark find explorers through `on_new_explorer`."""

    def __init__(self, view, controls, needs):
        self.view = view if isinstance(view, View) else _Redraw(view)
        self.controls, self.needs = dict(controls), list(needs)
        self.output = w.Output()
        self.redraw_seconds, self.builds = [], 0
        self.status, self.alt_text, self.png = "new", "", b""
        self._key = self._fig = self._crop = self._background = None
        self._layouts = {}  # key -> a layout built before (see _figure)
        for callback in _watchers:
            callback(self)
        controls_row = w.HBox(list(self.controls.values()), layout=w.Layout(flex_flow="row wrap"))  # wrap, never clip
        accessibility = w.Output(layout=w.Layout(height="0px", overflow="hidden"))
        with accessibility:
            display(HTML(A11Y_SCRIPT))
        super().__init__([controls_row, self.output, accessibility])
        self.add_class("ac-explorer")
        for control in self.controls.values():
            control.observe(self.redraw, names="value")
        self.redraw()

    def values(self):
        return {name: control.value for name, control in self.controls.items()}

    def _figure(self, values):
        """The persistent figure, built only when the view's key changes to one not seen lately: a layout built
        before (e.g. for another number of heads) comes back with its crop and cached background."""
        key = self.view.key(**values)
        if self._fig is not None and key == self._key:
            return self._fig
        self._park()
        layout = self._layouts.pop(key, None) if _hashable(key) else None
        if layout is not None:
            self._fig, self._crop, self._background, self._min_pt, state = layout
            self.view.__dict__.update(state)  # the view's artists of that layout
            self._key = key
            return self._fig
        self.view.dynamic = ()
        self._crop = self._background = None  # after an error, nothing of the figure it left is drawn again
        self._fig = self.view.figure = self.view.build(**values)
        plt.close(self._fig)  # out of pyplot's list (no second copy inline); it is shown as an image here
        FigureCanvasAgg(self._fig)  # closing detached its canvas: draw it with Agg from now on
        self._fig.set_dpi(plots.CSS_PX_PER_INCH * plots.DENSITY)  # sharp, shown at its size (as plots.show)
        self._key, self.builds = key, self.builds + 1
        self._min_pt = min(plots.font_sizes(self._fig) or [plots.MIN_FONT_PT])
        return self._fig

    def _park(self):
        """Keep the current layout for when its key comes back (the last LAYOUTS_KEPT of them)."""
        if self._fig is None:
            return
        if _hashable(self._key) and not isinstance(self.view, _Redraw):
            state = dict(self.view.__dict__)
            self._layouts[self._key] = (self._fig, self._crop, self._background, self._min_pt, state)
            while len(self._layouts) > LAYOUTS_KEPT:
                plt.close(self._layouts.pop(next(iter(self._layouts)))[0])
        else:
            plt.close(self._fig)
        self._fig = self._crop = self._background = None

    def redraw(self, change=None):
        start = time.perf_counter()
        values = self.values()
        try:
            fig = self._figure(values)
            self.view.update(**values)
            png = self._render(fig)
            self.alt_text = self.view.alt(**values)
        except NotImplementedError:
            self._fig = None  # the figure may be half-updated: build it afresh next time
            names = " and ".join(f"<code>{n}</code>" for n in self.needs) or "the exercise above"
            self._show(
                _message(
                    f"Implement {names} above and run its cell first; then run this cell again "
                    "to explore your own implementation."
                )
            )
            self.status = "not implemented"
        except Exception as error:  # the student's code failed: one readable line, no traceback
            self._fig = None
            self._show(
                _message(
                    f"Your code raised <b>{type(error).__name__}</b>: "
                    f"{html.escape(str(error))}<br>Fix it above, run that cell, then this one.",
                    colour="#D55E00",
                )
            )
            self.status = f"error: {type(error).__name__}: {error}"
        else:
            self.png = png
            width, height = (round(n / plots.DENSITY) for n in plots.png_size(png))
            self._show(HTML(plots.image_html(png, self.alt_text, width, height, self._min_pt)))
            self.status = "figure"
        self.redraw_seconds.append(time.perf_counter() - start)

    def _render(self, fig):
        """PNG of the figure: the cached background plus the view's dynamic artists, or a full draw."""
        dynamic = list(self.view.dynamic)
        if self._background is None:
            for artist in dynamic:
                artist.set_animated(True)  # left out of a full draw, drawn on top by hand below
            fig.canvas.draw()
            self._crop = tight_crop(fig)
            self._background = fig.canvas.copy_from_bbox(fig.bbox) if dynamic else None
        if self._background is None:
            return render_png(fig, self._crop)
        fig.canvas.restore_region(self._background)
        for artist in dynamic:
            fig.draw_artist(artist)
        return render_png(fig, self._crop, draw=False)

    def _show(self, item):
        with self.output:
            self.output.clear_output(wait=True)
            display(item)


def explore(view, needs=(), **controls):
    """Build and return an explorer: `explore(MyView(), needs=["softmax"], d_k=choice_slider(...))`.

    `view` is a View (built once, updated on each change) or a function `draw(**values)` returning a
    new figure each time (simpler, slower)."""
    return Explorer(view, controls, needs)
