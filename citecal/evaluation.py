"""Reading an evaluation back: the JSON ``citecal eval --format json`` writes.

``push``, ``estimate``, ``calibrate --judged`` and ``status`` read evaluations;
the reader lives here, in the library, so no package reaches into a command
for it (docs/explanation/architecture.md). An evaluation is input like any
other file (README "Security"): a regular file of bounded size whose numbers
are bounded (:func:`citecal._json.loads`: no NaN, Infinity or 5 000-digit
integer), checked against the model before anything uses it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from citecal._io import MAX_JSON_BYTES, read_text_file
from citecal._json import loads
from citecal.errors import InputError
from citecal.models import EvalResult


def read_eval_json(path: Path | str) -> EvalResult:
    """The evaluation written by ``citecal eval --format json``; InputError when it is not one.

    A ``citecal validate --format json`` result is accepted too: its answer
    citations become evaluation rows (:func:`citecal.answers.answers_to_eval`).

    Raises:
        InputError: missing, not a regular file, too big, not JSON with bounded
            numbers, or not an evaluation; one line naming the file.
    """
    p = Path(path)
    text = read_text_file(p, "evaluation JSON", MAX_JSON_BYTES)
    if '"total_qa"' in text[:4096] and '"summary"' not in text[:4096]:
        from citecal.answers import ValidateResult, answers_to_eval

        data = loads(text, str(p), "a `citecal validate --format json` output")
        try:
            return answers_to_eval(ValidateResult.model_validate(data))
        except ValidationError as exc:
            raise InputError(
                f"{p} is not a `citecal validate --format json` output: {_first(exc)}"
            ) from None
    data = loads(text, str(p), "a `citecal eval --format json` output")
    try:
        return EvalResult.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"{p} is not a `citecal eval --format json` output: {_first(exc)}"
        ) from None


def _first(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"'{where}': {err['msg']}"


__all__ = ["read_eval_json"]
