"""Unit tests of the helper package, on its own."""

import base64
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import attention_course as ac  # noqa: E402
from attention_course import checks, data, plots, reuse, widgets  # noqa: E402

pytestmark = pytest.mark.xdist_group("helpers")


# --- checks -------------------------------------------------------------------------------


def test_expect_close_accepts_tensors_and_float32():
    checks.expect_close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0]), "x")
    checks.expect_close(np.float32([0.1, 0.2]), [0.1, 0.2], "x", atol=1e-6)


def test_expect_close_names_the_mistake_it_recognises():
    with pytest.raises(AssertionError, match="you forgot to scale"):
        checks.expect_close([2.0, 4.0], [1.0, 2.0], "scores", mistakes={"you forgot to scale": [2.0, 4.0]})


def test_expect_close_reports_shape_and_location():
    with pytest.raises(AssertionError, match=r"shape \(2,\), but has shape \(3,\)"):
        checks.expect_close([1, 2, 3], [1, 2], "out")
    with pytest.raises(AssertionError, match=r"at index \(1,\) it is 5 where 2 was expected"):
        checks.expect_close([1, 5], [1, 2], "out")
    with pytest.raises(AssertionError, match="NaN or inf"):
        checks.expect_close([np.nan, 1], [1, 1], "out")
    with pytest.raises(AssertionError, match="return"):
        checks.expect_close(None, [1], "out")


def test_checks_survive_a_monkeypatched_numpy(monkeypatch):
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    monkeypatch.setattr(np, "abs", lambda x: x * 0)
    with pytest.raises(AssertionError):
        checks.expect_close([1.0, 5.0], [1.0, 2.0], "out")


def test_call_turns_not_implemented_into_a_hint():
    def softmax(x):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError, match="`softmax` is not implemented yet"):
        checks.call(softmax, 1)


def test_quiz_checks():
    checks.expect_choice("B", "abcd", "Q1")
    checks.check_choice(" b ", "b", "Q1")
    checks.expect_number(3, "Q2")
    checks.check_number(64.0, 64, "Q2")
    for bad in (None, "e", 3):
        with pytest.raises(AssertionError):
            checks.expect_choice(bad, "abcd", "Q1")
    for bad in (None, "3", True, float("nan")):
        with pytest.raises(AssertionError):
            checks.expect_number(bad, "Q2")
    with pytest.raises(AssertionError):
        checks.check_number(63, 64, "Q2")


def test_quiz_checks_compare_plain_values():
    """An answer that redefines comparison (a str or float subclass) is compared by its plain value."""

    class Agreeable(str):
        def __str__(self):
            return self

        def strip(self):
            return self

        def lower(self):
            return self

        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = str.__hash__

    class Close(float):
        def __float__(self):
            return self

        def __sub__(self, other):
            return Close(0.0)

        def __abs__(self):
            return Close(0.0)

    with pytest.raises(AssertionError):
        checks.check_choice(Agreeable("a"), "b", "Q1")
    with pytest.raises(AssertionError):
        checks.check_number(Close(63.0), 64, "Q2")
    checks.check_choice(Agreeable(" B"), "b", "Q1")


def test_passed_prints_and_returns_none(capsys):
    assert checks.passed("softmax") is None
    assert "softmax" in capsys.readouterr().out


# --- data ---------------------------------------------------------------------------------


def test_embeddings_are_deterministic_per_word():
    a, b = data.embed(["The", "cat", "the"], 8), data.embed(["the"], 8)
    assert a.shape == (3, 8)
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.allclose(a[0], a[1])


def test_video_library_shapes_and_query():
    titles, keys, values = data.video_library()
    assert keys.shape == (len(titles), len(data.VIDEO_TAGS))
    assert values.shape == (len(titles), len(data.VIDEO_CONTENT))
    np.testing.assert_array_equal(data.video_query("Cats jumping"), [1, 0, 1, 0, 0, 0])


# --- plots --------------------------------------------------------------------------------


def test_heatmap_labels_axes_with_tokens():
    tokens = ["the", "cat", "sat"]
    ax = plots.attention_heatmap(np.eye(3), tokens, title="identity")
    assert [t.get_text() for t in ax.get_xticklabels()] == tokens
    assert [t.get_text() for t in ax.get_yticklabels()] == tokens
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == "identity"
    plt.close("all")


