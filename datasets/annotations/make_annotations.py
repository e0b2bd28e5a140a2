"""Generate the bundled synthetic annotation table (``annotations.parquet``).

Run from the repository root: ``.venv/bin/python datasets/annotations/make_annotations.py``.
Deterministic (seeded); re-running rewrites the same table.

1. ``citecal eval --no-llm --format json`` on the bundled example report and
   repository gives 40 real claim–code pairs. Their "true" support score
   (0–3) was assigned by hand from the code (TRUTH).
2. Variants of the true pairs with known defects are added: an overstating
   clause appended to the claim, the range shifted off the evidence, or code
   from the wrong file. All pairs are spread over 8 synthetic reports
   (``report-01`` … ``report-08``), the clusters of the bootstrap.
3. Three simulated annotators (alice, bob, carol) score each pair: the true
   score plus seeded noise (±1 with probability 0.3); 30% of records get
   only two annotators. line_range answers and notes follow the defect.
4. The judge is citecal's own judge with prompt v1, run through the local
   OpenAI-compatible test server (its deterministic heuristic model), so the
   llm_* columns are real judge output, not invented numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner

from citecal.annotations import ANNOTATION_COLUMNS, write_table
from citecal.cli import cli
from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
OUT = Path(__file__).resolve().parent / "annotations.parquet"
SEED = 20260522
ANNOTATORS = ("alice", "bob", "carol")
CONTEXT = 2
N_REPORTS = 8

# (citation, claim prefix) -> hand-assigned true score 0-3, and an optional defect note.
TRUTH: dict[tuple[str, str], tuple[int, str | None]] = {
    ("[shopcart/cart.py:26-30]", "The `Cart` class stores"): (3, None),
    ("[shopcart/cart.py:16-19]", "The `LineItem` class"): (3, None),
    ("[shopcart/cart.py:21-23]", "The `subtotal` property"): (3, None),
    ("[shopcart/cart.py:32-35]", "The `add_item` method"): (3, None),
    ("[shopcart/cart.py:36-43]", "it merges quantities"): (3, None),
    ("[shopcart/cart.py:8]", "Each SKU is capped"): (2, "only the constant; the cap is enforced at lines 40-41"),
    ("[shopcart/cart.py:45-47]", "The `remove_item` method"): (3, None),
    ("[shopcart/cart.py:49-51]", "The `clear` method"): (3, None),
    ("[shopcart/cart.py:53-54]", "The `item_count` method"): (0, "it sums quantities, not distinct products"),
    ("[shopcart/cart.py:26-43]", "The `Cart` class validates"): (0, "there is no validate_sku anywhere"),
    ("[shopcart/pricing.py:21-25]", "Coupon codes are looked up"): (3, None),
    ("[shopcart/pricing.py:26-28]", "The `apply_discount` function"): (3, None),
    ("[shopcart/pricing.py:31-35]", "The `compute_total` function adds"): (3, None),
    ("[shopcart/pricing.py:16-18]", "Totals are rounded"): (3, None),
    ("[shopcart/pricing.py:1-35]", "The pricing module supports"): (0, "no currency conversion at all"),
    ("[shopcart/pricing.py:31-35]", "The `compute_total` function applies"): (0, "no default coupon"),
    ("[shopcart/auth.py:21-32]", "The `SessionManager` class"): (3, None),
    ("[shopcart/auth.py:34-47]", "The `validate_token` method"): (3, None),
    ("[shopcart/auth.py:44-46]", "The authentication layer prevents"): (3, None),
    ("[shopcart/auth.py:40-41]", "Signature checks are resistant"): (3, "hmac.compare_digest is constant-time"),
    ("[shopcart/auth.py:21-50]", "The session layer uses OAuth"): (0, "plain HMAC tokens, no OAuth"),
    ("[shopcart/auth.py:10]", "Tokens are valid for one hour"): (3, "TOKEN_TTL_SECONDS = 3600"),
    ("[shopcart/auth.py:34-47]", "The `revoke_token` method"): (0, "there is no revoke_token"),
    ("[shopcart/storage.py:14-20]", "The `CartStore` class"): (3, None),
    ("[shopcart/storage.py:22-35]", "Saving is crash-safe"): (3, None),
    ("[shopcart/storage.py:37-40]", "The `load` method"): (3, None),
    ("[shopcart/storage.py:14-46]", "Carts are stored in a PostgreSQL"): (0, "JSON files, no database"),
    ("[web/src/api.js:14-41]", "The `ApiClient` class retries"): (3, None),
    ("[web/src/api.js:4]", "Requests time out"): (1, "only the constant; the abort is at lines 17-18"),
    ("[web/src/api.js:17-18]", "Requests time out"): (2, "the constant itself is not in these lines"),
    ("[web/src/api.js:29-32]", "The client handles server errors"): (3, None),
    ("[web/src/api.js:43-45]", "The `getCart` and `addItem`"): (2, "only getCart is in these lines"),
    ("[web/src/api.js:47-49]", "The `getCart` and `addItem`"): (2, "only addItem is in these lines"),
    ("[web/src/cart.js:4-17]", "The `cartReducer` function"): (3, None),
    ("[web/src/utils/format.js:4-10]", "The `formatPrice` function"): (3, None),
    ("[web/src/utils/format.js:4]", "Prices are formatted in US"): (0, "the default currency is EUR"),
    ("[web/src/cart.js:19-20]", "The `selectItemCount` selector"): (3, None),
    ("[web/src/utils/format.js:12-14]", "The `pluralize` helper"): (3, None),
    ("[web/src/utils/format.js:1-5]", "The `describeTotal` helper"): (0, "wrong file: describeTotal is defined in web/src/api.js"),
    ("[web/src/api.js:7-12]", "The `ApiClient` sends a bearer"): (1, "the header is set at line 22, outside the cited lines"),
}  # fmt: skip

OVERSTATEMENTS = (
    " and is safe to call from several threads at once",
    " and logs every failure to the audit trail",
    " and caches the result for later calls",
    " and validates its input against a schema",
)


def eval_citations() -> list[dict[str, object]]:
    """Valid citations of the bundled example, from ``citecal eval --format json``."""
    result = CliRunner().invoke(
        cli,
        ["eval", str(EXAMPLES / "report.md"), "--repo", str(EXAMPLES / "shopcart"),
         "--no-llm", "--format", "json"],
    )  # fmt: skip
    data = json.loads(result.stdout)
    return [c for c in data["citations"] if c["valid"]]


def cited(file_path: str, start: int, end: int) -> tuple[str, str, str]:
    """(raw cited lines, context lines before, context lines after) read from the repo."""
    lines = (EXAMPLES / "shopcart" / file_path).read_text().split("\n")
    end = min(end, len(lines))
    first = max(1, start - CONTEXT)
    last = min(len(lines), end + CONTEXT)
    return (
        "\n".join(lines[start - 1 : end]),
        "\n".join(lines[first - 1 : start - 1]),
        "\n".join(lines[end:last]),
    )


def base_records(citations: list[dict[str, object]]) -> list[dict[str, object]]:
    records = []
    for c in citations:
        claim = str(c["claim"])
        key = next(k for k in TRUTH if k[0] == c["citation"] and claim.startswith(k[1]))
        truth, note = TRUTH[key]
        records.append({**c, "truth": truth, "note": note, "defect": None})
    return records


def variants(records: list[dict[str, object]], rng: np.random.Generator) -> list[dict[str, object]]:
    """Defective copies of true claims, spread over five synthetic reports."""
    true = [r for r in records if r["truth"] == 3]
    out: list[dict[str, object]] = []
    for i, r in enumerate(true):
        suffix = OVERSTATEMENTS[i % len(OVERSTATEMENTS)]
        out.append({**r, "claim": str(r["claim"]) + suffix, "truth": int(rng.integers(0, 2)),
                    "defect": "overstates", "note": f"the code shows nothing for '{suffix.strip()}'"})  # fmt: skip
    for r in true[::2]:
        shift = int(r["end_line"]) - int(r["start_line"]) + 3  # type: ignore[call-overload]
        n_lines = len((EXAMPLES / "shopcart" / str(r["file_path"])).read_text().split("\n"))
        if int(r["end_line"]) + shift > n_lines:  # type: ignore[call-overload]
            shift = max(-shift, 1 - int(r["start_line"]))  # type: ignore[call-overload]  # inside the file
        out.append({**r, "start_line": int(r["start_line"]) + shift,  # type: ignore[call-overload]
                    "end_line": int(r["end_line"]) + shift, "truth": 1, "defect": "lines_off",  # type: ignore[call-overload]
                    "note": "the evidence is just above the cited lines"})  # fmt: skip
    files = sorted({str(r["file_path"]) for r in records})
    for r in true[1::3]:
        other = next(x for x in true if x["file_path"] == files[(files.index(str(r["file_path"])) + 1) % len(files)])
        out.append({**r, "file_path": other["file_path"], "start_line": other["start_line"],
                    "end_line": other["end_line"], "language": other["language"], "truth": 0,
                    "defect": "wrong_file", "note": f"wrong file: this is in {r['file_path']}"})  # fmt: skip
    return out


def annotate(records: list[dict[str, object]], rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for n, r in enumerate(records):
        start, end = int(r["start_line"]), int(r["end_line"])  # type: ignore[call-overload]
        code, before, after = cited(str(r["file_path"]), start, end)
        citation = f"[{r['file_path']}:{start}-{end}]" if start != end else f"[{r['file_path']}:{start}]"
        who = ANNOTATORS if rng.random() >= 0.3 else tuple(rng.choice(ANNOTATORS, 2, replace=False))
        for annotator in who:
            noise = int(rng.choice([-1, 0, 1], p=[0.15, 0.7, 0.15]))
            score = int(np.clip(int(r["truth"]) + noise, 0, 3))  # type: ignore[call-overload]
            if r["defect"] == "lines_off":
                line_range = "too_narrow" if rng.random() < 0.8 else "correct"
            elif r["note"] and "lines" in str(r["note"]) and rng.random() < 0.6:
                line_range = "too_narrow"
            else:
                line_range = "too_broad" if rng.random() < 0.08 else "correct"
            rows.append({
                "record_id": f"rec-{n:03d}",
                "report_id": r["report"],
                "citation": citation,
                "claim": r["claim"],
                "cited_code": code,
                "mode": r["mode"],
                "judge_model": None, "prompt_version": None, "llm_verdict": None,
                "llm_confidence": None, "llm_score": None,
                "annotator": str(annotator),
                "human_score": score,
                "line_range": line_range,
                "notes": r["note"] if r["note"] and rng.random() < 0.6 else None,
                "submitted_at": f"2026-05-{10 + n % 18:02d}T{9 + n % 8:02d}:{n % 60:02d}:00+00:00",
                "correction": None,
                "language": r["language"],
                "file_path": r["file_path"],
                "method": "llm",
                "start_line": start,
                "end_line": min(end, start + code.count("\n")),
                "context_before": before or None,
                "context_after": after or None,
                "matched_terms": ", ".join(r.get("matched_terms") or []) if r["defect"] is None else "",  # type: ignore[arg-type]
                "missing_terms": ", ".join(r.get("missing_terms") or []) if r["defect"] is None else "",  # type: ignore[arg-type]
            })  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    rng = np.random.default_rng(SEED)
    records = base_records(eval_citations())
    everything = records + variants(records, rng)
    # Real reports mix good and bad citations: spread all pairs over N_REPORTS
    # synthetic reports (seeded shuffle), the unit of the cluster bootstrap.
    for i, j in enumerate(rng.permutation(len(everything))):
        everything[j]["report"] = f"report-{i % N_REPORTS + 1:02d}"
    table = annotate(everything, rng)
    from citecal.verify.judge import rejudge_frame

    with FakeOpenAIServer() as server:
        config = JudgeConfig(base_url=server.base_url, cache=False, escalation_model=None)
        judged, run = rejudge_frame(table, config, prompt="v1", use_cache=False)
    judged = judged[[*ANNOTATION_COLUMNS, *[c for c in judged.columns if c not in ANNOTATION_COLUMNS]]]
    write_table(judged, OUT)
    print(f"wrote {OUT.relative_to(ROOT)}: {judged['record_id'].nunique()} records, "
          f"{len(judged)} annotations, {judged['report_id'].nunique()} reports, "
          f"{run.calls} judge calls")  # fmt: skip


if __name__ == "__main__":
    main()
