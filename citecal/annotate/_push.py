"""``citecal push``: send an evaluation's citations to an Argilla dataset.

The dataset is created from the annotation config when missing; when it
exists its settings must match (else :class:`SchemaMismatch` with a readable
diff). Records are upserted by stable id through the SDK's bulk-upsert API in
batches: a re-push updates records in place and never touches the responses
annotators already gave. A failing batch is retried, and if it still fails it
is reported in the summary and by a non-zero exit, never dropped silently.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import argilla as rg
import httpx
from argilla._exceptions import (
    ArgillaAPIError,
    ConflictError,
    NotFoundError,
    UnprocessableEntityError,
)

from citecal.annotate._client import (
    ArgillaDropped,
    ArgillaNotFound,
    SchemaMismatch,
    argilla_errors,
    connect,
    find_dataset,
    get_workspace,
    require_dataset_rights,
)
from citecal.annotate._records import (
    AnnotationRecord,
    BuiltRecords,
    CodeLine,
    CodeReader,
    RecordValue,
    build_records,
    code_window,
    record_id,
    report_id,
)
from citecal.annotate._rounds import (
    NO_PRIOR,
    PriorDesign,
    design_changes,
    in_random_order,
    plan_active_round,
    read_prior,
)
from citecal.annotate._sampling import (
    Strategy,
    abstained_group,
    active_uncertainty,
    citation_group,
    sampling_weights,
    select_citations,
)
from citecal.annotate._settings import (
    AnnotationSpec,
    describe_settings,
    min_submitted_of,
    settings_diff,
    to_settings,
)
from citecal.config import ArgillaConfig
from citecal.correct import CorrectionsFile
from citecal.errors import CitecalError, InputError, ServiceError, StoreError
from citecal.models import CitationResult, EvalResult
from citecal.source import CachingStore, SourceFileError, open_store, repository_identity

CONTEXT_LINES = 3
MAX_BATCH = 500  # the server's limit per bulk upsert
RETRIES = 3
CONCURRENCY = 3  # bulk requests in flight

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class PushSummary:
    """What a push did, for the CLI's summary line and for tests."""

    dataset: str
    workspace: str
    api_url: str
    dataset_created: bool
    created: int
    updated: int
    skipped: int
    failed: int
    seconds: float
    upload_seconds: float = 0.0
    min_submitted: int | None = None
    """The dataset's task distribution: answers a record needs (README "What overlap buys")."""
    min_submitted_wanted: int | None = None
    """What this push asked for; differs from ``min_submitted`` for an older dataset."""
    skipped_reasons: tuple[tuple[str, str], ...] = ()
    failures: tuple[str, ...] = field(default=())
    corrections_offered: int = 0
    """Proposed corrections offered as suggestions (``--corrections``)."""
    unchanged: int = 0
    """Records already on the server with the same content hash: not sent again."""
    round: int | None = None
    """``--strategy active``: the round this push drew (README "How many labels")."""
    drawn: int | None = None
    """``--strategy active``: records this round drew (about ``--sample``)."""

    @property
    def pushed(self) -> int:
        """Records the server accepted."""
        return self.created + self.updated


@contextlib.contextmanager
def repo_reader(result: EvalResult, repo: Path | None = None) -> Iterator[CodeReader | None]:
    """A reader of cited lines with context from the evaluated repository.

    Uses ``repo`` when given (an error if it cannot be opened), else the
    repository recorded in the evaluation when it still exists here; yields
    None when neither is available (the records then show the cited lines only).
    Excerpt-style citations (README "Excerpt citations") are read from the
    evaluation's ``context`` directory when it had one.
    """
    path = repo if repo is not None else Path(result.repo)
    with contextlib.ExitStack() as stack:
        store: CachingStore | None = None
        if repo is not None or path.is_dir():
            try:
                store = stack.enter_context(open_store(path, result.rev))
            except StoreError:
                if repo is not None:
                    raise
        items: CachingStore | None = None
        if result.context is not None and Path(result.context).is_dir():
            with contextlib.suppress(StoreError):
                items = stack.enter_context(open_store(Path(result.context)))
        if store is None and items is None:
            yield None
            return

        def read(citation: CitationResult) -> Sequence[CodeLine] | None:
            located = citation.item is not None or citation.location is not None
            source_store = items if located and items is not None else store
            if source_store is None:
                return None
            try:
                source = source_store.read(citation.file_path)
                first = max(1, citation.start_line - CONTEXT_LINES)
                last = min(source.line_count, citation.end_line + CONTEXT_LINES)
                text = source.lines(first, last)
            except (SourceFileError, ValueError):
                return None
            return code_window(text.split("\n"), first, citation.start_line, citation.end_line)

        yield read


