"""Cart and line items."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

MAX_QUANTITY = 99


class CartError(ValueError):
    """Raised when a cart operation is invalid."""


@dataclass
class LineItem:
    sku: str
    unit_price: Decimal
    quantity: int = 1

    @property
    def subtotal(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Cart:
    owner_id: str
    items: dict[str, LineItem] = field(default_factory=dict)
    coupon_code: str | None = None

    def add_item(self, sku: str, unit_price: Decimal, quantity: int = 1) -> LineItem:
        """Add a product to the cart, merging quantities for a repeated SKU."""
        if quantity <= 0:
            raise CartError("quantity must be positive")
        item = self.items.get(sku)
        if item is None:
            item = LineItem(sku=sku, unit_price=unit_price, quantity=0)
            self.items[sku] = item
        if item.quantity + quantity > MAX_QUANTITY:
            raise CartError(f"at most {MAX_QUANTITY} units of {sku}")
        item.quantity += quantity
        return item

    def remove_item(self, sku: str) -> None:
        """Remove a product; removing an absent SKU is a no-op."""
        self.items.pop(sku, None)

    def clear(self) -> None:
        self.items.clear()
        self.coupon_code = None

    def item_count(self) -> int:
        return sum(item.quantity for item in self.items.values())

    def is_empty(self) -> bool:
        return not self.items
