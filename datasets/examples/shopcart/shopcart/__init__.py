"""shopcart: a tiny shopping-cart service used as citecal's example repository."""

from shopcart.cart import Cart, LineItem
from shopcart.pricing import apply_discount, compute_total

__all__ = ["Cart", "LineItem", "apply_discount", "compute_total"]
__version__ = "1.6.8"
