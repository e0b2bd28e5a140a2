"""The tutorial (docs/tutorial/index.md) and README's loop run as written against the real stack.

Its console blocks are executed in order in a scratch directory with the bundled data, as a
newcomer would type them; the only changes are names made unique (the dataset and the two
annotators: the stack is shared) and the people's answers, which two annotator accounts
submit through the API where the tutorial has them click in the browser. ``make`` lines are
not run: the ``argilla_stack`` fixture provides the stack (and a shared one must not be
stopped) and ``make install`` made the environment this test runs in. Expected output shown
in the tutorial is compared as in tests/test_doc_examples.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import argilla as rg
import pytest
from annotate_factories import ROOT, Stack

sys.path.insert(0, str(ROOT / "tests"))
from test_doc_examples import SEP, console_steps, matches

pytestmark = pytest.mark.integration
TUTORIAL = ROOT / "docs" / "tutorial" / "index.md"


README = ROOT / "README.md"


def page_steps(page: Path, after: str = "") -> list[tuple[str, list[str]]]:
    """The console commands of ``page`` (from the heading ``after`` on, to the next heading)."""
    text = page.read_text()
    if after:
        text = text.split(after, 1)[1].split("\n## ", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for body in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M):
        steps += console_steps(body)
    return steps


LOOPS = {
    "tutorial": (lambda: page_steps(TUTORIAL), "shopcart-tutorial"),
    "readme": (lambda: page_steps(README, "## The loop in six commands"), "shopcart-review"),
}


def run_steps(steps, work: Path, env: dict[str, str], subst: dict[str, str]) -> list[str]:
    script = ["set -e"]
    for n, (cmd, _) in enumerate(steps):
        for old, new in subst.items():
            cmd = cmd.replace(old, new)
        script += [f"echo '{SEP}{n}'", f"{{ {cmd}\n}} 2>&1"]
    script.append(f'printf %s "$T" > {work.parent / "T.path"}')  # $T for the next part
    (work.parent / "tutorial.sh").write_text("\n".join(script) + "\n")
    done = subprocess.run(
        ["bash", str(work.parent / "tutorial.sh")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outputs = re.split(rf"^{SEP}\d+\n", done.stdout, flags=re.M)[1:]
    assert done.returncode == 0, (
        f"tutorial step `{steps[len(outputs) - 1][0]}` exited {done.returncode}:\n"
        f"{done.stdout[-4000:]}{done.stderr[-2000:]}"
    )
    for (cmd, expected), out in zip(steps, outputs, strict=True):
        actual = [line.rstrip() for line in out.splitlines()]
        for old, new in subst.items():
            expected = [line.replace(old, new) for line in expected]
        assert not expected or matches(expected, actual), (
            f"tutorial step `{cmd}` printed something else than shown:\n" + "\n".join(actual)
        )
    return outputs


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_the_loop_runs_as_written(loop: str, argilla_stack: Stack, tmp_path: Path) -> None:
    """The tutorial, and README's loop in six commands."""
    tag = uuid.uuid4().hex[:8]
    dataset, alice, bob = f"test_tutorial_{tag}", f"test_tut_alice_{tag}", f"test_tut_bob_{tag}"
    steps_of, shown_dataset = LOOPS[loop]
    subst = {shown_dataset: dataset, "alice": alice, "bob": bob}
    work = tmp_path / "work"
    work.mkdir()
    for name in ("datasets", ".venv"):
        (work / name).symlink_to(ROOT / name)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "T": str(tmp_path / "T"),
        "ARGILLA_API_URL": argilla_stack.url,
        "ARGILLA_API_KEY": argilla_stack.api_key,
        "CITECAL_CACHE_PATH": str(tmp_path / "judge-cache.sqlite3"),
        "COLUMNS": "130",
        "NO_COLOR": "1",
        "TMPDIR": str(tmp_path),  # the tutorial's own `export T=$(mktemp -d)` lands here
    }
    (tmp_path / "T").mkdir()
    steps = [s for s in steps_of() if not s[0].startswith("make ")]
    assert len(steps) >= 7, f"the {loop} lost its commands"
    split = max(i for i, (cmd, _) in enumerate(steps) if cmd.startswith("citecal annotators add"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
    try:
        before = run_steps(steps[: split + 1], work, env, subst)
        env["T"] = (tmp_path / "T.path").read_text()
        keys = re.findall(r"API key:\s+(\S+)", "".join(before))
        people = sum(cmd.startswith("citecal annotators add") for cmd, _ in steps)
        assert len(keys) == people, "annotators add did not print an API key per person"
        assert len(list(tmp_path.glob("*/eval.json"))) == 1
        ds = owner.datasets(dataset, workspace="citecal")
        records = owner.api.http_client.get(
            f"/api/v1/datasets/{ds.id}/records", params={"limit": 1000}
        ).json()["items"]
        assert len(records) == 40  # the 40 valid citations of the bundled example
        for who, key in enumerate(keys):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                person = rg.Argilla(api_url=argilla_stack.url, api_key=key, retries=0)
            for n, rec in enumerate(records):
                value = 3 if (n + who) % 3 else 0  # mostly "supports", some disagreement
                body = {"values": {"supports_claim": {"value": value}}, "status": "submitted"}
                resp = person.api.http_client.post(
                    f"/api/v1/records/{rec['id']}/responses", json=body
                )
                assert resp.status_code == 201, resp.text
        after = run_steps(steps[split + 1 :], work, env, subst)
        pulled = f"{40 * people} annotations ({people} annotators, 40 of 40 records answered"
        assert pulled in after[0], after[0]
        (report,) = tmp_path.glob("*/calibration.html")
        assert report.stat().st_size > 10_000
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = owner.datasets(dataset, workspace="citecal")
            if found is not None:
                found.delete()
            for name in (alice, bob):
                user = owner.users(name)
                if user is not None:
                    user.delete()
