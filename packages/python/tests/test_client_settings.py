"""The client's options: checked when it is made, each refusal naming its option and never the key."""

from __future__ import annotations

import pickle
import unittest
from datetime import datetime, timezone

from community_bridge import AdminClient

KEY = "cbk_" + "Ab9_-" * 5 + "xy"


class ApiKey(unittest.TestCase):
    def test_a_well_formed_key_is_kept_out_of_repr_and_str(self) -> None:
        client = AdminClient("https://bridge.example.com/", KEY)
        transport = vars(client._transport)  # pyright: ignore[reportPrivateUsage]
        for text in (repr(client), str(client), repr(vars(client)), repr(transport)):
            self.assertNotIn(KEY, text)
        self.assertIn("api_key=cbk_[redacted]", repr(client))
        self.assertIn("base_url='https://bridge.example.com'", repr(client))

    def test_it_is_not_pickled(self) -> None:
        with self.assertRaises(TypeError):
            pickle.dumps(AdminClient("http://127.0.0.1:8090", KEY))

    def test_a_malformed_key_is_described_not_repeated(self) -> None:
        cases = {
            KEY + "\n": "it ends with a line break",
            " " + KEY: "it has spaces around it",
            "xbk_" + KEY[4:]: "it does not start with cbk_",
            KEY[:-1]: "it has 30 characters instead of 31",
            KEY[:-1] + "!": "it holds other characters",
            None: "it is missing",
            42: "it is a int",
        }
        for value, flaw in cases.items():
            with self.subTest(flaw):
                with self.assertRaises(TypeError) as raised:
                    AdminClient("http://127.0.0.1:8090", value)  # type: ignore[arg-type]
                self.assertTrue(str(raised.exception).startswith("api_key: "), raised.exception)
                self.assertTrue(str(raised.exception).endswith(flaw), raised.exception)
                self.assertNotIn(KEY[4:-1], str(raised.exception))


class Options(unittest.TestCase):
    def test_base_url_is_an_http_address_without_credentials_query_or_fragment(self) -> None:
        for url in ("ftp://bridge.example.com", "https://user:secret@bridge.example.com", "https://bridge.example.com/?a=1", "https://bridge.example.com/#x", "bridge.example.com", "https://", "http://host:99999", "http://ho st"):
            with self.subTest(url):
                with self.assertRaises(ValueError) as raised:
                    AdminClient(url, KEY)
                self.assertTrue(str(raised.exception).startswith("base_url: "))
                self.assertNotIn("secret", str(raised.exception))
        self.assertIn("base_url='http://[::1]:8090/bridge'", repr(AdminClient("http://[::1]:8090/bridge//", KEY)))

    def test_numbers_in_range(self) -> None:
        for name, value in (("timeout", 0), ("timeout", -1), ("timeout", "30"), ("max_attempts", 0), ("max_attempts", 11), ("max_attempts", 2.5), ("max_attempts", True), ("max_answer_bytes", 0)):
            with self.subTest(f"{name}={value!r}"):
                with self.assertRaises(ValueError) as raised:
                    AdminClient("http://127.0.0.1:8090", KEY, **{name: value})  # type: ignore[arg-type]
                self.assertTrue(str(raised.exception).startswith(f"{name}: "))

    def test_an_idempotency_key_the_service_would_refuse_fails_before_sending(self) -> None:
        client = AdminClient("http://127.0.0.1:9", KEY, max_attempts=1)
        for key in ("", "with space", "x" * 256, "tab\there", "日本"):
            with self.subTest(key):
                with self.assertRaises(ValueError) as raised:
                    client.points.edit("1630399136785", 1, "memo", idempotency_key=key)
                self.assertTrue(str(raised.exception).startswith("idempotency_key: "))

    def test_a_body_json_cannot_carry_fails_before_sending(self) -> None:
        client = AdminClient("http://127.0.0.1:9", KEY, max_attempts=1)
        with self.assertRaises(TypeError):
            client.message.push("hello", {"at": datetime.now()}, o_ids=["1630399136785"])
        with self.assertRaises(TypeError):
            client.message.push("hello", {"n": float("nan")}, o_ids=["1630399136785"])

    def test_an_expiry_datetime_must_carry_its_zone(self) -> None:
        client = AdminClient("http://127.0.0.1:9", KEY, max_attempts=1)
        with self.assertRaises(ValueError) as raised:
            client.vip.submit("1630399136785", "vip", datetime(2027, 1, 1))
        self.assertTrue(str(raised.exception).startswith("expired: "))
        with self.assertRaises(ValueError) as raised:
            client.vip.batch_submit("1630399136785", [{"quality": "vip", "expired": datetime(2027, 1, 1, tzinfo=timezone.utc)}, {"quality": "svip", "expired": datetime(2027, 1, 1)}])
        self.assertTrue(str(raised.exception).startswith("vips[1].expired: "))


if __name__ == "__main__":
    unittest.main()
