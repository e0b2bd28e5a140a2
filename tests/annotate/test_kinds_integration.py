"""One loop for every citation kind: push → annotate → pull → calibrate, on the real stack.

Excerpt citations (seed 002), sentence citations (seed 004) and structured
answer citations (seed 003) each go to their own dataset with their own
annotation config; an annotator answers every record through the API; the
pulled tables have the annotation-table columns and ``citecal calibrate``
reads them unchanged. Resources are named ``test_…`` and removed at the end.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Iterator

import argilla as rg
import pandas as pd
import pytest
from annotate_factories import ROOT, Stack
from click.testing import CliRunner, Result

from citecal.annotations import ANNOTATION_COLUMNS
from citecal.cli import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

EXAMPLES = ROOT / "datasets" / "examples"
SPECS = ROOT / "annotation_configs"
KINDS = {
    "excerpt": (
        [
            "eval",
            str(EXAMPLES / "excerpts" / "answer.md"),
            "--context",
            str(EXAMPLES / "excerpts" / "context"),
            "--no-llm",
        ],
        "excerpt_support.yaml",
    ),
    "sentence": (
        [
            "eval",
            str(EXAMPLES / "chunks" / "report.md"),
            "--repo",
            str(EXAMPLES / "chunks"),
            "--no-llm",
        ],
        "sentence_support.yaml",
    ),
    "answer": (["validate", str(EXAMPLES / "answers.jsonl")], "answer_citation.yaml"),
}


def run(stack: Stack, *args: str) -> Result:
    env = {"ARGILLA_API_URL": stack.url, "ARGILLA_API_KEY": stack.api_key}
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture(scope="module")
def loop(
    argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, object]]:
    tag = uuid.uuid4().hex[:8]
    tmp = tmp_path_factory.mktemp("kinds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_kinds_{tag}", client=owner).create()
        user = rg.User(
            username=f"test_kinds_{tag}", password="test-password-1", role="annotator", client=owner
        ).create()
        user.add_to_workspace(ws)
    key = owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        annotator = rg.Argilla(api_url=argilla_stack.url, api_key=key, retries=0)
    out: dict[str, object] = {"owner": owner, "ws": ws.name, "tmp": tmp, "stack": argilla_stack}
    try:
        for kind, (command, spec) in KINDS.items():
            result_json = tmp / f"{kind}.json"
            made = run(argilla_stack, *command, "-f", "json", "-o", str(result_json))
            assert made.exit_code in (0, 1), made.output
            dataset = f"test_{kind}_{tag}"
            push = run(
                argilla_stack,
                "push",
                str(result_json),
                "--dataset",
                dataset,
                "--workspace",
                ws.name,
                "--spec",
                str(SPECS / spec),
            )
            assert push.exit_code == 0, push.output
            ds = owner.datasets(dataset, workspace=ws.name)
            records = owner.api.http_client.get(
                f"/api/v1/datasets/{ds.id}/records",
                params={"limit": 1000, "include": ["suggestions"]},
            ).json()["items"]
            for n, rec in enumerate(records):
                body = {"values": {"supports_claim": {"value": n % 4}}, "status": "submitted"}
                resp = annotator.api.http_client.post(
                    f"/api/v1/records/{rec['id']}/responses", json=body
                )
                assert resp.status_code == 201, resp.text
            table = tmp / f"{kind}.parquet"
            pull = run(
                argilla_stack,
                "pull",
                "--dataset",
                dataset,
                "--workspace",
                ws.name,
                "-o",
                str(table),
                "--spec",
                str(SPECS / spec),
            )
            assert pull.exit_code == 0, pull.output
            out[kind] = (
                records,
                pd.read_parquet(table),
                table,
                json.loads(result_json.read_text()),
            )
        yield out
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for d in ws.datasets:
                d.delete()
            user.delete()
            ws.delete()


def test_excerpt_records_show_the_excerpt_the_passage_and_the_best_match(loop: dict) -> None:
    records, table, _, result = loop["excerpt"]
    valid = [c for c in result["citations"] if c["valid"]]
    assert len(records) == len(valid) == 10
    by_citation = {r["fields"]["citation"]: r for r in records}
    quote = by_citation["[[ctx-001:L42]]"]["fields"]
    assert quote["excerpt"] == "The project deadline is March 15th"
    assert quote["location"] == "line 42"
    # the passage is read from the context directory, with context lines around it
    passage = quote["cited_passage"]
    assert "▶ 42  The project deadline is March 15th, confirmed by John Doe." in passage
    assert "\n  43  - Follow-up 1:" in passage  # a context line: read from the directory
    risky = by_citation["[[ctx-001:sec-risks]]"]
    assert risky["fields"]["best_match"].startswith("lines 5–6 (score 0.50)")
    assert risky["metadata"]["excerpt_status"] == "unverified"
    assert set(ANNOTATION_COLUMNS) <= set(table.columns) and len(table) == 10


def test_sentence_records_cite_the_sentence(loop: dict) -> None:
    records, table, _, _ = loop["sentence"]
    fields = {r["fields"]["citation"]: r["fields"] for r in records}
    sentence = fields["[design.md:S:1]"]
    assert sentence["location"] == "sentence 1 (line 3)"
    assert "▶ 3  The judge's verdicts are cached in SQLite." in sentence["cited_sentence"]
    assert len(table) == 7


def test_answer_records_carry_span_quote_evidence_and_alignment(loop: dict) -> None:
    records, table, _, _ = loop["answer"]
    assert len(records) == 6
    perfect = next(r for r in records if r["fields"]["citation"].startswith("[perfect #0"))
    assert perfect["fields"]["question"] == "Who introduced linear perspective?"
    assert "Around 1415 Filippo Brunelleschi" in perfect["fields"]["evidence"]
    (s,) = perfect["suggestions"]
    assert (s["value"], s["score"]) == (3, 0.85)
    row = table[table["citation"] == perfect["fields"]["citation"]].iloc[0]
    assert (row["llm_verdict"], row["llm_score"], row["judge_model"]) == (
        "supports",
        0.85,
        "answer alignment_score",
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_calibrate_reads_every_kind_unchanged(loop: dict, kind: str) -> None:
    _, table, path, _ = loop[kind]
    res = CliRunner().invoke(cli, ["calibrate", str(path), "-f", "json", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["overall"]["n_annotations"] == len(table)
