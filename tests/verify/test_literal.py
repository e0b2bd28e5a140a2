"""Literal statements: the only claims rules accept, one test per frame (positive and negative)."""

from __future__ import annotations

import textwrap

import pytest

from citecal.config import ExtractiveConfig
from citecal.source import build_symbol_index
from citecal.verify import verify_extractive

SOURCE = textwrap.dedent(
    """\
    DEFAULT_RETRIES = 0
    DEFAULT_POOLSIZE = 10
    CHUNK_SIZE = 10 * 1024


    class AdapterError(ValueError):
        pass


    class Adapter(BaseAdapter):
        max_retries: int = DEFAULT_RETRIES

        def send(self, request, timeout=None, verify=True):
            conn = self.get_connection(request.url)
            if timeout == 30:
                log("slow")
            if conn is None:
                raise AdapterError("no connection")
            return self.build_response(request, conn.urlopen())

        def close(self):
            self.poolmanager.clear()
    """
)
LINES = SOURCE.split("\n")
INDEX = build_symbol_index(SOURCE, "python")


def verdict_of(claim: str, start: int, end: int) -> str:
    code = "\n".join(LINES[start - 1 : end])
    v = verify_extractive(claim, code, start, end, INDEX, ExtractiveConfig())
    return v.verdict


@pytest.mark.parametrize(
    ("claim", "start", "end", "expected"),
    [
        # define
        ("The `Adapter` class defines `send` and `close`", 10, 22, "supports"),
        ("`Adapter` defines `send` and `close`", 10, 19, "unverified"),  # close is not in range
        ("`send` is defined here", 13, 19, "supports"),
        # has (with kind words)
        ("`Adapter` has the methods `send` and `close`", 10, 22, "supports"),
        ("`Adapter` has a `max_retries` field", 10, 11, "supports"),
        # call
        ("`send` calls `get_connection` and `build_response`", 13, 19, "supports"),
        ("`send` calls `AdapterError`", 13, 19, "supports"),  # a constructor call
        ("`send` calls `timeout`", 13, 19, "unverified"),  # named, never called
        # use
        ("`send` uses `conn.urlopen`", 13, 19, "supports"),
        # take (signature)
        ("`send` takes `request`, `timeout` and `verify`", 13, 19, "supports"),
        ("`send` takes `conn`", 13, 19, "unverified"),  # a local, not a parameter
        # value
        ("`DEFAULT_RETRIES` is 0 and `DEFAULT_POOLSIZE` is 10", 1, 2, "supports"),
        ("`DEFAULT_POOLSIZE` is 12", 1, 2, "unverified"),
        ("`CHUNK_SIZE` is 10 KiB", 3, 3, "supports"),
        ("`timeout` defaults to `None`", 13, 13, "supports"),
        ("`timeout` is 30", 13, 19, "unverified"),  # a comparison, not an assignment
        ("`Adapter` sets `max_retries` to `DEFAULT_RETRIES`", 10, 11, "supports"),
        # kind
        ("`AdapterError` is a class", 6, 7, "supports"),
        ("`send` is a class", 13, 19, "unverified"),
        # return / raise
        ("`send` returns `self.build_response`", 13, 19, "supports"),
        ("`send` returns `AdapterError`", 13, 19, "unverified"),  # raised, not returned
        ("`send` raises `AdapterError`", 13, 19, "supports"),
        ("`send` raises `KeyError`", 13, 19, "unverified"),
        # inherit
        ("`AdapterError` inherits from `ValueError`", 6, 7, "supports"),
        ("`Adapter` extends `BaseAdapter`", 10, 11, "supports"),
        ("`Adapter` extends `ValueError`", 10, 22, "unverified"),
        # topic prefix before a colon
        ("The adapter module's defaults: `DEFAULT_RETRIES` is 0", 1, 2, "supports"),
    ],
)
def test_frames(claim: str, start: int, end: int, expected: str) -> None:
    assert verdict_of(claim, start, end) == expected


@pytest.mark.parametrize(
    "claim",
    [
        "`send` always calls `get_connection`",  # quantifier
        "`send` only calls `get_connection`",
        "`send` calls `get_connection` before `build_response`",  # ordering
        "`send` calls `get_connection` when the pool is empty",  # condition
        "`send` never calls `close`",  # negation
        "`send` calls `get_connection`, which retries the request",  # relative clause
        "`send` retries and calls `get_connection`",  # behaviour verb ("retries")
        "`send` calls `get_connection` to speed things up",  # purpose
    ],
)
def test_behaviour_order_quantity_and_purpose_go_to_the_judge(claim: str) -> None:
    assert verdict_of(claim, 13, 19) == "unverified"


def test_import_and_export_lines() -> None:
    source = "from .models import Request, Response\n__all__ = ['Request']\n"
    index = build_symbol_index(source, "python")
    v = verify_extractive("The module imports `Request`", source, 1, 2, index, ExtractiveConfig())
    assert v.verdict == "supports"
    w = verify_extractive("The module imports `Session`", source, 1, 2, index, ExtractiveConfig())
    assert w.verdict == "not_supports"


def test_go_struct_fields_and_rust_constants() -> None:
    go = "type Mux struct {\n\thandler Handler\n\tinline bool\n}\n"
    index = build_symbol_index(go, "go")
    v = verify_extractive(
        "`Mux` has the fields `handler` and `inline`", go, 1, 4, index, ExtractiveConfig()
    )
    assert v.verdict == "supports"
    rust = "pub const MAX_COMPARATORS: usize = 32;\n"
    index = build_symbol_index(rust, "rust")
    v = verify_extractive("`MAX_COMPARATORS` is 32", rust, 1, 1, index, ExtractiveConfig())
    assert v.verdict == "supports"
