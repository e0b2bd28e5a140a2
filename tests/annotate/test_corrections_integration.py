"""Proposed corrections through the annotation loop on the real stack (README "`citecal correct`").

``citecal correct --corrections`` → ``citecal push --corrections`` offers each proposal as the
suggestion of the correction question → an annotator accepts one and edits another →
``citecal pull`` keeps the proposal and its strategy → ``citecal calibrate`` reports acceptance
by strategy. Resources are named ``test_…`` and removed at the end.
"""

from __future__ import annotations

import json
import re
import uuid
import warnings
from pathlib import Path

import argilla as rg
import pandas as pd
import pytest
from annotate_factories import Stack
from click.testing import CliRunner, Result

from citecal.cli import cli
from citecal.testing import FakeOpenAIServer
from citecal.testing.openai_server import ChatRequest, Reply

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

CART = (
    '"""A shopping cart."""\n\n\nclass Cart:\n    def __init__(self):\n        self.items = {}\n\n'
    "    def add_item(self, sku, quantity):\n        if quantity < 0:\n"
    '            raise ValueError("negative quantity")\n        self.items[sku] = quantity\n'
)
PRICING = (
    "TAX_RATE = 0.2\n\n\ndef compute_total(subtotal):\n"
    "    return round(subtotal * (1 + TAX_RATE), 2)\n"
)
REPORT = """# Shop

The `Cart` class defines `add_item` [pkg/cart.py:4-11].
The `compute_total` function multiplies by `TAX_RATE` [pkg/cart.py:8-11].
`add_item` stores each quantity in `self.items` after raising `ValueError` [pkg/cart.py:8-9].
The `refund` helper calls `issue_refund` [pkg/refunds.py:1-5].
"""


def run(stack: Stack, *args: str, env: dict[str, str] | None = None) -> Result:
    env = {"ARGILLA_API_URL": stack.url, "ARGILLA_API_KEY": stack.api_key, **(env or {})}
    return CliRunner().invoke(cli, list(args), env=env)


def names_judge(request: ChatRequest) -> Reply | None:
    """Supports when every name the claim gives in backticks is in the cited lines or in the
    lines right above them (the definition around them): `citecal correct` needs a judge to
    move valid citations (issue 21)."""
    claims = request.claims
    if not claims:
        return None
    answers = []
    for c in claims:
        above = c.block.split(" > ", 1)[0]
        names = [n.rsplit(".", 1)[-1] for n in re.findall(r"`([^`]+)`", c.claim)]
        ok = all(n in c.code or n in above for n in names)
        answers.append(
            {"claim_id": c.n, "reasoning": "names", "supports": ok, "confidence": "high",
             "score": 1.0 if ok else 0.0}
        )  # fmt: skip
    if request.is_batch:
        return Reply.json({"results": answers} if request.response_format else answers)
    return Reply.json({k: v for k, v in answers[0].items() if k != "claim_id"})


