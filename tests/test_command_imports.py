"""Command modules never import each other in a cycle (issue 24): shared set-up lives in the
underscore helpers of citecal/commands/ (``_judge``, ``_options``, …)."""

from __future__ import annotations

import ast
from pathlib import Path

COMMANDS = Path(__file__).resolve().parents[1] / "citecal" / "commands"


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("citecal.commands."):
                found.add(node.module.removeprefix("citecal.commands."))
            elif node.module == "citecal.commands":
                found |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("citecal.commands.")
                for a in node.names
                if a.name.startswith("citecal.commands.")
            }
    return found


GRAPH = {p.stem: imports_of(p) for p in COMMANDS.glob("*.py")}


def test_no_two_command_modules_import_each_other() -> None:
    cycles = sorted({tuple(sorted((a, b))) for a, deps in GRAPH.items() for b in deps
                     if a in GRAPH.get(b, set())})  # fmt: skip
    assert cycles == []


def test_the_judge_set_up_has_one_home() -> None:
    assert "_judge" in GRAPH["eval"] and "_judge" in GRAPH["correct"]
    assert "eval" not in GRAPH["correct"] and "eval" not in GRAPH["bench"]
