"""verify_signature against the shared vectors (test/interop/webhookSignatures.json, which the
TypeScript SDK's test reads too) and against signatures made by `openssl dgst -sha256 -hmac`, the
way a shell script or another language would make them."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
import unittest
from pathlib import Path
from typing import Any

from community_bridge import WebhookSignatureError, verify_signature

VECTORS = json.loads((Path(__file__).resolve().parents[3] / "test" / "interop" / "webhookSignatures.json").read_text("utf-8"))


def body_of(body: dict[str, str]) -> bytes:
    return base64.b64decode(body["base64"]) if "base64" in body else body["text"].encode("utf-8")


def openssl_v1(secret: str, timestamp: int, payload: bytes) -> str:
    """`printf '%s.' "$t"; cat body` piped into `openssl dgst -sha256 -hmac "$secret" -r`: its hex digest."""
    signed = f"{timestamp}.".encode("ascii") + payload
    out = subprocess.run(["openssl", "dgst", "-sha256", "-hmac", secret, "-r"], input=signed, capture_output=True, check=True)
    digest = out.stdout.decode("ascii").split()[0]
    assert len(digest) == 64, out.stdout
    return digest


class SharedVectors(unittest.TestCase):
    def test_every_case_verifies_as_expected(self) -> None:
        self.assertGreaterEqual(len(VECTORS["cases"]), 20)
        for case in VECTORS["cases"]:
            with self.subTest(case["name"]):
                options: dict[str, Any] = {"now": case["now"]}
                if "tolerance" in case:
                    options["tolerance"] = case["tolerance"]
                if case["expect"] == "valid":
                    self.assertIsInstance(verify_signature(body_of(case["body"]), case["header"], case["secret"], **options), int)
                else:
                    with self.assertRaises(WebhookSignatureError) as raised:
                        verify_signature(body_of(case["body"]), case["header"], case["secret"], **options)
                    self.assertEqual(raised.exception.reason, case["expect"])

    def test_the_known_answers_are_what_openssl_computes(self) -> None:
        for signature in VECTORS["signatures"]:
            with self.subTest(signature["secret"]):
                payload = body_of(signature["body"])
                self.assertEqual(openssl_v1(signature["secret"], signature["t"], payload), signature["v1"])
                header = f"t={signature['t']},v1={signature['v1']}"
                self.assertEqual(verify_signature(payload, header, signature["secret"], now=signature["t"]), signature["t"])


class OpensslSignatures(unittest.TestCase):
    def setUp(self) -> None:
        self.secret = "whsec_" + os.urandom(18).hex()
        self.payload = json.dumps({"event": "vip.granted", "oId": "1630399136785", "nonce": os.urandom(8).hex(), "text": "中文 ✓"}, ensure_ascii=False).encode("utf-8")
        self.now = int(time.time())

    def test_a_fresh_signature_verifies_and_returns_its_timestamp(self) -> None:
        header = f"t={self.now},v1={openssl_v1(self.secret, self.now, self.payload)}"
        self.assertEqual(verify_signature(self.payload, header, self.secret), self.now)
        self.assertEqual(verify_signature(bytearray(self.payload), header, self.secret.encode("utf-8")), self.now)

    def test_a_tampered_body_does_not(self) -> None:
        header = f"t={self.now},v1={openssl_v1(self.secret, self.now, self.payload)}"
        for tampered in (self.payload[:-1], self.payload + b" ", self.payload.replace(b"1630399136785", b"1630399136786"), b""):
            with self.subTest(tampered[-12:]):
                with self.assertRaises(WebhookSignatureError) as raised:
                    verify_signature(tampered, header, self.secret)
                self.assertEqual(raised.exception.reason, "signature_mismatch")

    def test_a_stale_timestamp_does_not_and_the_tolerance_is_a_setting(self) -> None:
        then = self.now - 301
        header = f"t={then},v1={openssl_v1(self.secret, then, self.payload)}"
        with self.assertRaises(WebhookSignatureError) as raised:
            verify_signature(self.payload, header, self.secret, now=self.now)
        self.assertEqual(raised.exception.reason, "timestamp_out_of_tolerance")
        self.assertEqual(verify_signature(self.payload, header, self.secret, now=self.now, tolerance=301), then)
        self.assertEqual(verify_signature(self.payload, header, self.secret, now=then + 300), then)
        with self.assertRaises(WebhookSignatureError):
            verify_signature(self.payload, header, self.secret, tolerance=0, now=then + 1)

    def test_a_rotated_pair_of_secrets_each_verify(self) -> None:
        old, new, other = self.secret, "whsec_" + os.urandom(18).hex(), "whsec_" + os.urandom(18).hex()
        header = f"t={self.now},v1={openssl_v1(old, self.now, self.payload)},v1={openssl_v1(new, self.now, self.payload)}"
        self.assertEqual(verify_signature(self.payload, header, old), self.now)
        self.assertEqual(verify_signature(self.payload, header, new), self.now)
        with self.assertRaises(WebhookSignatureError) as raised:
            verify_signature(self.payload, header, other)
        self.assertEqual(raised.exception.reason, "signature_mismatch")

    def test_the_raw_body_only(self) -> None:
        header = f"t={self.now},v1={openssl_v1(self.secret, self.now, self.payload)}"
        with self.assertRaises(TypeError):
            verify_signature(self.payload.decode("utf-8"), header, self.secret)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            verify_signature(json.loads(self.payload), header, self.secret)  # type: ignore[arg-type]

    def test_settings_no_check_could_pass_with(self) -> None:
        header = f"t={self.now},v1={openssl_v1(self.secret, self.now, self.payload)}"
        with self.assertRaises(ValueError):
            verify_signature(self.payload, header, "")
        with self.assertRaises(ValueError):
            verify_signature(self.payload, header, self.secret, tolerance=-1)


if __name__ == "__main__":
    unittest.main()
