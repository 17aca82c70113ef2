"""Figures for the lessons: one palette of meanings, labelled axes, titles that state the finding, and images
that reach every reader (alt text in the page, sharp on high-density screens, no wider than the notebook column).
"""

import base64
import html
import io
import os
import re

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_hex, to_rgb

# --- one colour, one meaning ------------------------------------------------------------------------------------
# Okabe–Ito colours, distinguishable with every common colour-vision deficiency. Each lesson picks colours by what
# they mean, never by position, so "blue" is the same idea in every figure of the course.
BLUE, VERMILION, BLACK, GREEN, PURPLE, ORANGE, SKY = (
    "#0072B2",
    "#D55E00",
    "#000000",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
)
COLOR = {
    "yours": BLUE,  # what the student built, and the method the lesson teaches (scaled, cached, tiled, attention)
    "baseline": VERMILION,  # what it is compared with (unscaled, naive, plain, RNN, an ablation: "without …")
    "reference": BLACK,  # PyTorch's result, theory, a bound or guide line (usually dashed)
    "other": GREEN,  # a further variant or quantity in the same panel
    "other2": PURPLE,  # and one more
    "highlight": ORANGE,  # the item the reader picked (a token, the best key): fills and marks only, never text
    "chance": "#6E6E6E",  # chance level, uniform weights (grey, 5.1:1 on white)
    "masked": "#BDBDBD",  # a masked cell (drawn hatched, see `draw_masked`): not allowed to attend
    "skipped": "#F0F0F0",  # a tile that is never computed
}
MEANINGS = {  # names a lesson may use for the roles above
    "scaled": "yours", "unscaled": "baseline", "pytorch": "reference", "theory": "reference", "cache": "yours",
    "recompute": "baseline", "tiled": "yours", "plain": "baseline", "attention": "yours", "rnn": "baseline",
    "with": "yours", "without": "baseline", "data": "other", "guide": "reference",
}  # fmt: skip
COLORS = [BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILION, "#F0E442", BLACK]  # old positional palette: use COLOR
SEQUENTIAL = "viridis"  # perceptually uniform, readable in grey
DIVERGING = "PuOr"  # colour-blind-safe diverging map, for signed values
TEXT = "#1A1A1A"  # labels and notes: dark text on white
MASK_HATCH = "///"
MASK_EDGE = "#6E6E6E"  # the hatch lines and outline of a masked cell


def color(meaning):
    """The colour of a meaning: `color("scaled")`, `color("yours")`, `color("masked")`."""
    return COLOR[MEANINGS.get(meaning, meaning)]


