"""The service's answer as a value, or the BridgeError its status and ``data.reason`` call for."""

from __future__ import annotations

from typing import Any, cast

from ._transport import Answer, CallContext, json_object
from .errors import REASON_FAMILIES, STATUS_FAMILIES, BridgeError, OutcomeUnknownError, RateLimitError, UnavailableError


def expect_success(answer: Answer, context: CallContext) -> Any:
    """The body of a 2xx JSON object answer; raises the error for anything else."""
    body: object = answer.body
    if 200 <= answer.status < 300 and isinstance(body, dict):
        return cast(dict[str, Any], body)
    raise error_from(answer, context)


def error_from(answer: Answer, context: CallContext) -> BridgeError:
    body = json_object(answer.body)
    status = answer.status
    message = body.get("message")
    if not isinstance(message, str):
        message = f"Unexpected answer (HTTP {status}, not a JSON object)" if status < 300 else f"HTTP {status}"
    data = json_object(body.get("data"))
    reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    init: dict[str, Any] = {"status": status, "reason": reason, "data": data, "request_id": answer.request_id, "idempotency_key": context.idempotency_key}
    if reason == "outcome_unknown":
        operation_id = data.get("operationId")
        if status in (502, 504) and isinstance(operation_id, str):
            return OutcomeUnknownError(message, operation_id=operation_id, operation_status="pending" if data.get("status") == "pending" else "unknown", **init)
        return BridgeError(message, **init)
    # The service's list is closed and REASON_FAMILIES names all of it; a newer service's reason still passes through.
    family = REASON_FAMILIES.get(reason, BridgeError) if reason is not None else STATUS_FAMILIES.get(status, BridgeError)
    if family in (RateLimitError, UnavailableError):
        return family(message, retry_after_seconds=answer.retry_after_seconds, **init)  # type: ignore[call-arg]
    return family(message, **init)
