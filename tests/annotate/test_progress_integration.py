"""Push and pull drive their progress callbacks, against the real local Argilla stack.

The CLI draws a rich bar from these callbacks when stderr is a terminal
(README "2. Push an evaluation", "5. Pull the answers"); here only the
callbacks are checked: called once with the total, then with every batch or
page, adding up to the total. Resources are named ``test_…`` and removed.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterator

import argilla as rg
import pytest
from annotate_factories import Stack, make_citation, make_eval

from citecal.annotate import load_spec, pull_annotations, push_evaluation
from citecal.config import ArgillaConfig

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

N = 7


class Recorder:
    """A ``progress`` callback that keeps what it was told."""

    def __init__(self) -> None:
        self.totals: list[int] = []
        self.steps: list[int] = []

    def __call__(self, total: int) -> Callable[[int], None]:
        self.totals.append(total)
        return self.steps.append


@pytest.fixture(scope="module")
def workspace(argilla_stack: Stack) -> Iterator[tuple[rg.Argilla, ArgillaConfig]]:
    tag = uuid.uuid4().hex[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        owner = rg.Argilla(api_url=argilla_stack.url, api_key=argilla_stack.api_key, retries=0)
        ws = rg.Workspace(name=f"test_ws_progress_{tag}", client=owner).create()
    config = ArgillaConfig(
        api_url=argilla_stack.url, api_key=argilla_stack.api_key, workspace=ws.name
    )
    try:
        yield owner, config
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for model in owner.api.datasets.list(workspace_id=ws.id):
                owner.api.datasets.delete(model.id)
            ws.delete()


def test_push_and_pull_drive_their_progress(workspace: tuple[rg.Argilla, ArgillaConfig]) -> None:
    _owner, config = workspace
    result = make_eval(
        [
            make_citation(id=f"c{i}", claim=f"The `Cart` class keeps item {i}", position=i * 50)
            for i in range(N)
        ]
    )
    spec = load_spec(None)
    pushed = Recorder()
    summary = push_evaluation(
        result, spec, config, dataset_name="test_progress", batch_size=3, progress=pushed
    )
    assert summary.created == N and summary.failed == 0
    assert pushed.totals == [N]
    assert sorted(pushed.steps) == [1, 3, 3]  # one call per batch of 3

    pulled = Recorder()
    out = pull_annotations(spec, config, dataset_name="test_progress", progress=pulled)
    assert out.counts.records == N
    assert pulled.totals == [N] and sum(pulled.steps) == N


def test_repush_sends_only_changed_records(workspace: tuple[rg.Argilla, ArgillaConfig]) -> None:
    _owner, config = workspace
    cites = [make_citation(id=f"c{i}", claim=f"The `Cart` class keeps item {i}", position=i * 50)
             for i in range(N)]  # fmt: skip
    spec = load_spec(None)
    first = push_evaluation(make_eval(cites), spec, config, dataset_name="test_repush")
    assert first.created == N
    sent = Recorder()
    again = push_evaluation(
        make_eval(cites), spec, config, dataset_name="test_repush", progress=sent
    )
    assert (again.created, again.updated, again.unchanged) == (0, 0, N)
    assert sent.totals == [0] and sent.steps == []  # nothing sent
    cites[2] = cites[2].model_copy(update={"reasoning": "changed reasoning"})
    third = push_evaluation(make_eval(cites), spec, config, dataset_name="test_repush")
    assert (third.created, third.updated, third.unchanged) == (0, 1, N - 1)
