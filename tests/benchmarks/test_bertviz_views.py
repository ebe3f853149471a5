"""The pure parts of benchmarks/bertviz_views.py: BertViz's page made local, and the table's cells and ratios."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bertviz_views as bv  # noqa: E402

# What BertViz 1.4's html_action='return' gives, cut down: a script tag, the views' div, require.config's paths
FRAGMENT = """<script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js"></script>
<div id="bertviz-1"><div id='vis'></div></div>
<script type="text/javascript">
require.config({paths: {d3: 'https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min',
  jquery: 'https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min',}});
</script>"""


def test_the_page_loads_every_script_from_here_and_reports():
    page = bv.localize(FRAGMENT, changes=True, repeats=4)
    assert "cdnjs" not in page and "https:" not in page
    assert '<script src="/js/require.js"></script>' in page
    assert "d3: '/js/d3.min'" in page and "jquery: '/js/jquery.min'" in page     # require.js appends .js
    assert "CHANGES = true, REPEATS = 4" in page and "fetch('/report'" in page
    assert page.index("bertviz-1") < page.index("requestAnimationFrame(look)")      # the harness comes after
    assert "CHANGES = false, REPEATS = 0" in bv.localize(FRAGMENT, changes=False, repeats=0)


def test_a_page_from_another_bertviz_version_is_refused_by_name():
    other = FRAGMENT.replace("d3/5.7.0", "d3/7.8.5")
    with pytest.raises(ValueError, match=r"d3/5\.7\.0/d3\.min"):
        bv.localize(other, changes=False, repeats=0)


def page(painted=None, stopped=None, elapsed=0.0, layer=(), head=(), peak=1.5):
    return {"painted_s": painted, "stopped": stopped, "elapsed_s": elapsed, "layer_ms": list(layer),
            "head_ms": list(head), "peak_gib": peak}


def test_table_rows_give_totals_changes_memory_and_ratios():
    r = {"rows": [0, 127], "prep_s": 10.0, "import_s": 4.0, "head_html_s": 1.0, "model_html_s": 2.0,
         "head": page(painted=9.0, layer=[1000, 3000, 2000], head=[400, 600, 500], peak=2.25),
         "model": page(stopped="time", elapsed=180.4, peak=7.5)}
    ours = {"first_s": 10.0, "layer": [50.0, 100.0], "head": [10.0, 20.0]}
    figures, ratios = bv.table_rows(128, r, ours, limit=180, memory_gib=8)
    assert figures == ("| 128 (0, 127) | 10.0 s (import 4.0 s) | 20.0 s (9.0 s) | 2000 / 3000 ms | 500 / 600 ms "
                       "| 2.25 GiB | > 180 s in the browser, not painted | 7.50 GiB |")
    # head view: (10 + 1 + 9) / 10; model view not painted: at least (10 + 2 + 180.4) / 10
    assert ratios == "| 128 | 2.0× | > 19.2× | 30.0× | 30.0× |"


def test_a_page_stopped_for_memory_and_a_failed_side_of_ours():
    r = {"rows": [0, 63], "prep_s": 5.0, "import_s": 2.0, "head_html_s": 0.5, "model_html_s": 0.5,
         "head": page(painted=2.0, stopped="memory", layer=[700], peak=8.1),
         "model": page(stopped="memory", elapsed=30.0, peak=8.2)}
    figures, ratios = bv.table_rows(64, r, None, limit=180, memory_gib=8)
    assert "| 700 / 700 ms (1, then stopped) | — | 8.10 GiB (stopped) |" in figures
    assert "not painted: stopped at 8 GiB | 8.20 GiB (stopped) |" in figures
    assert ratios == "| 64 | — | — | — | — |"
