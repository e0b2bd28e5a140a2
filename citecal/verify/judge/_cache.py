"""Persistent verdict cache (SQLite, WAL) so unchanged claims cost nothing twice.

The key is a SHA-256 of everything the answer depends on: the endpoint
(base URL), model, prompt version (name + content hash), claim, citation,
cited code and its context lines, and how the answer was asked for when that is not
the plain one (the confidence source, K samples, their temperature, the few-shot
variants, a repeat: README "Judge confidence"). The endpoint is part of it so that answers
from one server are never replayed as another's: a forged or test endpoint
cannot plant verdicts for later runs against the real one (README
"Security"). Each judge stage is cached under its own model, so a re-run
replays a first-pass answer and, when it escalated, the escalation answer,
with zero API calls. Only real answers are stored: ``unverified`` results of timeouts,
outages or unparseable answers are retried next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field

from citecal.errors import InputError
from citecal.models import (
    Confidence,
    ConfidenceSource,
    Mode,
    Verdict,
    VerdictLabel,
    verdict_confidence,
)
from citecal.verify.judge._prompts import evidence_text
from citecal.verify.judge._types import JudgeRequest

CACHE_SCHEMA_VERSION = 2
"""2: the key includes the endpoint (answers cached under version 1 are not reused)."""


def default_cache_path() -> Path:
    """``<user cache dir>/citecal/judge-cache.sqlite3``."""
    return Path(platformdirs.user_cache_dir("citecal")) / "judge-cache.sqlite3"


def normalise_endpoint(base_url: str) -> str:
    """``base_url`` with scheme and host lower-cased and no trailing slash."""
    parts = urlsplit(base_url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def cache_key(
    model: str,
    prompt_version: str,
    request: JudgeRequest,
    *,
    endpoint: str,
    variant: Mapping[str, object] | None = None,
) -> str:
    """SHA-256 over endpoint, model, prompt version, claim, citation, code, context, evidence.

    ``variant`` is everything else that changes the answer (confidence source, K,
    temperature, few-shot variants, repeat); empty for a plain verbal answer at the
    configured temperature, so those keys stay what they were.
    """
    parts = [
        CACHE_SCHEMA_VERSION,
        normalise_endpoint(endpoint),
        model,
        prompt_version,
        request.claim,
        request.citation,
        request.code,
        request.before,
        request.after,
        request.classify,
        evidence_text(request),
    ]
    if request.siblings:  # only then: the keys of single-citation claims stay as they were
        parts.append([list(pair) for pair in request.siblings])
    if variant:
        parts.append({"variant": {k: variant[k] for k in sorted(variant)}})
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


class CachedAnswer(BaseModel):
    """One judge answer as stored on disk."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = CACHE_SCHEMA_VERSION
    verdict: VerdictLabel
    confidence: Confidence
    score: float | None
    reasoning: str
    model: str | None
    prompt_version: str | None
    mode: Mode | None = None
    tokens: int = Field(0, description="Tokens the original call spent on this answer.")
    cost_usd: float = Field(0.0, description="Cost of the original call's share.")
    confidence_source: ConfidenceSource | None = None
    confidence_value: float | None = None
    created_at: str

    @classmethod
    def from_verdict(cls, v: Verdict) -> CachedAnswer:
        return cls(
            verdict=v.verdict,
            confidence=v.confidence,
            score=v.score,
            reasoning=v.reasoning,
            model=v.model,
            prompt_version=v.prompt_version,
            mode=v.mode,
            tokens=v.tokens,
            cost_usd=v.cost_usd,
            confidence_source=v.confidence_source,
            confidence_value=v.confidence_value,
            created_at=datetime.now(UTC).isoformat(),
        )

    def to_verdict(self) -> Verdict:
        """The answer as a verdict of this run: cached, so it cost nothing now."""
        return Verdict(
            verdict=self.verdict,
            method="llm",
            confidence=self.confidence,
            score=self.score,
            reasoning=self.reasoning,
            model=self.model,
            prompt_version=self.prompt_version,
            cached=True,
            mode=self.mode,
            # Written before README "Judge confidence": a plain answer, its own word.
            confidence_source=self.confidence_source or "verbal",
            confidence_value=(
                self.confidence_value
                if self.confidence_value is not None
                else verdict_confidence(self.verdict, self.score)
            ),
        )