def test_proposals_are_suggested_pulled_and_calibrated(
    argilla_stack: Stack, tmp_path: Path
) -> None:
    repo = tmp_path / "shop"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "cart.py").write_text(CART)
    (repo / "pkg" / "pricing.py").write_text(PRICING)
    report = tmp_path / "report.md"
    report.write_text(REPORT)
    evaluation, fixes = tmp_path / "eval.json", tmp_path / "fixes.json"
    assert run(argilla_stack, "eval", str(report), "--repo", str(repo), "--no-llm",
               "-f", "json", "-o", str(evaluation)).exit_code == 0  # fmt: skip
    with FakeOpenAIServer(handler=names_judge) as judge:
        made = run(argilla_stack, "correct", str(report), "--repo", str(repo), "--no-cache",
                   "--corrections", str(fixes),
                   env={"OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": ""})  # fmt: skip
    assert made.exit_code == 0, made.output
    proposals = {c["strategy"]: c for c in json.loads(fixes.read_text())["corrections"]}
    assert set(proposals) == {"relocate", "expand", "remove"}

    tag = uuid.uuid4().hex[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_corrections_{tag}", client=owner).create()
        user = rg.User(
            username=f"test_corr_{tag}", password="test-password-1", role="annotator", client=owner
        ).create()
        user.add_to_workspace(ws)
    try:
        key = owner.api.http_client.get(f"/api/v1/users/{user.id}").json()["api_key"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            annotator = rg.Argilla(api_url=argilla_stack.url, api_key=key, retries=0)
        dataset = f"test_corrections_{tag}"
        # a corrections file of another report is refused before anything is pushed
        other = tmp_path / "other.json"
        digest = json.loads(fixes.read_text())["report_sha256"]
        other.write_text(fixes.read_text().replace(digest, "0" * 64))
        refused = run(argilla_stack, "push", str(evaluation), "--dataset", dataset,
                      "--workspace", ws.name, "--corrections", str(other))  # fmt: skip
        assert refused.exit_code == 2 and "the corrections file is for" in refused.output
        assert not any(d.name == dataset for d in ws.datasets)

        pushed = run(argilla_stack, "push", str(evaluation), "--dataset", dataset,
                     "--workspace", ws.name, "--corrections", str(fixes))  # fmt: skip
        assert pushed.exit_code == 0, pushed.output
        # the removal's citation is structurally invalid: not pushed, so not offered
        assert "offered 2 of 3 proposed correction(s) as suggestions" in pushed.output
        ds = owner.datasets(dataset, workspace=ws.name)
        records = owner.api.http_client.get(
            f"/api/v1/datasets/{ds.id}/records",
            params={"limit": 100, "include": ["suggestions"]},
        ).json()["items"]
        listed = owner.api.http_client.get(f"/api/v1/datasets/{ds.id}/questions").json()
        questions = {q["id"]: q["name"] for q in listed["items"]}
        offered = {}
        for rec in records:
            for s in rec["suggestions"]:
                if questions[s["question_id"]] == "correction":
                    offered[rec["fields"]["citation"]] = (s["value"], s["agent"])
        assert offered == {
            "[pkg/cart.py:8-11]": (str_new(proposals["relocate"]), "citecal correct relocate"),
            "[pkg/cart.py:8-9]": (str_new(proposals["expand"]), "citecal correct expand"),
        }
        answers = {  # accept the relocation as proposed, edit the expansion
            "[pkg/cart.py:8-11]": str_new(proposals["relocate"]),
            "[pkg/cart.py:8-9]": "[pkg/cart.py:8-12]",
        }
        for rec in records:
            values: dict[str, dict[str, object]] = {"supports_claim": {"value": 1}}
            answer = answers.get(rec["fields"]["citation"])
            if answer is not None:
                values["correction"] = {"value": answer}
            body = {"values": values, "status": "submitted"}
            resp = annotator.api.http_client.post(
                f"/api/v1/records/{rec['id']}/responses", json=body
            )
            assert resp.status_code == 201, resp.text
        table = tmp_path / "annotations.parquet"
        pulled = run(argilla_stack, "pull", "--dataset", dataset, "--workspace", ws.name,
                     "-o", str(table))  # fmt: skip
        assert pulled.exit_code == 0, pulled.output
        df = pd.read_parquet(table).set_index("citation")
        assert df.loc["[pkg/cart.py:8-11]", "correction_strategy"] == "relocate"
        assert df.loc["[pkg/cart.py:8-9]", "correction_suggested"] == str_new(proposals["expand"])
        assert pd.isna(df.loc["[pkg/cart.py:4-11]", "correction_strategy"])
        report_json = run(argilla_stack, "calibrate", str(table), "-f", "json", "--resamples", "0")
        assert report_json.exit_code == 0, report_json.output
        acceptance = json.loads(report_json.output)["corrections"]
        assert acceptance == {
            "expand": {"n": 1, "accepted": 0, "edited": 1, "cleared": 0, "acceptance_rate": 0.0},
            "relocate": {"n": 1, "accepted": 1, "edited": 0, "cleared": 0, "acceptance_rate": 1.0},
        }
        shown = run(argilla_stack, "calibrate", str(table), "--resamples", "0")
        assert "Proposed corrections (citecal correct) accepted by annotators" in shown.output
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for d in ws.datasets:
                d.delete()
            user.delete()
            ws.delete()


def str_new(c: dict[str, object]) -> str:
    new = c["new"]
    assert isinstance(new, dict)
    start, end = new["start_line"], new["end_line"]
    lines = f"{start}" if start == end else f"{start}-{end}"
    return f"[{new['file_path']}:{lines}]"
