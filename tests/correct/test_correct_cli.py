"""``citecal correct`` and ``eval --correct`` end to end: outputs, bad input, nothing to fix."""

from __future__ import annotations

import codecs
import json
import subprocess
from pathlib import Path

from click.testing import CliRunner
from correct_factories import REPORT

from citecal.cli import cli


def _invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def test_writes_report_and_corrections(shop: Path, shop_report: Path, tmp_path: Path) -> None:
    out, fixes = tmp_path / "fixed.md", tmp_path / "fixes.json"
    r = _invoke(
        "correct", str(shop_report), "--repo", str(shop), "--no-llm",
        "-o", str(out), "--corrections", str(fixes),
    )  # fmt: skip
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    # Without a judge only the structurally invalid citation moves; the others need a judge.
    assert "1 correction(s) in 2 round(s): 1 relocate" in r.output  # type: ignore[attr-defined]
    assert "+The `total_quantity` method sums `self.items` [pkg/cart.py:13-14]." in r.output  # type: ignore[attr-defined]
    assert out.read_text().count("\n") == REPORT.count("\n")
    data = json.loads(fixes.read_text())
    assert data["schema_version"] == 1 and len(data["corrections"]) == 1


def test_bom_is_kept(shop: Path, tmp_path: Path) -> None:
    report = tmp_path / "bom.md"
    report.write_bytes(codecs.BOM_UTF8 + REPORT.encode())
    out = tmp_path / "fixed.md"
    r = _invoke("correct", str(report), "--repo", str(shop), "--no-llm", "-o", str(out))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert out.read_bytes().startswith(codecs.BOM_UTF8 + b"# Shop\n")


def test_dry_run_writes_nothing(shop: Path, shop_report: Path, tmp_path: Path) -> None:
    out, fixes = tmp_path / "fixed.md", tmp_path / "fixes.json"
    r = _invoke(
        "correct", str(shop_report), "--repo", str(shop), "--no-llm", "--dry-run",
        "-o", str(out), "--corrections", str(fixes),
    )  # fmt: skip
    assert r.exit_code == 0
    assert "dry run:" in r.output and "nothing written" in r.output  # type: ignore[attr-defined]
    assert not out.exists() and not fixes.exists()


def test_nothing_to_fix(shop: Path, tmp_path: Path) -> None:
    report = tmp_path / "ok.md"
    report.write_text("The `Cart` class defines `add_item` [pkg/cart.py:4-11].\n")
    out = tmp_path / "fixed.md"
    r = _invoke("correct", str(report), "--repo", str(shop), "--no-llm", "-o", str(out))
    assert r.exit_code == 0
    assert r.output == (  # type: ignore[attr-defined]
        f"nothing to fix: none of the 1 citation(s) in {report} failed; nothing written\n"
    )
    assert not out.exists()


def test_bad_input_is_one_line_and_writes_nothing(
    shop: Path, shop_report: Path, tmp_path: Path
) -> None:
    cases = [
        (
            ["--repo", str(shop), "-o", str(tmp_path / "no" / "x.md")],
            "output directory does not exist",
        ),
        (["--repo", str(shop), "--rev", "v9"], "not a git repository"),
        (["--repo", str(shop), "--max-iterations", "0"], "--max-iterations must be at least 1"),
        (["--repo", str(tmp_path / "none")], "repository not found"),
    ]
    for extra, message in cases:
        r = _invoke("correct", str(shop_report), "--no-llm", *extra)
        assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
        lines = r.output.strip().splitlines()  # type: ignore[attr-defined]
        assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], lines


def test_unknown_revision(shop: Path, shop_report: Path) -> None:
    subprocess.run(["git", "init", "-q", str(shop)], check=True)
    subprocess.run(["git", "-C", str(shop), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(shop), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        check=True,
    )
    r = _invoke("correct", str(shop_report), "--repo", str(shop), "--rev", "v9", "--no-llm")
    assert r.exit_code == 2
    assert r.output.startswith("Error: unknown revision 'v9'")  # type: ignore[attr-defined]
    r = _invoke("correct", str(shop_report), "--repo", str(shop), "--rev", "HEAD", "--no-llm")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]


def test_repository_without_source_files(tmp_path: Path) -> None:
    repo = tmp_path / "docs"
    repo.mkdir()
    (repo / "notes.txt").write_text("nothing here\n")
    report = tmp_path / "r.md"
    report.write_text("The `parse` function reads the notes [src/parse.py:1-3].\n")
    out = tmp_path / "fixed.md"
    r = _invoke("correct", str(report), "--repo", str(repo), "--no-llm", "-o", str(out))
    assert r.exit_code == 2
    assert r.output.startswith(f"Error: no source files in {repo}")  # type: ignore[attr-defined]
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()  # type: ignore[attr-defined]


def test_markdown_and_json_formats(shop: Path, shop_report: Path) -> None:
    args = ["correct", str(shop_report), "--repo", str(shop), "--no-llm", "--no-cascade"]
    r = _invoke(*args, "-f", "markdown")
    assert r.exit_code == 0
    assert "```diff\n" in r.output and "| 1 | relocate | `[pkg/cart.py:40-45]` |" in r.output  # type: ignore[attr-defined]
    r = _invoke(*args, "-f", "json")
    data = json.loads(r.output.split("\nthe corrected report was not saved")[0])  # type: ignore[attr-defined]
    assert data["iterations"] == 2 and data["changed"] is True
    reasons = {left["citation"]: left["reason"] for left in data["remaining"]}
    assert len(reasons) == 3 and all(r.startswith("needs a judge") for r in reasons.values())


def test_eval_correct_is_the_same_thing(shop: Path, shop_report: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    r1 = _invoke("correct", str(shop_report), "--repo", str(shop), "--no-llm", "-o", str(a))
    r2 = _invoke(
        "eval", str(shop_report), "--repo", str(shop), "--no-llm", "--correct", "-o", str(b)
    )
    assert r1.exit_code == r2.exit_code == 0
    assert a.read_text() == b.read_text()
    assert r1.output.replace(str(a), "OUT") == r2.output.replace(str(b), "OUT")  # type: ignore[attr-defined]
    r = _invoke("eval", str(shop_report), "--repo", str(shop), "--corrections", str(tmp_path / "c"))
    assert r.exit_code == 2 and "--corrections needs --correct" in r.output  # type: ignore[attr-defined]


def test_strict_fails_when_citations_remain(shop: Path, shop_report: Path) -> None:
    r = _invoke(
        "correct", str(shop_report), "--repo", str(shop), "--no-llm", "--no-cascade",
        "--max-iterations", "1", "--strict",
    )  # fmt: skip
    assert r.exit_code == 1
    assert "strict: 3 citation(s) still fail" in r.output  # type: ignore[attr-defined]


def test_semantic_ranking_only_reorders_verified_places(
    shop: Path, shop_report: Path, tmp_path: Path
) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    r1 = _invoke("correct", str(shop_report), "--repo", str(shop), "--no-llm", "-o", str(a))
    r2 = _invoke(
        "correct", str(shop_report), "--repo", str(shop), "--no-llm", "--semantic", "-o", str(b)
    )
    assert r1.exit_code == r2.exit_code == 0, r2.output  # type: ignore[attr-defined]
    assert a.read_text() == b.read_text()  # one verified place each: nothing to re-order
