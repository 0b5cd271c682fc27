"""Verifying the ``Bridge-Signature`` header of a webhook the service sends.

The header is ``t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body bytes>")>``; while a
secret is being rotated it carries one ``v1=`` per valid secret. A message is authentic when any
``v1`` matches the one made with your secret (compared in constant time) and ``t`` is within
``tolerance`` seconds of now, which bounds how long a captured message can be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from typing import Literal

SIGNATURE_HEADER = "Bridge-Signature"
DEFAULT_TOLERANCE_SECONDS = 300
MAX_HEADER_LENGTH = 8192
"""Longer headers are refused unread: 8 KiB holds over a hundred signatures."""

_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_V1 = re.compile(r"[0-9a-f]{64}")

SignatureFailure = Literal["malformed_header", "signature_mismatch", "timestamp_out_of_tolerance"]


class WebhookSignatureError(ValueError):
    """The message is not to be trusted. ``reason``: ``malformed_header`` (no ``t``, no well-formed ``v1``, or too long),
    ``signature_mismatch`` (no ``v1`` is the one made with this secret over this body: another secret, or a changed body),
    ``timestamp_out_of_tolerance`` (authentic but older, or newer, than the tolerance allows: a replay or a skewed clock)."""

    reason: SignatureFailure

    def __init__(self, reason: SignatureFailure, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def verify_signature(payload: bytes | bytearray | memoryview, header: str, secret: str | bytes, tolerance: float = DEFAULT_TOLERANCE_SECONDS, now: float | None = None) -> int:
    """Checks a webhook's ``Bridge-Signature`` header against its raw body; returns its timestamp ``t`` (unix seconds).

    ``payload`` is the body exactly as received, before any JSON parsing (a re-serialized body does not match).
    ``now`` defaults to the system clock. Raises WebhookSignatureError, whose ``reason`` says what failed.
    """
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError("payload: must be the raw body bytes as received, not a parsed or re-encoded value")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise ValueError("tolerance: must be a number of seconds, 0 or more")
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("secret: must not be empty")
    timestamp, signatures = _parse(header)
    expected = hmac.new(key, str(timestamp).encode("ascii") + b"." + bytes(payload), hashlib.sha256).hexdigest()
    # Every candidate is compared, each in constant time: which one matched is not told by the time taken.
    matched = False
    for candidate in signatures:
        matched |= hmac.compare_digest(candidate, expected)
    if not matched:
        raise WebhookSignatureError("signature_mismatch", "Bridge-Signature: no v1 signature matches this body and secret")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookSignatureError("timestamp_out_of_tolerance", f"Bridge-Signature: t is {current - timestamp:.0f} s from now, beyond the tolerance of {tolerance:g} s")
    return timestamp


def _parse(header: str) -> tuple[int, list[str]]:
    if not isinstance(header, str) or len(header) > MAX_HEADER_LENGTH:
        raise WebhookSignatureError("malformed_header", f"Bridge-Signature: missing, or longer than {MAX_HEADER_LENGTH} characters")
    timestamps: list[str] = []
    signatures: list[str] = []
    for element in header.split(","):
        name, equals, value = element.strip().partition("=")
        if not equals:
            continue
        if name == "t":
            timestamps.append(value)
        elif name == "v1" and _V1.fullmatch(value):
            signatures.append(value)
    if len(timestamps) != 1 or not _TIMESTAMP.fullmatch(timestamps[0]):
        raise WebhookSignatureError("malformed_header", "Bridge-Signature: must carry one t=<unix seconds>")
    if not signatures:
        raise WebhookSignatureError("malformed_header", "Bridge-Signature: carries no v1=<64 lowercase hex digits>")
    return int(timestamps[0]), signatures
