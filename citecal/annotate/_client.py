"""Connection to Argilla and the mapping of its failures to citecal's typed errors.

Every call into the SDK runs inside :func:`argilla_errors`, which turns the
SDK's typed exceptions and httpx's transport errors (caught by name) into one
line that names ``ARGILLA_API_URL`` and says what to do; the CLI prints it and
exits with code 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator

import argilla as rg
import httpx
import pydantic
from argilla._exceptions import (
    ArgillaAPIError,
    ArgillaCredentialsError,
    ForbiddenError,
    NotFoundError,
    UnauthorizedError,
)

from citecal._http import CONNECT_S, DeadlineTransport
from citecal.config import ArgillaConfig
from citecal.errors import InputError, ServiceError

LOCAL_API_KEY = "citecal.apikey"
"""API key of the owner user that ``make argilla-up`` creates (local use only)."""

KEEPALIVE_S = 2.0
"""How long an idle connection is reused. argilla-server (uvicorn) closes idle connections
after 5 s, httpx's default; with equal limits a request sent on a connection the server is
closing fails with ReadError (seen as a flaky push). A shorter client limit avoids the race."""


class ArgillaUnavailable(ServiceError):
    """The Argilla server cannot be reached."""


class ArgillaAuthError(ServiceError):
    """The Argilla server rejected the API key or the user's role."""


class ArgillaNotFound(InputError):
    """The dataset or workspace named on the command line does not exist."""


class SchemaMismatch(InputError):
    """An existing dataset's settings differ from the annotation config."""


class ArgillaDropped(ArgillaUnavailable):
    """The server closed a connection without an answer (it answers other requests).

    argilla-server does this now and then when two pushes create the same
    dataset at once (an unhandled unique-constraint error in one worker);
    idempotent steps look again instead of failing the push.
    """


class NotArgilla(ServiceError):
    """``ARGILLA_API_URL`` answers, but not as an Argilla server."""


class ArgillaTimeout(ArgillaUnavailable):
    """A request ran past its deadline (``[argilla] timeout_s``): the server is slow or stuck."""


def _not_argilla(where: str, why: str) -> NotArgilla:
    from citecal.config import local_argilla_url

    return NotArgilla(
        f"{where} does not answer like an Argilla server ({why}): set ARGILLA_API_URL to the "
        f"Argilla server's address (the local stack: {local_argilla_url()})"
    )


class _OfflineArgilla(rg.Argilla):  # type: ignore[misc]
    """An SDK client that never contacts a server.

    The SDK ties every settings object (fields, questions, metadata) to a
    client and falls back to connecting a default one; building settings is
    pure, so it gets this client instead. Any request it made would fail.
    """

    def _validate_connection(self) -> None:
        return None


_offline: rg.Argilla | None = None


def offline_client() -> rg.Argilla:
    """The shared offline client (see :class:`_OfflineArgilla`)."""
    global _offline
    if _offline is None:
        default = rg.Argilla._default_client
        _offline = _OfflineArgilla(api_url="http://offline.invalid", api_key="offline", retries=0)
        rg.Argilla._default_client = default  # do not become the SDK's default client
    return _offline


def is_local_stack(api_url: str) -> bool:
    """Whether ``api_url`` is the local stack's address (``http://127.0.0.1:<port>``).

    ``localhost`` and ``[::1]`` count too; the port is :func:`citecal.config.local_argilla_port`.
    """
    from citecal.config import local_argilla_port

    try:
        url = httpx.URL(api_url)
    except (httpx.InvalidURL, TypeError):
        return False
    return (
        url.scheme == "http"
        and url.host in ("127.0.0.1", "localhost", "::1")
        and (url.port or 80) == local_argilla_port()
    )


def api_key_of(config: ArgillaConfig) -> str:
    """The configured key (``ARGILLA_API_KEY``), else the local stack's owner key.

    README "Security": a key is sent only where the user configured it for. The
    local stack's owner key (``CITECAL_ARGILLA_OWNER_KEY``, which the stack
    scripts make the owner with, else :data:`LOCAL_API_KEY`) goes to the local
    stack's address and nowhere else: with ``ARGILLA_API_KEY`` unset and
    ``ARGILLA_API_URL`` pointing elsewhere, nothing is sent.

    Raises:
        ArgillaAuthError: no ``ARGILLA_API_KEY`` for a server that is not the local stack.
    """
    if config.api_key:
        return config.api_key
    if not is_local_stack(config.api_url):
        from citecal.config import local_argilla_url

        raise ArgillaAuthError(
            f"ARGILLA_API_KEY is not set for Argilla at {config.api_url} (ARGILLA_API_URL): "
            f"set it to that server's key (the local stack's key is sent only to the local "
            f"stack, {local_argilla_url()}); nothing was sent"
        )
    return os.environ.get("CITECAL_ARGILLA_OWNER_KEY") or LOCAL_API_KEY


