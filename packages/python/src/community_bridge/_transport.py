"""One admin API call: JSON in and out, the apiKey header, one deadline over every attempt, and
retries (retry.py) of the failures that sending again can mend, with the same Idempotency-Key and
X-Request-Id, so the service answers from its record instead of acting twice and its log ties the
attempts together.

The deadline covers connecting, sending, the answer's head and its whole body: each attempt has a
watchdog that shuts its socket when the deadline passes, so an answer that drips a byte at a time
cannot hold the call past it. The body is read in bounded chunks up to ``max_answer_bytes``.
Redirects are not followed (http.client never does): the key goes to base_url's origin only.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Mapping, NoReturn, cast
from urllib.parse import urlencode, urljoin, urlsplit

from ._settings import ApiKey, BaseUrl
from ._version import __version__
from .errors import AnswerTooLargeError, BridgeConnectionError, BridgeTimeoutError, RedirectError
from .retry import backoff, retry_after_seconds_of, retry_delay

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_LENGTH = re.compile(r"[0-9]{1,19}")
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    """The parsed JSON body; None when it was not JSON."""
    request_id: str | None
    """The answer's X-Request-Id when it has a well-formed one, else the one the call sent."""
    retry_after_seconds: int | None
    """Its Retry-After in seconds, else its ``data.retryAfterSeconds``."""


@dataclass(frozen=True)
class CallContext:
    request_id: str
    idempotency_key: str | None


class _DeadlinePassed(Exception):
    pass


