"""Everything printed is escaped for where it goes (issue 29, item 6; README "Security").

``calibrate --cascade -f html|markdown`` wrote a Rich text table as HTML, so a
``judge_model`` of ``<script>alert(1)</script>`` ran in a browser; Rich markup in a
file name, a judge model or a package name (``[/bold]``) crashed a run or silently
ate part of the name. Two kinds of test: the outputs of the commands that print
untrusted names, with hostile names; and a scan of the source, which finds a Rich
call (``console.print``, ``add_row``, a table title, a progress description) that
interpolates a value into markup without ``rich.markup.escape``.
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from markup_check import rendered_text, unsafe_markup
from rich.console import Console

from citecal.bench import BenchReport, Metrics, render_bench_table
from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "citecal"
TABLE = ROOT / "datasets" / "annotations" / "annotations.parquet"

HOSTILE_NAMES = (
    "[/bold]",
    "gpt[red]-4o[/red]",
    "[link=http://127.0.0.2:9/x]model[/link]",
    "<script>alert(1)</script>",
    "[bold",
)


# --------------------------------------------------------------------- the outputs


@pytest.fixture
def hostile_table(tmp_path: Path) -> Path:
    """The bundled annotation table judged by five judges with hostile names (by record)."""
    table = pd.read_parquet(TABLE)
    codes = table["record_id"].astype("category").cat.codes
    table["judge_model"] = [HOSTILE_NAMES[c % len(HOSTILE_NAMES)] for c in codes]
    path = tmp_path / "ann[red]x[bold].parquet"
    table.to_parquet(path, index=False)
    return path


def cascade_output(table: Path, tmp_path: Path, fmt: str) -> str:
    res = CliRunner().invoke(
        cli,
        ["calibrate", str(table), "--write-cascade", str(tmp_path / f"c-{fmt}.json"), "-f", fmt],
    )
    assert res.exit_code == 0, res.output
    return res.stdout


def test_cascade_table_shows_hostile_model_names_whole(hostile_table: Path, tmp_path: Path) -> None:
    out = cascade_output(hostile_table, tmp_path, "table")
    for name in HOSTILE_NAMES:
        if len(name) < 20:  # longer ones fold over two lines of the column
            assert f"judge:{name}" in out


def test_cascade_markdown_has_no_markup_from_a_model_name(
    hostile_table: Path, tmp_path: Path
) -> None:
    out = cascade_output(hostile_table, tmp_path, "markdown")
    assert out.startswith("## Cascade on") and "| tier |" in out
    assert unsafe_markup(out) == []
    assert "<script>" not in out
    assert rendered_text(out).count("judge:[link=http://127.0.0.2:9/x]model[/link]") == 1


def test_cascade_html_has_no_element_from_a_model_name(hostile_table: Path, tmp_path: Path) -> None:
    out = cascade_output(hostile_table, tmp_path, "html")
    assert out.startswith("<!DOCTYPE html>") and "<table>" in out
    assert "<script" not in out.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_bench_table_prints_hostile_set_names_whole(name: str) -> None:
    m = Metrics(
        n=1, valid=1, supported=1, unsupported=0, decided=1, undecided=0, agreement=1.0,
        false_supports=0, false_support_rate=None, false_rejects=0, false_reject_rate=0.0,
        decision_coverage=1.0, decision_coverage_valid=1.0, precision=1.0, recall=1.0, f1=1.0,
        structural_agreement=None,
    )  # fmt: skip
    report = BenchReport(
        judge=name,
        sets=[name],
        overall=m,
        groups={"package": {name: m}},
        disagreements=[],
        not_extracted=[name],
    )
    buf = io.StringIO()
    render_bench_table(report, Console(file=buf, width=400, color_system=None))
    text = buf.getvalue()
    assert text.count(name) >= 4  # title (set and judge), the slice row, not extracted


def test_rebase_prints_a_hostile_report_name_whole(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    report = tmp_path / "[bold]report[red]x.md"
    report.write_text("The function `f` returns 1 [a.py:1-2].\n")
    res = CliRunner().invoke(
        cli, ["rebase", str(report), "--repo", str(repo), "--from", "HEAD", "--to", "HEAD"]
    )
    assert res.exit_code == 0, res.output
    assert f"citecal rebase · {report}" in res.stdout.replace("\n", "")


# --------------------------------------------------------------------- the scan

RICH_CALLS = {"print", "add_row", "add_column", "add_task", "log"}
TITLE_KEYWORDS = {"title", "caption", "description"}
RENDERABLES = {"Table", "Text", "Panel", "Columns"}
SAFE_CALLS = {"escape", "Text", "len"}

SKIPPED: set[str] = set()

TRUSTED: dict[tuple[str, str], str] = {
    ("citecal/commands/align.py", "_num(result.before.value)"): "a number",
    ("citecal/commands/align.py", "_ci(result.before.ci)"): "two numbers",
    ("citecal/commands/align.py", "_num(c.score.value)"): "a number",
    ("citecal/commands/align.py", "_ci(c.score.ci)"): "two numbers",
    ("citecal/commands/align.py", "_num(c.gain.value)"): "a number",
    ("citecal/commands/align.py", "_ci(c.gain.ci)"): "two numbers",
    ("citecal/commands/align.py", "result.calls"): "a count",
    ("citecal/commands/align.py", "result.judge_calls"): "a count",
    ("citecal/commands/align.py", "result.critic_calls"): "a count",
    ("citecal/commands/align.py", "result.cache_hits"): "a count",
    ("citecal/commands/align.py", "result.tokens"): "a count",
    ("citecal/render/_table.py", "label"): "a row label of SUMMARY_ROWS, a constant",
    ("citecal/render/_table.py", "str(n)"): "a row number",
    ("citecal/render/_table.py", "str(r.risk_rank)"): "a rank (int)",
    ("citecal/render/_table.py", "cells"): "escape()d strings and numbers, built above",
    ("citecal/render/_table.py", "review_title(result)"): "counts in a constant sentence",
    ("citecal/render/_table.py", "detail"): "built from escape() pieces above it",
    ("citecal/render/_table.py", "_STYLE.get(label, '')"): "a style name from a constant",
    ("citecal/render/_table.py", "style"): "a style name from a constant",
    ("citecal/render/_table.py", "result.gate.status"): "PASS, WARN or FAIL (a Literal)",
    ("citecal/commands/validate.py", "style"): "a style name from a constant",
    ("citecal/commands/validate.py", "result.gate.status"): "PASS, WARN or FAIL (a Literal)",
    ("citecal/commands/validate.py", "item.gate.status"): "PASS, WARN or FAIL (a Literal)",
    ("citecal/commands/validate.py", "label"): "a row label, a constant",
    ("citecal/commands/validate.py", "value"): "a number or a percentage",
    ("citecal/commands/validate.py", "hidden"): "a count",
    ("citecal/commands/validate.py", "where"): "'line N' or 'item N'",
    ("citecal/commands/status.py", "str(a.submitted)"): "a count",
    ("citecal/commands/status.py", "str(a.drafts)"): "a count",
    ("citecal/commands/status.py", "str(a.discarded)"): "a count",
    ("citecal/commands/status.py", "str(a.shared)"): "a count",
    ("citecal/commands/status.py", "'—' if a.agreement is None else f'{a.agreement:.0%}'"): "%",
    ("citecal/commands/chunks.py", "lines"): "line numbers",
    ("citecal/cascade/_render.py", "head"): "a column heading from HEADS, a constant",
    ("citecal/bench/_render.py", "head"): "a column heading from COLUMNS, a constant",
    ("citecal/commands/eval_batch.py", "task.description"): "a constant description",
}
"""Reviewed exceptions: (module, expression) → why the value cannot hold markup."""


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _constant_loop(it: ast.expr) -> bool:
    """``for col in ("a", "b")`` or ``for i, col in enumerate(HEADER)``: constants only."""
    if isinstance(it, ast.Call) and _name(it.func) == "enumerate" and it.args:
        it = it.args[0]
    if isinstance(it, ast.Tuple | ast.List):
        return all(isinstance(e, ast.Constant) for e in it.elts)
    return isinstance(it, ast.Name) and it.id.isupper()


def _renderables(tree: ast.AST) -> set[str]:
    """Names bound to a Rich renderable (``t = Table(...)``), a ``*_table(...)`` result, or a
    loop over constants (column headings)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            called = _name(node.value.func) or ""
            if called in RENDERABLES or called.endswith("_table"):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.For) and _constant_loop(node.iter):
            found |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return found


