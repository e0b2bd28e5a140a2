"""push → annotate → pull against the real local Argilla stack (see conftest.py).

A workspace and two annotator users are created (named ``test_…`` and removed
at the end); the bundled example's evaluation is pushed, each annotator
submits answers through the API with their own key, and the pulled table is
checked value by value.
"""

from __future__ import annotations

import json
import re
import socket
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import argilla as rg
import pandas as pd
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner, Result

from citecal._markup import md_text
from citecal.annotate._records import record_id, report_id
from citecal.annotate._settings import DEFAULT_SPEC_PATH
from citecal.cli import cli
from citecal.models import EvalResult, support_score
from citecal.source._identity import repository_identity

pytestmark = [pytest.mark.integration, pytest.mark.timeout(3000)]

EXAMPLE = ROOT / "datasets" / "examples"
LINE_RANGES = ("correct", "too_narrow", "too_broad")
PASSWORD = "test-password-1"


@dataclass
class Env:
    stack: Stack
    owner: rg.Argilla
    workspace: str
    dataset: str
    users: dict[str, str]  # username -> user id
    keys: dict[str, str]  # username -> api key
    eval_json: Path
    result: EvalResult
    push_output: str
    started: datetime
    expected: dict[tuple[str, str], dict[str, Any]]  # (record id, annotator) -> answers
    tmp: Path

    def cli(self, *args: str, url: str | None = None, key: str | None = None) -> Result:
        env = {
            "ARGILLA_API_URL": url or self.stack.url,
            "ARGILLA_API_KEY": key or self.stack.api_key,
        }
        return CliRunner().invoke(cli, list(args), env=env)


def evaluation(tmp: Path) -> tuple[Path, EvalResult]:
    """The bundled example evaluated without an LLM, plus judge verdicts on three claims.

    ``--no-llm`` leaves the abstractive claims unverified; three citations get
    an LLM judge's verdict here so the judge columns (model, prompt version,
    score) are exercised end to end.
    """
    out = tmp / "eval.json"
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            str(EXAMPLE / "report.md"),
            "--repo",
            str(EXAMPLE / "shopcart"),
            "--no-llm",
            "--format",
            "json",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    result = EvalResult.model_validate_json(out.read_text())
    judged = iter(
        [
            ("supports", "high", 0.95),
            ("not_supports", "medium", None),
            ("partial", "low", None),
        ]
    )
    citations = []
    for c in result.citations:
        if c.valid and c.verdict == "unverified":
            verdict = next(judged, None)
            if verdict is not None:
                c = c.model_copy(
                    update={
                        "verdict": verdict[0],
                        "confidence": verdict[1],
                        "score": verdict[2],
                        "method": "llm",
                        "model": "gpt-4o-mini",
                        "prompt_version": "v1:0a1b2c3d",
                        "reasoning": f"The judge says {verdict[0]}.",
                    }
                )
        citations.append(c)
    result = result.model_copy(update={"citations": citations})
    out.write_text(result.model_dump_json(indent=2))
    return out, result


def server_ids(owner: rg.Argilla, dataset: rg.Dataset) -> dict[str, str]:
    """External id (citecal's record id) → server record id."""
    items = owner.api.http_client.get(
        f"/api/v1/datasets/{dataset.id}/records", params={"limit": 1000}
    ).json()["items"]
    return {r["external_id"]: r["id"] for r in items}


