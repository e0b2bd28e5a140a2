"""JSON input with bounded numbers: every JSON file citecal reads is parsed by :func:`loads`.

Python's :mod:`json` reads ``NaN``, ``Infinity`` and ``1e999`` as floats that no
count, threshold or probability may be (a NaN threshold silently means "never", a
negative infinity "always"), and a 5 000-digit integer ends in a ``ValueError``
traceback (Python's 4 300-digit limit). So citecal reads JSON integers of at most
:data:`MAX_INT_DIGITS` digits (a line number of 20 digits still reaches the check
that calls it ``invalid_range``) and finite floats only, nested at most
:data:`MAX_DEPTH` levels; anything else is one :class:`JSONInputError` line naming
the file and the place (docs/explanation/security.md, "Resource bounds").
"""

from __future__ import annotations

import json
import math
from typing import Any

from citecal.errors import InputError

MAX_INT_DIGITS = 40
"""Most digits a JSON integer may have (a 128-bit integer has 39)."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read."""


class NumberRefused(ValueError):
    """A number :data:`HOOKS` refuse; its text says which and why."""


class JSONInputError(InputError):
    """A JSON input citecal does not read; ``reason`` is the part after the file's name."""

    def __init__(self, where: str, what: str, reason: str) -> None:
        super().__init__(f"{where}: not {what}: {reason}")
        self.reason = reason


def _int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise NumberRefused(
            f"an integer of {len(digits):,} digits ({text[:12]}…; at most {MAX_INT_DIGITS})"
        )
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: Python reads it as inf
        raise NumberRefused(f"the number {text[:24]} is not a finite number")
    return value


def _constant(name: str) -> float:
    raise NumberRefused(f"{name} is not a finite number")


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed JSON value nests arrays/objects deeper than ``limit`` (iterative,
    so a hostile nesting cannot exhaust the stack)."""
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


HOOKS: dict[str, Any] = {"parse_int": _int, "parse_float": _float, "parse_constant": _constant}
"""``json.loads(text, **HOOKS)`` bounds numbers as :func:`loads` does (raising NumberRefused)."""


class _Refused:
    """Stands where a refused number was, so :func:`loads` can say where it was."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _where(value: Any, target: _Refused) -> str:
    """The dotted path of ``target`` in ``value`` (``figures.agreement``, ``x.0``)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if node is target:
            return ".".join(path)
        if isinstance(node, dict):
            stack.extend((v, (*path, str(k))) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*path, str(i))) for i, v in enumerate(node))
    return ""


def loads(data: str | bytes, where: str, what: str = "JSON", max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as JSON with bounded numbers and depth (module doc).

    A refused number is reported with its place in the document
    (``figures.agreement: NaN is not a finite number``).

    Raises:
        JSONInputError: not JSON, NaN / Infinity / an out-of-range number, an
            integer past 64 bits, or nesting deeper than ``max_depth``.
    """
    refused: list[_Refused] = []

    def guard(parse: Any) -> Any:
        def hook(text: str) -> Any:
            try:
                return parse(text)
            except NumberRefused as exc:
                refused.append(_Refused(str(exc)))
                return refused[-1]

        return hook

    deep = f"JSON nested too deeply (more than {max_depth} levels)"
    try:
        value = json.loads(
            data,
            parse_int=guard(_int),
            parse_float=guard(_float),
            parse_constant=guard(_constant),
        )
    except json.JSONDecodeError as exc:
        raise JSONInputError(where, what, str(exc)[:160]) from None
    except RecursionError:
        raise JSONInputError(where, what, deep) from None
    except (UnicodeDecodeError, ValueError) as exc:  # bytes that are not UTF-8/16/32
        raise JSONInputError(where, what, str(exc)[:160]) from None
    if too_deep(value, max_depth):
        raise JSONInputError(where, what, deep)
    if refused:
        at = _where(value, refused[0])
        raise JSONInputError(where, what, f"{at}: {refused[0].why}" if at else refused[0].why)
    return value


__all__ = [
    "HOOKS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JSONInputError",
    "NumberRefused",
    "loads",
    "too_deep",
]
