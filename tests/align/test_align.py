"""``citecal align`` against the real local OpenAI-compatible server (prompt-sensitive mode)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from citecal.align import AlignSettings, align_prompt, decide, labels_hash, make_folds, parse_edits
from citecal.align._score import PairedScore
from citecal.cli import cli
from citecal.config import JudgeConfig
from citecal.errors import InputError
from citecal.testing import CRITIC_EDITS, FakeOpenAIServer, sensitive_verdict
from citecal.verify.judge import load_prompt

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "annotations" / "annotations.parquet"
HELPFUL = CRITIC_EDITS[1]["instruction"]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("CITECAL_CACHE_PATH", str(tmp_path / "cache" / "judge.sqlite3"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def sensitive(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(mode="prompt_sensitive") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["align", str(DATASET), "--prompt", "v1", *args])


def front_matter(path: Path) -> dict[str, str]:
    text = path.read_text()
    assert text.startswith("---\n")
    block = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


# --------------------------------------------------------------------------- folds


@given(st.lists(st.sampled_from([f"r{i}" for i in range(12)]), min_size=2), st.integers(2, 8))
def test_folds_put_every_report_in_exactly_one_scoring_fold(reports: list[str], k: int) -> None:
    if len(set(reports)) < 2:
        with pytest.raises(InputError, match="at least 2"):
            make_folds(reports, k)
        return
    folds = make_folds(reports, k, seed=3)
    assert len(folds) == min(k, len(set(reports)))
    scored = [r for f in folds for r in f.scoring_reports]
    assert sorted(scored) == sorted(set(reports))  # each report scored once
    for f in folds:
        assert not set(f.scoring_reports) & set(f.training_reports)
        assert set(f.scoring_reports) | set(f.training_reports) == set(reports)


def test_nothing_from_a_scoring_fold_reaches_a_prompt_that_judges_it(
    sensitive: FakeOpenAIServer,
) -> None:
    """Claims marked with their report: no system prompt judging report R mentions R's claims."""
    table = pd.read_parquet(DATASET)
    table["claim"] = table["claim"] + " «" + table["report_id"].str[-2:] + "»"
    table["notes"] = table["notes"].fillna("") + " «" + table["report_id"].str[-2:] + "»"
    config = JudgeConfig(base_url=sensitive.base_url, escalation_model=None)
    result = align_prompt(table, config, prompt="v1", settings=AlignSettings(edits=2, examples=4))
    fold_of = {r: f for f, reports in enumerate(result.fold_reports) for r in reports}
    judged_with_examples = 0
    critic_requests = 0
    for req in sensitive.requests:
        if "prompt critic" in req.system:
            # The critic is asked once per fold, in fold order, about training reports only.
            shown = set(re.findall(r"«(\d\d)»", req.user))
            assert shown and critic_requests not in {fold_of[f"report-{m}"] for m in shown}
            critic_requests += 1
            continue
        judged = set(re.findall(r"«(\d\d)»", req.user))
        shown = set(re.findall(r"«(\d\d)»", req.system))
        assert not judged & shown, "a prompt showed examples from the reports it judged"
        judged_with_examples += bool(shown)
    assert critic_requests == result.folds
    assert judged_with_examples > 0


# --------------------------------------------------------------------------- search


