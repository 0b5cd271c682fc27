"""What a failed call raises: one class per way a caller handles the failure, all of them BridgeError.

``reason`` is what to match on: the service's ``data.reason`` (its closed list, see ``REASON_FAMILIES``)
or the client's own for a call that got no usable answer (``connection_failed``, ``timeout``,
``redirect``, ``answer_too_large``). ``message`` is for people and may change. No error ever carries
the API key.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence, TypedDict, cast

ClientReason = Literal["connection_failed", "timeout", "redirect", "answer_too_large"]


class Issue(TypedDict):
    field: str
    message: str


class BridgeError(Exception):
    """A call that did not succeed; the parent of every error this package raises for a call.

    Raised as itself for an answer no family names: one that is not the service's (a proxy's HTML
    page), or a reason a newer service added.
    """

    status: int | None
    """The answer's HTTP status; None when no answer came."""
    reason: str | None
    """The service's ``data.reason``, or the client's own; None for an answer that names none."""
    message: str
    data: Mapping[str, Any]
    """``data`` of the service's ``{code, message, data}`` error body (empty when there is none)."""
    request_id: str | None
    """The answer's X-Request-Id, else the one the call sent (the same on every attempt)."""
    idempotency_key: str | None
    """The Idempotency-Key a POST went with: a later retry with it cannot apply the request twice."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        reason: str | None = None,
        data: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason
        self.data = dict(data or {})
        self.request_id = request_id
        self.idempotency_key = idempotency_key

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, reason={self.reason!r}, message={self.message!r}, request_id={self.request_id!r})"


class ValidationError(BridgeError):
    """400 ``validation_failed``: the request is invalid; nothing ran. ``issues`` names every problem by field."""

    @property
    def issues(self) -> Sequence[Issue]:
        issues = self.data.get("issues")
        listed = cast(list[Any], issues) if isinstance(issues, list) else []
        found = [cast(dict[str, Any], i) for i in listed if isinstance(i, dict)]
        return [{"field": i["field"], "message": i["message"]} for i in found if isinstance(i.get("field"), str) and isinstance(i.get("message"), str)]


class AuthError(BridgeError):
    """401: the API key is missing, unknown, disabled, revoked or expired (which one is not said)."""


class PermissionDeniedError(BridgeError):
    """403: the API key lacks the endpoint's permission (``x-permission`` in the OpenAPI document)."""


class NotFoundError(BridgeError):
    """404 ``user_not_found`` (the platform has no such oId, in ``data['oId']``) or ``not_found`` (no such operation, or another app's)."""


class RouteError(BridgeError):
    """404 ``route_not_found``, 405/501 ``method_not_allowed``: base_url does not point at the service, or the service is older than this client."""


class PayloadTooLargeError(BridgeError):
    """413 ``payload_too_large``: the request body is over the service's bound; nothing changed."""


class ConflictError(BridgeError):
    """The request conflicts with what is recorded; nothing was sent to the platform.

    409 ``conflict`` (an item deduction the user cannot afford, a resolution of an outcome that is not
    unknown), ``concurrent_update`` and ``claim_in_progress`` (after the retries the deadline allowed),
    ``claim_lost`` (a retry took the key over and answers for it), and 422 ``idempotency_key_reused``
    (the key was used with another request: a new request needs a new key).
    """


class OperationNotAppliedError(BridgeError):
    """409 ``operation_not_applied``: the operation of this Idempotency-Key was resolved as not applied.

    Send it again as a new request, with a new key, unless ``contradicted`` (then check the platform first).
    """

    @property
    def operation_id(self) -> str | None:
        value = self.data.get("operationId")
        return value if isinstance(value, str) else None

    @property
    def contradicted(self) -> bool:
        return self.data.get("contradicted") is True


class RateLimitError(BridgeError):
    """429 ``rate_limited`` (``too_many_connections`` for streams), still after the waits the deadline allowed; nothing ran."""

    retry_after_seconds: int | None
    """The answer's Retry-After: how long to wait before sending it again."""

    def __init__(self, message: str, *, retry_after_seconds: int | None = None, **init: Any) -> None:
        super().__init__(message, **init)
        self.retry_after_seconds = retry_after_seconds


class UnavailableError(BridgeError):
    """503: ``not_ready``, ``unavailable`` or ``store_unavailable`` (still after the waits the deadline allowed;
    a write that met ``store_unavailable`` may or may not be recorded, and the same call with the same key finds
    out which), or ``not_configured``
    (an operator must set the setting the message names; the same request with the same key may then be sent)."""

    retry_after_seconds: int | None

    def __init__(self, message: str, *, retry_after_seconds: int | None = None, **init: Any) -> None:
        super().__init__(message, **init)
        self.retry_after_seconds = retry_after_seconds


