"""``citecal validate`` on 100 000 generated question-answer items (issue 11 targets).

Targets: at least 5 000 items/s end to end (the installed command, JSON output
to a file) and a peak resident memory of at most 200 MB. The items mix the
seed 003 scenarios: perfect citations, hallucinated spans, missing enhanced
fields, low alignment, quotes that are not in their evidence, and a few
malformed lines. Run: ``.venv/bin/python benchmarks/validate_throughput.py``.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_ITEMS = 100_000
TARGET_RATE = 5_000
TARGET_MB = 200
WORDS = [
    "perspective",
    "vanishing",
    "point",
    "fresco",
    "patron",
    "guild",
    "workshop",
    "cathedral",
    "dome",
    "marble",
    "bronze",
    "pigment",
    "canvas",
    "altarpiece",
    "commission",
    "apprentice",
    "florence",
    "venice",
    "rome",
    "chapel",
    "ceiling",
]


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def item(rng: random.Random, k: int) -> dict[str, object]:
    evidence = [" ".join(sentence(rng, 14) for _ in range(3)) for _ in range(3)]
    answer_parts = [sentence(rng, 12) for _ in range(4)]
    answer = " ".join(answer_parts)
    citations = []
    for j in range(3):
        idx = rng.randrange(3)
        words = evidence[idx].split()
        start = rng.randrange(len(words) - 8)
        quote = " ".join(words[start : start + 8])
        c: dict[str, object] = {
            "source": f"Source {idx}",
            "relevance": round(rng.random(), 2),
            "quote": quote,
            "evidence_idx": idx,
            "alignment_score": round(rng.uniform(0.2, 0.95), 2),
            "span_in_answer": answer_parts[j][:-1],
        }
        roll = rng.random()
        if roll < 0.05:
            c["span_in_answer"] = "A span the answer never contained"
        elif roll < 0.15:
            del c["evidence_idx"], c["alignment_score"]
        elif roll < 0.2:
            c["quote"] = "words that appear nowhere in the evidence at all"
        citations.append(c)
    return {
        "id": f"q{k}",
        "question": "What happened?",
        "answer": answer,
        "evidence": evidence,
        "citations": citations,
    }


def main() -> None:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "answers.jsonl"
        t0 = time.perf_counter()
        with src.open("w") as fh:
            for k in range(N_ITEMS):
                if k % 10_000 == 9_999:
                    fh.write('{"id": "cut line", "answer": "x", "citat\n')
                    continue
                fh.write(json.dumps(item(rng, k)) + "\n")
        size_mb = src.stat().st_size / 1e6
        elapsed = time.perf_counter() - t0
        print(f"generated {N_ITEMS:,} items ({size_mb:.0f} MB JSONL) in {elapsed:.1f}s")
        out = Path(tmp) / "validation.json"
        citecal = Path(sys.executable).with_name("citecal")
        t0 = time.perf_counter()
        proc = subprocess.run(
            [str(citecal), "validate", str(src), "-f", "json", "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - t0
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if proc.returncode not in (0, 1):
            sys.exit(f"citecal validate failed ({proc.returncode}): {proc.stderr}")
        result = json.loads(out.read_text())
        rate = result["total_qa"] / seconds
        print(
            f"validate : {result['total_qa']:,} items ({len(result['malformed'])} malformed) in "
            f"{seconds:.2f}s = {rate:,.0f} items/s (target >= {TARGET_RATE:,}; "
            f"ratio {rate / TARGET_RATE:.2f}x)"
        )
        print(
            f"memory   : peak RSS {peak_mb:.0f} MB (target <= {TARGET_MB}; "
            f"ratio {peak_mb / TARGET_MB:.2f}x)  output {out.stat().st_size / 1e6:.0f} MB"
        )
        print(f"gate     : {result['gate']['status']} ({'; '.join(result['gate']['reasons'])})")


if __name__ == "__main__":
    main()
