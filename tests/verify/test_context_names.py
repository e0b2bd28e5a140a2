"""Names that are context, not content (README "The cascade").

On natural reports most rule rejections were false alarms on names the reader sees with
the range: the function the lines sit in, the signature just above, or what the
sentence's other citation shows. None of these may make a rule reject a citation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citecal.config import ExtractiveConfig
from citecal.pipeline import evaluate_report
from citecal.source import build_symbol_index, open_store
from citecal.verify import verify_extractive

SCALA = """object Runner {
  def optionsForRender(options: List[Opt]): List[Opt] = {
    val heads = options.filter(_.isHead)
    val hidden = options.filter(_.isHidden)
    heads ++ hidden
  }
}
"""


def _check(claim: str, source: str, lang: str, start: int, end: int) -> str:
    index = build_symbol_index(source, lang)
    lines = source.splitlines()
    code = "\n".join(lines[start - 1 : end])

    def text(a: int, b: int) -> str:
        return "\n".join(lines[a - 1 : b])

    return verify_extractive(claim, code, start, end, index, ExtractiveConfig(), text).verdict


def test_a_signature_just_above_the_range_names_its_function() -> None:
    claim = "`optionsForRender` drops the head and hidden options"
    assert _check(claim, SCALA, "scala", 3, 5) != "not_supports"
    # The same claim against lines that are not under that signature is still rejected.
    other = SCALA.replace("def optionsForRender", "def somethingElse")
    assert _check(claim, other, "scala", 3, 5) == "not_supports"


def test_a_name_merely_used_above_the_range_is_not_context() -> None:
    source = (
        "class Cart:\n    def __init__(self):\n        self.items = {}\n\n"
        "    def add(self, sku):\n        return sku\n"
    )
    # `items` appears above (an assignment in __init__), which declares nothing: still missing.
    assert (
        _check("`add` stores `sku` in `items` and raises `KeyError`", source, "python", 5, 6)
        != "supports"
    )


def test_python_range_starting_inside_a_method_that_ends_before_the_range(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    source = (
        "def mount(prefix, adapter):\n    adapters[prefix] = adapter\n"
        "    keys = sorted(adapters)\n\n\nOTHER = 1\n"
    )
    assert _check("`mount` stores the adapter under its prefix", source, "python", 2, 6) != (
        "not_supports"
    )
    assert _check("`unmount` stores the adapter under its prefix", source, "python", 2, 6) == (
        "not_supports"
    )


def test_a_sibling_citation_of_the_same_sentence_is_credited(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    repo = make_repo(
        {
            "a.py": "def load(path):\n    return read(path)\n",
            "b.py": "def words(text):\n    return text.split()\n",
        }
    )
    both = "`words` and `split` turn the file into words [a.py:2] [b.py:2].\n"
    alone = "`words` and `split` turn the file into words [a.py:2].\n"
    with open_store(repo) as store:
        lone = evaluate_report(alone, store, judge=None, no_judge_reason="--no-llm")
        result = evaluate_report(both, store, judge=None, no_judge_reason="--no-llm")
    assert lone.citations[0].verdict == "not_supports"
    first = result.citations[0]
    assert first.verdict == "unverified", first.reasoning
    assert "shown by the sentence's other citation [b.py:2]" in (first.reasoning or "")
