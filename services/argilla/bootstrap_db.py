"""Prepare argilla-server's SQLite database: migrate it, create the owner user.

Runs inside the server's own virtualenv (``.citecal/argilla/venv``) with the
environment of ``env.sh``'s ``server_env``. It calls the server package's own
migration and user-creation functions directly, because the package's typer
CLI does not work with the click versions other tools bring. Safe to run on
every start: migrating an up-to-date database and creating an existing user
are both no-ops.
"""

from __future__ import annotations

import asyncio
import os
import sys

from argilla_server.cli.database.migrate import migrate_db
from argilla_server.cli.database.users.create import _create
from argilla_server.models import UserRole


def main() -> int:
    migrate_db(revision="head")
    asyncio.run(
        _create(
            first_name="citecal",
            username=os.environ["CITECAL_ARGILLA_OWNER"],
            role=UserRole.owner,
            password=os.environ["CITECAL_ARGILLA_PASSWORD"],
            api_key=os.environ["CITECAL_ARGILLA_OWNER_KEY"],
            workspace=[os.environ.get("CITECAL_ARGILLA_WORKSPACE", "citecal")],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
