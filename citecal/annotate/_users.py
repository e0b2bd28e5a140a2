"""``citecal annotators``: the people who answer, as Argilla users in a workspace.

A team's first hour with Argilla used to be the UI's *Settings → Users* page
for every annotator, and a user outside the dataset's workspace sees an empty
queue. :func:`add_annotator` makes the user (with a random password), adds it
to the workspace (made when missing) and returns the login and API key that
the server shows only to owners; the CLI prints them once (README
"Annotators").
"""

from __future__ import annotations

import secrets
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import argilla as rg
from argilla._models import WorkspaceModel

from citecal.annotate._client import ArgillaAuthError, argilla_errors
from citecal.errors import InputError

Role = Literal["annotator", "admin", "owner"]
ROLES: tuple[Role, ...] = ("annotator", "admin", "owner")

PASSWORD_BYTES = 12
"""Random bytes of a new user's password (16 URL-safe characters; the server wants 8–100)."""


@dataclass(frozen=True, slots=True)
class Annotator:
    """A user of the server and the workspaces it belongs to."""

    username: str
    role: str
    workspaces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewAnnotator:
    """What :func:`add_annotator` did; ``password`` and ``api_key`` only for a new user."""

    username: str
    role: str
    workspace: str
    created: bool
    added_to_workspace: bool
    workspace_created: bool
    password: str | None
    api_key: str | None


def _json(response: Any) -> Any:
    response.raise_for_status()
    return response.json()


def _workspace(client: rg.Argilla, name: str, api_url: str) -> tuple[dict[str, Any], bool]:
    """The workspace ``name`` as the server sends it, made when missing; (workspace, made)."""
    http = client.api.http_client
    with argilla_errors(api_url):
        for item in _json(http.get("/api/v1/me/workspaces"))["items"]:
            if item["name"] == name:
                return item, False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            made = client.api.workspaces.create(WorkspaceModel(name=name))
    return {"id": str(made.id), "name": name}, True


def _users(client: rg.Argilla, api_url: str) -> list[dict[str, Any]]:
    with argilla_errors(api_url):
        items: list[dict[str, Any]] = _json(client.api.http_client.get("/api/v1/users"))["items"]
    return items


def _require_owner(client: rg.Argilla, api_url: str) -> None:
    with argilla_errors(api_url):
        me = _json(client.api.http_client.get("/api/v1/me"))
    if me["role"] != "owner":
        raise ArgillaAuthError(
            f"Argilla at {api_url} (ARGILLA_API_URL): only an owner may add users "
            f"(user {me['username']!r} is {me['role']}): set ARGILLA_API_KEY to an owner's key"
        )


def add_annotator(
    client: rg.Argilla,
    api_url: str,
    username: str,
    *,
    workspace: str,
    role: Role = "annotator",
) -> NewAnnotator:
    """Create ``username`` (when missing) and add them to ``workspace`` (made when missing).

    A user that exists already keeps their password and key (nothing secret is
    returned again) and is only added to the workspace; asking for another role
    than theirs is an error rather than a silent no-op.

    Raises:
        InputError: a bad name or role, or an existing user with another role.
        ArgillaAuthError: the key is not an owner's.
    """
    if role not in ROLES:
        raise InputError(f"--role {role!r}: one of {', '.join(ROLES)}")
    _require_owner(client, api_url)
    ws, ws_made = _workspace(client, workspace, api_url)
    http = client.api.http_client
    existing = next((u for u in _users(client, api_url) if u["username"] == username), None)
    password: str | None = None
    api_key: str | None = None
    if existing is None:
        password = secrets.token_urlsafe(PASSWORD_BYTES)
        body = {"username": username, "first_name": username, "role": role, "password": password}
        with argilla_errors(api_url):
            response = http.post("/api/v1/users", json=body)
            if response.status_code == 422:
                detail = response.json().get("detail")
                raise InputError(f"annotator name {username!r} refused by the server: {detail}")
            user = _json(response)
        api_key = str(user["api_key"])
    else:
        user = existing
        if user["role"] != role:
            raise InputError(
                f"user {username!r} exists with role {user['role']!r}, not {role!r}: "
                "change roles in the Argilla UI"
            )
    with argilla_errors(api_url):
        members = _json(http.get(f"/api/v1/workspaces/{ws['id']}/users"))["items"]
        joined = not any(m["id"] == user["id"] for m in members)
        if joined:
            _json(http.post(f"/api/v1/workspaces/{ws['id']}/users", json={"user_id": user["id"]}))
    return NewAnnotator(
        username=username,
        role=str(user["role"]),
        workspace=workspace,
        created=existing is None,
        added_to_workspace=joined,
        workspace_created=ws_made,
        password=password,
        api_key=api_key,
    )


def list_annotators(
    client: rg.Argilla, api_url: str, *, workspace: str | None = None
) -> list[Annotator]:
    """Every user (or those of ``workspace``) with their role and workspaces, by name."""
    http = client.api.http_client
    out: list[Annotator] = []
    for user in _users(client, api_url):
        with argilla_errors(api_url):
            spaces = _json(http.get(f"/api/v1/users/{user['id']}/workspaces"))["items"]
        names = tuple(sorted(w["name"] for w in spaces))
        if workspace is None or workspace in names:
            out.append(Annotator(user["username"], str(user["role"]), names))
    return sorted(out, key=lambda a: a.username)
