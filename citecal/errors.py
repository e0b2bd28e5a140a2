"""Typed errors. The CLI maps each to one readable line and an exit code.

Library code raises these instead of returning ``None`` with a warning; the
CLI catches them by name (never ``except Exception``).
"""

from __future__ import annotations


class CitecalError(Exception):
    """Base class of every error citecal expects and reports in one line."""

    exit_code = 1


class InputError(CitecalError):
    """Bad input from the user: missing, unreadable or malformed file, bad option."""

    exit_code = 2


class ConfigError(InputError):
    """Invalid configuration (pyproject.toml ``[tool.citecal]``, citecal.toml, env)."""


class StoreError(InputError):
    """The repository (directory or git revision) cannot be opened."""


class ServiceError(CitecalError):
    """A service (Argilla, LLM endpoint) is unreachable or refused the request."""

    exit_code = 2


class JudgeError(ServiceError):
    """The LLM judge failed in a way that must stop the run (README "The LLM judge")."""


class PrerequisiteError(CitecalError):
    """An optional dependency or external tool is missing."""

    exit_code = 2
