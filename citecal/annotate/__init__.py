"""Argilla adapter: dataset settings from YAML, ``push`` of claim–code pairs, ``pull`` of answers.

Layered like the Argilla SDK itself: :mod:`._settings` (YAML → ``rg.Settings``)
and :mod:`._records` / :mod:`._sampling` are pure; :mod:`._client` owns the
connection and maps the SDK's failures to typed errors; :mod:`._push`,
:mod:`._pull` and :mod:`._users` do the I/O. This package exports what the
commands and users call; helpers stay importable from their private modules.
The annotation table itself belongs to :mod:`citecal.annotations`.
"""

from citecal.annotate._batch import is_batch_output
from citecal.annotate._client import (
    ArgillaAuthError,
    ArgillaNotFound,
    ArgillaUnavailable,
    SchemaMismatch,
    connect,
)
from citecal.annotate._pull import PullCounts, PullResult, parse_timestamp, pull_annotations
from citecal.annotate._push import PushSummary, push_batch, push_evaluation
from citecal.annotate._records import build_records
from citecal.annotate._sampling import STRATEGIES, Strategy
from citecal.annotate._settings import DEFAULT_SPEC_PATH, AnnotationSpec, load_spec, parse_spec
from citecal.annotate._users import Annotator, NewAnnotator, add_annotator, list_annotators

__all__ = [
    "DEFAULT_SPEC_PATH",
    "STRATEGIES",
    "AnnotationSpec",
    "Annotator",
    "ArgillaAuthError",
    "ArgillaNotFound",
    "ArgillaUnavailable",
    "NewAnnotator",
    "PullCounts",
    "PullResult",
    "PushSummary",
    "SchemaMismatch",
    "Strategy",
    "add_annotator",
    "build_records",
    "connect",
    "is_batch_output",
    "list_annotators",
    "load_spec",
    "parse_spec",
    "parse_timestamp",
    "pull_annotations",
    "push_batch",
    "push_evaluation",
]
