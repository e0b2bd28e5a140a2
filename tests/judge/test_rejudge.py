"""``citecal rejudge`` against the real local OpenAI-compatible server, and its parsers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from citecal.calibrate import mine_few_shot
from citecal.cli import cli
from citecal.errors import InputError
from citecal.testing import FakeOpenAIServer
from citecal.verify.judge import JudgeRequest, rejudge_requests

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "annotations" / "annotations.parquet"
LINES = [
    "import os",
    "",
    "def load(path):",
    "    with open(path) as fh:",
    "        return fh.read()",
    "",
    "X = 1",
]


def test_requests_come_from_the_raw_columns_not_from_markdown() -> None:
    """The judge sees the raw cited lines, their numbers and context as pull wrote them."""
    row = {
        "record_id": "r1",
        "claim": "load reads a file",
        "citation": "[a.py:3-5]",
        "cited_code": "\n".join(LINES[2:5]),
        "start_line": 3,
        "end_line": 5,
        "context_before": "import os\n",
        "context_after": "\nX = 1",
        "file_path": "a.py",
        "language": "python",
    }
    (request,) = rejudge_requests(pd.DataFrame([row]))
    assert request == JudgeRequest("r1", "load reads a file", "[a.py:3-5]", "a.py", "python",
                                   3, 5, "\n".join(LINES[2:5]), before="import os\n",
                                   after="\nX = 1")  # fmt: skip


def test_another_tools_table_gives_lines_in_the_citation() -> None:
    row = {"record_id": "r1", "claim": "c", "citation": "[a.py:3-5]", "cited_code": "x = 1"}
    (request,) = rejudge_requests(pd.DataFrame([row]))
    assert (request.start_line, request.end_line, request.code) == (3, 5, "x = 1")
    assert (request.file_path, request.language, request.before) == ("a.py", "python", "")


def test_rows_pulled_from_an_older_push_are_refused_with_the_remedy() -> None:
    row = {"record_id": "r1", "claim": "c", "citation": "[a.py:3-5]",
           "cited_code": "`a.py`, lines 3–5\n\n```python\n▶ 3  x\n```",
           "response_inserted_at": "2026-11-22T10:00:00+00:00"}  # fmt: skip
    with pytest.raises(InputError, match=r"1 record\(s\) \(first: r1\) were pulled .* Push the"):
        rejudge_requests(pd.DataFrame([row]))


def test_requests_from_the_bundled_table() -> None:
    table = pd.read_parquet(DATASET)
    requests = rejudge_requests(table)
    assert len(requests) == table["record_id"].nunique()
    first = requests[0]
    row = table.iloc[0]
    assert first.claim == row["claim"] and first.citation == row["citation"]
    assert first.code == row["cited_code"] and first.start_line == row["start_line"]
    assert row["file_path"] == first.file_path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("CITECAL_CACHE_PATH", str(tmp_path / "cache.sqlite3"))
        monkeypatch.setenv("CITECAL_ESCALATION_MODEL", "")
        yield srv


def _subset(tmp_path: Path, reports: set[str], name: str) -> Path:
    table = pd.read_parquet(DATASET)
    path = tmp_path / name
    table[table["report_id"].isin(reports)].to_parquet(path)
    return path


@pytest.mark.integration
def test_rejudge_keeps_humans_and_uses_the_cache(server: FakeOpenAIServer, tmp_path: Path) -> None:
    source = _subset(tmp_path, {"report-01", "report-02"}, "a.parquet")
    prompt = tmp_path / "v2.md"
    v1 = resources.files("citecal.verify.judge").joinpath("prompts", "judge", "v1.md")
    prompt.write_text(v1.read_text() + "\n<!-- v2: same text -->\n")
    out = tmp_path / "b.csv"
    runner = CliRunner()
    result = runner.invoke(cli, ["rejudge", str(source), "--prompt", str(prompt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "rejudged" in result.stdout and "wrote" in result.stdout
    calls = server.calls
    assert calls > 0
    a, b = pd.read_parquet(source), pd.read_csv(out)
    assert len(a) == len(b)
    keep = ["record_id", "annotator", "human_score", "report_id", "claim"]
    pd.testing.assert_frame_equal(
        a[keep].reset_index(drop=True), b[keep].astype({"record_id": str}), check_dtype=False
    )
    assert b["prompt_version"].str.startswith("v2@").all()
    assert set(a["prompt_version"].str[:3]) == {"v1@"}
    # The heuristic model ignores the prompt: same verdicts as the bundled v1 run.
    assert (a["llm_verdict"].to_numpy() == b["llm_verdict"].to_numpy()).all()
    again = runner.invoke(cli, ["rejudge", str(source), "--prompt", str(prompt), "-o", str(out)])
    assert again.exit_code == 0
    assert server.calls == calls, "second run must be served from the cache"
    assert "0 API call(s)" in again.stdout
    compared = runner.invoke(cli, ["calibrate", str(source), "--compare", str(out), "-f", "json"])
    assert compared.exit_code == 0
    comp = json.loads(compared.stdout)["compare"]
    assert comp["flipped"] == [] and comp["mcnemar_p"] == 1.0
    assert comp["significantly_worse"] is False


@pytest.mark.integration
def test_few_shot_excludes_evaluated_reports(server: FakeOpenAIServer, tmp_path: Path) -> None:
    evaluated = _subset(tmp_path, {"report-01", "report-02"}, "eval.parquet")
    out = tmp_path / "fs.parquet"
    result = CliRunner().invoke(
        cli,
        ["rejudge", str(evaluated), "--prompt", "v1", "--few-shot-from", str(DATASET),
         "--split-by", "report", "--examples", "4", "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "few-shot: 4 example(s)" in result.stderr
    assert "left out to avoid leakage: report-01, report-02" in result.stderr
    system = server.requests[0].system
    assert "Worked examples from human review" in system
    full = pd.read_parquet(DATASET)
    evaluated_claims = set(full[full["report_id"].isin({"report-01", "report-02"})]["claim"])
    other_claims = set(full[~full["report_id"].isin({"report-01", "report-02"})]["claim"])
    shown = [c for c in other_claims if f'Claim: "{c}"' in system]
    assert len(shown) == 4
    assert not [c for c in evaluated_claims - other_claims if f'Claim: "{c}"' in system]
    versions = set(pd.read_parquet(out)["prompt_version"])
    assert len(versions) == 1 and next(iter(versions)).startswith("v1+fewshot")


def test_mine_few_shot_alternates_false_positives_and_negatives() -> None:
    full = pd.read_parquet(DATASET)
    few = mine_few_shot(full, full[full["report_id"] == "report-03"], k=4)
    assert few.n_examples == 4 and few.excluded_reports == ("report-03",)
    assert few.text.count("annotators: SUPPORTED") == 2
    assert few.text.count("annotators: NOT SUPPORTED") == 2


def test_judge_unavailable_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.invalid/v1")
    result = CliRunner().invoke(
        cli, ["rejudge", str(DATASET), "--prompt", "v1", "-o", str(tmp_path / "x.parquet")]
    )
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "x.parquet").exists()


def test_rejudge_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["rejudge", str(tmp_path / "no.parquet"), "--prompt", "v1",
                                  "-o", str(tmp_path / "o.parquet")])  # fmt: skip
    assert missing.exit_code == 2 and "not found" in missing.stderr
    bad_prompt = runner.invoke(cli, ["rejudge", str(DATASET), "--prompt", "v99",
                                     "-o", str(tmp_path / "o.parquet")])  # fmt: skip
    assert bad_prompt.exit_code == 2 and "unknown prompt version" in bad_prompt.stderr


def test_dry_run_estimates_like_eval_and_sends_nothing(tmp_path: Path) -> None:
    out = tmp_path / "never.parquet"
    res = CliRunner().invoke(
        cli, ["rejudge", str(DATASET), "--prompt", "v1", "--dry-run", "--no-cache", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    n = pd.read_parquet(DATASET)["record_id"].nunique()
    assert res.output.startswith(f"dry run: {n} records would go to the judge (")
    assert res.output.rstrip().endswith("nothing was sent")
    assert not out.exists()


def _tokens_in(line: str) -> int:
    """The ``~N in`` figure of a dry-run line."""
    return int(line.split("~")[2].split(" in")[0])


def test_dry_run_with_a_missing_few_shot_table_fails_like_the_real_run(tmp_path: Path) -> None:
    missing = tmp_path / "missing.parquet"
    for extra in (["--dry-run"], ["-o", str(tmp_path / "out.parquet")]):
        res = CliRunner().invoke(
            cli,
            ["rejudge", str(DATASET), "--prompt", "v1", "--few-shot-from", str(missing), *extra],
        )
        assert (res.exit_code, res.stdout) == (2, "")
        assert res.stderr == f"Error: annotation table not found: {missing}\n"
    assert list(tmp_path.iterdir()) == []


def test_dry_run_counts_the_few_shot_examples_tokens(tmp_path: Path) -> None:
    evaluated = _subset(tmp_path, {"report-01", "report-02"}, "eval.parquet")
    plain = CliRunner().invoke(
        cli, ["rejudge", str(evaluated), "--prompt", "v1", "--dry-run", "--no-cache"]
    )
    few = CliRunner().invoke(
        cli,
        ["rejudge", str(evaluated), "--prompt", "v1", "--dry-run", "--no-cache",
         "--few-shot-from", str(DATASET), "--examples", "4"],
    )  # fmt: skip
    assert plain.exit_code == few.exit_code == 0, few.output
    assert "few-shot: 4 example(s)" in few.stderr
    # every call carries the examples in its system prompt
    assert _tokens_in(few.stdout) > _tokens_in(plain.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.parquet"]


@pytest.fixture
def realistic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeOpenAIServer]:
    """The realistic test judge, its truth people's consensus in the bundled table."""
    from citecal.annotations import read_table
    from citecal.testing.realistic_judge import RealisticJudge

    judge = RealisticJudge.from_table(read_table(DATASET), seed=1)
    with FakeOpenAIServer(mode="realistic", realistic=judge) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("CITECAL_CACHE_PATH", str(tmp_path / "cache.sqlite3"))
        monkeypatch.setenv("CITECAL_ESCALATION_MODEL", "")
        yield srv


