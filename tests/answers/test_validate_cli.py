"""``citecal validate`` from the command line: output, exit codes, options, the bundled example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from citecal.answers import ValidateResult
from citecal.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "answers.jsonl"
PASSING = {
    "id": "p",
    "answer": "The dome was finished in 1436.",
    "evidence": ["Vasari writes that the dome was finished in 1436."],
    "citations": [
        {
            "source": "Vasari",
            "relevance": 0.9,
            "quote": "the dome was finished in 1436",
            "evidence_idx": 0,
            "alignment_score": 0.9,
            "span_in_answer": "The dome was finished in 1436",
        }
    ],
}


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def test_bundled_example_fails_the_gate_with_reasons() -> None:
    code, out, _ = run("validate", str(EXAMPLE), "-f", "json")
    assert code == 1
    result = ValidateResult.model_validate_json(out)
    assert (result.total_qa, result.valid_qa) == (7, 4)
    by_id = {i.id: i for i in result.items}
    assert by_id["perfect"].citations[0].quality_score == 1.0
    assert by_id["perfect-ko"].gate.status == "PASS"
    assert by_id["hallucinated"].citations[0].quality_score == 0.7
    assert by_id["missing-fields"].citations[0].quality_score == 0.85
    assert by_id["low-quality"].gate.status == "WARN"
    assert by_id["uncited"].gate.reasons == ["no citations"]
    assert result.gate.status == "FAIL"
    assert result.gate.reasons[:2] == [
        "2/6 citations invalid (33% > 30%)",
        "1 hallucinated span(s) not found in the answer",
    ]


def test_table_output_lists_what_did_not_pass(tmp_path: Path) -> None:
    code, out, _ = run("validate", str(EXAMPLE))
    assert code == 1
    assert "│ Valid items             │   4/7 │" in out
    assert "Hallucinated span not found in answer" in out
    assert "Gate: FAIL" in out and "  - 1 item(s) have no citations" in out


def test_exit_codes_pass_warn_and_fail_on_warn(tmp_path: Path) -> None:
    passing = tmp_path / "p.jsonl"
    passing.write_text(json.dumps(PASSING) + "\n")
    assert run("validate", str(passing))[0] == 0
    warning = tmp_path / "w.jsonl"
    low = json.loads(json.dumps(PASSING))
    low["citations"][0]["alignment_score"] = 0.2
    warning.write_text(json.dumps(low) + "\n")
    code, _, err = run("validate", str(warning), "-f", "json", "-o", str(tmp_path / "o.json"))
    assert code == 0
    assert "gate: WARN\n  - average alignment_score 0.20 < 0.40\n" in err
    assert run("validate", str(warning), "--fail-on", "warn")[0] == 1


def test_field_option_reads_other_names(tmp_path: Path) -> None:
    renamed = {
        "id": "r",
        "response": PASSING["answer"],
        "evidence": PASSING["evidence"],
        "refs": PASSING["citations"],
    }
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(renamed) + "\n")
    code, out, _ = run(
        "validate",
        str(path),
        "-f",
        "json",
        "--field",
        "answer=response",
        "--field",
        "citations=refs",
    )
    assert code == 0, out
    assert json.loads(out)["gate"]["status"] == "PASS"
    assert run("validate", str(path), "--field", "answer")[2] == (
        "Error: --field 'answer': expected NAME=KEY, e.g. --field answer=response\n"
    )
    code, _, err = run("validate", str(path), "--field", "reply=x")
    assert code == 2 and err.startswith("Error: --field 'reply=x': unknown field 'reply'")


def test_standard_input_and_strict(tmp_path: Path) -> None:
    code, out, _ = run("validate", "-", "-f", "json", input=json.dumps(PASSING) + "\nbad\n")
    assert code == 0
    assert json.loads(out)["malformed"] == [
        {"line": 2, "item": 2, "error": "invalid JSON: Expecting value"}
    ]
    out_file = tmp_path / "o.json"
    code, _, err = run(
        "validate", "-", "--strict", "-f", "json", "-o", str(out_file), input="bad\n"
    )
    assert (code, err) == (
        2,
        "Error: malformed record at line 1: invalid JSON: Expecting value (--strict)\n",
    )
    assert not out_file.exists() and list(tmp_path.iterdir()) == []  # nothing half-written


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    code, _, err = run("validate", str(tmp_path / "nope.jsonl"))
    assert (code, err) == (2, f"Error: answers file not found: {tmp_path / 'nope.jsonl'}\n")


def test_installed_entry_point(tmp_path: Path) -> None:
    citecal = Path(sys.executable).with_name("citecal")
    proc = subprocess.run(
        [str(citecal), "validate", str(EXAMPLE), "-f", "json", "-o", str(tmp_path / "v.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"wrote {tmp_path / 'v.json'}\ngate: FAIL\n")