class VerdictStore(Protocol):
    """What the judge needs of a verdict cache (SQLite file or shared directory)."""

    def get(self, key: str) -> Verdict | None:
        """The cached answer for ``key`` (marked ``cached``), or None."""
        ...

    def put(self, key: str, verdict: Verdict) -> None:
        """Store a real judge answer."""
        ...

    def close(self) -> None:
        """Release what the cache holds open."""
        ...


class VerdictCache:
    """A SQLite file mapping cache keys to judge answers; opened on first use."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                # WAL with synchronous=NORMAL: a commit no longer waits for fsync (7 ms
                # each here), only checkpoints do. A power cut may lose the last answers,
                # which a cache can afford: they are asked again (README "Aligning the judge").
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS answers ("
                    " key TEXT PRIMARY KEY, answer TEXT NOT NULL, created_at TEXT NOT NULL)"
                )
                conn.commit()
            except (OSError, sqlite3.Error) as exc:
                raise InputError(
                    f"cannot open the judge cache {self.path}: {exc}"
                    " (set judge.cache_path or use --no-cache)"
                ) from None
            self._conn = conn
        return self._conn

    def get(self, key: str) -> Verdict | None:
        """The cached answer for ``key`` (marked ``cached``), or None."""
        with self._lock:
            row = (
                self._connect()
                .execute("SELECT answer FROM answers WHERE key = ?", (key,))
                .fetchone()
            )
        if row is None:
            return None
        try:
            return CachedAnswer.model_validate_json(row[0]).to_verdict()
        except ValueError:
            return None  # written by an incompatible version: ask again, overwrite later

    def put(self, key: str, verdict: Verdict) -> None:
        """Store a real judge answer (callers never store ``unverified`` fallbacks)."""
        record = CachedAnswer.from_verdict(verdict)
        with self._lock:
            conn = self._connect()
            conn.execute(
                "INSERT OR REPLACE INTO answers (key, answer, created_at) VALUES (?, ?, ?)",
                (key, record.model_dump_json(), record.created_at),
            )
            conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close the connection (the file stays)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class DirectoryVerdictCache:
    """A verdict cache that workers on several hosts share: one JSON file per key.

    ``citecal eval-batch`` needs a cache every Dask worker reads and writes,
    wherever it runs (README "Many reports", docs/explanation/scale.md). SQLite is not
    safe on a network filesystem (its WAL needs shared memory on one host),
    and a cache server would be one more service and credential. The batch
    already needs a filesystem all workers see (manifest, reports,
    repositories, output), so the cache lives there as
    ``ROOT/<first 2 hex digits>/<key>.json``. Keys are content hashes, so
    two workers writing one key write equivalent answers; each file is
    written to a temporary name and renamed, so a reader sees a whole answer
    or none, without locks.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Verdict | None:
        """The cached answer for ``key`` (marked ``cached``), or None."""
        try:
            text = self._path(key).read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise InputError(
                f"cannot read the judge cache {self.root}: {exc.strerror} (use --no-cache)"
            ) from None
        try:
            return CachedAnswer.model_validate_json(text).to_verdict()
        except ValueError:
            return None  # written by an incompatible version: ask again, overwrite later

    def put(self, key: str, verdict: Verdict) -> None:
        """Store a real judge answer (write to a temporary file, then rename)."""
        target = self._path(key)
        record = CachedAnswer.from_verdict(verdict)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(record.model_dump_json())
                os.replace(tmp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        except OSError as exc:
            raise InputError(
                f"cannot write the judge cache {self.root}: {exc.strerror} (use --no-cache)"
            ) from None

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json"))

    def close(self) -> None:
        """Nothing is held open between calls."""
