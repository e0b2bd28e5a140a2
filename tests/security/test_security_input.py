"""Nothing in a report or an annotation table is silently accepted (README "Security")."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"
NO_KEY_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=NO_KEY_ENV)
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- citations


@pytest.mark.parametrize(
    ("written", "error"),
    [
        ("[a.py:123456789012345678901234]", "Line number too large (more than 18 digits)"),
        ("[a.py:2-99999999999999999999]", "Line number too large (more than 18 digits)"),
        ("[a.py:-1-2]", "Invalid start line -1"),
    ],
)
def test_absurd_line_numbers_are_invalid_range_not_uncited(
    tmp_path: Path, written: str, error: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    report = tmp_path / "r.md"
    report.write_text(f"The function `f` returns the number one to its callers {written}.\n")
    code, out, err = run("eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    [row] = doc["citations"]
    assert row["failure_type"] == "invalid_range" and row["error"].startswith(error)
    assert doc["uncited_claims"] == []
    assert doc["summary"]["cited_claims"] == doc["summary"]["total_claims"] == 1


# --------------------------------------------------------------------------- annotation tables


def test_non_numeric_llm_score_is_rejected_with_its_row(tmp_path: Path) -> None:
    table = pd.read_parquet(TABLE)
    table["llm_score"] = table["llm_score"].astype(object)
    table.loc[4, "llm_score"] = "high"
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    code, _, err = run("calibrate", str(path))
    assert code == 2
    assert err == (
        f"Error: {path}: row 5: llm_score must be a number in [0, 1] (or empty), got 'high'\n"
    )


def test_csv_cut_mid_row_is_rejected_with_the_line(tmp_path: Path) -> None:
    full = tmp_path / "full.csv"
    table = pd.read_parquet(TABLE)
    table.to_csv(full, index=False)
    data = full.read_bytes()
    cut = tmp_path / "cut.csv"
    # The last row's multi-line cited_code (quoted, quotes doubled) is followed by mode,
    # judge_model, prompt_version, llm_verdict, llm_confidence, llm_score, annotator and
    # human_score. Cut right after human_score: every required column is there, the rest is not.
    code = table["cited_code"].iloc[-1].replace('"', '""').encode() + b'",'
    at = data.rindex(code) + len(code) - 1
    for _ in range(8):
        at = data.index(b",", at + 1)
    at = data.index(b",", at + 1)
    cut.write_bytes(data[:at])
    lines = data[:at].count(b"\n") + 1  # the line the cut row ends on
    code, _, err = run("calibrate", str(cut))
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"Error: {cut}: line {lines}: the last row has ")
    assert err.rstrip().endswith("the file looks cut mid-row")
    # The whole file, and one without a final line break, are fine.
    assert run("calibrate", str(full))[0] == 0
    whole = tmp_path / "no-final-newline.csv"
    whole.write_bytes(data.rstrip(b"\n"))
    assert run("calibrate", str(whole))[0] == 0
