"""Server-side sessions."""

import time

SESSION_TTL_S = 30 * 60


def is_expired(created_at: float, now: float | None = None) -> bool:
    """A session expires thirty minutes after it was created."""
    now = time.time() if now is None else now
    return now - created_at > SESSION_TTL_S