def to_rg_record(record: AnnotationRecord, dataset: rg.Dataset) -> rg.Record:
    """The SDK record for ``record`` (its id becomes Argilla's external id)."""
    rec = rg.Record(
        id=record.id,
        fields=dict(record.fields),
        metadata=dict(record.metadata),
        suggestions=[
            rg.Suggestion(s.question, s.value, score=s.score, agent=s.agent, type="model")
            for s in record.suggestions
        ],
    )
    rec.dataset = dataset
    return rec


CREATE_ATTEMPTS = 4
"""Rounds of find → create or finish → check before a dataset counts as not creatable."""


def _with_dataset_attributes(draft: rg.Dataset, settings: rg.Settings) -> Any:
    """The create request of ``draft`` with the settings that live on the dataset itself.

    The SDK's own ``Dataset.create`` sends guidelines, extra-metadata and task
    distribution in a second request after the dataset exists; creating the
    dataset from its bare model (as :func:`ensure_dataset` must, to recover
    drafts) lost them, so annotators saw no guidelines and every dataset had
    ``min_submitted = 1``. Sending them with the create request sets them in
    the same step.
    """
    model = draft.api_model()
    model.guidelines = settings.guidelines
    model.allow_extra_metadata = settings.allow_extra_metadata
    model.distribution = settings.distribution._api_model()
    return model


def _find_with_status(
    client: rg.Argilla, name: str, workspace: rg.Workspace, api_url: str
) -> tuple[rg.Dataset | None, bool]:
    """(the dataset or None, whether it is published); one deleted meanwhile is None."""
    try:
        dataset = find_dataset(client, name, workspace, api_url)
        if dataset is None:
            return None, False
        with argilla_errors(api_url):
            return dataset, str(client.api.datasets.get(dataset.id).status) == "ready"
    except ArgillaNotFound:
        return None, False


def _finish_dataset(
    client: rg.Argilla, dataset: rg.Dataset, settings: rg.Settings, api_url: str
) -> None:
    """Create the properties ``dataset`` lacks, then publish it; idempotent and race-tolerant.

    Creating a dataset takes one request per field, question and metadata
    property, then a "publish": an interrupted push leaves a *draft* with
    some of them. Any push, or two at once, can finish it: a property that
    already exists (409) or a dataset another push already published (422)
    is what we wanted anyway, so both are passed over, and so is a request that
    lost a race with another push (the server answers those with a 500: a unique
    constraint, a search index already made); the caller looks again, retries
    what is still missing a few times, and checks the result.
    """
    have = describe_settings(dataset.settings)
    have_vectors = {v.name for v in dataset.settings.vectors}
    wanted: list[tuple[str, Any]] = [
        *((f"field {f.name}", f) for f in settings.fields),
        *((f"question {q.name}", q) for q in settings.questions),
        *((f"metadata {m.name}", m) for m in settings.metadata),
        *((f"vector {v.name}", v) for v in settings.vectors),
    ]
    with argilla_errors(api_url), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, prop in wanted:
            if key in have or key.removeprefix("vector ") in have_vectors:
                continue
            prop.dataset = dataset
            try:
                prop.create()
            except (ConflictError, UnprocessableEntityError):
                pass  # made by another push meanwhile, or the dataset is published already
            except ArgillaAPIError as exc:
                if exc.status_code < 500:
                    raise
                # Two pushes inserting the same property at once: the server's unique
                # constraint fails as HTTP 500. The caller looks again (and retries).
        try:
            client.api.datasets.publish(dataset.id)
        except UnprocessableEntityError:
            pass  # "Dataset has already been published"
        except ArgillaAPIError as exc:
            if exc.status_code < 500:
                raise
            # Two publishes at once: the loser finds the search index made (HTTP 500,
            # resource_already_exists); the caller looks again and sees it ready.