def _unsafe(node: ast.expr, module: str, renderables: set[str]) -> list[str]:
    """The parts of a Rich call's argument that could carry markup nobody escaped."""
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.Starred):
        return _unsafe(node.value, module, renderables)
    if isinstance(node, ast.GeneratorExp | ast.ListComp):
        return _unsafe(node.elt, module, renderables)
    if isinstance(node, ast.IfExp):
        return _unsafe(node.body, module, renderables) + _unsafe(node.orelse, module, renderables)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _unsafe(node.left, module, renderables) + _unsafe(node.right, module, renderables)
    if (module, ast.unparse(node)) in TRUSTED:
        return []
    if isinstance(node, ast.Call):
        called = _name(node.func) or ""
        if called in SAFE_CALLS or called in RENDERABLES or called.endswith("_table"):
            return []
        if called == "join" and isinstance(node.func, ast.Attribute):  # "\n".join(parts)
            parts = [node.func.value, *node.args]
            return [bad for part in parts for bad in _unsafe(part, module, renderables)]
    if isinstance(node, ast.Name) and node.id in renderables:
        return []
    if isinstance(node, ast.JoinedStr):
        bad = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and part.format_spec is None:
                bad += _unsafe(part.value, module, renderables)
        return bad
    return [ast.unparse(node)]


