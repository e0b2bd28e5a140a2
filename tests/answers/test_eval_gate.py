"""``citecal eval --gate``: the seed 003 gate rules on a code report's evaluation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from citecal.answers import eval_gate
from citecal.cli import cli
from citecal.config import Config, GateConfig
from citecal.models import EvalResult
from citecal.pipeline import evaluate_report
from citecal.source import open_store

CODE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def evaluate(repo: Path, report: str) -> EvalResult:
    return evaluate_report(report, open_store(repo), Config(), no_judge_reason="--no-llm")


def test_no_citations_fails(make_repo: Callable[[dict[str, str | bytes]], Path]) -> None:
    result = evaluate(make_repo({"m.py": CODE}), "The module adds numbers together nicely.\n")
    assert eval_gate(result, GateConfig()).model_dump() == {
        "status": "FAIL",
        "reasons": ["no citations"],
    }


def test_hallucinated_paths_and_invalid_share_fail(
    make_repo: Callable[[dict[str, str | bytes]], Path],
) -> None:
    report = (
        "The `add` function is defined here [m.py:1-2].\n\n"
        "The `mul` function is defined here [calc.py:1-2].\n\n"
        "The `div` function is defined here [m.py:40-41].\n"
    )
    result = evaluate(make_repo({"m.py": CODE}), report)
    gate = eval_gate(result, GateConfig())
    assert gate.status == "FAIL"
    assert gate.reasons[:2] == [
        "2/3 citations invalid (67% > 30%)",
        "1 cited file(s) do not exist (hallucinated paths): calc.py",
    ]
    relaxed = eval_gate(result, GateConfig(max_invalid_rate=0.9, fail_on_missing_files=False))
    assert relaxed.status == "PASS", relaxed


def test_precision_and_coverage_warn(make_repo: Callable[[dict[str, str | bytes]], Path]) -> None:
    report = (
        "The `add` function is defined here [m.py:1-2].\n\n"
        "The `sub` function is defined here [m.py:1-2].\n\n"
        "The module has no tests and nobody maintains it any more.\n\n"
        "It was written in a single afternoon by one person.\n\n"
        "Nobody remembers why it exists at all today.\n"
    )
    result = evaluate(make_repo({"m.py": CODE}), report)
    gate = eval_gate(result, GateConfig())
    assert result.summary.overall_precision == 0.5 and result.summary.coverage == 0.4
    assert gate.model_dump() == {
        "status": "WARN",
        "reasons": ["precision 50% < 70%", "claim coverage 40% < 50%"],
    }
    assert eval_gate(result, GateConfig(min_precision=0.5, min_coverage=0.4)).status == "PASS"


def test_cli_gate_exit_codes_and_output(example_report: Path, example_repo: Path) -> None:
    runner = CliRunner()
    args = ["eval", str(example_report), "--repo", str(example_repo), "--no-llm", "--no-cascade"]
    plain = runner.invoke(cli, args)
    assert plain.exit_code == 0 and "Gate:" not in plain.stdout
    gated = runner.invoke(cli, [*args, "--gate"])
    assert gated.exit_code == 1
    assert gated.stdout.endswith(
        "Gate: FAIL\n"
        "  - 1 cited file(s) do not exist (hallucinated paths): shopcart/passwords.py\n"
        "  - precision 20% < 70%\n"
    )
    as_json = runner.invoke(cli, [*args, "--gate", "-f", "json"])
    assert EvalResult.model_validate_json(as_json.stdout).gate is not None
    assert "gate: FAIL\n" in as_json.stderr


def test_cli_fail_on_warn(
    tmp_path: Path, make_repo: Callable[[dict[str, str | bytes]], Path]
) -> None:
    repo = make_repo({"m.py": CODE})
    report = tmp_path / "r.md"
    report.write_text(
        "The `add` function is defined here [m.py:1-2].\n\n"
        "The `sub` function is defined here [m.py:1-2].\n"
    )
    args = ["eval", str(report), "--repo", str(repo), "--no-llm", "--gate"]
    warned = CliRunner().invoke(cli, args)
    assert warned.exit_code == 0 and "Gate: WARN" in warned.stdout
    assert CliRunner().invoke(cli, [*args, "--fail-on", "warn"]).exit_code == 1
