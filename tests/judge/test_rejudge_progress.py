"""``rejudge_frame`` reports the judge's progress, and bars are drawn only on a terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from citecal.commands._progress import progress_bar
from citecal.config import load_config
from citecal.testing import FakeOpenAIServer
from citecal.verify.judge import rejudge_frame, rejudge_requests

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "annotations" / "annotations.parquet"


@pytest.mark.integration
def test_rejudge_drives_the_progress_callback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    table = pd.read_parquet(DATASET)
    table = table[table["report_id"].isin({"report-01", "report-02"})]
    n = len(rejudge_requests(table))
    seen: list[int] = []
    with FakeOpenAIServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("CITECAL_ESCALATION_MODEL", "")
        config = load_config(None, None, {}).judge
        rejudge_frame(table, config, prompt="v1", use_cache=False, progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == n  # cumulative, ends at every record


def test_bars_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert progress_bar().disable
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert not progress_bar().disable
