"""No report makes citecal exhaust memory, disk or time (README "Security", resource bounds).

Issue 25: a sentence of thousands of citations made a 128 KB report write a
1 GB JSON at 2.1 GB of memory (every citation carries its paragraph), and
`correct` on a 5 MB single-line report did not finish.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.pipeline import MAX_CARRIED_TEXT, MAX_CITATIONS_PER_REPORT

NO_KEY_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
APP = 'def add(a, b):\n    """Return the sum."""\n    return a + b\n'
CARRIED_MB = MAX_CARRIED_TEXT // 2**20


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=NO_KEY_ENV)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    return root


def carried_error(n: int) -> str:
    return (
        f"Error: report: its {n:,} citations would carry more than {CARRIED_MB} MB of claim, "
        "paragraph and cited text into the output (each carries its paragraph and cited lines; "
        "split the long paragraphs, narrow the cited ranges, or split the report)\n"
    )


def test_sentence_of_thousands_of_citations_is_refused(tmp_path: Path, repo: Path) -> None:
    # 2 500 citations in one 45 KB sentence: 2 500 × 45 KB = 112 MB carried (a 150 MB JSON)
    report = tmp_path / "r.md"
    report.write_text(
        "The `add` function returns a sum " + " ".join(["[src/app.py:1-3]"] * 2500) + ".\n"
    )
    out = tmp_path / "out.json"
    code, stdout, stderr = run(
        "eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json", "-o", str(out)
    )
    assert (code, stdout, stderr) == (2, "", carried_error(2500))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md", "repo"]


def test_citation_count_per_report_is_bounded(tmp_path: Path, repo: Path) -> None:
    n = MAX_CITATIONS_PER_REPORT + 1
    report = tmp_path / "r.md"
    report.write_text("The `add` function returns a sum [src/app.py:1-3].\n\n" * n)
    code, stdout, stderr = run("eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json")
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"Error: report has {n:,} citations; citecal evaluates at most "
        f"{MAX_CITATIONS_PER_REPORT:,} per report (split the report)\n"
    )


def test_cited_lines_count_towards_the_bound(tmp_path: Path, repo: Path) -> None:
    # 40 citations of a 1.8 MB file's 60 000 lines: 72 MB of cited text
    (repo / "big.py").write_text("x = 1  # a line of thirty chars\n" * 60_000)
    report = tmp_path / "r.md"
    report.write_text("The module `big` sets x to one [big.py:1-60000].\n\n" * 40)
    code, stdout, stderr = run("eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json")
    assert (code, stdout, stderr) == (2, "", carried_error(40))


def test_a_report_under_the_bounds_is_evaluated(tmp_path: Path, repo: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text(
        "The `add` function returns a sum " + " ".join(["[src/app.py:1-3]"] * 200) + ".\n"
    )
    code, _, stderr = run("eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json")
    assert code == 0, stderr


@pytest.mark.timeout(120)
def test_correct_on_a_5_mb_single_line_report_refuses_in_bounded_time(
    tmp_path: Path, repo: Path
) -> None:
    # one 5 MB line, 1 000 citations that fail (lines 5-7 do not exist): every one would
    # carry the 5 MB line (before the bound: 24 s and exit 0 here; with 20 000 such
    # citations `eval` ran for minutes and reached 16 GB)
    sentence = "The `add` function returns a sum of two numbers [src/app.py:5-7]. "
    filler = "word " * 1000
    report = tmp_path / "r.md"
    report.write_text((filler + sentence) * 1000 + "\n")
    assert report.stat().st_size > 5_000_000
    out = tmp_path / "fixed.md"
    code, stdout, stderr = run(
        "correct", str(report), "--repo", str(repo), "--no-llm", "-o", str(out)
    )
    assert (code, stdout, stderr) == (2, "", carried_error(1000))
    assert not out.exists()