def ensure_dataset(
    client: rg.Argilla,
    name: str,
    workspace: rg.Workspace,
    settings: rg.Settings,
    api_url: str,
) -> tuple[rg.Dataset, bool]:
    """The dataset, created from ``settings`` when missing; (dataset, created).

    Creation is recoverable (README "Security"): a *draft* dataset left by an
    interrupted first push holds no records (the server takes records only
    into published datasets), so it is finished when what it has matches the
    config, or deleted and created again when it does not. Two first pushes at
    once converge: the one whose create conflicts (409) finds the other's
    dataset and helps finish it.

    Raises:
        SchemaMismatch: a published dataset of that name has other settings.
        ServiceError: the dataset could still not be made after a few rounds.
    """
    created = False
    for attempt in range(CREATE_ATTEMPTS):
        if attempt:
            time.sleep(0.25 * attempt)  # let a concurrent push finish what it started
        try:
            dataset, ready = _find_with_status(client, name, workspace, api_url)
            if dataset is None:
                draft = rg.Dataset(name=name, workspace=workspace, settings=settings, client=client)
                with argilla_errors(api_url):
                    try:
                        model = client.api.datasets.create(
                            _with_dataset_attributes(draft, settings)
                        )
                    except ConflictError:
                        model = None  # another push created it a moment ago: find it and help
                    except ArgillaAPIError as exc:
                        if exc.status_code < 500 or "unique" not in str(exc).lower():
                            raise
                        # Both creates passed the server's name check before either
                        # inserted: the loser's insert fails its unique constraint (HTTP
                        # 500). The other push's dataset exists now: find it and help.
                        model = None
                if model is None:
                    continue
                dataset = rg.Dataset.from_model(model, client)
                created = True
            elif not ready:
                diff = settings_diff(settings, dataset.settings)
                if any(not line.startswith("+ ") for line in diff):
                    with argilla_errors(api_url), contextlib.suppress(NotFoundError):
                        dataset.delete()  # a draft with other settings: no records, recreate it
                    continue
                created = True
            else:
                diff = settings_diff(settings, dataset.settings)
                if diff:
                    raise SchemaMismatch(
                        f"dataset {name!r} in workspace {workspace.name!r} at {api_url} "
                        f"(ARGILLA_API_URL) has different settings than the annotation config: "
                        f"{'; '.join(diff)} "
                        "(push to a new --dataset name, or pass the --spec it was created with)"
                    )
                return dataset, created
            _finish_dataset(client, dataset, settings, api_url)
        except ArgillaNotFound:
            continue  # deleted under us by a push that found it conflicting: start over
        except ArgillaDropped:
            continue  # the server dropped a request of racing pushes: look again
    raise ServiceError(
        f"dataset {name!r} in workspace {workspace.name!r} at {api_url} (ARGILLA_API_URL) "
        f"could not be created after {CREATE_ATTEMPTS} attempts: run the push again"
    )


CONTENT_HASH = "_content_hash"
"""Hidden metadata: hash of what a record shows, so a re-push sends only what changed."""


