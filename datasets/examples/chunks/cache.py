"""The verdict cache."""

import hashlib
import sqlite3


def cache_key(model: str, prompt_version: str, claim: str, code: str) -> str:
    """SHA-256 of everything that decides a verdict."""
    raw = "\x1f".join([model, prompt_version, claim, code])
    return hashlib.sha256(raw.encode()).hexdigest()


class VerdictCache:
    """Verdicts in SQLite, keyed by cache_key."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path)

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT verdict FROM cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None
