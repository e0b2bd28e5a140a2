"""Throughput of the deterministic pipeline (issue: evaluation core).

Generates a repository of 2 000 source files in six languages and a report with
10 000 citations (valid, missing files, out-of-range, reversed ranges), then
times ``evaluate_report`` (no LLM) and a *floor*: a minimal script that only
finds the citations with a regex and reads the cited lines. Each run happens in
a fresh child process so peak memory (ru_maxrss) belongs to that run alone.

    .venv/bin/python benchmarks/eval_throughput.py [--files 2000] [--citations 10000]
    .venv/bin/python benchmarks/eval_throughput.py --cascade FILE   # another cascade file

The pipeline runs twice, each in a fresh process: with the shipped default
cascade (``eval``'s default since issue 30: every valid citation's verifier
features, p_supports, the review list) and without it (``--no-cascade``); the
ratio of the two is printed.

Targets (2-core machine): >= 4 000 citations/s with the default cascade on
(issue 30), >= 5 000 without; peak memory <= 500 MB; <= 5x the floor's time.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TEMPLATES = {
    "py": (
        "class {C}:\n"
        '    """{C} keeps {n} records."""\n\n'
        "    def __init__(self, limit):\n"
        "        self.limit = limit\n\n"
        "    def {f}(self, value):\n"
        "        # validate the value before storing it\n"
        "        if value > self.limit:\n"
        '            raise ValueError("{f} failed")\n'
        "        return value\n\n"
    ),
    "js": (
        "export class {C} {{\n"
        "  constructor(limit) {{\n"
        "    this.limit = limit;\n"
        "  }}\n\n"
        "  {f}(value) {{\n"
        "    // validate the value before storing it\n"
        '    if (value > this.limit) throw new Error("{f} failed");\n'
        "    return value;\n"
        "  }}\n"
        "}}\n\n"
    ),
    "ts": (
        "export interface {C}Options {{\n  limit: number;\n}}\n\n"
        "export function {f}(opts: {C}Options, value: number): number {{\n"
        '  if (value > opts.limit) {{ throw new Error("{f} failed"); }}\n'
        "  return value;\n}}\n\n"
    ),
    "go": (
        "type {C} struct {{\n\tLimit int\n}}\n\n"
        "// {f} validates the value before storing it.\n"
        "func (c *{C}) {f}(value int) (int, error) {{\n"
        '\tif value > c.Limit {{\n\t\treturn 0, fmt.Errorf("{f} failed")\n\t}}\n'
        "\treturn value, nil\n}}\n\n"
    ),
    "java": (
        "class {C} {{\n  private int limit;\n\n"
        "  int {f}(int value) {{\n"
        "    // validate the value before storing it\n"
        '    if (value > limit) throw new IllegalArgumentException("{f} failed");\n'
        "    return value;\n  }}\n}}\n\n"
    ),
    "rs": (
        "pub struct {C} {{\n    limit: i64,\n}}\n\n"
        "impl {C} {{\n"
        "    /// {f} validates the value before storing it.\n"
        "    pub fn {f}(&self, value: i64) -> Result<i64, String> {{\n"
        '        if value > self.limit {{ return Err("{f} failed".into()); }}\n'
        "        Ok(value)\n    }}\n}}\n\n"
    ),
}

CLAIMS = [
    "The `{f}` method of `{C}` raises an error when the value exceeds the limit",
    "The {C} class validates values before storing them",
    "This module handles input validation for {C} records",
    "The `{f}` function returns the value unchanged when it is within the limit",
    "The `{C}` type caches results in a `LRUCache`",
]


Symbol = tuple[str, str, int]
"""(class name, function name, first line) of one template block."""


def write_module(
    path: Path, ext: str, n_blocks: int, names: Callable[[int], tuple[str, str]]
) -> tuple[int, list[Symbol]]:
    """One synthetic source file of ``n_blocks`` template blocks; (line count, symbols).

    ``names(b)`` names block ``b`` (called in block order, so a caller drawing
    names from its random generator gets the same file every time).
    """
    blocks, symbols, line = [], [], 1
    for b in range(n_blocks):
        cls, fn = names(b)
        block = TEMPLATES[ext].format(C=cls, f=fn, n=b)
        symbols.append((cls, fn, line))
        line += block.count("\n")
        blocks.append(block)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(blocks))
    return line - 1, symbols


def mixed_citation(rng: random.Random, rel: str, count: int, start: int) -> str:
    """A citation of the block at ``start``: 80% valid, else missing file, past end, reversed."""
    kind = rng.random()
    if kind < 0.80:
        return f"[{rel}:{start}-{min(count, start + 9)}]"
    if kind < 0.88:
        return f"[{rel.replace('mod_', 'missing_')}:{start}-{start + 5}]"
    if kind < 0.95:
        return f"[{rel}:{count + 5}-{count + 20}]"
    return f"[{rel}:{start + 5}-{start}]"


def generate(root: Path, n_files: int, n_citations: int, seed: int = 7) -> Path:
    """Write the synthetic repository and report; return the report path."""
    rng = random.Random(seed)
    langs = list(TEMPLATES)
    files: list[tuple[str, int, list[Symbol]]] = []
    for i in range(n_files):
        ext = langs[i % len(langs)]
        rel = f"pkg{i % 40}/mod_{i}.{ext}"
        count, symbols = write_module(
            root / "repo" / rel,
            ext,
            rng.randint(4, 12),
            lambda b: (f"Widget{i}x{b}", f"check_{i}_{b}"),  # noqa: B023 (called at once)
        )
        files.append((rel, count, symbols))
    paragraphs = ["# Synthetic report", ""]
    for n in range(n_citations):
        rel, count, symbols = rng.choice(files)
        cls, fn, start = rng.choice(symbols)
        claim = rng.choice(CLAIMS).format(C=cls, f=fn)
        cite = mixed_citation(rng, rel, count, start)
        if n % 40 == 0:
            paragraphs += ["", f"## Section {n // 40}", ""]
        paragraphs.append(f"{claim} {cite}.")
    report = root / "report.md"
    report.write_text("\n".join(paragraphs) + "\n")
    return report


FLOOR = r"""
import re, sys, time
from pathlib import Path
report, repo = Path(sys.argv[1]), Path(sys.argv[2])
t = time.perf_counter()
text = report.read_text()
cache = {}
n = 0
for m in re.finditer(r"\[([^:\]\s]+):(\d+)-(\d+)\]", text):
    path, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    lines = cache.get(path)
    if lines is None:
        p = repo / path
        lines = p.read_text().splitlines() if p.is_file() else []
        cache[path] = lines
    "\n".join(lines[a - 1 : b])
    n += 1
