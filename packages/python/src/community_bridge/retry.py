"""When a call is sent again, and after how long.

Only a failure that sending again can mend is: no answer; a 502/504 that says nothing changed (or,
from a proxy, says nothing at all); a 409 ``concurrent_update``; and, after the wait their
Retry-After asks for, a 429, a 503 and a 409 ``claim_in_progress`` (an earlier attempt with the
same Idempotency-Key is still running). An ``outcome_unknown`` never is: the service will not send
that write again, so the same answer would come back, and a new key could apply it twice. Anything
else is the service's answer to this very request.
"""

from __future__ import annotations

import random as _random
import re
from typing import Callable

BACKOFF_BASE_SECONDS = 0.25
"""Backoff is random in [0, min(MAX_BACKOFF_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)] ("full jitter")."""
MAX_BACKOFF_SECONDS = 10.0
"""Backoff stops growing here: the call's deadline, not the attempt count, bounds the waiting."""

_RETRY_AFTER = re.compile(r"[0-9]{1,9}")


def retry_delay(status: int, reason: str | None, retry_after_seconds: int | None, attempt: int, random: Callable[[], float] = _random.random) -> float | None:
    """Seconds to wait after the nth attempt's answer before sending again, or None when the answer stands.

    A wait asked for by Retry-After is the least one: the jitter may add to it.
    """
    if reason == "outcome_unknown":
        return None
    if status in (502, 504) or (status == 409 and reason == "concurrent_update"):
        return backoff(attempt, random)
    asked = status in (429, 503) or (status == 409 and reason == "claim_in_progress")
    # Without a Retry-After these say nothing of when it would work (a 503 not_configured needs an operator).
    if not asked or retry_after_seconds is None:
        return None
    return max(float(retry_after_seconds), backoff(attempt, random))


def backoff(attempt: int, random: Callable[[], float] = _random.random) -> float:
    """Seconds to wait after the nth attempt (1 for the first) got no answer, or an answer that asks for backoff."""
    ceiling = min(MAX_BACKOFF_SECONDS, BACKOFF_BASE_SECONDS * 2 ** min(attempt, 30))
    return random() * ceiling


def retry_after_seconds_of(header: str | None) -> int | None:
    """A Retry-After header in whole seconds; None for none, an HTTP date, or anything else."""
    if header is None:
        return None
    text = header.strip()
    return int(text) if _RETRY_AFTER.fullmatch(text) else None