def content_hash(record: AnnotationRecord) -> str:
    """Hash of the fields, metadata and suggestions ``push`` sends for ``record``."""
    payload = json.dumps(
        [
            record.fields,
            {k: v for k, v in record.metadata.items() if k != CONTENT_HASH},
            [dataclasses.astuple(s) for s in record.suggestions],
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def with_content_hash(records: Sequence[AnnotationRecord]) -> tuple[AnnotationRecord, ...]:
    """Records with :func:`content_hash` as hidden metadata (README "2. Push an evaluation")."""
    return tuple(
        dataclasses.replace(r, metadata={**r.metadata, CONTENT_HASH: content_hash(r)})
        for r in records
    )


def existing_records(
    client: rg.Argilla, dataset: rg.Dataset, api_url: str
) -> dict[str, str | None]:
    """External id → content hash (None for records pushed before hashes) of ``dataset``'s records.

    The server does not report updates itself; raw pages (no SDK models) keep a
    re-push of thousands of records quick.
    """
    found: dict[str, str | None] = {}
    offset = 0
    with argilla_errors(api_url):
        while True:
            response = client.api.http_client.get(
                f"/api/v1/datasets/{dataset.id}/records",
                params={"offset": offset, "limit": 1000},
            )
            response.raise_for_status()
            page = response.json()["items"]
            for r in page:
                if r.get("external_id") is not None:
                    found[str(r["external_id"])] = (r.get("metadata") or {}).get(CONTENT_HASH)
            if len(page) < 1000:
                return found
            offset += len(page)


def record_payload(record: AnnotationRecord, question_ids: Mapping[str, str]) -> dict[str, Any]:
    """The bulk-upsert JSON of ``record``, built directly (what :func:`to_rg_record` would send).

    Going through ``rg.Record`` and its API model costs about 0.7 ms per record
    on the client, which shares the machine with the server in a local stack
    (README "Push throughput"); the dictionary costs a few microseconds.
    """
    return {
        "external_id": record.id,
        "fields": dict(record.fields),
        "metadata": dict(record.metadata),
        "suggestions": [
            {
                "question_id": question_ids[s.question],
                "value": s.value,
                "score": s.score,
                "agent": s.agent,
                "type": "model",
            }
            for s in record.suggestions
        ],
    }


class PushInterrupted(CitecalError):
    """Ctrl-C during the upload: what was sent stays, the next push sends the rest (exit 130)."""

    exit_code = 130


INTERRUPT_GRACE_S = 2.0
"""After Ctrl-C, how long the upload waits for requests already in flight (README "Security")."""


def _send(
    client: rg.Argilla,
    dataset: rg.Dataset,
    payload: list[dict[str, Any]],
    retries: int,
    stop: threading.Event | None = None,
) -> tuple[Exception | None, int]:
    """Upsert one batch, retrying transport and 5xx errors; (last error or None, attempts).

    A request that ran past its deadline is not retried: a server that did not answer
    in ``[argilla] timeout_s`` will not answer the same request sooner. ``stop`` (Ctrl-C,
    or a deadline passed elsewhere) ends the waiting between retries at once.
    The answer (every record back, as stored) is not parsed: ``push`` needs only the status.
    """
    for attempt in range(retries + 1):
        try:
            response = client.api.http_client.put(
                f"/api/v1/datasets/{dataset.id}/records/bulk", json={"items": payload}
            )
            response.raise_for_status()
            return None, attempt + 1
        except (httpx.TransportError, httpx.HTTPStatusError) as exc:
            rejected = isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code < 500
            final = rejected or isinstance(exc, httpx.TimeoutException)
            if final or attempt == retries:  # a rejected batch fails the same way again
                return exc, attempt + 1
            delay = min(8.0, 0.5 * 2**attempt)
            if stop is not None and stop.wait(delay):
                return exc, attempt + 1
            if stop is None:
                time.sleep(delay)
    return None, retries + 1


def upsert_batches(
    client: rg.Argilla,
    dataset: rg.Dataset,
    records: Sequence[AnnotationRecord],
    batch_size: int,
    progress: Progress | None = None,
    retries: int = RETRIES,
    concurrency: int = CONCURRENCY,
) -> tuple[set[str], list[str]]:
    """Upsert ``records`` in batches, ``concurrency`` requests in flight.

    Returns the ids of records in batches that still failed after ``retries``
    and one message per such batch. The server validates each record's
    metadata in Python, so overlapping requests keep its workers busy while
    this side serialises the next batch.

    The senders are daemon threads fed one batch at a time, so Ctrl-C stops
    the upload within :data:`INTERRUPT_GRACE_S` (no batch is started after it;
    the ones in flight get that long to finish) and raises
    :class:`PushInterrupted` saying how many records were sent; a batch that
    ran past the deadline stops the batches not yet started the same way.

    Raises:
        PushInterrupted: Ctrl-C; records sent so far are on the server.
    """
    size = max(1, min(batch_size, MAX_BATCH))
    batches = [records[i : i + size] for i in range(0, len(records), size)]
    question_ids = {q.name: str(q.id) for q in dataset.settings.questions}
    todo: queue.Queue[tuple[int, Sequence[AnnotationRecord]]] = queue.Queue()
    for item in enumerate(batches):
        todo.put(item)
    done: queue.Queue[tuple[int, Sequence[AnnotationRecord], Exception | None, int]]
    done = queue.Queue()
    stop = threading.Event()

    def sender() -> None:
        while not stop.is_set():
            try:
                n, batch = todo.get_nowait()
            except queue.Empty:
                return
            payload = [record_payload(r, question_ids) for r in batch]
            error, attempts = _send(client, dataset, payload, retries, stop)
            done.put((n, batch, error, attempts))

    threads = [
        threading.Thread(target=sender, name=f"citecal-push-{i}", daemon=True)
        for i in range(max(1, min(concurrency, len(batches))))
    ]
    for thread in threads:
        thread.start()
    failed: set[str] = set()
    failures: list[str] = []
    sent = 0
    finished: set[int] = set()

    def record(
        n: int, batch: Sequence[AnnotationRecord], error: Exception | None, tries: int
    ) -> None:
        nonlocal sent
        finished.add(n)
        if error is None:
            sent += len(batch)
        else:
            failed.update(r.id for r in batch)
            first = n * size + 1
            failures.append(
                f"records {first}-{first + len(batch) - 1} failed after {tries} "
                f"attempt(s): {type(error).__name__}: {_error_text(error)}"
            )
            if isinstance(error, httpx.TimeoutException):
                stop.set()  # the server stopped answering in time: start no other batch
        if progress is not None:
            progress(len(batch))

    try:
        while len(finished) < len(batches):
            try:
                record(*done.get(timeout=0.25))
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done.empty():
                    break  # stopped: what was never started is reported below
    except KeyboardInterrupt:
        stop.set()
        grace = time.monotonic() + INTERRUPT_GRACE_S
        while any(t.is_alive() for t in threads) and time.monotonic() < grace:
            with contextlib.suppress(queue.Empty):
                record(*done.get(timeout=0.1))
        while not done.empty():
            record(*done.get_nowait())
        in_flight = sum(1 for t in threads if t.is_alive())
        pending = f"; {in_flight} request(s) were still in flight" if in_flight else ""
        raise PushInterrupted(
            f"interrupted: {sent:,} of {len(records):,} record(s) were sent{pending}; run the "
            "same push again to send the rest (records already there are not sent twice)"
        ) from None
    for n, batch in enumerate(batches):
        if n not in finished:
            failed.update(r.id for r in batch)
            first = n * size + 1
            failures.append(
                f"records {first}-{first + len(batch) - 1} not sent: an earlier request ran "
                "past its deadline"
            )
    return failed, sorted(failures, key=lambda m: int(m.split()[1].split("-")[0]))


def _error_text(error: Exception) -> str:
    """What the server said about a failed batch (its JSON detail), else the exception."""
    if isinstance(error, httpx.HTTPStatusError):
        return f"HTTP {error.response.status_code}: {error.response.text[:200]}"
    return str(error)[:200]


def _lookup(weights: Mapping[Any, float] | None, key: object) -> float | None:
    return None if weights is None else weights.get(key)


def with_sampling(
    records: Sequence[AnnotationRecord],
    weight_of: Callable[[CitationResult], float | None],
    design: str,
) -> tuple[AnnotationRecord, ...]:
    """Records with their sampling design and weight as hidden metadata.

    ``_sampling_strategy`` and ``_sampling_weight`` (the inverse inclusion
    probability) travel with each record and come back through ``pull`` as the
    annotation table's ``sampling_strategy`` / ``sampling_weight`` columns, so
    ``citecal estimate`` knows whether its interval is valid (README "Estimates").
    """
    out = []
    for r in records:
        meta: dict[str, RecordValue] = {**r.metadata, "_sampling_strategy": design}
        weight = weight_of(r.citation)
        if weight is not None:
            meta["_sampling_weight"] = float(weight)
        out.append(dataclasses.replace(r, metadata=meta))
    return tuple(out)


def push_evaluation(
    result: EvalResult,
    spec: AnnotationSpec,
    config: ArgillaConfig,
    *,
    dataset_name: str,
    workspace: str | None = None,
    blind: bool = False,
    sample: int | None = None,
    strategy: Strategy = "all",
    seed: int = 0,
    repo: Path | None = None,
    batch_size: int | None = None,
    min_submitted: int | None = None,
    client: rg.Argilla | None = None,
    progress: Callable[[int], Progress] | None = None,
    corrections: CorrectionsFile | None = None,
) -> PushSummary:
    """Push the valid citations of ``result`` to dataset ``dataset_name``.

    ``progress``, when given, is called once with the number of records to
    send and returns the callback that receives each finished batch's size.
    ``corrections`` (``citecal correct --corrections``) are offered as the
    suggestion of the correction question (README "`citecal correct`").
    """
    t0 = time.perf_counter()
    valid = [c for c in result.citations if c.valid]
    invalid = [c for c in result.citations if not c.valid]
    if strategy == "active" and sample is None:
        raise InputError("--strategy active needs --sample N: the labels to spend this round")
    client = client or connect(config)
    prior = _prior(client, config, dataset_name, workspace)
    active = None
    if strategy == "active" and sample is not None:
        others = sorted(prior.strategies - {"active"})
        if others:
            raise InputError(
                f"dataset {dataset_name!r} already holds records pushed as {', '.join(others)}: "
                "an active sample needs a dataset of its own (push to a new --dataset)"
            )
        rid = report_id(result)
        first: dict[str, CitationResult] = {}
        for c in valid:
            first.setdefault(record_id(rid, c, result.rev), c)
        active = plan_active_round(
            list(first), [active_uncertainty(c) for c in first.values()], sample, prior, seed
        )
        gone = sorted(set(active.metadata) - set(first))
        if gone:
            raise InputError(
                f"{len(gone)} record(s) drawn by earlier rounds of {dataset_name!r} are not in "
                "this evaluation: a new round must push the same evaluation"
            )
        chosen = [c for r, c in first.items() if r in active.metadata]
        weights, design = None, "active"
    else:
        chosen = select_citations(valid, sample, strategy, seed)
        group = abstained_group if strategy == "abstained" else citation_group
        weights, design = sampling_weights(valid, chosen, strategy, group)
    identity = repository_identity(str(repo) if repo is not None else result.repo, result.rev)
    with repo_reader(result, repo) as read_code:
        built = build_records(
            result,
            spec,
            citations=invalid + chosen,
            blind=blind,
            read_code=read_code,
            identity=identity,
        )
    if active is not None:
        plan = active.metadata
        records = tuple(
            dataclasses.replace(r, metadata={**r.metadata, **plan[r.id]}) for r in built.records
        )
    else:
        records = with_sampling(built.records, lambda c: _lookup(weights, id(c)), design)
        refuse_design_changes(records, prior, dataset_name)
    built = BuiltRecords(in_random_order(records, seed, prior.orders), built.skipped)
    offered = 0
    if corrections is not None:
        from citecal.correct._annotate import offer_corrections

        built, offered = offer_corrections(built, result, corrections, spec)
    summary = _upload(
        built,
        spec,
        config,
        dataset_name=dataset_name,
        workspace=workspace,
        batch_size=batch_size,
        min_submitted=min_submitted,
        client=client,
        progress=progress,
        left_out=len(valid) - len(chosen),
        t0=t0,
        prior=prior,
    )
    return replace(
        summary,
        corrections_offered=offered,
        round=None if active is None else active.round,
        drawn=None if active is None else len(active.drawn),
    )


def _design_text(design: tuple[str | None, float | None]) -> str:
    strategy, weight = design
    return f"{strategy}" + ("" if weight is None else f" (weight {weight:g})")


def refuse_design_changes(
    records: Sequence[AnnotationRecord], prior: PriorDesign, dataset_name: str
) -> None:
    """Refuse a push that would rewrite the sampling design of records already pushed.

    Raises:
        InputError: naming how many records, their recorded design and this push's.
    """
    changes = design_changes(records, prior)
    if not changes:
        return
    rid, old, new = changes[0]
    raise InputError(
        f"dataset {dataset_name!r} already holds {len(changes)} of these record(s) pushed as "
        f"{_design_text(old)}; this push would record them as {_design_text(new)} (record "
        f"{rid[:12]}…), and estimate would then misread how they were drawn: push with the "
        "--sample, --strategy and --seed used before, or to a new --dataset (nothing was sent)"
    )


def _prior(
    client: rg.Argilla, config: ArgillaConfig, dataset_name: str, workspace: str | None
) -> PriorDesign:
    """What earlier pushes recorded on the dataset (nothing when it does not exist yet).

    The key's rights are checked first, so a key that may not push is told so
    before anything is read.
    """
    require_dataset_rights(client, config.api_url)
    ws = get_workspace(client, workspace or config.workspace, config.api_url)
    dataset = find_dataset(client, dataset_name, ws, config.api_url)
    return NO_PRIOR if dataset is None else read_prior(client, dataset, config.api_url)


def push_batch(
    path: Path,
    spec: AnnotationSpec,
    config: ArgillaConfig,
    *,
    dataset_name: str,
    workspace: str | None = None,
    blind: bool = False,
    sample: int | None = None,
    strategy: Strategy = "stratified",
    seed: int = 0,
    batch_size: int | None = None,
    min_submitted: int | None = None,
    client: rg.Argilla | None = None,
    progress: Callable[[int], Progress] | None = None,
) -> PushSummary:
    """Push a seeded sample of the valid citations of an eval-batch output (``citations.parquet``).

    The sample is drawn across reports (:func:`~citecal.annotate.sample_batch`);
    each chosen citation becomes the same record ``push`` makes from that
    report's eval JSON, with context lines read from the report's repository.
    """
    from citecal.annotate._batch import sample_batch

    t0 = time.perf_counter()
    drawn = sample_batch(path, sample, strategy, seed)
    records: list[AnnotationRecord] = []
    skipped: list[tuple[str, str]] = []
    identities: dict[tuple[str, str | None], tuple[str, str | None]] = {}
    for i, result in enumerate(drawn.results):
        key = (result.repo, result.rev)
        if key not in identities:
            identities[key] = repository_identity(result.repo, result.rev)
        with repo_reader(result) as read_code:
            built = build_records(
                result, spec, blind=blind, read_code=read_code, identity=identities[key]
            )
        weights = None if drawn.weights is None else drawn.weights[i]

        def weight_of(
            c: CitationResult, w: Mapping[tuple[str, int], float] | None = weights
        ) -> float | None:
            return _lookup(w, (c.id, c.position))

        records += with_sampling(built.records, weight_of, drawn.design)
        skipped += built.skipped
    client = client or connect(config)
    prior = _prior(client, config, dataset_name, workspace)
    refuse_design_changes(records, prior, dataset_name)
    return _upload(
        BuiltRecords(in_random_order(records, seed, prior.orders), tuple(skipped)),
        spec,
        config,
        dataset_name=dataset_name,
        workspace=workspace,
        batch_size=batch_size,
        min_submitted=min_submitted,
        client=client,
        progress=progress,
        left_out=drawn.candidates - drawn.chosen,
        t0=t0,
        prior=prior,
    )


def _upload(
    built: BuiltRecords,
    spec: AnnotationSpec,
    config: ArgillaConfig,
    *,
    dataset_name: str,
    workspace: str | None,
    batch_size: int | None,
    min_submitted: int | None,
    client: rg.Argilla | None,
    progress: Callable[[int], Progress] | None,
    left_out: int,
    t0: float,
    prior: PriorDesign | None = None,
) -> PushSummary:
    """Create or check the dataset, upsert ``built``'s records, count what happened.

    ``min_submitted`` (else the YAML's, else ``[argilla] min_submitted``) applies to a
    new dataset; an existing one keeps its own, which the summary reports.
    """
    if not built.records:  # README "Security": an empty dataset helps nobody
        n = len(built.skipped)
        shown = "; ".join(f"{c}: {why}" for c, why in built.skipped[:3]) + ("; …" if n > 3 else "")
        raise InputError(
            f"nothing to push to {dataset_name!r}: no citation annotators can rate"
            + (f" ({n} skipped: {shown})" if n else "")
            + "; no dataset was created or changed"
        )
    client = client or connect(config)
    require_dataset_rights(client, config.api_url)
    ws_name = workspace or config.workspace
    ws = get_workspace(client, ws_name, config.api_url)
    wanted = min_submitted or spec.min_submitted or config.min_submitted
    settings = to_settings(spec, wanted, client)
    dataset, created_dataset = ensure_dataset(client, dataset_name, ws, settings, config.api_url)
    if created_dataset:
        before: Mapping[str, str | None] = {}
    elif prior is not None and prior.found:
        before = prior.hashes  # read a moment ago with the sampling metadata: one scan, not two
    else:
        before = existing_records(client, dataset, config.api_url)
    records = with_content_hash(built.records)
    changed = [r for r in records if r.id not in before or before[r.id] != r.metadata[CONTENT_HASH]]
    tick = progress(len(changed)) if progress is not None else None
    t_upload = time.perf_counter()
    with argilla_errors(config.api_url):
        failed_ids, failures = upsert_batches(
            client, dataset, changed, batch_size or config.batch_size, tick
        )
    ok = [r for r in changed if r.id not in failed_ids]
    updated = sum(1 for r in ok if r.id in before)
    return PushSummary(
        dataset=dataset_name,
        workspace=ws_name,
        api_url=config.api_url,
        dataset_created=created_dataset,
        created=len(ok) - updated,
        updated=updated,
        unchanged=len(records) - len(changed),
        skipped=len(built.skipped) + left_out,
        failed=len(failed_ids),
        seconds=time.perf_counter() - t0,
        upload_seconds=time.perf_counter() - t_upload,
        min_submitted=min_submitted_of(dataset.settings),
        min_submitted_wanted=wanted,
        skipped_reasons=built.skipped,
        failures=tuple(failures),
    )