def test_heatmap_rejects_mismatched_tokens_in_plain_words():
    with pytest.raises(ValueError, match=r"\(T_q, T_k\) = \(2, 2\)"):
        plots.attention_heatmap(np.eye(3), ["a", "b"])


def test_save_writes_png_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_FIGURES", str(tmp_path))
    fig, _ = plt.subplots()
    plots.save(fig, "x")
    assert (tmp_path / "x.png").stat().st_size > 0
    plt.close("all")


# --- widgets and friendly demos -----------------------------------------------------------


def _figure(n):
    fig, ax = plt.subplots()
    ax.plot(range(n))
    return fig


def test_explorer_redraws_and_records_time():
    seen = []
    widgets.on_new_explorer(seen.append)
    box = widgets.explore(_figure, n=widgets.slider("n", 1, 10, 3))
    assert box.status == "figure"
    box.controls["n"].value = 7
    assert len(box.redraw_seconds) == 2 and seen == [box]


def test_explorer_shows_a_note_before_the_exercise_is_done():
    def draw(n):
        raise NotImplementedError()

    assert widgets.explore(draw, needs=["softmax"], n=widgets.slider("n", 1, 3, 1)).status == "not implemented"


def test_explorer_shows_student_errors_as_one_line():
    def draw(n):
        raise ValueError("shapes (2,3) and (4,3) not aligned")

    assert widgets.explore(draw, n=widgets.slider("n", 1, 3, 1)).status.startswith("error: ValueError")


def test_student_code_hides_only_not_implemented(capsys):
    with ac.student_code("softmax"):
        raise NotImplementedError()
    assert "Implement `softmax`" in capsys.readouterr().out
    with pytest.raises(ValueError):
        with ac.student_code("softmax"):
            raise ValueError("real bug")


def test_package_holds_no_answers():
    """The helpers never implement an exercise: no softmax, attention, layer norm or RNN step in them."""
    import inspect

    source = "".join(inspect.getsource(m) for m in (ac, checks, data, plots, reuse, widgets))
    for banned in (
        "def softmax",
        "def scaled_dot_product_attention",
        "def layer_norm",
        "def rnn_step",
        "torch.softmax",
        ".softmax(",
        "def split_heads",
        "def positional_encoding",
    ):
        assert banned not in source, banned


def test_kernel_modules_are_what_lessons_use_and_import_no_jupyter_tools():
    """The grader's guard loads and watches only `ac.KERNEL_MODULES` (autograde/kernel_guard.py): every module a
    lesson imports from the package is one of them, every module of the package is classified, and loading them all
    imports none of nbconvert, nbclient or nbgrader (about 1.5 s of every graded kernel's start)."""
    import pkgutil
    import subprocess
    import sys

    tools = {"nbclient_fix", "offline_maths", "run", "validation"}
    unclassified = {info.name for info in pkgutil.iter_modules(ac.__path__)} ^ (set(ac.KERNEL_MODULES) | tools)
    assert not unclassified, f"add {unclassified} to attention_course.KERNEL_MODULES if a lesson's kernel uses it"
    root = Path(__file__).resolve().parents[1]
    used = set()
    for source in (root / "solutions").glob("*/*.py"):
        text = source.read_text()
        used |= set(re.findall(r"\battention_course\.(\w+)", text))
        for names in re.findall(r"from attention_course import ([\w, ]+)", text):
            used |= {name.strip() for name in names.split(",")}
    assert used and used <= set(ac.KERNEL_MODULES), used - set(ac.KERNEL_MODULES)
    probe = "import sys, importlib; [importlib.import_module('attention_course.' + m) for m in sys.argv[1:]]; "
    probe += "print(sorted(m for m in ('nbconvert', 'nbclient', 'nbgrader', 'nbformat') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe, *ac.KERNEL_MODULES], capture_output=True, text=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


class _Bars(widgets.View):
    """A view that blits one line and one title; rebuilt when `n` changes."""

    def key(self, n, scale):
        return n

    def build(self, n, scale):
        fig, ax = plt.subplots(layout="constrained")
        (self.line,) = ax.plot(range(n), [0] * n)
        ax.set_ylim(-10, 10)
        self.title = ax.set_title("")
        self.dynamic = [self.line, self.title]
        return fig

    def update(self, n, scale):
        self.line.set_ydata([scale * i for i in range(n)])
        self.title.set_text(f"n = {n}, scale = {scale}")


