"""The HTML calibration report: code shown as code, fits the page, no empty CI columns.

Parses the page with the standard library's HTML parser and checks the
structure a browser renders, on the bundled table (8 reports) and on the same
table as one report (no cluster-bootstrap CIs can be computed).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from citecal.annotations import read_table
from citecal.calibrate import calibrate_frame, prepare, render_html
from citecal.calibrate._html import code_html, error_bars
from citecal.config import CalibrationConfig

BUNDLED = Path(__file__).parents[2] / "datasets" / "annotations" / "annotations.parquet"


class Page(HTMLParser):
    """Tables as lists of rows of (tag path inside the cell, text) plus the page's CSS."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, object]] = []
        self.css = ""
        self.text = ""
        self._stack: list[str] = []
        self._cell: dict[str, object] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._stack.append(tag)
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"class": a.get("class"), "rows": [], "cols": []})
        elif tag == "col":
            self._stack.pop()  # void element
            self.tables[-1]["cols"].append(a.get("style"))  # type: ignore[attr-defined]
        elif tag == "tr":
            self.tables[-1]["rows"].append([])  # type: ignore[attr-defined]
        elif tag in ("td", "th"):
            self._cell = {"tags": [], "text": "", "code": []}
            self.tables[-1]["rows"][-1].append(self._cell)  # type: ignore[index]
        elif self._cell is not None:
            self._cell["tags"].append(tag)  # type: ignore[attr-defined]

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            if self._stack.pop() == tag:
                break
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text += data
        if self._stack and self._stack[-1] == "style":
            self.css += data
        if self._cell is not None:
            self._cell["text"] += data  # type: ignore[operator]
            if self._stack[-2:] == ["pre", "code"]:
                self._cell["code"].append(data)  # type: ignore[attr-defined]


def _page(table: pd.DataFrame, by: tuple[str, ...] = ("mode",)) -> Page:
    config = CalibrationConfig(bootstrap_resamples=200)
    report = calibrate_frame(prepare(table), input_name="t.parquet", by=by, config=config)
    page = Page()
    page.feed(render_html(report))
    return page


def _table_with(page: Page, header: str) -> dict[str, object]:
    for t in page.tables:
        rows = t["rows"]
        if rows and any(c["text"] == header for c in rows[0]):  # type: ignore[index]
            return t
    raise AssertionError(f"no table with a {header!r} column")


def _header(t: dict[str, object]) -> list[str]:
    return [c["text"] for c in t["rows"][0]]  # type: ignore[index]


@pytest.fixture(scope="module")
def bundled() -> pd.DataFrame:
    return read_table(BUNDLED)


@pytest.fixture(scope="module")
def bundled_page(bundled: pd.DataFrame) -> Page:
    return _page(bundled)


@pytest.fixture(scope="module")
def one_report_page(bundled: pd.DataFrame) -> Page:
    return _page(bundled.assign(report_id="only-report"))


def test_cited_code_is_a_code_block_not_markdown(bundled: pd.DataFrame, bundled_page: Page) -> None:
    # the raw cited lines, as pulled from Argilla (schema 2: README "Annotation table")
    raw = set(bundled["cited_code"])
    t = _table_with(bundled_page, "Cited code")
    col = _header(t).index("Cited code")
    cells = [row[col] for row in t["rows"][1:]]  # type: ignore[index]
    assert cells
    for cell in cells:
        assert "```" not in cell["text"]
        assert "pre" in cell["tags"] and "code" in cell["tags"]
        assert "".join(cell["code"]) in raw  # exactly the cited code sits in <pre><code>
    # the heading's `path` and the claim's `names` are inline code, not backticks
    claim = _header(t).index("Claim")
    assert not any("`" in row[claim]["text"] for row in t["rows"][1:])  # type: ignore[index]


def test_code_html_escapes_and_keeps_unfenced_code() -> None:
    fenced = "`a.py`, lines 1–2\n\n```python\n▶ 1  if a < b and c > d:\n▶ 2  <script>\n```"
    out = code_html(fenced)
    assert out == (
        "<div><code>a.py</code>, lines 1–2</div>"
        '<pre><code class="language-python">▶ 1  if a &lt; b and c &gt; d:\n'
        "▶ 2  &lt;script&gt;</code></pre>"
    )
    assert code_html("x = 1 < 2\n`y`") == "<pre><code>x = 1 &lt; 2\n`y`</code></pre>"
    assert code_html("  ") == ""


def test_page_fits_its_width(bundled_page: Page) -> None:
    css = bundled_page.css.replace("\n", "")
    assert re.search(r"body\{[^}]*max-width:1100px", css)
    assert re.search(r"pre\{[^}]*overflow:auto", css)  # long code lines scroll in their cell
    assert re.search(r"table\.wide\{[^}]*width:100%;table-layout:fixed", css)
    assert re.search(r"\.plots img\{max-width:100%", css)
    t = _table_with(bundled_page, "Cited code")
    assert t["class"] == "wide"  # the disagreement table is laid out to the page width ...
    widths = [float(re.fullmatch(r"width:([\d.]+)%", s).group(1)) for s in t["cols"]]  # type: ignore[union-attr, arg-type, attr-defined]
    assert len(widths) == len(_header(t)) and sum(widths) == pytest.approx(100)


def test_several_reports_show_their_cis(bundled_page: Page) -> None:
    assert _header(_table_with(bundled_page, "Figure")) == ["Figure", "Value", "95% CI"]
    assert _header(_table_with(bundled_page, "Group")).count("95% CI") == 2
    assert "95% CIs from a cluster bootstrap by report" in bundled_page.text


def test_one_report_hides_the_ci_columns_and_says_why(one_report_page: Page) -> None:
    assert _header(_table_with(one_report_page, "Figure")) == ["Figure", "Value"]
    assert "95% CI" not in _header(_table_with(one_report_page, "Group"))
    assert (
        "No confidence intervals: one report only; the cluster bootstrap needs ≥ 2 reports"
        in one_report_page.text
    )


def test_no_error_bars_without_intervals(bundled: pd.DataFrame) -> None:
    config = CalibrationConfig(bootstrap_resamples=200)
    one = calibrate_frame(
        prepare(bundled.assign(report_id="r")), input_name="t", by=("mode",), config=config
    )
    many = calibrate_frame(prepare(bundled), input_name="t", by=("mode",), config=config)
    assert error_bars(one.groups["mode"], "agreement_rate") is None
    bars = error_bars(many.groups["mode"], "agreement_rate")
    assert bars is not None and bars.shape == (2, len(many.groups["mode"])) and bars.sum() > 0
