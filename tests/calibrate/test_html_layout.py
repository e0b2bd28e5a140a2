"""The HTML calibration report as Chromium lays it out: no word broken mid-word in the
disagreement table, no legend over the plotted points (issue 24: "false_po sitive").

Real layout needs a real browser: Debian's Chromium, driven by Playwright.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from citecal.annotations import read_table
from citecal.calibrate import calibrate_frame, prepare, render_html
from citecal.calibrate._html import group_figure, reliability_figure
from citecal.config import CalibrationConfig

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Every text node of these columns must sit on one line: a line break may fall only between
# nodes (at the <wbr> after "_" or "/"), never inside one.
UNBROKEN_COLUMNS = (0, 1, 6)  # Type, Category, Human
BROKEN_NODES_JS = """
(cols) => {
  const tables = [...document.querySelectorAll('table.wide')];
  const bad = [];
  for (const t of tables) {
    for (const th of t.querySelectorAll('th')) {
      const r = document.createRange(); r.selectNodeContents(th);
      const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (lines.size > 1) bad.push('header ' + th.textContent);
    }
    for (const row of t.querySelectorAll('tr')) {
      const cells = row.querySelectorAll('td');
      for (const c of cols) {
        if (!cells[c]) continue;
        const walker = document.createTreeWalker(cells[c], NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const r = document.createRange(); r.selectNodeContents(n);
          const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
          if (lines.size > 1) bad.push(cells[c].textContent);
        }
      }
    }
  }
  return bad;
}
"""


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = prepare(read_table(ROOT / "datasets" / "annotations" / "annotations.parquet"))
    report = calibrate_frame(
        table, input_name="annotations", by=("mode",), config=CalibrationConfig()
    )
    path = tmp_path_factory.mktemp("html") / "calibration.html"
    path.write_text(render_html(report))
    return path


@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="needs Debian's chromium")
@pytest.mark.parametrize("width", [1200, 900])
def test_disagreement_columns_break_between_words_only(report_html: Path, width: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.goto(report_html.as_uri())
            broken = page.evaluate(BROKEN_NODES_JS, list(UNBROKEN_COLUMNS))
        finally:
            browser.close()
    assert broken == [], f"words broken mid-word at {width}px: {sorted(set(broken))[:5]}"


def _legend_outside_axes(fig: Figure) -> bool:
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    return not legend.get_window_extent().overlaps(ax.get_window_extent())


def test_plot_legends_cover_no_point_or_bar() -> None:
    table = prepare(read_table(ROOT / "datasets" / "annotations" / "annotations.parquet"))
    report = calibrate_frame(
        table, input_name="annotations", by=("mode",), config=CalibrationConfig()
    )
    figs = [reliability_figure(report.overall), group_figure("mode", report.groups["mode"])]
    try:
        for fig in figs:
            assert fig is not None
            assert _legend_outside_axes(fig), fig.axes[0].get_title()
    finally:
        for fig in figs:
            if fig is not None:
                plt.close(fig)