def test_align_finds_the_helpful_edit_and_writes_it_with_provenance(
    sensitive: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "prompts" / "v1-aligned.md"
    out.parent.mkdir()
    res = run("-o", str(out), "--examples", "0", "--json", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    assert f"wrote {out} (edit-2)" in res.output
    assert "kept: edit-2" in res.output
    meta = front_matter(out)
    table = pd.read_parquet(DATASET)
    assert json.loads(meta["parent"]) == load_prompt("v1").version
    assert json.loads(meta["labels_sha256"]) == labels_hash(table)
    assert meta["labels"] == "{records: 86, annotations: 237, reports: 8}"
    assert meta["folds"] == "{k: 5, by: report, seed: 0}"
    assert json.loads(meta["metric"]) == "weighted_kappa"
    before, after = json.loads(meta["before"]), json.loads(meta["after"])
    assert before["value"] == pytest.approx(0.4043, abs=1e-4)
    assert after["value"] == pytest.approx(0.5223, abs=1e-4)
    assert before["ci"][0] < before["value"] < before["ci"][1]
    assert json.loads(meta["gain"])["ci"][0] > 0
    assert meta["candidates_tried"] == "4"
    assert int(meta["calls"]) == sensitive.calls  # every call the server saw is accounted
    assert float(meta["cost_usd"]) > 0
    # The written file is a prompt citecal loads: the helpful edit in, the harmful ones out.
    written = load_prompt(str(out))
    assert HELPFUL in written.system
    for harmful in (CRITIC_EDITS[0], CRITIC_EDITS[2]):
        assert harmful["instruction"] not in written.system
    # The block is YAML a front-matter reader parses.
    parsed = yaml.safe_load(out.read_text().split("---\n")[1])
    assert parsed["folds"] == {"k": 5, "by": "report", "seed": 0}
    assert [c["name"] for c in parsed["candidates"]] == ["edit-1", "edit-2", "edit-3", "edit-4"]
    assert parsed["after"]["value"] == after["value"] and parsed["stopped"] is None
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["kept"] is True and report["winner"] == "edit-2"
    assert {c["name"] for c in report["candidates"]} == {"edit-1", "edit-2", "edit-3", "edit-4"}


def test_refuses_and_writes_nothing_when_the_prompt_does_not_matter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "p.md"
    with FakeOpenAIServer(mode="prompt_noise", noise=0.1, seed=1) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        res = run("-o", str(out), "--examples", "0")
    assert res.exit_code == 1, res.output
    assert "no candidate was shown better than the start prompt v1@" in res.output
    assert "nothing written" in res.output
    assert not out.exists()
    assert not list(tmp_path.glob("*.md*"))  # no partial or temporary file either


def test_a_second_identical_run_costs_nothing(sensitive: FakeOpenAIServer, tmp_path: Path) -> None:
    first = run("-o", str(tmp_path / "a.md"), "--edits", "2", "--examples", "3")
    assert first.exit_code == 0, first.output
    calls = sensitive.calls
    assert calls > 0
    second = run("-o", str(tmp_path / "b.md"), "--edits", "2", "--examples", "3")
    assert second.exit_code == 0, second.output
    assert sensitive.calls == calls  # judge and critic answers all from the cache
    assert "calls: 0 (0 judge, 0 critic)" in second.output
    a, b = (tmp_path / "a.md").read_text(), (tmp_path / "b.md").read_text()
    assert a.split("\ncalls:")[0] == b.split("\ncalls:")[0]  # same prompt and figures


def test_the_budget_stops_the_search_and_keeps_the_best_so_far(
    sensitive: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "p.md"
    # Start (20 calls) + 5 critic + edit-1 (20) + edit-2 (20) = 65: edit-3 would pass 75.
    res = run("-o", str(out), "--examples", "0", "--max-calls", "75")
    assert res.exit_code == 0, res.output
    assert sensitive.calls <= 75
    assert "stopped: --max-calls 75: candidate edit-3 needs 20 more call(s) after 65" in res.output
    assert "best so far kept" in res.output
    meta = front_matter(out)
    assert meta["candidates_tried"] == "2"
    assert json.loads(meta["stopped"]).startswith("--max-calls 75")


def test_a_budget_below_the_start_pass_writes_nothing(
    sensitive: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "p.md"
    res = run("-o", str(out), "--max-calls", "5")
    assert res.exit_code == 1, res.output
    assert sensitive.calls == 0
    assert "stopped: --max-calls 5: the start prompt needs 20 more call(s) after 0" in res.output
    assert not out.exists()


def test_dry_run_sends_nothing(sensitive: FakeOpenAIServer) -> None:
    res = run("--dry-run")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("dry run: 86 records, 5 folds by report, up to 8 candidates")
    assert "(20 start, 5 critic," in res.output and "nothing was sent" in res.output
    assert sensitive.calls == 0


def test_output_is_required_and_errors_are_one_line(sensitive: FakeOpenAIServer) -> None:
    res = run()
    assert res.exit_code == 2
    assert res.output == "Error: -o/--output is required (unless --dry-run)\n"
    res = CliRunner().invoke(cli, ["align", "missing.parquet", "--prompt", "v1", "-o", "x.md"])
    assert res.exit_code == 2 and res.output.count("\n") == 1


# --------------------------------------------------------------------------- pieces


def test_decide_needs_the_interval_above_zero_and_a_corrected_mcnemar() -> None:
    good = PairedScore(0.4, 0.5, 0.1, None, None, [0.02, 0.2], 100)
    # 0 vs 9 discordant records: p = 2 · 0.5⁹ = 0.0039 < 0.05 / 5 = 0.01.
    assert decide(good, 0.00390625, 0, 9, 5)[0]
    # The same p after 12 candidates: 0.05 / 12 = 0.0042 still passes; after 13 (0.00385) not.
    assert decide(good, 0.00390625, 0, 9, 12)[0]
    kept, why = decide(good, 0.00390625, 0, 9, 13)
    assert not kept and "not significant after 13 candidates" in why
    assert not decide(good, 0.001, 9, 0, 1)[0]  # significant, but the start is the better one
    wide = PairedScore(0.4, 0.5, 0.1, None, None, [-0.01, 0.2], 100)
    kept, why = decide(wide, 0.0001, 0, 20, 1)
    assert not kept and "includes 0" in why
    assert not decide(PairedScore(0.4, 0.4, 0.0, None, None, [0, 0], 100), 1.0, 0, 0, 1)[0]


def test_the_prompt_sensitive_judge_reads_the_prompt() -> None:
    claim = "The `subtotal` property multiplies `unit_price` by `quantity` and caches the result"
    code = "    @property\n    def subtotal(self):\n        return self.unit_price * self.quantity"
    plain = sensitive_verdict(claim, code, "You are a judge.")
    strict = sensitive_verdict(claim, code, "Check every part of the claim.")
    lenient = sensitive_verdict(claim, code, "Accept when any of its key terms appears.")
    assert plain["supports"] and not strict["supports"] and lenient["supports"]
    only_code = "The `subtotal` property multiplies `unit_price` by `quantity`"
    assert sensitive_verdict(only_code, code, "Check every part of the claim.")["supports"]


def test_critic_answers_are_parsed_tolerantly() -> None:
    text = 'Sure:\n```json\n{"edits": [{"title": "A", "instruction": "Do  X."}, {"x": 1}]}\n```'
    edits, problem = parse_edits(text, 4)
    assert problem is None and [(e.title, e.instruction) for e in edits] == [("A", "Do X.")]
    assert parse_edits("no json here", 4) == ((), "no JSON in the answer")
    assert parse_edits('{"edits": [{"instruction": "## system"}]}', 4)[1] == "no usable edit"
    assert len(parse_edits(json.dumps({"edits": CRITIC_EDITS}), 2)[0]) == 2


@pytest.mark.parametrize(
    ("metric", "figure"),
    [
        ("weighted_kappa", "weighted_kappa"),
        ("agreement", "agreement_rate"),
        ("spearman_rho", "spearman_rho"),
        ("f1", "f1"),
    ],
)
def test_scores_use_the_calibration_definitions(metric: str, figure: str) -> None:
    """The search's table formulas give calibrate's figures on the bundled table's judge."""
    from citecal.align import Side, paired_score
    from citecal.calibrate import compute_metrics, prepare

    prepared = prepare(pd.read_parquet(DATASET))
    side = Side.of(prepared)
    reports = prepared["report_id"].to_numpy(dtype=object)
    human = prepared["human_score"].to_numpy(dtype="int64")
    score = paired_score(metric, reports, human, side, side, resamples=200)
    expected = getattr(compute_metrics(prepared), figure)
    assert score.a == pytest.approx(expected, abs=1e-12) and score.b == score.a
    assert score.diff == 0 and score.ci_diff == [0.0, 0.0]
    assert score.ci_a is not None and score.ci_a[0] <= score.a <= score.ci_a[1]


def test_an_unknown_metric_is_refused_before_any_call(sensitive: FakeOpenAIServer) -> None:
    config = JudgeConfig(base_url=sensitive.base_url)
    with pytest.raises(InputError, match="metric 'kappa'"):
        align_prompt(pd.read_parquet(DATASET), config, prompt="v1",
                     settings=AlignSettings(metric="kappa"))  # fmt: skip
    assert sensitive.calls == 0


def test_one_report_cannot_be_split_into_folds(sensitive: FakeOpenAIServer, tmp_path: Path) -> None:
    one = tmp_path / "one.parquet"
    table = pd.read_parquet(DATASET)
    table[table["report_id"] == "report-01"].to_parquet(one)
    res = CliRunner().invoke(
        cli, ["align", str(one), "--prompt", "v1", "-o", str(tmp_path / "p.md")]
    )
    assert res.exit_code == 2
    assert res.output == (
        "Error: the annotations hold 1 report(s): folds by report need at least 2\n"
    )
    assert sensitive.calls == 0 and not (tmp_path / "p.md").exists()


def test_combinations_join_the_best_singles_that_beat_the_start() -> None:
    from citecal.align import Recipe
    from citecal.align._candidates import combinations

    def ps(b: float, diff: float) -> PairedScore:
        return PairedScore(0.4, b, diff, None, None, None, 10)

    scored = [
        (Recipe(edits=(1,)), ps(0.45, 0.05)),
        (Recipe(edits=(2,)), ps(0.50, 0.10)),
        (Recipe(edits=(3,)), ps(0.30, -0.10)),
        (Recipe(examples=6), ps(0.42, 0.02)),
    ]
    names = [r.name for r in combinations(scored, 6)]
    assert names == ["edit-2+edit-1", "edit-2+fewshot-6", "edit-2+edit-1+fewshot-6"]
    assert combinations(scored[2:3], 6) == []  # nothing beat the start: nothing to combine
    assert [r.name for r in combinations(scored[1:3], 6)] == []  # one good edit alone


def test_max_cost_stops_the_search_within_the_limit(
    sensitive: FakeOpenAIServer, tmp_path: Path
) -> None:
    # A candidate is admitted when what its requests can cost at most (prompts plus
    # max_tokens, about $0.025 here, spent ~$0.006) fits in what is left.
    res = run("-o", str(tmp_path / "p.md"), "--examples", "0", "--max-cost", "0.08",
              "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert "stopped: --max-cost 0.08: candidate edit-" in res.output, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert 0 < report["cost_usd"] <= 0.08
    assert 0 < len(report["candidates"]) < 4