def respond(key: str, url: str, rec: str, body: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = rg.Argilla(api_url=url, api_key=key, retries=0)
    resp = client.api.http_client.post(f"/api/v1/records/{rec}/responses", json=body)
    assert resp.status_code == 201, resp.text


def answers(score: int, **more: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"supports_claim": {"value": score}}
    values.update({k: {"value": v} for k, v in more.items() if v is not None})
    return values


@pytest.fixture(scope="module")
def env(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tag = uuid.uuid4().hex[:8]
    tmp = tmp_path_factory.mktemp("argilla")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_{tag}", client=owner).create()
    users: dict[str, str] = {}
    keys: dict[str, str] = {}
    created_users = []
    try:
        for n in (1, 2):
            name = f"test_annotator{n}_{tag}"
            user = rg.User(
                username=name, password=PASSWORD, role="annotator", client=owner
            ).create()
            user.add_to_workspace(ws)
            created_users.append(user)
            users[name] = str(user.id)
            keys[name] = owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
        eval_json, result = evaluation(tmp)
        e = Env(
            stack=argilla_stack,
            owner=owner,
            workspace=ws.name,
            dataset=f"test_review_{tag}",
            users=users,
            keys=keys,
            eval_json=eval_json,
            result=result,
            push_output="",
            started=datetime.now(UTC).replace(microsecond=0),
            expected={},
            tmp=tmp,
        )
        push = e.cli("push", str(eval_json), "--dataset", e.dataset, "--workspace", e.workspace)
        assert push.exit_code == 0, push.output
        e.push_output = push.output
        dataset = owner.datasets(e.dataset, workspace=e.workspace)
        ids = server_ids(owner, dataset)
        a1, a2 = sorted(users)
        rid = report_id(result)
        valid = [c for c in result.citations if c.valid]
        for i, c in enumerate(valid):
            rec = record_id(rid, c, result.rev)
            note = f"note {i} by one" if i % 2 == 0 else None
            correction = f"[shopcart/cart.py:{i + 1}-{i + 3}]" if i % 5 == 0 else None
            line_range = LINE_RANGES[i % 3]
            values = answers(i % 4, line_range=line_range, notes=note, correction=correction)
            respond(keys[a1], e.stack.url, ids[rec], {"values": values, "status": "submitted"})
            e.expected[(rec, a1)] = {
                "human_score": i % 4,
                "line_range": line_range,
                "notes": note,
                "correction": correction,
            }
            if i < 30:
                values = answers(3 - i % 4)
                respond(keys[a2], e.stack.url, ids[rec], {"values": values, "status": "submitted"})
                e.expected[(rec, a2)] = {
                    "human_score": 3 - i % 4,
                    "line_range": None,
                    "notes": None,
                    "correction": None,
                }
            elif i == 30:
                body = {"values": answers(2), "status": "draft"}
                respond(keys[a2], e.stack.url, ids[rec], body)
            elif i == 31:
                respond(keys[a2], e.stack.url, ids[rec], {"values": {}, "status": "discarded"})
        yield e
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ds in ws.datasets:
                ds.delete()
            for user in created_users:
                user.delete()
            ws.delete()


def pull(e: Env, name: str, *extra: str) -> tuple[Result, pd.DataFrame | None]:
    out = e.tmp / name
    res = e.cli("pull", "--dataset", e.dataset, "--workspace", e.workspace, "-o", str(out), *extra)
    frame = None
    if res.exit_code == 0:
        if out.suffix == ".parquet":
            frame = pd.read_parquet(out)
        elif out.suffix == ".jsonl":
            frame = pd.read_json(out, lines=True, dtype=False)
        else:
            frame = pd.read_csv(out)
        frame = frame.astype(object).where(frame.notna(), None)  # missing values as None
    return res, frame


def test_push_creates_one_record_per_valid_citation(env: Env) -> None:
    valid = sum(c.valid for c in env.result.citations)
    invalid = len(env.result.citations) - valid
    first = env.push_output.splitlines()[0]
    assert first.startswith(f"created dataset '{env.dataset}' in workspace '{env.workspace}'")
    assert f": {valid} created, 0 updated, {invalid} skipped, 0 failed" in first
    dataset = env.owner.datasets(env.dataset, workspace=env.workspace)
    assert len(server_ids(env.owner, dataset)) == valid


def test_pushed_record_shows_code_context_and_the_judge_suggestion(env: Env) -> None:
    dataset = env.owner.datasets(env.dataset, workspace=env.workspace)
    items = env.owner.api.http_client.get(
        f"/api/v1/datasets/{dataset.id}/records",
        params={"limit": 1000, "include": ["suggestions"]},
    ).json()["items"]
    rid = report_id(env.result)
    by_id = {r["external_id"]: r for r in items}
    judged = [c for c in env.result.citations if c.method == "llm"]  # not the local verifier
    assert len(judged) == 3
    c = judged[0]
    rec = by_id[record_id(rid, c, env.result.rev)]
    assert rec["fields"]["claim"] == md_text(c.claim)  # escaped Markdown (README "Security")
    assert rec["fields"]["citation"] == c.citation
    assert rec["fields"]["judge_reasoning"] == md_text("The judge says supports.")
    code = rec["fields"]["cited_code"]
    assert code.startswith(f"`{c.file_path}`")
    assert f"▶ {c.start_line:>{len(str(c.end_line + 3))}}  " in code
    source = (EXAMPLE / "shopcart" / c.file_path).read_text()
    first_cited = source.splitlines()[c.start_line - 1]
    assert first_cited in code
    (s,) = rec["suggestions"]
    assert (s["value"], s["score"], s["agent"]) == (3, 0.95, "gpt-4o-mini v1:0a1b2c3d")
    assert rec["metadata"]["judge_model"] == "gpt-4o-mini"
    assert rec["metadata"]["report_id"] == rid


def test_pull_exports_every_submitted_answer_with_the_judge_verdict(env: Env) -> None:
    res, table = pull(env, "ann.parquet")
    assert res.exit_code == 0, res.output
    assert table is not None
    assert res.output.strip() == (
        f"wrote {len(env.expected)} annotations "
        "(2 annotators, 40 of 40 records answered, 48 columns) to "
        f"{env.tmp / 'ann.parquet'} as parquet; skipped 1 drafts, 1 discarded; "
        "0 records without a submitted answer"
    )
    assert len(table) == len(env.expected) == 70
    rid = report_id(env.result)
    citations = {record_id(rid, c, env.result.rev): c for c in env.result.citations if c.valid}
    for row in table.to_dict("records"):
        key = (row["record_id"], row["annotator"])
        want = env.expected[key]
        c = citations[row["record_id"]]
        assert row["annotator_id"] == env.users[row["annotator"]]
        assert row["human_score"] == want["human_score"]
        assert row["line_range"] == want["line_range"]
        assert row["notes"] == want["notes"]
        assert row["correction"] == want["correction"]
        assert row["status"] == "submitted"
        assert row["report_id"] == rid
        assert (row["claim"], row["citation"]) == (c.claim, c.citation)
        assert row["mode"] == c.mode
        if c.method == "llm" and c.model is not None:  # the judge's verdict
            assert row["llm_verdict"] == c.verdict and row["llm_confidence"] == c.confidence
            assert row["judge_model"] == c.model and row["prompt_version"] == c.prompt_version
            score = support_score(c.verdict or "", c.confidence or "", c.score)
            assert row["llm_score"] == (None if score is None else pytest.approx(score))
        else:  # a rule verdict (or none) never lands in the llm_* columns
            assert row["llm_verdict"] is None and pd.isna(row["llm_score"])
            assert row["judge_model"] is None
            rule = c.verdict if c.method == "extractive" and c.verdict != "unverified" else None
            assert row["extractive_verdict"] == rule
        assert row["file_path"] == c.file_path and row["language"] == c.language
        assert row["citation_id"] == c.id
        # the raw data push stored, not the Markdown annotators saw
        assert row["cited_code"] == c.cited_code
        assert (row["start_line"], row["end_line"]) == (c.start_line, c.end_line)
        # the checkout's identity: its origin URL when it has one (a CI clone), else its path
        assert row["repository"] == repository_identity(str(EXAMPLE / "shopcart"))[0]
        submitted = datetime.fromisoformat(row["submitted_at"])
        assert submitted.tzinfo is not None and submitted >= env.started
    assert table["llm_verdict"].notna().sum() == 3 * 2  # 3 judged citations, 2 annotators
    stored = pd.read_parquet(env.tmp / "ann.parquet")
    assert stored.dtypes["human_score"] == "int64" and stored.dtypes["llm_score"] == "float64"


def test_pull_csv_and_jsonl_match_parquet(env: Env) -> None:
    _, parquet = pull(env, "a.parquet")
    for name in ("a.csv", "a.jsonl"):
        res, other = pull(env, name)
        assert res.exit_code == 0, res.output
        assert other is not None and parquet is not None
        assert list(other.columns) == list(parquet.columns)
        key = ["record_id", "annotator"]
        left = parquet.sort_values(key).reset_index(drop=True)
        right = other.sort_values(key).reset_index(drop=True)
        assert left["human_score"].tolist() == right["human_score"].tolist()
        assert left["claim"].tolist() == right["claim"].tolist()


def test_pull_since_the_future_exports_nothing(env: Env) -> None:
    res, table = pull(env, "late.parquet", "--since", "2999-01-01")
    assert res.exit_code == 0, res.output
    assert table is not None and len(table) == 0
    assert "70 before --since" in res.output


def test_repush_updates_in_place_and_keeps_every_answer(env: Env) -> None:
    res = env.cli(
        "push", str(env.eval_json), "--dataset", env.dataset, "--workspace", env.workspace
    )
    assert res.exit_code == 0, res.output
    assert (
        "updated dataset" in res.output
        and ": 0 created, 0 updated, 40 unchanged (not sent), 4 skipped, 0 failed" in res.output
    )
    dataset = env.owner.datasets(env.dataset, workspace=env.workspace)
    assert len(server_ids(env.owner, dataset)) == 40
    _, table = pull(env, "after.parquet")
    assert table is not None and len(table) == 70
    got = {(r["record_id"], r["annotator"]): r["human_score"] for r in table.to_dict("records")}
    assert got == {k: v["human_score"] for k, v in env.expected.items()}


def test_blind_sampled_push_has_no_suggestions_or_reasoning(env: Env) -> None:
    name = env.dataset + "_blind"
    res = env.cli(
        "push", str(env.eval_json), "--dataset", name, "--workspace", env.workspace,
        "--blind", "--sample", "5", "--strategy", "uncertain",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert ": 5 created, 0 updated, 39 skipped, 0 failed" in res.output
    dataset = env.owner.datasets(name, workspace=env.workspace)
    items = env.owner.api.http_client.get(
        f"/api/v1/datasets/{dataset.id}/records",
        params={"limit": 1000, "include": ["suggestions"]},
    ).json()["items"]
    assert len(items) == 5
    assert all(r["suggestions"] == [] for r in items)
    assert all("judge_reasoning" not in r["fields"] for r in items)
    assert all(r["metadata"]["_verdict"] for r in items)  # kept, hidden


def one_error_line(res: Result) -> str:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert "Traceback" not in res.output
    return lines[0]


def test_schema_mismatch_is_one_line_with_the_diff(env: Env) -> None:
    binary = DEFAULT_SPEC_PATH.parent / "citation_support_binary.yaml"
    res = env.cli(
        "push", str(env.eval_json), "--dataset", env.dataset, "--workspace", env.workspace,
        "--spec", str(binary),
    )  # fmt: skip
    line = one_error_line(res)
    assert "ARGILLA_API_URL" in line and "has different settings" in line
    assert "+ question supported: missing on the server" in line
    assert "- question supports_claim: on the server, not in the config" in line


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", ["push", "pull"])
def test_server_down_is_one_line_naming_argilla_api_url(env: Env, command: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    args = (
        ["push", str(env.eval_json), "--dataset", env.dataset]
        if command == "push"
        else ["pull", "--dataset", env.dataset, "-o", str(env.tmp / "down.parquet")]
    )
    line = one_error_line(env.cli(*args, url=url))
    assert line.startswith(f"Error: cannot reach Argilla at {url} (ARGILLA_API_URL)")
    assert "make argilla-up" in line
    assert not (env.tmp / "down.parquet").exists()


def test_wrong_key_is_one_line(env: Env) -> None:
    res = env.cli(
        "pull", "--dataset", env.dataset, "-o", str(env.tmp / "k.parquet"), key="nope-key"
    )
    line = one_error_line(res)
    assert "rejected the API key" in line and "ARGILLA_API_KEY" in line


def test_unknown_dataset_and_workspace(env: Env) -> None:
    line = one_error_line(
        env.cli(
            "pull", "--dataset", "test_missing", "--workspace", env.workspace, "-o", "x.parquet"
        )
    )
    assert "dataset 'test_missing' not found" in line and "ARGILLA_API_URL" in line
    line = one_error_line(
        env.cli("push", str(env.eval_json), "--dataset", "x", "--workspace", "test_no_such_ws")
    )
    assert "workspace 'test_no_such_ws' not found" in line


def test_bad_eval_json_is_an_input_error(env: Env) -> None:
    bad = env.tmp / "bad.json"
    bad.write_text(json.dumps({"report": "x"}))
    line = one_error_line(env.cli("push", str(bad), "--dataset", env.dataset))
    assert "is not a `citecal eval --format json` output" in line


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.mark.browser
def test_annotator_sees_the_claim_and_its_code_in_the_browser(
    env: Env, chromium: str, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    name = env.dataset + "_ui"
    res = env.cli(
        "push", str(env.eval_json), "--dataset", name, "--workspace", env.workspace,
        "--sample", "3",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    dataset = env.owner.datasets(name, workspace=env.workspace)
    items = env.owner.api.http_client.get(
        f"/api/v1/datasets/{dataset.id}/records", params={"limit": 10}
    ).json()["items"]
    claims: dict[str, list[dict]] = {}  # as written, unescaped; one claim, several citations
    for r in items:
        claims.setdefault(r["metadata"]["_citecal"]["claim"], []).append(r)
    annotator = sorted(env.users)[1]
    shot = ROOT / "test-artifacts" / "argilla_annotation.png"
    shot.parent.mkdir(exist_ok=True)
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh user-data-dir
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = ctx.new_page()
            page.goto(f"{env.stack.url}/sign-in", wait_until="networkidle")
            page.fill("input[name=Username]", annotator)
            page.fill("input[name=Password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(lambda u: "sign-in" not in u, timeout=30_000)
            page.goto(f"{env.stack.url}/dataset/{dataset.id}/annotation-mode")
            page.get_by_text("Cited code (▶ = cited line)").wait_for(timeout=30_000)
            body = page.inner_text("body")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            ctx.close()
    shown = [claim for claim in claims if claim.replace("`", "") in body.replace("`", "")]
    assert shown, f"no pushed claim on the page; screenshot: {shot}"
    firsts = []
    # The queue is shuffled: any record of a claim on the page (a short claim can also be
    # part of a longer one's text, so more than one may match).
    for record in (r for claim in shown for r in claims[claim]):
        cited = [
            re.match(r"▶ +\d+  (.*)", line) for line in record["fields"]["cited_code"].splitlines()
        ]
        firsts.append(next(m.group(1).strip() for m in cited if m))
    assert any(first and first in body for first in firsts), (firsts, shot)
    assert "Does the cited code support the claim?" in body
    assert shot.stat().st_size > 10_000


def test_a_rejected_batch_is_reported_and_the_others_still_land(env: Env) -> None:
    from dataclasses import replace

    from citecal.annotate import build_records, load_spec
    from citecal.annotate._push import ensure_dataset, upsert_batches
    from citecal.annotate._settings import to_settings

    spec = load_spec()
    records = list(build_records(env.result, spec).records[:12])
    bad = records[7]
    records[7] = replace(bad, metadata={**bad.metadata, "judge_score": 7.0})  # max is 1
    ws = env.owner.workspaces(env.workspace)
    settings = to_settings(spec, 1, env.owner)
    dataset, created = ensure_dataset(env.owner, env.dataset + "_fail", ws, settings, env.stack.url)
    assert created
    done: list[int] = []
    failed, messages = upsert_batches(env.owner, dataset, records, 5, done.append, retries=1)
    assert failed == {r.id for r in records[5:10]}
    assert len(messages) == 1 and messages[0].startswith(
        "records 6-10 failed after 1 attempt(s)"
    )  # 4xx: no retry
    assert "HTTP 422" in messages[0]
    assert sorted(done) == [2, 5, 5]
    landed = set(server_ids(env.owner, dataset))
    assert landed == {r.id for r in records[:5] + records[10:]}
