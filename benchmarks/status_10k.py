"""Benchmark: ``citecal status`` on a dataset of 10 000 answered records (target ≤ 2 s).

Pushes a synthetic evaluation of 10 000 judged citations to the local Argilla
stack (``push_evaluation``: a census in a seeded random order), gives every
record a submitted answer, then times ``citecal status --dataset NAME --format
json`` as a user runs it: the installed entry point in its own process
(imports, reading every record with its responses, progress, agreement, the
labels-only interval), wall-clock, best of three. The library call alone is
printed too.

Needs a running server: ``make argilla-up`` (or ARGILLA_API_URL / ARGILLA_API_KEY).
Run: ``.venv/bin/python benchmarks/status_10k.py [N]`` (default 10000)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
import warnings

import argilla as rg
from argilla_roundtrip import synthetic_eval

from citecal.annotate import build_records, connect, load_spec, push_evaluation
from citecal.annotate._push import to_rg_record
from citecal.annotate._status import dataset_status
from citecal.calibrate._estimate import labels_only_interval
from citecal.calibrate._table import prepare_labels
from citecal.config import load_config

TARGET_S = 2.0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    config = load_config().argilla
    spec = load_spec()
    client = connect(config)
    name = f"bench_status_{uuid.uuid4().hex[:8]}"
    result = synthetic_eval(n)
    try:
        summary = push_evaluation(result, spec, config, dataset_name=name, client=client)
        assert summary.created == n, summary
        ds = client.datasets(name, workspace=config.workspace)
        me = client.me.id
        models = []
        for i, value in enumerate(build_records(result, spec).records):
            rec = to_rg_record(value, ds)
            rec.responses.add(rg.Response("supports_claim", i % 4, user_id=me, status="submitted"))
            models.append(rec.api_model())
        for start in range(0, len(models), 500):
            client.api.records.bulk_upsert(dataset_id=ds.id, records=models[start : start + 500])

        def interval(table, records):  # type: ignore[no-untyped-def]
            found, design = labels_only_interval(prepare_labels(table), records)
            return found, design, "labels only", None

        t0 = time.perf_counter()
        report = dataset_status(spec, config, dataset_name=name, interval=interval, client=client)
        library_s = time.perf_counter() - t0
        assert report.records == n and report.answered == n, report
        exe = shutil.which("citecal", path=os.path.dirname(sys.executable)) or "citecal"
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            out = subprocess.run(
                [exe, "status", "--dataset", name, "--format", "json"],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append(time.perf_counter() - t0)
        data = json.loads(out.stdout)
        assert data["records"] == n and data["answered"] == n, data
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = client.datasets(name, workspace=config.workspace)
            if found is not None:
                found.delete()
    best = min(runs)
    print(
        f"citecal status on {n} answered records: {best:.2f}s end to end (best of 3, "
        f"runs {', '.join(f'{r:.2f}' for r in runs)}), library call {library_s:.2f}s; "
        f"target ≤ {TARGET_S:.0f}s: {'met' if best <= TARGET_S else 'NOT met'} "
        f"(ratio {best / TARGET_S:.2f} of the target)"
    )
    return 0 if best <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
