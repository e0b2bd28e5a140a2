"""Argilla adapter: dataset settings from YAML, ``push`` of claim–code pairs, ``pull`` of answers.

Layered like the Argilla SDK itself: :mod:`._settings` (YAML → ``rg.Settings``)
and :mod:`._records` / :mod:`._sampling` are pure; :mod:`._client` owns the
connection and maps the SDK's failures to typed errors; :mod:`._push` and
:mod:`._pull` do the I/O.
"""

from citecal.annotate._batch import BatchSample, is_batch_output, sample_batch
from citecal.annotate._client import (
    LOCAL_API_KEY,
    ArgillaAuthError,
    ArgillaNotFound,
    ArgillaUnavailable,
    SchemaMismatch,
    argilla_errors,
    connect,
    get_dataset,
    get_workspace,
)
from citecal.annotate._pull import (
    TABLE_COLUMNS,
    PullCounts,
    PullResult,
    annotation_rows,
    parse_timestamp,
    pull_annotations,
    write_table,
)
from citecal.annotate._push import (
    PushSummary,
    push_batch,
    push_evaluation,
    repo_reader,
    to_rg_record,
)
from citecal.annotate._records import (
    AnnotationRecord,
    BuiltRecords,
    CodeLine,
    SuggestionValue,
    build_record,
    build_records,
    code_window,
    judge_agent,
    record_id,
    render_cited_code,
    report_id,
)
from citecal.annotate._sampling import (
    STRATEGIES,
    Candidate,
    Strategy,
    rule_judge_conflict,
    sample_across_reports,
    select_citations,
    uncertainty,
)
from citecal.annotate._settings import (
    DEFAULT_SPEC_PATH,
    AnnotationSpec,
    load_spec,
    parse_spec,
    settings_diff,
    to_settings,
)
from citecal.annotate._users import Annotator, NewAnnotator, add_annotator, list_annotators

__all__ = [
    "DEFAULT_SPEC_PATH",
    "LOCAL_API_KEY",
    "STRATEGIES",
    "TABLE_COLUMNS",
    "AnnotationRecord",
    "AnnotationSpec",
    "Annotator",
    "ArgillaAuthError",
    "ArgillaNotFound",
    "ArgillaUnavailable",
    "BatchSample",
    "BuiltRecords",
    "Candidate",
    "CodeLine",
    "NewAnnotator",
    "PullCounts",
    "PullResult",
    "PushSummary",
    "SchemaMismatch",
    "Strategy",
    "SuggestionValue",
    "add_annotator",
    "annotation_rows",
    "argilla_errors",
    "build_record",
    "build_records",
    "code_window",
    "connect",
    "get_dataset",
    "get_workspace",
    "is_batch_output",
    "judge_agent",
    "list_annotators",
    "load_spec",
    "parse_spec",
    "parse_timestamp",
    "pull_annotations",
    "push_batch",
    "push_evaluation",
    "record_id",
    "render_cited_code",
    "repo_reader",
    "report_id",
    "rule_judge_conflict",
    "sample_across_reports",
    "sample_batch",
    "select_citations",
    "settings_diff",
    "to_rg_record",
    "to_settings",
    "uncertainty",
    "write_table",
]