print(n, time.perf_counter() - t)
"""

PIPELINE = r"""
import sys, time
from pathlib import Path
from citecal.config import Config
from citecal.pipeline import evaluate_report
from citecal.source import open_store
report, repo = Path(sys.argv[1]), Path(sys.argv[2])
cascade = None
if len(sys.argv) > 3:
    from citecal.cascade import load_cascade
    cascade = load_cascade(sys.argv[3])
t = time.perf_counter()
store = open_store(repo)
result = evaluate_report(
    report.read_text(), store, Config(), no_judge_reason="benchmark", cascade=cascade
)
elapsed = time.perf_counter() - t
s = result.summary
print(s.total_citations, elapsed, s.valid_citations, s.extractive_checked, s.unverified)
"""


def run_child(code: str, report: Path, repo: Path, *extra: str) -> tuple[list[str], float]:
    """Run ``code`` in a fresh interpreter; return its printed fields and peak RSS in MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run(
        [sys.executable, "-c", code, str(report), str(repo), *extra],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return out, max(peak, before) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--citations", type=int, default=10000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--cascade", default="default", help="the cascade of the 'on' run (FILE or default)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        report = generate(root, args.files, args.citations)
        took = time.perf_counter() - t
        print(f"generated {args.files} files, {args.citations} citations in {took:.1f}s")
        floor, _floor_mb = run_child(FLOOR, report, root / "repo")
        off, off_mb = run_child(PIPELINE, report, root / "repo")
        pipe, pipe_mb = run_child(PIPELINE, report, root / "repo", args.cascade)
    n, floor_s = int(floor[0]), float(floor[1])
    total, pipe_s = int(pipe[0]), float(pipe[1])
    off_s = float(off[1])
    rate, off_rate = total / pipe_s, int(off[0]) / off_s
    figures = {
        "citations": total,
        "pipeline_seconds": round(pipe_s, 3),
        "citations_per_second": round(rate),
        "no_cascade_seconds": round(off_s, 3),
        "no_cascade_citations_per_second": round(off_rate),
        "ratio_cascade_vs_none": round(rate / off_rate, 3),
        "peak_memory_mb": round(max(pipe_mb, off_mb), 1),
        "floor_seconds": round(floor_s, 3),
        "floor_citations": n,
        "ratio_vs_floor": round(pipe_s / floor_s, 2),
        "valid": int(pipe[2]),
        "extractive_checked": int(pipe[3]),
        "unverified": int(pipe[4]),
    }
    print(
        f"cascade  : {total} citations in {pipe_s:.2f}s = {rate:,.0f} citations/s with the "
        f"{args.cascade} cascade (target >= 4,000)  peak RSS {pipe_mb:.0f} MB (target <= 500)"
    )
    print(
        f"none     : {int(off[0])} citations in {off_s:.2f}s = {off_rate:,.0f} citations/s "
        f"with --no-cascade (target >= 5,000)  peak RSS {off_mb:.0f} MB"
    )
    print(f"ratio    : cascade on / off = {rate / off_rate:.2f} (the cascade's cost in speed)")
    print(f"floor    : {n} citations in {floor_s:.3f}s (regex + read cited lines)")
    print(f"ratio    : {pipe_s / floor_s:.1f}x the floor (target <= 5x)")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
