"""``citecal annotators``: add the people who answer, and list them."""

from __future__ import annotations

from pathlib import Path

import click

from citecal.commands._options import argilla_options
from citecal.config import load_config


@click.group("annotators")
def annotators_group() -> None:
    """Argilla users who annotate: add them to a workspace, list them.

    Needs an owner's key (ARGILLA_API_KEY; when it is unset, the local stack's
    owner key, sent to the local stack's address only).

    \b
    Examples:
      citecal annotators add alice
      citecal annotators add bob --workspace review --role annotator
      citecal annotators list
    """


@annotators_group.command("add")
@click.argument("name")
@argilla_options(spec=False)
@click.option(
    "--role",
    type=click.Choice(["annotator", "admin", "owner"]),
    default="annotator",
    show_default=True,
    help="The user's role (annotators answer; admins also push and pull).",
)
def add_command(name: str, workspace: str | None, config_file: Path | None, role: str) -> None:
    """Create user NAME, add them to the workspace, print their login and API key once.

    The password is random; the server shows the key to owners only, and
    citecal prints both this once: pass them to NAME over a private channel.
    For a user that exists, NAME is only added to the workspace (nothing
    secret is printed again). The workspace is created when missing.
    """
    from citecal.annotate import add_annotator, connect

    config = load_config(None, config_file).argilla
    ws = workspace or config.workspace
    client = connect(config)
    made = add_annotator(client, config.api_url, name, workspace=ws, role=role)  # type: ignore[arg-type]
    if made.workspace_created:
        click.echo(f"created workspace {ws!r}")
    if not made.created:
        joined = "added to" if made.added_to_workspace else "already in"
        click.echo(f"user {name!r} ({made.role}) exists: {joined} workspace {ws!r}")
        return
    click.echo(
        f"created {made.role} {name!r} in workspace {ws!r} at {config.api_url}\n"
        f"  login:    {name}\n"
        f"  password: {made.password}\n"
        f"  API key:  {made.api_key}\n"
        f"Shown once: send these to {name} privately. They sign in at {config.api_url} "
        "(the key, as ARGILLA_API_KEY, gives scripts the same queue)."
    )


@annotators_group.command("list")
@argilla_options(spec=False)
def list_command(workspace: str | None, config_file: Path | None) -> None:
    """List the server's users (of --workspace, when given) with role and workspaces."""
    from citecal.annotate import connect, list_annotators

    config = load_config(None, config_file).argilla
    people = list_annotators(connect(config), config.api_url, workspace=workspace)
    width = max([len("user"), *(len(p.username) for p in people)])
    click.echo(f"{'user':<{width}}  {'role':<9}  workspaces")
    for p in people:
        click.echo(f"{p.username:<{width}}  {p.role:<9}  {', '.join(p.workspaces) or '—'}")
