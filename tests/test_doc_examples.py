"""Every shell and Python example in README.md and docs/ runs here, so none can rot.

A fenced ``bash``/``console``/``sh``/``python`` block runs in a scratch directory that holds
the bundled data (``datasets/`` and ``.venv`` linked in), with ``$T`` a scratch directory of
its own and ``.venv/bin`` first on PATH. In a ``console`` block, the lines after a ``$ ``
command are its expected output (stdout and stderr, trailing spaces ignored); a line ``…``
stands for any number of lines (an abridged part), and ``…`` inside a line for any text (a
time, a temporary path). Every command must exit 0.

An HTML comment on the line before a block says what kind of example it is:

- ``<!-- example: judge -->``: runs under the bundled local test judge
  (``python -m citecal.testing -- …``, ``OPENAI_BASE_URL`` pointing at it);
- ``<!-- example: synopsis -->``: a usage synopsis: every option it names must be an option
  of that command;
- ``<!-- example: skip REASON -->``: not run, and the reason is printed (a server the suite
  cannot start, another machine, the suite itself).

The count of examples run, checked and skipped is printed at the end of the module.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from citecal.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LANGS = {"bash", "console", "sh", "shell", "python"}
MARK = re.compile(r"^<!-- example: (?P<kind>judge|synopsis|skip)(?: (?P<why>.*?))? -->$")
ABRIDGED = "…"
TIMEOUT_S = 120


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    lang: str
    body: str
    kind: str  # run | judge | synopsis | skip
    why: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def collect() -> list[Example]:
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w*)\s*$", lines[i])
            if not m:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if m[1] in LANGS:
                before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
                mark = MARK.match(before)
                found.append(
                    Example(
                        str(page.relative_to(ROOT)),
                        i + 1,
                        m[1],
                        "\n".join(lines[i + 1 : end]) + "\n",
                        mark["kind"] if mark else "run",
                        (mark["why"] or "") if mark else "",
                    )
                )
            i = end + 1
    return found


# Pages kept verbatim so that later edits of their README section can be ported (the
# cascade page): their examples are marked here instead of in the page.
SKIP_BY_FIRST_LINE = {
    (
        "docs/explanation/cascade.md",
        "citecal eval report.md --repo . --no-llm",
    ): "needs a report of your own and the fetched ground truth: tests/cascade run these",
}


def _marked(ex: Example) -> Example:
    why = SKIP_BY_FIRST_LINE.get((ex.page, ex.body.splitlines()[0].split("  ")[0].strip()))
    return Example(ex.page, ex.line, ex.lang, ex.body, "skip", why) if why else ex


EXAMPLES = [_marked(e) for e in collect()]
COUNTS = {"run": 0, "checked": 0, "skipped": 0}


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality where an ``…`` line matches any run of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == ABRIDGED:
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and same_line(expected[0], actual[0]) and matches(expected[1:], actual[1:])


def same_line(expected: str, actual: str) -> bool:
    """Equal, where ``…`` inside a shown line stands for any text (a time, a temporary path)."""
    if ABRIDGED not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split(ABRIDGED))
    return re.fullmatch(pattern, actual) is not None


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines (with ``\\`` continuations) and the output shown after each."""
    steps: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            assert steps, f"output before the first command: {line!r}"
            steps[-1][1].append(line.rstrip())
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd + "\n" + lines[i]
        steps.append((cmd, []))
        i += 1
    return steps


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("datasets", ".venv"):
        (work / name).symlink_to(ROOT / name)
    (tmp_path / "T").mkdir()
    return work


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CITECAL_"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        T=str(scratch.parent / "T"),
        COLUMNS="130",
        NO_COLOR="1",
        TERM="dumb",
        CITECAL_CACHE_PATH=str(scratch.parent / "judge-cache.sqlite3"),
        HOME=str(scratch.parent),  # no user config file of whoever runs the suite
    )
    return env


