"""What is sent again, and after how long: the same rules as the TypeScript SDK's."""

from __future__ import annotations

import unittest

from community_bridge.retry import MAX_BACKOFF_SECONDS, backoff, retry_after_seconds_of, retry_delay

ALMOST_ONE = 0.999_999_999


class Backoff(unittest.TestCase):
    def test_full_jitter_from_zero_to_the_capped_exponential(self) -> None:
        self.assertEqual([backoff(n, lambda: 0.0) for n in (1, 2, 3, 6, 40)], [0.0] * 5)
        ceilings = [round(backoff(n, lambda: ALMOST_ONE), 3) for n in (1, 2, 3, 6, 40)]
        self.assertEqual(ceilings, [0.5, 1.0, 2.0, MAX_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS])
        draws = [backoff(3) for _ in range(200)]
        self.assertTrue(all(0 <= d <= 2.0 for d in draws))
        self.assertGreater(len(set(draws)), 20, "the waits are spread, not one value")


class RetryDelay(unittest.TestCase):
    def test_an_unknown_outcome_is_never_sent_again(self) -> None:
        for status in (502, 504):
            self.assertIsNone(retry_delay(status, "outcome_unknown", 1, 1))

    def test_what_nothing_changed_is_sent_again_after_backoff(self) -> None:
        for status, reason in ((502, "platform_failed"), (504, "platform_timeout"), (502, None), (409, "concurrent_update")):
            with self.subTest(f"{status} {reason}"):
                self.assertEqual(retry_delay(status, reason, None, 2, lambda: ALMOST_ONE), backoff(2, lambda: ALMOST_ONE))

    def test_retry_after_is_the_least_wait_for_429_503_and_a_running_claim(self) -> None:
        for status, reason in ((429, "rate_limited"), (503, "not_ready"), (503, "unavailable"), (409, "claim_in_progress")):
            with self.subTest(f"{status} {reason}"):
                self.assertEqual(retry_delay(status, reason, 1, 1, lambda: 0.0), 1.0)
                self.assertEqual(retry_delay(status, reason, 1, 4, lambda: ALMOST_ONE), backoff(4, lambda: ALMOST_ONE))
                self.assertIsNone(retry_delay(status, reason, None, 1), "without Retry-After it says nothing of when")

    def test_the_answer_to_this_very_request_stands(self) -> None:
        for status, reason in ((400, "validation_failed"), (401, None), (403, None), (404, "user_not_found"), (409, "conflict"), (409, "claim_lost"), (422, "platform_rejected"), (500, "internal_error"), (503, "not_configured"), (200, None)):
            with self.subTest(f"{status} {reason}"):
                self.assertIsNone(retry_delay(status, reason, None, 1))


class RetryAfter(unittest.TestCase):
    def test_whole_seconds_only(self) -> None:
        self.assertEqual([retry_after_seconds_of(v) for v in ("1", " 30 ", "0", "999999999")], [1, 30, 0, 999999999])
        self.assertEqual([retry_after_seconds_of(v) for v in (None, "", "1.5", "-1", "Wed, 21 Oct 2026 07:28:00 GMT", "1000000000", "١")], [None] * 7)


if __name__ == "__main__":
    unittest.main()
