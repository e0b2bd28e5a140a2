"""Grouping judge requests into batch prompts (README "The LLM judge", "Security").

Claims citing the same file share a request (their code is related, and the
judge reads one file's idiom at a time), at most ``max_batch_size`` per
request; files are visited in order of first appearance so the output is
deterministic for the same input.

A judge reads a batch as a whole: one instruction it obeys in one claim's code
can turn every claim of the request (README "Security"). So a request that
hides something from a reader (invisible or look-alike characters, an encoded
run: :func:`~._injection.suspicion`) is judged alone, and a batch whose claims
together read as text addressed to the judge (a phrase split between them:
:func:`~._injection.batch_injection`) is asked claim by claim.
"""

from __future__ import annotations

from collections.abc import Sequence

from citecal.verify.judge._injection import batch_injection, suspicion
from citecal.verify.judge._types import JudgeRequest


def make_batches(
    requests: Sequence[JudgeRequest], max_batch_size: int, max_code_lines: int | None = None
) -> list[list[JudgeRequest]]:
    """Requests grouped by file, each group cut into chunks of ``max_batch_size``;
    suspicious requests, and the claims of a batch that speaks to the judge, alone."""
    if max_batch_size < 1:
        raise ValueError("max_batch_size must be at least 1")
    by_file: dict[str, list[JudgeRequest]] = {}
    alone: list[list[JudgeRequest]] = []
    for r in requests:
        if max_batch_size > 1 and suspicion(r, max_code_lines) is not None:
            alone.append([r])
        else:
            by_file.setdefault(r.file_path, []).append(r)
    batches: list[list[JudgeRequest]] = []
    for group in by_file.values():
        for i in range(0, len(group), max_batch_size):
            batch = group[i : i + max_batch_size]
            if len(batch) > 1 and batch_injection(batch, max_code_lines) is not None:
                batches.extend([r] for r in batch)
            else:
                batches.append(batch)
    return batches + alone
