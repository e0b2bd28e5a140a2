"""JSON input with bounded numbers: every JSON file citecal reads is parsed by :func:`loads`.

Python's :mod:`json` reads ``NaN``, ``Infinity`` and ``1e999`` as floats that no
count, threshold or probability may be (a NaN threshold silently means "never", a
negative infinity "always"), and a 5 000-digit integer ends in a ``ValueError``
traceback (Python's 4 300-digit limit) or in numbers no column can hold. So
citecal reads JSON integers of 64 bits (what Parquet, numpy and pandas store) and
finite floats only, and a value nested deeper than :data:`MAX_DEPTH` levels;
anything else is one :class:`JSONInputError` line naming the file
(docs/explanation/security.md, "Resource bounds").
"""

from __future__ import annotations

import json
import math
from typing import Any

from citecal.errors import InputError

MAX_INT = 2**63 - 1
"""Largest JSON integer read (a signed 64-bit integer); the smallest is ``-MAX_INT - 1``."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read."""


class _Refused(ValueError):
    """A number the hooks below refuse (caught in :func:`loads`)."""


class JSONInputError(InputError):
    """A JSON input citecal does not read; ``reason`` is the part after the file's name."""

    def __init__(self, where: str, what: str, reason: str) -> None:
        super().__init__(f"{where}: not {what}: {reason}")
        self.reason = reason


def _int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 19:
        raise _Refused(f"an integer of {len(digits):,} digits ({text[:12]}…)")
    value = int(text)
    if not -MAX_INT - 1 <= value <= MAX_INT:
        raise _Refused(f"the integer {text} does not fit in 64 bits")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: Python reads it as inf
        raise _Refused(f"the number {text[:24]} is out of range")
    return value


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not a number citecal reads")


def _too_deep(value: Any, limit: int) -> bool:
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def check_number(text: str) -> None:
    """Raise ValueError for a JSON number token :func:`loads` would refuse (streaming readers)."""
    if any(c in text for c in ".eE"):
        _float(text)
    else:
        _int(text)


def loads(data: str | bytes, where: str, what: str = "JSON", max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as JSON with bounded numbers and depth (module doc).

    Raises:
        JSONInputError: not JSON, NaN / Infinity / an out-of-range number, an
            integer past 64 bits, or nesting deeper than ``max_depth``.
    """
    try:
        value = json.loads(data, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except _Refused as exc:
        raise JSONInputError(where, what, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise JSONInputError(where, what, str(exc)[:160]) from None
    except RecursionError:
        raise JSONInputError(where, what, f"nested deeper than {max_depth} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:  # bytes that are not UTF-8/16/32
        raise JSONInputError(where, what, str(exc)[:160]) from None
    if _too_deep(value, max_depth):
        raise JSONInputError(where, what, f"nested deeper than {max_depth} levels")
    return value


__all__ = ["MAX_DEPTH", "MAX_INT", "JSONInputError", "check_number", "loads"]