def test_repeats_report_stability_per_claim_and_overall(
    realistic: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "rep.parquet"
    args = ["rejudge", str(DATASET), "--prompt", "v3", "--repeats", "5", "-o", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "rejudged 86 record(s) × 5 repeats" in r.output
    table = pd.read_parquet(out)
    per_record = table.drop_duplicates("record_id").set_index("record_id")["judge_stability"]
    unstable = per_record[per_record < 1]
    flip = len(unstable) / len(per_record)
    assert f"{len(per_record) - len(unstable)} stable (every repeat agrees)" in r.output
    assert f"flip rate {flip:.1%}" in r.output
    for rid, share in unstable.items():  # each unstable claim is listed with its stability
        assert any(
            str(rid)[:12] in line and f"{share:.0%}" in line for line in r.output.splitlines()
        )
    assert set(table["judge_repeats"]) == {5}
    # The five repeats are cached apart: a second run asks nothing.
    calls = realistic.calls
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and realistic.calls == calls
    assert f"flip rate {flip:.1%}" in again.output


def test_rejudge_with_a_numeric_confidence_writes_its_columns(
    realistic: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "lp.parquet"
    r = CliRunner().invoke(
        cli, ["rejudge", str(DATASET), "--prompt", "v3", "--confidence", "logprob", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    table = pd.read_parquet(out)
    assert set(table["confidence_source"]) == {"logprob"}
    values = table["confidence_value"]
    assert values.between(0, 1).all() and values.nunique() > 10
    assert (values >= 0.5).mean() > 0.9  # below 0.5 only where a near-tie was sampled the other way
    # The support score agrees with the numeric confidence (estimate and sampling use it).
    supports = table["llm_verdict"] == "supports"
    implied = values.where(supports, 1 - values)
    assert (table["llm_score"] - implied).abs().max() < 1e-9


def test_simulated_annotators_never_come_from_the_reports_being_rejudged(
    realistic: FakeOpenAIServer, tmp_path: Path
) -> None:
    r = CliRunner().invoke(
        cli,
        ["rejudge", str(DATASET), "--prompt", "v3", "--confidence", "simulated",
         "--simulated-from", str(DATASET), "-o", str(tmp_path / "s.parquet")],
    )  # fmt: skip
    assert r.exit_code == 2
    assert "no labelled example is left for the simulated annotators" in r.output
    assert realistic.calls == 0
    table = pd.read_parquet(DATASET)
    early = table[table["report_id"].isin(["report-01", "report-02", "report-03", "report-04"])]
    late = table[~table["report_id"].isin(early["report_id"])]
    early.to_parquet(tmp_path / "early.parquet")
    late.to_parquet(tmp_path / "late.parquet")
    out = tmp_path / "sim.parquet"
    r = CliRunner().invoke(
        cli,
        ["rejudge", str(tmp_path / "late.parquet"), "--prompt", "v3", "--confidence",
         "simulated", "--samples", "3", "--simulated-from", str(tmp_path / "early.parquet"),
         "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    systems = {req.system for req in realistic.requests}
    assert len(systems) == 3  # three simulated annotators, each its own examples
    late_claims = set(late["claim"])
    for system in systems:
        assert "labelled by one human reviewer" in system
        assert not any(f'Claim: "{c}"' in system for c in late_claims - set(early["claim"]))
    assert set(pd.read_parquet(out)["confidence_source"]) == {"simulated"}
