"""Push 5 000 records and pull 5 000 responses on the local Argilla stack.

Prints records/second for ``citecal push`` (``push_evaluation``: build records,
create the dataset, batched upserts) and for ``citecal pull``
(``pull_annotations`` + Parquet), and the ratio of citecal's push against a
plain SDK loop: the same records as ``rg.Record`` objects sent with
``dataset.records.log`` at the SDK's default batch size (256).

Also times a re-push of the unchanged evaluation (content hashes match: nothing is sent).

Targets (issue 14): citecal push >= 2x the plain SDK loop in the same run, pull >= 2 000 rows/s.

Needs a running server: ``make argilla-up`` (or ARGILLA_API_URL / ARGILLA_API_KEY).
Run: .venv/bin/python benchmarks/argilla_roundtrip.py [N [ROUNDS]]  (defaults 5000, 2)
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path

import argilla as rg

from citecal.annotate import (
    AnnotationSpec,
    build_records,
    connect,
    load_spec,
    pull_annotations,
    push_evaluation,
)
from citecal.annotate._push import to_rg_record
from citecal.annotate._settings import to_settings
from citecal.annotations import write_table
from citecal.config import ArgillaConfig, load_config
from citecal.models import CitationResult, EvalResult, Summary

VERDICTS = [("supports", "high"), ("partial", "medium"), ("not_supports", "low")]


def synthetic_eval(n: int) -> EvalResult:
    """``n`` valid, judged citations with distinct claims (realistic field sizes)."""
    code = "\n".join(f"    total += item.price * item.quantity  # line {i}" for i in range(12))
    citations = []
    for i in range(n):
        verdict, confidence = VERDICTS[i % 3]
        citations.append(
            CitationResult(
                id=f"c{i}",
                citation=f"[src/module_{i % 50}.py:{10 + i % 40}-{21 + i % 40}]",
                file_path=f"src/module_{i % 50}.py",
                start_line=10 + i % 40,
                end_line=21 + i % 40,
                claim=f"Claim {i}: the `Cart.total` method sums the price of every item",
                section="Pricing",
                paragraph_index=i // 5,
                position=i * 80,
                valid=True,
                error=None,
                failure_type=None,
                mode="abstractive" if i % 2 else "extractive",
                verdict=verdict,  # type: ignore[arg-type]
                method="llm",
                confidence=confidence,  # type: ignore[arg-type]
                score=None,
                reasoning="The cited loop multiplies price by quantity and adds it up.",
                matched_terms=["Cart", "total"],
                missing_terms=["every"],
                suggested_action=None,
                model="gpt-4o-mini",
                prompt_version="v1:0a1b2c3d",
                language="python",
                context="The cart computes totals on demand. " * 4,
                cited_code=code,
            )
        )
    summary = Summary(
        total_citations=n,
        valid_citations=n,
        validity_rate=1.0,
        extractive_checked=0,
        extractive_supports=0,
        extractive_precision=None,
        abstractive_checked=n,
        abstractive_supports=0,
        abstractive_precision=None,
        overall_precision=None,
        unverified=0,
        total_claims=n,
        cited_claims=n,
        coverage=1.0,
    )
    return EvalResult(
        report="bench/report.md",
        repo="/nonexistent/bench-repo",
        summary=summary,
        citations=citations,
        failed_citations=[],
    )


def push_citecal(
    result: EvalResult, spec: AnnotationSpec, config: ArgillaConfig, client: rg.Argilla, name: str
) -> tuple[float, float]:
    """Seconds for ``push_evaluation``: (end to end, record upload only)."""
    t0 = time.perf_counter()
    summary = push_evaluation(result, spec, config, dataset_name=name, client=client)
    seconds = time.perf_counter() - t0
    assert summary.created == len(result.citations) and summary.failed == 0, summary
    return seconds, summary.upload_seconds


def repush_unchanged(
    result: EvalResult, spec: AnnotationSpec, config: ArgillaConfig, client: rg.Argilla, name: str
) -> float:
    """Seconds for pushing the same evaluation again: every record is unchanged, none is sent."""
    t0 = time.perf_counter()
    summary = push_evaluation(result, spec, config, dataset_name=name, client=client)
    seconds = time.perf_counter() - t0
    assert summary.unchanged == len(result.citations) and summary.pushed == 0, summary
    return seconds


def push_sdk(
    result: EvalResult, spec: AnnotationSpec, config: ArgillaConfig, client: rg.Argilla, name: str
) -> float:
    """Seconds for a plain ``dataset.records.log`` of the same records (dataset made beforehand)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = rg.Dataset(
            name=name,
            workspace=client.workspaces(config.workspace),
            settings=to_settings(spec, config.min_submitted, client),
            client=client,
        ).create()
        built = build_records(result, spec).records
        t0 = time.perf_counter()
        records = [to_rg_record(r, dataset) for r in built]
        dataset.records.log(records)  # the SDK's default batch size (256)
        return time.perf_counter() - t0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    config = load_config().argilla
    spec = load_spec()
    client = connect(config)
    tag = uuid.uuid4().hex[:8]
    result = synthetic_eval(n)
    names: list[str] = []
    ours: list[tuple[float, float]] = []
    sdk: list[float] = []
    try:
        # Alternate the order each round so both see the same (shared-machine) load.
        for r in range(rounds):
            a, b = f"bench_citecal_{tag}_{r}", f"bench_sdk_{tag}_{r}"
            names += [a, b]
            if r % 2 == 0:
                ours.append(push_citecal(result, spec, config, client, a))
                sdk.append(push_sdk(result, spec, config, client, b))
            else:
                sdk.append(push_sdk(result, spec, config, client, b))
                ours.append(push_citecal(result, spec, config, client, a))

        repush_s = repush_unchanged(result, spec, config, client, names[0])

        # n submitted responses (one per record, by the owner) for pull
        ds = client.datasets(names[0], workspace=config.workspace)
        me = client.me.id
        models = []
        for i, rec_value in enumerate(build_records(result, spec).records):
            rec = to_rg_record(rec_value, ds)
            rec.responses.add(rg.Response("supports_claim", i % 4, user_id=me, status="submitted"))
            models.append(rec.api_model())
        for start in range(0, len(models), 500):
            client.api.records.bulk_upsert(dataset_id=ds.id, records=models[start : start + 500])
        pulls = []
        for _ in range(3):  # best of three, as the pushes are best of their rounds
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                pulled = pull_annotations(spec, config, dataset_name=names[0], client=client)
                write_table(pulled.table, Path(tmp) / "annotations.parquet")
                pulls.append(time.perf_counter() - t0)
            assert len(pulled.table) == n, pulled.counts
        pull_s = min(pulls)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in names:
                found = client.datasets(name, workspace=config.workspace)
                if found is not None:
                    found.delete()

    # best of the rounds (least disturbed by other work on the machine)
    push_s = min(t for t, _ in ours)
    upload_s = min(u for _, u in ours)
    sdk_s = min(sdk)
    push_rate, upload_rate, sdk_rate, pull_rate = n / push_s, n / upload_s, n / sdk_s, n / pull_s
    print(f"records: {n}, rounds: {rounds} (best of), server {config.api_url}")
    print("citecal push runs, total/upload (s): " + ", ".join(f"{t:.1f}/{u:.1f}" for t, u in ours))
    print("plain SDK log runs (s): " + ", ".join(f"{t:.1f}" for t in sdk))
    print(
        f"citecal push: {push_s:.2f} s = {push_rate:.0f} records/s end to end, "
        f"including dataset creation"
    )
    print(f"citecal push upload: {upload_s:.2f} s = {upload_rate:.0f} records/s")
    print(f"plain SDK dataset.records.log: {sdk_s:.2f} s = {sdk_rate:.0f} records/s")
    print(
        f"ratio citecal / SDK loop: {upload_rate / sdk_rate:.2f}x upload, "
        f"{push_rate / sdk_rate:.2f}x end to end (target >= 2.0)"
    )
    print(f"citecal re-push of the unchanged evaluation: {repush_s:.2f} s, 0 records sent")
    runs = ", ".join(f"{p:.2f}" for p in pulls)
    print(f"citecal pull: {pull_s:.2f} s = {pull_rate:.0f} rows/s (runs {runs} s; target >= 2000)")
    ok = push_rate >= 2 * sdk_rate and pull_rate >= 2000
    print("targets met" if ok else "targets NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