def _luminance(c):
    channel = np.array(to_rgb(c))
    linear = np.where(channel <= 0.04045, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def contrast(foreground, background="white"):
    """WCAG contrast ratio of two colours (1 to 21; text needs at least 4.5)."""
    hi, lo = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_color(meaning, background="white"):
    """The colour of a meaning, darkened just enough for text on `background` (contrast >= 4.5:1)."""
    rgb = np.array(to_rgb(color(meaning)))
    while contrast(rgb, background) < 4.5:
        rgb = rgb * 0.95
    return to_hex(rgb)


def shades(meaning, n, min_contrast=3.0):
    """`n` shades of a meaning's colour, light to dark, for lines of one kind told apart by a size (ordered by it):
    the lightest still has `min_contrast` on white (3:1, for graphics), the darkest is the colour mixed 60 % with
    black, and the colour itself lies on the way."""
    base = np.array(to_rgb(color(meaning)))
    tint = 0.0  # how far the lightest shade is mixed towards white
    while contrast(base + (tint + 0.02) * (1 - base)) >= min_contrast:
        tint += 0.02
    path = [base + tint * (1 - base), base, 0.4 * base]  # light, the colour, dark
    return [to_hex(_along(path, t)) for t in np.linspace(0, 1, n)]


def _along(points, t):
    """The point at t (0 to 1) on the broken line through `points`, each piece of equal length in t."""
    pieces = len(points) - 1
    i = min(int(t * pieces), pieces - 1)
    return points[i] + (t * pieces - i) * (points[i + 1] - points[i])


def draw_masked(ax, allowed, **kwargs):
    """Hatch the cells of an imshow-style grid that are masked (allowed == False), so they never look like a
    small weight. `allowed`: a boolean (rows, cols) array, True = may attend."""
    from matplotlib.patches import Rectangle

    blocked = ~np.asarray(allowed, dtype=bool)
    patches = []
    for i, j in zip(*np.nonzero(blocked)):
        patch = Rectangle(
            (j - 0.5, i - 0.5), 1, 1, facecolor=COLOR["masked"], edgecolor=MASK_EDGE, hatch=MASK_HATCH, lw=0, **kwargs
        )
        ax.add_patch(patch)
        patches.append(patch)
    return patches


def masked_patch(label="masked"):
    """The legend key of `draw_masked`'s hatched cells: `ax.legend(handles=[masked_patch()])`."""
    from matplotlib.patches import Patch

    return Patch(facecolor=COLOR["masked"], edgecolor=MASK_EDGE, hatch=MASK_HATCH, label=label)


def _array(x):
    """numpy view of an array or tensor to draw (detached, on the CPU; checks.to_numpy is the float64 copy that
    tests compare)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def attention_heatmap(
    weights,
    queries,
    keys=None,
    ax=None,
    title=None,
    annotate=None,
    cmap=SEQUENTIAL,
    vmin=0.0,
    vmax=1.0,
    colorbar=True,
    allowed=None,
    mask_key=True,
):
    """Heatmap of attention weights (T_q, T_k): one row per query token, one column per key token.
    `allowed` (boolean (T_q, T_k), True = may attend) hatches the masked cells, so they never read as a weight of 0,
    and (mask_key) keys the hatching in a legend at the top right, over cells that a causal mask blocks; a figure
    of several heatmaps passes mask_key=False and puts one `masked_patch()` in a figure legend."""
    w = _array(weights)
    keys = queries if keys is None else keys
    if w.ndim != 2 or w.shape != (len(queries), len(keys)):
        raise ValueError(
            f"attention_heatmap expects weights of shape (T_q, T_k) = ({len(queries)}, {len(keys)}) "
            f"to match the token lists, got {w.shape}"
        )
    ax = ax or plt.subplots(figsize=(0.45 * len(keys) + 2.5, 0.4 * len(queries) + 1.6))[1]
    im = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(keys)), keys, rotation=60, ha="right")
    ax.set_yticks(range(len(queries)), queries)
    ax.set_xlabel("key (token attended to)")
    ax.set_ylabel("query (token attending)")
    if title:
        ax.set_title(title)
    blocked = np.zeros(w.shape, bool) if allowed is None else ~_array(allowed).astype(bool)
    if allowed is not None:
        draw_masked(ax, ~blocked)
        if mask_key:
            ax.legend(handles=[masked_patch()], loc="upper right", fontsize=MIN_FONT_PT, framealpha=1)
    if annotate is None:
        annotate = w.size <= 64
    if annotate:
        for (i, j), v in np.ndenumerate(w):
            if not blocked[i, j]:
                dark = v < (vmin + vmax) / 2  # viridis is dark at the low end
                ax.text(
                    j, i, f"{v:.2f}", ha="center", va="center", fontsize=MIN_FONT_PT, color="white" if dark else TEXT
                )
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="weight")
    return ax


def bars(values, labels, ax=None, title=None, xlabel=None, ylabel=None, highlight=None, color=COLOR["yours"]):
    """Horizontal bar chart, one bar per label (top to bottom in the given order); bar `highlight` in orange."""
    v = _array(values).ravel()
    if len(v) != len(labels):
        raise ValueError(f"bars: got {len(v)} values for {len(labels)} labels")
    ax = ax or plt.subplots(figsize=(6, 0.3 * len(labels) + 1.2))[1]
    colors = [COLOR["highlight"] if i == highlight else color for i in range(len(v))]
    ax.barh(range(len(v)), v, color=colors)
    ax.set_yticks(range(len(v)), labels)
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlabel(xlabel or "value")
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


# --- images that every reader gets ------------------------------------------------------------------------------
MIN_FONT_PT = 9  # the smallest text a figure may carry, as shown (a figure is shown at its size: see below)
CSS_PX_PER_INCH = 96  # a figure is shown at its size in inches x 96 CSS pixels, so 9 pt shows as 12 px
DENSITY = 2  # image pixels per CSS pixel: sharp on high-density screens
COLUMN_PX = 820  # an image may fill this much of the notebook column (848 px at 1280 with the file browser open)
MAX_WIDTH_IN = COLUMN_PX / CSS_PX_PER_INCH  # a wider figure would be shrunk below 9 pt: stack its panels instead


def font_sizes(fig):
    """Sizes in points of every visible, non-empty text in `fig` (titles, labels, ticks, legends, notes)."""
    from matplotlib.text import Text

    return [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


LEAST_SHOWN_PT = 8  # the smallest text any reader sees: a browser may shrink a figure to its column, never below this
SHOWN_PT_SLACK = 0.05  # a browser lays images out to a fraction of a pixel: 7.95 pt as shown counts as 8
# The notebook column of JupyterLab at 1024 x 768 px with the file browser open, as the reading test shows a solved
# notebook (measured 2026-12-02: a 662-px figure shows at 0.86 of its size, 9-pt text at 7.8 pt).
COLUMN_1024_PX = 570


def widest_px(min_pt):
    """The widest a figure whose smallest text is `min_pt` may be: at most COLUMN_PX (shown at its size at 1280 px),
    and so narrow that shrunk into the 1024-px column its smallest text still shows at LEAST_SHOWN_PT or more. A figure
    with 9-pt text may be 645 px wide; with 10-pt text, 716 px."""
    return min(COLUMN_PX, int(COLUMN_1024_PX * min_pt / (LEAST_SHOWN_PT - SHOWN_PT_SLACK)))


def caption(alt):
    """The caption under a figure: the first sentence of its alt text, which states the finding."""
    match = re.match(r"\s*(.+?[.!?])(?=\s|$)", alt, re.S)
    return (match[1] if match else alt).strip()


def image_html(png, alt, width_px, height_px, min_pt=MIN_FONT_PT):
    """A <figure>: the <img> carries its alt text into the page (JupyterLab, Notebook 7, nbconvert's HTML, feedback
    pages), shown at `width_px` x `height_px` CSS pixels whatever the image's own density, and under it the alt
    text's first sentence (the finding, `caption`) as a caption every reader sees; screen readers read it once, in
    the alt text (the caption is aria-hidden). `min_pt`, the smallest text in the image at that size, lets a browser
    test tell how small the text is as shown."""
    data = base64.b64encode(png).decode("ascii")
    shown = html.escape(caption(alt))
    return (
        f'<figure class="ac-figure" style="margin:0 0 0.5em 0;max-width:{width_px}px">'
        f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}" '
        f'width="{width_px}" height="{height_px}" data-min-pt="{min_pt:g}" style="max-width:100%;height:auto">'
        f'<figcaption aria-hidden="true" style="color:{TEXT};font-size:0.95em;margin-top:0.25em">{shown}</figcaption>'
        "</figure>"
    )


def display_png(png, alt, width_px, height_px, min_pt=MIN_FONT_PT):
    """Show PNG bytes as an image with alt text (an HTML output: JupyterLab ignores alt text in image metadata)."""
    from IPython.display import HTML, display

    display(HTML(image_html(png, alt, width_px, height_px, min_pt)), metadata={"alt": alt})


# --- figures that hide no data (tests/test_lessons.py checks every figure and explorer setting) ---------------------
RATIO_LABEL = re.compile(r"ratio|speed-?up|slow-?down|\u00d7|times (faster|slower|as)", re.I)
PROBLEMS = []  # what figure_problems found in each figure shown so far in this kernel: (its alt text, the problem)


def _data_lines(ax):
    """The lines of `ax` drawn in data coordinates (not guides such as axhline, whose x runs over the axes, 0 to 1)."""
    return [line for line in ax.lines if line.get_transform() == ax.transData]


def _axis_data(ax, name):
    """Every finite value of the x or y data of the lines and bars in `ax`."""
    values = []
    for line in _data_lines(ax):
        values.append(np.asarray(line.get_xdata() if name == "x" else line.get_ydata(), dtype=float).ravel())
    for container in ax.containers:
        for patch in getattr(container, "patches", []):
            box = patch.get_bbox()
            values.append(np.array([box.x0, box.x1] if name == "x" else [box.y0, box.y1], dtype=float))
    values = np.concatenate(values) if values else np.zeros(0)
    return values[np.isfinite(values)]


def _labelled_ticks(axis):
    """Positions of the ticks of `axis` that show a label (the ticks a draw would draw, major and minor)."""
    lo, hi = sorted(axis.get_view_interval())
    ticks = axis._update_ticks()  # noqa: SLF001 - the ticks in view with their labels, as a draw makes them
    return [
        t.get_loc() for t in ticks if t.label1.get_visible() and t.label1.get_text().strip() and lo <= t.get_loc() <= hi
    ]


def _one_unlabelled_side(ax, name):
    """A log or ratio axis whose data runs from below 1 to above 1, but which labels ticks on one side of 1 only."""
    axis = ax.xaxis if name == "x" else ax.yaxis
    label = axis.get_label().get_text() + " " + ax.get_title()
    if axis.get_scale() != "log" and not RATIO_LABEL.search(label):
        return None
    data = _axis_data(ax, name)
    if data.size == 0 or not (data.min() < 1 < data.max()):
        return None
    ticks = _labelled_ticks(axis)
    if any(t < 1 for t in ticks) and any(t > 1 for t in ticks):
        return None
    return f"the {name} axis ({axis.get_label().get_text() or 'no label'}) spans 1 but labels only one side of it"


def _hidden_series(ax):
    """Lines with no finite point inside the axes' view, and bar charts whose bars are all zero (they draw nothing)."""
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    problems = []
    for line in _data_lines(ax):
        if not line.get_visible():
            continue
        x = np.asarray(line.get_xdata(), dtype=float).ravel()
        y = np.asarray(line.get_ydata(), dtype=float).ravel()
        if x.size != y.size or x.size == 0:
            continue
        inside = np.isfinite(x) & np.isfinite(y) & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
        if not inside.any():
            problems.append(f"the line {line.get_label()!r} shows no point inside the axes")
    for container in ax.containers:
        patches = [p for p in getattr(container, "patches", []) if p.get_visible()]
        if patches and all(p.get_height() == 0 or p.get_width() == 0 for p in patches):
            problems.append(f"the bars {container.get_label()!r} are all zero: they draw nothing")
    return problems


def figure_problems(fig):
    """What in a drawn figure hides data: a series that draws nothing, or a log or ratio axis that labels only one side
    of 1 where its data crosses 1 (a slow-down could not be read). Draws the figure if it has no renderer yet."""
    if getattr(fig.canvas, "renderer", None) is None and hasattr(fig.canvas, "draw"):
        fig.canvas.draw()
    problems = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        title = ax.get_title() or ax.get_ylabel() or "an axes"
        found = _hidden_series(ax) + [p for p in (_one_unlabelled_side(ax, n) for n in "xy") if p]
        problems += [f"{title[:40]}: {p}" for p in found]
    return problems


def show(fig, alt, name=None):
    """Display `fig` with alt text (what the figure shows, for screen readers), then close it.

    Drawn at DENSITY x the display resolution and shown at its size in inches (CSS_PX_PER_INCH), so text keeps its
    point size and stays sharp. Also saves it when `name` is given (see `save`). Every figure a lesson shows goes
    through here."""
    sizes = font_sizes(fig) or [MIN_FONT_PT]
    if min(sizes) < MIN_FONT_PT:
        raise ValueError(f"figure text must be at least {MIN_FONT_PT} pt; found {min(sizes)} pt")
    if name:
        save(fig, name)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", dpi=CSS_PX_PER_INCH * DENSITY)
    PROBLEMS.extend((alt[:80], problem) for problem in figure_problems(fig))
    plt.close(fig)
    png = buffer.getvalue()
    width, height = png_size(png)
    display_png(png, alt, round(width / DENSITY), round(height / DENSITY), min(sizes))


def png_size(png):
    """(width, height) in pixels of PNG bytes."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # the IHDR chunk


def save(fig, name):
    """Save `fig` as PNG into $ATTENTION_COURSE_FIGURES (if set), so figures can be inspected outside Jupyter."""
    folder = os.environ.get("ATTENTION_COURSE_FIGURES")
    if folder:
        os.makedirs(folder, exist_ok=True)
        fig.savefig(os.path.join(folder, f"{name}.png"), bbox_inches="tight", dpi=CSS_PX_PER_INCH * DENSITY)
    return fig


# --- lessons 05 and 06: matrices drawn with their numbers, and one query traced through attention -------------------


def number_text(value, digits=2):
    """`value` with `digits` decimals as a drawn matrix prints it: no minus sign on a value shown as 0 ("-0.00"). A
    hyphen-minus, not "−", which is too wide for a cell of five characters."""
    text = f"{value:.{digits}f}"
    return text.lstrip("-") if float(text) == 0 else text


def number_grid(ax, M, left, top, cell_w, cell_h=1.0, fills=None, digits=2, edge="#9E9E9E"):
    """Draw matrix M (rows, cols) as cells that print its numbers (number_text), the top-left corner at (left, top)
    in data units of an axes whose y axis points down; returns the grid's right edge.

    fills: None (white), one colour for every cell, or one per entry ((rows, cols, 3) or (rows, cols, 4)); each
    number is dark or white, whichever contrasts more with its fill. The one place where a matrix is drawn with its
    numbers: qkv_flow (lesson 05) and lesson 06's multi-head data-flow figure use it."""
    from matplotlib.patches import Rectangle

    M = _array(M)
    if fills is None or isinstance(fills, str) or np.ndim(fills) == 1:  # one colour for every cell
        fills = np.broadcast_to(to_rgb("white" if fills is None else fills), (*M.shape, 3))
    fills = np.asarray(fills, dtype=float)[..., :3]
    for (i, j), value in np.ndenumerate(M):
        x, y, fill = left + j * cell_w, top + i * cell_h, fills[i, j]
        ax.add_patch(Rectangle((x, y), cell_w, cell_h, facecolor=fill, edgecolor=edge, lw=0.6))
        ink = TEXT if contrast(TEXT, fill) >= contrast("white", fill) else "white"
        ax.text(x + cell_w / 2, y + cell_h / 2, number_text(value, digits), ha="center", va="center",
                fontsize=MIN_FONT_PT, color=ink)  # fmt: skip
    return left + M.shape[1] * cell_w


def qkv_flow(
    tokens, X, Q, K, V, scores, weights, output, query, *, head=None, show_x=True, digits=2, ax=None, title=None
):
    """Draw one query's path through self-attention with every number: X → Q, K, V → scores → weights → output.

    The columns sit side by side with one row per token, so a key's score and weight stand next to its row of K and
    of V: X (T, d_model) | Q = X W^Q (T, d_k) | K = X W^K (T, d_k) | scores | weights | V = X W^V (T, d_v), and the
    query's output (d_v numbers) under V. The query's row of X and Q is filled orange (the picked token), each weight
    is shaded as in `attention_heatmap`, the output is filled blue (yours). Nothing is computed here: pass the
    numbers your code produced.

    tokens   the T token labels (rows)
    X        (T, d_model) embeddings; left out of the drawing with show_x=False (e.g. for heads after the first)
    Q, K     (T, d_k) queries and keys of every token
    V        (T, d_v) values
    scores   the query's scaled scores q·k_j/√d_k over the T keys: shape (T,), or a (T, T) matrix (row `query`)
    weights  the query's attention weights, (T,) or (T, T) like scores
    output   the query's output, (d_v,), or (T, d_v) (row `query`)
    query    index of the traced token
    head     None, or a head number: labels become Q_h = X W^Q_h and so on (one panel per head)
    digits   decimals shown in every cell (1 or 2; fewer fit more columns)
    ax       draw into this axes (sized by the caller); by default a new figure sized to fit its numbers, refused
             with a ValueError if wider than MAX_WIDTH_IN
    title    the axes title (say what the reader should see)

    Returns the axes. Arrays may be numpy arrays or tensors."""
    X, Q, K, V, scores, weights, output = _qkv_checked(tokens, X, Q, K, V, scores, weights, output, query)
    h = "" if head is None else f"_{head}"
    blocks = [("$X$", X)] if show_x else []
    blocks += [
        (f"$Q{h} = XW^Q{h}$", Q),
        (f"$K{h} = XW^K{h}$", K),
        (f"scores\n$q \\cdot k\\,/\\sqrt{{{Q.shape[1]}}}$", scores[:, None]),
        ("weights\n(softmax)", weights[:, None]),
        (f"$V{h} = XW^V{h}$", V),
    ]
    cell_w, gap, label_w = 0.13 + 0.09 * (digits + 1), 0.35, 0.09 * max(len(t) for t in tokens) + 0.2
    widths = [block.shape[1] * cell_w for _, block in blocks]
    total_w = label_w + sum(widths) + gap * (len(blocks) - 1)
    ax = _qkv_axes(ax, total_w, len(tokens))
    picked = to_hex(np.array(to_rgb(COLOR["highlight"])) * 0.45 + 0.55)  # light orange: the picked token
    lefts = label_w + np.concatenate([[0], np.cumsum([w + gap for w in widths[:-1]])])
    _qkv_columns(ax, tokens, blocks, query, (label_w, lefts, widths, cell_w), picked, digits)
    _qkv_query_and_output(ax, tokens, Q[query], output, query, (lefts, widths, cell_w), picked, digits)
    if title:
        ax.set_title(title)
    return ax


def _qkv_checked(tokens, X, Q, K, V, scores, weights, output, query):
    """qkv_flow's arrays as float arrays (the query's row of scores, weights and output), their shapes checked."""
    X, Q, K, V = (_array(a).astype(float) for a in (X, Q, K, V))
    row = lambda a: (lambda m: m[query] if m.ndim == 2 else m)(_array(a).astype(float))  # noqa: E731
    scores, weights, output = row(scores), row(weights), row(output)
    T = len(tokens)
    expected = {"X": (X, (T, None)), "Q": (Q, (T, None)), "K": (K, (T, Q.shape[-1])), "V": (V, (T, None))}
    for name, (a, (rows, cols)) in expected.items():
        if a.ndim != 2 or a.shape[0] != rows or (cols is not None and a.shape[1] != cols):
            raise ValueError(f"qkv_flow: {name} should have shape ({rows}, {cols or 'width'}), got {a.shape}")
    for name, a, n in (("scores", scores, T), ("weights", weights, T), ("output", output, V.shape[1])):
        if a.shape != (n,):
            raise ValueError(f"qkv_flow: the query's {name} should hold {n} numbers, got shape {a.shape}")
    if not 0 <= query < T:
        raise ValueError(f"qkv_flow: query must be a token index from 0 to {T - 1}, got {query}")
    return X, Q, K, V, scores, weights, output


def _qkv_axes(ax, total_w, T):
    """qkv_flow's axes: `ax`, or a new figure sized to fit (refused if wider than the notebook column)."""
    if ax is None:
        fig_w, fig_h = total_w + 0.3, 0.27 * (T + 4.6) + 0.4
        if fig_w > MAX_WIDTH_IN:
            raise ValueError(
                f"qkv_flow: {fig_w:.1f} in wide, more than the {MAX_WIDTH_IN:.2f}-in notebook column: "
                "use fewer columns (a smaller d_model or d_k), digits=1, or show_x=False"
            )
        ax = plt.subplots(figsize=(fig_w, fig_h), layout="constrained")[1]
    ax.set_xlim(-0.05, total_w + 0.05)
    ax.set_ylim(T + 1.6, -3.0)  # rows go down: headers, the query's q above K, the tokens, the output under V
    ax.axis("off")
    return ax


def _qkv_columns(ax, tokens, blocks, query, layout, picked, digits):
    """The token labels and qkv_flow's columns of numbers side by side, each under its header."""
    label_w, lefts, widths, cell_w = layout
    cmap = plt.get_cmap(SEQUENTIAL)
    for i, token in enumerate(tokens):
        weight = "bold" if i == query else "normal"
        ax.text(label_w - 0.1, i, token, ha="right", va="center", fontsize=MIN_FONT_PT, color=TEXT, weight=weight)
    for (name, block), left, width in zip(blocks, lefts, widths):
        ax.text(left + width / 2, -1.7, name, ha="center", va="bottom", fontsize=MIN_FONT_PT, color=TEXT)
        fills = np.ones((*block.shape, 3))  # white; row i of the matrix is drawn around y = i
        if name.startswith("weights"):
            fills = cmap(block)
        elif name[1] in "XQ":
            fills[query] = to_rgb(picked)
        number_grid(ax, block, left, -0.5, cell_w, fills=fills, digits=digits)


def _qkv_query_and_output(ax, tokens, q, output, query, layout, picked, digits):
    """The query's row of Q copied above K (with an arrow from it), and its output under V."""
    from matplotlib.patches import FancyArrowPatch

    lefts, widths, cell_w = layout
    T = len(tokens)
    q_left, k_left, v_left = lefts[-5], lefts[-4], lefts[-1]
    # the query's row of Q, copied above K: each score is this row · a row of K, divided by √d_k
    number_grid(ax, q[None], k_left, -1.5, cell_w, fills=picked, digits=digits)
    ax.add_patch(
        FancyArrowPatch(
            (q_left + widths[-5] + 0.03, query), (k_left - 0.03, -1.0), arrowstyle="-|>", mutation_scale=9,
            connectionstyle="arc3,rad=0.3", color=TEXT, lw=0.8,
        )
    )  # fmt: skip
    # the output: each row of V times its weight, summed down the column
    light_blue = to_hex(np.array(to_rgb(COLOR["yours"])) * 0.3 + 0.7)
    number_grid(ax, output[None], v_left, T + 0.4, cell_w, fills=light_blue, digits=digits)
    ax.text(
        v_left - 0.1, T + 0.9, f"output of '{tokens[query]}' = Σ weight × row of V",
        ha="right", va="center", fontsize=MIN_FONT_PT, color=TEXT,
    )  # fmt: skip
