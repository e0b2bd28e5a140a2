"""The review list on the ground truth, out of sample (issue 30; docs/explanation/cascade.md).

Leave one package out: for each package of ``datasets/groundtruth``, the local
verifier is trained and its calibrator fitted on the other packages only, then
the held-out package's valid citations get their ``p_supports``. Printed, for
all labels and for natural and planted reports apart:

* ROC AUC of ``p_supports`` (target >= 0.93 on natural reports);
* the unsupported share among the 10% and 20% of valid citations ranked most
  doubtful (targets >= 90% and >= 80%);
* the reliability table: per risk band, the unsupported share the summary
  states (the band's share in the training folds' labels), the mean predicted
  1 - p_supports, and the share people found (target: within 5 points);
* what the judge-verifier disagreement rule (issue 29 1(c)) costs a right judge in
  abstentions, and how many wrong ``supports`` it would catch;
* the proposed place (the correction index's best place in the cited file, no
  judge) of every unsupported citation whose right place the labels know: right
  when it overlaps the labelled range (target >= 60%; baseline: ``correct
  --no-llm`` relocated 2% of misplaced citations on unseen reports).

    .venv/bin/python benchmarks/review_list.py [--dataset datasets/groundtruth] [--json]

Re-run it when the ground truth grows: nothing here is tuned to today's labels
(the verifier's C and the band edges are fixed constants in citecal.cascade).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"auc": 0.93, "top10": 0.90, "top20": 0.80, "band_gap": 0.05, "place": 0.60}
PLACE_BASELINE = 0.02  # correct --no-llm on unseen reports (issue 30)


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1%}"


def places(scored: list, sets: list) -> dict[str, dict[str, int]]:  # type: ignore[type-arg]
    """Proposed places of the unsupported labelled citations with a known right place."""
    from citecal.correct import propose_places
    from citecal.models import Citation
    from citecal.source import open_store

    by_package = {g.package: g for g in sets}
    todo: dict[str, list] = {}  # type: ignore[type-arg]
    for s in scored:
        label, row = s.label, s.row
        if s.human or row is None or not row.valid or label.correct is None:
            continue
        todo.setdefault(s.package, []).append(s)
    out: dict[str, dict[str, int]] = {}
    for package, items in sorted(todo.items()):
        with open_store(by_package[package].sources) as store:
            found = []
            for s in items:  # one claim at a time, as a report's review list asks
                cited = Citation(s.row.file_path, s.row.start_line, s.row.end_line)
                found.append(propose_places(store, [(s.row.claim, cited)])[0])
        for s, place in zip(items, found, strict=True):
            c = s.label.correct
            right = (
                place is not None
                and place.file_path == c.file_path
                and place.start_line <= c.end_line
                and c.start_line <= place.end_line
            )
            for key in ("all", s.label.origin):
                slot = out.setdefault(key, {"n": 0, "proposed": 0, "right": 0})
                slot["n"] += 1
                slot["proposed"] += place is not None
                slot["right"] += right
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=ROOT / "datasets" / "groundtruth")
    parser.add_argument("--sources", type=Path, default=ROOT / ".citecal" / "groundtruth")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()

    from citecal.bench import load_groundtruth
    from citecal.bench._folds import groundtruth_rows, leave_one_package_out
    from citecal.cascade import parse_agreement
    from citecal.config import Config

    t = time.perf_counter()
    sets = load_groundtruth(args.dataset, args.sources)
    scored, rows = groundtruth_rows(sets, Config())
    report = leave_one_package_out(
        scored, rows, parse_agreement("supports=0.95,not_supports=0.90"), 0.1
    )
    print(f"{len(sets)} label sets, {len(scored)} labels, {len(rows)} valid; leave one package out")
    figures: dict[str, object] = {}
    for name, r in report.ranking.items():
        gaps = [
            abs(b.expected_unsupported - b.observed_unsupported)
            for b in r.reliability
            if b.expected_unsupported is not None and b.observed_unsupported is not None
        ]
        worst = max(gaps) if gaps else None
        figures[name] = {**r.model_dump(), "worst_band_gap": worst}
        auc = "–" if r.auc is None else f"{r.auc:.3f}"
        print(
            f"\n{name}: {r.n} valid, {r.unsupported} unsupported\n"
            f"  ROC AUC of p_supports      {auc}  (target >= {TARGETS['auc']})\n"
            f"  unsupported, 10% most doubtful  {_pct(r.top10_unsupported)}  "
            f"(target >= {TARGETS['top10']:.0%})\n"
            f"  unsupported, 20% most doubtful  {_pct(r.top20_unsupported)}  "
            f"(target >= {TARGETS['top20']:.0%})"
        )
        print("  band       n   expected  predicted  observed   gap")
        for b in r.reliability:
            gap = (
                "–"
                if b.expected_unsupported is None or b.observed_unsupported is None
                else f"{abs(b.expected_unsupported - b.observed_unsupported) * 100:.1f} pts"
            )
            print(
                f"  {b.name:9s} {b.n:4d}   {_pct(b.expected_unsupported):>8s}  "
                f"{_pct(b.predicted_unsupported):>9s}  {_pct(b.observed_unsupported):>8s}   {gap}"
            )
        print(
            f"  worst band gap: {'–' if worst is None else f'{worst * 100:.1f} pts'} "
            f"(target <= {TARGETS['band_gap'] * 100:.0f})"
        )
    print(
        "\njudge and verifier disagree (a judge's supports below the fold's cut goes to a person):"
    )
    for name, d in report.disagreement.items():
        cost = d["supported_below"] / d["supported"] if d["supported"] else None
        caught = d["unsupported_below"] / d["unsupported"] if d["unsupported"] else None
        print(
            f"  {name:8s} a right judge loses {d['supported_below']}/{d['supported']} = "
            f"{_pct(cost)} of its supports to a person; a judge wrongly saying supports is "
            f"caught on {d['unsupported_below']}/{d['unsupported']} = {_pct(caught)}"
        )
    figures["disagreement"] = report.disagreement
    placed = places(scored, sets)
    figures["proposed_place"] = placed
    print("\nproposed place (no judge), unsupported citations whose right place is labelled:")
    for name, p in placed.items():
        share = p["right"] / p["n"] if p["n"] else None
        ratio = f", {share / PLACE_BASELINE:.0f}x correct --no-llm's 2%" if share else ""
        print(
            f"  {name:8s} right {p['right']}/{p['n']} = {_pct(share)} "
            f"(proposed {p['proposed']}; target >= {TARGETS['place']:.0%}{ratio})"
        )
    print(f"\ntook {time.perf_counter() - t:.0f}s")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
