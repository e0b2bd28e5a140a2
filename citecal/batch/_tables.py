"""The batch's Parquet tables: schemas from the eval JSON models, partitioned writes, reads.

An output directory holds three datasets, each a directory of Parquet files
(one *part* per finished task), readable as one table by pandas, pyarrow,
Dask, DuckDB or Spark::

    OUT/citations.parquet/part-<key>.parquet   one row per citation: report_id + CitationResult
    OUT/reports.parquet/part-<key>.parquet     one row per report: report_id + EvalResult + summary
    OUT/errors.parquet/part-<key>.parquet      one row per report that could not be evaluated
    OUT/corrections.parquet/part-<key>.parquet one row per correction (``eval-batch --correct``)

Columns are derived from the pydantic models' JSON schema, never listed by
hand, so a field added to :class:`~citecal.models.CitationResult` or
:class:`~citecal.models.Summary` becomes a column without a change here.

**Commit protocol** (README "Many reports"). A task writes its parts in the
order citations, errors, reports, each to a hidden temporary name renamed
into place; the reports part is written even when empty and is the commit
marker. A part of any table counts only when the reports part of the same
key exists, so a worker killed between two renames leaves nothing readable
behind: the retried task rewrites the same key (keys are hashes of the
task's reports), and :meth:`BatchOutput.recover` deletes uncommitted parts
before a resumed run. Reads also keep each report's rows from one part only
(the first committed key), so even two runs racing on one directory never
show a report twice.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel

from citecal._io import atomic_path
from citecal.correct import Correction, CorrectionOutput
from citecal.errors import InputError
from citecal.models import CitationResult, EvalResult

TABLES: tuple[str, ...] = ("citations", "corrections", "errors", "reports")
"""Write order: the reports part last, as the commit marker."""

PART_PREFIX = "part-"
LOCK_NAME = ".citecal-batch.lock"
"""Locked (``flock``) by the run writing into an output directory; the empty file stays."""


# --------------------------------------------------------------------------- schemas


def _arrow_type(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> tuple[pa.DataType, bool]:
    """Arrow type of one JSON-schema node (pydantic's serialization schema), and whether
    the node allows null."""
    if "$ref" in schema:
        return _arrow_type(defs[str(schema["$ref"]).rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        if len(options) == 1:
            return _arrow_type(options[0], defs)[0], True
        raise TypeError(f"no Parquet column type for a union: {schema}")
    kind = schema.get("type")
    if kind == "string":
        return pa.string(), False
    if kind == "integer":
        return pa.int64(), False
    if kind == "number":
        return pa.float64(), False
    if kind == "boolean":
        return pa.bool_(), False
    if kind == "array":
        return pa.list_(_arrow_type(schema.get("items", {}), defs)[0]), False
    if kind == "object" and "properties" in schema:
        return pa.struct(_fields(schema, defs)), False
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        value = _arrow_type(schema["additionalProperties"], defs)[0]
        return pa.map_(pa.string(), value), False
    raise TypeError(f"no Parquet column type for JSON schema {schema}")


def _fields(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> list[pa.Field]:
    # Every column is nullable: a part written before a field was added
    # reads that column as nulls instead of failing (schema evolution).
    return [
        pa.field(name, _arrow_type(prop, defs)[0], nullable=True)
        for name, prop in schema.get("properties", {}).items()
    ]


def model_fields(model: type[BaseModel]) -> list[pa.Field]:
    """Arrow fields for every field of ``model``, in declaration order."""
    schema = model.model_json_schema(mode="serialization")
    return _fields(schema, schema.get("$defs", {}))


def _is_row_list(field: pa.Field) -> bool:
    return bool(pa.types.is_list(field.type) and pa.types.is_struct(field.type.value_type))


def _report_fields() -> list[pa.Field]:
    """EvalResult without its per-citation lists, nested models flattened into columns."""
    out: list[pa.Field] = []
    for f in model_fields(EvalResult):
        if _is_row_list(f):
            continue  # citations / failed_citations: the citations table
        if pa.types.is_struct(f.type):
            out.extend(f.type.field(i) for i in range(f.type.num_fields))  # summary
        else:
            out.append(f)
    return out


def _correction_fields() -> list[pa.Field]:
    """Correction's fields, with ``evidence`` (keys differ by strategy) as JSON text."""
    schema = Correction.model_json_schema(mode="serialization")
    properties = {**schema["properties"], "evidence": {"type": "string"}}
    return _fields({**schema, "properties": properties}, schema.get("$defs", {}))


REPORT_ID = pa.field("report_id", pa.string(), nullable=False)
MANIFEST_ROW = pa.field("manifest_row", pa.int64(), nullable=False)

SCHEMAS: dict[str, pa.Schema] = {
    "citations": pa.schema([REPORT_ID, *model_fields(CitationResult)]),
    "reports": pa.schema(
        [REPORT_ID, MANIFEST_ROW, *_report_fields(), pa.field("seconds", pa.float64())]
    ),
    "corrections": pa.schema(
        [
            REPORT_ID,
            pa.field("report", pa.string(), nullable=False),
            pa.field("report_sha256", pa.string()),
            *_correction_fields(),
        ]
    ),
    "errors": pa.schema(
        [
            REPORT_ID,
            MANIFEST_ROW,
            pa.field("report", pa.string()),
            pa.field("repo", pa.string()),
            pa.field("rev", pa.string()),
            pa.field("error", pa.string(), nullable=False),
        ]
    ),
}
"""Arrow schema of each table."""


def citation_rows(report_id: str, result: EvalResult) -> list[dict[str, Any]]:
    """The citations-table rows of one evaluated report."""
    return [{"report_id": report_id, **c.model_dump(mode="json")} for c in result.citations]


def report_row(report_id: str, row: int, result: EvalResult, seconds: float) -> dict[str, Any]:
    """The reports-table row of one evaluated report (summary fields flattened)."""
    data = result.model_dump(mode="json", exclude={"citations", "failed_citations"})
    summary = data.pop("summary")
    return {"report_id": report_id, "manifest_row": row, **data, **summary, "seconds": seconds}


def correction_rows(report_id: str, output: CorrectionOutput) -> list[dict[str, Any]]:
    """The corrections-table rows of one corrected report (``evidence`` as JSON text: its
    keys differ by strategy, README "`citecal correct`")."""
    rows = []
    for c in output.corrections:
        data = c.model_dump(mode="json")
        data["evidence"] = json.dumps(data["evidence"], sort_keys=True)
        rows.append(
            {
                "report_id": report_id,
                "report": output.report,
                "report_sha256": output.report_sha256,
                **data,
            }
        )
    return rows


def to_correction(row: Mapping[str, Any]) -> Correction:
    """A corrections-table row back as the model ``citecal correct --corrections`` writes."""
    data = {k: row[k] for k in Correction.model_fields if k in row}
    data["evidence"] = json.loads(data.get("evidence") or "{}")
    return Correction.model_validate(data)


def to_citation(row: Mapping[str, Any]) -> CitationResult:
    """A citations-table row back as the model ``citecal eval`` writes."""
    return CitationResult.model_validate(
        {k: row[k] for k in CitationResult.model_fields if k in row}
    )


# --------------------------------------------------------------------------- output directory


class BatchOutput:
    """The output directory of one batch: partitioned writes and committed, deduplicated reads."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def table_dir(self, name: str) -> Path:
        """``OUT/<name>.parquet``: a directory of parts."""
        return self.root / f"{name}.parquet"

    def part_path(self, name: str, key: str) -> Path:
        return self.table_dir(name) / f"{PART_PREFIX}{key}.parquet"

    def create(self) -> None:
        """Make the output directory and its table directories.

        Raises:
            InputError: the path exists and is not a directory, or cannot be made.
        """
        try:
            for name in TABLES:
                self.table_dir(name).mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise InputError(f"output is not a directory: {self.root}") from None
        except OSError as exc:
            raise InputError(
                f"cannot create output directory {self.root}: {exc.strerror}"
            ) from None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the output directory for one run: a second run into it is refused at once.

        The lock is the operating system's (``filelock``): a run that is killed
        lets go of it with its process, so a stale lock file never blocks.

        Raises:
            InputError: another run holds the directory, or it cannot be made.
        """
        from filelock import FileLock, Timeout

        self.create()
        path = self.root / LOCK_NAME
        guard = FileLock(path, timeout=0)
        try:
            guard.acquire()
        except Timeout:
            raise InputError(
                f"another citecal eval-batch is writing to {self.root} (it holds {path}): "
                "wait for it to end, or choose another --output"
            ) from None
        except OSError as exc:
            raise InputError(f"cannot lock output directory {self.root}: {exc.strerror}") from None
        try:
            yield
        finally:
            guard.release()

    def write_part(
        self,
        key: str,
        citations: Sequence[Mapping[str, Any]],
        reports: Sequence[Mapping[str, Any]],
        errors: Sequence[Mapping[str, Any]],
        corrections: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Write one task's rows; the reports part (always written) commits them."""
        rows = {
            "citations": citations,
            "corrections": corrections,
            "errors": errors,
            "reports": reports,
        }
        for name in TABLES:
            if not rows[name] and name != "reports":
                continue
            table = pa.Table.from_pylist(list(rows[name]), schema=SCHEMAS[name])
            with atomic_path(self.part_path(name, key)) as tmp:
                pq.write_table(table, tmp)

    # ----------------------------------------------------------------- state

    def _keys(self, name: str) -> list[str]:
        directory = self.table_dir(name)
        if not directory.is_dir():
            return []
        return sorted(
            p.name[len(PART_PREFIX) : -len(".parquet")]
            for p in directory.glob(f"{PART_PREFIX}*.parquet")
        )

    def committed(self) -> list[str]:
        """Keys of the committed parts, sorted."""
        return self._keys("reports")

    def has_data(self) -> bool:
        """True when any table holds a part (committed or not)."""
        return any(self._keys(name) for name in TABLES)

    def recover(self) -> int:
        """Delete parts without a commit marker and leftover temporary files; return the count.

        Only safe while no task writes to this directory (before a run).
        """
        committed = set(self.committed())
        removed = 0
        for name in TABLES:
            directory = self.table_dir(name)
            if not directory.is_dir():
                continue
            for key in self._keys(name):
                if key not in committed:
                    self.part_path(name, key).unlink(missing_ok=True)
                    removed += 1
            for tmp in directory.glob(".*.tmp"):
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
                    removed += 1
        return removed

    def _owners(self) -> tuple[dict[str, str], bool]:
        """report_id → the first committed key holding it (in reports or errors).

        The flag says whether any report is held by more than one part.
        """
        owners: dict[str, str] = {}
        repeated = False
        committed = set(self.committed())
        parts = [
            (key, self.part_path(name, key))
            for name in ("reports", "errors")
            for key in self._keys(name)
            if key in committed
        ]
        for key, path in sorted(parts):
            for rid in pq.read_table(path, columns=["report_id"]).column(0).to_pylist():
                repeated = repeated or owners.get(rid, key) != key
                owners.setdefault(rid, key)
        return owners, repeated

    def done_ids(self) -> set[str]:
        """Reports already in the output (evaluated or failed): what ``--resume`` skips."""
        return set(self._owners()[0])

    # ----------------------------------------------------------------- reads

    def scan(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        filter: pc.Expression | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Committed rows of table ``name`` in record batches, each report from one part only.

        Memory stays at one batch, so a 100 000-report output can be read
        through. Columns missing from older parts read as nulls.
        """
        committed = set(self.committed())
        keys = [k for k in self._keys(name) if k in committed]
        if not keys:
            return
        # Imported here: pyarrow.dataset loads pandas (~40 MB), which workers,
        # who only write parts, do not need (docs/explanation/scale.md, memory per worker).
        import pyarrow.dataset as ds

        schema = SCHEMAS[name]
        owners, repeated = self._owners()
        paths = {str(self.part_path(name, k)): k for k in keys}
        dataset = ds.dataset(list(paths), schema=schema, format="parquet")
        cols = list(columns) if columns is not None else None
        if not repeated:
            yield from dataset.to_batches(columns=cols, filter=filter)
            return
        for fragment in dataset.get_fragments():
            key, where = paths[fragment.path], filter
            rids = pq.read_table(fragment.path, columns=["report_id"]).column(0).to_pylist()
            foreign = sorted({r for r in rids if owners.get(r, key) != key})
            if foreign:
                keep = ~pc.field("report_id").isin(foreign)
                where = keep if where is None else where & keep
            yield from fragment.to_batches(schema=schema, columns=cols, filter=where)

    def read(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        filter: pc.Expression | None = None,
    ) -> pa.Table:
        """:meth:`scan` as one table (for outputs that fit in memory, or a few columns)."""
        schema = SCHEMAS[name]
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        return pa.Table.from_batches(list(self.scan(name, columns, filter)), schema=schema)
