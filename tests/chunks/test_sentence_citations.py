"""Seed 004 properties 3 and 4 through ``citecal eval``: ``[doc.md:S:N]`` citations.

Property 3: a citation is valid exactly when its sentence exists. Property 4:
the evaluation's validity rate is valid citations / total citations.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from citecal.chunks import chunk_text
from citecal.config import Config
from citecal.pipeline import evaluate_report
from citecal.source import open_store

WORDS = ["cache", "model", "verdict", "store", "judge", "prompt", "report", "token"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=2, max_size=6), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=10),
)
def test_sentence_citations_are_valid_exactly_when_the_sentence_exists(
    sentences: list[list[str]], cited: list[int]
) -> None:
    doc = " ".join(" ".join(words).capitalize() + "." for words in sentences) + "\n"
    n_chunks = len(chunk_text(doc, "doc.md"))
    report = "".join(f"Claim number {k} about the cache [doc.md:S:{k}].\n\n" for k in cited)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "doc.md").write_text(doc)
        result = evaluate_report(report, open_store(Path(tmp)), Config(), no_judge_reason="-")
    assert [r.valid for r in result.citations] == [k < n_chunks for k in cited]
    for r, k in zip(result.citations, cited, strict=True):
        if r.valid:  # the cited content is that sentence's text
            assert r.cited_code == chunk_text(doc, "doc.md")[k].content
    valid = sum(k < n_chunks for k in cited)
    assert result.summary.valid_citations == valid
    assert result.summary.validity_rate == valid / len(cited)
