"""Stage 2: structural validation of one citation (README "`citecal eval`").

Deterministic checks, in this order, each with a message a report author can
act on:

=====================  ==================================================  ===============
check                  message (example)                                   failure_type
=====================  ==================================================  ===============
path inside the repo   ``Path escapes the repository: ../secrets.env``     invalid_file
file exists            ``File not found: src/x.py``                        invalid_file
not binary             ``Binary file: assets/logo.png``                    invalid_file
UTF-8 text             ``File is not valid UTF-8 text (byte 12, line 3):`` invalid_file
start_line >= 1        ``Invalid start line 0``                            invalid_range
at most 18 digits      ``Line number too large (more than 18 digits)``     invalid_range
end_line >= start      ``End line 10 before start line 25``                invalid_range
end_line <= lines      ``Line 120 out of range: src/x.py has 87 lines``    invalid_range
=====================  ==================================================  ===============

The path is checked for safety before anything else because an escaping
path must not even be tested for existence. File problems come from the store
(:class:`~citecal.source.SourceFileError`), which caches them, so a file cited
many times is checked once.
"""

from __future__ import annotations

from citecal.models import LINE_NUMBER_OVERFLOW, Citation, ValidationResult
from citecal.source import SourceFileError, SourceStore, language_for_path


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def validate_citation(citation: Citation, store: SourceStore) -> ValidationResult:
    """Check that ``citation`` points at existing text lines of a file in ``store``.

    Returns:
        A valid result carrying the cited lines (``cited_content``) and the
        file's language, or an invalid one with ``error`` and ``failure_type``
        (``invalid_file`` or ``invalid_range``). Never raises for a bad
        citation; only store-wide failures (:class:`citecal.errors.StoreError`)
        propagate.
    """
    try:
        source = store.read(citation.file_path)
    except SourceFileError as exc:
        return ValidationResult(
            valid=False,
            error=str(exc),
            failure_type="invalid_file",
            language=language_for_path(citation.file_path),
        )
    start, end, count = citation.start_line, citation.end_line, source.line_count
    error: str | None = None
    if start < 1:
        error = f"Invalid start line {start}"
    elif max(abs(start), abs(end)) >= LINE_NUMBER_OVERFLOW:
        error = "Line number too large (more than 18 digits): no file has that many lines"
    elif end < start:
        error = f"End line {end} before start line {start}"
    elif end > count:
        where = f"Line {end}" if start == end or start <= count else f"Lines {start}-{end}"
        error = f"{where} out of range: {source.path} has {_lines(count)}"
    if error is not None:
        return ValidationResult(
            valid=False, error=error, failure_type="invalid_range", language=source.language
        )
    return ValidationResult(
        valid=True, cited_content=source.lines(start, end), language=source.language
    )
