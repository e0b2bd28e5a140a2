"""``citecal align`` targets (issue 23), against the local OpenAI-compatible server.

(a) gain: the bundled annotation table (86 records, 8 reports), start prompt v1,
    server in ``prompt_sensitive`` mode. The margin the mode allows is the
    weighted κ of v1 plus the helpful critic edit minus v1's, both judged on
    every record; the target: the written prompt's out-of-sample weighted κ
    beats v1 by at least that margin, within 200 judge calls.
(b) no overfitting: the server in ``prompt_noise`` mode (the heuristic answer,
    10% of (prompt, claim) pairs flipped by a seeded hash: a new prompt
    re-rolls which, no prompt is better); 100 runs with seeds 0–99 (folds,
    bootstrap and server noise); target: no gain kept in >= 95 of them.
(c) scale: 500 labelled records (the bundled 86 repeated over 40 reports, each
    claim made distinct), 5 folds, 10 candidates (9 critic edits + few-shot),
    against the server with no latency and with 300 ms per request;
    target <= 60 s each.

Run: .venv/bin/python benchmarks/align_search.py [--runs 100] [--parts abc]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from citecal.align import AlignSettings, align_prompt
from citecal.calibrate import prepare
from citecal.calibrate._metrics import compute_metrics
from citecal.config import JudgeConfig
from citecal.testing import CRITIC_EDITS, FakeOpenAIServer
from citecal.verify.judge import rejudge_frame

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"


def config(server: FakeOpenAIServer, tmp: str, name: str) -> JudgeConfig:
    return JudgeConfig(
        base_url=server.base_url, escalation_model=None, cache_path=f"{tmp}/{name}.sqlite3"
    )


def weighted_kappa(table: pd.DataFrame) -> float:
    value = compute_metrics(prepare(table)).weighted_kappa
    assert value is not None
    return value


def _ci(ci: list[float] | None) -> str:
    return "—" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def gain(tmp: str) -> bool:
    table = pd.read_parquet(TABLE)
    with FakeOpenAIServer(mode="prompt_sensitive") as srv:
        # The margin: v1 and v1 + the helpful edit, each on every record.
        from citecal.align._candidates import prompt_text, system_with
        from citecal.verify.judge import load_prompt

        v1 = load_prompt("v1")
        helpful = Path(tmp) / "v1-helpful.md"
        helpful.write_text(
            prompt_text(v1, system_with(v1, [CRITIC_EDITS[1]["instruction"]], ""), "margin")
        )
        cfg = config(srv, tmp, "margin")
        start, _ = rejudge_frame(table, cfg, prompt="v1")
        best, _ = rejudge_frame(table, cfg, prompt=str(helpful))
        margin = weighted_kappa(best) - weighted_kappa(start)
        srv.reset()
        t0 = time.perf_counter()
        result = align_prompt(table, config(srv, tmp, "gain"), prompt="v1")
        seconds = time.perf_counter() - t0
    assert result.gain is not None and result.gain.value is not None
    g = result.gain.value
    ok = result.kept and g >= margin - 1e-9 and result.judge_calls <= 200
    print(
        f"(a) gain: start weighted κ {result.before.value:.3f} -> {result.winner} "
        f"{result.after.value if result.after else float('nan'):.3f} out of sample "
        f"(gain {g:+.3f}, paired 95% CI {_ci(result.gain.ci)}); "
        f"margin the mode allows {margin:+.3f}; "
        f"kept {result.kept}; {len(result.candidates)} candidates, {result.judge_calls} judge "
        f"calls + {result.critic_calls} critic calls in {seconds:.1f} s"
    )
    print(
        f"    ratio gain / margin {g / margin:.2f} (target >= 1.00); judge calls "
        f"{result.judge_calls} / 200 = {result.judge_calls / 200:.2f} (target <= 1.00): "
        + ("met" if ok else "NOT met")
    )
    return ok


def no_overfitting(tmp: str, runs: int) -> bool:
    table = pd.read_parquet(TABLE)
    kept = 0
    gains: list[float] = []
    t0 = time.perf_counter()
    for seed in range(runs):
        with FakeOpenAIServer(mode="prompt_noise", noise=0.1, seed=seed) as srv:
            result = align_prompt(
                table,
                config(srv, tmp, f"noise-{seed}"),
                prompt="v1",
                settings=AlignSettings(seed=seed, resamples=500),
            )
        kept += result.kept
        if result.gain is not None and result.gain.value is not None:
            gains.append(result.gain.value)
    refused = runs - kept
    share = refused / runs
    ok = share >= 0.95
    print(
        f"(b) prompt does not matter: {refused} of {runs} runs kept nothing "
        f"({share:.0%}; target >= 95%): {'met' if ok else 'NOT met'}; best candidate's "
        f"apparent gain median {np.median(gains):+.3f}, max {max(gains):+.3f}; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    return ok


def scale_table() -> pd.DataFrame:
    base = pd.read_parquet(TABLE)
    records = sorted(base["record_id"].unique())
    parts = []
    n = 0
    copy = 0
    while n < 500:
        take = records[: min(len(records), 500 - n)]
        part = base[base["record_id"].isin(take)].copy()
        part["record_id"] = part["record_id"] + f"-c{copy}"
        part["report_id"] = part["report_id"] + f"-c{copy % 5}"
        # Digits only: the heuristic judge reads words of 4+ letters, so scores do not move,
        # but every claim is distinct and is judged (and cached) on its own.
        part["claim"] = part["claim"] + f" [{copy}]"
        parts.append(part)
        n += len(take)
        copy += 1
    return pd.concat(parts, ignore_index=True)


def scale(tmp: str, latency: float) -> bool:
    table = scale_table()
    settings = AlignSettings(edits=9, examples=6, max_candidates=10)
    with FakeOpenAIServer(mode="prompt_sensitive", latency_s=latency) as srv:
        t0 = time.perf_counter()
        result = align_prompt(table, config(srv, tmp, f"scale-{latency}"), prompt="v1",
                              settings=settings)  # fmt: skip
        seconds = time.perf_counter() - t0
    ok = seconds <= 60 and len(result.candidates) == 10
    print(
        f"(c) scale, {latency * 1000:.0f} ms latency: {result.n_records} records, "
        f"{result.n_reports} reports, {result.folds} folds, {len(result.candidates)} candidates, "
        f"{result.judge_calls} judge + {result.critic_calls} critic calls: {seconds:.1f} s "
        f"= {seconds / 60:.2f}x the 60 s target ({'met' if ok else 'NOT met'}); kept "
        f"{result.winner if result.kept else 'nothing'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--parts", default="abc", help="which targets to run (default abc)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="citecal-align-bench-") as tmp:
        results = []
        if "a" in args.parts:
            results.append(gain(tmp))
        if "b" in args.parts:
            results.append(no_overfitting(tmp, args.runs))
        if "c" in args.parts:
            results += [scale(tmp, 0.0), scale(tmp, 0.3)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
