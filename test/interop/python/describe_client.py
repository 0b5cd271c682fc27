"""Describes the Python admin client as code sees it, for test/interop/pythonClientCoverage.e2e.spec.ts:
each endpoint it declares, the method that calls it (found on a real client) with that method's
parameters, the shape of its answer type, and the error class of each reason. Prints JSON."""

from __future__ import annotations

import inspect
import json
import types
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from community_bridge import ENDPOINTS, REASON_FAMILIES, AdminClient, BridgeError
from community_bridge.types import VipEntry

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", datetime: "datetime"}


def shape(tp: Any) -> dict[str, Any]:
    """A type as the spec compares it with a JSON Schema."""
    if is_typeddict(tp):
        hints = get_type_hints(tp)
        return {"kind": "object", "name": tp.__name__, "required": sorted(tp.__required_keys__), "fields": {name: shape(hint) for name, hint in hints.items()}}
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        options = [shape(arg) for arg in args if arg is not type(None)]
        if all(option["kind"] == "scalar" for option in options):
            return {"kind": "scalar", "types": sorted({t for option in options for t in option["types"]})}
        return {"kind": "union", "options": options}
    if origin is Literal:
        return {"kind": "literal", "values": list(args)}
    if origin is list:
        return {"kind": "array", "items": shape(args[0])}
    if origin is dict:
        return {"kind": "map", "values": shape(args[1])}
    if tp is Any:
        return {"kind": "any"}
    if tp in SCALARS:
        return {"kind": "scalar", "types": [SCALARS[tp]]}
    raise TypeError(f"no shape for {tp!r}")


def parameters_of(method: Any) -> list[dict[str, Any]]:
    return [
        {"name": p.name, "required": p.default is inspect.Parameter.empty, "keywordOnly": p.kind is inspect.Parameter.KEYWORD_ONLY}
        for p in inspect.signature(method).parameters.values()
    ]


def main() -> None:
    client = AdminClient("http://127.0.0.1:9", "cbk_" + "0" * 27)
    endpoints: list[dict[str, Any]] = []
    for endpoint in ENDPOINTS:
        target: Any = client
        for part in endpoint.call.split("."):
            target = getattr(target, part, None)
        endpoints.append(
            {
                "operationId": endpoint.operation_id,
                "method": endpoint.method,
                "path": endpoint.path,
                "call": endpoint.call,
                "callable": inspect.ismethod(target),
                "parameters": parameters_of(target) if inspect.ismethod(target) else [],
                "answer": shape(endpoint.answer),
            }
        )
    reasons = {reason: {"class": family.__name__, "bridgeError": issubclass(family, BridgeError)} for reason, family in REASON_FAMILIES.items()}
    print(json.dumps({"endpoints": endpoints, "reasons": reasons, "inputs": {"VipEntry": shape(VipEntry)}}))


if __name__ == "__main__":
    main()
