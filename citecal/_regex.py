"""Regular expressions from settings, each search bounded in time.

Indicator and non-claim patterns are data the user may extend (README
"Configuration"). The standard ``re`` module cannot stop a search, so one
pattern with catastrophic backtracking (``(a|aa)+$``) on one sentence would
hold ``citecal eval`` at 100% CPU until killed. These patterns are compiled
with the ``regex`` package instead, whose searches take a ``timeout``: a
search that runs past :data:`SEARCH_TIMEOUT_S` counts as no match, the
pattern is skipped for the rest of the run, and the run's warnings say so
(README "Security"). The evaluated repository cannot set these patterns at
all (:data:`citecal.config.REPO_ALLOWED_KEYS`).
"""

from __future__ import annotations

import threading
from functools import lru_cache

import regex

from citecal.errors import ConfigError

SEARCH_TIMEOUT_S = 0.25
"""Longest one pattern may search one sentence; ordinary patterns take microseconds."""

_lock = threading.Lock()
_timed_out: dict[tuple[str, str], int] = {}
"""(setting, pattern) → length of the text it gave up on, since the last :func:`reset`."""


class BoundedPatterns:
    """Compiled case-insensitive patterns of one setting, searched with a time bound."""

    def __init__(self, setting: str, patterns: tuple[str, ...]) -> None:
        self.setting = setting
        self.patterns = patterns
        compiled: list[regex.Pattern[str]] = []
        for p in patterns:
            try:
                # VERSION0 is the ``re``-compatible syntax the defaults are written in.
                compiled.append(regex.compile(p, regex.IGNORECASE | regex.VERSION0))
            except regex.error as exc:
                raise ConfigError(f"{setting}: invalid regex {p!r}: {exc}") from exc
        self.compiled = tuple(compiled)

    def matching(self, text: str) -> list[str]:
        """The patterns that match somewhere in ``text``, in configuration order."""
        return [
            p
            for p, rx in zip(self.patterns, self.compiled, strict=True)
            if _search(self, p, rx, text)
        ]

    def any(self, text: str) -> bool:
        """Whether any pattern matches ``text`` (stops at the first that does)."""
        return any(
            _search(self, p, rx, text) for p, rx in zip(self.patterns, self.compiled, strict=True)
        )


def _search(owner: BoundedPatterns, pattern: str, rx: regex.Pattern[str], text: str) -> bool:
    key = (owner.setting, pattern)
    if key in _timed_out:
        return False
    try:
        return rx.search(text, timeout=SEARCH_TIMEOUT_S) is not None
    except TimeoutError:
        with _lock:
            _timed_out.setdefault(key, len(text))
        return False


@lru_cache(maxsize=64)
def bounded_patterns(setting: str, patterns: tuple[str, ...]) -> BoundedPatterns:
    """Compile ``patterns`` of ``setting`` once per distinct list.

    Raises:
        ConfigError: a pattern is not a valid regular expression (named in the message).
    """
    return BoundedPatterns(setting, patterns)


def reset() -> None:
    """Forget the patterns that timed out (a new run starts)."""
    with _lock:
        _timed_out.clear()


def timed_out() -> list[tuple[str, str, int]]:
    """(setting, pattern, text length) of every pattern that timed out since :func:`reset`."""
    with _lock:
        return [(s, p, n) for (s, p), n in _timed_out.items()]


def record_timeouts(found: list[tuple[str, str, int]]) -> None:
    """Add timeouts seen elsewhere (a forked worker) to this process's list."""
    with _lock:
        for setting, pattern, n in found:
            _timed_out.setdefault((setting, pattern), n)


def timeout_warnings() -> list[str]:
    """One warning line per pattern that timed out since :func:`reset`."""
    return [
        f"{setting}: regex {pattern!r} ran longer than {SEARCH_TIMEOUT_S:g} s on a "
        f"{n}-character sentence (catastrophic backtracking?): counted as no match and "
        "skipped for the rest of the run; simplify it in your config"
        for setting, pattern, n in timed_out()
    ]
