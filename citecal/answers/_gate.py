"""Quality gates (README "`citecal validate`"): P0 FAIL, P1 WARN, P2 PASS, with every reason.

A gate is what CI looks at: ``citecal validate`` and ``citecal eval --gate``
exit 1 on FAIL (and on WARN with ``--fail-on warn``). Each rule that fires adds
one line to ``reasons``, so a red build says exactly why. The rules and their
thresholds are listed in README "Quality gates"; the thresholds come from
``[answers]`` and ``[gate]`` in the configuration.
"""

from __future__ import annotations

from citecal.answers._models import AnswerMetrics
from citecal.config import AnswersConfig, GateConfig
from citecal.models import EvalResult, Gate, GateStatus


def _pct(value: float) -> str:
    return f"{value:.0%}"


def decide(fail: list[str], warn: list[str]) -> Gate:
    """FAIL if any P0 rule fired, else WARN if any P1 rule did, else PASS."""
    status: GateStatus = "FAIL" if fail else "WARN" if warn else "PASS"
    return Gate(status=status, reasons=fail + warn)


def answer_rules(m: AnswerMetrics, cfg: AnswersConfig) -> tuple[list[str], list[str]]:
    """The P0 and P1 reasons for one item's or one batch's metrics."""
    fail: list[str] = []
    warn: list[str] = []
    total = m.total_citations
    if total == 0:
        fail.append("no citations")
        return fail, warn
    if m.invalid_citations / total > cfg.fail_invalid_rate:
        fail.append(
            f"{m.invalid_citations}/{total} citations invalid "
            f"({_pct(m.invalid_citations / total)} > {_pct(cfg.fail_invalid_rate)})"
        )
    if m.hallucinated_spans:
        fail.append(f"{m.hallucinated_spans} hallucinated span(s) not found in the answer")
    if m.avg_alignment_score is None:
        warn.append("no citation has an alignment_score")
    elif m.avg_alignment_score < cfg.warn_avg_alignment:
        warn.append(
            f"average alignment_score {m.avg_alignment_score:.2f} < {cfg.warn_avg_alignment:.2f}"
        )
    if m.citation_coverage is None or m.citation_coverage < cfg.warn_coverage:
        shown = "unknown" if m.citation_coverage is None else _pct(m.citation_coverage)
        warn.append(f"citation coverage {shown} < {_pct(cfg.warn_coverage)}")
    if m.has_evidence_idx is not None and m.has_evidence_idx < cfg.warn_evidence_idx:
        warn.append(
            f"{_pct(m.has_evidence_idx)} of citations have evidence_idx "
            f"(< {_pct(cfg.warn_evidence_idx)})"
        )
    return fail, warn


def answer_gate(m: AnswerMetrics, cfg: AnswersConfig) -> Gate:
    """The gate of one item."""
    return decide(*answer_rules(m, cfg))


def batch_gate(
    m: AnswerMetrics, cfg: AnswersConfig, *, failed_items: int = 0, malformed: int = 0
) -> Gate:
    """The gate of a batch: the item rules on the aggregate, plus what only a batch has.

    Items without citations and items failing their own gate are P1 here
    (the aggregate decides P0), malformed records too (``--strict`` makes them
    fatal before any gate is computed).
    """
    fail, warn = answer_rules(m, cfg)
    if m.items_without_citations:
        warn.append(f"{m.items_without_citations} item(s) have no citations")
    if failed_items:
        warn.append(f"{failed_items} item(s) fail their own gate")
    if malformed:
        warn.append(f"{malformed} malformed record(s) skipped")
    return decide(fail, warn)


def eval_gate(result: EvalResult, cfg: GateConfig) -> Gate:
    """The gate of a code report (``citecal eval --gate``).

    P0: no citations; more than ``max_invalid_rate`` of them invalid; a cited
    file that does not exist (a hallucinated path). P1: overall precision below
    ``min_precision`` (or nothing decided), claim coverage below
    ``min_coverage``, excerpts that were not found where their citation points.
    With ``max_high_risk`` set, P0 too: more valid citations than that in the
    high-risk band of ``p_supports`` (docs/explanation/cascade.md, the review list).
    """
    s = result.summary
    fail: list[str] = []
    warn: list[str] = []
    if s.total_citations == 0:
        fail.append("no citations")
        return decide(fail, warn)
    invalid = s.total_citations - s.valid_citations
    if invalid / s.total_citations > cfg.max_invalid_rate:
        fail.append(
            f"{invalid}/{s.total_citations} citations invalid "
            f"({_pct(invalid / s.total_citations)} > {_pct(cfg.max_invalid_rate)})"
        )
    missing = sorted(
        {
            r.file_path
            for r in result.citations
            if r.failure_type == "invalid_file" and (r.error or "").startswith("File not found")
        }
    )
    if missing and cfg.fail_on_missing_files:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        fail.append(f"{len(missing)} cited file(s) do not exist (hallucinated paths): {shown}")
    high = next((b.citations for b in s.risk_bands if b.name == "high"), None)
    if cfg.max_high_risk is not None and high is not None and high > cfg.max_high_risk:
        fail.append(
            f"{high} citation(s) in the high-risk band of p_supports (> {cfg.max_high_risk}): "
            "see the review list"
        )
    if s.overall_precision is None:
        warn.append("precision unknown: no citation was decided")
    elif s.overall_precision < cfg.min_precision:
        warn.append(f"precision {_pct(s.overall_precision)} < {_pct(cfg.min_precision)}")
    if s.coverage is not None and s.coverage < cfg.min_coverage:
        warn.append(f"claim coverage {_pct(s.coverage)} < {_pct(cfg.min_coverage)}")
    missed = sum(
        r.excerpt_status == "unverified" and r.excerpt is not None for r in result.citations
    )
    if missed:
        warn.append(f"{missed} quoted excerpt(s) not found at their location")
    return decide(fail, warn)
