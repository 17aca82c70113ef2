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
    return {
        "notebooks": {
            "repeat": 3,
            "floor": {"median_s": 4.0},
            "lessons": {
                "01_why_attention": {
                    "median_s": 6.0,
                    "ratio_to_floor": 1.5,
                    "budget_s": 15.0,
                    "errors": [],
                    "floor_ratio_budget": 2.0,
                },
                "03_scaling": {
                    "median_s": 10.0,
                    "ratio_to_floor": 2.5,
                    "budget_s": 15.0,
                    "errors": [],
                    "floor_ratio_budget": 2.0,
                },
                "05_qkv": {
                    "median_s": 16.0,
                    "ratio_to_floor": 4.0,
                    "budget_s": 15.0,
                    "errors": [],
                    "floor_ratio_budget": 2.0,
                },
                "09_tiny_transformer": {
                    "median_s": 25.0,
                    "ratio_to_floor": 6.2,
                    "budget_s": 30.0,
                    "errors": [],
                    "floor_ratio_budget": None,
                },
                "10_decoder": {
                    "median_s": 12.0,
                    "ratio_to_floor": 3.0,
                    "budget_s": 30.0,
                    "errors": [],
                    "floor_ratio_budget": 2.0,
                },
            },
            "core_lessons": ["01_why_attention", "03_scaling", "05_qkv", "09_tiny_transformer"],
            "total_s": 57.0,
            "total_budget_s": 45.0,
            "all_lessons_s": 69.0,
        },
        "grading": {
            "lesson": "01_why_attention",
            "submissions": 20,
            "stock": {"per_minute": 15.0, "seconds": 80.0, "returncode": 0, "graded": 20},
            "course": {"missing": "the autograde package is missing"},
        },
        "widgets": {
            "explorers": [
                {
                    "lesson": "01_why_attention",
                    "explorer": 1,
                    "controls": ["T"],
                    "changes": 20,
                    "missed": 0,
                    "statuses": ["figure"],
                    "median_ms": 40.0,
                    "p90_ms": 150.0,
                },
                {
                    "lesson": "02_dot_product",
                    "explorer": 1,
                    "controls": ["k"],
                    "changes": 20,
                    "missed": 0,
                    "statuses": ["figure"],
                    "median_ms": 50.0,
                    "p90_ms": 90.0,
                },
            ]
        },
        "memory": {"biggest": "09_tiny_transformer", "peak_rss_mib": 512.0},
    }


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
