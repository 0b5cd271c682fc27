"""Runs calls of the Python admin client as a program would, for test/interop/pythonClient.e2e.spec.ts.

Reads {"client": {AdminClient's arguments, and "cafile" for an ssl_context that trusts it}, "calls": [{"call": "points.edit", "args": [...], "kwargs": {...}}]}
on stdin; prints {"client_repr", "results": [{"ok": answer} | {"error": what was raised}], "leaks"} on stdout.
A value {"$datetime": "<ISO 8601>"} in args or kwargs is passed as a datetime. "leaks" lists every text
the client or an error shows (str, repr, a formatted traceback with its causes) that holds the API key.
"""

from __future__ import annotations

import json
import ssl
import sys
import traceback
from datetime import datetime
from typing import Any, cast

from community_bridge import AdminClient, BridgeError

EXTRA_FIELDS = ("operation_id", "operation_status", "retry_after_seconds", "platform_message", "issues", "location_origin", "limit", "contradicted")


def value_of(value: Any) -> Any:
    if isinstance(value, dict):
        fields = cast(dict[str, Any], value)
        if set(fields) == {"$datetime"}:
            return datetime.fromisoformat(fields["$datetime"])
        return {name: value_of(item) for name, item in fields.items()}
    if isinstance(value, list):
        return [value_of(item) for item in cast(list[Any], value)]
    return value


def described(error: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"class": type(error).__name__, "str": str(error), "repr": repr(error)}
    if isinstance(error, BridgeError):
        out["families"] = [c.__name__ for c in type(error).__mro__ if isinstance(c, type) and issubclass(c, BridgeError)]
        for name in ("status", "reason", "message", "data", "request_id", "idempotency_key"):
            out[name] = getattr(error, name)
        for name in EXTRA_FIELDS:
            if hasattr(error, name):
                value = getattr(error, name)
                out[name] = list(value) if name == "issues" else value
        out["cause"] = None if error.__cause__ is None else type(error.__cause__).__name__
    return out


def main() -> None:
    job = json.load(sys.stdin)
    settings = job["client"]
    cafile = settings.pop("cafile", None)
    if cafile is not None:
        settings["ssl_context"] = ssl.create_default_context(cafile=cafile)
    key = settings["api_key"]
    client = AdminClient(**settings)
    shown = [repr(client), str(client)]
    results: list[dict[str, Any]] = []
    for call in job["calls"]:
        target: Any = client
        for part in call["call"].split("."):
            target = getattr(target, part)
        try:
            results.append({"ok": target(*value_of(call.get("args", [])), **value_of(call.get("kwargs", {})))})
        except Exception as error:  # every failure is reported to the test, which asserts on it
            results.append({"error": described(error)})
            shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
    leaks = [text for text in shown if key.lower() in text.lower()]
    print(json.dumps({"client_repr": repr(client), "results": results, "leaks": leaks}, ensure_ascii=False))


if __name__ == "__main__":
    main()
