"""Line numbers are ASCII digits, bounded everywhere; rebase says why a file cannot be cited.

Python's ``\\d`` and ``int()`` accept every Unicode decimal digit: ``[a.py:١-٣]``
(Arabic-Indic) and ``[a.py:１-３]`` (fullwidth) read as lines 1-3 of a file, a
citation nobody wrote in the digits a reader sees. A number of more than 18
digits is ``invalid_range`` in eval, in the label sets of ``bench`` and in a
corrections file given to ``push``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.bench._labels import CitationLabel
from citecal.cli import cli
from citecal.correct import rebase_report
from citecal.correct._annotate import read_corrections
from citecal.errors import InputError
from citecal.extract import extract_citations
from citecal.models import LINE_NUMBER_OVERFLOW

CODE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.mark.parametrize(
    "written",
    ["١-٣", "۱-۳", "１-３", "1-３", "߁-߃", "L١"],
    ids=["arabic-indic", "extended-arabic-indic", "fullwidth", "mixed", "nko", "L-prefix"],
)
def test_only_ascii_digits_are_line_numbers(written: str) -> None:
    text = f"The `add` function returns a sum [src/app.py:{written}].\n"
    assert [e.citation for e in extract_citations(text)] == []


def test_ascii_line_numbers_still_are() -> None:
    text = "The `add` function returns a sum [src/app.py:1-3].\n"
    assert [(e.citation.start_line, e.citation.end_line) for e in extract_citations(text)] == [
        (1, 3)
    ]


def test_eval_does_not_read_unicode_digits_as_lines(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src/app.py").write_text(CODE)
    report = tmp_path / "r.md"
    report.write_text("The `add` function returns a sum [src/app.py:١-٢].\n")
    result = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json"]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["citations"] == []
    assert data["uncited_claims"] == ["The `add` function returns a sum [src/app.py:١-٢]"]


def test_a_label_with_twenty_digits_finds_the_invalid_range_row() -> None:
    """The label's key and eval's row agree: both hold the overflow marker."""
    label = CitationLabel(
        id="c1",
        citation="[src/app.py:1-99999999999999999999]",
        claim="x",
        structural="invalid_range",
        human_score=0,
        category="past_end",
        difficulty="easy",
        rationale="r",
    )
    assert label.key == ("src/app.py", 1, LINE_NUMBER_OVERFLOW, 0)
    unicode = label.model_copy(update={"citation": "[src/app.py:١-٣]"})
    with pytest.raises(ValueError, match="not a line citation"):
        _ = unicode.key


def _corrections(tmp_path: Path, new: dict[str, object]) -> Path:
    path = tmp_path / "corrections.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "report": "r.md",
                "iterations": 1,
                "corrections": [
                    {
                        "position": 10,
                        "original": {"file_path": "src/app.py", "start_line": 1, "end_line": 9},
                        "strategy": "relocate",
                        "new": new,
                        "new_claim": None,
                        "evidence": {"claim": "c", "method": "extractive", "reasoning": "r"},
                        "verdict_before": "invalid_range",
                        "verdict_after": "supports",
                        "iteration": 1,
                    }
                ],
            }
        )
    )
    return path


@pytest.mark.parametrize(
    ("start", "end"),
    [(1, 99999999999999999999), (10**18, 10**18), (0, 2), (5, 3)],
    ids=["twenty-digits", "overflow-marker", "zero", "end-before-start"],
)
def test_a_corrections_file_with_an_impossible_range_is_invalid_range(
    tmp_path: Path, start: int, end: int
) -> None:
    path = _corrections(tmp_path, {"file_path": "src/app.py", "start_line": start, "end_line": end})
    bad = r"correction 1 proposes lines no file has .*invalid_range"
    with pytest.raises(InputError, match=bad):
        read_corrections(path)


# --------------------------------------------------------------------------- rebase


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )


def test_rebase_says_why_a_file_cannot_be_cited_at_to(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    for name in ("bin.py", "link.py", "gone.py"):
        (repo / "src" / name).write_text(CODE)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    (repo / "src/bin.py").write_bytes(b"\x00\x01binary now\x00" * 50)
    (repo / "src/link.py").unlink()
    (repo / "src/link.py").symlink_to("../../outside.py")
    (repo / "src/gone.py").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    report = (
        "The `add` function adds [src/bin.py:1-2].\n\n"
        "The `add` function adds [src/link.py:1-2].\n\n"
        "The `add` function adds [src/gone.py:1-2].\n"
    )
    run = rebase_report(report, repo, "HEAD~1", "HEAD")
    got = {c.citation: (c.outcome, c.how) for c in run.result.citations}
    assert got == {
        "[src/bin.py:1-2]": ("deleted", "the file became binary"),
        "[src/link.py:1-2]": ("deleted", "the file is now a symlink out of the repository"),
        "[src/gone.py:1-2]": ("deleted", "the file was deleted"),
    }
