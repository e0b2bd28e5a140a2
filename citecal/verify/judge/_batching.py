"""Grouping judge requests into batch prompts (README "The LLM judge").

Claims citing the same file share a request (their code is related, and the
judge reads one file's idiom at a time), at most ``max_batch_size`` per
request; files are visited in order of first appearance so the output is
deterministic for the same input.
"""

from __future__ import annotations

from collections.abc import Sequence

from citecal.verify.judge._types import JudgeRequest


def make_batches(requests: Sequence[JudgeRequest], max_batch_size: int) -> list[list[JudgeRequest]]:
    """Requests grouped by file, each group cut into chunks of ``max_batch_size``."""
    if max_batch_size < 1:
        raise ValueError("max_batch_size must be at least 1")
    by_file: dict[str, list[JudgeRequest]] = {}
    for r in requests:
        by_file.setdefault(r.file_path, []).append(r)
    batches: list[list[JudgeRequest]] = []
    for group in by_file.values():
        for i in range(0, len(group), max_batch_size):
            batches.append(group[i : i + max_batch_size])
    return batches
