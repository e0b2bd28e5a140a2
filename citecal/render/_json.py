"""JSON for machines: exactly the schema documented in README (schema_version 1)."""

from __future__ import annotations

from citecal.models import EvalResult


def render_json(result: EvalResult) -> str:
    """Serialise with stable key order (model field order) and a trailing newline."""
    return result.model_dump_json(indent=2) + "\n"