def test_view_updates_in_place_and_rebuilds_only_on_a_new_key():
    box = widgets.explore(_Bars(), n=widgets.slider("n", 2, 9, 3), scale=widgets.slider("scale", 0, 3, 1))
    first = box.png
    box.controls["scale"].value = 2
    assert box.status == "figure" and box.builds == 1
    assert box.png != first, "the image changes with the data"
    assert box.alt_text, "every explorer image carries alt text"
    box.controls["n"].value = 5
    assert box.builds == 2


def assert_shown_as_a_full_draw(box):
    """The explorer's image (its cached background and its dynamic artists drawn on top) is the whole figure drawn."""
    shown = widgets.render_png(box._fig, box._crop, draw=False)
    for artist in box.view.dynamic:
        artist.set_animated(False)
    assert np.array_equal(
        plt.imread(__import__("io").BytesIO(shown)),
        plt.imread(__import__("io").BytesIO(widgets.render_png(box._fig, box._crop))),
    )


def test_blitted_image_equals_a_full_draw():
    box = widgets.explore(_Bars(), n=widgets.slider("n", 2, 9, 4), scale=widgets.slider("scale", 0, 3, 1))
    box.controls["scale"].value = 3
    assert_shown_as_a_full_draw(box)


class _FailsAtScale2(_Bars):
    """_Bars whose update() (the student's code) raises at scale = 2."""

    def update(self, n, scale):
        if scale == 2:
            raise ValueError("scale 2")
        super().update(n, scale)


def test_after_an_error_the_next_layout_is_drawn_whole():
    """The student's code fails at one setting and the next setting needs another layout: its image shows that
    layout's axes, not the background kept from the figure drawn before the error."""
    box = widgets.explore(_FailsAtScale2(), n=widgets.slider("n", 2, 9, 3), scale=widgets.slider("scale", 0, 3, 1))
    box.controls["scale"].value = 2
    assert box.status.startswith("error: ValueError")
    box.controls["n"].value = 8
    box.controls["scale"].value = 1
    assert box.status == "figure"
    assert_shown_as_a_full_draw(box)


def test_show_puts_alt_text_into_the_page_at_double_density_and_refuses_tiny_text(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    fig, ax = plt.subplots(figsize=(5, 2.5))
    ax.set_title("a title")
    plots.show(fig, alt='an "empty" plot <1>. It has a title.')
    page = shown[0].data
    assert page.startswith("<figure ") and 'alt="an &quot;empty&quot; plot &lt;1&gt;. It has a title."' in page
    assert '<figcaption aria-hidden="true"' in page and ">an &quot;empty&quot; plot &lt;1&gt;.</figcaption>" in page
    width = int(re.search(r'width="(\d+)"', page)[1])
    png = base64.b64decode(re.search(r"base64,([^\"]+)", page)[1])
    assert abs(plots.png_size(png)[0] - plots.DENSITY * width) <= 1, "drawn at twice the size it is shown"
    assert 0.8 * 5 * plots.CSS_PX_PER_INCH < width <= 5 * plots.CSS_PX_PER_INCH, "shown at its (cropped) size in inches"
    fig, ax = plt.subplots()
    ax.text(0, 0, "tiny", fontsize=6)
    with pytest.raises(ValueError, match="at least 9 pt"):
        plots.show(fig, alt="tiny text")


def test_figure_problems_find_hidden_series_and_ratio_axes_labelled_on_one_side_of_1():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.9, 1, 1.5], label="speed")
    ax.set_yscale("log")
    ax.set_ylabel("speed-up")
    assert any("labels only one side" in p for p in plots.figure_problems(fig))
    ax.set_yticks([0.9, 1, 1.5], ["0.9", "1", "1.5"])
    ax.set_xscale("log")
    ax.axhline(1, color="black")  # a guide: its x runs over the axes (0 to 1), not over the data
    assert plots.figure_problems(fig) == []
    fig, ax = plt.subplots()
    ax.plot([1, 2], [5, 6], label="gone")
    ax.set_ylim(0, 1)
    ax.bar([1, 2], [0, 0], label="zeros")
    found = plots.figure_problems(fig)
    assert len(found) == 2 and "'gone'" in found[0] and "all zero" in found[1], found
    assert plots.caption("Scaling keeps 0.13 of it. Two histograms.") == "Scaling keeps 0.13 of it."
    assert plots.widest_px(9) == 645 and plots.widest_px(12) == plots.COLUMN_PX


