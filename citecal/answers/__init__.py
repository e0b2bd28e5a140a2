"""Structured answer citations: three-level validation, quality scores, gates.

README "`citecal validate`" describes the checks and the gate.

``citecal validate`` reads question-answer items whose citations carry
``source``, ``relevance``, ``quote``, ``evidence_idx``, ``alignment_score`` and
``span_in_answer``, checks each at the structure, semantics and quality levels,
aggregates per item and per batch, and decides the P0/P1/P2 gate. The same
gate rules, on an evaluation's summary, are ``citecal eval --gate``.
"""

from citecal.answers._annotate import answer_verdict, answers_to_eval
from citecal.answers._gate import answer_gate, batch_gate, eval_gate
from citecal.answers._models import (
    AnswerMetrics,
    CitationCheck,
    ItemResult,
    MalformedRecord,
    ValidateResult,
)
from citecal.answers._stream import (
    read_records,
    run_validation,
    validate_answers,
    validate_items,
    write_validation,
)
from citecal.answers._validate import check_citation, quote_score, validate_item

__all__ = [
    "AnswerMetrics",
    "CitationCheck",
    "ItemResult",
    "MalformedRecord",
    "ValidateResult",
    "answer_gate",
    "answer_verdict",
    "answers_to_eval",
    "batch_gate",
    "check_citation",
    "eval_gate",
    "quote_score",
    "read_records",
    "run_validation",
    "validate_answers",
    "validate_item",
    "validate_items",
    "write_validation",
]
