"""The evaluated repository cannot loosen its own verification (issue 29, item 9).

Its ``[tool.citecal]`` could set ``extractive.supports_threshold`` and
``partial_threshold`` to anything, so a repository could make its own citations pass
term matching with a threshold of 0.1. Now each key a repository may set has a
direction (``citecal.config.REPO_RULES``): a value that would loosen the check the
layers below it set (the defaults and the user's config file) is refused, listed on
stderr, and the verdicts are what they would be without it; a stricter value applies.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.batch import JobSettings
from citecal.cli import cli
from citecal.config import config_layers, load_config

SHOPCART = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "shopcart"
# An unknown claim decided by term coverage (the user's own choice below): 29% of its terms are
# in the cited line, supports at a threshold of 0.1, not at 0.8.
REPORT = (
    "Tokens are valid for one hour [shopcart/auth.py:10], e.g. a token issued at noon "
    "expires at 1 p.m.\n"
)


@pytest.fixture(autouse=True)
def coverage_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's config lets term coverage decide unknown claims, where thresholds matter."""
    xdg = tmp_path / "xdg"
    (xdg / "citecal").mkdir(parents=True)
    (xdg / "citecal" / "config.toml").write_text(
        '[classify]\ndefault_unknown_handling = "extractive"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))


def make_repo(tmp_path: Path, toml: str, name: str = "citecal.toml") -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    shutil.copytree(SHOPCART, repo)
    if name == "pyproject.toml":
        toml = '[project]\nname = "x"\n\n' + toml.replace("[", "[tool.citecal.")
    (repo / name).write_text(toml)
    report = tmp_path / "report.md"
    report.write_text(REPORT)
    return repo, report


def evaluate(report: Path, repo: Path, env: dict[str, str] | None = None) -> tuple[dict, str]:
    res = CliRunner().invoke(
        cli, ["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json"], env=env
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


@pytest.mark.parametrize("name", ["citecal.toml", "pyproject.toml"])
def test_a_repository_cannot_lower_its_thresholds(tmp_path: Path, name: str) -> None:
    repo, report = make_repo(
        tmp_path, "[extractive]\nsupports_threshold = 0.1\npartial_threshold = 0.05\n", name
    )
    loose, err = evaluate(report, repo)
    (repo / name).unlink()
    plain, _ = evaluate(report, repo)
    assert [c["verdict"] for c in plain["citations"]] == ["not_supports"]
    assert [c["verdict"] for c in loose["citations"]] == ["not_supports"]  # was "supports"
    assert "refused extractive.supports_threshold = 0.1 (lower than 0.8)" in err
    assert "extractive.partial_threshold = 0.05 (lower than 0.5)" in err
    assert load_config(repo).extractive.supports_threshold == 0.8


def test_a_repository_may_make_its_checks_stricter(tmp_path: Path) -> None:
    repo, report = make_repo(tmp_path, "[extractive]\nsupports_threshold = 0.95\n")
    _, err = evaluate(report, repo)
    assert "applied extractive.supports_threshold" in err and "refused" not in err
    assert load_config(repo).extractive.supports_threshold == 0.95


@pytest.mark.parametrize(
    ("toml", "refused"),
    [
        ("[extractive]\nfuzzy_max_distance = 6\n", "extractive.fuzzy_max_distance = 6"),
        ("[extractive]\nfuzzy_min_length = 1\n", "extractive.fuzzy_min_length = 1"),
        ("[extract]\nmin_claim_words = 40\n", "extract.min_claim_words = 40"),
        (
            '[classify]\ndefault_unknown_handling = "extractive"\n',
            "classify.default_unknown_handling",
        ),
        ("[excerpt]\nmatch_threshold = 0.1\n", "excerpt.match_threshold = 0.1"),
        ("[excerpt]\nprefix_chars = 1\n", "excerpt.prefix_chars = 1"),
    ],
)
def test_every_loosening_key_is_refused(
    tmp_path: Path, toml: str, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))  # the defaults
    repo, report = make_repo(tmp_path, toml)
    _, err = evaluate(report, repo)
    assert f"refused {refused}" in err, err


def test_keys_with_no_stricter_direction_are_not_a_repositorys(tmp_path: Path) -> None:
    repo, report = make_repo(tmp_path, "[excerpt]\npage_lines = 3\nmin_word_chars = 1\n")
    _, err = evaluate(report, repo)
    assert "ignored excerpt.page_lines, excerpt.min_word_chars" in err
    assert load_config(repo).excerpt.page_lines == 50


def test_stricter_than_the_users_own_looser_setting_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg2"
    (xdg / "citecal").mkdir(parents=True)
    (xdg / "citecal" / "config.toml").write_text("[extractive]\nsupports_threshold = 0.6\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    repo, report = make_repo(tmp_path, "[extractive]\nsupports_threshold = 0.7\n")
    _, err = evaluate(report, repo)
    assert "applied extractive.supports_threshold" in err
    assert load_config(repo).extractive.supports_threshold == 0.7
    (repo / "citecal.toml").write_text("[extractive]\nsupports_threshold = 0.5\n")
    assert load_config(repo).extractive.supports_threshold == 0.6


def test_an_eval_batch_worker_refuses_the_same(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, "[extractive]\nsupports_threshold = 0.1\n")
    job = JobSettings(
        output=str(tmp_path / "out"),
        below=config_layers(None, None, include_env=False),
        above=[],
        overrides={},
        no_llm=True,
    )
    assert job.config_for(str(repo)).extractive.supports_threshold == 0.8


def test_every_allowed_key_has_a_direction() -> None:
    from citecal.config import REPO_RULES

    assert set(REPO_RULES["extractive"]) >= {"supports_threshold", "partial_threshold"}
    assert all(rule in ("raise", "lower", "judged", "free") for s in REPO_RULES.values()
               for rule in s.values())  # fmt: skip
    assert REPO_RULES["extractive"]["supports_threshold"] == "raise"
