"""push/pull command-line errors that need no server: one line, exit code 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli

EMPTY_EVAL = (
    '{"report": "r.md", "repo": ".", "summary": {"total_citations": 0, "valid_citations": 0,'
    ' "validity_rate": null, "extractive_checked": 0, "extractive_supports": 0,'
    ' "extractive_precision": null, "abstractive_checked": 0, "abstractive_supports": 0,'
    ' "abstractive_precision": null, "overall_precision": null, "unverified": 0,'
    ' "total_claims": 0, "cited_claims": 0, "coverage": null},'
    ' "citations": [], "failed_citations": []}'
)


def run(*args: str, **env: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), env=env or None)
    return res.exit_code, res.output


def test_push_missing_eval_json(tmp_path: Path) -> None:
    code, out = run("push", str(tmp_path / "none.json"), "--dataset", "d")
    assert code == 2
    assert out.strip() == f"Error: evaluation JSON not found: {tmp_path / 'none.json'}"


def test_push_not_an_evaluation(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"citations": 3}')
    code, out = run("push", str(path), "--dataset", "d")
    assert code == 2 and "is not a `citecal eval --format json` output" in out
    assert len(out.strip().splitlines()) == 1


def test_push_bad_annotation_config(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(EMPTY_EVAL)
    spec = tmp_path / "spec.yaml"
    spec.write_text("fields: []\n")
    code, out = run("push", str(path), "--dataset", "d", "--config", str(spec))
    assert code == 2
    assert out.startswith(f"Error: {spec}: invalid 'guidelines': Field required")


def test_pull_output_extension_and_since(tmp_path: Path) -> None:
    code, out = run("pull", "--dataset", "d", "-o", str(tmp_path / "a.xlsx"))
    assert code == 2 and "use .parquet, .csv or .jsonl" in out
    code, out = run("pull", "--dataset", "d", "-o", str(tmp_path / "a.csv"), "--since", "yesterday")
    assert code == 2 and "--since 'yesterday' is not an ISO 8601 time stamp" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["push", "pull"])
def test_installed_entry_point_reports_a_closed_port_in_one_line(
    tmp_path: Path, command: str
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    eval_json = tmp_path / "e.json"
    eval_json.write_text(EMPTY_EVAL)
    args = (
        ["push", str(eval_json), "--dataset", "d"]
        if command == "push"
        else ["pull", "--dataset", "d", "-o", str(tmp_path / "a.parquet")]
    )
    exe = Path(sys.executable).parent / "citecal"
    proc = subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "ARGILLA_API_URL": url, "ARGILLA_API_KEY": "k"},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"Error: cannot reach Argilla at {url} (ARGILLA_API_URL): ConnectError: start the local "
        "stack with `make argilla-up` or set ARGILLA_API_URL to a running server"
    ]
