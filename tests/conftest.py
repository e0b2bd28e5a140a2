"""Shared fixtures: the bundled example and tiny repositories made on the fly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_DIR = ROOT / "datasets" / "examples"


@pytest.fixture(scope="session")
def example_report() -> Path:
    return EXAMPLE_DIR / "report.md"


@pytest.fixture(scope="session")
def example_repo() -> Path:
    return EXAMPLE_DIR / "shopcart"


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Create a repository directory from {relative path: content}."""

    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        root.mkdir(exist_ok=True)
        return root

    return make


@pytest.fixture(autouse=True)
def _no_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never read the developer's own ``~/.config/citecal/config.toml``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "xdg-config"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print how many documentation examples ran (tests/test_doc_examples.py), when it did."""
    import sys

    module = sys.modules.get("test_doc_examples")
    if module is not None and any(module.COUNTS.values()):
        terminalreporter.write_line(module.summary_line())
