"""A tiny repository and a report with one failure of each kind, for the correction loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from citecal.config import Config, JudgeConfig

CART = '''"""A shopping cart."""


class Cart:
    def __init__(self):
        self.items = {}

    def add_item(self, sku, quantity):
        if quantity < 0:
            raise ValueError("negative quantity")
        self.items[sku] = quantity

    def total_quantity(self):
        return sum(self.items.values())
'''

PRICING = """TAX_RATE = 0.2


def compute_total(subtotal):
    return round(subtotal * (1 + TAX_RATE), 2)
"""

REPORT = """# Shop

The `Cart` class defines `add_item` [pkg/cart.py:4-11].
The `compute_total` function multiplies by `TAX_RATE` [pkg/cart.py:8-11].
The `total_quantity` method sums `self.items` [pkg/cart.py:40-45].
`add_item` stores each quantity in `self.items` after raising `ValueError` [pkg/cart.py:8-9].
The `refund` helper calls `issue_refund` [pkg/refunds.py:1-5].
"""
"""Line 3 verifies (untouched); line 4 cites the wrong file (relocate to pricing.py);
line 5 is past the end (relocate to ``total_quantity``); line 6 misses names
defined just below (expand to the whole method); line 7 cites a file that does
not exist and names code that exists nowhere (removed in round 2)."""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(CART)
    (root / "pkg" / "pricing.py").write_text(PRICING)
    return root


@pytest.fixture
def shop_report(tmp_path: Path) -> Path:
    path = tmp_path / "report.md"
    path.write_text(REPORT)
    return path


def judge_config(base_url: str, tmp_path: Path) -> Config:
    """Settings for a judge on the local test server: its own cache, no escalation, quick
    timeouts (the correction tests' judges answer at once)."""
    return Config(
        judge=JudgeConfig(
            base_url=base_url,
            cache_path=str(tmp_path / "cache.sqlite3"),
            escalation_model=None,
            timeout_s=5.0,
        )
    )
