"""Fixtures of the correction tests (values in correct_factories)."""

from correct_factories import shop, shop_report

__all__ = ["shop", "shop_report"]
