"""A table produced by ``citecal pull``'s own row builder calibrates, extras included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from citecal.annotate import load_spec
from citecal.annotate._pull import annotation_rows
from citecal.annotations import to_frame, write_table
from citecal.cli import cli

SPEC = load_spec()


def _server_record(i: int, verdict: str, scores: dict[str, int]) -> dict[str, Any]:
    """A record as the Argilla server returns it (``include=responses``)."""
    path = "shop/cart.py" if i % 2 else "web/cart.ts"
    return {
        "id": f"00000000-0000-0000-0000-{i:012d}",
        "external_id": f"rec{i}",
        "status": "completed",
        "fields": {
            "claim": f"Claim number {i} about the cart",
            "citation": f"[{path}:{i + 1}-{i + 3}]",
            "cited_code": f"`{path}`, lines {i + 1}–{i + 3}\n\n```\n▶ {i + 1}  x = {i}\n```",
            "judge_reasoning": f"reasoning {i}",
        },
        "metadata": {
            "mode": "abstractive" if i % 3 else "extractive",
            "judge_model": "gpt-4o-mini",
            "prompt_version": "v1@abc",
            "report_id": f"report-{i % 4}",
            "repo": "shop",
            "file": path,
            "judge_score": 0.83 if verdict == "supports" else 0.17,
            "_verdict": verdict,
            "_confidence": "medium",
            "_method": "llm",
            "_citation_id": f"c{i}",
        },
        "responses": [
            {
                "id": f"resp-{user}-{i}",
                "user_id": user,
                "status": "submitted",
                "values": {
                    "supports_claim": {"value": score},
                    "line_range": {"value": "correct" if score != 1 else "too_narrow"},
                    "notes": {"value": "wrong file, see pricing" if score == 0 else ""},
                },
                "inserted_at": "2026-11-22T10:00:00",
                "updated_at": "2026-11-22T10:05:00",
            }
            for user, score in scores.items()
        ],
        "suggestions": [],
    }


def test_calibrate_reads_a_pulled_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    records = []
    for i in range(40):
        truth = int(rng.integers(0, 4))
        verdict = "supports" if (truth >= 2) ^ (rng.random() < 0.25) else "not_supports"
        scores = {u: int(np.clip(truth + rng.integers(-1, 2), 0, 3)) for u in ("u1", "u2")}
        records.append(_server_record(i, verdict, scores))
    rows, _ = annotation_rows(records, SPEC, {"u1": "ann", "u2": "bob"}, dataset="d")
    path = tmp_path / "pulled.parquet"
    write_table(to_frame(rows), path)
    result = CliRunner().invoke(
        cli, ["calibrate", str(path), "-f", "json", "--by", "language", "--by", "report"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    m = data["overall"]
    assert m["n_records"] == 40 and m["n_annotations"] == 80 and m["n_annotators"] == 2
    for name in ("agreement_rate", "cohen_kappa", "weighted_kappa", "spearman_rho",
                 "krippendorff_alpha", "human_ceiling", "line_range_accuracy"):  # fmt: skip
        assert m[name] is not None, name
    # language comes from the cited file's extension when pull left it empty.
    assert set(data["groups"]["language"]) == {"python", "typescript"}
    assert len(data["groups"]["report"]) == 4
    # The judge's reasoning is pull's judge_reasoning column.
    assert all(d["reasoning"].startswith("reasoning ") for d in data["disagreements"])
    wrong = [d for d in data["disagreements"] if d["notes"] and "wrong file" in d["notes"]]
    assert wrong and {d["category"] for d in wrong} == {"wrong_file_or_symbol"}
