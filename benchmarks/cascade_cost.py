"""Judge calls with the cascade against judging every claim (README "The cascade").

On the ground truth (`datasets/groundtruth`, `make groundtruth` first), each
package is evaluated with the local OpenAI-protocol test server as the judge
(`citecal.testing.FakeOpenAIServer`; the judge escalates unsure answers to a
second model, so it plays two models), once as today — every claim the rules
leave open goes to the judge — and once with a cascade of rules → local
verifier → judge whose verifier and thresholds were fitted on the *other*
packages (leave one package out). Calls, tokens and cost are the judge's own
figures from the two runs.

    .venv/bin/python benchmarks/cascade_cost.py [--agreement 0.9] [--only PKG ...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agreement", default="supports=0.95,not_supports=0.90")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--only", nargs="*", default=[])
    args = parser.parse_args()

    from citecal.bench import load_groundtruth
    from citecal.bench._folds import groundtruth_rows
    from citecal.cascade import parse_agreement
    from citecal.cascade._training import Row, fit_cascade
    from citecal.commands._judge import build_judge_or_reason
    from citecal.config import load_config
    from citecal.pipeline import evaluate_report
    from citecal.source import open_store
    from citecal.testing import FakeOpenAIServer

    levels = parse_agreement(args.agreement)
    sets = load_groundtruth(
        ROOT / "datasets" / "groundtruth", ROOT / ".citecal" / "groundtruth", tuple(args.only)
    )
    config = load_config(None, None, {})
    rows: dict[str, list[Row]] = {}
    for row in groundtruth_rows(sets, config)[1].values():  # as bench --folds trains
        rows.setdefault(row.group, []).append(row)
    totals = {"plain": [0, 0, 0.0], "cascade": [0, 0, 0.0]}
    decided_local = 0
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        os.environ.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="test-key",
            CITECAL_CACHE_PATH=str(Path(tmp) / "cache.sqlite3"),
        )
        for pkg in sorted(rows):
            train = [r for p, rs in rows.items() if p != pkg for r in rs]
            spec = fit_cascade(train, levels, args.delta, {"source": f"groundtruth without {pkg}"})
            for truth in (s for s in sets if s.package == pkg):
                text = truth.report_path.read_text(encoding="utf-8")
                for mode, cascade in (("plain", None), ("cascade", spec)):
                    judge, reason = build_judge_or_reason(config, None, None, True)
                    assert judge is not None, reason
                    try:
                        with open_store(truth.sources, None, config.validation) as store:
                            res = evaluate_report(text, store, config, judge=judge, cascade=cascade)
                    finally:
                        judge.close()
                    s = res.summary
                    totals[mode][0] += s.llm_calls
                    totals[mode][1] += s.llm_tokens
                    totals[mode][2] += s.cost_usd
                    if cascade is not None and s.cascade is not None:
                        decided_local += s.cascade.decided_by.get("local", 0)
    took = time.perf_counter() - t
    plain, casc = totals["plain"], totals["cascade"]
    print(f"{len(sets)} label sets, agreement {args.agreement}, δ = {args.delta} ({took:.0f} s)")
    print(f"  every claim to the judge: {plain[0]} calls, {plain[1]} tokens, ${plain[2]:.4f}")
    print(f"  with the cascade        : {casc[0]} calls, {casc[1]} tokens, ${casc[2]:.4f}")
    print(f"  local verifier decided  : {decided_local} citations without a judge call")
    ratio = casc[0] / plain[0] if plain[0] else float("nan")
    print(f"  ratio of judge calls    : {ratio:.2f} (cascade / every claim)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
