"""Verification stages: structural validation, classification, extractive and LLM checks."""

from citecal.verify._structural import validate_citation

__all__ = ["validate_citation"]
