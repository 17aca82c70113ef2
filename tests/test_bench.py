"""Smoke test of course_dev/bench.py (make bench) on a tiny configuration (a check that the script works, not a
timed test: no figure here is compared with a budget)."""

import json

import nbformat
import pytest
from harness import ROOT

pytestmark = pytest.mark.xdist_group("bench")


@pytest.fixture(scope="module")
def bench():
    from course_dev import bench

    return bench


def fake_results():
    """A results.json of make bench, made up: lessons within and over budget, a missing grader, two explorers."""
    return json.loads((ROOT / "tests" / "fixtures" / "bench_results.json").read_text())


def test_table_marks_budgets_and_a_missing_grader(bench):
    rows = {
        (part, item): (measured, budget, status)
        for part, item, measured, budget, status in bench.table_rows(fake_results())
    }
    assert rows[("notebooks", "01_why_attention")] == ("6.0 s (1.5× floor)", "≤ 15 s, ≤ 2× floor", "ok")
    assert rows[("notebooks", "03_scaling")][2].startswith("OVER")  # within 15 s, but 2.5× the floor
    assert rows[("notebooks", "05_qkv")][2].startswith("OVER")
    assert rows[("notebooks", "09_tiny_transformer")][1:] == ("≤ 30 s (capstone)", "ok")
    assert rows[("notebooks", "lessons 01–09 together (4 notebooks)")] == ("57.0 s", "≤ 45 s", "OVER ✗")
    assert rows[("notebooks", "all 5 lessons")][0] == "69.0 s"
    course = [v for (part, item), v in rows.items() if part == "grading" and "-m autograde" in item]
    assert course and course[0][0] == "n/a (the autograde package is missing)"
    assert rows[("widgets", "01_why_attention #1 (T)")] == (
        "median 40 ms, p90 150 ms",
        "median ≤ 60 ms, p90 ≤ 100 ms",
        "OVER ✗",
    )
    assert rows[("widgets", "02_dot_product #1 (k)")][2] == "ok"
    assert rows[("memory", "peak RSS, biggest notebook (09_tiny_transformer)")][0] == "512 MiB"
    table = bench.format_table(bench.table_rows(fake_results())).splitlines()
    assert len({len(line) for line in table}) == 1, "the table's columns must line up"
    assert bench.notebook_budget("09_tiny_transformer") == 30.0 and bench.notebook_budget("03_scaling") == 15.0
    assert bench.percentile([1, 2, 3, 4, 5], 50) == 3 and bench.percentile(list(range(11)), 90) == 9


def test_readme_table_is_replaced_between_markers(bench, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n## Performance\ntext\n{bench.README_START}\nold\n{bench.README_END}\nafter\n")
    bench.update_readme(readme, "| new | table |")
    assert readme.read_text() == (
        f"# x\n## Performance\ntext\n{bench.README_START}\n| new | table |\n{bench.README_END}\nafter\n"
    )
    text = (ROOT / "README.md").read_text()
    assert text.index("## Performance") < text.index(bench.README_START) < text.index(bench.README_END)


def test_widget_driver_on_a_tiny_notebook(bench, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfrom attention_course import widgets\n"
            "def draw(n, scale):\n    fig, ax = plt.subplots(figsize=(2, 1))\n    ax.plot(range(n))\n    return fig\n"
            "widgets.explore(draw, n=widgets.slider('n', 2, 9, 3), scale=widgets.choice_slider('s', [1, 2, 4], 2))"
        )
    ]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, str(path))
    result = bench.bench_widgets(["tiny"], changes=4, warmup=1, timeout=60, log=print, paths={"tiny": path})
    [entry] = result["explorers"]
    assert entry["controls"] == ["n", "scale"] and entry["changes"] == 4 and entry["missed"] == 0
    assert entry["statuses"] == ["figure"] and 0 < entry["median_ms"] <= entry["p90_ms"]


def test_floor_only_run_writes_table_and_json(bench, tmp_path, capsys):
    out = tmp_path / "results.json"
    bench.main(["--only", "notebooks", "--lessons", "", "--repeat", "1", "--json", str(out)])
    printed = capsys.readouterr().out
    assert "floor: kernel + imports" in printed and "together" not in printed
    saved = json.loads(out.read_text())
    assert saved["notebooks"]["floor"]["median_s"] > 0 and saved["notebooks"]["floor"]["peak_rss_mib"] > 0
    [phases] = saved["notebooks"]["floor"]["runs_phases_s"]
    assert set(phases) == {"start_s", "cells_s", "shutdown_s"} and all(v > 0 for v in phases.values())
    assert saved["table"][0]["measurement"] == "floor: kernel + imports"


def test_prune_rows(bench):
    entry = {"lesson": "01_why_attention", "cells": 27, "pruned_cells": 10, "cell_seconds": 10.0,
             "pruned_seconds": 8.0, "validate_pruned": 6.0, "validate_full": 18.0,
             "validate_pruned_passed": True, "validate_full_passed": True}  # fmt: skip
    rows = bench.table_rows({"prune": {"lessons": [entry]}})
    assert rows[0][2] == "6.0 s vs 18.0 s" and rows[0][4] == "ok"
    assert rows[1][2] == "10 of 27 code cells, 80 % of the cell seconds"
    assert bench.table_rows({"prune": {"lessons": [{**entry, "validate_full_passed": False}]}})[0][4] == "CHECK ✗"
