"""``citecal eval-batch``: thousands of reports evaluated on a Dask cluster.

:mod:`._manifest` reads the manifest, :mod:`._tasks` is what runs on a
worker, :mod:`._tables` the Parquet output (schemas, committed parts,
deduplicated reads), :mod:`._cluster` the connection and the cluster-wide
judge limit, :mod:`._run` the driver. README "Many reports" and
docs/explanation/scale.md describe the whole.
"""

from citecal.batch._cluster import ClusterSlots, connect, dashboard_link, judge_slots
from citecal.batch._manifest import ManifestEntry, default_report_id, read_manifest
from citecal.batch._run import (
    DEFAULT_TASK_SIZE,
    BatchError,
    BatchInterrupted,
    BatchOptions,
    BatchSummary,
    DryRunSummary,
    Plan,
    Progress,
    Started,
    evaluate_batch,
    plan,
    run_plan,
)
from citecal.batch._tables import (
    LOCK_NAME,
    SCHEMAS,
    TABLES,
    BatchOutput,
    citation_rows,
    model_fields,
    report_row,
    to_citation,
)
from citecal.batch._tasks import BatchTask, JobSettings, TaskResult, make_tasks, run_task, task_key

__all__ = [
    "DEFAULT_TASK_SIZE",
    "LOCK_NAME",
    "SCHEMAS",
    "TABLES",
    "BatchError",
    "BatchInterrupted",
    "BatchOptions",
    "BatchOutput",
    "BatchSummary",
    "BatchTask",
    "ClusterSlots",
    "DryRunSummary",
    "JobSettings",
    "ManifestEntry",
    "Plan",
    "Progress",
    "Started",
    "TaskResult",
    "citation_rows",
    "connect",
    "dashboard_link",
    "default_report_id",
    "evaluate_batch",
    "judge_slots",
    "make_tasks",
    "model_fields",
    "plan",
    "read_manifest",
    "report_row",
    "run_plan",
    "run_task",
    "task_key",
    "to_citation",
]
