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
    code, out = run("push", str(path), "--dataset", "d", "--spec", str(spec))
    assert code == 2
    assert out.startswith(f"Error: {spec}: invalid 'guidelines': Field required")


@pytest.mark.parametrize("command", ["push", "pull"])
def test_config_is_the_toml_settings_and_a_yaml_there_says_spec(
    tmp_path: Path, command: str
) -> None:
    """--config means the TOML settings file in every command; the dataset YAML is --spec."""
    path = tmp_path / "x.json"
    path.write_text(EMPTY_EVAL)
    spec = tmp_path / "citation_support.yaml"
    spec.write_text("fields: []\n")
    where = [str(path)] if command == "push" else ["-o", str(tmp_path / "a.parquet")]
    code, out = run(command, *where, "--dataset", "d", "--config", str(spec))
    assert code == 2
    assert out.strip() == (
        f"Error: --config {spec}: a dataset definition is passed as --spec {spec} "
        "(--config takes the TOML settings file)"
    )
    toml = tmp_path / "settings.toml"
    toml.write_text("[argilla]\nbatch_sise = 3\n")
    code, out = run(command, *where, "--dataset", "d", "--config", str(toml))
    assert code == 2
    assert out.strip() == (
        f"Error: {toml}: invalid setting 'argilla.batch_sise': Extra inputs are not permitted"
    )


def test_unknown_spec_name_lists_the_bundled_ones(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(EMPTY_EVAL)
    code, out = run("push", str(path), "--dataset", "d", "--spec", "citation_suport")
    assert code == 2
    assert out.strip() == (
        "Error: annotation spec not found: citation_suport (a YAML file, or a bundled one: "
        "answer_citation, citation_support, citation_support_binary, excerpt_support, "
        "sentence_support)"
    )


def test_pull_output_extension_and_since(tmp_path: Path) -> None:
    code, out = run("pull", "--dataset", "d", "-o", str(tmp_path / "a.xlsx"))
    assert code == 2 and "use .parquet, .csv or .jsonl" in out
    code, out = run("pull", "--dataset", "d", "-o", str(tmp_path / "a.csv"), "--since", "yesterday")
    assert code == 2 and "--since 'yesterday' is not an ISO 8601 time stamp" in out
    assert list(tmp_path.iterdir()) == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", ["push", "pull", "annotators"])
def test_citecal_argilla_port_moves_the_default_server(tmp_path: Path, command: str) -> None:
    """One variable says where the local stack is: the CLI talks to that port, not 6900."""
    port = closed_port()
    eval_json = tmp_path / "e.json"
    eval_json.write_text(EMPTY_EVAL)
    args = {
        "push": ["push", str(eval_json), "--dataset", "d"],
        "pull": ["pull", "--dataset", "d", "-o", str(tmp_path / "a.parquet")],
        "annotators": ["annotators", "list"],
    }[command]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGILLA_")}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "citecal"), *args],
        capture_output=True,
        text=True,
        env={**env, "CITECAL_ARGILLA_PORT": str(port)},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"Error: cannot reach Argilla at http://127.0.0.1:{port} (ARGILLA_API_URL): "
        "ConnectError: start the local stack with `make argilla-up` or set ARGILLA_API_URL "
        "to a running server"
    ]


def test_an_explicit_argilla_api_url_wins_over_the_port() -> None:
    from citecal.config import load_config

    env = {"CITECAL_ARGILLA_PORT": "7123"}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.delenv("ARGILLA_API_URL", raising=False)
        assert load_config().argilla.api_url == "http://127.0.0.1:7123"
        mp.setenv("ARGILLA_API_URL", "http://argilla.example:80")
        assert load_config().argilla.api_url == "http://argilla.example:80"


@pytest.mark.parametrize("value", ["abc", "0", "70000", "69 00"])
def test_a_bad_citecal_argilla_port_is_one_line(value: str) -> None:
    env = {"CITECAL_ARGILLA_PORT": value, "ARGILLA_API_URL": None}
    res = CliRunner().invoke(cli, ["annotators", "list"], env=env)
    code, out = res.exit_code, res.output
    assert code == 2
    assert out.strip() == f"Error: CITECAL_ARGILLA_PORT={value!r} is not a port number (1-65535)"


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


def test_active_needs_a_sample_and_an_eval_json(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(EMPTY_EVAL)
    code, out = run("push", str(path), "--dataset", "d", "--strategy", "active")
    assert (code, out) == (
        2,
        "Error: --strategy active needs --sample N: the labels to spend this round\n",
    )
    batch = tmp_path / "out"
    (batch / "citations.parquet").mkdir(parents=True)  # eval-batch writes a directory of parts
    code, out = run(
        "push", str(batch), "--dataset", "d", "--sample", "5",
        "--strategy", "active",
    )  # fmt: skip
    assert code == 2 and "--strategy active is for eval JSON" in out
    assert len(out.strip().splitlines()) == 1


def test_status_bad_output_format() -> None:
    code, out = run("status", "--dataset", "d", "--format", "xml")
    assert code == 2 and "'xml' is not one of 'table', 'json'" in out
