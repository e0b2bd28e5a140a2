"""``citecal eval`` on the bundled example with the LLM judge behind a real local server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.testing import FakeOpenAIServer, Reply

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"
REPORT = str(EXAMPLES / "report.md")
REPO = str(EXAMPLES / "shopcart")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def run_eval(env: dict[str, str], *extra: str, fmt: str = "json") -> tuple[int, str, str]:
    base = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
    args = ["eval", REPORT, "--repo", REPO, "-f", fmt, *extra]
    result = CliRunner().invoke(cli, args, env={**base, **env})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def env(server: FakeOpenAIServer, tmp_path: Path) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "CITECAL_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
    }


def llm_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in doc["citations"] if c["method"] == "llm"]


def test_eval_uses_judge_and_reports_cost_then_cache(
    server: FakeOpenAIServer, env: dict[str, str]
) -> None:
    # The judge as routing gives it claims (the cascade's part: tests/cascade/test_review.py).
    code, out, err = run_eval(env, "--no-cascade")
    assert code == 0, err
    doc = json.loads(out)
    rows = llm_rows(doc)
    assert rows, "abstractive claims must be judged"
    s = doc["summary"]
    assert s["llm_calls"] == server.calls > 0
    assert s["llm_tokens"] > 0 and s["cost_usd"] > 0
    assert s["abstractive_checked"] == len(rows)
    for r in rows:
        assert r["verdict"] in ("supports", "partial", "not_supports")
        assert r["model"] in ("gpt-4o-mini", "gpt-4o")
        assert r["prompt_version"].startswith("v3@")
        assert r["score"] is not None and r["reasoning"]
    assert sum(r["tokens"] for r in rows) == s["llm_tokens"]
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(s["cost_usd"])
    escalated = [r for r in rows if r["escalated_from"]]
    assert all(r["model"] == "gpt-4o" for r in escalated)
    assert all(r["escalated_from"]["model"] == "gpt-4o-mini" for r in escalated)
    assert doc["warnings"] == []

    calls = server.calls
    code, out2, err2 = run_eval(env, "--no-cascade")
    assert code == 0, err2
    doc2 = json.loads(out2)
    assert server.calls == calls  # unchanged report: zero API calls
    assert doc2["summary"]["llm_calls"] == 0 and doc2["summary"]["cost_usd"] == 0.0
    assert [(r["id"], r["verdict"]) for r in llm_rows(doc2)] == [
        (r["id"], r["verdict"]) for r in rows
    ]

    code, out3, _ = run_eval(env, "--no-cache", "--no-cascade")
    assert code == 0 and json.loads(out3)["summary"]["llm_calls"] == calls
    assert server.calls == 2 * calls


def test_model_prompt_and_concurrency_options(
    server: FakeOpenAIServer, env: dict[str, str]
) -> None:
    code, out, err = run_eval(env, "--model", "local-llama", "--concurrency", "1", "--no-cache")
    assert code == 0, err
    assert {r.model for r in server.requests} >= {"local-llama"}
    assert server.max_in_flight == 1
    doc = json.loads(out)
    assert any("no price for model local-llama" in w for w in doc["warnings"])
    code, _, err = run_eval(env, "--prompt", "v99")
    assert code == 2 and "unknown prompt version 'v99': available: v1" in err


def test_no_llm_degrades_with_one_line(server: FakeOpenAIServer, env: dict[str, str]) -> None:
    code, out, err = run_eval(env, "--no-llm", "--no-cascade")
    assert code == 0
    assert server.calls == 0
    doc = json.loads(out)
    assert doc["summary"]["llm_calls"] == 0
    assert all(r["verdict"] == "unverified" and r["model"] is None for r in llm_rows(doc))
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].endswith("unverified: --no-llm")
    code, _, err = run_eval(env, "--no-llm")  # the cascade: what it cannot decide, for a person
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert code == 0 and len(warnings) == 1
    assert "citations no tier of the cascade could decide are unverified" in warnings[0]


def test_missing_key_degrades_with_one_line(tmp_path: Path) -> None:
    code, out, err = run_eval({"OPENAI_BASE_URL": "https://judge.example.invalid/v1"}, fmt="json")
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"]["llm_calls"] == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "OPENAI_API_KEY is not set" in warnings[0]


def test_unreachable_endpoint_degrades_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    code, out, err = run_eval(
        {"OPENAI_BASE_URL": url, "CITECAL_CACHE_PATH": str(tmp_path / "c.db")}
    )
    assert code == 0, err
    doc = json.loads(out)
    judged = [c for c in doc["citations"] if c["mode"] == "abstractive"]
    assert judged and all(c["verdict"] == "unverified" for c in judged)
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"warning: LLM judge unreachable at {url}")
    assert warnings[0].endswith("claims unverified")


def test_api_error_exits_2_without_output_file(
    server: FakeOpenAIServer, env: dict[str, str], tmp_path: Path
) -> None:
    server.script(*[Reply.status_error(401, "Incorrect API key provided")] * 10)
    out_file = tmp_path / "eval.json"
    code, _, err = run_eval(env, "-o", str(out_file))
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("Error: LLM judge API error: HTTP 401")
    assert "check OPENAI_API_KEY" in err and "Traceback" not in err
    assert not out_file.exists()
    assert not [p for p in tmp_path.iterdir() if "eval.json" in p.name]  # no temp file either


def test_dry_run_calls_nothing(server: FakeOpenAIServer, env: dict[str, str]) -> None:
    code, out, err = run_eval(env, "--dry-run", fmt="table")
    assert code == 0, err
    assert server.calls == 0
    first = out.strip()
    assert first.startswith("dry run: ") and "(gpt-4o-mini) in " in first and "$" in first
    assert "nothing was sent" in first
    code, out, _ = run_eval(env, "--dry-run", "--model", "gpt-4o", fmt="table")
    assert code == 0 and "(gpt-4o) in " in out
    assert run_eval(env)[0] == 0  # a real run fills the cache
    calls = server.calls
    code, out, _ = run_eval(env, "--dry-run", fmt="table")
    assert code == 0 and server.calls == calls
    assert out.startswith("dry run: 0 claims would go to the judge") and " in 0 calls" in out
    code, out, _ = run_eval(env, "--dry-run", "--no-cache", fmt="table")
    assert out.strip().split(" in ")[-1] == first.split(" in ")[-1]  # cache ignored


def test_with_a_judge_every_claim_rules_leave_open_is_judged(
    server: FakeOpenAIServer, env: dict[str, str]
) -> None:
    code, out, err = run_eval(env, "--no-cascade")
    assert code == 0, err
    doc = json.loads(out)
    valid = [c for c in doc["citations"] if c["valid"]]
    by_rules = [c for c in valid if c["method"] == "extractive"]
    judged = [c for c in valid if c["method"] == "llm"]
    assert by_rules and judged and len(by_rules) + len(judged) == len(valid)
    assert all(c["verdict"] in ("supports", "not_supports") for c in by_rules)
    assert doc["summary"]["unverified"] == 0 and doc["summary"]["decision_coverage"] == 1.0
    # The judge saw exactly the claims rules left open, each with the rule evidence.
    asked = {c.claim for r in server.requests for c in r.claims}
    assert {c["claim"] for c in judged} <= asked
    assert not {c["claim"] for c in by_rules} & asked
    assert all("Rule-based check" in r.user for r in server.requests)


def test_with_the_default_cascade_the_judge_decides_what_rules_cannot_certify(
    server: FakeOpenAIServer, env: dict[str, str]
) -> None:
    code, out, err = run_eval(env)
    assert code == 0, err
    doc = json.loads(out)
    valid = [c for c in doc["citations"] if c["valid"]]
    assert not [c for c in valid if c["method"] == "extractive" and c["verdict"] != "unverified"]
    judged = [c for c in valid if c["method"] == "llm" and c["verdict"] != "unverified"]
    held = [c for c in valid if c["abstain_reason"] == "judge and verifier disagree"]
    local = [c for c in valid if c["method"] == "local"]  # certified before the judge
    assert judged and len(judged) + len(held) + len(local) == len(valid)  # or a person
    assert doc["summary"]["cascade"]["disagreed"] == len(held)
    assert all(c["p_supports"] is not None and c["suggested_action"] == "annotate" for c in held)


def test_groundtruth_bench_with_a_judge_leaves_nothing_undecided(
    server: FakeOpenAIServer, env: dict[str, str]
) -> None:
    root = Path(__file__).resolve().parents[2]
    sources = root / ".citecal" / "groundtruth"
    if not (sources / "requests-2.32.3").is_dir():
        pytest.skip("ground-truth sources not fetched (make groundtruth)")
    base = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
    res = CliRunner().invoke(
        cli,
        [
            "bench",
            "groundtruth",
            "--dataset",
            str(root / "datasets" / "groundtruth"),
            "--sources",
            str(sources),
            "--only",
            "requests",
            "-f",
            "json",
        ],
        env={**base, **env},
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["judge"] == "gpt-4o-mini"
    assert report["overall"]["undecided"] == 0
    assert report["overall"]["decision_coverage"] == 1.0


def test_llm_classification_gives_unknown_claims_the_judges_mode(
    server: FakeOpenAIServer, env: dict[str, str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def parse_header(line):\n    return line.split(':')\n")
    report = tmp_path / "r.md"
    report.write_text("Header lines are split on colons here [a.py:1-2].\n")
    answer = {
        "reasoning": "split on ':'",
        "supports": True,
        "confidence": "high",
        "score": 0.9,
        "mode": "extractive",
    }
    server.script(Reply.json(answer))
    base = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
    user = tmp_path / "u.toml"
    user.write_text("[classify]\nuse_llm_classification = true\n")
    args = ["eval", str(report), "--repo", str(repo), "-f", "json", "--config", str(user)]
    res = CliRunner().invoke(cli, args, env={**base, **env})
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["citations"]
    assert (row["mode"], row["verdict"], row["method"]) == ("extractive", "supports", "llm")
    assert 'Also classify the claim: "mode"' in server.requests[0].user
    # Without the setting the claim stays unknown and the judge is not asked to classify.
    user.write_text("[classify]\nuse_llm_classification = false\n")
    server.script(Reply.json(answer))
    res = CliRunner().invoke(cli, [*args, "--no-cache"], env={**base, **env})
    (row,) = json.loads(res.stdout)["citations"]
    assert row["mode"] == "unknown"
    assert "Also classify" not in server.requests[-1].user


def test_eval_confidence_consistency_records_it_and_pays_for_k_samples(
    tmp_path: Path,
) -> None:
    """README "Judge confidence": every judged row says how sure; the summary, what K cost."""
    with FakeOpenAIServer(mode="realistic") as srv:
        env = {
            "OPENAI_BASE_URL": srv.base_url,
            "OPENAI_API_KEY": "test-key",
            "CITECAL_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
            "CITECAL_ESCALATION_MODEL": "",
        }
        code, out, err = run_eval(env)
        assert code == 0, err
        verbal = json.loads(out)
        calls = srv.calls
        code, out, err = run_eval(env, "--confidence", "consistency", "--samples", "5")
        assert code == 0, err
        doc = json.loads(out)
        first = [r for r in srv.requests[calls:] if r.model == "gpt-4o-mini"]
        assert len(first) == calls  # n=5: the same requests as one answer each
        assert all(r.body["n"] == 5 for r in first)
        # Samples that disagree (confidence 0.6 < judge.confidence_threshold) escalate.
        escalated = [r for r in doc["citations"] if r["escalated_from"] is not None]
        assert len(srv.requests) - calls - len(first) == len(escalated)
        assert all(r["escalated_from"]["confidence_value"] < 0.7 for r in escalated)
        code, dry, err = run_eval(
            env, "--confidence", "consistency", "--samples", "5", "--no-cache", "--dry-run",
            fmt="table",
        )  # fmt: skip
    assert code == 0, err
    s, v = doc["summary"], verbal["summary"]
    assert (s["confidence_source"], s["confidence_samples"]) == ("consistency", 5)
    assert (v["confidence_source"], v["confidence_samples"]) == ("verbal", 1)
    # Five answers per prompt: more tokens and dollars than one, less than five prompts.
    assert v["llm_tokens"] < s["llm_tokens"] < 5 * v["llm_tokens"]
    assert s["llm_tokens"] == sum(r["tokens"] for r in doc["citations"])
    assert s["cost_usd"] > v["cost_usd"]
    rows = llm_rows(doc)
    assert rows and all(r["confidence_source"] == "consistency" for r in rows)
    assert {r["confidence_value"] for r in rows} <= {0.6, 0.8, 1.0}
    assert all(r["confidence_value"] == 1.0 for r in llm_rows(verbal))  # always "high"
    assert all(r["confidence_source"] is None for r in doc["citations"] if r["method"] != "llm")
    assert "(consistency: 5 answers per claim)" in dry