def _run(argv: list[str], scratch: Path, judge: bool) -> subprocess.CompletedProcess[str]:
    if judge:
        argv = [sys.executable, "-m", "citecal.testing", "--", *argv]
    return subprocess.run(
        argv,
        cwd=scratch,
        env=_env(scratch),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


SEP = "@@citecal-example-step@@"


def run_console(ex: Example, scratch: Path) -> None:
    steps = console_steps(ex.body)
    script = ["set -e"]
    for n, (cmd, _) in enumerate(steps):
        script += [f"echo '{SEP}{n}'", f"{{ {cmd}\n}} 2>&1"]
    (scratch.parent / "example.sh").write_text("\n".join(script) + "\n")
    done = _run(["bash", str(scratch.parent / "example.sh")], scratch, ex.kind == "judge")
    outputs = re.split(rf"^{SEP}\d+\n", done.stdout, flags=re.M)[1:]
    assert done.returncode == 0, (
        f"{ex.id}: step {len(outputs)} `{steps[len(outputs) - 1][0]}` exited "
        f"{done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
    )
    for (cmd, expected), out in zip(steps, outputs, strict=True):
        actual = [line.rstrip() for line in out.splitlines()]
        if expected and not matches(expected, actual):
            shown = "\n".join(actual)
            pytest.fail(f"{ex.id}: `{cmd}` printed something else than shown:\n{shown}")


def run_script(ex: Example, scratch: Path) -> None:
    if ex.lang == "python":
        (scratch.parent / "example.py").write_text(ex.body)
        argv = [sys.executable, str(scratch.parent / "example.py")]
    else:
        (scratch.parent / "example.sh").write_text("set -e\n" + ex.body)
        argv = ["bash", str(scratch.parent / "example.sh")]
    done = _run(argv, scratch, ex.kind == "judge")
    assert done.returncode == 0, f"{ex.id} exited {done.returncode}:\n{done.stdout}{done.stderr}"


def check_synopsis(ex: Example) -> None:
    for line in ex.body.splitlines():
        m = re.match(r"^citecal ([a-z-]+)", line)
        if m:
            name = m[1]
        cmd = cli.get_command(click.Context(cli), name)
        assert cmd is not None, f"{ex.id}: no command `citecal {name}`"
        known = {o for p in cmd.params for o in getattr(p, "opts", [])}
        known |= {o for p in cmd.params for o in getattr(p, "secondary_opts", [])}
        for flag in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", line.split("#")[0]):
            assert flag in known, f"{ex.id}: `citecal {name}` has no option {flag}"


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.id)
def test_example(ex: Example, scratch: Path) -> None:
    if ex.kind == "skip":
        COUNTS["skipped"] += 1
        pytest.skip(f"{ex.id}: {ex.why}")
    if ex.kind == "synopsis":
        check_synopsis(ex)
        COUNTS["checked"] += 1
        return
    if ex.lang == "console":
        run_console(ex, scratch)
    else:
        run_script(ex, scratch)
    COUNTS["run"] += 1


def summary_line() -> str:
    """How many examples the docs hold and what became of them (tests/conftest.py prints it)."""
    return (
        f"doc examples: {len(EXAMPLES)} fenced shell/Python examples in "
        f"{len({e.page for e in EXAMPLES})} pages: "
        f"{sum(e.kind in ('run', 'judge') for e in EXAMPLES)} to run "
        f"({sum(e.kind == 'judge' for e in EXAMPLES)} against the local test judge), "
        f"{sum(e.kind == 'synopsis' for e in EXAMPLES)} synopses checked against the CLI, "
        f"{sum(e.kind == 'skip' for e in EXAMPLES)} skipped with a reason; this run: "
        f"{COUNTS['run']} ran, {COUNTS['checked']} checked, {COUNTS['skipped']} skipped"
    )


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 30, summary_line()
    assert sum(e.kind in ("run", "judge") for e in EXAMPLES) >= 9, summary_line()
