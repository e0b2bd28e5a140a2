"""Benchmark: ``citecal calibrate`` on 100 000 annotations with 1 000 bootstrap resamples.

25 000 records × 4 annotators over 200 reports (seeded synthetic table). Times the full report
(prepare + overall figures with cluster-bootstrap CIs, Krippendorff's α, human ceiling, the
default breakdowns by mode / model / prompt version, every disagreement categorised, JSON
rendering) against a plain pandas + scipy script computing only the agreement rate and Spearman's
ρ without any CI. Target: full report ≤ 10 s.

Run: ``.venv/bin/python benchmarks/calibrate_scale.py``
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats

from citecal.calibrate import calibrate_frame, prepare
from citecal.config import CalibrationConfig

N_RECORDS = 25_000
N_ANNOTATORS = 4
N_REPORTS = 200
RESAMPLES = 1_000


def make_table(
    seed: int = 0, n_records: int = N_RECORDS, n_reports: int = N_REPORTS
) -> pd.DataFrame:
    """A seeded annotation table with the DESIGN.md columns (``N_ANNOTATORS`` per record)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_records)
    judge_supports = (truth >= 2) ^ (rng.random(n_records) < 0.2)
    score = np.clip(np.where(judge_supports, 0.75, 0.25) + rng.normal(0, 0.15, n_records), 0, 1)
    rec = np.repeat(np.arange(n_records), N_ANNOTATORS)
    human = np.clip(truth[rec] + rng.choice([-1, 0, 1], rec.size, p=[0.15, 0.7, 0.15]), 0, 3)
    return pd.DataFrame(
        {
            "record_id": np.char.add("r", rec.astype(str)),
            "report_id": np.char.add("rep", (rec % n_reports).astype(str)),
            "citation": np.where(rec % 3 == 0, "[src/app.ts:10-20]", "[src/app.py:10-20]"),
            "claim": "The function validates the input",
            "cited_code": "def f(x):\n    return validate(x)",
            "mode": np.where(rec % 2 == 0, "abstractive", "extractive"),
            "judge_model": np.where(rec % 5 == 0, "gpt-4o", "gpt-4o-mini"),
            "prompt_version": "v1@00000000",
            "llm_verdict": np.where(judge_supports[rec], "supports", "not_supports"),
            "llm_confidence": "medium",
            "llm_score": score[rec].round(3),
            "annotator": np.char.add(
                "ann", np.tile(np.arange(N_ANNOTATORS), n_records).astype(str)
            ),
            "human_score": human,
            "line_range": np.where(rec % 7 == 0, "too_narrow", "correct"),
            "notes": None,
            "submitted_at": "2026-01-01T00:00:00+00:00",
        }
    )


def baseline(raw: pd.DataFrame) -> tuple[float, float]:
    """What a user would write by hand: agreement and Spearman, no CIs."""
    judge = raw["llm_verdict"] == "supports"
    human = raw["human_score"] >= 2
    agreement = float((judge == human).mean())
    rho = float(stats.spearmanr(raw["llm_score"], raw["human_score"]).statistic)
    return agreement, rho


def main() -> None:
    raw = make_table()
    print(f"table: {len(raw):,} annotations, {N_RECORDS:,} records × {N_ANNOTATORS} annotators, "
          f"{N_REPORTS} reports; {RESAMPLES:,} bootstrap resamples")  # fmt: skip
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        agreement, rho = baseline(raw)
        runs.append(time.perf_counter() - t0)
    base = min(runs)
    config = CalibrationConfig(bootstrap_resamples=RESAMPLES, seed=0)
    full = []
    for _ in range(3):
        t0 = time.perf_counter()
        report = calibrate_frame(prepare(raw), input_name="bench", config=config)
        text = report.model_dump_json()
        full.append(time.perf_counter() - t0)
    best = min(full)
    m = report.overall
    assert m.agreement_rate is not None and abs(m.agreement_rate - agreement) < 1e-12
    print(f"baseline (pandas + scipy: agreement + Spearman, no CI): {base:.3f} s "
          f"(agreement {agreement:.4f}, rho {rho:.4f})")  # fmt: skip
    print(f"citecal full report (all figures, CIs, alpha, ceiling, 3 breakdowns, "
          f"{len(report.disagreements):,} disagreements, JSON {len(text) / 1e6:.1f} MB): "
          f"best {best:.2f} s, runs {', '.join(f'{t:.2f}' for t in full)}")  # fmt: skip
    print(f"ratio full report / baseline: {best / base:.1f}×; target ≤ 10 s: "
          f"{'met' if best <= 10 else 'NOT met'}")  # fmt: skip
    print(f"rho {m.spearman_rho:.4f} CI {m.ci.get('spearman_rho')}, kappa {m.cohen_kappa:.4f} "
          f"CI {m.ci.get('cohen_kappa')}, alpha {m.krippendorff_alpha:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