def scan(path: Path) -> list[str]:
    module = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    renderables = _renderables(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        args: list[ast.expr] = []
        markup_off = any(
            k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in node.keywords
        )  # console.print(text, markup=False): nothing in it is read as markup
        if called in RICH_CALLS and isinstance(node.func, ast.Attribute) and not markup_off:
            args += node.args if called != "add_task" else node.args[:1]
        if called in RENDERABLES | RICH_CALLS | {"update"}:
            args += [k.value for k in node.keywords if k.arg in TITLE_KEYWORDS]
        for arg in args:
            found += [f"{module}:{arg.lineno}: {bad}" for bad in _unsafe(arg, module, renderables)]
    return found


def rich_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "testing" not in p.parts
        and p.relative_to(ROOT).as_posix() not in SKIPPED
        and re.search(r"^\s*from rich\b|^\s*import rich\b", p.read_text(), re.M)
    )


def test_the_scan_finds_what_it_looks_for() -> None:
    bad = ast.parse(
        'console.print(f"Cascade on {n} labels")\n'
        "table.add_row(tier.name, str(tier.reached))\n"
        'Table(title=f"By {by}")\n'
        'bar.add_task(f"pushing to {dataset}")\n'
    )
    found = [f for stmt in bad.body for f in _unsafe_statement(stmt)]
    assert found == ["n", "tier.name", "str(tier.reached)", "by", "dataset"]
    good = ast.parse(
        'console.print(escape(f"Cascade on {n} labels"))\n'
        "table.add_row(escape(tier.name), Text(tier.model), f'{tier.cost:.4f}')\n"
    )
    assert [f for stmt in good.body for f in _unsafe_statement(stmt)] == []


def _unsafe_statement(stmt: ast.stmt) -> list[str]:
    call = stmt.value  # type: ignore[attr-defined]
    args = list(call.args)[:1] if _name(call.func) == "add_task" else list(call.args)
    args += [k.value for k in call.keywords if k.arg in TITLE_KEYWORDS]
    return [bad for a in args for bad in _unsafe(a, "test", set())]


def test_every_rich_call_escapes_what_it_interpolates() -> None:
    modules = rich_modules()
    assert len(modules) >= 8  # the scan sees the modules that print with Rich
    found = [f for path in modules for f in scan(path)]
    assert found == [], "\n".join(found)
