"""Excerpt verification throughput (issue 11 target: at least 5 000 excerpts/s).

A context directory of 200 generated Markdown documents (~100 lines, with
sections) and one answer citing them 10 000 times, mixing the seed 002 forms:
verbatim quotes at a line range, paraphrases of a section, pages, excerpts
that are not there (so the best-span search over the whole item runs) and
missing items. Timed: levels 1-3 for every citation (item lookup, location,
excerpt matching, best span), as ``citecal eval`` runs them, on a fresh store;
then the whole ``citecal eval --no-llm`` for reference.
Run: ``.venv/bin/python benchmarks/excerpt_throughput.py``.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from citecal.config import Config
from citecal.extract import extract_citations
from citecal.pipeline import evaluate_report
from citecal.source import open_store
from citecal.verify._excerpt import locate_citation

N_DOCS = 200
N_CITATIONS = 10_000
TARGET = 5_000
WORDS = [
    "deadline",
    "budget",
    "launch",
    "review",
    "onboarding",
    "revenue",
    "hiring",
    "churn",
    "pricing",
    "privacy",
    "notice",
    "design",
    "engineering",
    "quarter",
    "release",
    "storage",
    "session",
    "server",
    "mobile",
    "customer",
    "support",
]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14))).capitalize() + "."


def document(rng: random.Random, n: int) -> list[str]:
    lines = [f"# Document {n}", ""]
    for s in range(5):
        lines += [f"## Section {s}", ""]
        lines += [sentence(rng) for _ in range(18)]
        lines.append("")
    return lines


def main() -> None:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = []
        for n in range(N_DOCS):
            lines = document(rng, n)
            docs.append(lines)
            (root / f"doc-{n}.md").write_text("\n".join(lines) + "\n")
        parts = []
        for k in range(N_CITATIONS):
            n = rng.randrange(N_DOCS)
            lines = docs[n]
            line = rng.choice([i for i, t in enumerate(lines, 1) if t and not t.startswith("#")])
            text = lines[line - 1]
            roll = k % 5
            if roll == 0:
                cite = f'"{text[:-1]}" [[doc-{n}:L{line}-{line + 2}]]'
            elif roll == 1:
                words = text[:-1].split()
                rng.shuffle(words)
                cite = f"{' '.join(words)} [[doc-{n}:sec-section-{(line - 3) // 21}]]"
            elif roll == 2:
                cite = f'"{text[:-1]}" [[doc-{n}:p{(line - 1) // 50 + 1}]]'
            elif roll == 3:
                cite = f'"the quarterly numbers were never published" [[doc-{n}:L{line}]]'
            else:
                cite = f'"{text[:-1]}" [[missing-{n}]]'
            parts.append(f"Claim {k}: {cite}.\n")
        report = "\n".join(parts)
        extracted = extract_citations(report)
        assert len(extracted) == N_CITATIONS, len(extracted)
        config = Config()
        store = open_store(root)
        t0 = time.perf_counter()
        statuses: dict[str, int] = {}
        for ex in extracted:
            _, _, check = locate_citation(ex, store, config)
            statuses[check.status] = statuses.get(check.status, 0) + 1
        seconds = time.perf_counter() - t0
        rate = N_CITATIONS / seconds
        print(f"context  : {N_DOCS} documents, {N_CITATIONS:,} excerpt citations ({statuses})")
        print(
            f"verify   : {seconds:.2f}s = {rate:,.0f} excerpts/s (target >= {TARGET:,}; "
            f"ratio {rate / TARGET:.2f}x)"
        )
        t0 = time.perf_counter()
        result = evaluate_report(report, open_store(root), config, no_judge_reason="--no-llm")
        seconds = time.perf_counter() - t0
        print(
            f"eval     : {seconds:.2f}s = {N_CITATIONS / seconds:,.0f} citations/s end to end "
            f"(extraction, excerpts, term matching; {result.summary.excerpt_verified:,} verified)"
        )


if __name__ == "__main__":
    main()
