"""The evaluated repository's config may tune verification only (README "Security").

A hostile ``pyproject.toml`` / ``citecal.toml`` tries to send the judge's
requests, and the user's secrets, to a server of its choosing, to write the
verdict cache elsewhere, and to hang the run with a catastrophic regex. The
"hostile" endpoint is the project's local OpenAI-protocol server, which
records every request with its ``Authorization`` header.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from citecal.cli import cli
from citecal.config import REPO_ALLOWED_KEYS, load_config, split_repo_settings
from citecal.errors import ConfigError
from citecal.testing import FakeOpenAIServer

pytestmark = pytest.mark.integration

CODE = (
    "def apply_discount(cart, rules):\n"
    "    discount = rules.best_discount(cart.items)\n"
    "    return cart.total - discount\n"
)
# "handles" and "ensures" make the claim abstractive: it goes to the judge.
REPORT = "The checkout code handles discounts and ensures the total is reduced [a.py:1-3].\n"
SECRET = "s3cret-token-of-the-user"


def run(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    base = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CITECAL_CACHE_PATH": ""}
    result = CliRunner().invoke(cli, args, env={**base, **env})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def hostile() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def users_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def make_repo(tmp_path: Path, config: str, *, as_pyproject: bool) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text(CODE)
    if as_pyproject:
        body = config.replace("[judge]", "[tool.citecal.judge]")
        body = body.replace("[classify]", "[tool.citecal.classify]")
        body = body.replace("[extractive]", "[tool.citecal.extractive]")
        (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n' + body)
    else:
        (repo / "citecal.toml").write_text(config)
    report = tmp_path / "report.md"
    report.write_text(REPORT)
    return repo, report


@pytest.mark.parametrize("as_pyproject", [True, False], ids=["pyproject", "citecal.toml"])
def test_repo_cannot_choose_endpoint_or_key_variable(
    hostile: FakeOpenAIServer, tmp_path: Path, as_pyproject: bool
) -> None:
    repo, report = make_repo(
        tmp_path,
        f'[judge]\nbase_url = "{hostile.base_url}"\napi_key_env = "REPO_NAMED_SECRET"\n',
        as_pyproject=as_pyproject,
    )
    code, out, err = run(
        ["eval", str(report), "--repo", str(repo), "-f", "json"],
        {"REPO_NAMED_SECRET": SECRET, "CITECAL_CACHE_PATH": str(tmp_path / "c.sqlite3")},
    )
    assert code == 0, err
    assert hostile.calls == 0 and hostile.requests == []
    assert "ignored judge.base_url, judge.api_key_env" in err
    # No key for the default endpoint: the judge degrades, nothing is sent anywhere.
    assert "OPENAI_API_KEY is not set" in out
    assert SECRET not in out + err


def test_repo_cannot_pick_which_secret_the_users_endpoint_gets(
    hostile: FakeOpenAIServer, users_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    repo, report = make_repo(
        tmp_path,
        f'[judge]\nbase_url = "{hostile.base_url}"\napi_key_env = "REPO_NAMED_SECRET"\n',
        as_pyproject=True,
    )
    env = {
        "OPENAI_BASE_URL": users_server.base_url,
        "OPENAI_API_KEY": "the-users-key",
        "REPO_NAMED_SECRET": SECRET,
        "CITECAL_CACHE_PATH": str(tmp_path / "c.sqlite3"),
    }
    code, _, err = run(["eval", str(report), "--repo", str(repo), "-f", "json"], env)
    assert code == 0, err
    assert hostile.calls == 0
    assert users_server.calls > 0
    auth = {r.headers.get("authorization") for r in users_server.requests}
    assert auth == {"Bearer the-users-key"}


def test_repo_cache_path_is_ignored_and_said_so(
    users_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "planted" / "cache.sqlite3"
    repo, report = make_repo(tmp_path, f'[judge]\ncache_path = "{elsewhere}"\n', as_pyproject=False)
    xdg_cache = tmp_path / "xdg-cache"
    env = {
        "OPENAI_BASE_URL": users_server.base_url,
        "OPENAI_API_KEY": "k",
        "XDG_CACHE_HOME": str(xdg_cache),
    }
    code, _, err = run(["eval", str(report), "--repo", str(repo), "-f", "json"], env)
    assert code == 0, err
    assert users_server.calls > 0
    assert not (tmp_path / "elsewhere").exists()
    assert (xdg_cache / "citecal" / "judge-cache.sqlite3").is_file()
    assert "ignored judge.cache_path" in err


def test_applied_repo_settings_are_listed(tmp_path: Path) -> None:
    repo, report = make_repo(
        tmp_path, "[extractive]\nsupports_threshold = 0.9\n", as_pyproject=True
    )
    code, _, err = run(["eval", str(report), "--repo", str(repo), "--no-llm", "-f", "json"], {})
    assert code == 0, err
    assert f"repo config {repo / 'pyproject.toml'} [tool.citecal]: applied " in err
    assert "extractive.supports_threshold" in err and "ignored" not in err
    assert load_config(repo).extractive.supports_threshold == 0.9


def test_split_keeps_only_the_allowlist() -> None:
    layer = split_repo_settings(
        "repo",
        {
            "extractive": {"supports_threshold": 0.9, "fuzzy_max_distance": 1},
            "extract": {"min_claim_words": 5, "non_claim_patterns": ["(a+)+$"]},
            "classify": {"extractive_indicators": ["x"], "default_unknown_handling": "llm"},
            "judge": {
                "base_url": "http://evil",
                "api_key_env": "AWS_SECRET_ACCESS_KEY",
                "cache_path": "/etc/x",
                "prompt": "/etc/passwd",
                "judge_model": "o1-pro",
                # README "Judge confidence": the source, K and the simulated annotators'
                # table are the user's (a repository must not choose how sure it looks).
                "confidence": "verbal",
                "samples": 2,
                "simulated_from": "/etc/shadow",
            },
            "argilla": {"api_url": "http://evil", "api_key": "k"},
            "validation": {"max_file_bytes": 10**12},
        },
    )
    assert layer.settings == {
        "extractive": {"supports_threshold": 0.9, "fuzzy_max_distance": 1},
        "extract": {"min_claim_words": 5},
        "classify": {"default_unknown_handling": "llm"},
    }
    assert set(layer.ignored) == {
        "extract.non_claim_patterns",
        "classify.extractive_indicators",
        "judge.base_url",
        "judge.api_key_env",
        "judge.cache_path",
        "judge.prompt",
        "judge.judge_model",
        "judge.confidence",
        "judge.samples",
        "judge.simulated_from",
        "argilla.api_url",
        "argilla.api_key",
        "validation.max_file_bytes",
    }
    assert set(layer.applied) == {
        "extractive.supports_threshold",
        "extractive.fuzzy_max_distance",
        "extract.min_claim_words",
        "classify.default_unknown_handling",
    }


def test_allowlist_names_no_url_key_path_or_regex() -> None:
    risky = ("url", "key", "path", "env", "prompt", "indicators", "patterns", "model", "pricing")
    for section, keys in REPO_ALLOWED_KEYS.items():
        assert section not in ("judge", "argilla", "validation")
        for key in keys:
            assert not any(word in key for word in risky), f"{section}.{key}"


def test_unknown_repo_key_is_still_an_error() -> None:
    with pytest.raises(ConfigError, match=r"extractive\.suports_threshold"):
        split_repo_settings("repo", {"extractive": {"suports_threshold": 0.9}})


def test_user_config_file_may_set_the_endpoint(
    users_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the repository may not set, the user's own config file may (README "Security")."""
    xdg = tmp_path / "xdg-config"
    (xdg / "citecal").mkdir(parents=True)
    (xdg / "citecal" / "config.toml").write_text(
        f'[judge]\nbase_url = "{users_server.base_url}"\napi_key_env = "MY_JUDGE_KEY"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    repo, report = make_repo(tmp_path, "", as_pyproject=False)
    env = {"MY_JUDGE_KEY": "mine", "CITECAL_CACHE_PATH": str(tmp_path / "c.sqlite3")}
    code, _, err = run(["eval", str(report), "--repo", str(repo), "-f", "json"], env)
    assert code == 0, err
    assert {r.headers.get("authorization") for r in users_server.requests} == {"Bearer mine"}


# --------------------------------------------------------------------------- regexes

CATASTROPHIC = ("(a+)+$", "(a|aa)+$")


def test_catastrophic_user_regex_is_bounded_and_eval_finishes(tmp_path: Path) -> None:
    """``re`` would backtrack for hours on these; the run finishes and says which pattern."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text(CODE)
    report = tmp_path / "report.md"
    evil = "a" * 40 + "!"
    report.write_text(f"The discount value is {evil} [a.py:1-3].\n\nThe total is {evil}\n")
    cfg = tmp_path / "mine.toml"
    patterns = ", ".join(f"'{p}'" for p in CATASTROPHIC)
    cfg.write_text(
        f"[classify]\nextractive_indicators = [{patterns}]\n"
        f"[extract]\nnon_claim_patterns = [{patterns}]\n"
    )
    exe = shutil.which("citecal", path=str(Path(sys.executable).parent))
    assert exe
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            exe,
            "eval",
            str(report),
            "--repo",
            str(repo),
            "--config",
            str(cfg),
            "--no-llm",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 < 60
    assert "classify.extractive_indicators: regex '(a|aa)+$' ran longer than" in proc.stderr
    assert "extract.non_claim_patterns: regex '(a|aa)+$' ran longer than" in proc.stderr
