"""Benchmark: ``citecal estimate`` on 1 000 000 judged citations, and the issue-13 PPI targets.

1. Speed (target ≤ 5 s): a seeded table of 1 000 000 judged citations (record_id, verdict,
   confidence, support score, mode, language, repository: the plain-table input of
   ``citecal estimate``) and an annotation table labelling 1 000 of them drawn uniformly
   at random (two annotators each). Each run is the installed ``citecal estimate`` in its
   own process (imports, reading both tables, stratified PPI++ over mode × language × repo,
   every breakdown, JSON written), wall-clock; best of three.
2. Width (target ≥ 25% narrower than human-only): the realistic synthetic set of the issue,
   10 000 judged, 300 labelled, judge accuracy 85% (a support score whose ≥ 0.5 verdict is
   right 85% of the time), averaged over 500 seeded populations; with the score and with the
   binary verdict as predictor.
3. Coverage (target ≥ 93%): 2 000 seeded populations each for a good judge, one biased
   toward "supports" and a poor one; share of 95% intervals that hold the true precision.

Run: ``.venv/bin/python benchmarks/estimate_million.py``
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from citecal.calibrate._ppi import Moments, classical_mean, ppi_mean

N_JUDGED = 1_000_000
N_LABELLED = 1_000
TARGET_S = 5.0
TARGET_NARROWER = 0.25
TARGET_COVERAGE = 0.93


def make_tables(tmp: Path, seed: int = 0) -> tuple[Path, Path]:
    """The judged table and an annotation table of a uniform random sample of it."""
    rng = np.random.default_rng(seed)
    mode = rng.choice(["extractive", "abstractive"], N_JUDGED, p=[0.6, 0.4])
    language = rng.choice(["python", "javascript", "go", "rust"], N_JUDGED, p=[0.5, 0.3, 0.1, 0.1])
    repo = np.char.add("repo-", rng.integers(0, 20, N_JUDGED).astype(str))
    truth = rng.random(N_JUDGED) < np.where(mode == "extractive", 0.8, 0.6)
    logit = 1.0364 * (2.0 * truth - 1.0) + rng.standard_normal(N_JUDGED)
    score = 1.0 / (1.0 + np.exp(-1.5 * logit))
    verdict = np.where(score >= 0.5, "supports", "not_supports")
    ids = np.char.add("rec-", np.arange(N_JUDGED).astype(str))
    judged = tmp / "judged.parquet"
    pd.DataFrame(
        {
            "record_id": ids,
            "llm_verdict": verdict,
            "llm_confidence": "high",
            "llm_score": score.round(4),
            "mode": mode,
            "language": language,
            "repo": repo,
        }
    ).to_parquet(judged, index=False)
    picked = rng.choice(N_JUDGED, N_LABELLED, replace=False)
    rows = []
    for i in picked:
        for annotator in ("alice", "bob"):
            agree = rng.random() < 0.9
            human = (3 if truth[i] else 0) if agree else (1 if truth[i] else 2)
            rows.append({"record_id": ids[i], "annotator": annotator, "human_score": human})
    annotations = tmp / "annotations.parquet"
    pd.DataFrame(rows).to_parquet(annotations, index=False)
    return judged, annotations


def speed() -> None:
    exe = shutil.which("citecal", path=str(Path(sys.executable).parent)) or "citecal"
    with tempfile.TemporaryDirectory(prefix="citecal-bench-") as tmp:
        judged, annotations = make_tables(Path(tmp))
        out = Path(tmp) / "estimate.json"
        args = [exe, "estimate", str(judged), "-a", str(annotations), "-f", "json", "-o", str(out)]
        runs, cpu = [], []
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            runs.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        data = json.loads(out.read_text())
        best = min(runs)
        print(
            f"citecal estimate: {N_JUDGED:,} judged, {data['n_labelled']:,} labelled, "
            f"{judged.stat().st_size / 1e6:.1f} MB Parquet: best {best:.2f} s "
            f"(runs {', '.join(f'{r:.2f}' for r in runs)}; "
            f"CPU {', '.join(f'{c:.2f}' for c in cpu)} s); "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        c, h = data["corrected"], data["human_only"]
        print(
            f"  corrected {c['estimate']:.4f} {c['ci']}, judge only "
            f"{data['judge_only']['estimate']:.4f}, human only {h['estimate']:.4f} {h['ci']}, "
            f"effective labels {data['effective_labels']:.0f}"
        )
        print(
            f"speed: {best:.2f} s = {best / TARGET_S:.2f}× the {TARGET_S:g} s target "
            f"({'met' if best <= TARGET_S else 'NOT met'})"
        )


def width() -> None:
    rng = np.random.default_rng(13)
    sims, big_n, n = 500, 10_000, 300
    truth = rng.random((sims, big_n)) < 0.7
    logit = 1.0364 * (2.0 * truth - 1.0) + rng.standard_normal((sims, big_n))
    score = 1.0 / (1.0 + np.exp(-1.5 * logit))
    verdict = (score >= 0.5).astype(np.float64)
    accuracy = float(((logit > 0) == truth).mean())
    y = truth[:, :n].astype(np.float64)
    human = classical_mean(y)
    human_width = float((human.high - human.low).mean())
    for name, pred in (("score", score), ("verdict", verdict)):
        r = ppi_mean(y, pred[:, :n], Moments.of(pred))
        narrower = 1.0 - float((r.high - r.low).mean()) / human_width
        print(
            f"width ({name} predictor; {big_n:,} judged, {n} labelled, judge accuracy "
            f"{accuracy:.3f}, {sims} populations): corrected {float((r.high - r.low).mean()):.4f} "
            f"vs human only {human_width:.4f} = {narrower:.1%} narrower; "
            f"ratio to the {TARGET_NARROWER:.0%} target {narrower / TARGET_NARROWER:.2f}× "
            f"({'met' if narrower >= TARGET_NARROWER else 'NOT met'})"
        )


def coverage() -> None:
    judges = {
        "good": (0.7, 0.85, 0.85),
        "biased toward supports": (0.6, 0.97, 0.50),
        "poor": (0.7, 0.60, 0.55),
    }
    rng = np.random.default_rng(20261123)
    sims, big_n, n = 2000, 10_000, 300
    for name, (p, tpr, tnr) in judges.items():
        truth = rng.random((sims, big_n)) < p
        right = np.where(truth, rng.random((sims, big_n)) < tpr, rng.random((sims, big_n)) < tnr)
        verdict = (truth == right).astype(np.float64)
        theta = truth.mean(axis=1)
        r = ppi_mean(truth[:, :n].astype(np.float64), verdict[:, :n], Moments.of(verdict))
        covered = float(((r.low <= theta) & (theta <= r.high)).mean())
        bias = float((verdict.mean(axis=1) - theta).mean())
        print(
            f"coverage ({name} judge, judge-only bias {bias:+.3f}, {sims} populations): "
            f"{covered:.1%}; ratio to the {TARGET_COVERAGE:.0%} target "
            f"{covered / TARGET_COVERAGE:.3f}× "
            f"({'met' if covered >= TARGET_COVERAGE else 'NOT met'})"
        )


if __name__ == "__main__":
    speed()
    width()
    coverage()
