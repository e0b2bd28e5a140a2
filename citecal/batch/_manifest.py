"""The batch manifest: which reports to evaluate against which repository and revision.

A manifest is a table (CSV, JSONL or Parquet, chosen by suffix) with the
columns ``report`` and ``repo``, and optionally ``rev`` (a git revision) and
``id`` (the report's id in the output tables). Relative paths are relative to
the manifest's own directory, so a manifest moves with the files it names;
they are made absolute here because Dask workers do not share the driver's
working directory (README "Many reports").

A malformed manifest (unreadable, no ``report``/``repo`` column, two rows with
one id) is an :class:`~citecal.errors.InputError` for the whole batch. A row
that is merely unusable (an empty ``report``) is kept with a ``problem`` and
ends in ``errors.parquet``, like a missing report file or an unknown revision:
one bad row never stops the other 99 999.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citecal._io import check_regular_file
from citecal.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

REQUIRED = ("report", "repo")
OPTIONAL = ("rev", "id")
SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One report to evaluate.

    ``report`` and ``repo`` are absolute paths; ``row`` is the 1-based data
    row in the manifest (for messages); ``problem`` says why the row cannot
    be evaluated at all (it then goes straight to ``errors.parquet``).
    """

    id: str
    report: str
    repo: str
    rev: str | None
    row: int
    problem: str | None = None


def default_report_id(report: str, repo: str, rev: str | None) -> str:
    """Stable id of a row without an ``id``: a hash of its values as written.

    The values as written (not the resolved paths) keep ids stable when the
    manifest and its files move together, so ``--resume`` still recognises
    finished reports.
    """
    h = hashlib.sha256(f"{report}\x1f{repo}\x1f{rev or ''}".encode())
    return h.hexdigest()[:16]


def _cell(value: object) -> str | None:
    """A manifest cell as text; None for empty (NaN, None, blank)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _resolve(base: Path, value: str) -> str:
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base / path).absolute())


def _read(path: Path) -> pd.DataFrame:
    import pandas as pd  # the driver's only: workers never read a manifest

    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            f"unknown manifest type '{path.suffix}' ({path}): use .csv, .jsonl or .parquet"
        )
    check_regular_file(path, "manifest")  # README "Security": a FIFO would block the driver
    try:
        if kind == "csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        if kind == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_parquet(path)
    except pd.errors.EmptyDataError:
        raise InputError(f"manifest is empty: {path}") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        # pyarrow's ArrowInvalid / ArrowIOError subclass ValueError / OSError.
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"cannot read manifest {path}: {first[:200]}") from None


def read_manifest(path: Path | str) -> list[ManifestEntry]:
    """Every row of the manifest at ``path``, in order.

    Raises:
        InputError: the file is missing, unreadable, of an unknown type,
            empty, lacks ``report`` or ``repo``, or repeats an id.
    """
    p = Path(path)
    df = _read(p)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(
            f"manifest {p} lacks column(s) {', '.join(missing)} "
            f"(has: {', '.join(map(str, df.columns[:12])) or 'none'}; needs report, repo, "
            "optional rev, id)"
        )
    if df.empty:
        raise InputError(f"manifest is empty: {p}")
    base = p.parent.absolute()
    entries: list[ManifestEntry] = []
    first_row: dict[str, int] = {}
    columns = {
        c: df[c].tolist() if c in df.columns else [None] * len(df) for c in (*REQUIRED, *OPTIONAL)
    }
    for i in range(len(df)):
        report, repo = _cell(columns["report"][i]), _cell(columns["repo"][i])
        rev, given_id = _cell(columns["rev"][i]), _cell(columns["id"][i])
        row = i + 1
        rid = given_id or default_report_id(report or "", repo or "", rev)
        if rid in first_row:
            raise InputError(
                f"manifest {p}: row {row} has the same id as row {first_row[rid]} ({rid!r}); "
                "ids must be unique so that --resume knows which reports are done"
            )
        first_row[rid] = row
        problem = None
        if report is None:
            problem = "report is empty"
        elif repo is None:
            problem = "repo is empty"
        entries.append(
            ManifestEntry(
                id=rid,
                report=_resolve(base, report) if report else "",
                repo=_resolve(base, repo) if repo else "",
                rev=rev,
                row=row,
                problem=problem,
            )
        )
    return entries
