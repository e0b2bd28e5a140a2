"""Reading and writing the annotation table: Parquet, CSV or JSONL, chosen by suffix.

Everything that can be wrong with a file (missing, empty, cut mid-row,
unreadable, unknown type) is one :class:`~citecal.errors.InputError` here;
:func:`validate_row` turns a pydantic error on one row into a message that
names the record and the column. Writes are atomic (README "Security").
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pandas as pd
from pydantic import ValidationError

from citecal._io import atomic_path, check_regular_file, open_regular
from citecal.annotations._row import TABLE_COLUMNS, AnnotationRow
from citecal.errors import InputError

TABLE_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl"}
"""Output suffix → format (inputs also accept ``.pq``, ``.ndjson`` and ``.json``)."""

_NUMERIC = frozenset(
    {
        "human_score",
        "llm_score",
        "sampling_weight",
        "sampling_probability",
        "sampling_round",
        "sampling_order",
        "sampling_drawn",
        "start_line",
        "end_line",
        "confidence_value",
    }
)
_CSV_TEXT = {c: str for c in TABLE_COLUMNS if c not in _NUMERIC}
"""CSV columns read as text: a commit or an id of digits stays a string."""


def validate_row(row: Mapping[str, Any], hint: str = "") -> AnnotationRow:
    """``row`` as an :class:`AnnotationRow`; InputError naming the record and column.

    Raises:
        InputError: ``record <id>: <column>: <what is wrong>`` plus ``hint``.
    """
    try:
        return AnnotationRow.model_validate(row)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        got = f", got {err['input']!r}" if "input" in err and err["type"] != "missing" else ""
        raise InputError(
            f"record {row.get('record_id')}: {where}: {err['msg']}{got}"
            + (f" ({hint})" if hint else "")
        ) from None


def to_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a DataFrame with every column of :data:`TABLE_COLUMNS` in order (also empty).

    Columns a row does not have are null; columns beyond the table's are kept after them.
    """
    rows = list(rows)
    extra = [k for r in rows for k in r if k not in TABLE_COLUMNS]
    columns = list(TABLE_COLUMNS) + list(dict.fromkeys(extra))
    frame = pd.DataFrame(rows, columns=columns)
    frame["human_score"] = frame["human_score"].astype("int64")
    for col in ("llm_score", "sampling_weight", "sampling_probability", "confidence_value"):
        frame[col] = frame[col].astype("float64")
    for col in ("start_line", "end_line", "sampling_round", "sampling_order", "sampling_drawn"):
        frame[col] = frame[col].astype("Int64")
    return frame


def table_rows(table: pd.DataFrame) -> list[AnnotationRow]:
    """Every row of ``table`` validated as an :class:`AnnotationRow` (small tables).

    Raises:
        InputError: the first invalid row, named by record and column.
    """
    clean = table.astype(object).where(table.notna(), None)
    return [validate_row({str(k): v for k, v in r.items()}) for r in clean.to_dict("records")]


def write_table(table: pd.DataFrame, path: Path) -> str:
    """Write ``table`` atomically in the format its extension names; returns the format.

    Raises:
        InputError: the suffix names no format.
    """
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the output format from {path.name!r}: use .parquet, .csv or .jsonl"
        )
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            table.to_parquet(tmp, index=False, engine="pyarrow")
        elif fmt == "csv":
            table.to_csv(tmp, index=False)
        else:
            table.to_json(tmp, orient="records", lines=True, force_ascii=False, double_precision=15)
    return fmt


MAX_TABLE_BYTES = 2 * 2**30
"""Largest annotation table read (2 GiB; a year of a team's labels is a few hundred MB)."""


def read_table(path: Path | str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read an annotation table from Parquet, CSV or JSONL, chosen by file suffix.

    ``columns``, when given, limits a Parquet read to those of them the file
    has (``citecal estimate`` reads 7 columns of a million-row table); other
    formats are read whole. The file must be a regular file of at most
    :data:`MAX_TABLE_BYTES` (README "Security": a FIFO would block the run,
    ``/dev/zero`` named ``.csv`` would never end).

    Raises:
        InputError: the file is missing, not a regular file, too big,
            unreadable, of an unknown type or empty.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in {".parquet", ".pq", ".csv", ".jsonl", ".ndjson", ".json"}:
        check_regular_file(p, "annotation table")  # a missing file says so first
        raise InputError(
            f"unknown annotation table type '{p.suffix}' ({p}): use .parquet, .csv or .jsonl"
        )
    with open_regular(p, "annotation table", MAX_TABLE_BYTES) as fh:
        try:
            df = _parse(fh, suffix, columns)
        except pd.errors.EmptyDataError:
            raise InputError(f"annotation table is empty: {p}") from None
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            # pyarrow's ArrowInvalid / ArrowIOError subclass ValueError / OSError.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot read annotation table {p}: {first[:200]}") from None
        if df.empty:
            raise InputError(f"annotation table is empty: {p}")
        if suffix == ".csv":
            _check_last_csv_row(fh, p, len(df.columns), len(df))
    return df


def _parse(fh: IO[bytes], suffix: str, columns: Sequence[str] | None) -> pd.DataFrame:
    if suffix in {".parquet", ".pq"}:
        if columns is None:
            return pd.read_parquet(fh)
        import pyarrow.parquet as pq

        present = set(pq.read_schema(fh).names)
        fh.seek(0)
        return pd.read_parquet(fh, columns=[c for c in columns if c in present])
    if suffix == ".csv":
        return pd.read_csv(fh, dtype=_CSV_TEXT)
    return pd.read_json(fh, lines=suffix != ".json", dtype=False, precise_float=True)


def _check_last_csv_row(fh: IO[bytes], path: Path, n_columns: int, n_rows: int) -> None:
    """Reject a CSV whose last row stops short: the file was cut mid-row.

    pandas fills a short row with missing values, so a table cut by a full
    disk or a killed copy would be read as if complete. A file that ends in a
    line break ends on a row boundary (a cut inside a quoted field is already a
    parser error); otherwise its last row is tokenised again on its own (the
    parser skips whole records, quoted line breaks included) and must hold
    every column.
    """
    size = os.fstat(fh.fileno()).st_size
    fh.seek(max(0, size - 2))
    end = fh.read()
    if not end or end.endswith((b"\n", b"\r")):
        return
    fh.seek(0)
    last = pd.read_csv(fh, header=None, dtype=str, keep_default_na=False, skiprows=n_rows, nrows=1)
    if last.shape[1] < n_columns:
        fh.seek(0)
        line = 1 + sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        text = ",".join(str(v) for v in last.iloc[0])
        raise InputError(
            f"line {line}: the last row has {last.shape[1]} of {n_columns} columns "
            f"({text[:60]!r}): the file looks cut mid-row"
        )