def test_palette_names_meanings_and_text_colours_are_readable():
    assert plots.color("scaled") == plots.color("yours") != plots.color("unscaled") == plots.color("baseline")
    for meaning in plots.COLOR:
        assert plots.contrast(plots.text_color(meaning)) >= 4.5, meaning
    assert plots.contrast(plots.COLOR["highlight"]) < 4.5, "orange is for fills: text_color() darkens it"


def test_heatmap_hatches_masked_cells():
    fig, ax = plt.subplots()
    allowed = np.tril(np.ones((3, 3), bool))
    plots.attention_heatmap(np.tril(np.full((3, 3), 0.3)), list("abc"), ax=ax, allowed=allowed)
    hatched = [p for p in ax.patches if p.get_hatch() == plots.MASK_HATCH]
    assert len(hatched) == 3, "one hatched patch per masked cell"
    assert len([t for t in ax.texts if t.get_text()]) == 6, "masked cells carry no number"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["masked"], "the hatching has a key"
    plt.close(fig)


def test_reuse_runs_the_answer_cells_of_an_earlier_notebook(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import os"),
        nbformat.v4.new_code_cell("def double(x):\n    return 2 * np.asarray(x)"),
        nbformat.v4.new_code_cell("def half(x):\n    raise NotImplementedError()\nraise NotImplementedError()"),
    ]
    for cell in nb.cells[1:]:
        cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False}
    (tmp_path / "03_x").mkdir()
    (tmp_path / "05_y").mkdir()
    nbformat.write(nb, str(tmp_path / "03_x" / "03_x.ipynb"))
    (double,) = reuse.from_lesson("03_x", "double", here=tmp_path / "05_y")
    assert list(double([1, 2])) == [2, 4]
    with pytest.raises(reuse.NotAvailable, match="missing_name not found in your 03_x notebook"):
        reuse.from_lesson("03_x", "double", "missing_name", here=tmp_path / "05_y")
    with pytest.raises(reuse.NotAvailable, match="is not next to this notebook"):
        reuse.from_lesson("04_z", "f", here=tmp_path / "05_y")


def test_output_and_weights_names_a_swapped_pair():
    out, w = np.zeros((2, 5)), np.full((2, 3), 1 / 3)
    assert checks.output_and_weights((out, w), "example", d_v=5, T_k=3)[0] is out
    with pytest.raises(AssertionError, match="wrong way round"):
        checks.output_and_weights((w, out), "example", d_v=5, T_k=3)
    with pytest.raises(AssertionError, match=r"must return a tuple \(output, weights\)"):
        checks.output_and_weights(out, "example", d_v=5, T_k=3, fn="attention")


# Machado, Oliveira & Fernandes (2009), severity 1: linear-RGB matrices that simulate each dichromacy.
_CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
}
# meanings that sit side by side in the course's figures
_SIDE_BY_SIDE = [
    ("yours", "baseline"),
    ("yours", "reference"),
    ("baseline", "reference"),
    ("yours", "other"),
    ("baseline", "other"),
    ("other", "other2"),
    ("yours", "highlight"),
    ("masked", "skipped"),
]


def _lab(rgb_linear):
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb_linear
    xyz = xyz / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _linear(colour):
    c = np.array(matplotlib.colors.to_rgb(colour))
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


@pytest.mark.parametrize("vision", ["typical", *_CVD])
def test_colours_that_sit_side_by_side_stay_apart_under_colour_vision_deficiency(vision):
    """CIELAB distance of every pair of meanings drawn next to each other, under each simulated dichromacy."""
    simulate = np.eye(3) if vision == "typical" else np.array(_CVD[vision])
    for a, b in _SIDE_BY_SIDE:
        la, lb = (_lab(np.clip(simulate @ _linear(plots.color(m)), 0, 1)) for m in (a, b))
        assert np.linalg.norm(la - lb) >= 12, f"{a} and {b} look alike under {vision}: ΔE {np.linalg.norm(la - lb):.1f}"


