"""Judge alignment: a better judge prompt from people's labels (README "Aligning the judge").

``citecal align`` builds candidate prompts (critic edits, few-shot examples,
combinations) on training folds, scores them on held-out reports, and keeps
the best only when a paired comparison with the start shows it better.

DSPy's optimizers (what MLflow's ``align()`` uses) were not used: they drive
their own LM client (LiteLLM, which fetches a price map over the network at
import unless told not to) and render prompts in their own signature format,
so our versioned Markdown prompts, judge cache, retry policy and pricing would
be bypassed; and they score on one split, not on folds by report.
"""

from citecal.align._candidates import Recipe
from citecal.align._critic import CriticPrompt, Edit, load_critic_prompt, parse_edits
from citecal.align._decide import decide, mcnemar
from citecal.align._folds import Fold, make_folds
from citecal.align._models import AlignResult, CandidateResult, Interval
from citecal.align._score import METRICS, PairedScore, Side, paired_score
from citecal.align._search import AlignSettings, align_prompt, labels_hash

__all__ = [
    "METRICS",
    "AlignResult",
    "AlignSettings",
    "CandidateResult",
    "CriticPrompt",
    "Edit",
    "Fold",
    "Interval",
    "PairedScore",
    "Recipe",
    "Side",
    "align_prompt",
    "decide",
    "labels_hash",
    "load_critic_prompt",
    "make_folds",
    "mcnemar",
    "paired_score",
    "parse_edits",
]
