"""Judge throughput: naive sequential calls vs citecal's batched, concurrent, cached judge.

200 abstractive citations (40 files, 5 claims each) are judged against the
local OpenAI-compatible server (citecal.testing) answering every request after
300 ms, through real HTTP and the official openai client:

(a) naive: one ``chat.completions.create`` per citation, sequentially, with the
    same v1 single-claim prompt citecal uses;
(b) citecal: ``build_judge(config).judge(requests)`` (batches of 5 by file,
    concurrency 8), then the same run again to measure the cache.

Escalation is off in both so that both do the same work (one first-pass
answer per claim). Issue targets: >= 10x faster, <= 0.25 calls per citation,
0 calls on the second run.

Run: .venv/bin/python benchmarks/judge_throughput.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import openai

from citecal.config import JudgeConfig
from citecal.testing import FakeOpenAIServer
from citecal.verify.judge import JudgeRequest, build_judge, load_prompt, render_messages

N_FILES = 40
CLAIMS_PER_FILE = 5
LATENCY_S = 0.3

CLAIMS = (
    "The {name} handler validates the cart before charging the customer.",
    "Discounts for {name} are applied before taxes are computed.",
    "The {name} module retries failed payments with exponential backoff.",
    "Inventory for {name} is reserved so that concurrent checkouts cannot oversell.",
    "The {name} service logs every refund for auditing.",
)


def make_requests() -> list[JudgeRequest]:
    """200 abstractive claims with realistic small code excerpts."""
    out: list[JudgeRequest] = []
    for f in range(N_FILES):
        name = f"shop{f}"
        path = f"src/{name}/service.py"
        code = "\n".join(
            [
                f"def checkout_{name}(cart, payment, inventory, log):",
                "    validate_cart(cart)",
                "    inventory.reserve(cart.items)",
                "    total = apply_discounts(cart) + compute_taxes(cart)",
                "    for attempt in range(3):",
                "        if payment.charge(total):",
                "            break",
                "        time.sleep(2 ** attempt)",
                "    log.info('refund policy applied', total=total)",
                "    return total",
            ]
        )
        for c, template in enumerate(CLAIMS[:CLAIMS_PER_FILE]):
            out.append(
                JudgeRequest(
                    key=f"{name}-{c}",
                    claim=template.format(name=name),
                    citation=f"[{path}:20-29]",
                    file_path=path,
                    language="python",
                    start_line=20,
                    end_line=29,
                    code=code,
                    before="import time\n\nfrom shop.rules import apply_discounts",
                    after="",
                )
            )
    return out


def naive(
    server: FakeOpenAIServer, config: JudgeConfig, reqs: list[JudgeRequest]
) -> dict[str, float]:
    prompt = load_prompt(config.prompt)
    client = openai.OpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
    before = server.calls
    tokens = 0
    t0 = time.perf_counter()
    for r in reqs:
        messages = render_messages(prompt, [r], config.max_code_lines, config.context_lines)
        resp = client.chat.completions.create(
            model=config.judge_model,
            messages=messages,  # type: ignore[arg-type]
            temperature=config.temperature,
        )
        if resp.usage is not None:
            tokens += resp.usage.total_tokens
    wall = time.perf_counter() - t0
    client.close()
    return {"wall": wall, "calls": server.calls - before, "tokens": tokens}


def citecal_run(
    server: FakeOpenAIServer, config: JudgeConfig, reqs: list[JudgeRequest]
) -> dict[str, float]:
    judge = build_judge(config)
    before = server.calls
    t0 = time.perf_counter()
    run = judge.judge(reqs)
    wall = time.perf_counter() - t0
    judge.close()
    unverified = sum(v.verdict == "unverified" for v in run.verdicts.values())
    return {
        "wall": wall,
        "calls": server.calls - before,
        "reported_calls": run.calls,
        "tokens": run.tokens,
        "cache_hits": run.cache_hits,
        "unverified": unverified,
    }


def main() -> int:
    reqs = make_requests()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=LATENCY_S) as server:
        config = JudgeConfig(
            base_url=server.base_url,
            cache_path=str(Path(tmp) / "judge-cache.sqlite3"),
            escalation_model=None,
        )
        n = len(reqs)
        print(f"judge throughput: {n} abstractive citations, {LATENCY_S * 1000:.0f} ms per request")
        print(
            f"citecal settings: batch {config.max_batch_size}, concurrency {config.concurrency},"
            " escalation off (same work as naive)"
        )
        a = naive(server, config, reqs)
        print(
            f"(a) naive sequential : {a['wall']:7.2f} s  {a['calls']:4.0f} calls"
            f"  ({a['calls'] / n:.2f}/citation)  {a['tokens']:7.0f} tokens"
        )
        b = citecal_run(server, config, reqs)
        print(
            f"(b) citecal judge    : {b['wall']:7.2f} s  {b['calls']:4.0f} calls"
            f"  ({b['calls'] / n:.2f}/citation)  {b['tokens']:7.0f} tokens"
            f"  ({b['unverified']:.0f} unverified)"
        )
        c = citecal_run(server, config, reqs)
        print(
            f"(b) second run       : {c['wall']:7.2f} s  {c['calls']:4.0f} calls"
            f"  ({c['cache_hits']:.0f} cache hits)"
        )
        speedup = a["wall"] / b["wall"]
        per_citation = b["calls"] / n
        print(
            f"speed-up {speedup:.1f}x (target >= 10x); calls/citation {per_citation:.3f}"
            f" (target <= 0.25); token ratio {b['tokens'] / a['tokens']:.2f};"
            f" second-run calls {c['calls']:.0f} (target 0)"
        )
        ok = speedup >= 10 and per_citation <= 0.25 and c["calls"] == 0
        print("targets met" if ok else "TARGETS MISSED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