class ServiceError(BridgeError):
    """500 ``internal_error``: the service failed unexpectedly (its log has the cause, under ``request_id``).

    A retry with the same ``idempotency_key`` answers what the request did if it changed something.
    """


class PlatformError(BridgeError):
    """The platform refused (422 ``platform_rejected``, its own message in ``platform_message``), failed
    (502 ``platform_failed``) or did not answer a read in time (504 ``platform_timeout``).
    In each case nothing happened; the last two were retried while the deadline allowed."""

    @property
    def platform_message(self) -> str | None:
        value = self.data.get("platformMessage")
        return value if isinstance(value, str) else None


class OutcomeUnknownError(BridgeError):
    """502/504 ``outcome_unknown``: the write was sent, or may have been, and its result is not known.

    Raised at the first such answer and never sent again: the service will not send that write again
    whatever key it comes with, and a new key could apply it twice. Keep ``operation_id`` for an
    operator, who checks the user on the platform and resolves it (``client.operations.resolve``,
    ``operations resolve`` in the CLI, or the console); the same ``idempotency_key`` then answers what
    they found (success, or ``OperationNotAppliedError``).
    """

    operation_id: str
    operation_status: Literal["unknown", "pending"]
    """``unknown``: sent, no usable answer; ``pending``: the service could not record what happened."""

    def __init__(self, message: str, *, operation_id: str, operation_status: Literal["unknown", "pending"], **init: Any) -> None:
        super().__init__(message, **init)
        self.operation_id = operation_id
        self.operation_status = operation_status

    def __str__(self) -> str:
        key = f" and keep idempotency_key {self.idempotency_key!r}" if self.idempotency_key else ""
        return (
            f"{self.message} [do not send it again{key}: an operator resolves operation {self.operation_id} "
            f"(client.operations.resolve or `operations resolve` in the CLI), then the same key answers what they found]"
        )


class BridgeConnectionError(BridgeError):
    """No answer came: the connection was refused or reset (``connection_failed``), after the attempts the deadline allowed.

    ``status`` is None. A POST's fate is open: send it again later with ``idempotency_key``, which cannot apply it twice.
    """


class BridgeTimeoutError(BridgeConnectionError):
    """The call's deadline (the client's ``timeout``) passed before a whole answer came (``timeout``).

    The deadline covers connecting, every attempt, the waits between them and reading the answer's body.
    The attempt it cut short may still be running on the service: retry later with ``idempotency_key``.
    """


class RedirectError(BridgeError):
    """The service's address answered with a redirect (``redirect``), which is not followed.

    Every request carries the API key, which goes to base_url's origin only. ``location_origin`` is where
    the redirect pointed (its origin only). Point base_url at the service itself.
    """

    location_origin: str | None

    def __init__(self, message: str, *, location_origin: str | None, **init: Any) -> None:
        super().__init__(message, reason="redirect", **init)
        self.location_origin = location_origin


class AnswerTooLargeError(BridgeError):
    """The answer was longer than the client's ``max_answer_bytes`` (``answer_too_large``); it was not read further.

    The service's own answers are far below the default bound: this is something else answering at
    base_url (a proxy, a wrong address). ``status`` is the answer's. Not retried.
    """

    limit: int

    def __init__(self, message: str, *, limit: int, **init: Any) -> None:
        super().__init__(message, reason="answer_too_large", **init)
        self.limit = limit


REASON_FAMILIES: Mapping[str, type[BridgeError]] = {
    "validation_failed": ValidationError,
    "unauthenticated": AuthError,
    "forbidden": PermissionDeniedError,
    "foreign_origin": PermissionDeniedError,
    "user_not_found": NotFoundError,
    "not_found": NotFoundError,
    "route_not_found": RouteError,
    "method_not_allowed": RouteError,
    "payload_too_large": PayloadTooLargeError,
    "conflict": ConflictError,
    "concurrent_update": ConflictError,
    "claim_in_progress": ConflictError,
    "claim_lost": ConflictError,
    "idempotency_key_reused": ConflictError,
    "operation_not_applied": OperationNotAppliedError,
    "platform_rejected": PlatformError,
    "platform_failed": PlatformError,
    "platform_timeout": PlatformError,
    "rate_limited": RateLimitError,
    "too_many_connections": RateLimitError,
    "internal_error": ServiceError,
    "outcome_unknown": OutcomeUnknownError,
    "not_configured": UnavailableError,
    "not_ready": UnavailableError,
    "store_unavailable": UnavailableError,
    "unavailable": UnavailableError,
}
"""Every ``data.reason`` of the service (its closed list) and the class it raises."""

STATUS_FAMILIES: Mapping[int, type[BridgeError]] = {
    400: ValidationError,
    401: AuthError,
    403: PermissionDeniedError,
    429: RateLimitError,
}
"""The class for an answer with no ``data.reason`` (the spec's own 401 and 403 bodies, a proxy's page)."""
