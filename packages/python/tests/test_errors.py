"""The error class of each answer: by data.reason when it has one, else by status."""

from __future__ import annotations

import unittest
from typing import Any

from community_bridge import (
    REASON_FAMILIES,
    AuthError,
    BridgeError,
    ConflictError,
    OutcomeUnknownError,
    PermissionDeniedError,
    PlatformError,
    RateLimitError,
    UnavailableError,
    ValidationError,
)
from community_bridge._answers import error_from, expect_success
from community_bridge._transport import Answer, CallContext

CONTEXT = CallContext(request_id="r-1", idempotency_key="k-1")


def answer(status: int, body: Any, retry_after: int | None = None) -> Answer:
    return Answer(status=status, body=body, request_id="r-2", retry_after_seconds=retry_after)


class ErrorFrom(unittest.TestCase):
    def test_each_reason_its_family(self) -> None:
        for reason, family in REASON_FAMILIES.items():
            if reason == "outcome_unknown":
                continue
            with self.subTest(reason):
                error = error_from(answer(418, {"code": 418, "message": "m", "data": {"reason": reason}}), CONTEXT)
                self.assertIs(type(error), family)
                self.assertEqual((error.reason, error.status, error.message, error.request_id, error.idempotency_key), (reason, 418, "m", "r-2", "k-1"))

    def test_the_fields_each_family_adds(self) -> None:
        unknown = error_from(answer(502, {"code": 502, "message": "Outcome unknown: …", "data": {"reason": "outcome_unknown", "operationId": "op1", "status": "pending"}}), CONTEXT)
        assert isinstance(unknown, OutcomeUnknownError)
        self.assertEqual((unknown.operation_id, unknown.operation_status), ("op1", "pending"))
        self.assertIn("do not send it again and keep idempotency_key 'k-1'", str(unknown))
        limited = error_from(answer(429, {"code": 429, "message": "m", "data": {"reason": "rate_limited", "retryAfterSeconds": 2}}, retry_after=2), CONTEXT)
        assert isinstance(limited, RateLimitError)
        self.assertEqual(limited.retry_after_seconds, 2)
        starting = error_from(answer(503, {"code": 503, "message": "m", "data": {"reason": "not_ready"}}, retry_after=5), CONTEXT)
        assert isinstance(starting, UnavailableError)
        self.assertEqual(starting.retry_after_seconds, 5)
        refused = error_from(answer(422, {"code": 422, "message": "m", "data": {"reason": "platform_rejected", "platformMessage": "积分不足"}}), CONTEXT)
        assert isinstance(refused, PlatformError)
        self.assertEqual(refused.platform_message, "积分不足")
        invalid = error_from(answer(400, {"code": 400, "message": "m", "data": {"reason": "validation_failed", "issues": [{"field": "oId", "message": "bad"}, "junk"]}}), CONTEXT)
        assert isinstance(invalid, ValidationError)
        self.assertEqual(list(invalid.issues), [{"field": "oId", "message": "bad"}])

    def test_answers_without_a_reason(self) -> None:
        self.assertIs(type(error_from(answer(401, {"code": 401, "message": "Invalid apiKey", "data": {}}), CONTEXT)), AuthError)
        self.assertIs(type(error_from(answer(403, {"code": 403, "message": "No permission to access this resource", "data": {}}), CONTEXT)), PermissionDeniedError)
        page = error_from(answer(502, None), CONTEXT)
        self.assertEqual((type(page), page.message, page.reason, page.data), (BridgeError, "HTTP 502", None, {}))
        odd = error_from(answer(200, ["not", "an", "object"]), CONTEXT)
        self.assertEqual((type(odd), odd.message), (BridgeError, "Unexpected answer (HTTP 200, not a JSON object)"))

    def test_an_outcome_unknown_without_its_operation_or_a_newer_reason_is_a_plain_bridge_error(self) -> None:
        self.assertIs(type(error_from(answer(504, {"code": 504, "message": "m", "data": {"reason": "outcome_unknown"}}), CONTEXT)), BridgeError)
        newer = error_from(answer(409, {"code": 409, "message": "m", "data": {"reason": "made_up_later"}}), CONTEXT)
        self.assertEqual((type(newer), newer.reason), (BridgeError, "made_up_later"))

    def test_success_is_the_body(self) -> None:
        self.assertEqual(expect_success(answer(200, {"code": 0, "msg": "success"}), CONTEXT), {"code": 0, "msg": "success"})
        with self.assertRaises(ConflictError):
            expect_success(answer(409, {"code": 409, "message": "m", "data": {"reason": "conflict"}}), CONTEXT)


if __name__ == "__main__":
    unittest.main()