def test_same_as_torch_attention_compares_with_pytorch_and_names_the_mistake():
    import torch

    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x, mask = torch.randn(3, 5, 8), (torch.arange(5)[:, None] + torch.arange(5)) % 3 != 0  # no row fully blocked

    def check(result, **kw):
        return checks.same_as_torch_attention(lambda: result, theirs, x, mask, "example", **kw)

    def broken():
        raise TypeError("forward() takes 2 positional arguments but 3 were given")

    with torch.no_grad():
        right = theirs(x, x, x, attn_mask=~mask, average_attn_weights=False)
        check(right)
        wrong = theirs(x, x, x, attn_mask=mask, average_attn_weights=False)  # the mask inverted
        with pytest.raises(AssertionError, match="inverted. Check"):
            check(wrong, mistakes={"inverted.": wrong[0]}, hint="Check")
        with pytest.raises(AssertionError, match="wrong way round"):
            check(right[::-1])
        with pytest.raises(AssertionError, match="the output is torch.float64"):
            check((right[0].double(), right[1]))
        with pytest.raises(AssertionError, match="example raised TypeError: forward"):
            checks.same_as_torch_attention(broken, theirs, x, mask, "example")


# --- lessons 04 and 05 ---------------------------------------------------------------------------------------------


def test_qkv_flow_draws_every_number_of_one_query_and_fits_the_column():
    rng = np.random.default_rng(0)
    tokens, X = ["a", "bb", "c"], rng.standard_normal((3, 4))
    Q, K, V = rng.standard_normal((3, 2)), rng.standard_normal((3, 2)), rng.standard_normal((3, 5))
    scores, weights = rng.standard_normal((3, 3)), np.full((3, 3), 1 / 3)
    output = weights @ V
    ax = plots.qkv_flow(tokens, X, Q, K, V, scores, weights, output, query=1, title="one query")
    texts = [t.get_text() for t in ax.texts]
    for value in (*X.ravel(), *Q.ravel(), *K.ravel(), *V.ravel(), *scores[1], *output[1], *Q[1]):
        assert f"{value:.2f}" in texts, value  # every number of the matrices, the query's row above K, the output
    assert ax.figure.get_size_inches()[0] <= plots.MAX_WIDTH_IN
    assert min(plots.font_sizes(ax.figure)) >= plots.MIN_FONT_PT
    plt.close(ax.figure)
    heads = plots.qkv_flow(tokens, X, Q, K, V, scores[1], weights[1], output[1], 1, head=2, show_x=False, digits=1)
    assert any("Q_2" in t.get_text() for t in heads.texts) and not any(t.get_text() == "$X$" for t in heads.texts)
    plt.close(heads.figure)
    with pytest.raises(ValueError, match="K should have shape"):
        plots.qkv_flow(tokens, X, Q, K[:, :1], V, scores, weights, output, query=1)
    with pytest.raises(ValueError, match="notebook column"):
        plots.qkv_flow(tokens, rng.standard_normal((3, 30)), Q, K, V, scores, weights, output, query=1)


# --- lesson 11: numpy_peak_memory -------------------------------------------------------------------------------------


def test_numpy_peak_memory_sees_numpy_and_counts_torch():
    result, peak, calls = checks.numpy_peak_memory(lambda n: np.ones((n, n)), 512)
    assert result.shape == (512, 512) and 8 * 512 * 512 <= peak < 1.5 * 8 * 512 * 512 and calls == 0
    _, peak, calls = checks.numpy_peak_memory(lambda n: torch.ones(n, n).sum().item(), 2048)
    assert calls >= 2 and peak < 8 * 2048 * 2048 / 100, "torch's 16 MB is invisible to tracemalloc, but counted"
    import tracemalloc

    with pytest.raises(AssertionError, match="do not stop, clear or reset"):
        checks.numpy_peak_memory(lambda: tracemalloc.reset_peak())
    assert not tracemalloc.is_tracing() and tracemalloc.reset_peak is not checks._refuse


def test_read_counter_counts_slices_and_whole_uses_but_not_shapes():
    K, reads = checks.read_counter(np.ones((2, 6, 3)))
    assert np.result_type(K, np.float64) == np.float64 and K.shape == (2, 6, 3) and reads[0] == 0
    block = K[..., 0:2, :]
    assert type(block) is np.ndarray and reads[0] == 12  # a slice: its numbers
    np.ones((2, 4, 3)) @ K.swapaxes(-1, -2)  # a view used whole: all 36
    assert reads[0] == 48
    np.swapaxes(K, -1, -2)  # a numpy function given the whole array reads it
    assert reads[0] == 84
    np.asarray(K)  # a conversion is not seen: lesson 11's spec asks for slices, and its check names this
    assert reads[0] == 84


# --- lessons 05 and 06: a matrix drawn with its numbers; lesson 06: masks that hold for scores far below -1e9 -------


