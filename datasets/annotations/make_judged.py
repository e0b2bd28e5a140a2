"""Generate ``judged.parquet``: a synthetic population of judged citations for ``citecal estimate``.

Run from the repository root: ``.venv/bin/python datasets/annotations/make_judged.py``.
Deterministic (seeded).

``annotations.parquet`` labels 86 records. ``citecal estimate`` needs the
judged citations they were drawn from; this script makes 1 000 of them, as if
the 86 labelled records were a uniform random sample of a 1 000-citation
evaluation: the 86 records themselves (their real judge columns) plus 914
synthetic citations (``syn-0001`` …) whose judge columns (verdict, confidence,
score, mode, language, repository) are drawn with replacement from the 86
(``source_record_id`` names the record each one copies).
Synthetic, like the annotators: it shows how the command works, not how good
any judge is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SEED = 20261123
N_JUDGED = 1000
COLUMNS = ["llm_verdict", "llm_confidence", "llm_score", "mode", "language", "repo"]


def main() -> None:
    ann = pd.read_parquet(HERE / "annotations.parquet")
    records = ann.drop_duplicates("record_id").reset_index(drop=True)
    records["repo"] = np.where(
        records["citation"].str.startswith("[web/"), "shopcart-web", "shopcart"
    )
    rng = np.random.default_rng(SEED)
    drawn = records.iloc[rng.integers(0, len(records), N_JUDGED - len(records))]
    extra = drawn[COLUMNS].reset_index(drop=True)
    extra.insert(0, "record_id", [f"syn-{i:04d}" for i in range(1, len(extra) + 1)])
    # Which annotated record a synthetic citation copies: the notebook re-judges the
    # 86 with another prompt and carries the new verdicts over to their copies.
    extra["source_record_id"] = drawn["record_id"].to_numpy()
    own = records[["record_id", *COLUMNS]].assign(source_record_id=records["record_id"])
    judged = pd.concat([own, extra], ignore_index=True)
    order = rng.permutation(len(judged))
    judged = judged.iloc[order].reset_index(drop=True)
    judged.to_parquet(HERE / "judged.parquet", index=False)
    print(f"wrote {HERE / 'judged.parquet'}: {len(judged)} judged citations")


if __name__ == "__main__":
    main()
