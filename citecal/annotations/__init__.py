"""The annotation table: its columns, its row model, and reading / writing it.

``citecal pull`` writes this table, ``calibrate``, ``estimate`` and
``rejudge`` read it, and other tools may produce it (README "Annotation
table"). This package owns it: column names, :class:`AnnotationRow`, the raw
:class:`RecordData` ``push`` stores with each Argilla record, the schema
version, and Parquet / CSV / JSONL I/O with validation.
"""

from citecal.annotations._io import (
    TABLE_FORMATS,
    read_table,
    table_rows,
    to_frame,
    validate_row,
    write_table,
)
from citecal.annotations._row import (
    ANNOTATION_COLUMNS,
    CONFIDENCE_COLUMNS,
    EXTRA_COLUMNS,
    RAW_COLUMNS,
    SCHEMA_VERSION,
    TABLE_COLUMNS,
    AnnotationRow,
    RecordData,
)
from citecal.annotations._validate import (
    JUDGE_ANSWER_COLUMNS,
    REQUIRED_COLUMNS,
    VOCABULARIES,
    check_duplicates,
    check_vocabularies,
    human_scores,
    llm_scores,
    require_columns,
    require_judge_answer,
)

__all__ = [
    "ANNOTATION_COLUMNS",
    "CONFIDENCE_COLUMNS",
    "EXTRA_COLUMNS",
    "JUDGE_ANSWER_COLUMNS",
    "RAW_COLUMNS",
    "REQUIRED_COLUMNS",
    "SCHEMA_VERSION",
    "TABLE_COLUMNS",
    "TABLE_FORMATS",
    "VOCABULARIES",
    "AnnotationRow",
    "RecordData",
    "check_duplicates",
    "check_vocabularies",
    "human_scores",
    "llm_scores",
    "read_table",
    "require_columns",
    "require_judge_answer",
    "table_rows",
    "to_frame",
    "validate_row",
    "write_table",
]
