"""``citecal eval`` through the CLI: formats, exit codes, bad input, atomic output."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli

NO_KEY_ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={**NO_KEY_ENV, **(env or {})})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def example_json(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = Path(__file__).resolve().parents[1] / "datasets" / "examples"
    out = tmp_path_factory.mktemp("eval") / "eval.json"
    code, _, err = run(
        "eval",
        str(root / "report.md"),
        "--repo",
        str(root / "shopcart"),
        "--no-llm",
        "--no-cascade",  # the rules' own verdicts (the cascade's are pinned apart)
        "-f",
        "json",
        "-o",
        str(out),
    )
    assert code == 0, err
    return json.loads(out.read_text())


def test_json_schema_fields_match_design(example_json: dict) -> None:
    assert example_json["schema_version"] == 1
    assert set(example_json) >= {
        "schema_version",
        "report",
        "repo",
        "rev",
        "summary",
        "citations",
        "failed_citations",
    }
    assert set(example_json["summary"]) >= {
        "total_citations",
        "valid_citations",
        "validity_rate",
        "extractive_checked",
        "extractive_supports",
        "extractive_precision",
        "abstractive_checked",
        "abstractive_supports",
        "abstractive_precision",
        "overall_precision",
        "unverified",
        "total_claims",
        "cited_claims",
        "coverage",
        "llm_calls",
        "llm_tokens",
        "cost_usd",
    }
    row = example_json["citations"][0]
    assert set(row) >= {
        "id",
        "citation",
        "file_path",
        "start_line",
        "end_line",
        "claim",
        "section",
        "paragraph_index",
        "position",
        "valid",
        "error",
        "failure_type",
        "mode",
        "verdict",
        "method",
        "confidence",
        "score",
        "reasoning",
        "matched_terms",
        "missing_terms",
        "suggested_action",
        "model",
        "prompt_version",
    }


def by_citation(data: dict, citation: str) -> dict:
    rows = [r for r in data["citations"] if r["citation"] == citation]
    assert rows, f"{citation} not extracted"
    return rows[0]


def test_example_covers_every_outcome(example_json: dict) -> None:
    s = example_json["summary"]
    assert s["total_citations"] >= 30
    missing = by_citation(example_json, "[shopcart/passwords.py:1-20]")
    assert (missing["valid"], missing["failure_type"]) == (False, "invalid_file")
    assert missing["verdict"] is None
    out_of_range = by_citation(example_json, "[shopcart/pricing.py:40-52]")
    assert out_of_range["failure_type"] == "invalid_range"
    reversed_range = by_citation(example_json, "[shopcart/storage.py:35-22]")
    assert reversed_range["failure_type"] == "invalid_range"
    assert "before start" in reversed_range["error"]
    binary = by_citation(example_json, "[web/public/logo.png:1-3]")
    assert binary["failure_type"] == "invalid_file" and "binary" in binary["error"].lower()
    verdicts = {r["verdict"] for r in example_json["citations"]}
    assert verdicts == {"supports", "not_supports", "unverified", None}  # rules never guess
    modes = {r["mode"] for r in example_json["citations"]}
    assert {"extractive", "abstractive"} <= modes
    supported = by_citation(example_json, "[shopcart/cart.py:16-19]")
    assert supported["verdict"] == "supports" and supported["method"] == "extractive"
    wrong_symbol = by_citation(example_json, "[shopcart/cart.py:26-43]")
    assert wrong_symbol["verdict"] == "not_supports"
    assert "validate_sku" in wrong_symbol["missing_terms"]
    assert s["unverified"] >= 1 and example_json["warnings"]
    assert s["llm_calls"] == 0
    assert s["undecided"] == s["unverified"]
    assert s["decided"] + s["undecided"] == s["total_citations"]
    assert s["decision_coverage"] == pytest.approx(s["decided"] / s["total_citations"])
    supports = sum(r["verdict"] == "supports" for r in example_json["citations"])
    assert s["decided_precision"] == pytest.approx(supports / s["decided"])


def test_rates_consistent_with_rows(example_json: dict) -> None:
    s, rows = example_json["summary"], example_json["citations"]
    valid = [r for r in rows if r["valid"]]
    assert s["valid_citations"] == len(valid)
    assert s["validity_rate"] == pytest.approx(len(valid) / len(rows))
    assert len(example_json["failed_citations"]) == sum(r["failure_type"] is not None for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


def test_ids_stable_across_runs(
    example_json: dict, example_report: Path, example_repo: Path
) -> None:
    code, out, _ = run(
        "eval", str(example_report), "--repo", str(example_repo), "--no-llm", "-f", "json"
    )
    assert code == 0
    again = json.loads(out)
    assert [r["id"] for r in again["citations"]] == [r["id"] for r in example_json["citations"]]


def test_table_output_shows_summary_and_failures(example_report: Path, example_repo: Path) -> None:
    code, out, _ = run("eval", str(example_report), "--repo", str(example_repo), "--no-llm")
    assert code == 0
    assert "Valid" in out and "Failed citations" in out
    failed_part = out.split("Failed citations", 1)[1]
    assert "[shopcart/passwords.py:1-20]" in failed_part and "File not found" in failed_part
    assert "[web/public/logo.png:1-3]" in failed_part and "remove_citation" in failed_part


def test_markdown_output(example_report: Path, example_repo: Path) -> None:
    code, out, _ = run(
        "eval", str(example_report), "--repo", str(example_repo), "--no-llm", "-f", "markdown"
    )
    assert code == 0
    assert out.startswith("## citecal:")
    assert "| metric | value |" in out and "### Failed citations" in out


def test_strict_exits_1_when_a_citation_failed(example_report: Path, example_repo: Path) -> None:
    code, _, _ = run(
        "eval",
        str(example_report),
        "--repo",
        str(example_repo),
        "--no-llm",
        "--strict",
        "-f",
        "json",
    )
    assert code == 1


def test_strict_exits_0_for_a_clean_report(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo({"a.py": "def load_config(path):\n    return open(path).read()\n"})
    report = tmp_path / "r.md"
    report.write_text("The `load_config` function takes `path` [a.py:1-2].\n")
    code, out, err = run(
        "eval", str(report), "--repo", str(repo), "--no-llm", "--no-cascade", "--strict", "-f",
        "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["summary"]["overall_precision"] == 1.0 and data["failed_citations"] == []
    assert data["summary"]["unverified"] == 0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("The `load_config` function reads the file [a.py:1-2].\n", "1 citation(s) are unverified"),
        ("The `save_config` function writes `settings` [a.py:1-2].\n", "1 citation(s) failed"),
        ("No citations here at all.\n", "the report has no citations"),
    ],
)
def test_strict_fails_on_unverified_failed_or_no_citations(
    text: str, reason: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "def load_config(path):\n    return open(path).read()\n"})
    report = tmp_path / "r.md"
    report.write_text(text)
    code, _, err = run(
        "eval", str(report), "--repo", str(repo), "--no-llm", "--no-cascade", "--strict"
    )
    assert code == 1
    assert f"strict: {reason}" in err
    lax, _, _ = run("eval", str(report), "--repo", str(repo), "--no-llm")
    assert lax == 0


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "report not found"),
        ("directory", "is a directory"),
        ("latin1", "not valid UTF-8"),
    ],
)
def test_bad_report_is_one_line_exit_2(
    setup: str, message: str, tmp_path: Path, example_repo: Path
) -> None:
    report = tmp_path / "report.md"
    if setup == "directory":
        report.mkdir()
    elif setup == "latin1":
        report.write_bytes("Caf\xe9 cr\xe8me [a.py:1]".encode("latin-1"))
    out_file = tmp_path / "out.json"
    code, _, err = run(
        "eval",
        str(report),
        "--repo",
        str(example_repo),
        "--no-llm",
        "-o",
        str(out_file),
        "-f",
        "json",
    )
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out_file.exists()


def test_empty_report_has_null_rates(tmp_path: Path, example_repo: Path) -> None:
    report = tmp_path / "empty.md"
    report.write_text("")
    code, out, _ = run("eval", str(report), "--repo", str(example_repo), "--no-llm", "-f", "json")
    assert code == 0
    s = json.loads(out)["summary"]
    assert s["total_citations"] == 0 and s["validity_rate"] is None and s["coverage"] is None


def test_missing_repo_is_exit_2(example_report: Path, tmp_path: Path) -> None:
    code, _, err = run("eval", str(example_report), "--repo", str(tmp_path / "nope"), "--no-llm")
    assert code == 2 and "Traceback" not in err and str(tmp_path / "nope") in err


def test_unknown_rev_is_exit_2(example_report: Path, tmp_path: Path) -> None:
    repo = tmp_path / "g"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.py").write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    code, _, err = run(
        "eval", str(example_report), "--repo", str(repo), "--rev", "no-such-rev", "--no-llm"
    )
    assert code == 2 and "no-such-rev" in err and "Traceback" not in err


def test_rev_reads_files_at_that_revision(tmp_path: Path) -> None:
    repo = tmp_path / "g"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "m.py").write_text("def old_name():\n    return 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (repo / "m.py").write_text("def new_name():\n    return 2\n")
    report = tmp_path / "r.md"
    report.write_text("The `old_name` function returns 1 [m.py:1-2].\n")
    code, out, err = run(
        "eval", str(report), "--repo", str(repo), "--rev", "HEAD", "--no-llm", "--no-cascade",
        "-f", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["rev"] == "HEAD" and data["citations"][0]["verdict"] == "supports"
    code, out, _ = run(
        "eval", str(report), "--repo", str(repo), "--no-llm", "--no-cascade", "-f", "json"
    )
    assert json.loads(out)["citations"][0]["verdict"] == "not_supports"  # old_name is gone


def test_bad_config_is_exit_2(example_report: Path, example_repo: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[extractive]\nsupports_threshold = 'high'\n")
    code, _, err = run(
        "eval", str(example_report), "--repo", str(example_repo), "--config", str(cfg), "--no-llm"
    )
    assert code == 2 and "extractive.supports_threshold" in err


def test_config_threshold_changes_outcome(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    # Unknown claims decided by term coverage (default_unknown_handling = extractive, the
    # user's choice: a repository may not move claims away from the judge): the thresholds
    # decide, and the repository may raise them (docs/explanation/security.md).
    # The claim has no indicator ("splits" is no abstractive word).
    repo = make_repo(
        {
            "a.py": "def parse_header(line):\n    return line.split(':')\n\n\n"
            "def strip_whitespace(text):\n    return text.strip()\n",
            "citecal.toml": "[extractive]\nsupports_threshold = 0.99\npartial_threshold = 0.95\n",
        }
    )
    mine = tmp_path / "mine.toml"
    mine.write_text("[classify]\ndefault_unknown_handling = 'extractive'\n")
    report = tmp_path / "r.md"
    report.write_text("Header lines lose their whitespace in parse_header [a.py:1-2].\n")
    args = ["eval", str(report), "--repo", str(repo), "--no-llm", "--no-cascade", "-f", "json"]
    _, out, _ = run(*args, "--config", str(mine))
    row = json.loads(out)["citations"][0]
    assert row["mode"] == "unknown" and row["verdict"] == "not_supports"
    (repo / "citecal.toml").unlink()
    _, out, _ = run(*args, "--config", str(mine))
    assert json.loads(out)["citations"][0]["verdict"] == "partial"  # default thresholds
    _, out, _ = run(*args)
    assert json.loads(out)["citations"][0]["verdict"] == "unverified"  # default: the judge


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_output_file_is_not_left_half_written(
    example_report: Path, example_repo: Path, tmp_path: Path
) -> None:
    """A write that fails half-way leaves the old file whole, no part file, one line.

    The file-size limit (RLIMIT_FSIZE) makes the kernel stop ``citecal eval``
    after 4 096 bytes of its 60 kB JSON (EFBIG), like a full disk: a real
    interrupted write, not an error before anything is written.
    """
    out_file = tmp_path / "eval.json"
    out_file.write_text("previous")
    exe = Path(sys.executable).parent / "citecal"
    args = [str(exe), "eval", str(example_report), "--repo", str(example_repo), "--no-llm",
            "-f", "json", "-o", str(out_file)]  # fmt: skip
    env = {**os.environ, **NO_KEY_ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        args, env=env, capture_output=True, text=True, preexec_fn=_limit_file_size(4096),
        check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"Error: cannot write {out_file}: File too large"
    assert "Traceback" not in proc.stderr
    assert out_file.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["eval.json"]
    proc = subprocess.run(args, env=env, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert len(out_file.read_bytes()) > 4096 * 10
    assert json.loads(out_file.read_text())["summary"]["total_citations"] == 44


def test_installed_entry_point_runs(example_report: Path, example_repo: Path) -> None:
    exe = shutil.which("citecal", path=str(Path(sys.executable).parent)) or shutil.which("citecal")
    assert exe, "citecal console script is not installed"
    env = {**os.environ, **NO_KEY_ENV}
    proc = subprocess.run(
        [exe, "eval", str(example_report), "--repo", str(example_repo), "--no-llm", "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["total_citations"] >= 30
    proc = subprocess.run(
        [exe, "eval", "/nonexistent.md"], capture_output=True, text=True, env=env, check=False
    )
    assert (
        proc.returncode == 2
        and proc.stderr.startswith("Error: ")
        and "Traceback" not in proc.stderr
    )
