"""Which claims need the LLM judge (seed §3.2.5, §5.1).

The judge costs money and time, so it only sees claims rule-based checks
cannot settle:

* ``abstractive`` claims: always (paraphrase and intent need semantics);
* no extractive result, or an extractive ``unverified`` (no checkable terms
  in the claim): always;
* ``unknown`` claims: when the extractive check was inconclusive, i.e.
  ``partial`` or ``low`` confidence;
* ``extractive`` claims: only when the check came out ``partial`` with
  ``low`` confidence (seed §5.1 item 4).

Clear extractive results (``supports``/``not_supports``, or ``partial`` with
medium/high confidence on an extractive claim) stay as they are.
"""

from __future__ import annotations

from citecal.config import JudgeConfig
from citecal.models import Mode, Verdict


def needs_judge(mode: Mode, extractive: Verdict | None, config: JudgeConfig) -> bool:
    """True when the claim should be sent to the LLM judge (rules in the module doc).

    ``config`` is accepted so routing can grow settings without changing callers.
    """
    del config
    if mode == "abstractive":
        return True
    if extractive is None or extractive.verdict == "unverified":
        return True
    if mode == "unknown":
        return extractive.verdict == "partial" or extractive.confidence == "low"
    return extractive.verdict == "partial" and extractive.confidence == "low"
