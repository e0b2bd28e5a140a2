"""Persist carts as JSON files, one per owner."""

from __future__ import annotations

import json
import os
import tempfile
from decimal import Decimal
from pathlib import Path

from shopcart.cart import Cart, LineItem


class CartStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, owner_id: str) -> Path:
        return self.directory / f"{owner_id}.json"

    def save(self, cart: Cart) -> None:
        """Write atomically: a crash mid-write never corrupts the saved cart."""
        data = {
            "owner_id": cart.owner_id,
            "coupon_code": cart.coupon_code,
            "items": [
                {"sku": i.sku, "unit_price": str(i.unit_price), "quantity": i.quantity}
                for i in cart.items.values()
            ],
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, self._path(cart.owner_id))

    def load(self, owner_id: str) -> Cart:
        path = self._path(owner_id)
        if not path.exists():
            return Cart(owner_id=owner_id)
        data = json.loads(path.read_text())
        cart = Cart(owner_id=data["owner_id"], coupon_code=data.get("coupon_code"))
        for raw in data["items"]:
            item = LineItem(raw["sku"], Decimal(raw["unit_price"]), raw["quantity"])
            cart.items[item.sku] = item
        return cart
