"""Read judged citations for ``citecal estimate``: eval JSON, batch output, plain tables.

Everything is turned into one frame with a row per judged citation:
``record_id`` (the id ``citecal push`` gives the citation's record, computed
by :mod:`citecal.record_ids`), ``verdict``, ``confidence``, ``score``,
``mode``, ``language``, ``repo`` and ``report``. Only structurally valid
citations are kept: ``push`` never sends the others to annotators, so they
are outside the population the labelled records are drawn from (README
"Estimates"). This module is the I/O edge; the statistics in
:mod:`._estimate` take the frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from citecal.errors import InputError
from citecal.record_ids import record_key, report_key

JUDGED_COLUMNS: tuple[str, ...] = (
    "record_id",
    "verdict",
    "confidence",
    "score",
    "mode",
    "language",
    "repo",
    "report",
)

_BATCH_CITATION_COLUMNS = (
    "report_id",
    "id",
    "claim",
    "citation",
    "valid",
    "verdict",
    "confidence",
    "score",
    "mode",
    "language",
)


def _frame(data: dict[str, object], n: int, path: Path) -> pd.DataFrame:
    """The judged frame; a score that is not in [0, 1] (infinity included) is an error.

    Raises:
        InputError: naming the file and the citation's row, as calibrate does.
    """
    out = pd.DataFrame(
        {c: data[c] if c in data else pd.Series([None] * n, dtype=object) for c in JUDGED_COLUMNS}
    )
    out["score"] = pd.to_numeric(out["score"], errors="coerce").astype(np.float64)
    score = out["score"].to_numpy()
    bad = ~np.isnan(score) & ((score < 0) | (score > 1))
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"{path}: row {row + 1}: score must be in [0, 1], got {score[row]}")
    return out


def read_eval_json_file(path: Path) -> pd.DataFrame:
    """The valid citations of one ``citecal eval --format json`` (or validate) output."""
    from citecal.evaluation import read_eval_json

    result = read_eval_json(path)
    rid = report_key(result.report, result.repo)
    valid = [c for c in result.citations if c.valid]
    return _frame(
        {
            "record_id": [record_key(rid, c.claim, c.citation, result.rev, c.id) for c in valid],
            "verdict": [c.verdict for c in valid],
            "confidence": [c.confidence for c in valid],
            "score": [c.score for c in valid],
            "mode": [c.mode for c in valid],
            "language": [c.language for c in valid],
            "repo": [result.repo] * len(valid),
            "report": [result.report] * len(valid),
        },
        len(valid),
        path,
    )


def read_batch(path: Path) -> pd.DataFrame:
    """The valid citations of an eval-batch output (``OUT`` or ``OUT/citations.parquet``)."""
    import pyarrow.compute as pc

    from citecal.annotate._batch import batch_root
    from citecal.batch import BatchOutput

    output = BatchOutput(batch_root(path))
    reports = output.read("reports", columns=["report_id", "report", "repo", "rev"]).to_pandas()
    meta = reports.drop_duplicates("report_id").set_index("report_id")
    table = output.read(
        "citations", columns=list(_BATCH_CITATION_COLUMNS), filter=pc.field("valid")
    )
    cols = {name: table.column(name).to_pylist() for name in _BATCH_CITATION_COLUMNS}
    report_ids = cols["report_id"]
    known = meta.index
    unknown = sorted(set(report_ids) - set(known))
    if unknown:
        raise InputError(
            f"{path}: citations of report {unknown[0]!r} have no row in reports.parquet"
        )
    keys = {
        r: (report_key(str(meta.at[r, "report"]), str(meta.at[r, "repo"])), meta.at[r, "rev"])
        for r in set(report_ids)
    }
    record_ids = []
    for r, claim, citation, cid in zip(
        report_ids, cols["claim"], cols["citation"], cols["id"], strict=True
    ):
        key, rev = keys[r]
        record_ids.append(
            record_key(key, claim, citation, rev if isinstance(rev, str) else None, cid)
        )
    repo = meta["repo"].astype(str)
    name = meta["report"].astype(str)
    return _frame(
        {
            "record_id": record_ids,
            "verdict": cols["verdict"],
            "confidence": cols["confidence"],
            "score": cols["score"],
            "mode": cols["mode"],
            "language": cols["language"],
            "repo": repo.reindex(report_ids).to_numpy(),
            "report": name.reindex(report_ids).to_numpy(),
        },
        len(record_ids),
        path,
    )


def read_plain(path: Path) -> pd.DataFrame:
    """A plain table of judged citations: ``record_id`` and ``llm_verdict`` and/or ``llm_score``.

    ``llm_confidence``, ``mode``, ``language``, ``repo`` and ``report_id`` are
    used when present; a ``valid`` column, when present, drops invalid rows.
    Columns stay as read (Arrow-backed strings): converting a million ids to
    Python objects and back would cost seconds.
    """
    from citecal.annotations import llm_scores, read_table
    from citecal.calibrate._table import _blank_to_none, per_unique

    wanted = (
        "record_id",
        "llm_verdict",
        "llm_confidence",
        "llm_score",
        "mode",
        "language",
        "repo",
        "report_id",
        "valid",
    )
    # A table written with its pandas index keeps it, duplicates included: the
    # columns below are aligned on it, so a repeated label would misalign them.
    df = read_table(path, columns=wanted).reset_index(drop=True)
    if "record_id" not in df:
        raise InputError(f"{path}: a table of judged citations needs a record_id column")
    if "llm_verdict" not in df and "llm_score" not in df:
        raise InputError(f"{path}: a table of judged citations needs llm_verdict or llm_score")
    if "llm_score" in df:  # "high", inf, 7.5: refused with the row, as calibrate does
        try:
            df["llm_score"] = llm_scores(df, per_unique(df["llm_score"], _blank_to_none).isna())
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
    if "valid" in df:
        df = df[df["valid"].fillna(False).astype(bool)].reset_index(drop=True)
    names = {
        "record_id": "record_id",
        "verdict": "llm_verdict",
        "confidence": "llm_confidence",
        "score": "llm_score",
        "mode": "mode",
        "language": "language",
        "repo": "repo",
        "report": "report_id",
    }
    data: dict[str, object] = {col: df[src] for col, src in names.items() if src in df}
    data["record_id"] = df["record_id"].astype(str)
    return _frame(data, len(df), path)


def _kind(path: Path) -> str:
    if not path.exists():
        raise InputError(f"judged citations not found: {path}")
    if path.is_dir():
        # Imported here: the Argilla SDK behind citecal.annotate costs seconds to load.
        from citecal.annotate import is_batch_output

        return "batch" if is_batch_output(path) else "directory"
    if path.suffix.lower() == ".json":
        return "eval"
    if path.suffix.lower() in {".parquet", ".pq", ".csv", ".jsonl", ".ndjson"}:
        return "plain"
    raise InputError(
        f"cannot tell what {path} is: give eval JSON files (.json), a directory of them, "
        "an eval-batch output, or a table (.parquet, .csv, .jsonl) with record_id and llm_verdict"
    )


def read_judged(paths: Sequence[Path]) -> pd.DataFrame:
    """Every valid judged citation of ``paths`` as one frame (:data:`JUDGED_COLUMNS`).

    Raises:
        InputError: a path is missing or of an unknown kind, a file is not what
            it claims to be, a directory holds no eval JSON, or the same
            record id appears twice (the same evaluation given twice).
    """
    frames: list[pd.DataFrame] = []
    for path in paths:
        kind = _kind(path)
        if kind == "batch":
            frames.append(read_batch(path))
        elif kind == "directory":
            files = sorted(path.rglob("*.json"))
            if not files:
                raise InputError(f"{path}: no eval JSON (*.json) in this directory")
            frames.extend(read_eval_json_file(f) for f in files)
        elif kind == "eval":
            frames.append(read_eval_json_file(path))
        else:
            frames.append(read_plain(path))
    if not frames:
        raise InputError("no judged citations given")
    judged = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    dup = judged["record_id"].duplicated()
    if dup.any():
        rid = judged["record_id"][dup.to_numpy()].iloc[0]
        raise InputError(
            f"record {rid} appears twice among the judged citations "
            "(the same evaluation given twice?)"
        )
    return judged.reset_index(drop=True)


__all__ = ["JUDGED_COLUMNS", "read_batch", "read_eval_json_file", "read_judged", "read_plain"]
