"""Imports run down, through faces (docs/explanation/architecture.md; issue 29, "Design").

``calibrate/_judged.py`` imported ``commands.push`` (the library reaching into the CLI
layer for ``read_eval_json``) and library modules imported names from sibling
packages' private modules although the sibling's ``__init__`` exports them. Two
rules, checked on the source:

* the library never imports from ``citecal.commands`` (only ``citecal.cli`` does);
* a library module imports a name its sibling package exports through that
  package's face, never from the private module behind it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "citecal"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SKIPPED: tuple[str, ...] = ()
"""Packages exempt from the face rule (none)."""


def library_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "commands" not in p.relative_to(PACKAGE).parts and p.name != "cli.py"
    )


def face_checked_modules() -> list[Path]:
    return [p for p in library_modules() if p.relative_to(PACKAGE).parts[0] not in SKIPPED]


def imports(source: str) -> list[ast.ImportFrom]:
    return [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("citecal")
    ]


def face_of(module: str) -> str | None:
    """``citecal.verify.judge`` for ``citecal.verify.judge._client``; None when public."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and i >= 2:
            return ".".join(parts[:i])
    return None


def sibling_private_imports(source: str, mine: str) -> list[str]:
    """``module: name`` of each name imported from another package's private module that
    the other package's face exports."""
    found = []
    for node in imports(source):
        assert node.module is not None
        face = face_of(node.module)
        if face is None or mine == face or mine.startswith(face + "."):
            continue  # a public module, or the package's own private module
        exported = set(getattr(importlib.import_module(face), "__all__", ()))
        for alias in node.names:
            if alias.name in exported:
                found.append(f"{mine}:{node.lineno}: {node.module}.{alias.name}")
    return found


def test_the_library_never_imports_the_cli_layer() -> None:
    found = [
        f"{module_name(p)}:{n.lineno}: {n.module}"
        for p in library_modules()
        for n in imports(p.read_text(encoding="utf-8"))
        if n.module == "citecal.commands" or (n.module or "").startswith("citecal.commands.")
    ]
    assert found == []


def test_siblings_are_imported_through_their_faces() -> None:
    found = [
        f
        for p in face_checked_modules()
        for f in sibling_private_imports(p.read_text(encoding="utf-8"), module_name(p))
    ]
    assert found == [], "\n".join(found)


def test_the_scan_sees_a_private_import() -> None:
    source = "from citecal.verify.judge._pricing import cost_usd, find_price\n"
    assert sibling_private_imports(source, "citecal.calibrate._x") == [
        "citecal.calibrate._x:1: citecal.verify.judge._pricing.cost_usd",
        "citecal.calibrate._x:1: citecal.verify.judge._pricing.find_price",
    ]
    own = "from citecal.verify.judge._pricing import cost_usd\n"
    assert sibling_private_imports(own, "citecal.verify.judge._judge") == []