def test_number_grid_draws_each_number_in_a_cell_with_readable_ink():
    fig, ax = plt.subplots()
    ax.set_xlim(0, 3), ax.set_ylim(3, 0)  # y points down, as in the data-flow figures
    M = np.array([[0.25, -1.5], [-0.001, 0.9]])
    fills = np.array([[[1, 1, 1], [0, 0, 0.3]], [[1, 1, 1], [1, 1, 0.8]]], dtype=float)  # one dark cell
    right = plots.number_grid(ax, M, 0.5, 1.0, 0.4, 0.3, fills=fills, digits=2)
    assert right == pytest.approx(0.5 + 2 * 0.4)
    texts = {t.get_text(): t for t in ax.texts}
    assert sorted(texts) == ["-1.50", "0.00", "0.25", "0.90"]  # no "-0.00"
    assert texts["-1.50"].get_color() == "white" and texts["0.25"].get_color() == plots.TEXT
    assert texts["0.25"].get_position() == pytest.approx((0.7, 1.15))  # the centre of the top-left cell
    assert len(ax.patches) == 4 and min(plots.font_sizes(fig)) >= plots.MIN_FONT_PT
    plots.number_grid(ax, M[:1], 0, 0, 0.4, fills="white", digits=1)  # one colour for every cell
    assert [t.get_text() for t in ax.texts[-2:]] == ["0.2", "-1.5"]
    plt.close(fig)


def test_blocked_weights_zero_names_a_finite_fill_and_nan():
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    right = np.where(allowed, 1.0, 0.0) / allowed.sum(-1, keepdims=True)
    checks.blocked_weights_zero(np.stack([right, right]), allowed, "two heads")  # broadcast over the heads
    checks.blocked_weights_zero(torch.from_numpy(right), torch.from_numpy(allowed), "a tensor")
    with pytest.raises(AssertionError, match="blocked keys got weight.*-1e9 in place of -inf"):
        checks.blocked_weights_zero(np.full((3, 3), 1 / 3), allowed, "a -1e9 fill")
    with pytest.raises(AssertionError, match="contain NaN or inf"):
        checks.blocked_weights_zero(np.where(allowed, np.nan, 0.0), allowed, "0/0")


def test_a_layout_built_before_comes_back_without_a_rebuild():
    box = widgets.explore(_Bars(), n=widgets.slider("n", 2, 9, 3), scale=widgets.slider("scale", 0, 3, 1))
    first = box.png
    box.controls["n"].value = 5
    box.controls["n"].value = 3
    assert box.builds == 2, "n = 3's layout is kept, not built again"
    assert box.png == first, "and it draws the same image as before"
    box.controls["scale"].value = 2
    assert box.status == "figure" and box.png != first, "its artists still update"


def test_attempt_names_the_failing_check_and_the_likely_cause():
    def batch_only(X):
        return X @ X.T  # fine for one sequence, fails for a batch of 3 sequences of 5 tokens

    assert checks.attempt(batch_only, np.ones((2, 3)), what="one sequence").shape == (2, 2)
    with pytest.raises(AssertionError, match=r"a batch failed \(ValueError: .*\)\. Transpose only the last two axes"):
        checks.attempt(batch_only, np.ones((3, 5, 2)), what="a batch", hint="Transpose only the last two axes.")

    def unanswered(X):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError, match="is not implemented yet"):
        checks.attempt(unanswered, 1, what="x")


def test_check_messages_agree_with_plural_subjects():
    """Issue 34: the messages read right whatever `what` is ("the weights", "the output"): no template puts a verb
    after it that agrees with one of them only ("the weights contains NaN", "the attention weights is not right")."""
    source = Path(checks.__file__).read_text()
    assert not re.search(r"\{what\} (is|contains|has|does|was)\b", source), "a template conjugates a verb after {what}"
    for call, expected in (
        (
            lambda: checks.expect_close([1.0, 2.0], [1.0, 3.0], "the weights", mistakes={"mistake x.": [1, 2]}),
            "the weights: mistake x.",
        ),
        (lambda: checks.expect_close([np.nan, 2.0], [1.0, 3.0], "the weights"), "the weights: NaN or inf"),
        (lambda: checks.expect_finite([np.inf], "the weights", "hint."), "the weights: NaN or inf. hint."),
    ):
        with pytest.raises(AssertionError) as raised:
            call()
        assert str(raised.value).startswith(expected), str(raised.value)
