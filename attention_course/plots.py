"""Figures with labelled axes, titles that state their parameters and colour-blind-safe colours."""

import io
import os

import matplotlib.pyplot as plt
import numpy as np

# Okabe-Ito: distinguishable with every common form of colour blindness.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
SEQUENTIAL = "viridis"  # perceptually uniform, readable in grey
DIVERGING = "PuOr"  # colour-blind-safe diverging map, for signed values


def to_numpy(x):
    """numpy view of an array or tensor (detached, on the CPU)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def attention_heatmap(
    weights, queries, keys=None, ax=None, title=None, annotate=None, cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, colorbar=True
):
    """Heatmap of attention weights (T_q, T_k): one row per query token, one column per key token."""
    w = to_numpy(weights)
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
    if annotate is None:
        annotate = w.size <= 64
    if annotate:
        for (i, j), v in np.ndenumerate(w):
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                color="white" if v < (vmin + vmax) / 2 else "black",
            )
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="weight")
    return ax


def bars(values, labels, ax=None, title=None, xlabel=None, ylabel=None, highlight=None, color=COLORS[0]):
    """Horizontal bar chart, one bar per label (top to bottom in the given order)."""
    v = to_numpy(values).ravel()
    if len(v) != len(labels):
        raise ValueError(f"bars: got {len(v)} values for {len(labels)} labels")
    ax = ax or plt.subplots(figsize=(6, 0.3 * len(labels) + 1.2))[1]
    colors = [COLORS[1] if i == highlight else color for i in range(len(v))]
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


MIN_FONT_PT = 9  # the smallest text a figure may carry


def font_sizes(fig):
    """Sizes in points of every visible, non-empty text in `fig` (titles, labels, ticks, legends, notes)."""
    from matplotlib.text import Text

    return [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def show(fig, alt, name=None):
    """Display `fig` as a PNG with alt text (what the figure shows, for screen readers), then close it.

    Also saves it when `name` is given (see `save`). Every figure a lesson shows goes through here."""
    from IPython.display import Image, display

    small = [s for s in font_sizes(fig) if s < MIN_FONT_PT]
    if small:
        raise ValueError(f"figure text must be at least {MIN_FONT_PT} pt; found {min(small)} pt")
    if name:
        save(fig, name)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    display(Image(data=buffer.getvalue(), format="png", metadata={"alt": alt}))


def save(fig, name):
    """Save `fig` as PNG into $ATTENTION_COURSE_FIGURES (if set), so figures can be inspected outside Jupyter."""
    folder = os.environ.get("ATTENTION_COURSE_FIGURES")
    if folder:
        os.makedirs(folder, exist_ok=True)
        fig.savefig(os.path.join(folder, f"{name}.png"), bbox_inches="tight")
    return fig
