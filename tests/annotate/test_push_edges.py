"""Push's edges on the real stack (issue 29, items 7 and 8; README "Security").

* A plain ``push`` after a ``--strategy abstained`` push rewrote the earlier records'
  sampling design to ``census`` (``estimate`` then took a weighted sample for a
  uniform one): a push that would change a recorded design is now refused, and the
  records on the server keep theirs.
* Ctrl-C during ``push`` ran another 54 s and uploaded everything: it now stops within
  a few seconds, says how many records were sent, and the same push again sends the
  rest.
* A push of 0 usable records created an empty dataset and exited 0.

Resources are named ``test_…`` and removed at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import argilla as rg
import pytest
from annotate_factories import ROOT, Stack, make_citation, make_eval
from click.testing import CliRunner

from citecal.annotate._records import AnnotationRecord
from citecal.cli import cli

EXAMPLES = ROOT / "datasets" / "examples"


# --------------------------------------------------------------------- pure


def _record(rid: str, strategy: str, weight: float | None) -> AnnotationRecord:
    meta: dict[str, Any] = {"_sampling_strategy": strategy}
    if weight is not None:
        meta["_sampling_weight"] = weight
    return AnnotationRecord(rid, {}, meta, (), make_citation())


def test_design_changes_are_the_records_whose_design_or_weight_would_move() -> None:
    from citecal.annotate._rounds import design_changes, prior_from_metadata

    prior = prior_from_metadata(
        [
            ("a", {"_sampling_strategy": "abstained", "_sampling_weight": 1.0}),
            ("b", {"_sampling_strategy": "abstained", "_sampling_weight": 10.0}),
            ("c", {}),  # pushed before designs were recorded
        ]
    )
    same = [_record("a", "abstained", 1.0), _record("b", "abstained", 10.0 + 1e-13)]
    assert design_changes(same, prior) == []
    plain = [_record("a", "census", 1.0), _record("b", "census", 1.0), _record("c", "census", 1)]
    assert [rid for rid, _, _ in design_changes(plain, prior)] == ["a", "b"]
    reweighted = [_record("b", "abstained", 5.0), _record("new", "census", 1.0)]
    assert [rid for rid, _, _ in design_changes(reweighted, prior)] == ["b"]


# --------------------------------------------------------------------- on the stack


@pytest.fixture(scope="module")
def stack(argilla_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tag = uuid.uuid4().hex[:8]
    tmp: Path = tmp_path_factory.mktemp("push-edges")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_edges_{tag}", client=owner).create()
    env = {"ARGILLA_API_URL": argilla_stack.url, "ARGILLA_API_KEY": argilla_stack.api_key}
    try:
        yield {"owner": owner, "ws": ws, "tag": tag, "tmp": tmp, "env": env}
    finally:
        for model in owner.api.datasets.list(workspace_id=ws.id):
            owner.api.datasets.delete(model.id)
        ws.delete()


def _records(owner: rg.Argilla, ws: rg.Workspace, name: str) -> list[dict[str, Any]]:
    for model in owner.api.datasets.list(workspace_id=ws.id):
        if model.name == name:
            items: list[dict[str, Any]] = []
            while True:
                page = owner.api.http_client.get(
                    f"/api/v1/datasets/{model.id}/records",
                    params={"limit": 1000, "offset": len(items)},
                ).json()["items"]
                items += page
                if len(page) < 1000:
                    return items
    return []


@pytest.mark.integration
def test_a_push_never_rewrites_a_recorded_design(stack: dict) -> None:
    evaluation = stack["tmp"] / "cascade-eval.json"
    res = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"), "--no-llm",
         "--cascade", "default", "-f", "json", "-o", str(evaluation)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    name = f"test_design_{stack['tag']}"
    base = ["push", str(evaluation), "--dataset", name, "--workspace", stack["ws"].name]
    abstained = [*base, "--sample", "12", "--strategy", "abstained"]
    first = CliRunner().invoke(cli, abstained, env=stack["env"])
    assert first.exit_code == 0, first.output
    before = {r["external_id"]: r["metadata"] for r in _records(stack["owner"], stack["ws"], name)}
    assert {m["_sampling_strategy"] for m in before.values()} == {"stratified"}  # weighted
    plain = CliRunner().invoke(cli, base, env=stack["env"])
    assert plain.exit_code == 2, plain.output
    assert "pushed as stratified (weight" in plain.output, plain.output
    assert "would record them as census (weight 1)" in plain.output
    after = {r["external_id"]: r["metadata"] for r in _records(stack["owner"], stack["ws"], name)}
    assert after == before  # nothing was sent
    again = CliRunner().invoke(cli, abstained, env=stack["env"])
    assert again.exit_code == 0, again.output  # the same design again is fine


@pytest.mark.integration
def test_a_push_of_no_usable_record_creates_nothing(stack: dict) -> None:
    invalid = make_citation(valid=False, error="file not found", failure_type="invalid_file")
    evaluation = stack["tmp"] / "invalid.json"
    evaluation.write_text(make_eval([invalid]).model_dump_json())
    name = f"test_empty_{stack['tag']}"
    res = CliRunner().invoke(
        cli,
        ["push", str(evaluation), "--dataset", name, "--workspace", stack["ws"].name],
        env=stack["env"],
    )
    assert res.exit_code == 2 and "nothing to push" in res.output, res.output
    names = {m.name for m in stack["owner"].api.datasets.list(workspace_id=stack["ws"].id)}
    assert name not in names


def _big_eval(path: Path, n: int) -> None:
    citations = [
        make_citation(id=f"c{i}", claim=f"The `Cart` class keeps item {i} in a dict", position=i)
        for i in range(n)
    ]
    path.write_text(make_eval(citations).model_dump_json())


@pytest.mark.integration
@pytest.mark.timeout(600)
def test_ctrl_c_stops_a_push_within_seconds_and_a_repush_completes_it(stack: dict) -> None:
    evaluation = stack["tmp"] / "big.json"
    total = 600
    _big_eval(evaluation, total)
    name = f"test_interrupt_{stack['tag']}"
    exe = Path(sys.executable).parent / "citecal"
    args = [str(exe), "push", str(evaluation), "--dataset", name, "--workspace",
            stack["ws"].name, "--batch-size", "2"]  # fmt: skip
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **stack["env"]},
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if len(_records(stack["owner"], stack["ws"], name)) >= 6:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the push finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - interrupted
    assert took < 8, f"push ran {took:.1f}s after Ctrl-C"
    assert proc.returncode == 130, err
    assert "Traceback" not in err and f"of {total:,} record(s) were sent" in err, err
    sent = int(err.split("interrupted: ")[1].split(" of ")[0].replace(",", ""))
    there = len(_records(stack["owner"], stack["ws"], name))
    assert 0 < sent <= there < total
    again = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **stack["env"]})
    assert again.returncode == 0, again.stderr
    created = int(again.stdout.split(": ")[1].split(" created")[0])
    unchanged = int(again.stdout.split("updated, ")[1].split(" unchanged")[0])
    assert created + unchanged == total and unchanged >= there, again.stdout
    assert len(_records(stack["owner"], stack["ws"], name)) == total
