"""Session tokens for the cart API."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

TOKEN_TTL_SECONDS = 3600


class TokenExpiredError(Exception):
    """The token's expiry time has passed."""


class InvalidTokenError(Exception):
    """The token is malformed or its signature does not match."""


class SessionManager:
    """Issues and checks HMAC-signed session tokens."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self.used_nonces: set[str] = set()

    def issue_token(self, user_id: str) -> str:
        expiry = int(time.time()) + TOKEN_TTL_SECONDS
        nonce = secrets.token_hex(8)
        payload = f"{user_id}:{expiry}:{nonce}"
        return f"{payload}:{self._sign(payload)}"

    def validate_token(self, token: str) -> str:
        try:
            user_id, expiry, nonce, signature = token.split(":")
        except ValueError:
            raise InvalidTokenError("malformed token") from None
        payload = f"{user_id}:{expiry}:{nonce}"
        if not hmac.compare_digest(signature, self._sign(payload)):
            raise InvalidTokenError("bad signature")
        if int(expiry) < time.time():
            raise TokenExpiredError(f"token expired at {expiry}")
        if nonce in self.used_nonces:
            raise InvalidTokenError("nonce reused")
        self.used_nonces.add(nonce)
        return user_id

    def _sign(self, payload: str) -> str:
        return hmac.new(self._secret, payload.encode(), hashlib.sha256).hexdigest()
