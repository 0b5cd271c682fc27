"""The client's options, checked when it is made.

A value no call could succeed with fails there, once, with a TypeError or ValueError naming the
option, instead of on every call (and being retried as if the network had failed). A wrong API key
or base URL is described, never repeated: messages end up in logs, and a URL may carry a password.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import NoReturn
from urllib.parse import SplitResult, urlsplit

DEFAULT_TIMEOUT_SECONDS = 30.0
"""A call's platform lookup and write may each take the service's COMMUNITY_TIMEOUT_MS (5 s by default), an item deduction three calls."""
MAX_TIMEOUT_SECONDS = 86_400.0
DEFAULT_MAX_ATTEMPTS = 3
MAX_ATTEMPTS = 10
DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""The service's largest answers (an audit page of 500 entries, a push report) are well below 1 MiB."""
MAX_ANSWER_BYTES = 1024 * 1024 * 1024

_API_KEY = re.compile(r"cbk_[A-Za-z0-9_-]{27}")
_API_KEY_LENGTH = 31
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
MASK = "cbk_[redacted]"


class ApiKey:
    """The API key, kept out of every repr, str and error: only ``reveal()`` gives it, for the header."""

    __slots__ = ("_value",)

    def __init__(self, value: object) -> None:
        if not isinstance(value, str) or not _API_KEY.fullmatch(value):
            raise TypeError(f"api_key: not a key issued by `keys create` (cbk_ and 27 characters of A-Z a-z 0-9 _ -): {_flaw_of(value)}")
        self._value = value

    def reveal(self) -> str:
        return self._value

    def redact(self, text: str) -> str:
        """The text with the key masked, in any letter case (a URL's host, where an answer could put it, is lower-cased)."""
        return re.sub(re.escape(self._value), MASK, text, flags=re.IGNORECASE)

    def mentioned_in(self, text: str) -> bool:
        return self._value.lower() in text.lower()

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("the API key is not pickled")


def _flaw_of(value: object) -> str:
    if not isinstance(value, str):
        return "it is missing" if value is None else f"it is a {type(value).__name__}"
    if value.endswith(("\n", "\r")):
        return "it ends with a line break"
    if re.search(r"[\x00-\x1f\x7f]", value):
        return "it holds control characters"
    if value.strip() != value:
        return "it has spaces around it"
    if not value.startswith("cbk_"):
        return "it does not start with cbk_"
    if len(value) != _API_KEY_LENGTH:
        return f"it has {len(value)} characters instead of {_API_KEY_LENGTH}"
    return "it holds other characters"


@dataclass(frozen=True)
class BaseUrl:
    scheme: str
    host: str
    port: int
    path: str
    """Without trailing slashes: request paths are appended to it."""
    origin: str
    """The one origin the API key is sent to."""


def base_url_of(value: object) -> BaseUrl:
    parts: SplitResult | None
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
        port = parts.port if parts else None
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.query
        or parts.fragment
        or any(c.isspace() or ord(c) < 0x20 for c in str(value))
    ):
        raise ValueError("base_url: must be an http: or https: URL with no user name, password, query or fragment, e.g. https://bridge.example.com")
    port = port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname
    netloc = f"[{host}]" if ":" in host else host
    default = (parts.scheme, port) in (("http", 80), ("https", 443))
    origin = f"{parts.scheme}://{netloc}" + ("" if default else f":{port}")
    return BaseUrl(scheme=parts.scheme, host=host, port=port, path=parts.path.rstrip("/"), origin=origin)


def number_in(name: str, value: object, low: float, high: float, *, whole: bool) -> float:
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or not (low <= value <= high):  # type: ignore[operator]
        kind = "a whole number" if whole else "a number of seconds"
        raise ValueError(f"{name}: must be {kind} from {low:g} to {high:g}")
    return value  # type: ignore[return-value]


def idempotency_key_of(given: str | None) -> str:
    """The caller's key when given (checked), else a new random UUID: once per logical call, the same on its retries."""
    if given is None:
        return str(uuid.uuid4())
    if isinstance(given, str) and _IDEMPOTENCY_KEY.fullmatch(given):
        return given
    raise ValueError("idempotency_key: must be 1 to 255 visible ASCII characters (no spaces or control characters)")
