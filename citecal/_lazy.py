"""Package attributes that import their module on first use (PEP 562).

``import citecal`` and ``citecal --help`` stay fast only if a package's
``__init__`` does not import everything it names: the CLI's start-up figure and
``calibrate``'s memory figure in README "Benchmarks" depend on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that loads ``names[name]`` when asked."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