@contextlib.contextmanager
def argilla_errors(api_url: str) -> Iterator[None]:
    """Map SDK and transport failures inside the block to one-line typed errors."""
    where = f"Argilla at {api_url} (ARGILLA_API_URL)"
    try:
        yield
    except (ArgillaCredentialsError, UnauthorizedError):
        raise ArgillaAuthError(
            f"{where} rejected the API key: set ARGILLA_API_KEY to a valid key "
            "(the local stack's owner key is printed by `make argilla-up`)"
        ) from None
    except ForbiddenError:
        raise ArgillaAuthError(
            f"{where} refused: this API key's user may not do that "
            "(use an owner or admin key in ARGILLA_API_KEY)"
        ) from None
    except NotFoundError as exc:
        raise ArgillaNotFound(f"{where}: not found ({_detail(exc)})") from None
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status == 401:
            raise ArgillaAuthError(f"{where} rejected the API key: set ARGILLA_API_KEY") from None
        if status == 403:
            raise ArgillaAuthError(
                f"{where} refused: this API key's user may not do that"
            ) from None
        if status == 404:
            raise ArgillaNotFound(f"{where}: not found ({exc.request.url.path})") from None
        raise ServiceError(
            f"{where} failed with HTTP {status}: {exc.response.text[:200]}"
        ) from None
    except httpx.ConnectTimeout:
        raise ArgillaUnavailable(
            f"cannot reach {where}: no connection within {CONNECT_S:g}s: start the local stack "
            "with `make argilla-up` or set ARGILLA_API_URL to a running server"
        ) from None
    except httpx.TimeoutException as exc:
        # The deadline of one request (citecal._http): the server was reached but did not
        # answer in time. Saying "cannot reach" here sent people looking for a dead server.
        raise ArgillaTimeout(
            f"{where}: {exc}; the deadline is [argilla] timeout_s: run the same command again when "
            "the server answers (nothing is duplicated)"
        ) from None
    except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
        raise ArgillaDropped(
            f"{where} dropped the connection ({type(exc).__name__}): run the same command "
            "again (nothing is duplicated)"
        ) from None
    except httpx.TransportError as exc:
        raise ArgillaUnavailable(
            f"cannot reach {where}: {type(exc).__name__}: start the local stack with "
            "`make argilla-up` or set ARGILLA_API_URL to a running server"
        ) from None
    except ArgillaAPIError as exc:
        raise ServiceError(f"{where} failed with HTTP {exc.status_code}: {_detail(exc)}") from None
    except (pydantic.ValidationError, json.JSONDecodeError) as exc:
        # Another server's JSON (or HTML) where the SDK expected Argilla's models.
        raise _not_argilla(where, f"unexpected answer: {type(exc).__name__}") from None


def _detail(exc: Exception) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


def connect(config: ArgillaConfig) -> rg.Argilla:
    """An authenticated client; fails fast with a typed error when the server is down.

    The SDK checks the connection by asking for the current user; a server
    that is not Argilla answers that with a 404 or with JSON of another
    shape, which becomes :class:`NotArgilla` instead of a pydantic traceback.
    Every request has one deadline, ``[argilla] timeout_s`` (connect included,
    :class:`citecal._http.DeadlineTransport`), so a server that accepts and
    never answers, or trickles bytes, cannot hold a command.
    """
    where = f"Argilla at {config.api_url} (ARGILLA_API_URL)"
    key = api_key_of(config)  # before any request: a key goes only where it belongs
    transport = DeadlineTransport(
        config.timeout_s, retries=1, limits=httpx.Limits(keepalive_expiry=KEEPALIVE_S)
    )
    with argilla_errors(config.api_url):
        try:
            return rg.Argilla(
                api_url=config.api_url,
                api_key=key,
                timeout=config.timeout_s,
                retries=1,
                mounts={"all://": transport},  # every URL through the deadline transport
            )
        except NotFoundError:
            raise _not_argilla(where, "GET /api/v1/me: HTTP 404") from None


def require_dataset_rights(client: rg.Argilla, api_url: str) -> None:
    """Raise :class:`ArgillaAuthError` when the key's user may not create or change datasets.

    Argilla hides some settings from annotators, so without this check an
    annotator's push to an existing dataset would be reported as a settings
    mismatch, which it is not.
    """
    with argilla_errors(api_url):
        me = client.me
    role = str(getattr(me.role, "value", me.role))
    if role == "annotator":
        raise ArgillaAuthError(
            f"Argilla at {api_url} (ARGILLA_API_URL): this key cannot create or change "
            f"datasets (user {me.username!r} has the annotator role): set ARGILLA_API_KEY "
            "to an owner's or admin's key"
        )


def get_workspace(client: rg.Argilla, name: str, api_url: str) -> rg.Workspace:
    """The workspace called ``name``, or :class:`ArgillaNotFound` saying how to create it."""
    with argilla_errors(api_url), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        workspace = client.workspaces(name=name)
    if workspace is None:
        raise ArgillaNotFound(
            f"workspace {name!r} not found at {api_url} (ARGILLA_API_URL): create it in the "
            "Argilla UI or pass an existing one with --workspace"
        )
    return workspace


def find_dataset(
    client: rg.Argilla, name: str, workspace: rg.Workspace, api_url: str
) -> rg.Dataset | None:
    """The dataset ``name`` of ``workspace``, or None when it does not exist."""
    with argilla_errors(api_url), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dataset in workspace.datasets:
            if dataset.name == name:
                return dataset.get()
    return None


def get_dataset(client: rg.Argilla, name: str, workspace: str, api_url: str) -> rg.Dataset:
    """The dataset ``name`` of ``workspace``, or :class:`ArgillaNotFound` with what to do."""
    ws = get_workspace(client, workspace, api_url)
    dataset = find_dataset(client, name, ws, api_url)
    if dataset is None:
        raise ArgillaNotFound(
            f"dataset {name!r} not found in workspace {workspace!r} at {api_url} "
            "(ARGILLA_API_URL): push records first with `citecal push` "
            "or check --dataset/--workspace"
        )
    return dataset
