"""Price computation: discounts, tax and totals."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from shopcart.cart import Cart

TAX_RATE = Decimal("0.20")
COUPONS = {
    "WELCOME10": Decimal("0.10"),
    "SPRING25": Decimal("0.25"),
}


def round_money(amount: Decimal) -> Decimal:
    """Round to whole cents, half up, as the payment provider expects."""
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def apply_discount(subtotal: Decimal, coupon_code: str | None) -> Decimal:
    """Return the subtotal after the coupon's percentage discount."""
    if not coupon_code:
        return subtotal
    rate = COUPONS.get(coupon_code.upper())
    if rate is None:
        raise KeyError(f"unknown coupon {coupon_code!r}")
    return subtotal * (Decimal(1) - rate)


def compute_total(cart: Cart) -> Decimal:
    """Subtotal of all line items, minus the coupon, plus tax."""
    subtotal = sum((item.subtotal for item in cart.items.values()), Decimal(0))
    discounted = apply_discount(subtotal, cart.coupon_code)
    return round_money(discounted * (Decimal(1) + TAX_RATE))
