"""citecal: check that a report's citations support its claims, and calibrate the judge."""

from citecal.models import Citation, CitationResult, EvalResult, ExtractedCitation, Verdict

__all__ = ["Citation", "CitationResult", "EvalResult", "ExtractedCitation", "Verdict"]
__version__ = "0.1.0"
