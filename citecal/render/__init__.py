"""Ways to show an :class:`~citecal.models.EvalResult`: terminal table, JSON, Markdown."""

from citecal.render._json import render_json
from citecal.render._markdown import render_markdown
from citecal.render._table import render_table

__all__ = ["render_json", "render_markdown", "render_table"]