class _Watchdog:
    """Shuts the attempt's socket when the deadline passes, which ends any read blocked on it at once."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.fired = False
        self._connection = connection
        # Held while shutting down, and by cancel(): once cancel() returns, the socket is the caller's to close.
        self._lock = threading.Lock()
        self._cancelled = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self.fired = True
            sock = self._connection.sock
            if sock is not None:
                try:
                    # The plain socket's shutdown, also under TLS: it unblocks the reader without unwrapping.
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass

    def cancel(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._cancelled = True


class Transport:
    def __init__(self, base: BaseUrl, api_key: ApiKey, timeout: float, max_attempts: int, max_answer_bytes: int, ssl_context: ssl.SSLContext | None) -> None:
        self.base = base
        self.api_key = api_key
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_answer_bytes = max_answer_bytes
        self._ssl_context = ssl_context if ssl_context is not None else (ssl.create_default_context() if base.scheme == "https" else None)

    def send(self, method: str, path: str, *, query: Mapping[str, str | int | None] | None = None, body: Any = None, idempotency_key: str | None = None) -> tuple[Answer, CallContext]:
        target = self.base.path + path + _query_string(query)
        context = CallContext(request_id=str(uuid.uuid4()), idempotency_key=idempotency_key)
        headers = {
            "apiKey": self.api_key.reveal(),
            "Accept": "application/json",
            "X-Request-Id": context.request_id,
            "User-Agent": f"community-bridge-python/{__version__}",
        }
        payload: bytes | None = None
        if body is not None:
            payload = _json_of(body)
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        deadline = time.monotonic() + self.timeout

        attempt = 0
        while True:
            attempt += 1
            answer: Answer | None = None
            failure: Exception | None = None
            try:
                answer = self._attempt(method, target, payload, headers, deadline, context)
            except _DeadlinePassed as error:
                self._raise_timeout(error.__cause__, context)
            except (OSError, http.client.HTTPException) as error:
                failure = error
            if answer is not None:
                reason = _reason_of(answer.body)
                delay = retry_delay(answer.status, reason, answer.retry_after_seconds, attempt)
            else:
                delay = backoff(attempt)
            # A wait that would end past the deadline is not begun: what this attempt got stands.
            if delay is None or attempt >= self.max_attempts or time.monotonic() + delay >= deadline:
                if answer is not None:
                    return answer, context
                self._raise_no_answer(failure, context)
            time.sleep(delay)

    def _attempt(self, method: str, target: str, payload: bytes | None, headers: Mapping[str, str], deadline: float, context: CallContext) -> Answer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _DeadlinePassed()
        connection = self._connection(remaining)
        watchdog = _Watchdog(connection, remaining)
        response: http.client.HTTPResponse | None = None
        try:
            connection.request(method, target, body=payload, headers=dict(headers))
            response = connection.getresponse()
            if 300 <= response.status < 400:
                raise self._redirect(response, target, context)
            raw = self._read_body(response, deadline, context)
            if watchdog.fired:
                # The shut socket reads as the end of the body: what came is not the whole answer.
                raise _DeadlinePassed()
            return self._answer_of(response, raw, context)
        except (OSError, http.client.HTTPException) as error:
            if watchdog.fired or time.monotonic() >= deadline:
                raise _DeadlinePassed() from error
            raise
        finally:
            watchdog.cancel()
            # A response that will close owns the socket, which closing the connection leaves open.
            if response is not None:
                response.close()
            connection.close()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.base.scheme == "https":
            return http.client.HTTPSConnection(self.base.host, self.base.port, timeout=timeout, context=self._ssl_context)
        return http.client.HTTPConnection(self.base.host, self.base.port, timeout=timeout)

    def _read_body(self, response: http.client.HTTPResponse, deadline: float, context: CallContext) -> bytes:
        limit = self.max_answer_bytes
        header = response.getheader("Content-Length")
        declared = int(header) if header is not None and _LENGTH.fullmatch(header.strip()) else None
        if declared is not None and declared > limit:
            raise self._too_large(response.status, f"declares {declared} bytes", context)
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() >= deadline:
                raise _DeadlinePassed()
            chunk = response.read1(_CHUNK_BYTES)
            if not chunk:
                if declared is not None and size < declared:
                    raise http.client.IncompleteRead(b"".join(chunks), declared - size)
                return b"".join(chunks)
            size += len(chunk)
            if size > limit:
                raise self._too_large(response.status, "is longer", context)
            chunks.append(chunk)

    def _answer_of(self, response: http.client.HTTPResponse, raw: bytes, context: CallContext) -> Answer:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        answered = response.getheader("X-Request-Id")
        request_id = answered if answered is not None and _REQUEST_ID.fullmatch(answered) else context.request_id
        seconds = json_object(json_object(body).get("data")).get("retryAfterSeconds")
        data_seconds = seconds if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds >= 0 else None
        retry_after = retry_after_seconds_of(response.getheader("Retry-After"))
        if not 200 <= response.status < 300:
            # An answer that is not a success may become an error, which ends up in logs: the key is masked in it.
            body = None if body is None else json.loads(self.api_key.redact(json.dumps(body)))
            request_id = self.api_key.redact(request_id)
        return Answer(status=response.status, body=body, request_id=request_id, retry_after_seconds=retry_after if retry_after is not None else data_seconds)

    def _redirect(self, response: http.client.HTTPResponse, target: str, context: CallContext) -> RedirectError:
        location = response.getheader("Location")
        where = _origin_of(urljoin(self.base.origin + target, location)) if location is not None else None
        shown = None if where is None else self.api_key.redact(where)
        told = "with no Location" if location is None else f"to {shown or 'a Location that is not a URL'}"
        message = f"Redirect not followed: HTTP {response.status} {told}; the API key is sent to {self.base.origin} only (set base_url to the service's own address)"
        return RedirectError(message, status=response.status, location_origin=shown, request_id=context.request_id, idempotency_key=context.idempotency_key)

    def _too_large(self, status: int, how: str, context: CallContext) -> AnswerTooLargeError:
        limit = self.max_answer_bytes
        message = f"Answer not read: HTTP {status}, whose body {how} than max_answer_bytes ({limit}); something other than the service may be answering at {self.base.origin}"
        return AnswerTooLargeError(message, limit=limit, status=status, request_id=context.request_id, idempotency_key=context.idempotency_key)

    def _raise_timeout(self, cause: BaseException | None, context: CallContext) -> NoReturn:
        error = BridgeTimeoutError(f"No answer within {self.timeout:g} s", reason="timeout", request_id=context.request_id, idempotency_key=context.idempotency_key)
        raise error from (None if cause is None or self.api_key.mentioned_in(_describe(cause)) else cause)

    def _raise_no_answer(self, failure: Exception | None, context: CallContext) -> NoReturn:
        init: dict[str, Any] = {"reason": "connection_failed", "request_id": context.request_id, "idempotency_key": context.idempotency_key}
        detail = "" if failure is None else _describe(failure)
        # A failure that mentions the key is left out whole, its description and its cause.
        if failure is None or self.api_key.mentioned_in(detail):
            raise BridgeConnectionError("Network error (its description mentions the API key and is left out)", **init) from None
        raise BridgeConnectionError(f"Network error: {detail}", **init) from failure


def _json_of(body: Any) -> bytes:
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise TypeError(f"body: cannot be sent as JSON ({error})") from None


def _query_string(query: Mapping[str, str | int | None] | None) -> str:
    pairs = [(name, str(value)) for name, value in (query or {}).items() if value is not None]
    return f"?{urlencode(pairs)}" if pairs else ""


def json_object(value: Any) -> dict[str, Any]:
    """The value when it is a JSON object, else an empty one: what an answer's body or ``data`` is read as."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _reason_of(body: Any) -> str | None:
    reason = json_object(json_object(body).get("data")).get("reason")
    return reason if isinstance(reason, str) else None


def _origin_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.hostname}" + ("" if port is None else f":{port}")


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if text != type(error).__name__ else text
