"""``citecal status``'s arithmetic on server-shaped records (no server)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from citecal.annotate import load_spec
from citecal.annotate._status import summarize
from citecal.calibrate._estimate import labels_only_interval
from citecal.calibrate._table import prepare_labels
from citecal.commands.status import render_status
from citecal.errors import InputError


def record(rid: str, answers: dict[str, Any], **meta: Any) -> dict[str, Any]:
    responses = [
        {"user_id": who, "status": "submitted", "values": {"supports_claim": {"value": score}}}
        if isinstance(score, int)
        else {"user_id": who, "status": score, "values": {}}
        for who, score in answers.items()
    ]
    return {"external_id": rid, "metadata": meta, "responses": responses}


def interval(table: pd.DataFrame, records: int) -> Any:
    try:
        found, design = labels_only_interval(prepare_labels(table), records)
        return found, design, "labels only", None
    except InputError as exc:
        return None, None, "labels only", str(exc)


def test_counts_agreement_and_the_reason_when_no_interval() -> None:
    census = {"_sampling_strategy": "census", "_sampling_weight": 1.0}
    records = [
        record("r1", {"u1": 3, "u2": 2}, **census),  # both support: agree
        record("r2", {"u1": 3, "u2": 0}, **census),  # disagree
        record("r3", {"u1": 1, "u2": "draft"}, **census),
        record("r4", {}, **census),
    ]
    r = summarize(
        records,
        load_spec(),
        {"u1": "ana", "u2": "ben"},
        dataset="d",
        workspace="w",
        min_submitted=2,
        interval=interval,
    )
    assert (r.records, r.answered, r.complete) == (4, 3, 2)
    ana, ben = r.annotators
    assert (ana.annotator, ana.submitted, ana.shared, ana.drafts) == ("ana", 3, 2, 0)
    assert (ben.annotator, ben.submitted, ben.shared, ben.drafts) == ("ben", 2, 2, 1)
    assert ana.agreement == pytest.approx(1 / 2) and ben.agreement == pytest.approx(1 / 2)
    # 3 of 4 census records labelled, served in no recorded order: no valid interval.
    assert r.interval is None and r.note is not None and "not a random sample" in r.note
    assert "No interval yet: only 3 of the 4 citations pushed as a census" in render_status(r)


def test_a_census_served_in_random_order_has_an_interval() -> None:
    records = [
        record(
            f"r{i}",
            {"u1": 3 * (i % 2)},
            _sampling_strategy="census",
            _sampling_weight=1.0,
            _sampling_order=i,
        )
        for i in range(6)
    ] + [record("r9", {}, _sampling_strategy="census", _sampling_weight=1.0, _sampling_order=9)]
    r = summarize(
        records, load_spec(), {}, dataset="d", workspace="w", min_submitted=1, interval=interval
    )
    assert r.design == "census (random order)"
    assert r.interval is not None and r.interval.estimate == pytest.approx(0.5)
    assert "Precision (labels only, census (random order) design): 0.500" in render_status(r)
